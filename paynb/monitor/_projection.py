"""Where a 60-day return rate is heading: the day it would reach its warning level and its
threshold if the last 14 banking days' entries and returns went on. Pure arithmetic on
daily counts (:func:`paynb.compliance.daily_counts`), no I/O.

The method is docs/monitor.md's ("The projection", with a worked example): each
day ahead, the 60-day window ending on it holds the counts recorded up to the as-of day
plus the base's pace (banking days of ``paynb.calendar`` only), so the oldest days drop
out as it moves; its level is decided as :func:`paynb.compliance.return_rates` decides
it, in exact integer arithmetic (everything multiplied by the base's days).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from paynb import calendar

__all__ = ["BASE_BANKING_DAYS", "HORIZON_DAYS", "WINDOW_DAYS", "Projection", "project"]

#: Banking days whose pace the projection continues.
BASE_BANKING_DAYS = 14
#: Calendar days ahead the projection looks.
HORIZON_DAYS = 60
#: The measuring window (NACHA's 60 days ending on the as-of day).
WINDOW_DAYS = 60


def _day(value: Any, name: str) -> np.datetime64:
    import pandas as pd

    try:
        stamp = pd.Timestamp(value)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be a date; got {value!r}") from exc
    if stamp is pd.NaT:
        raise ValueError(f"{name} must be a date; got {value!r}")
    if stamp.tzinfo is not None:
        stamp = stamp.tz_convert("UTC").tz_localize(None)
    return np.datetime64(stamp.date(), "D")


def _level(returns: int, entries: int, threshold_bp: int, share: Fraction) -> str:
    """The level of ``returns`` over ``entries`` (both scaled alike), as return_rates says it."""
    if entries <= 0:
        return "no entries"
    if returns * 10_000 > threshold_bp * entries:
        return "over"
    if returns * 10_000 * share.denominator >= share.numerator * threshold_bp * entries:
        return "warning"
    return "ok"


@dataclass(frozen=True)
class Projection:
    """The outcome of :func:`project` for one rate.

    Attributes:
        as_of: the day measured.
        base_start, base_end: the first and last day of the base (the 14 banking days
            before ``as_of``; ``base_end`` is the day before ``as_of``).
        base_entries, base_returns: the base's debit entries and returns.
        level_now: the level on ``as_of`` (``no entries``, ``ok``, ``warning``, ``over``).
        warning_day, breach_day: the first day at the warning level or over, and over the
            threshold (``as_of`` when already), None when not within the horizon.
        horizon_end: the last day looked at.
        path: ``(day, rate)`` from ``as_of`` until ``breach_day`` when the crossing lies
            ahead, else until ``horizon_end``; the rate is None without entries.
    """

    as_of: dt.date
    base_start: dt.date
    base_end: dt.date
    base_entries: int
    base_returns: int
    level_now: str
    warning_day: dt.date | None
    breach_day: dt.date | None
    horizon_end: dt.date
    path: tuple[tuple[dt.date, float | None], ...] = ()

    @property
    def entries_per_day(self) -> Fraction:
        """Debit entries per banking day in the base."""
        return Fraction(self.base_entries, BASE_BANKING_DAYS)

    @property
    def returns_per_day(self) -> Fraction:
        """Returns of the category per banking day in the base."""
        return Fraction(self.base_returns, BASE_BANKING_DAYS)

    def when(self, level: str) -> str:
        """``"now"``, ``"2026-12-03 (in 6 days)"`` or ``"not within 60 days"``, for
        ``"warning"`` or ``"over"``."""
        if level not in ("warning", "over"):
            raise ValueError(f"level must be 'warning' or 'over'; got {level!r}")
        day = self.warning_day if level == "warning" else self.breach_day
        if day is None:
            return f"not within {(self.horizon_end - self.as_of).days} days"
        if day == self.as_of:
            return "now"
        days = (day - self.as_of).days
        return f"{day:%Y-%m-%d} (in {days} day{'' if days == 1 else 's'})"


def project(dates: Any, entries: Any, returns: Any, *, as_of: Any, threshold_bp: int,
            warning_share: float | Fraction = Fraction(4, 5),
            base_days: int = BASE_BANKING_DAYS, horizon: int = HORIZON_DAYS) -> Projection:
    """Project one 60-day return rate forward (see the module's description).

    Args:
        dates: the days of the counts (dates or datetimes; a day missing counts zero).
        entries: debit entries originated on each day.
        returns: returns of the category dated each day.
        as_of: the day measured; counts after it are ignored.
        threshold_bp: the category's threshold in basis points (50 for 0.5 %).
        warning_share: the share of the threshold from which the level is ``warning``.
        base_days: banking days of the base.
        horizon: calendar days to look ahead.

    Returns:
        A :class:`Projection`.
    """
    for name, value in (("threshold_bp", threshold_bp), ("base_days", base_days),
                        ("horizon", horizon)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive whole number; got {value!r}")
    share = warning_share if isinstance(warning_share, Fraction) else \
        Fraction(str(warning_share))
    today = _day(as_of, "as_of")
    days = np.array([_day(d, "dates") for d in dates], dtype="datetime64[D]") \
        if len(dates) else np.array([], dtype="datetime64[D]")
    entries = np.asarray(entries, dtype=np.int64)
    returns = np.asarray(returns, dtype=np.int64)
    if not len(days) == len(entries) == len(returns):
        raise ValueError("dates, entries and returns must have the same length")
    # The recorded counts of the days that any window ahead still holds, and the base's.
    first = today - np.timedelta64(WINDOW_DAYS - 1, "D")
    span = WINDOW_DAYS
    daily_entries = np.zeros(span, dtype=np.int64)
    daily_returns = np.zeros(span, dtype=np.int64)
    inside = (days >= first) & (days <= today)
    offsets = (days[inside] - first).astype(np.int64)
    np.add.at(daily_entries, offsets, entries[inside])
    np.add.at(daily_returns, offsets, returns[inside])
    base_start = np.datetime64(calendar.add_banking_days(today, -base_days).date(), "D")
    base_end = today - np.timedelta64(1, "D")
    if base_start < first:
        raise ValueError(f"base_days: {base_days} banking days reach back before the window")
    in_base = slice(int((base_start - first) // np.timedelta64(1, "D")), span - 1)
    base_e, base_r = int(daily_entries[in_base].sum()), int(daily_returns[in_base].sum())

    # The banking days from the as-of day to each day ahead, counted once for all.
    ahead = np.asarray(calendar.banking_days_between(
        today, today + np.arange(horizon + 1).astype("timedelta64[D]")), dtype=np.int64)

    def window(offset: int) -> tuple[int, int]:
        """Returns and entries (times ``base_days``) of the window ``offset`` days after
        the as-of day (0: the as-of day itself)."""
        kept = slice(offset, span)  # the recorded days still inside the window
        banking = int(ahead[offset])
        return (base_days * int(daily_returns[kept].sum()) + banking * base_r,
                base_days * int(daily_entries[kept].sum()) + banking * base_e)

    first_day: dt.date = today.astype(dt.date)
    now = _level(*window(0), threshold_bp, share)
    warning_day = breach_day = None
    path = []
    for offset in range(horizon + 1):
        scaled_returns, scaled_entries = window(offset)
        level = _level(scaled_returns, scaled_entries, threshold_bp, share)
        day = first_day + dt.timedelta(days=offset)
        path.append((day, scaled_returns / scaled_entries if scaled_entries else None))
        if warning_day is None and level in ("warning", "over"):
            warning_day = day
        if breach_day is None and level == "over":
            breach_day = day
            if offset:  # the crossing ahead ends the path; one already made does not
                break
    return Projection(
        as_of=today.astype(dt.date), base_start=base_start.astype(dt.date),
        base_end=base_end.astype(dt.date), base_entries=base_e, base_returns=base_r,
        level_now=now, warning_day=warning_day, breach_day=breach_day,
        horizon_end=(today + np.timedelta64(horizon, "D")).astype(dt.date), path=tuple(path))
