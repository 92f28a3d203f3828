"""Bulk pre-validation (what ``submit_many`` runs before anything is sent), row by row.

Each row is judged as if it were submitted alone, in one pass: valid rows give
their wire bodies, bad rows their errors per field; a row that is not an object
is reported under ``item``. No request is made (the client points nowhere).
"""

from __future__ import annotations

from typing import Any

import paynb
from paynb import _checks, models

GOOD: dict[str, Any] = {
    "firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY", "zip": "10001",
    "yourReferenceNumber": "CHK-1", "bankRoutingNumber": "021000021",
    "bankAccountNumber": "000123456789", "amount": "125.00", "achAccountType": "Checking",
    "achTransactionType": "Debit", "achEntryClass": "PPD",
}


def test_each_row_judged_alone_in_one_pass() -> None:
    client = paynb.Client(base_url="http://127.0.0.1:9", auth_url="http://127.0.0.1:9",
                          company_code="DEMO1",
                          credentials=paynb.Credentials("id", "secret", "user", "password"),
                          journal=None)
    rows: list[Any] = [
        GOOD,
        dict(GOOD, yourReferenceNumber="CHK-2", bankAccountNumber="12'34"),
        7,
        dict(GOOD, yourReferenceNumber="CHK-3", achTransactionSubType="Prenote",
             achTransactionType="Debit", amount="5"),
        dict(GOOD, yourReferenceNumber="CHK-4", amount="10.005", state="XX"),
        dict(GOOD, yourReferenceNumber="CHK-5"),
    ]
    checked = _checks.check_rows(client.ach.model, rows)  # submit_many's pre-check
    bodies, bad = checked.bodies, checked.errors
    assert sorted(bodies) == [0, 5]
    assert bodies[0] == models.AchItem.model_validate(GOOD).to_wire()
    assert sorted(bad) == [1, 2, 3, 4]
    assert bad[2] == {"item": ["must be an object"]}
    assert bad[3] == {"amount": ["must be 0 for a prenote (a prenote carries no money)"]}
    for n in (1, 3, 4):
        assert bad[n] == models.check(models.AchItem, rows[n])[1]
    assert set(bad[4]) == {"amount", "state"}
