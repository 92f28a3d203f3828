"""Grouped items (``weights=``): the figures of a frame whose rows each stand for several
items equal those of the items themselves, to the item and the cent."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paynb import compliance

from .conftest import debit, frame

#: What the figures read of an item; the dates as their UTC days.
TEXTS = ["companyCode", "achTransactionType", "achTransactionSubType", "achEntryClass",
         "itemStatus", "returnReason"]
DAYS = ["sendDate", "achEffectiveDate", "receivedDateTime", "returnDate", "settleDate"]

# Days drawn as a first day (any weekday, holiday or month end of several years) and a
# few offsets from it, so that groups hold several items; times of day at both ends of
# a UTC day.
first_day = st.dates(dt.date(2025, 1, 1), dt.date(2028, 12, 31))
day = st.sampled_from([0, 5, 40, 62, 80])
record = st.fixed_dictionaries({
    "status": st.sampled_from(["S", "R", "W", "V"]),
    "kind": st.sampled_from(["Debit", "Credit"]),
    "amount": st.sampled_from([Decimal("0"), Decimal("1.50"), Decimal("20.01")]),
    "send": st.none() | day,
    "received": day,
    "settle": st.none() | day,
    "returned": st.none() | day,
    "time": st.sampled_from(["00:00:00", "15:30:00", "23:50:00"]),
    "reason": st.sampled_from(["R01", "R03", "R10", None]),
    "entry_class": st.sampled_from(["PPD", "CCD"]),
    "company": st.sampled_from(["A", "B"]),
})


def _items(rows: list[dict], first: dt.date) -> pd.DataFrame:
    def text(days: int | None, time: str) -> str | None:
        return None if days is None else f"{first + dt.timedelta(days=days)}T{time}Z"

    return frame([debit(text(r["send"], r["time"]), r["status"], kind=r["kind"],
                        amount=r["amount"], received=text(r["received"], r["time"]),
                        settle=text(r["settle"], r["time"]),
                        returned=text(r["returned"], r["time"]), reason=r["reason"],
                        entry_class=r["entry_class"], company=r["company"]) for r in rows])


def grouped(items: pd.DataFrame) -> pd.DataFrame:
    """``items`` grouped as a SQL ``GROUP BY`` would: by what the figures read and the
    sign of the amount, each group's amount its sum, ``items`` its size."""
    keys = pd.DataFrame({name: items[name].astype("object") for name in TEXTS})
    for name in DAYS:
        keys[name] = items[name].dt.tz_convert("UTC").dt.tz_localize(None).dt.normalize()
    amounts = items["amount"].astype("object")
    keys["sign"] = amounts.map(lambda a: None if pd.isna(a) else (a > 0) - (a < 0))
    keys["amount"] = amounts
    out = (keys.groupby([*TEXTS, *DAYS, "sign"], dropna=False)
           .agg(amount=("amount", lambda a: sum(a, Decimal(0))), items=("amount", "size"))
           .reset_index())
    out["amount"] = out["amount"].astype(items["amount"].dtype)
    return out


#: Every other record drawn comes twice, so that at least one group holds several items
#: whatever the draw (distinct draws alone may all fall in groups of one).
records = st.lists(record, min_size=1, max_size=30).map(lambda rows: rows + rows[::2])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records, first_day, st.sampled_from([0, 3, 62, 80, 81, 200]))
def test_grouped_items_give_the_figures_of_the_items(rows: list[dict], first: dt.date,
                                                      as_of_days: int) -> None:
    as_of = first + dt.timedelta(days=as_of_days)
    items = _items(rows, first)
    summary = grouped(items)
    assert summary["items"].sum() == len(items)
    assert summary["items"].max() > 1  # (the grouping is tested)
    pd.testing.assert_frame_equal(
        compliance.return_rates(summary, as_of=as_of, by="companyCode", weights="items"),
        compliance.return_rates(items, as_of=as_of, by="companyCode"), check_dtype=False)
    pd.testing.assert_frame_equal(
        compliance.rolling_return_rates(summary, start=first, end=as_of, weights="items"),
        compliance.rolling_return_rates(items, start=first, end=as_of))
    pd.testing.assert_frame_equal(
        compliance.daily_counts(summary, start=first, end=as_of, weights="items"),
        compliance.daily_counts(items, start=first, end=as_of))
    pd.testing.assert_frame_equal(
        compliance.return_exposure(summary, as_of=as_of, weights="items"),
        compliance.return_exposure(items, as_of=as_of))
    together = compliance.report(summary, as_of=as_of, by=None, weights="items")
    alone = compliance.report(items, as_of=as_of, by=None)
    for part in ("rates", "breaches", "exposure", "exposure_total", "top_reasons"):
        pd.testing.assert_frame_equal(getattr(together, part), getattr(alone, part),
                                      check_dtype=False)


def test_a_row_counts_its_items_and_its_amount_is_their_sum() -> None:
    # Hand-computed: 3 debits sent on 1 October (one returned R10 on 6 October), a
    # prenote (amount zero) on the same day; 60-day window to 20 October.
    summary = pd.DataFrame({
        "achTransactionType": ["Debit", "Debit", "Debit"],
        "achEntryClass": ["PPD", "PPD", "PPD"],
        "itemStatus": ["S", "R", "S"],
        "returnReason": [None, "R10", None],
        "returnDate": pd.to_datetime([None, "2026-10-06", None]),
        "sendDate": pd.to_datetime(["2026-10-01"] * 3),
        "settleDate": pd.to_datetime(["2026-10-02"] * 3),
        "amount": pd.array([Decimal("30.00"), Decimal("7.25"), Decimal("0")],
                           dtype="object"),
        "items": [2, 1, 1]})
    rates = compliance.return_rates(summary, as_of="2026-10-20", weights="items")
    unauthorized = rates[rates["category"] == "unauthorized"].iloc[0]
    assert (unauthorized["returns"], unauthorized["entries"]) == (1, 3)
    exposure = compliance.return_exposure(summary, as_of="2026-10-20", weights="items")
    assert exposure["unauthorized_count"].tolist() == [2]  # the returned one is back
    assert exposure["unauthorized_amount"].tolist() == [Decimal("30.00")]


@pytest.mark.parametrize(("weights", "message"), [
    ("count", "weights must name a column of items"),
    (3, "weights must name a column of items"),
    ("bad", "must hold whole numbers, 0 or more (row 1 does not)"),
])
def test_weights_that_are_no_counts_are_refused(weights: object, message: str) -> None:
    items = frame([debit("2026-10-01"), debit("2026-10-01")]).assign(bad=[2, -1])
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        compliance.return_rates(items, as_of="2026-10-20", weights=weights)  # type: ignore[arg-type]
