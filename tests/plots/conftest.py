"""Fixtures of the plot tests: the Agg backend, figures closed after each test, small frames."""

from __future__ import annotations

from collections.abc import Iterator

import matplotlib
import pytest

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from paynb import frames


@pytest.fixture(autouse=True)
def close_figures() -> Iterator[None]:
    """Every figure a test opened is closed after it."""
    yield
    plt.close("all")


def item(i: int, status: str, received: str, *, returned: str | None = None,
         reason: str | None = None, amount: float = 10.0, kind: str = "Debit") -> dict:
    """One ACH record as the service sends it."""
    return {"achItemId": i, "itemStatus": status, "amount": amount,
            "achTransactionType": kind, "receivedDateTime": received,
            "returnDate": returned, "returnReason": reason}


@pytest.fixture
def ach():
    """Twelve ACH items over three weeks of November 2026 (Mondays: 2, 9, 16).

    Week of 2 Nov: 4 submitted; week of 9 Nov: 2; week of 16 Nov: 6.
    Returns by return date: R on Mon 2 and Wed 4 Nov, I on Thu 5 Nov,
    B on Wed 18 Nov, R on Wed 18 Nov; nothing in the week of 9 Nov.
    """
    records = [
        item(1, "R", "2026-11-02T08:00:00.000Z", returned="2026-11-02T10:00:00.000Z",
             reason="R01", amount=100.10),
        item(2, "R", "2026-11-02T09:00:00.000Z", returned="2026-11-04", reason="R01",
             amount=0.10),
        item(3, "I", "2026-11-03T09:00:00.000Z", returned="2026-11-05T00:00:00.000",
             amount=0.20),
        item(4, "W", "2026-11-04T09:00:00.000Z", amount=5.00, kind="Credit"),
        item(5, "W", "2026-11-10T09:00:00.000Z", amount=5.00),
        item(6, "R", "2026-11-11T09:00:00.000Z", returned="2026-11-18T12:00:00.000Z",
             reason="R02", amount=7.00),
        item(7, "B", "2026-11-16T09:00:00.000Z", returned="2026-11-18T13:00:00.000Z",
             amount=3.00, kind="Credit"),
        item(8, "S", "2026-11-16T10:00:00.000Z", amount=1.00),
        item(9, "S", "2026-11-17T10:00:00.000Z", amount=1.00, kind="Credit"),
        item(10, "V", "2026-11-18T10:00:00.000Z", amount=2.00),
        item(11, "W", "2026-11-19T10:00:00.000Z", amount=2.00),
        # A waiting item with a return date is not a return.
        item(12, "W", "2026-11-20T10:00:00.000Z", returned="2026-11-20", amount=2.00),
    ]
    return frames.to_frame(records, "ach")


@pytest.fixture
def nocs():
    """Six NOCs: C01 three times, C05 twice, C13 once."""
    codes = ["C01", "C05", "C01", "C13", "C05", "C01"]
    return frames.to_frame([{"nocId": i, "changeCode": c, "nocDate": "2026-11-02"}
                            for i, c in enumerate(codes, 1)], "noc")
