"""A value as a UTC moment: the one parser every part of paynb uses.

The service writes its times as ISO 8601 instants (``2025-06-11T20:50:04.032Z``), the spec
sometimes without a zone (``2026-11-01T00:00:00.000``, meant as UTC), and an analyst
passes dates, datetimes, pandas ``Timestamp`` values or text. :func:`utc_moment` reads
them all the same way:

- a ``datetime`` or ``Timestamp`` with a zone: that instant, in UTC; without one: UTC;
- a ``date``: its midnight, UTC; a numpy ``datetime64``: UTC;
- ISO 8601 text: ``2025-06-11T20:50:04.032Z``, ``+02:00`` offsets, zone-less (UTC), a
  space for the ``T``, or a date alone (``2026-11-23``: midnight UTC).

Anything else (a number, ``None``, text that is no ISO 8601 time, an instant outside
what a UTC datetime holds) is the one failure: a :class:`~paynb.errors.ValidationError`
(a ``ValueError``) naming the argument, the forms accepted and the value.
:func:`utc_day` is the UTC day of such a moment; :func:`is_date_only` says whether a value
names a whole day rather than an instant (a date, or text without a time). Frames parse
whole columns of service times in Arrow (:mod:`paynb.frames`), by the same rules.

No pandas or numpy is imported here: ``import paynb`` stays light.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from paynb.errors import ValidationError

__all__ = ["ACCEPTED", "is_date_only", "utc_day", "utc_moment"]

ACCEPTED = ("a date, a datetime or ISO 8601 text (2026-11-23, 2026-11-23T15:30:00Z; "
            "without a zone: UTC)")
"""The forms :func:`utc_moment` reads, as its error message names them."""


def _from_text(text: str) -> dt.datetime | None:
    text = text.strip()
    if text[-1:] in ("Z", "z"):
        text = text[:-1] + "+00:00"
    try:
        return dt.datetime.fromisoformat(text)
    except ValueError:
        return None


def _read(value: Any) -> dt.datetime | None:
    """``value`` as a datetime (maybe zone-less), or None when it is none."""
    if isinstance(value, str):
        return _from_text(value)
    if type(value).__name__ == "datetime64":  # numpy, without importing it
        value = value.astype("datetime64[us]").item()
        return value if isinstance(value, dt.datetime) else None  # NaT reads as None
    to_pydatetime = getattr(value, "to_pydatetime", None)
    if to_pydatetime is not None and isinstance(value, dt.datetime):  # pandas Timestamp
        # Nanoseconds below a microsecond are dropped (Python's datetime holds none).
        value = to_pydatetime(warn=False)
    if isinstance(value, dt.datetime):
        return value
    if isinstance(value, dt.date):
        return dt.datetime.combine(value, dt.time())
    return None


def utc_moment(value: Any, argument: str) -> dt.datetime:
    """``value`` as an aware UTC ``datetime`` (see the module's rules).

    Raises:
        ValidationError: ``value`` is no date or time; the message names ``argument``.
    """
    moment = _read(value)
    if moment is not None and moment == moment:  # pandas' NaT is a datetime that is none
        if moment.tzinfo is None:
            return moment.replace(tzinfo=dt.UTC)
        try:
            return moment.astimezone(dt.UTC)
        except OverflowError:  # 0001-01-01T00:00+01:00 has no UTC time
            pass
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise ValidationError.for_argument(argument, f"must be {ACCEPTED}; got {shown}")


def utc_day(value: Any, argument: str) -> dt.date:
    """The UTC day of :func:`utc_moment` (``2026-11-23T23:30-05:00`` is 2026-11-24)."""
    return utc_moment(value, argument).date()


def is_date_only(value: Any) -> bool:
    """Whether ``value`` names a whole day: a ``date`` (not a datetime), or ISO text
    without a time of day (``2026-11-23``)."""
    if isinstance(value, str):
        try:
            dt.date.fromisoformat(value.strip())
        except ValueError:
            return False
        return True
    return isinstance(value, dt.date) and not isinstance(value, dt.datetime)
