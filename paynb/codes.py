"""Codes the service uses, and their meanings: item statuses, ACH return codes, NOC change codes.

Frames put the meaning in a column beside each code (``itemStatusName``,
``returnReasonDescription``, ``changeReason``); the plots use the same names and
colours so that a status looks the same in every chart.
"""

from __future__ import annotations

__all__ = [
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
