"""Federal Reserve banking days: the calendar ACH deadlines are counted in.

A banking day is a weekday on which the Federal Reserve Banks are open: not one of the
eleven federal holidays of 5 U.S.C. 6103 as the Fed observes them. A holiday on a
**Sunday** is observed on the **Monday** after; one on a **Saturday** is **not moved**
(the Fed is open the Friday before: the footnote of its published holiday schedule), which
pandas' ``USFederalHolidayCalendar`` gets wrong.

Every function is vectorised with numpy's business-day machinery over
:data:`BUSDAY_CALENDAR` and answers in the shape it is given (a scalar, a list, an array,
a ``DatetimeIndex`` or a ``Series``; a :class:`pandas.Timestamp` for one date). Missing
values stay missing; a timestamp counts on its own calendar date, in its own time zone.
Covered years: :data:`FIRST_YEAR` to :data:`LAST_YEAR`; a date outside them is an error
rather than a silent guess.

Sources: the Federal Reserve's holiday schedule
(https://www.frbservices.org/about/holiday-schedules) and 5 U.S.C. 6103.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np

__all__ = ["BUSDAY_CALENDAR", "FIRST_YEAR", "LAST_YEAR", "add_banking_days", "banking_days_between",
           "holidays", "is_banking_day", "next_banking_day"]

#: First and last year the calendar covers.
FIRST_YEAR = 1990
LAST_YEAR = 2100

_MONDAY, _THURSDAY = 0, 3


def _nth_weekday(year: int, month: int, weekday: int, n: int) -> dt.date:
    """The n-th given weekday of a month; n = -1 is the last one."""
    if n > 0:
        first = dt.date(year, month, 1)
        return first + dt.timedelta(days=(weekday - first.weekday()) % 7 + 7 * (n - 1))
    last = (dt.date(year + month // 12, month % 12 + 1, 1) - dt.timedelta(days=1))
    return last - dt.timedelta(days=(last.weekday() - weekday) % 7)


def _holiday_dates(year: int) -> list[tuple[str, dt.date]]:
    """The federal holidays of a year on their calendar dates (before any observance)."""
    dates = [
        ("New Year's Day", dt.date(year, 1, 1)),
        ("Birthday of Martin Luther King, Jr.", _nth_weekday(year, 1, _MONDAY, 3)),
        ("Washington's Birthday", _nth_weekday(year, 2, _MONDAY, 3)),
        ("Memorial Day", _nth_weekday(year, 5, _MONDAY, -1)),
        ("Juneteenth National Independence Day", dt.date(year, 6, 19)),
        ("Independence Day", dt.date(year, 7, 4)),
        ("Labor Day", _nth_weekday(year, 9, _MONDAY, 1)),
        ("Columbus Day", _nth_weekday(year, 10, _MONDAY, 2)),
        ("Veterans Day", dt.date(year, 11, 11)),
        ("Thanksgiving Day", _nth_weekday(year, 11, _THURSDAY, 4)),
        ("Christmas Day", dt.date(year, 12, 25)),
    ]
    if year < 2021:  # Juneteenth became a federal holiday on 2021-06-17
        dates = [entry for entry in dates if not entry[0].startswith("Juneteenth")]
    return dates


def _observed(day: dt.date) -> dt.date | None:
    """The day the Fed closes for a holiday: Sunday -> Monday, Saturday -> not at all."""
    if day.weekday() == 6:
        return day + dt.timedelta(days=1)
    if day.weekday() == 5:
        return None
    return day


def holidays(year: int) -> list[tuple[dt.date, str, dt.date | None]]:
    """The federal holidays of ``year``: ``(date, name, observed)`` in date order.

    ``observed`` is the day the Federal Reserve is closed for it: the date
    itself, the Monday after a Sunday holiday, or ``None`` for a holiday that
    falls on a Saturday (the Fed does not close the Friday before).

    >>> holidays(2026)[5]
    (datetime.date(2026, 7, 4), 'Independence Day', None)
    """
    if isinstance(year, bool) or not isinstance(year, int | np.integer):
        raise TypeError(f"year must be a whole number, not {type(year).__name__}")
    if not FIRST_YEAR <= year <= LAST_YEAR:
        raise ValueError(f"year must be within {FIRST_YEAR}-{LAST_YEAR}, not {year}")
    return [(day, name, _observed(day)) for name, day in _holiday_dates(int(year))]


def _closed_days() -> np.ndarray:
    days = [observed for year in range(FIRST_YEAR, LAST_YEAR + 1)
            for _, _, observed in holidays(year) if observed is not None]
    return np.array(days, dtype="datetime64[D]")


#: numpy's business-day calendar of the Federal Reserve: Monday to Friday, less
#: the observed holidays of :data:`FIRST_YEAR` to :data:`LAST_YEAR`.
BUSDAY_CALENDAR = np.busdaycalendar(weekmask="1111100", holidays=_closed_days())

_LOW = np.datetime64(f"{FIRST_YEAR}-01-01", "D")
_HIGH = np.datetime64(f"{LAST_YEAR}-12-31", "D")


class _Shape:
    """Remembers how the dates came in, to answer in the same shape."""

    def __init__(self, dates: Any, argument: str = "dates") -> None:
        self.scalar = False
        self.series = None
        try:
            self.days, self.missing = self._days(dates)
        except (ValueError, TypeError, OverflowError) as exc:
            if "outside the calendar" in str(exc):
                raise
            shown = repr(dates) if len(repr(dates)) < 80 else f"{type(dates).__name__}"
            raise ValueError(f"{argument}: {shown} is not a date ({exc})") from exc

    def _days(self, dates: Any) -> tuple[np.ndarray, np.ndarray]:
        import pandas as pd

        if isinstance(dates, pd.Series):
            self.series = dates
            values = pd.DatetimeIndex(pd.to_datetime(dates, utc=False))
        elif isinstance(dates, pd.DatetimeIndex):
            values = dates
        elif isinstance(dates, np.ndarray) and dates.dtype.kind == "M":
            values = pd.DatetimeIndex(dates)
        elif isinstance(dates, list | tuple | np.ndarray | pd.Index):
            values = pd.DatetimeIndex(pd.to_datetime(list(dates)))
        elif isinstance(dates, dt.date) and dates is not pd.NaT:
            # One date or time (a Timestamp too): its wall-clock day at once, as the
            # index below gives it (the NOC ledger and the projection ask thousands).
            self.scalar = True
            day = dates.date() if isinstance(dates, dt.datetime) else dates
            values = None
            days = np.array([np.datetime64(day, "D")])
        else:
            self.scalar = True
            values = pd.DatetimeIndex([pd.Timestamp(dates) if dates is not None else pd.NaT])
        if values is not None:
            if values.tz is not None:
                values = values.tz_localize(None)  # wall-clock date in the value's own zone
            days = values.values.astype("datetime64[D]")
        missing = np.isnat(days)
        present = days[~missing]
        if present.size and (present.min() < _LOW or present.max() > _HIGH):
            wrong = present[(present < _LOW) | (present > _HIGH)][0]
            raise ValueError(f"{wrong} is outside the calendar's years "
                             f"{FIRST_YEAR}-{LAST_YEAR}")
        # numpy's busday functions refuse NaT: compute on a stand-in, blank it after.
        return np.where(missing, _LOW, days), missing

    def dates(self, days: np.ndarray) -> Any:
        import pandas as pd

        days = np.where(self.missing, np.datetime64("NaT", "D"), days).astype("datetime64[ns]")
        if self.scalar:
            return pd.Timestamp(days[0]) if not self.missing[0] else pd.NaT
        if self.series is not None:
            return pd.Series(days, index=self.series.index, name=self.series.name)
        return days.astype("datetime64[D]")

    def values(self, values: np.ndarray) -> Any:
        """Booleans or counts in the input's shape, missing where the date was."""
        import pandas as pd

        if self.scalar:
            return pd.NA if self.missing[0] else values[0].item()
        if self.series is not None:
            out = pd.Series(values, index=self.series.index, name=self.series.name)
            if self.missing.any():
                out = out.astype("boolean" if values.dtype.kind == "b" else "Int64")
                out[self.missing] = pd.NA
            return out
        if self.missing.any():
            values = values.astype(object)
            values[self.missing] = pd.NA
        return values


