"""Checks of a call's arguments that several modules share.

A bad argument is a :class:`~paynb.errors.ValidationError` naming it
(:meth:`ValidationError.for_argument <paynb.errors.ValidationError.for_argument>`),
raised before anything is sent.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from paynb.errors import ValidationError

__all__ = ["backwards", "positive_int"]


def positive_int(value: Any, argument: str, *, minimum: int = 1) -> int:
    """``value`` as an int of at least ``minimum`` (numpy and pandas integers, and text of
    digits, accepted); else an error naming ``argument``."""
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValidationError.for_argument(argument,
                                                    f"must be a whole number of at least {minimum}")
    return value


def _shown(moment: dt.datetime) -> str:
    return f"{moment:%Y-%m-%d}" if moment.time() == dt.time() else f"{moment:%Y-%m-%d %H:%M:%S} UTC"


def backwards(start_name: str, begin: dt.datetime, end_name: str, end: dt.datetime
              ) -> ValidationError:
    """The error of a range whose start (``begin``) is after its end (zone-less UTC; a
    whole day's end as its midnight): it names both arguments."""
    message = (f"{start_name} ({_shown(begin)}) is after {end_name} ({_shown(end)}): "
               f"a backwards range selects nothing; swap them")
    return ValidationError({start_name: [message], end_name: [message]}, message=message)
