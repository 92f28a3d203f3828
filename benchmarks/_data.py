"""Synthetic data shaped like the service's answers, deterministic from a seed.

Memory and plot cases need a million records; fetching them over HTTP would
measure the sandbox again, so they are made here in the wire shape of an ACH
list answer (TEAM.md "Wire shapes": camelCase fields, ``...Z`` timestamps,
``amount`` a JSON number) with realistic cardinalities: unique ids, references
and account numbers, a few hundred names, fifty states, a few percent returned.
"""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["ach_records", "ach_submissions"]

_FIRST = ["James", "Mary", "Robert", "Patricia", "John", "Jennifer", "Michael", "Linda",
          "David", "Elizabeth", "William", "Barbara", "Richard", "Susan", "Joseph", "Jessica",
          "Thomas", "Sarah", "Carlos", "Karen", "Wei", "Nancy", "Ahmed", "Lisa", "Priya"]
_LAST = ["Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis",
         "Rodriguez", "Martinez", "Hernandez", "Lopez", "Gonzalez", "Wilson", "Anderson",
         "Thomas", "Taylor", "Moore", "Jackson", "Martin", "Lee", "Perez", "Thompson", "Nguyen"]
_STATES = ("AL AK AZ AR CA CO CT DE FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE "
           "NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY").split()
# Valid ABA routing numbers (checksum holds), as the sandbox's seed uses real-looking ones.
_ROUTING = ["021000021", "011000138", "026009593", "121000358", "111000025", "122105155",
            "031176110", "071000013", "044000037", "061000104"]
_STATUS = [("W", "Waiting", 0.90), ("R", "Returned", 0.05), ("I", "Invalid", 0.02),
           ("B", "Blocked", 0.02), ("V", "Voided", 0.01)]
_RETURNS = {"R01": "Insufficient funds", "R02": "Account closed",
            "R03": "No account / unable to locate account", "R04": "Invalid account number",
            "R10": "Customer advises not authorized", "R16": "Account frozen",
            "R20": "Non-transaction account", "R29": "Corporate customer advises not authorized"}
_EPOCH = datetime(2026, 11, 21, tzinfo=UTC)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def ach_records(n: int, *, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` ACH list records as ``json.loads`` would give them."""
    rng = random.Random(seed)
    statuses = [s for s, _, _ in _STATUS]
    names = {s: name for s, name, _ in _STATUS}
    weights = [w for _, _, w in _STATUS]
    codes = list(_RETURNS)
    records = []
    for i, status in enumerate(rng.choices(statuses, weights, k=n), start=1):
        received = _EPOCH - timedelta(seconds=rng.randrange(180 * 86400),
                                      milliseconds=rng.randrange(1000))
        prenote = rng.random() < 0.03
        debit = prenote or rng.random() < 0.7
        returned = status in ("R", "I", "B")
        code = rng.choice(codes) if status == "R" else None
        records.append({
            "achItemId": i,
            "companyCode": "DEMO1",
            "yourReferenceNumber": f"ACH-{i:08d}",
            "firstSignerFirstName": rng.choice(_FIRST),
            "firstSignerLastName": rng.choice(_LAST),
            "state": rng.choice(_STATES),
            "zip": f"{rng.randrange(501, 99950):05d}",
            "bankRoutingNumber": rng.choice(_ROUTING),
            "bankAccountNumber": str(rng.randrange(10**9, 10**12)),
            "amount": 0.0 if prenote else rng.randrange(100, 500_000) / 100,
            "achAccountType": "Checking" if rng.random() < 0.85 else "Savings",
            "achTransactionType": "Debit" if debit else "Credit",
            "achTransactionSubType": "Prenote" if prenote else None,
            "achEntryClass": "PPD",
            "itemStatus": status,
            "itemStatusDescription": names[status],
            "returnDate": _stamp(received + timedelta(days=rng.randrange(1, 6)))
            if returned else None,
            "returnReason": code,
            "returnMessage": _RETURNS[code] if code else None,
            "receivedDateTime": _stamp(received),
            "sendDate": _stamp(received + timedelta(days=1)) if status != "V" else None,
            "settleDate": _stamp(received + timedelta(days=2)) if status == "W" else None,
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
