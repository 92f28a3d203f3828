"""Bulk pre-validation column by column: the fast path of ``check_many`` and ``submit_many``.

One pydantic model per row is about 20 µs: a 100,000-row payroll file waits two
seconds before anything is shown. Here each field's rule runs once per *column*:
Arrow reads the values from the rows, NumPy judges each column's UTF-8 bytes
(lengths, byte classes, the routing checksum on a matrix of digits, the amount's
shape), the listed values (states, the open sets' known spellings) are judged by
the set of their distinct combinations, and a row goes to the models only when
the columns cannot vouch for it. The fast path accepts only what is *certainly*
valid with no advisory under the models' own rules: text already stripped, known
values of the open sets in their documented spelling, optional fields absent or
plain, amounts as digits with at most two decimals. Everything else (a bad value,
a lower-case state, a prenote, a float amount, any field the fast path does not
know) is judged by :func:`paynb.models.check` row by row, so the verdicts,
messages and wire bodies are the models' by construction;
``tests/client/test_check_many.py`` compares both on generated rows over every
field of the models, and each byte check with its regular expression;
``tests/client/test_check_many_file.py`` on a 100,000-row file with 5 % bad rows
of every kind.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError as PydanticValidationError

from paynb import codes
from paynb import validation as rules
from paynb.models import AchItem, Advisory, RccItem, RequestModel, field_errors

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

__all__ = ["CheckedRows", "check_columns", "check_rows", "columns_of_frame"]

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
class _Rule:
    """How the fast path vouches for one field (wire name)."""

    kind: str  # text, reference, routing, state, zip, characters, choice, amount
    required: bool = False
    min_length: int = 0
    max_length: int | None = None
    #: The characters allowed (characters), or between a ZIP code's 5 and 4 digits (zip).
    pattern: str | None = None
    choices: frozenset[str] = frozenset()


_NAME = _Rule("text", required=True, max_length=50)
_OPTIONAL_NAME = _Rule("text", max_length=50)
_COMMON = {
    "state": _Rule("state", required=True),
    "yourReferenceNumber": _Rule("reference", required=True, max_length=50),
    "bankRoutingNumber": _Rule("routing", required=True),
    "bankAccountNumber": _Rule("characters", required=True, min_length=4, max_length=17,
                               pattern="0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "abcdefghijklmnopqrstuvwxyz-"),
    "amount": _Rule("amount", required=True),
}


def _free(width: int | None = None) -> _Rule:
    # Optional free text: a value longer than its NACHA width is an advisory, so the models
    # judge it (the fast path vouches only for rows without advisories).
    return _Rule("text", max_length=width)


#: What the fast path knows, per model. Fields left out here (a sub-type, a transaction
#: code, dates, same-day, IAT addenda ...) send their rows to the models when present.
_RULES: dict[type[RequestModel], dict[str, _Rule]] = {
    AchItem: {
        "firstSignerFirstName": _NAME, "firstSignerLastName": _NAME,
        # ^[0-9]{5}(?:[- ][0-9]{4})?$
        "zip": _Rule("zip", required=True, pattern="- "),
        **_COMMON,
        "achAccountType": _Rule("choice", choices=frozenset(codes.ACH_ACCOUNT_TYPES)),
        # IAT needs its addenda (an error without them, a cross-field rule): the models judge.
        "achEntryClass": _Rule("choice", choices=frozenset(codes.ACH_ENTRY_CLASSES) - {"IAT"}),
        "achTransactionType": _Rule("choice", required=True,
                                    choices=frozenset(rules.ACH_TRANSACTION_TYPES)),
        "address1": _free(), "address2": _free(), "city": _free(),
        "achIdentificationNumber": _free(15), "achCompanyEntryDescription": _free(10),
        "achCompanyDiscretionaryData": _free(20), "achAddendaText": _free(80),
    },
    RccItem: {
        "firstSignerFirstName": _NAME, "firstSignerLastName": _NAME,
        "secondSignerFirstName": _OPTIONAL_NAME, "secondSignerLastName": _OPTIONAL_NAME,
        "address1": _NAME, "address2": _OPTIONAL_NAME, "city": _NAME,
        "zip": _Rule("zip", required=True, pattern=" "),  # ^[0-9]{5}(?: [0-9]{4})?$
        **_COMMON,
    },
}


@dataclass
class CheckedRows:
    """The verdicts of a bulk check: wire bodies of the valid rows, errors of the others
    (per field, as :func:`paynb.models.field_errors` words them), advisories of valid rows."""

    bodies: dict[int, dict[str, Any]]
    errors: dict[int, dict[str, list[str]]]
    advice: list[tuple[int | None, Advisory]]
    #: How many rows the columns vouched for (the rest went through the models).
    fast: int = 0


def _wire_order(model: type[RequestModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def _defaults(model: type[RequestModel], names: Iterable[str]) -> dict[str, Any]:
    """The wire values the model fills in for absent fields (``achAccountType`` Checking)."""
    by_wire = {info.alias or name: info for name, info in model.model_fields.items()}
    return {name: by_wire[name].default for name in names
            if by_wire[name].default is not None and not by_wire[name].is_required()}


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


def _utf8(array: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Each value's byte offsets (``n + 1``, from 0) and the UTF-8 bytes of a string array,
    as NumPy views of its buffers (a null value has no bytes)."""
    import numpy as np

    offsets = np.frombuffer(array.buffers()[1], dtype=np.int32)[
        array.offset:array.offset + len(array) + 1]
    data = array.buffers()[2]
    if data is None or offsets[-1] == offsets[0]:
        return offsets - offsets[0], np.zeros(0, dtype=np.uint8)
    return offsets - offsets[0], np.frombuffer(data, dtype=np.uint8)[offsets[0]:offsets[-1]]


