"""One field's column judged whole by its rule: the fast path of :mod:`paynb._checks`.

Each rule runs once per column: Arrow holds the values, NumPy judges their UTF-8 bytes
(lengths, byte classes, the routing checksum on a matrix of digits, the amount's shape),
a listed value by Arrow's set lookup. A verdict is only ever "certainly valid" or "ask
the models": :func:`vouch` never refuses a value itself.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from typing import TYPE_CHECKING, Any

from paynb import validation as rules

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

__all__ = ["Judged", "Rule", "vouch"]

#: Characters ``str.strip()`` removes (``str.isspace``); a test compares it with Python.
_PY_SPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
             "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_SPACE_CLASS = "".join(f"\\x{{{ord(c):x}}}" for c in _PY_SPACE)
_CONTROL = r"\x00-\x1f\x7f"
#: Amount text that ``Decimal`` reads as 0 < amount <= 99,999,999.99 with at most 2 decimals
#: (together with "has a digit 1-9"; ASCII digits only: ``Decimal`` reads others too).
_AMOUNT_TEXT = r"^[0-9]{1,8}(?:\.[0-9]{0,2})?$"
_CENT = Decimal("0.01")
_CONTROL_BYTES = "".join(map(chr, range(0x20))) + "\x7f"


@dataclass(frozen=True)
class Rule:
    """How the fast path vouches for one field (wire name)."""

    kind: str  # text, reference, routing, state, zip, characters, choice, amount
    required: bool = False
    min_length: int = 0
    max_length: int | None = None
    #: The characters allowed (characters), or between a ZIP code's 5 and 4 digits (zip).
    pattern: str | None = None
    choices: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Judged:
    """A field's verdicts found without a column of its values: which rows it vouches for,
    and which hold it."""

    ok: np.ndarray
    present: np.ndarray


def _strings(values: Sequence[Any]) -> tuple[pa.Array, np.ndarray]:
    """The values as an Arrow string array (others null) and the mask of non-text values."""
    import numpy as np
    import pyarrow as pa

    if isinstance(values, pa.Array):  # read by Arrow already (text only)
        return values, np.zeros(len(values), dtype=bool)
    try:
        array = pa.array(values, type=pa.string())
        return array, np.zeros(len(values), dtype=bool)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        texts = [v if type(v) is str else None for v in values]
        odd = np.fromiter((type(v) is not str and v is not None for v in values), dtype=bool,
                          count=len(values))
        return pa.array(texts, type=pa.string()), odd


def _mask(array: pa.Array) -> np.ndarray:
    return array.to_numpy(zero_copy_only=False).astype(bool)


def _utf8(array: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each value's byte offsets (``n + 1``, from 0), the UTF-8 bytes of a string array
    (NumPy views of its buffers; a null value has no bytes), and each value's length."""
    import numpy as np

    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[
        array.offset:array.offset + len(array) + 1]
    data = array.buffers()[2]
    lengths = np.diff(offsets)
    if data is None or offsets[-1] == offsets[0]:
        return offsets - offsets[0], np.zeros(0, dtype=np.uint8), lengths
    return (offsets - offsets[0], np.frombuffer(data, dtype=np.uint8)[offsets[0]:offsets[-1]],
            lengths)


@cache
def _byte_class(characters: str, *, other: bool = False) -> np.ndarray:
    """A table of the 256 byte values: which are one of ``characters`` (ASCII), or with
    ``other`` which are not (every byte of a character beyond ASCII is then in)."""
    import numpy as np

    table = np.zeros(256, dtype=bool)
    table[[ord(c) for c in characters]] = True
    return ~table if other else table


def _counts(data: np.ndarray, offsets: np.ndarray, table: np.ndarray) -> np.ndarray:
    """How many bytes of each value are of ``table``'s class; with a table of weights, the
    sum of its bytes' weights (a sum per value, in C; small temporaries, since fresh memory
    costs its page faults)."""
    import numpy as np

    hits = table.take(data)  # (take: faster than indexing)
    counts = np.zeros(len(offsets) - 1, dtype=np.int32)
    if not hits.any():
        return counts
    lengths = np.diff(offsets)
    if lengths.all():
        return np.add.reduceat(hits, offsets[:-1], dtype=np.int32)
    # reduceat sums from one start to the next: over the values that have bytes only.
    filled = np.flatnonzero(lengths)
    counts[filled] = np.add.reduceat(hits, offsets[filled], dtype=np.int32)
    return counts


