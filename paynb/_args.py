"""Checks of a call's arguments that several modules share.

A bad argument is a :class:`~paynb.errors.ValidationError` naming it
(:meth:`ValidationError.for_argument <paynb.errors.ValidationError.for_argument>`),
raised before anything is sent.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable
from typing import Any

from paynb._coerce import STATUS_BY_NAME
from paynb.codes import INSTANT_STATUSES, STATUS_NAMES, STATUS_ORDER
from paynb.errors import ValidationError

__all__ = ["backwards", "flag", "http_url", "positive_int", "seconds", "status_codes", "text"]


def text(value: Any, argument: str) -> str:
    """``value`` stripped, when it is text that is not blank; else an error naming
    ``argument``."""
    if not isinstance(value, str) or not value.strip():
        raise ValidationError.for_argument(argument, "must be a non-empty string")
    return value.strip()


def flag(value: Any, argument: str) -> bool:
    """``value`` when it is ``True`` or ``False``; else an error naming ``argument``."""
    if not isinstance(value, bool):
        raise ValidationError.for_argument(argument, "must be True or False")
    return value


def http_url(value: Any, argument: str) -> str:
    """An ``http://`` or ``https://`` address, without its trailing ``/``."""
    if not isinstance(value, str) or not value.strip().lower().startswith(("http://",
                                                                           "https://")):
        raise ValidationError.for_argument(argument, "must be an http:// or https:// address")
    return value.strip().rstrip("/")


def seconds(value: Any, argument: str) -> float:
    """A finite number of seconds, 0 or more."""
    if isinstance(value, bool) or not isinstance(value, int | float) \
            or not math.isfinite(value) or value < 0:
        raise ValidationError.for_argument(argument, "must be a number of seconds, 0 or more")
    return float(value)


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


def status_codes(status: str | Iterable[str], kind: str) -> list[str]:
    """The statuses ``status`` names (one or several), as the frames of ``kind`` write
    them: ACH and RCC items' codes (``R``) or names (``returned``), instant card and RTP
    transactions' ``Success`` or ``Failed``, in any case; else an error naming
    ``status``."""
    items = kind in ("ach", "rcc")
    known = {code.lower(): code for code in STATUS_ORDER} | STATUS_BY_NAME if items \
        else {name.lower(): name for name in INSTANT_STATUSES}
    choices = f"some of {', '.join(STATUS_ORDER)} ({', '.join(STATUS_NAMES.values())})" \
        if items else " or ".join(INSTANT_STATUSES)
    codes = []
    for one in [status] if isinstance(status, str) else list(status):
        code = known.get(str(one).strip().lower())
        if code is None:
            raise ValidationError.for_argument(
                "status", f"holds {str(one).strip()!r}, not a status of {kind} "
                          f"{'items' if items else 'transactions'}; use {choices}")
        codes.append(code)
    return codes