@cache
def _byte_class(characters: str, *, other: bool = False) -> np.ndarray:
    """A table of the 256 byte values: which are one of ``characters`` (ASCII), or with
    ``other`` which are not (every byte of a character beyond ASCII is then in)."""
    import numpy as np

    table = np.zeros(256, dtype=bool)
    table[[ord(c) for c in characters]] = True
    return ~table if other else table


def _counts(data: np.ndarray, offsets: np.ndarray, table: np.ndarray) -> np.ndarray:
    """How many bytes of each value are of ``table``'s class (a sum per value, in C; small
    temporaries, since fresh memory costs its page faults)."""
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
    offsets, data = _utf8(array)
    rows = np.flatnonzero(np.diff(offsets) == 9)
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

    offsets, data = _utf8(array)
    if not len(data):
        return np.zeros(len(array), dtype=bool)
    lengths = np.diff(offsets)
    others = _counts(data, offsets, _byte_class("0123456789", other=True))
    sixth = data[np.minimum(offsets[:-1] + 5, len(data) - 1)]
    plus_four = (lengths == 10) & (others == 1) & _byte_class(separators).take(sixth)
    return ((lengths == 5) & (others == 0)) | plus_four


def _amount_text_ok(array: pa.Array) -> np.ndarray:
    """Which values match ``_AMOUNT_TEXT`` and hold a digit 1-9 (not zero), by their bytes:
    at most 11 (8 digits, a point, 2 decimals), of which digits and at most one point, the
    point (if any) one of the last three bytes with one to eight digits before it."""
    import numpy as np

    offsets, data = _utf8(array)
    if not len(data):
        return np.zeros(len(array), dtype=bool)
    lengths = np.diff(offsets)
    # One sum per value counts three classes at once: 1-9 (units), points (16s), any other
    # byte (256s); exact for values of up to 11 bytes, the only ones that can pass.
    weights = _amount_weights().take(data)
    if lengths.all():
        sums = np.add.reduceat(weights, offsets[:-1], dtype=np.int32)
    else:
        sums = np.zeros(len(array), dtype=np.int32)
        filled = np.flatnonzero(lengths)
        sums[filled] = np.add.reduceat(weights, offsets[filled], dtype=np.int32)
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


