"""paynb.calendar against the Federal Reserve's published holiday schedules, and its laws."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from paynb import calendar

#: The Fed's holiday schedules 2024-2028 as published (frbservices.org), the closed day of
#: each holiday; None where the holiday falls on a Saturday and the Fed stays open on Friday.
FED_SCHEDULE = {
    2024: ["2024-01-01", "2024-01-15", "2024-02-19", "2024-05-27", "2024-06-19", "2024-07-04",
           "2024-09-02", "2024-10-14", "2024-11-11", "2024-11-28", "2024-12-25"],
    2025: ["2025-01-01", "2025-01-20", "2025-02-17", "2025-05-26", "2025-06-19", "2025-07-04",
           "2025-09-01", "2025-10-13", "2025-11-11", "2025-11-27", "2025-12-25"],
    2026: ["2026-01-01", "2026-01-19", "2026-02-16", "2026-05-25", "2026-06-19", None,
           "2026-09-07", "2026-10-12", "2026-11-11", "2026-11-26", "2026-12-25"],
    2027: ["2027-01-01", "2027-01-18", "2027-02-15", "2027-05-31", None, "2027-07-05",
           "2027-09-06", "2027-10-11", "2027-11-11", "2027-11-25", None],
    2028: [None, "2028-01-17", "2028-02-21", "2028-05-29", "2028-06-19", "2028-07-04",
           "2028-09-04", "2028-10-09", None, "2028-11-23", "2028-12-25"],
}


@pytest.mark.parametrize("year", sorted(FED_SCHEDULE))
def test_holidays_match_the_fed_schedule(year: int):
    observed = [None if o is None else o.isoformat() for _, _, o in calendar.holidays(year)]
    assert observed == FED_SCHEDULE[year]
    closed = [day for day in FED_SCHEDULE[year] if day]
    assert not calendar.is_banking_day(closed).any()


def test_saturday_holiday_is_not_moved_to_friday():
    # Independence Day 2026 is a Saturday: pandas' USFederalHolidayCalendar closes Friday
    # the 3rd, the Fed does not.
    assert calendar.is_banking_day("2026-07-03") is True
    assert calendar.is_banking_day("2026-07-04") is False
    assert calendar.is_banking_day("2027-12-24") is True     # Christmas 2027 is a Saturday
    assert calendar.is_banking_day("2027-07-05") is False    # Sunday the 4th -> Monday


def test_sunday_holiday_moves_to_monday():
    assert calendar.is_banking_day("2027-07-05") is False
    assert calendar.is_banking_day("2027-07-06") is True


def test_juneteenth_only_from_2021():
    assert calendar.is_banking_day("2020-06-19") is True
    # 2021-06-19 was a Saturday: the Fed stayed open on Friday the 18th.
    assert calendar.is_banking_day("2021-06-18") is True
    assert calendar.is_banking_day("2022-06-20") is False   # Sunday the 19th -> Monday


def test_add_banking_days_across_a_saturday_holiday():
    # Monday 2026-06-29 + 6: Jun 30, Jul 1, 2, 3 (open), 6, 7.
    assert calendar.add_banking_days("2026-06-29", 6) == pd.Timestamp("2026-07-07")
    assert calendar.add_banking_days("2026-07-02", 1) == pd.Timestamp("2026-07-03")
    assert calendar.add_banking_days("2026-07-03", 1) == pd.Timestamp("2026-07-06")
    # From a non-banking day: the first banking day after / before it.
    assert calendar.add_banking_days("2026-07-04", 1) == pd.Timestamp("2026-07-06")
    assert calendar.add_banking_days("2026-07-04", -1) == pd.Timestamp("2026-07-03")
    assert calendar.add_banking_days("2026-07-04", 0) == pd.Timestamp("2026-07-06")
    # Thanksgiving and Christmas 2026.
    assert calendar.add_banking_days("2026-11-25", 1) == pd.Timestamp("2026-11-27")
    assert calendar.add_banking_days("2026-12-24", 1) == pd.Timestamp("2026-12-28")


def test_banking_days_between_counts_start_exclusive_end_inclusive():
    assert calendar.banking_days_between("2026-07-02", "2026-07-06") == 2
    assert calendar.banking_days_between("2026-07-06", "2026-07-02") == -2
    assert calendar.banking_days_between("2026-07-03", "2026-07-03") == 0
    assert calendar.banking_days_between("2026-12-24", "2026-12-28") == 1


def test_shapes_series_arrays_and_missing_values():
    when = pd.Series(pd.to_datetime(["2026-07-03T23:30:00Z", "2026-07-04T01:00:00Z", None]),
                     index=[10, 11, 12], name="settleDate")
    banking = calendar.is_banking_day(when)
    assert banking.index.tolist() == [10, 11, 12] and banking.name == "settleDate"
    assert banking.tolist()[:2] == [True, False] and banking.isna().tolist() == [False, False, True]
    later = calendar.add_banking_days(when, 2)
    assert later.tolist()[:2] == [pd.Timestamp("2026-07-07"), pd.Timestamp("2026-07-07")]
    assert pd.isna(later.iloc[2])
    counts = calendar.banking_days_between(when, "2026-07-10")
    assert counts.dtype == "Int64" and counts.tolist()[:2] == [5, 5] and pd.isna(counts.iloc[2])
    days = np.array(["2026-01-01", "2026-01-02"], dtype="datetime64[D]")
    assert calendar.add_banking_days(days, np.array([1, -1])).tolist() == [
        dt.date(2026, 1, 2), dt.date(2025, 12, 31)]
    assert calendar.is_banking_day([dt.date(2026, 11, 26), dt.datetime(2026, 11, 27, 9)]).tolist() \
        == [False, True]
    assert calendar.is_banking_day(None) is pd.NA


def test_bad_input_is_refused_with_a_reason():
    with pytest.raises(ValueError, match="outside the calendar's years"):
        calendar.is_banking_day("1899-01-02")
    with pytest.raises(TypeError, match="whole number"):
        calendar.add_banking_days("2026-01-02", 1.5)
    with pytest.raises(ValueError, match="within"):
        calendar.holidays(3000)


_DAYS = st.dates(min_value=dt.date(1991, 1, 1), max_value=dt.date(2099, 6, 30))
#: Dates from which 400 banking days (about 1.6 years) either way stay within the
#: calendar's years: from 1991-01-01, 252 banking days back already leave them.
_OFFSET_DAYS = st.dates(min_value=dt.date(1992, 1, 1), max_value=dt.date(2098, 12, 31))


@given(_OFFSET_DAYS, st.integers(min_value=-400, max_value=400))
@example(dt.date(1992, 1, 1), -400)
@example(dt.date(2098, 12, 31), 400)
def test_adding_n_then_minus_n_returns_to_a_banking_day(day: dt.date, n: int):
    there = calendar.add_banking_days(day, n)
    back = calendar.add_banking_days(there, -n)
    assert calendar.is_banking_day(back)
    assert back == calendar.add_banking_days(day, 0) or not calendar.is_banking_day(day) or n == 0
    if calendar.is_banking_day(day):
        assert back == pd.Timestamp(day)
        assert calendar.banking_days_between(day, there) == n


@given(_DAYS, _DAYS, _DAYS)
def test_counts_are_additive(a: dt.date, b: dt.date, c: dt.date):
    between = calendar.banking_days_between
    assert between(a, b) + between(b, c) == between(a, c)


def test_vectorised_equals_scalar():
    days = pd.Series(pd.date_range("2026-06-25", "2026-07-10", freq="D"))
    vector = calendar.add_banking_days(days, 3).tolist()
    assert vector == [calendar.add_banking_days(day, 3) for day in days]


def test_a_result_past_the_calendar_and_garbage_are_refused_naming_the_argument():
    # 100,000 banking days after 2026 is past 2100, where the calendar knows no holidays;
    # it came back as a Timestamp in 1827 (an overflow), without a word.
    with pytest.raises(ValueError, match="n: .*outside the calendar's years 1990-2100"):
        calendar.add_banking_days("2026-01-02", 100_000)
    with pytest.raises(ValueError, match="n: .*outside the calendar's years"):
        calendar.add_banking_days("1990-01-03", -10)
    with pytest.raises(ValueError, match="dates: 'garbage' is not a date"):
        calendar.add_banking_days("garbage", 1)
    with pytest.raises(ValueError, match="end: 'soon' is not a date"):
        calendar.banking_days_between("2026-01-02", "soon")


def test_one_date_or_time_counts_as_the_same_date_in_a_list() -> None:
    import datetime as dt
    from zoneinfo import ZoneInfo

    import pandas as pd

    from paynb import calendar

    late_in_new_york = dt.datetime(2026, 7, 3, 23, 30, tzinfo=ZoneInfo("America/New_York"))
    for value in (dt.date(2026, 7, 3), dt.datetime(2026, 7, 4, 12), late_in_new_york,
                  pd.Timestamp("2026-12-24T23:59", tz="UTC"), pd.Timestamp("2026-11-26")):
        # The wall-clock day of each, a scalar answered at once, as a list answers it.
        assert calendar.add_banking_days(value, 2) == calendar.add_banking_days([value], 2)[0]
        assert calendar.is_banking_day(value) == calendar.is_banking_day([value])[0]
    # Its own wall-clock day (a Friday, open: the Saturday holiday is not moved).
    assert calendar.add_banking_days(late_in_new_york, 0) == pd.Timestamp("2026-07-03")
    assert calendar.add_banking_days(pd.NaT, 1) is pd.NaT
