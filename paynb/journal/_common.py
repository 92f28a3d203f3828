"""What every table of the journal shares: argument checks, time stamps, item ids as
stored, and statements cut to the number of parameters every database takes."""

from __future__ import annotations

import getpass
import os
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from paynb._coerce import missing
from paynb._time import utc_moment
from paynb.codes import PAYMENT_KINDS

#: The kinds the journal records (:data:`paynb.codes.PAYMENT_KINDS`).
KINDS = PAYMENT_KINDS

# SQLite builds before 3.32 allow at most 999 parameters in one statement.
_CHUNK = 500


def utc(when: datetime) -> datetime:
    """``when`` in UTC; a zone-less time is taken as UTC, like the service's own."""
    if not isinstance(when, datetime):
        raise TypeError(f"when must be a datetime, not {type(when).__name__}")
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def stamp(when: datetime | None = None) -> str:
    """A time as the journal stores it: ISO text in UTC, to the microsecond (it sorts)."""
    return utc(when or datetime.now(UTC)).isoformat(timespec="microseconds")


def parse_stamp(text: str | None) -> datetime | None:
    """A stored :func:`stamp` back as a UTC datetime (``None`` stays ``None``)."""
    return None if text is None else utc_moment(text, "a journal time")


def name(value: object, argument: str, choices: Sequence[str] | None = None) -> str:
    """``value`` as a non-empty name, one of ``choices`` when given; a ``ValueError``
    naming ``argument`` otherwise."""
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{argument} must be a non-empty string")
    if choices is not None and value not in choices:
        raise ValueError(f"{argument} must be one of {', '.join(choices)}; got {value!r}")
    return value.strip()


def chunks(values: Sequence[Any]) -> Iterator[Sequence[Any]]:
    """``values`` in pieces small enough for one statement's parameters."""
    for start in range(0, len(values), _CHUNK):
        yield values[start:start + _CHUNK]


def placeholders(count: int) -> str:
    """``?, ?, ...``: ``count`` parameters of a statement."""
    return ", ".join("?" * count)


def scalar(value: Any) -> str | int | None:
    """An item id as the journal stores it: numpy and pandas scalars (ids taken from a
    DataFrame) become Python ints, missing values ``None``, anything else its text."""
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if missing(value):
        return None
    if isinstance(value, int) or (isinstance(value, float) and value.is_integer()):
        return int(value)
    return value if isinstance(value, str) else str(value)


def current_user() -> str:
    """Who is acting, for the journal: the OS user's login name."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no login name in some containers
        return os.environ.get("USER") or "unknown"