def _text_pattern(rule: _Rule) -> str:
    """One regular expression for a text rule: not blank and as ``str.strip()`` leaves it
    (no whitespace at either end), no control characters, at most ``max_length``
    characters (RE2 counts characters, as ``len`` does), no apostrophe in a reference."""
    forbidden = _CONTROL + ("'" if rule.kind == "reference" else "")
    middle = "*" if rule.max_length is None else f"{{0,{rule.max_length - 2}}}"
    return (f"^[^{_SPACE_CLASS}{forbidden}]"
            f"(?:[^{forbidden}]{middle}[^{_SPACE_CLASS}{forbidden}])?$")


def _ascii_text(array: pa.Array, rule: _Rule) -> np.ndarray | None:
    """:func:`_text_pattern` on a column of ASCII text, by its bytes: the values not blank,
    with no space at either end (the other ASCII whitespace is control characters), no
    control character (nor apostrophe in a reference), at most ``max_length`` bytes
    (= characters). ``None`` when some value holds another character: the regular
    expression counts characters and knows Unicode's whitespace."""
    import numpy as np

    offsets, data = _utf8(array)
    lengths = np.diff(offsets)
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


def _vouch(rule: _Rule, values: Sequence[Any]) -> tuple[np.ndarray, np.ndarray]:
    """Rows whose value of this field the fast path vouches for, and the rows that hold a
    value (not ``None``)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(values, _Judged):
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
        offsets, data = _utf8(array)
        lengths = np.diff(offsets)
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


def check_columns(model: type[RequestModel], columns: Mapping[str, Sequence[Any]],
                  usable: np.ndarray, *, present: Mapping[str, np.ndarray] | None = None,
                  lengths: np.ndarray | None = None
                  ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The rows the columns vouch for, and which fields each row has.

    ``columns`` holds the values of the fields the fast path knows, ``usable`` the rows
    that have no other field and no value the columns cannot read. ``present`` says
    which rows have each field (default: the values that are not ``None``); with
    ``lengths`` (the number of keys of each row) a row must have no key beyond them.
    """
    import numpy as np

    fast = usable.copy()
    known = np.zeros(len(fast), dtype=np.int64)
    holds: dict[str, np.ndarray] = {}
    for name, rule in _RULES[model].items():
        if name not in columns:
            if rule.required:
                fast[:] = False
            continue
        ok, has = _vouch(rule, columns[name])
        has = present[name] if present is not None else has
        holds[name] = has
        known += has
        if rule.required:
            fast &= has
        fast &= ok | ~has
    if lengths is not None:
        # A row with any other key (a field the fast path leaves to the models, a misspelt
        # or snake_case name, a None value) is not vouched for: its length gives it away.
        fast &= lengths == known
    return fast, holds


@dataclass(frozen=True)
class _Judged:
    """A field's verdicts found without a column of its values: which rows it vouches for,
    and which hold it."""

    ok: np.ndarray
    present: np.ndarray


def _choices_of_rows(model: type[RequestModel], rows: Sequence[dict[str, Any]],
                     names: list[str]) -> dict[str, _Judged]:
    """The fields of a closed list of values (states, the known spellings of the open sets)
    judged by the distinct combinations of their values: one set of tuples built in C
    instead of a column of text per field; a row's own verdict is looked up only for a
    value off the list. Empty when some row lacks one of them or holds an unhashable value
    (the Arrow columns then judge them)."""
    import numpy as np

    listed = {name: rules.US_STATES if _RULES[model][name].kind == "state"
              else _RULES[model][name].choices
              for name in names if _RULES[model][name].kind in ("state", "choice")}
    if not listed:
        return {}
    get = itemgetter(*listed)
    n = len(rows)
    every = np.ones(n, dtype=bool)
    judged = {}
    try:
        combinations = set(map(get, rows))
        if len(listed) == 1:
            combinations = {(value,) for value in combinations}
        for position, (name, allowed) in enumerate(listed.items()):
            off = {values[position] for values in combinations} - allowed
            ok = every
            if off:
                ok = ~np.fromiter(map(off.__contains__, map(itemgetter(name), rows)),
                                  dtype=bool, count=n)
            judged[name] = _Judged(ok, every)
    except (KeyError, TypeError):  # (TypeError: also a value whose == is no bool, pd.NA)
        return {}
    return judged


