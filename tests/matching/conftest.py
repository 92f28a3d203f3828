"""Item frames made the way the client makes them (paynb.frames.to_frame), no sandbox."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from paynb.frames import to_frame


def ach_items(rows: list[dict[str, Any]], *, mask: bool = True) -> pd.DataFrame:
    """ACH items with ids 1..n; each row gives what it needs, the rest is filled in."""
    records = []
    for number, row in enumerate(rows, start=1):
        records.append({"achItemId": number, "yourReferenceNumber": f"REF-{number}",
                        "bankAccountNumber": "123456789", "bankRoutingNumber": "021000021",
                        "firstSignerFirstName": "John", "firstSignerLastName": "Smith",
                        "itemStatus": "S", "sendDate": "2026-07-06", "amount": "10.00", **row})
    return to_frame(records, "ach", mask=mask)


@pytest.fixture
def items_of():
    return ach_items
