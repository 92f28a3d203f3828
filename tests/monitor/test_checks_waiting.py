"""Items still waiting (``W``) past their cut-off, against hand-computed days: one banking
day after the day an item was received (or its later requested send day). Around
Thanksgiving 2026 (Thursday 26 November, a Fed holiday): an item received Friday the 27th
is due Monday the 30th, late from Tuesday; one received on the holiday counts from Friday.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import duckdb
import pandas as pd
import pytest

from paynb.monitor._checks import _waiting

DAYS = ("2026-11-25T15:00:00Z", "2026-11-26T15:00:00Z", "2026-11-27T15:00:00Z",
        "2026-11-28T23:59:59Z", "2026-11-29T10:00:00Z")


def _connection() -> duckdb.DuckDBPyConnection:
    """Views ``ach`` and ``rcc`` as the history's: one ACH and one RCC item waiting per
    day of :data:`DAYS`, ACH ids 1-5 and RCC ids 11-15; an ACH item received on the 25th
    but requested for the 30th (id 6), one requested for before it was received (id 7,
    received the 27th: its own day counts), one sent long ago (id 8), and one waiting
    of another company (id 9)."""
    def times(values: list[str | None]) -> pd.Series:
        return pd.to_datetime(pd.Series(values, dtype="object"), utc=True)

    received = [*DAYS, DAYS[0], DAYS[2], "2026-10-01T15:00:00Z", DAYS[0]]
    ach = pd.DataFrame({
        "company": ["DEMO1"] * 8 + ["OTHER"], "achItemId": list(range(1, 10)),
        "itemStatus": ["W"] * 7 + ["S", "W"],
        "yourReferenceNumber": [f"REF-{n}" for n in range(1, 10)],
        "amount": [Decimal("1.00")] * 9, "receivedDateTime": times(received),
        "sendDate": times([None] * 7 + ["2026-10-02T15:00:00Z", None]),
        "requestedSendDate": times([None] * 5 + ["2026-11-30T00:00:00Z",
                                                  "2026-11-25T00:00:00Z", None, None])})
    rcc = pd.DataFrame({
        "company": ["DEMO1"] * 5, "rccItemId": list(range(11, 16)), "itemStatus": ["W"] * 5,
        "yourReferenceNumber": [f"RCC-{n}" for n in range(11, 16)],
        "amount": [Decimal("2.00")] * 5, "receivedDateTime": times(list(DAYS)),
        "sendDate": times([None] * 5)})
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    connection.register("ach", ach)
    connection.register("rcc", rcc)
    return connection


@pytest.mark.parametrize(("today", "late"), [
    # Friday 27th: the 25th's items were due that day (not late yet).
    ("2026-11-27", []),
    # Monday 30th: the 25th's and the holiday's were due Friday; the 27th's are due today.
    ("2026-11-30", [("ach", 1), ("ach", 2), ("rcc", 11), ("rcc", 12)]),
    # Tuesday 1 December, the day after: every item of the 27th to the 29th was due
    # Monday; the one requested for Monday is due Tuesday, today.
    ("2026-12-01", [("ach", 1), ("ach", 2), ("ach", 3), ("ach", 4), ("ach", 5), ("ach", 7),
                    ("rcc", 11), ("rcc", 12), ("rcc", 13), ("rcc", 14), ("rcc", 15)]),
    # Wednesday 2nd: the requested one too.
    ("2026-12-02", [("ach", 1), ("ach", 2), ("ach", 3), ("ach", 4), ("ach", 5), ("ach", 6),
                    ("ach", 7), ("rcc", 11), ("rcc", 12), ("rcc", 13), ("rcc", 14),
                    ("rcc", 15)]),
])
def test_late_items_against_hand_computed_days(today: str, late: list) -> None:
    findings, frame = _waiting(_connection(), "DEMO1", dt.date.fromisoformat(today), 1)
    assert sorted(zip(frame["kind"], frame["itemId"], strict=True)) == late
    assert sorted(f.key for f in findings) == sorted(f"waiting:{k}:{i}" for k, i in late)


def test_a_later_cut_off_counts_more_banking_days() -> None:
    # Two banking days: the 25th's are due Monday 30th, the holiday's too; late Tuesday.
    _, frame = _waiting(_connection(), "DEMO1", dt.date(2026, 12, 1), 2)
    assert sorted(zip(frame["kind"], frame["itemId"], strict=True)) == [
        ("ach", 1), ("ach", 2), ("rcc", 11), ("rcc", 12)]
    assert frame.loc[frame["itemId"] == 1, "due"].iloc[0] == pd.Timestamp("2026-11-30")
