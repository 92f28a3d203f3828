"""Codes the service uses, and their meanings: item statuses, NACHA's return reason codes
and change (NOC) codes, and the ACH request's open sets (account types, entry classes,
transaction codes, payment type codes, IAT transaction type codes).

The return and change codes come as whole tables, one row per code NACHA defines
(:data:`RETURN_CODE_TABLE`, :data:`NOC_CODE_TABLE`): the meaning, the group, the
return time frame and the return-rate category, each citing its rule. They are the
one source of every list of codes in paynb (docs/codes.md lists them).

Frames put the meaning in a column beside each code (``itemStatusName``,
``returnReasonDescription``, ``changeReason``); the plots use the same names and
colours so that a status looks the same in every chart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from paynb._kinds import KIND_ALIASES, KINDS, PAYMENT_KINDS

__all__ = ["INSTANT_STATUSES", "ITEM_KINDS", "ID_FIELDS", "KIND_ALIASES", "PAYMENT_KINDS",
           "ACH_ACCOUNT_TYPES", "ACH_ENTRY_CLASSES", "ACH_PAYMENT_TYPE_CODES",
           "ACH_TRANSACTION_CODES", "ACH_TRANSACTION_SUBTYPES", "ADMINISTRATIVE_RETURN_CODES",
           "AGREED_RETURN", "CONTEST_WINDOW", "DISHONOR_WINDOW", "EXTENDED_RETURN",
           "EXTENDED_RETURN_CODES", "EXTENDED_RETURN_DAYS", "IAT_TRANSACTION_TYPE_CODES",
           "NOC_CODES", "NOC_CODES_SOURCE", "NOC_CODE_TABLE", "NOC_GROUPS", "OPERATOR_RETURN",
           "RATE_CATEGORIES_SOURCE", "REFUSED_CREDIT_RETURN", "RETURN_CODES", "RETURN_CODES_SOURCE",
           "RETURN_CODE_TABLE", "RETURN_GROUPS", "RETURN_STATUSES", "STANDARD_RETURN",
           "STANDARD_RETURN_BANKING_DAYS",
           "STATUS_COLORS", "STATUS_NAMES", "STATUS_ORDER", "UNAUTHORIZED_RETURN_CODES",
           "UNKNOWN_CODE", "NocCode", "RateCategory", "ReturnCode", "TimeFrame", "code_label",
           "code_meaning", "is_known_code", "normalise_code"]

#: The item kinds of the service as paynb names them everywhere (the frames, the journal,
#: the resources' ``kind``, the local history): ACH and RCC items, instant card and RTP
#: payments, ACH notices of change. Each kind's fields are known in :mod:`paynb._kinds`.
ITEM_KINDS: tuple[str, ...] = tuple(KINDS)
#: The field that identifies a record of each kind.
ID_FIELDS: dict[str, str] = {name: kind.id_field for name, kind in KINDS.items()}

#: Item statuses in lifecycle order (the order of the categorical dtype).
#: W, I, B and R come from the spec; S (sent to the bank, RCC) and V (voided)
#: are the sandbox's choices for what the spec leaves unshown (DESIGN section 4).
STATUS_NAMES: dict[str, str] = {"W": "Waiting", "S": "Sent", "R": "Returned", "I": "Invalid",
                                "B": "Blocked", "V": "Voided"}
STATUS_ORDER: tuple[str, ...] = tuple(STATUS_NAMES)
#: Statuses that count as a return (in the return charts and matching): returned,
#: invalid, blocked.
RETURN_STATUSES: tuple[str, ...] = ("R", "I", "B")
#: Statuses of instant card and RTP transactions, in the order of the categorical.
INSTANT_STATUSES: tuple[str, ...] = ("Success", "Failed")

#: One colour per status, shared by every plot (colour-blind friendly).
STATUS_COLORS: dict[str, str] = {"W": "#4C72B0", "S": "#64B5CD", "R": "#DD8452", "I": "#C44E52",
                                 "B": "#8172B3", "V": "#937860"}

# --------------------------------------------------------------------------- NACHA codes
# One table per kind of code: every return reason code and every change code of the
# NACHA Operating Rules (Appendix Four, "Return Entries", and Appendix Five,
# "Notification of Change"), each with a meaning in paynb's own words. Everything
# that shows, counts or simulates a code reads these tables: the frames' description
# columns, the plots' labels, the compliance categories and exposure windows, the
# submission guards, the NOC ledger and the sandbox. docs/codes.md is generated from
# them. Checked against the public code lists of moov-io/ach; no text is copied.

#: What paynb shows for a code in none of its tables (a typo at the service, or a code
#: newer than paynb): in the description columns, and after the code in labels.
UNKNOWN_CODE = "not a NACHA code paynb knows"

#: The rule every return code's group and time frame comes from.
RETURN_CODES_SOURCE = ("NACHA Operating Rules, Appendix Four (Return Entries), Part 4.2, "
                       "Table of Return Reason Codes")
#: The rule every change code comes from.
NOC_CODES_SOURCE = ("NACHA Operating Rules, Appendix Five (Notification of Change), "
                    "Table of Change Codes; refused NOCs: Part 5.3")
#: The rule the return-rate categories come from.
RATE_CATEGORIES_SOURCE = ("NACHA Operating Rules, Article Two, Subsection 2.17.2 (ODFI "
                          "Return Rate Reporting)")

RateCategory = Literal["unauthorized", "administrative"]


@dataclass(frozen=True)
class TimeFrame:
    """How long NACHA gives a return: ``days`` banking or calendar days after an event.

    ``text`` says it in words (``"2 banking days after settlement"``); ``banking_days``
    or ``calendar_days`` holds the number when the time frame is one; ``rule`` cites it.
    """

    text: str
    rule: str
    banking_days: int | None = None
    calendar_days: int | None = None

    def __str__(self) -> str:
        return self.text


#: Banking days of the standard return time frame (:data:`STANDARD_RETURN`).
STANDARD_RETURN_BANKING_DAYS = 2
#: Calendar days of the extended return time frame (:data:`EXTENDED_RETURN`).
EXTENDED_RETURN_DAYS = 60
#: Most returns: available to the ODFI by the opening of business on the second banking
#: day after the settlement date.
STANDARD_RETURN = TimeFrame(f"{STANDARD_RETURN_BANKING_DAYS} banking days after settlement",
                            "Article Three, Subsection 3.8.3.1",
                            banking_days=STANDARD_RETURN_BANKING_DAYS)
#: Extended return entries: unauthorized consumer debits and the check-based returns
#: that need the receiver's written statement, 60 calendar days after settlement.
EXTENDED_RETURN = TimeFrame(f"{EXTENDED_RETURN_DAYS} calendar days after settlement",
                            "Article Three, Subsection 3.13 (Extended Return Entries)",
                            calendar_days=EXTENDED_RETURN_DAYS)
#: A credit the receiver refuses: two banking days from the RDFI learning of it.
REFUSED_CREDIT_RETURN = TimeFrame("2 banking days after the receiver refuses the credit",
                                  "Appendix Four, Part 4.2 (R23)", banking_days=2)
#: Returns the ODFI asked for or agreed to: no time frame but the banks' agreement.
AGREED_RETURN = TimeFrame("as the ODFI and the RDFI agree", "Appendix Four, Part 4.2")
#: Returns made by the ACH Operator itself, when it processes the entry.
OPERATOR_RETURN = TimeFrame("by the ACH Operator, at its next file delivery",
                            "Appendix Four, Part 4.2")
#: An ODFI dishonors a return within five banking days after the return settles.
DISHONOR_WINDOW = TimeFrame("5 banking days after the return settles",
                            "Appendix Four, Part 4.3 (Dishonored Returns)", banking_days=5)
#: An RDFI contests a dishonored return within two banking days after it settles.
CONTEST_WINDOW = TimeFrame("2 banking days after the dishonored return settles",
                           "Appendix Four, Part 4.3 (Contested Dishonored Returns)",
                           banking_days=2)

#: The groups of return codes, by key, with their names (Appendix Four's sections).
RETURN_GROUPS: dict[str, str] = {
    "rdfi": "RDFI return",
    "enr": "ENR return (automated enrollment, by a federal agency)",
    "rck": "RCK return (re-presented check)",
    "dishonored": "Dishonored return (by the ODFI)",
    "contested": "Contested dishonored return (by the RDFI)",
    "iat": "IAT return (international, by a gateway)",
}
#: The groups of change codes, by key, with their names.
NOC_GROUPS: dict[str, str] = {
    "change": "Notification of change",
    "refused": "Refused notification of change (by the ODFI)",
}


@dataclass(frozen=True)
class ReturnCode:
    """One NACHA return reason code and what paynb knows of it.

    Attributes:
        code: ``R01`` ... ``R85``.
        meaning: what it says, in paynb's words.
        group: a key of :data:`RETURN_GROUPS`.
        time_frame: how long NACHA gives the return (None where the table sets none).
        rate_category: ``"unauthorized"`` or ``"administrative"`` when the return counts
            in that return rate (Subsection 2.17.2), else None; every return counts in
            the overall rate.
        needs_new_authorization: the account may not be debited again without a new
            authorization (Subsection 2.12.4(b); paynb's submission guards).
        reinitiable: the entry may be reinitiated, at most twice within 180 days
            (Subsection 2.12.4(a): insufficient or uncollected funds).
    """

    code: str
    meaning: str
    group: str
    time_frame: TimeFrame | None
    rate_category: RateCategory | None = None
    needs_new_authorization: bool = False
    reinitiable: bool = False

    @property
    def label(self) -> str:
        """``R01: Insufficient funds``: how charts and reports name the code."""
        return f"{self.code}: {self.meaning}"


@dataclass(frozen=True)
class NocCode:
    """One NACHA change code and what paynb knows of it.

    Attributes:
        code: ``C01`` ... ``C69``.
        meaning: what it says, in paynb's words.
        group: a key of :data:`NOC_GROUPS`.
        fields: the request fields its corrected data carries (empty for a refused NOC,
            which asks the originator to change nothing).
        change: what must change, in words (the NOC ledger's ``mustChange``).
        retired: no longer in NACHA's table; kept to read older NOCs.
    """

    code: str
    meaning: str
    group: str
    fields: tuple[str, ...] = ()
    change: str = ""
    retired: bool = False

    @property
    def label(self) -> str:
        """``C01: Incorrect account number``: how charts and reports name the code."""
        return f"{self.code}: {self.meaning}" + (" (retired)" if self.retired else "")


def _returns(group: str, time_frame: TimeFrame | None, *rows: tuple[Any, ...]
             ) -> list[ReturnCode]:
    return [ReturnCode(code, meaning, group, time_frame, *flags)
            for code, meaning, *flags in rows]


_UNAUTHORIZED: RateCategory = "unauthorized"
_ADMINISTRATIVE: RateCategory = "administrative"
_S, _X = STANDARD_RETURN, EXTENDED_RETURN

#: Every NACHA return reason code, by code (Appendix Four, Part 4.2).
RETURN_CODE_TABLE: dict[str, ReturnCode] = {r.code: r for r in [
    *_returns("rdfi", _S, ("R01", "Insufficient funds", None, False, True)),
    *_returns("rdfi", _S, ("R02", "Account closed", _ADMINISTRATIVE, True),
              ("R03", "No account, or account not found", _ADMINISTRATIVE, True),
              ("R04", "Invalid account number", _ADMINISTRATIVE, True)),
    ReturnCode("R05", "Consumer account debited as corporate (CCD/CTX), unauthorized",
               "rdfi", _X, _UNAUTHORIZED, True),
    ReturnCode("R06", "Returned at the ODFI's request", "rdfi", AGREED_RETURN),
    ReturnCode("R07", "Authorization revoked by the customer", "rdfi", _X, _UNAUTHORIZED,
               True),
    ReturnCode("R08", "Payment stopped by the customer", "rdfi", _S, None, True),
    ReturnCode("R09", "Uncollected funds", "rdfi", _S, None, False, True),
    ReturnCode("R10", "Customer says the debit is not authorized", "rdfi", _X, _UNAUTHORIZED,
               True),
    ReturnCode("R11", "Debit not as the authorization says", "rdfi", _X, _UNAUTHORIZED),
    ReturnCode("R12", "Branch sold to another bank", "rdfi", _S),
    ReturnCode("R13", "Invalid ACH routing number", "rdfi", OPERATOR_RETURN),
    *_returns("rdfi", _S,
              ("R14", "Representative payee deceased or unable to act"),
              ("R15", "Beneficiary or account holder deceased"),
              ("R16", "Account frozen, or returned on OFAC's instruction", None, True),
              ("R17", "Entry the bank cannot process or finds suspicious")),
    *_returns("rdfi", OPERATOR_RETURN, ("R18", "Improper effective entry date"),
              ("R19", "Amount field error")),
    *_returns("rdfi", _S, ("R20", "Account does not allow this transaction"),
              ("R21", "Invalid company identification"),
              ("R22", "Invalid individual identification number")),
    ReturnCode("R23", "Credit refused by the receiver", "rdfi", REFUSED_CREDIT_RETURN),
    ReturnCode("R24", "Duplicate entry", "rdfi", _S),
    *_returns("rdfi", OPERATOR_RETURN, ("R25", "Addenda record error"),
              ("R26", "Mandatory field error"), ("R27", "Trace number error"),
              ("R28", "Routing number check digit error")),
    ReturnCode("R29", "Company customer says the debit is not authorized", "rdfi", _S,
               _UNAUTHORIZED, True),
    ReturnCode("R30", "Receiving bank not in the check truncation program", "rdfi",
               OPERATOR_RETURN),
    ReturnCode("R31", "CCD/CTX return the ODFI agreed to take", "rdfi", AGREED_RETURN),
    ReturnCode("R32", "Receiving bank cannot settle the entry", "rdfi", OPERATOR_RETURN),
    ReturnCode("R33", "Return of an XCK (destroyed check) entry", "rdfi", _X),
    ReturnCode("R34", "Receiving bank's ACH participation limited", "rdfi", OPERATOR_RETURN),
    *_returns("rdfi", _S, ("R35", "Debit not allowed for this entry class or account"),
              ("R36", "Credit not allowed for this entry class")),
    *_returns("rdfi", _X, ("R37", "Check also presented for payment (ARC/BOC/POP)"),
              ("R38", "Stop payment on the converted check (ARC/BOC)")),
    ReturnCode("R39", "Improper source document (ARC/BOC/POP)", "rdfi", _S),
    *_returns("enr", None, ("R40", "ENR entry returned by the federal agency"),
              ("R41", "ENR: invalid transaction code"),
              ("R42", "ENR: routing number or check digit error"),
              ("R43", "ENR: invalid account number"),
              ("R44", "ENR: identification number not on the agency's file"),
              ("R45", "ENR: name not on the agency's file"),
              ("R46", "ENR: invalid representative payee indicator"),
              ("R47", "ENR: duplicate enrollment")),
    ReturnCode("R50", "RCK: state law does not allow re-presented checks", "rck", _S),
    ReturnCode("R51", "RCK: check ineligible or RCK entry improper", "rck", _X, _UNAUTHORIZED,
               True),
    *_returns("rck", _X, ("R52", "RCK: stop payment on the check"),
              ("R53", "RCK: check and RCK entry both presented")),
    *_returns("dishonored", DISHONOR_WINDOW, ("R61", "Misrouted return"),
              ("R62", "Return of an erroneous or reversing debit"),
              ("R67", "Duplicate return"), ("R68", "Untimely return"),
              ("R69", "Field errors in the return"),
              ("R70", "Permissible return not accepted or not requested")),
    *_returns("contested", CONTEST_WINDOW, ("R71", "Misrouted dishonored return"),
              ("R72", "Untimely dishonored return"), ("R73", "Original return was timely"),
              ("R74", "Corrected return"), ("R75", "Return was not a duplicate"),
              ("R76", "No errors found in the return"),
              ("R77", "Dishonor of an R62 return not accepted")),
    *_returns("iat", None, ("R80", "IAT coding error"),
              ("R81", "Not a participant in the IAT program"),
              ("R82", "Invalid foreign receiving bank identification"),
              ("R83", "Foreign receiving bank unable to settle"),
              ("R84", "Entry not processed by the gateway"),
              ("R85", "International payment not sent as IAT")),
]}

_TRANSACTION_CODE = "transaction code (account type)"

#: Every NACHA change code, by code (Appendix Five): notifications of change and the
#: codes of a refused NOC. C10-C12 are retired and kept to read older NOCs.
NOC_CODE_TABLE: dict[str, NocCode] = {n.code: n for n in [
    NocCode("C01", "Incorrect account number", "change", ("bankAccountNumber",),
            "account number"),
    NocCode("C02", "Incorrect routing number", "change", ("bankRoutingNumber",),
            "routing number"),
    NocCode("C03", "Incorrect routing and account numbers", "change",
            ("bankRoutingNumber", "bankAccountNumber"), "routing number and account number"),
    NocCode("C04", "Incorrect receiver name", "change", ("individualName",),
            "receiver's name"),
    NocCode("C05", "Incorrect transaction code (account type)", "change",
            ("achTransactionCode",), _TRANSACTION_CODE),
    NocCode("C06", "Incorrect account number and transaction code", "change",
            ("bankAccountNumber", "achTransactionCode"), f"account number and {_TRANSACTION_CODE}"),
    NocCode("C07", "Incorrect routing number, account number and transaction code",
            "change", ("bankRoutingNumber", "bankAccountNumber", "achTransactionCode"),
            f"routing number, account number and {_TRANSACTION_CODE}"),
    NocCode("C08", "Incorrect foreign receiving bank identification (IAT)", "change",
            ("receivingDfiIdentification",), "receiving bank identification (IAT)"),
    NocCode("C09", "Incorrect individual identification number", "change",
            ("achIdentificationNumber",), "individual identification number"),
    NocCode("C10", "Incorrect company name", "change", ("companyName",),
            "your company name (in the batch header)", retired=True),
    NocCode("C11", "Incorrect company identification", "change", ("companyIdentification",),
            "your company identification (in the batch header)", retired=True),
    NocCode("C12", "Incorrect company name and identification", "change",
            ("companyName", "companyIdentification"),
            "your company name and identification (in the batch header)", retired=True),
    NocCode("C13", "Addenda format error", "change", ("addenda",), "addenda record format"),
    NocCode("C14", "International payment sent without IAT entry class", "change",
            ("achEntryClass",), "entry class (IAT for an international payment)"),
    *(NocCode(code, f"Refused NOC: {what}", "refused") for code, what in (
        ("C61", "misrouted"), ("C62", "incorrect trace number"),
        ("C63", "incorrect company identification"),
        ("C64", "incorrect individual identification number"),
        ("C65", "corrected data badly formatted"), ("C66", "incorrect discretionary data"),
        ("C67", "routing number not the original entry's"),
        ("C68", "account number not the original entry's"),
        ("C69", "incorrect transaction code"))),
]}

#: The meaning of every return code, by code (:data:`RETURN_CODE_TABLE`'s meanings).
RETURN_CODES: dict[str, str] = {code: r.meaning for code, r in RETURN_CODE_TABLE.items()}
#: The meaning of every change code, by code (:data:`NOC_CODE_TABLE`'s meanings).
NOC_CODES: dict[str, str] = {code: n.meaning for code, n in NOC_CODE_TABLE.items()}

#: Returns counted in the unauthorized return rate (Subsection 2.17.2): R05, R07, R10,
#: R11, R29, R51.
UNAUTHORIZED_RETURN_CODES: frozenset[str] = frozenset(
    code for code, r in RETURN_CODE_TABLE.items() if r.rate_category == _UNAUTHORIZED)
#: Returns counted in the administrative return rate (Subsection 2.17.2): R02, R03, R04.
ADMINISTRATIVE_RETURN_CODES: frozenset[str] = frozenset(
    code for code, r in RETURN_CODE_TABLE.items() if r.rate_category == _ADMINISTRATIVE)
#: Returns that may come within the extended time frame (:data:`EXTENDED_RETURN`).
EXTENDED_RETURN_CODES: frozenset[str] = frozenset(
    code for code, r in RETURN_CODE_TABLE.items() if r.time_frame == EXTENDED_RETURN)


def normalise_code(code: Any) -> str:
    """A code as the tables key it: trimmed, upper case (``" r01"`` -> ``"R01"``)."""
    return str(code).strip().upper()


def code_meaning(code: Any) -> str:
    """The meaning of a return code (R..) or change code (C..), or :data:`UNKNOWN_CODE`."""
    key = normalise_code(code)
    table = NOC_CODES if key.startswith("C") else RETURN_CODES
    return table.get(key, UNKNOWN_CODE)


def code_label(code: Any) -> str:
    """``R01: Insufficient funds``, ``C10: Incorrect company name (retired)``, or
    ``R99: not a NACHA code paynb knows``: a code as every chart and report names it."""
    key = normalise_code(code)
    known = NOC_CODE_TABLE.get(key) if key.startswith("C") else RETURN_CODE_TABLE.get(key)
    return known.label if known is not None else f"{key}: {UNKNOWN_CODE}"


def is_known_code(code: Any) -> bool:
    """Whether a return or change code is in paynb's tables."""
    key = normalise_code(code)
    return key in NOC_CODE_TABLE if key.startswith("C") else key in RETURN_CODE_TABLE


# The ACH request's open sets. The service's docs show some values (Checking,
# PersonalChecking; PPD, IAT; Prenote) and no allowed set, so these tables give a
# meaning to the values paynb knows; any other value is sent with a warning
# (docs/validation.md), never refused.

#: Account types: the two the docs show, and the usual checking/savings variants.
ACH_ACCOUNT_TYPES: dict[str, str] = {
    "Checking": "Checking account",
    "Savings": "Savings account",
    "PersonalChecking": "Personal (consumer) checking account",
    "PersonalSavings": "Personal (consumer) savings account",
    "BusinessChecking": "Business checking account",
    "BusinessSavings": "Business savings account",
}

#: NACHA Standard Entry Class codes (NACHA Operating Rules, Appendix Three).
ACH_ENTRY_CLASSES: dict[str, str] = {
    "PPD": "Prearranged Payment and Deposit (consumer)",
    "CCD": "Corporate Credit or Debit",
    "WEB": "Internet-initiated / mobile entry",
    "TEL": "Telephone-initiated entry",
    "IAT": "International ACH Transaction",
    "CTX": "Corporate Trade Exchange",
    "CIE": "Customer-initiated entry",
    "ARC": "Accounts Receivable conversion",
    "BOC": "Back Office conversion",
    "POP": "Point-of-Purchase conversion",
    "RCK": "Re-presented check entry",
}

#: Sub-types of an ACH request. The docs show ``Prenote`` and a single blank; a blank
#: (or no sub-type) is an ordinary entry.
ACH_TRANSACTION_SUBTYPES: dict[str, str] = {
    "Prenote": "Prenotification: a zero-amount entry that tests the account",
}

#: NACHA transaction codes (Entry Detail Record, field 2) of demand and savings accounts.
ACH_TRANSACTION_CODES: dict[int, str] = {
    21: "Checking credit: return or NOC",
    22: "Checking credit",
    23: "Checking credit prenote",
    24: "Checking credit: zero dollar with remittance data",
    26: "Checking debit: return or NOC",
    27: "Checking debit",
    28: "Checking debit prenote",
    29: "Checking debit: zero dollar with remittance data",
    31: "Savings credit: return or NOC",
    32: "Savings credit",
    33: "Savings credit prenote",
    34: "Savings credit: zero dollar with remittance data",
    36: "Savings debit: return or NOC",
    37: "Savings debit",
    38: "Savings debit prenote",
    39: "Savings debit: zero dollar with remittance data",
}

#: NACHA payment type codes of WEB and TEL entries.
ACH_PAYMENT_TYPE_CODES: dict[str, str] = {"R": "Recurring", "S": "Single entry",
                                          "ST": "Standing authorization"}

#: NACHA IAT transaction type codes (IAT addenda record 1, field 3).
IAT_TRANSACTION_TYPE_CODES: dict[str, str] = {
    "ANN": "Annuity",
    "BUS": "Business / commercial",
    "DEP": "Deposit",
    "LOA": "Loan",
    "MIS": "Miscellaneous",
    "MOR": "Mortgage",
    "PEN": "Pension",
    "REM": "Remittance",
    "RLS": "Rent / lease",
    "SAL": "Salary / payroll",
    "TAX": "Tax",
    "ARC": "Accounts receivable check",
    "BOC": "Back office conversion",
    "MTE": "Machine transfer entry",
    "POP": "Point of purchase",
    "POS": "Point of sale",
    "RCK": "Re-presented check",
    "SHR": "Shared network transaction",
    "TEL": "Telephone-initiated",
    "WEB": "Internet-initiated",
}