def _arrow_columns(model: type[RequestModel], rows: Sequence[dict[str, Any]],
                   lengths: np.ndarray) -> dict[str, pa.Array] | None:
    """The fields the fast path knows, read by Arrow straight from the dicts as text (no
    Python list per column); ``None`` when some value is no text (the lists below then)."""
    import pyarrow as pa

    names = list(_RULES[model])
    if (lengths == len(rows[0])).all():
        # Rows of one size: those with the first row's fields hold nothing else (the
        # others fail the length check of check_columns and go to the models).
        names = [name for name in names if name in rows[0]]
    columns: dict[str, Any] = _choices_of_rows(model, rows, names)
    names = [name for name in names if name not in columns]
    try:
        table = pa.array(rows, type=pa.struct([(name, pa.string()) for name in names]))
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return None
    for name, array in zip(names, table.flatten(), strict=True):
        if array.null_count < len(array):  # a field no row has stays out
            columns[name] = array
    return columns


def _columns_of_rows(model: type[RequestModel], rows: Sequence[Any]
                     ) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    """The columns of the fields the fast path knows (read by Arrow when every row is a dict
    of text values, else lists), the rows it may vouch for (dicts), and each row's number
    of keys."""
    import numpy as np

    n = len(rows)
    if set(map(type, rows)) == {dict}:  # the usual case, at C speed
        lengths = np.fromiter(map(len, rows), dtype=np.int64, count=n)
        read = _arrow_columns(model, rows, lengths)
        if read is not None:
            return read, np.ones(n, dtype=bool), lengths
        usable = np.ones(n, dtype=bool)
        dicts = rows
    else:
        usable = np.fromiter((type(row) is dict for row in rows), dtype=bool, count=n)
        dicts = [row if type(row) is dict else {} for row in rows]
    first = dicts[0]
    lengths = np.fromiter(map(len, dicts), dtype=np.int64, count=n)
    columns: dict[str, list[Any]] = {}
    same_shape = bool((lengths == len(first)).all())
    for name in _RULES[model]:
        if name in first:
            # A field of the first row is read from every row in C; a row without it
            # makes that column take the slower way.
            try:
                columns[name] = list(map(itemgetter(name), dicts))
            except KeyError:
                columns[name] = [row.get(name) for row in dicts]
                same_shape = False
    if not same_shape:
        # Rows of other shapes: the fields no row of the first's shape has.
        for name in _RULES[model]:
            if name not in columns and any(map(dict.__contains__, dicts, repeat(name))):
                columns[name] = [row.get(name) for row in dicts]
    return columns, usable, lengths