def is_banking_day(dates: Any) -> Any:
    """Whether each date is a banking day (a weekday the Federal Reserve is open).

    >>> is_banking_day("2026-07-03"), is_banking_day("2026-12-25")
    (True, False)
    """
    shape = _Shape(dates)
    return shape.values(np.is_busday(shape.days, busdaycal=BUSDAY_CALENDAR))


def add_banking_days(dates: Any, n: Any) -> Any:
    """The ``n``-th banking day after each date (before it for a negative ``n``).

    Counted from the date itself whether or not it is a banking day: one banking
    day after Saturday 2026-07-04 is Monday 2026-07-06, one before it is Friday
    2026-07-03. ``n = 0`` gives the date if it is a banking day, else the next
    one. ``n`` may be a whole number or an array of them, one per date.

    >>> str(add_banking_days("2026-06-29", 6).date())
    '2026-07-07'
    """
    shape = _Shape(dates)
    steps = np.asarray(n)
    if steps.dtype.kind not in "iu":
        raise TypeError(f"n must be a whole number of banking days, not {steps.dtype}")
    steps = np.broadcast_to(steps, shape.days.shape)
    # Positive steps count from the banking day on or before the date, so that
    # "the first banking day after Saturday" is Monday, not Tuesday; negative
    # ones from the banking day on or after it.
    forward = np.busday_offset(shape.days, steps, roll="preceding", busdaycal=BUSDAY_CALENDAR)
    backward = np.busday_offset(shape.days, steps, roll="following", busdaycal=BUSDAY_CALENDAR)
    result = np.where(steps > 0, forward, backward)
    present = result[~shape.missing]
    if present.size and (present.min() < _LOW or present.max() > _HIGH):
        # Past the calendar numpy knows no holidays, and far past it the nanosecond
        # timestamps overflow into a wrong date: refuse rather than answer wrong.
        raise ValueError(f"n: {int(np.max(np.abs(steps)))} banking days from these dates "
                         f"ends outside the calendar's years {FIRST_YEAR}-{LAST_YEAR}")
    return shape.dates(result)


def next_banking_day(dates: Any) -> Any:
    """Each date if it is a banking day, else the first banking day after it."""
    return add_banking_days(dates, 0)


def banking_days_between(start: Any, end: Any) -> Any:
    """How many banking days ``d`` lie in ``start < d <= end`` (negative if ``end < start``).

    Counts are additive: ``between(a, b) + between(b, c) == between(a, c)``.
    Either argument may be a scalar and the other an array or Series.

    >>> banking_days_between("2026-07-02", "2026-07-06")   # Fri 3rd and Mon 6th
    2
    """
    first, last = _Shape(start, "start"), _Shape(end, "end")
    one = np.timedelta64(1, "D")
    low, high = np.minimum(first.days, last.days), np.maximum(first.days, last.days)
    # numpy counts a backwards range over other bounds; count forwards and negate.
    counts = np.busday_count(low + one, high + one, busdaycal=BUSDAY_CALENDAR)
    counts = np.where(last.days < first.days, -counts, counts)
    # Answer in the shape of whichever argument is not a scalar.
    shape = first if not first.scalar or last.scalar else last
    shape.missing = first.missing | last.missing
    return shape.values(counts)
