"""Synthetic data shaped like the service's answers, deterministic from a seed.

Memory and plot cases need a million records; fetching them over HTTP would
measure the sandbox again, so they are made here in the wire shape of an ACH
list answer (TEAM.md "Wire shapes": camelCase fields, ``...Z`` timestamps,
``amount`` a JSON number) with realistic cardinalities: unique ids, references
and account numbers, a few hundred names, fifty states, a few percent returned.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime
from typing import Any

import numpy as np

__all__ = ["ach_records", "ach_submissions", "rcc_submissions"]

_FIRST = ["James", "Mary", "Robert", "Patricia", "John", "Jennifer", "Michael", "Linda",
          "David", "Elizabeth", "William", "Barbara", "Richard", "Susan", "Joseph", "Jessica",
          "Thomas", "Sarah", "Carlos", "Karen", "Wei", "Nancy", "Ahmed", "Lisa", "Priya"]
_LAST = ["Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis",
         "Rodriguez", "Martinez", "Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson",
         "Thomas", "Taylor", "Moore", "Jackson", "Martin", "Lee", "Perez", "Thompson", "Nguyen"]
_STATES = ("AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE "
           "NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY").split()
# Valid ABA routing numbers (checksum holds), as the sandbox's seed uses real-looking ones.
_CITIES = ["Springfield", "Riverside", "Franklin", "Greenville", "Bristol", "Clinton",
           "Fairview", "Salem"]
_ROUTING = ["021000021", "011000138", "026009593", "121000358", "111000025", "122105155",
            "031176110", "071000013", "044000037", "061000104"]
_STATUS = [("W", "Waiting", 0.90), ("R", "Returned", 0.05), ("I", "Invalid", 0.02),
           ("B", "Blocked", 0.02), ("V", "Voided", 0.01)]
_RETURNS = {"R01": "Insufficient funds", "R02": "Account closed",
            "R03": "No account / unable to locate account", "R04": "Invalid account number",
            "R10": "Customer advises not authorized", "R16": "Account frozen",
            "R20": "Non-transaction account", "R29": "Corporate customer advises not authorized"}
_EPOCH = datetime(2026, 11, 21, tzinfo=UTC)


def _stamps(ms: np.ndarray) -> list[str]:
    """Milliseconds since the epoch as ``2025-06-11T20:50:04.032Z`` strings."""
    text = np.datetime_as_string(ms.astype("datetime64[ms]"), unit="ms")
    return np.char.add(text, "Z").tolist()


def ach_records(n: int, *, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` ACH list records as ``json.loads`` would give them (columns drawn with numpy)."""
    rng = np.random.default_rng(seed)
    statuses = np.array([s for s, _, _ in _STATUS])
    names = {s: name for s, name, _ in _STATUS}
    status = rng.choice(statuses, n, p=[w for _, _, w in _STATUS])
    day_ms = 86_400_000
    end_ms = int(_EPOCH.timestamp() * 1000)
    received = end_ms - rng.integers(0, 180 * day_ms, n)
    returned = np.isin(status, ["R", "I", "B"])
    prenote = rng.random(n) < 0.03
    debit = prenote | (rng.random(n) < 0.7)
    cents = np.where(prenote, 0, rng.integers(100, 500_000, n))
    codes = np.array(list(_RETURNS))
    code = np.where(status == "R", rng.choice(codes, n), "")
    received_s = _stamps(received)
    return_s = _stamps(received + rng.integers(1, 6, n) * day_ms)
    send_s = _stamps(received + day_ms)
    settle_s = _stamps(received + 2 * day_ms)
    first = rng.choice(_FIRST, n).tolist()
    last = rng.choice(_LAST, n).tolist()
    state = rng.choice(_STATES, n).tolist()
    zips = rng.integers(501, 99950, n).tolist()
    routing = rng.choice(_ROUTING, n).tolist()
    accounts = rng.integers(10**9, 10**12, n).tolist()
    savings = (rng.random(n) < 0.15).tolist()
    records = []
    for i, st, ret, pre, deb, c, rc in zip(range(n), status.tolist(), returned.tolist(),
                                           prenote.tolist(), debit.tolist(), cents.tolist(),
                                           code.tolist(), strict=True):
        records.append({
            "achItemId": i + 1,
            "companyCode": "DEMO1",
            "yourReferenceNumber": f"ACH-{i + 1:08d}",
            "firstSignerFirstName": first[i],
            "firstSignerLastName": last[i],
            "state": state[i],
            "zip": f"{zips[i]:05d}",
            "bankRoutingNumber": routing[i],
            "bankAccountNumber": str(accounts[i]),
            "amount": c / 100,
            "achAccountType": "Savings" if savings[i] else "Checking",
            "achTransactionType": "Debit" if deb else "Credit",
            "achTransactionSubType": "Prenote" if pre else None,
            "achEntryClass": "PPD",
            "itemStatus": st,
            "itemStatusDescription": names[st],
            "returnDate": return_s[i] if ret else None,
            "returnReason": rc or None,
            "returnMessage": _RETURNS[rc] if rc else None,
            "receivedDateTime": received_s[i],
            "sendDate": send_s[i] if st != "V" else None,
            "settleDate": settle_s[i] if st == "W" else None,
            # The rest of the documented record (docs/reference: the service sends all 50
            # fields): without them paynb's frame, which has every documented column,
            # would be compared with a plain frame of fewer columns.
            "flexBatchId": None,
            "merchantId": 17,
            "address1": f"{(i * 7919) % 9999 + 1} Main St",
            "address2": None,
            "city": _CITIES[i % len(_CITIES)],
            "countryCode": "US",
            "itemSource": "API",
            "returnItemId": 500_000 + i if st == "R" else None,
            "reportStatus": "Reported" if ret else None,
            "achEffectiveDate": settle_s[i],
            "depositDateTime": send_s[i] if st != "V" else None,
            "apiReportDateTime": return_s[i] if ret else None,
            "bankId": 3,
            "achTransactionCode": (32 if savings[i] else 22) + (5 if deb else 0),
            "achPaymentTypeCode": "S",
            "achCheckNumber": 0,
            "achIdentificationNumber": f"CUST-{i % 50_000:05d}",
            "achCompanyEntryDescription": "BILLING" if deb else "PAYROLL",
            "achCompanyDiscretionaryData": "",
            "achTransactionDiscretionaryData": "",
            "achAddendaText": "",
            "sameDayAchRequested": False,
            "returnFileName": f"RET{return_s[i][:10].replace('-', '')}.txt" if ret else None,
            "settlementReportFileName": None,
            "returnReportFileName": None,
            "iatAddenda": None,
            "requestedSendDate": send_s[i][:10] + "T00:00:00.000Z",
            "requestedAchEffectiveDate": settle_s[i][:10] + "T00:00:00.000Z",
        })
    return records


