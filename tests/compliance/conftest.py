"""Helpers of the compliance tests: ACH items as the service sends them, built by hand."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import matplotlib
import pandas as pd
import pytest

from paynb import frames

matplotlib.use("Agg")

import matplotlib.pyplot as plt


@pytest.fixture(autouse=True)
def close_figures() -> Iterator[None]:
    """Every figure a test opened is closed after it."""
    yield
    plt.close("all")


def debit(send: str | None, status: str = "S", *, returned: str | None = None,
          reason: str | None = None, amount: Any = 10.0, kind: str = "Debit",
          entry_class: str = "PPD", settle: str | None = None, company: str = "DEMO1",
          received: str | None = None, **extra: Any) -> dict[str, Any]:
    """One ACH record: a debit sent on ``send`` (a date, or a full timestamp)."""
    return {"companyCode": company, "amount": amount, "achTransactionType": kind,
            "achEntryClass": entry_class, "itemStatus": status, "returnDate": returned,
            "returnReason": reason, "sendDate": send, "settleDate": settle,
            "receivedDateTime": received or send, **extra}


def frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """The typed frame the client would return for these records (ids 1, 2, ...)."""
    return frames.to_frame([{"achItemId": i, **r} for i, r in enumerate(records, 1)], "ach")


def filler(n: int, send: str, **options: Any) -> list[dict[str, Any]]:
    """``n`` plain debit entries sent on ``send``, never returned."""
    return [debit(send, **options) for _ in range(n)]


def row(rates: pd.DataFrame, category: str, **group: Any) -> dict[str, Any]:
    """The one row of ``category`` (and the group) in a return_rates result."""
    picked = rates[rates["category"] == category]
    for column, value in group.items():
        picked = picked[picked[column] == value]
    assert len(picked) == 1, picked
    return picked.iloc[0].to_dict()
