"""The bounds of a history's reads: ranges of times and ``as_of`` (a version or a moment)."""

from __future__ import annotations

import datetime as dt
from typing import Any

from paynb._args import backwards
from paynb.errors import ValidationError
from paynb.history._store import when


def span(start: Any, end: Any, names: tuple[str, str]) -> tuple[Any, Any]:
    low, high = when(start, names[0]), when(end, names[1], end=True)
    if low is not None and high is not None and high < low:
        shown = when(end, names[1])
        assert shown is not None  # end is given: high is not None
        raise backwards(names[0], low.tz_convert(None).to_pydatetime(), names[1],
                        shown.tz_convert(None).to_pydatetime())
    return low, high


def within(field: str, low: Any, high: Any) -> Any:
    """The filter of ``field`` from ``low`` to ``high`` (timestamps; None: no bound)."""
    import pyarrow.compute as pc

    condition = pc.scalar(True)
    if low is not None:
        condition &= pc.field(field) >= low.to_pydatetime()
    if high is not None:
        condition &= pc.field(field) <= high.to_pydatetime()
    return condition


def as_of_moment(value: Any) -> int | dt.datetime | None:
    """``as_of`` as a table version, or a UTC time (a date alone: the end of that day)."""
    import numbers

    if value is None:
        return None
    if isinstance(value, bool) or (isinstance(value, numbers.Integral) and value < 0):
        # Not positive_int's "a whole number": a date or a time will do as well.
        raise ValidationError.for_argument(
            "as_of", "must be a date, a time or a table version (0 or more)")
    if isinstance(value, numbers.Integral):
        return int(value)
    stamp = when(value, "as_of", end=True)
    assert stamp is not None
    return stamp.to_pydatetime()


def one_moment(value: Any, where: str) -> dt.datetime | None:
    """``as_of`` of a read of every table (``where``): a date or a time; a version is
    refused, each table having versions of its own."""
    moment = as_of_moment(value)
    if isinstance(moment, int):
        raise ValidationError.for_argument(
            "as_of", f"must be a date or a time for {where}: it reads every table, and "
                     "each has versions of its own (info()['versions']); a version suits "
                     "one table's reader: history.ach(as_of=...) the ach table's, "
                     "history.events(as_of=...) the events table's")
    return moment
