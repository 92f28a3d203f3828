"""How the sandbox writes JSON and timestamps on the wire: ``Decimal`` amounts as JSON
numbers with exactly their digits (``125.00``), epoch milliseconds as
``2025-06-11T20:50:04.032Z``.
"""

from __future__ import annotations

import datetime as dt
import operator
import re
import secrets
from decimal import Decimal
from typing import Any

import orjson

from paynb._time import utc_moment
from paynb.errors import ValidationError

__all__ = ["dumps", "iso", "parse_timestamp"]

# Decimals are first written as marked strings, then unquoted in one pass; the
# marker is random per process so no client-sent text can imitate it.
_MARK = "dec" + secrets.token_hex(8) + ":"
_MARKED = re.compile(rf'"{_MARK}(-?[0-9]+(?:\.[0-9]+)?)"'.encode())
# The replacement as a C-level callable: on Python 3.11 a template like rb"\1" is
# expanded by Python code for every match, i.e. for every amount of every list page.
_UNMARK = operator.methodcaller("group", 1)
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def _default(value: Any) -> str:
    if isinstance(value, Decimal):
        return _MARK + format(value, "f")
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def dumps(obj: Any) -> bytes:
    """``obj`` as compact JSON bytes, ``Decimal`` values as exact numbers."""
    return _MARKED.sub(_UNMARK, orjson.dumps(obj, default=_default))


def iso(ms: int | None) -> str | None:
    """Epoch milliseconds as ``2025-06-11T20:50:04.032Z`` (None stays None)."""
    if ms is None:
        return None
    moment = _EPOCH + dt.timedelta(milliseconds=ms)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{ms % 1000:03d}Z"


def parse_timestamp(text: str) -> int | None:
    """Epoch milliseconds of an ISO 8601 date or date-time (``2026-11-01T00:00:00.000``, a
    bare date, ``Z`` or an offset; without a zone it is UTC); None when it is none of these."""
    try:
        moment = utc_moment(text, "a timestamp")
    except ValidationError:
        return None
    return (moment - _EPOCH) // dt.timedelta(milliseconds=1)