def columns_of_frame(model: type[RequestModel], frame: pd.DataFrame
                     ) -> tuple[dict[str, Any], np.ndarray, dict[str, np.ndarray]]:
    """The columns of a DataFrame for :func:`check_columns`: a missing cell is an absent field
    (as ``submit_many`` reads a row), a column named otherwise than a known wire name sends
    the rows that fill it to the models."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    usable = np.ones(len(frame), dtype=bool)
    columns: dict[str, Any] = {}
    present: dict[str, np.ndarray] = {}
    rules_of = _RULES[model]
    for key in frame.columns:
        column = frame[key]
        filled = column.notna().to_numpy()
        if key in rules_of and key not in columns:
            if isinstance(column.dtype, pd.StringDtype) and column.dtype.storage == "pyarrow":
                # Text held by Arrow already (pandas' default str): its array, not a list.
                array = pa.array(column)
                if isinstance(array, pa.ChunkedArray):
                    array = array.combine_chunks()
                columns[key] = array.cast(pa.string())
            else:
                columns[key] = column.tolist()
            present[key] = filled
        else:
            usable &= ~filled
    return columns, usable, present


def _bodies(model: type[RequestModel], rows: Sequence[dict[str, Any]], rows_fast: np.ndarray,
            present: Mapping[str, np.ndarray]) -> dict[int, dict[str, Any]]:
    """The wire bodies of the vouched rows, as ``model(...).to_wire()`` writes them: the row's
    fields in the model's order (a vouched row has no other), the model's defaults for
    absent ones, the amount as the ``Decimal`` the model makes of it."""
    import numpy as np

    order = [name for name in _wire_order(model) if name in present]
    bodies: dict[int, dict[str, Any]] = {}
    index = np.flatnonzero(rows_fast)
    if not len(index):
        return bodies
    # Rows with the same fields present share one key order: one template per group, its
    # values read from each row by one itemgetter (a dict's update keeps the template's order).
    pattern = np.zeros(len(index), dtype=np.int64)
    for bit, name in enumerate(order):
        pattern |= present[name][index].astype(np.int64) << bit
    for code in np.unique(pattern):
        numbers = index[pattern == code].tolist()
        names = [name for bit, name in enumerate(order) if code >> bit & 1]
        defaults = _defaults(model, (n for n in _RULES[model] if n not in names))
        template = {n: defaults.get(n) for n in _wire_order(model)
                    if n in names or n in defaults}
        get = itemgetter(*names, "amount")  # (a tuple even of one name)
        for n, values in zip(numbers, map(get, map(rows.__getitem__, numbers)), strict=True):
            body = template.copy()
            body.update(zip(names, values, strict=False))  # (all but the amount's copy)
            body["amount"] = Decimal(values[-1])
            bodies[n] = body
    return bodies


def _by_model(model: type[RequestModel], rows: Sequence[Any], numbers: Iterable[int],
              result: CheckedRows) -> None:
    """Rows judged one model at a time: what the columns did not vouch for."""
    validate = model.model_validate
    for n in numbers:
        try:
            item = validate(rows[n])
        except PydanticValidationError as exc:
            # A row that is not an object at all is reported under "item".
            result.errors[n] = {"item" if key == "body" else key: messages
                                for key, messages in field_errors(exc).items()}
        else:
            result.bodies[n] = item.to_wire()
            result.advice.extend((n, advisory) for advisory in item.advisories())


def check_rows(model: type[RequestModel], rows: Sequence[Any], *,
               frame_columns: tuple[dict[str, Any], np.ndarray, dict[str, np.ndarray]]
               | None = None, raw_rows: Sequence[Any] | None = None,
               bodies: bool = True) -> CheckedRows:
    """Every row judged as ``model`` judges it alone: bodies, errors per field, advisories.

    Rows are plain dicts with wire names (as ``submit_many`` passes them); anything
    else goes through the model. The result is the same as one
    ``model.model_validate(row)`` per row, faster when most rows are ordinary.
    ``frame_columns`` (from :func:`columns_of_frame`) are the rows' values column by
    column when the caller has them (text columns may be Arrow arrays: only with
    ``bodies=False``); ``rows[n]`` is then read only for the rows the models judge.
    ``raw_rows`` are the rows as given when ``rows`` cleans each one on reading
    (``submit_many``'s reading drops missing values and unwraps NumPy scalars, which
    changes nothing in a row the columns vouch for: text, ``Decimal`` or ``int`` values
    of known fields only). ``bodies=False`` leaves out the wire bodies of the rows
    the columns vouch for (a check that sends nothing does not need them).
    """
    import numpy as np

    result = CheckedRows({}, {}, [])
    if model in _RULES and len(rows):
        if frame_columns is not None:
            assert not bodies, "bodies are built from lists of values, not a frame's columns"
            columns, usable, given = frame_columns
            fast, present = check_columns(model, columns, usable, present=given)
        else:
            columns, usable, lengths = _columns_of_rows(
                model, rows if raw_rows is None else raw_rows)
            fast, present = check_columns(model, columns, usable, lengths=lengths)
        if bodies:
            result.bodies = _bodies(model, rows if raw_rows is None else raw_rows, fast,
                                    present)
        result.fast = int(fast.sum())
        slow = np.flatnonzero(~fast).tolist()
    else:
        slow = range(len(rows))
    _by_model(model, rows, slow, result)
    return result