def ach_submissions(n: int, *, seed: int = 11, invalid_share: float = 0.01) -> list[dict[str, Any]]:
    """``n`` ACH submission bodies (spec 2.1, camelCase) of which about ``invalid_share`` are bad.

    The bad ones carry one realistic mistake each (a routing checksum, an
    apostrophe in the account number, a 3-decimal amount, an unknown state).
    """
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        row: dict[str, Any] = {
            "firstSignerFirstName": rng.choice(_FIRST),
            "firstSignerLastName": rng.choice(_LAST),
            "state": rng.choice(_STATES),
            "zip": f"{rng.randrange(501, 99950):05d}",
            "yourReferenceNumber": f"BULK-{seed}-{i:08d}",
            "bankRoutingNumber": rng.choice(_ROUTING),
            "bankAccountNumber": str(rng.randrange(10**9, 10**12)),
            "amount": f"{rng.randrange(100, 500_000) / 100:.2f}",
            "achAccountType": "Checking",
            "achTransactionType": "Debit" if rng.random() < 0.7 else "Credit",
            "achEntryClass": "PPD",
        }
        if rng.random() < invalid_share:
            mistake = rng.randrange(4)
            if mistake == 0:
                row["bankRoutingNumber"] = "021000022"
            elif mistake == 1:
                row["bankAccountNumber"] = "12'3456789"
            elif mistake == 2:
                row["amount"] = "10.005"
            else:
                row["state"] = "XX"
        rows.append(row)
    return rows


def rcc_submissions(n: int, *, seed: int = 13) -> list[dict[str, Any]]:
    """``n`` valid RCC submission bodies (spec 2.2, camelCase): a payee, a bank account, an
    amount of up to $5,000."""
    rng = random.Random(seed)
    return [{"firstSignerFirstName": rng.choice(_FIRST),
             "firstSignerLastName": rng.choice(_LAST),
             "address1": f"{rng.randrange(1, 9999)} Main St", "city": "Springfield",
             "state": rng.choice(_STATES),
             "zip": f"{rng.randrange(501, 99950):05d}",
             "yourReferenceNumber": f"RCC-{seed}-{i:08d}",
             "bankRoutingNumber": rng.choice(_ROUTING),
             "bankAccountNumber": str(rng.randrange(10**9, 10**12)),
             "amount": f"{rng.randrange(100, 500_000) / 100:.2f}"} for i in range(n)]
