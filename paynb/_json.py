"""JSON with exact amounts, both ways.

:func:`dumps` writes request bodies: ``json.dumps`` cannot write a ``Decimal``
as a number, and going through ``float`` is where artefacts like ``10.000000001``
come from. Each Decimal is written from its own digits instead.

:func:`loads` reads answers with orjson (fast), whose numbers are binary floats.
A float holds any number of up to 15 significant digits exactly (its shortest
``repr`` gives the same digits back), so that is safe; an answer holding a longer
number (``99999999999999.99`` would read as ``...99.98``) is read by the standard
library with every non-integer number as a ``Decimal`` instead.
"""

from __future__ import annotations

import json
import re
import secrets
from decimal import Decimal
from typing import Any

import orjson

__all__ = ["dumps", "loads", "needs_exact"]

# Finding long numbers: digits and points all become b"0" (bytes.translate and bytes.find
# run in C; a regex scan of a whole page costs several times orjson's parse), then each
# run of 16 or more is a number when a ':' ',' or '[' comes before it (spaces and a minus
# sign between). A point counts as a digit: a false alarm only costs the slower parser.
_MARK_DIGITS = bytes.maketrans(b"0123456789.", b"0" * 11)
_LONG_RUN = b"0" * 16
_RUN_END = re.compile(rb"[^0]")
_NUMBER_LEAD = b" \t\r\n-"
_BEFORE_VALUE = frozenset(b":,[")


def dumps(obj: Any) -> str:
    """Serialise ``obj`` to compact JSON; ``Decimal`` values keep every digit."""
    nonce = secrets.token_hex(8)
    numbers: list[str] = []

    def placeholder(value: Any) -> str:
        if isinstance(value, Decimal):
            if not value.is_finite():
                raise ValueError("amounts must be finite numbers")
            numbers.append(format(value, "f"))
            return f"{nonce}:{len(numbers) - 1}"
        raise TypeError(f"{type(value).__name__} is not JSON serialisable")

    text = json.dumps(obj, default=placeholder, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)
    for index, number in enumerate(numbers):
        text = text.replace(f'"{nonce}:{index}"', number, 1)
    return text


def needs_exact(data: bytes) -> bool:
    """Whether ``data`` holds a JSON number of more than 15 significant digits.

    Leading zeros and a decimal point are counted as digits, so a 15-digit number
    written with a point may answer ``True``; that only costs the slower parser.
    """
    marked = data.translate(_MARK_DIGITS)
    start = marked.find(_LONG_RUN)
    while start != -1:
        # find() returns the first index, so the byte before `start` is not part of the run.
        before = start - 1
        while before >= 0 and data[before] in _NUMBER_LEAD:
            before -= 1
        if before < 0 or data[before] in _BEFORE_VALUE:
            return True
        end = _RUN_END.search(marked, start)
        if end is None:
            return False
        start = marked.find(_LONG_RUN, end.start())
    return False


def loads(data: bytes | str) -> Any:
    """Parse JSON; numbers of more than 15 digits are kept exact (see the module docstring).

    Raises :class:`ValueError` (``orjson.JSONDecodeError`` or
    ``json.JSONDecodeError``) for text that is not JSON.
    """
    raw = data.encode() if isinstance(data, str) else data
    if needs_exact(raw):
        return json.loads(raw, parse_float=Decimal)
    return orjson.loads(raw)
