"""return_exposure: deadlines the day before, of and after, across the Saturday holiday
2026-07-04 (the Fed is open on Friday 2026-07-03), amounts exact."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paynb import calendar, compliance

from .conftest import debit, frame


def settled(settle: str, **options) -> dict:
    options.setdefault("amount", 1.0)
    return debit("2026-06-29", settle=settle, **options)


def exposure(records: list[dict], as_of: str, **options) -> pd.DataFrame:
    return compliance.return_exposure(frame(records), as_of=as_of, **options)


def standard(table: pd.DataFrame, settle: str) -> int:
    picked = table[table["settleDate"] == pd.Timestamp(settle)]
    return int(picked["standard_count"].sum())


# Settled Wednesday 2026-07-01: banking days after it are Thu 07-02 and Fri 07-03 (the
# Saturday holiday is not moved to Friday), so the standard deadline is Friday 07-03.
# Settled Thursday 07-02: Fri 07-03, then Mon 07-06.
@pytest.mark.parametrize(("as_of", "open_wed", "open_thu"), [
    ("2026-07-02", 1, 1),
    ("2026-07-03", 1, 1),   # the Wednesday settlement's deadline day: still open
    ("2026-07-04", 0, 1),   # Saturday (holiday): Wednesday's window has closed
    ("2026-07-05", 0, 1),
    ("2026-07-06", 0, 1),   # Thursday's deadline day
    ("2026-07-07", 0, 0),
])
def test_standard_deadline_across_the_saturday_holiday(as_of, open_wed, open_thu):
    records = [settled("2026-07-01", entry_class="CCD"), settled("2026-07-02", entry_class="CCD")]
    table = exposure(records, as_of)
    assert standard(table, "2026-07-01") == open_wed
    assert standard(table, "2026-07-02") == open_thu


def test_deadlines_are_in_the_result():
    table = exposure([settled("2026-07-01"), settled("2026-07-02")], "2026-07-02")
    assert list(table["standard_deadline"]) == [pd.Timestamp("2026-07-03"),
                                                pd.Timestamp("2026-07-06")]
    assert list(table["unauthorized_deadline"]) == [pd.Timestamp("2026-08-30"),
                                                    pd.Timestamp("2026-08-31")]


@pytest.mark.parametrize(("as_of", "count"), [
    ("2026-08-29", 1), ("2026-08-30", 1), ("2026-08-31", 0)])
def test_extended_window_is_60_calendar_days_for_consumer_debits(as_of, count):
    records = [settled("2026-07-01", entry_class="PPD"), settled("2026-07-01", entry_class="CCD")]
    table = exposure(records, as_of)
    assert int(table["unauthorized_count"].sum()) == count
    assert int(table["standard_count"].sum()) == 0
    assert len(table) == count  # a settlement day with no open window is left out


def test_consumer_classes_are_configurable():
    records = [settled("2026-07-01", entry_class="CCD"), settled("2026-07-01",
                                                                 entry_class="web")]
    assert exposure(records, "2026-08-01")["unauthorized_count"].sum() == 1
    widened = exposure(records, "2026-08-01", consumer_classes={"CCD", "WEB"})
    assert widened["unauthorized_count"].sum() == 2


def test_amounts_are_exact_and_only_of_what_can_still_come_back():
    records = [
        settled("2026-07-01", amount=0.10),
        settled("2026-07-01", amount=0.20),
        settled("2026-07-01", amount=5.00, entry_class="TEL"),
        settled("2026-07-01", amount=7.00, status="R", returned="2026-07-02", reason="R01"),
        settled("2026-07-01", amount=9.00, status="R", returned="2026-07-09", reason="R10"),
        settled("2026-07-01", amount=0),                        # prenote
        settled("2026-07-01", amount=3.00, kind="Credit"),
        settled("2026-07-06", amount=11.00),                    # settles after as_of
        settled("2026-07-01", amount=13.00, status="V"),
    ]
    table = exposure(records, "2026-07-03")
    assert len(table) == 1
    got = table.iloc[0]
    # 0.10 + 0.20 + 5.00 + 9.00 (returned only after as_of): the R01 came back already.
    assert got["standard_amount"] == Decimal("14.30")
    assert got["standard_count"] == 4
    assert got["unauthorized_amount"] == Decimal("14.30")
    assert str(table["standard_amount"].dtype).startswith("decimal128")


def test_split_by_company():
    records = [settled("2026-07-01", company="A", amount=1.25),
               settled("2026-07-01", company="B", amount=2.50),
               settled("2026-07-02", company="B", amount=4.00)]
    table = exposure(records, "2026-07-02", by="companyCode")
    assert table[["companyCode", "standard_count"]].values.tolist() == [
        ["A", 1], ["B", 1], ["B", 1]]
    assert list(table["standard_amount"]) == [Decimal("1.25"), Decimal("2.50"), Decimal("4.00")]


def test_nothing_settled_gives_an_empty_table_with_the_columns():
    table = exposure([debit("2026-06-29")], "2026-07-02")
    assert table.empty
    assert list(table.columns) == ["settleDate", "standard_deadline", "unauthorized_deadline",
                                   "standard_amount", "standard_count", "unauthorized_amount",
                                   "unauthorized_count"]


def test_a_frame_without_settle_dates_is_refused():
    with pytest.raises(ValueError, match="no column 'settleDate'"):
        compliance.return_exposure(frame([settled("2026-07-01")]).drop(columns="settleDate"))
    # Not a frame at all: the same TypeError as return_rates, not an AttributeError.
    with pytest.raises(TypeError, match="items must be a pandas DataFrame, not NoneType"):
        compliance.return_exposure(None)


settle_day = st.integers(0, 90).map(lambda n: dt.date(2026, 6, 1) + dt.timedelta(days=n))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows=st.lists(st.tuples(settle_day, st.sampled_from(["PPD", "CCD", "WEB"]),
                               st.sampled_from([0.01, 0.1, 2.5, 100.0]),
                               st.none() | settle_day), max_size=25),
       as_of=settle_day)
def test_exposure_equals_a_loop_over_the_debits(rows, as_of):
    records = [settled(s.isoformat(), entry_class=c, amount=a,
                       **({} if r is None else {"status": "R", "returned": r.isoformat(),
                                                "reason": "R01"}))
               for s, c, a, r in rows]
    table = exposure(records, as_of.isoformat())
    expected: dict = {}
    for settle, entry_class, amount, returned in rows:
        if settle > as_of or (returned is not None and returned <= as_of):
            continue
        deadline = calendar.add_banking_days(settle.isoformat(), 2).date()
        standard_open = as_of <= deadline
        extended_open = entry_class != "CCD" and as_of <= settle + dt.timedelta(days=60)
        if not (standard_open or extended_open):
            continue
        got = expected.setdefault(pd.Timestamp(settle), [Decimal(0), 0, Decimal(0), 0])
        value = Decimal(str(amount))
        if standard_open:
            got[0] += value
            got[1] += 1
        if extended_open:
            got[2] += value
            got[3] += 1
    actual = {row["settleDate"]: [row["standard_amount"], row["standard_count"],
                                  row["unauthorized_amount"], row["unauthorized_count"]]
              for row in table.to_dict("records")}
    assert actual == expected
