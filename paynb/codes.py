"""Codes the service uses, and their meanings: item statuses, ACH return codes, NOC change
codes, and the ACH request's open sets (account types, entry classes, transaction codes,
payment type codes, IAT transaction type codes).

Frames put the meaning in a column beside each code (``itemStatusName``,
``returnReasonDescription``, ``changeReason``); the plots use the same names and
colours so that a status looks the same in every chart.
"""

from __future__ import annotations

__all__ = [
    "ACH_ACCOUNT_TYPES",
    "ACH_ENTRY_CLASSES",
    "ACH_PAYMENT_TYPE_CODES",
    "ACH_TRANSACTION_CODES",
    "ACH_TRANSACTION_SUBTYPES",
    "IAT_TRANSACTION_TYPE_CODES",
    "NOC_CODES",
    "RETURN_CODES",
    "STATUS_COLORS",
    "STATUS_NAMES",
    "STATUS_ORDER",
]

#: Item statuses in lifecycle order (the order of the categorical dtype).
#: W, I, B and R come from the spec; S (sent to the bank, RCC) and V (voided)
#: are the sandbox's choices for what the spec leaves unshown (DESIGN section 4).
STATUS_NAMES: dict[str, str] = {
    "W": "Waiting",
    "S": "Sent",
    "R": "Returned",
    "I": "Invalid",
    "B": "Blocked",
    "V": "Voided",
}
STATUS_ORDER: tuple[str, ...] = tuple(STATUS_NAMES)

#: One colour per status, shared by every plot (colour-blind friendly).
STATUS_COLORS: dict[str, str] = {
    "W": "#4C72B0",
    "S": "#64B5CD",
    "R": "#DD8452",
    "I": "#C44E52",
    "B": "#8172B3",
    "V": "#937860",
}

#: NACHA return reason codes R01-R29 (the ones consumer items meet).
RETURN_CODES: dict[str, str] = {
    "R01": "Insufficient funds",
    "R02": "Account closed",
    "R03": "No account / unable to locate account",
    "R04": "Invalid account number structure",
    "R05": "Unauthorized debit to consumer account using corporate SEC code",
    "R06": "Returned per ODFI's request",
    "R07": "Authorization revoked by customer",
    "R08": "Payment stopped",
    "R09": "Uncollected funds",
    "R10": "Customer advises originator is not known or not authorized",
    "R11": "Customer advises entry not in accordance with the terms of the authorization",
    "R12": "Account sold to another DFI",
    "R13": "Invalid ACH routing number",
    "R14": "Representative payee deceased or unable to continue in that capacity",
    "R15": "Beneficiary or account holder deceased",
    "R16": "Account frozen / entry returned per OFAC instruction",
    "R17": "File record edit criteria / questionable circumstances",
    "R18": "Improper effective entry date",
    "R19": "Amount field error",
    "R20": "Non-transaction account",
    "R21": "Invalid company identification",
    "R22": "Invalid individual ID number",
    "R23": "Credit entry refused by receiver",
    "R24": "Duplicate entry",
    "R25": "Addenda error",
    "R26": "Mandatory field error",
    "R27": "Trace number error",
    "R28": "Routing number check digit error",
    "R29": "Corporate customer advises not authorized",
}

#: NACHA notification of change codes C01-C13.
NOC_CODES: dict[str, str] = {
    "C01": "Incorrect DFI account number",
    "C02": "Incorrect routing number",
    "C03": "Incorrect routing number and incorrect DFI account number",
    "C04": "Incorrect individual name / receiving company name",
    "C05": "Incorrect transaction code",
    "C06": "Incorrect DFI account number and incorrect transaction code",
    "C07": "Incorrect routing number, DFI account number and transaction code",
    "C08": "Incorrect receiving DFI identification (IAT only)",
    "C09": "Incorrect individual identification number",
    "C10": "Incorrect company name",
    "C11": "Incorrect company identification",
    "C12": "Incorrect company name and company identification",
    "C13": "Addenda format error",
}


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
ACH_PAYMENT_TYPE_CODES: dict[str, str] = {
    "R": "Recurring",
    "S": "Single entry",
    "ST": "Standing authorization",
}

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
