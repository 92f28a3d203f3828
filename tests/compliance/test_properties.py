"""return_rates equals a plain loop over the rules; the rolling series equals return_rates."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paynb import compliance

from .conftest import debit, frame

BASE = dt.date(2025, 12, 1)
CODES = ["R01", "R02", "R03", "R04", "R05", "R07", "R10", "R11", "R16", "R29", "R51", None]
THRESHOLDS_BP = {"unauthorized": 50, "administrative": 300, "overall": 1500}
UNAUTHORIZED = {"R05", "R07", "R10", "R11", "R29", "R51"}
ADMINISTRATIVE = {"R02", "R03", "R04"}

day = st.integers(0, 120).map(lambda n: BASE + dt.timedelta(days=n))
record = st.fixed_dictionaries({
    "status": st.sampled_from(["S", "R", "W", "V", "I", "B"]),
    "kind": st.sampled_from(["Debit", "Credit"]),
    "amount": st.sampled_from([0, 1.5, 20]),
    "send": st.none() | day,
    "received": day,
    "returned": st.none() | day,
    "reason": st.sampled_from(CODES),
    "company": st.sampled_from(["A", "B"]),
})


def build(rows: list[dict]) -> pd.DataFrame:
    return frame([debit(None if r["send"] is None else r["send"].isoformat(), r["status"],
                        kind=r["kind"], amount=r["amount"], received=r["received"].isoformat(),
                        returned=None if r["returned"] is None else r["returned"].isoformat(),
                        reason=r["reason"], company=r["company"]) for r in rows])


def naive_window(as_of: dt.date, window: str) -> tuple[dt.date, dt.date]:
    if window == "60D":
        return as_of - dt.timedelta(days=59), as_of
    first_of_month = as_of.replace(day=1)
    end = first_of_month - dt.timedelta(days=1)
    start = (end.replace(day=1) - dt.timedelta(days=1)).replace(day=1)
    return start, end


def naive(rows: list[dict], as_of: dt.date, window: str) -> dict[str, tuple[int, int]]:
    """(returns, entries) per category, straight from the rules, one item at a time."""
    lo, hi = naive_window(as_of, window)
    entries = 0
    returns = dict.fromkeys(THRESHOLDS_BP, 0)
    for r in rows:
        debit_entry = r["kind"] == "Debit" and r["amount"] != 0
        if not debit_entry:
            continue
        sent = r["send"] is not None
        is_entry = r["status"] in ("S", "R") or (sent and r["status"] not in ("V", "I", "B"))
        originated = r["send"] if sent else r["received"]
        if is_entry and lo <= originated <= hi:
            entries += 1
        if r["status"] == "R" and r["returned"] is not None and lo <= r["returned"] <= hi:
            returns["overall"] += 1
            returns["unauthorized"] += r["reason"] in UNAUTHORIZED
            returns["administrative"] += r["reason"] in ADMINISTRATIVE
    return {name: (count, entries) for name, count in returns.items()}


def naive_level(returns: int, entries: int, bp: int) -> str:
    if entries == 0:
        return "no entries"
    if returns * 10_000 > bp * entries:
        return "over"
    if returns * 10_000 * 5 >= 4 * bp * entries:
        return "warning"
    return "ok"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(record, max_size=40), as_of=day, window=st.sampled_from(["60D", "2M"]))
def test_rates_equal_a_naive_loop(rows, as_of, window):
    rates = compliance.return_rates(build(rows), as_of=as_of, window=window)
    expected = naive(rows, as_of, window)
    for result in rates.to_dict("records"):
        returns, entries = expected[result["category"]]
        assert (result["returns"], result["entries"]) == (returns, entries)
        assert result["level"] == naive_level(returns, entries,
                                              THRESHOLDS_BP[result["category"]])
        if entries:
            assert result["rate"] == returns / entries


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(record, min_size=1, max_size=40), window=st.sampled_from(["60D", "2M"]))
def test_rolling_equals_return_rates_on_every_day(rows, window):
    items = build(rows)
    start, end = BASE + dt.timedelta(days=20), BASE + dt.timedelta(days=130)
    rolling = compliance.rolling_return_rates(items, window=window, start=start, end=end,
                                              by="companyCode")
    days = pd.date_range(start, end, freq="D")
    assert list(rolling["date"].drop_duplicates()) == list(days)
    columns = ["companyCode", "category", "returns", "entries", "rate", "threshold",
               "share_of_threshold", "level"]
    for when in days[::7]:
        once = compliance.return_rates(items, as_of=when, window=window, by="companyCode")
        same_day = rolling[rolling["date"] == when].reset_index(drop=True)
        pd.testing.assert_frame_equal(same_day[columns], once[columns])


def test_rolling_weekly_and_monthly_pick_sundays_and_month_ends():
    items = build([{"status": "S", "kind": "Debit", "amount": 20, "send": BASE,
                    "received": BASE, "returned": None, "reason": None, "company": "A"}])
    weekly = compliance.rolling_return_rates(items, "W", start="2025-12-01", end="2025-12-31")
    assert sorted(set(weekly["date"].dt.day_name())) == ["Sunday"]
    monthly = compliance.rolling_return_rates(items, "M", start="2025-12-01", end="2026-02-28")
    assert list(monthly["date"].drop_duplicates().dt.strftime("%m-%d")) == [
        "12-31", "01-31", "02-28"]
    assert np.all(monthly["entries"].to_numpy() == [1] * 3 + [0] * 6)


def test_rolling_backwards_range_is_an_error():
    with pytest.raises(ValueError, match=r"start \(2026-02-01\) is after end \(2026-01-01\)"):
        compliance.rolling_return_rates(build([]), start="2026-02-01", end="2026-01-01")


def test_rolling_of_no_items_is_all_no_entries():
    rolling = compliance.rolling_return_rates(build([]), start="2026-01-01", end="2026-01-03")
    assert len(rolling) == 9 and set(rolling["level"]) == {"no entries"}