def _holds(data: np.ndarray, offsets: np.ndarray, table: np.ndarray) -> np.ndarray:
    """Which values hold a byte of ``table``'s class."""
    return _counts(data, offsets, table) > 0


def _routing_ok(array: pa.Array) -> np.ndarray:
    """Which values are nine ASCII digits passing the ABA 3-7-1 checksum: one matrix of
    digits for the column (no regular expression, no row in Python)."""
    import numpy as np

    ok = np.zeros(len(array), dtype=bool)
    offsets, data, lengths = _utf8(array)
    rows = np.flatnonzero(lengths == 9)
    if not len(rows):
        return ok
    if len(rows) == len(array):  # the usual column: the bytes are the matrix already
        matrix = data.reshape(-1, 9)
    else:
        matrix = data[offsets[rows, None] + np.arange(9)]
    # One column of digits per position, in bytes (a byte below "0" wraps round): small
    # arrays, no wide copy of the matrix.
    digit = [matrix[:, i] - np.uint8(48) for i in range(9)]
    shaped = np.logical_and.reduce([d <= 9 for d in digit])
    # Summed in uint16 (up to 297): numpy before 2 keeps uint8 * np.uint16(3) in uint8,
    # where the sum wrapped round (780894794, sum 256, passed).
    wide = [d.astype(np.uint16) for d in digit]
    total = ((wide[0] + wide[3] + wide[6]) * 3 + (wide[1] + wide[4] + wide[7]) * 7
             + (wide[2] + wide[5] + wide[8]))
    ok[rows] = shaped & (total % 10 == 0)
    return ok


def _zip_ok(array: pa.Array, separators: str) -> np.ndarray:
    """Which values are five ASCII digits, or five, one of ``separators`` and four."""
    import numpy as np

    offsets, data, lengths = _utf8(array)
    if not len(data):
        return np.zeros(len(array), dtype=bool)
    others = _counts(data, offsets, _byte_class("0123456789", other=True))
    sixth = data[np.minimum(offsets[:-1] + 5, len(data) - 1)]
    plus_four = (lengths == 10) & (others == 1) & _byte_class(separators).take(sixth)
    return ((lengths == 5) & (others == 0)) | plus_four


def _amount_text_ok(array: pa.Array) -> np.ndarray:
    """Which values match ``_AMOUNT_TEXT`` and hold a digit 1-9 (not zero), by their bytes:
    at most 11 (8 digits, a point, 2 decimals), of which digits and at most one point, the
    point (if any) one of the last three bytes with one to eight digits before it."""
    import numpy as np

    offsets, data, lengths = _utf8(array)
    if not len(data):
        return np.zeros(len(array), dtype=bool)
    # One sum per value counts three classes at once: 1-9 (units), points (16s), any other
    # byte (256s); exact for values of up to 11 bytes, the only ones that can pass.
    sums = _counts(data, offsets, _amount_weights())
    points = sums >> 4 & 15
    ok = (lengths <= 11) & (sums >> 8 == 0) & (sums & 15 > 0) & (points <= 1)
    decimals = np.full(len(array), 3, dtype=np.int32)  # 3: no point among the last three
    ends = offsets[1:]
    for k in (2, 1, 0):
        at = data[np.maximum(ends - 1 - k, 0)] == ord(".")
        decimals[at & (lengths > k)] = k
    whole = np.where(points == 1, lengths - 1 - decimals, lengths)
    ok &= (whole >= 1) & (whole <= 8) & ((points == 0) | (decimals <= 2))
    return ok


@cache
def _amount_weights() -> np.ndarray:
    import numpy as np

    weights = np.full(256, 256, dtype=np.int16)
    weights[ord("0")] = 0
    weights[ord("1"):ord("9") + 1] = 1
    weights[ord(".")] = 16
    return weights


def _amounts(values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Rows whose amount is certainly above 0, at most 2 decimals and at most the maximum,
    and the rows that hold one."""
    import numpy as np
    import pyarrow as pa

    try:
        array = values if isinstance(values, pa.Array) else pa.array(values, type=pa.string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        array = None
    if array is not None:
        return _amount_text_ok(array), _mask(array.is_valid())
    ok = np.zeros(len(values), dtype=bool)
    for n, value in enumerate(values):
        if type(value) is str:
            ok[n] = bool(re.fullmatch(_AMOUNT_TEXT, value) and re.search("[1-9]", value))
        elif type(value) is Decimal or type(value) is int:
            amount = Decimal(value)
            ok[n] = bool(amount.is_finite() and 0 < amount <= rules.MAX_AMOUNT
                         and amount == amount.quantize(_CENT))
        # floats (their shortest repr decides), booleans, others: the models judge
    present = np.fromiter((v is not None for v in values), dtype=bool, count=len(values))
    return ok, present


def _text_pattern(rule: Rule) -> str:
    """One regular expression for a text rule: not blank and as ``str.strip()`` leaves it
    (no whitespace at either end), no control characters, at most ``max_length``
    characters (RE2 counts characters, as ``len`` does), no apostrophe in a reference."""
    forbidden = _CONTROL + ("'" if rule.kind == "reference" else "")
    middle = "*" if rule.max_length is None else f"{{0,{rule.max_length - 2}}}"
    return (f"^[^{_SPACE_CLASS}{forbidden}]"
            f"(?:[^{forbidden}]{middle}[^{_SPACE_CLASS}{forbidden}])?$")


def _ascii_text(array: pa.Array, rule: Rule) -> np.ndarray | None:
    """:func:`_text_pattern` on a column of ASCII text, by its bytes: the values not blank,
    with no space at either end (the other ASCII whitespace is control characters), no
    control character (nor apostrophe in a reference), at most ``max_length`` bytes
    (= characters). ``None`` when some value holds another character: the regular
    expression counts characters and knows Unicode's whitespace."""
    import numpy as np

    offsets, data, lengths = _utf8(array)
    if not len(data):
        return np.zeros(len(array), dtype=bool)
    if data.max() >= 0x80:
        return None
    ok = lengths > 0
    if rule.max_length is not None:
        ok &= lengths <= rule.max_length
    # Which values hold a forbidden byte, only if the column holds one (three comparisons).
    if (data < 0x20).any() or (data == 0x7F).any() or (
            rule.kind == "reference" and (data == ord("'")).any()):
        ok &= ~_holds(data, offsets,
                      _byte_class(_CONTROL_BYTES + ("'" if rule.kind == "reference" else "")))
    last = len(data) - 1
    ok &= data[np.minimum(offsets[:-1], last)] != 0x20
    ok &= data[np.maximum(offsets[1:] - 1, 0)] != 0x20
    return ok


def vouch(rule: Rule, values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Rows whose value of this field the fast path vouches for, and the rows that hold a
    value (not ``None``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(values, Judged):
        return values.ok, values.present
    if rule.kind == "amount":
        return _amounts(values)
    array, odd = _strings(values)
    present = _mask(array.is_valid()) | odd
    if rule.kind == "state":
        good = pc.is_in(array, value_set=pa.array(sorted(rules.US_STATES)))
    elif rule.kind == "choice":
        good = pc.is_in(array, value_set=pa.array(sorted(rule.choices)))
    elif rule.kind == "zip":
        return _zip_ok(array, rule.pattern or "") & ~odd, present
    elif rule.kind == "characters":  # lengths in bytes are characters: ASCII only
        assert rule.pattern is not None and rule.max_length is not None
        offsets, data, lengths = _utf8(array)
        ok = (lengths >= rule.min_length) & (lengths <= rule.max_length)
        ok &= ~_holds(data, offsets, _byte_class(rule.pattern, other=True))
        return ok & ~odd, present
    elif rule.kind == "routing":
        return _routing_ok(array) & ~odd, present
    else:  # text, reference: not blank, stripped, no control characters, short enough
        plain = _ascii_text(array, rule)
        if plain is not None:
            return plain & ~odd, present
        good = pc.match_substring_regex(array, _text_pattern(rule))
    return _mask(pc.fill_null(good, False)) & ~odd, present
