"""Reference: ``paynb.frames`` as of commit 680d5ff (before issue 19's column-wise builder).

Kept verbatim, only for tests/test_frames_builder.py, which checks that the library's
builder gives the same frames, bit for bit, as this one on random records. Not used by
paynb itself. Changes since: a return or change code in none of NACHA's tables is
described as ``not a NACHA code paynb knows`` instead of left empty (issue 36); on pyarrow
before 23, whose cast turns a time outside the nanosecond range into a wrong one, such
text takes the slow path, as in paynb.frames, and the account mask joins text of one Arrow
type (issue 47).
"""
from __future__ import annotations

import contextlib
import datetime as dt
import json
import logging
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

import paynb.accessor  # noqa: F401  (df.paynb on every frame, the client's included)
from paynb._coerce import STATUS_BY_NAME
from paynb._pandas_compat import string_dtype
from paynb._redact import hide_numbers
from paynb.codes import (
    ACH_ACCOUNT_TYPES,
    ACH_ENTRY_CLASSES,
    ACH_TRANSACTION_CODES,
    ACH_TRANSACTION_SUBTYPES,
    NOC_CODES,
    RETURN_CODES,
    STATUS_NAMES,
    STATUS_ORDER,
    UNKNOWN_CODE,
)
from paynb.errors import ResponseFormatError
from paynb.frames._columns import _CAST_CHECKS_RANGE, _years_within_nanoseconds

__all__ = [
    "CARD_BRANDS",
    "INSTANT_AMOUNT_UNIT",
    "INSTANT_STATUSES",
    "KINDS",
    "camel_case",
    "empty_frame",
    "extract_record",
    "extract_records",
    "list_metadata",
    "to_frame",
]

logger = logging.getLogger("paynb.frames")

INSTANT_STATUSES: tuple[str, ...] = ("Success", "Failed")
"""Statuses of instant card and RTP transactions, in the order of the categorical."""
CARD_BRANDS: tuple[str, ...] = ("Visa", "Mastercard", "Discover", "American Express")
"""Card brands of instant card transactions, in the order of the ``cardBrand`` categorical."""

#: Keys under which an answer may hold its list of records (compared lower-cased).
_LIST_KEYS = (
    "transactions", "items", "data", "results", "result", "value", "values", "records",
    "rows", "nocs", "achnocs", "content", "entries", "elements", "list", "payload",
    "achtransactions", "rcctransactions", "instanttransactions", "instantrtptransactions",
)
#: Keys under which an answer may hold one record.
_SINGLE_KEYS = ("transaction", "item", "data", "record", "result", "value", "noc", "payload")
#: A mapping holding one of these (normalised) names is a record, not an envelope.
_RECORD_MARKERS = frozenset({
    "achitemid", "rccitemid", "uniqueid", "nocid", "itemid", "itemstatus",
    "yourreferencenumber", "changecode",
})
_SNIPPET_LENGTH = 200


# --------------------------------------------------------------------------- names

def camel_case(name: str) -> str:
    """The camelCase spelling of a field name: ``ItemStatus``, ``item_status`` and
    ``ITEM_STATUS`` -> ``itemStatus``, ``ACHItemId`` -> ``achItemId``, ``ID`` -> ``id``.

    A name paynb knows (any field of any kind) gets the service's exact spelling
    whatever its casing (``ACHITEMID`` -> ``achItemId``).
    """
    known = _KNOWN_NAMES.get(_fold(name))
    if known is not None:
        return known
    parts = [part for part in re.split(r"[\s_\-]+", name.strip()) if part]
    if not parts:
        return name
    if len(parts) > 1:
        return parts[0].lower() + "".join(p[:1].upper() + p[1:].lower() for p in parts[1:])
    word = parts[0]
    if word.isupper():
        return word.lower()
    leading = re.match(r"[A-Z]+", word)
    if leading is None:
        return word
    run = leading.end()
    # "ACHItemId": the last capital of a run starts the next word.
    cut = run if run == 1 else run - 1
    return word[:cut].lower() + word[cut:]


def _fold(name: str) -> str:
    return re.sub(r"[\s_\-]", "", name).lower()


# --------------------------------------------------------------------------- envelopes

def _snippet(body: Any) -> str:
    if isinstance(body, bytes | bytearray):
        text = bytes(body[: _SNIPPET_LENGTH * 4]).decode("utf-8", errors="replace")
    elif isinstance(body, str):
        text = body[: _SNIPPET_LENGTH * 4]
    else:
        try:
            text = json.dumps(body, default=str)[: _SNIPPET_LENGTH * 4]
        except (TypeError, ValueError):
            text = repr(body)[: _SNIPPET_LENGTH * 4]
    text = hide_numbers(" ".join(text.split()))
    return text if len(text) <= _SNIPPET_LENGTH else text[:_SNIPPET_LENGTH] + "..."


def _format_error(why: str, body: Any, method: str | None, path: str | None
                  ) -> ResponseFormatError:
    where = " ".join(part for part in (method, path) if part)
    prefix = f"{where}: " if where else ""
    return ResponseFormatError(f"{prefix}{why}; the answer began: {_snippet(body)!r}")


def _decode(body: Any, method: str | None, path: str | None) -> Any:
    if isinstance(body, bytes | bytearray | str):
        if not (body.strip() if isinstance(body, str) else bytes(body).strip()):
            return None
        try:
            return json.loads(body)
        except ValueError:
            raise _format_error("the answer is not JSON", body, method, path) from None
    return body


def _looks_like_record(obj: Mapping[str, Any]) -> bool:
    return any(isinstance(key, str) and _fold(key) in _RECORD_MARKERS for key in obj)


def _lower_keys(obj: Mapping[str, Any]) -> dict[str, str]:
    return {key.lower(): key for key in obj if isinstance(key, str)}


def _records_in(obj: Any, depth: int = 0) -> list[dict[str, Any]] | None:
    """The records held by ``obj``, or None when it holds no recognisable records."""
    if isinstance(obj, list):
        if all(isinstance(item, dict) for item in obj):
            return obj
        return None
    if not isinstance(obj, dict):
        return None
    keys = _lower_keys(obj)
    for key in _LIST_KEYS:
        if key not in keys:
            continue
        value = obj[keys[key]]
        if value is None:
            return []
        if isinstance(value, list) or (isinstance(value, dict) and depth < 2):
            found = _records_in(value, depth + 1)
            if found is not None:
                return found
    for key in _SINGLE_KEYS:
        value = obj.get(keys.get(key, "\0"))
        if isinstance(value, dict) and _looks_like_record(value):
            return [value]
    if _looks_like_record(obj):
        return [obj]
    # An unknown envelope key: accept it when exactly one value is a list of records.
    lists = [v for v in obj.values() if isinstance(v, list) and v
             and all(isinstance(item, dict) for item in v)]
    if len(lists) == 1:
        return lists[0]
    # {"total": 0} and the like: an empty list whose key was left out.
    counts = [obj[keys[k]] for k in ("total", "count", "totalcount") if k in keys]
    if counts and all(c == 0 for c in counts) and not lists:
        return []
    return None


def extract_records(body: Any, *, method: str | None = None, path: str | None = None
                    ) -> list[dict[str, Any]]:
    """The records of a list answer (or of any answer holding records).

    ``body`` is the decoded JSON (or its text or bytes). Accepted: a bare array; an
    object with the records under ``transactions``, ``items``, ``data``,
    ``results``, ``value``, ``records``, ``rows``, ``nocs``, ``achNocs`` ... in any
    casing (also one level deeper, like ``{"data": {"items": [...]}}``); a single
    record, bare or wrapped (``transaction``, ``item``, ``data``); an empty
    answer or ``{"total": 0}`` (no records).

    ``method`` and ``path`` only name the request in the error message.

    Raises:
        ResponseFormatError: the answer holds no recognisable records; the message
            quotes its first 200 characters with long digit runs and secrets masked.
    """
    data = _decode(body, method, path)
    if data is None:
        return []
    records = _records_in(data)
    if records is None:
        raise _format_error("no records found in the answer", body, method, path)
    return records


def extract_record(body: Any, *, method: str | None = None, path: str | None = None
                   ) -> dict[str, Any]:
    """The single record of an answer about one item (get, submit, void).

    Accepted: a bare record; a record wrapped in ``transaction``, ``item``,
    ``data``, ``record`` ... (any casing); a list or envelope holding exactly one.

    Raises:
        ResponseFormatError: no record, or more than one; the message quotes the
            start of the answer (masked).
    """
    data = _decode(body, method, path)
    if isinstance(data, dict):
        keys = _lower_keys(data)
        for key in _SINGLE_KEYS:
            value = data.get(keys.get(key, "\0"))
            if isinstance(value, dict):
                return value
        if _looks_like_record(data):
            return data
    records = _records_in(data) if data is not None else None
    if records is not None and len(records) == 1:
        return records[0]
    why = "no record found in the answer" if not records else (
        f"expected one record, the answer holds {len(records)}")
    raise _format_error(why, body, method, path)


def list_metadata(body: Any) -> dict[str, Any]:
    """The scalar fields beside the records of a list answer, named in camelCase.

    For the service's lists that is ``{"total": int, "creditAmount": Decimal,
    "debitAmount": Decimal}``; bulk answers add ``validCount`` and
    ``invalidCount``. Fields that are absent are absent from the result (a bare
    array gives ``{}``). Counts become ``int``, amounts exact ``Decimal``.
    """
    data = _decode(body, None, None)
    if not isinstance(data, dict):
        return {}
    meta: dict[str, Any] = {}
    for key, value in data.items():
        if not isinstance(key, str) or isinstance(value, list | dict):
            continue
        name = camel_case(key)
        if value is not None and name.lower().endswith("amount"):
            value = _to_decimal(value)
        elif (value is not None and (name.lower().endswith("count") or name == "total")
              and not isinstance(value, bool)):
            with contextlib.suppress(TypeError, ValueError):
                value = int(value)
        meta[name] = value
    return meta


# --------------------------------------------------------------------------- columns

_STRING_DTYPE = string_dtype()  # pandas' default "str" dtype
_UTC_NS = pd.DatetimeTZDtype("ns", "UTC")
_MIN_TIME = pd.Timestamp.min.tz_localize("UTC")
_MAX_TIME = pd.Timestamp.max.tz_localize("UTC")
_AMOUNT_TYPE = pa.decimal128(18, 2)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def _strings(values: Sequence[Any]) -> pd.api.extensions.ExtensionArray:
    try:
        return pd.array(values, dtype=_STRING_DTYPE)
    except (TypeError, ValueError):
        # Numbers among strings (a zip sent as 12345): pandas writes them as text.
        return pd.array([None if _missing(v) else str(v) for v in values], dtype=_STRING_DTYPE)


def _arrow(strings: pd.api.extensions.ExtensionArray) -> pa.Array:
    return pa.array(strings, pa.string(), from_pandas=True)


def _from_arrow(array: pa.Array | pa.ChunkedArray) -> pd.api.extensions.ExtensionArray:
    return pd.array(array, dtype=_STRING_DTYPE)


def _ids(name: str, values: Sequence[Any]) -> pd.api.extensions.ExtensionArray:
    try:
        with np.errstate(invalid="ignore"):  # pandas checks the cast itself and raises
            return pd.array(values, dtype="Int64")
    except (TypeError, ValueError, OverflowError):
        pass
    # Ids as text ("22"), or floats from an export (22.0).
    numbers = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
    present = np.array([not _missing(v) and v != "" for v in values], dtype=bool)
    integral = numbers.notna().to_numpy() & (numbers.fillna(0) % 1 == 0).to_numpy()
    if not (present & ~integral).any():
        try:
            with np.errstate(invalid="ignore"):
                return pd.array(numbers.where(integral, None), dtype="Int64")
        except (TypeError, ValueError, OverflowError):
            pass
    logger.warning("column %s holds ids that are not 64-bit integers; kept as text", name)
    return _strings(values)


def _to_decimal(value: Any) -> Decimal | None:
    if _missing(value):
        return None
    if isinstance(value, Decimal):
        return value
    if isinstance(value, float):
        # repr() is the shortest text that reads back as this float: the JSON text.
        return Decimal(repr(value))
    if isinstance(value, bool):
        raise InvalidOperation
    if isinstance(value, int):
        return Decimal(value)
    text = str(value).strip().replace(",", "").replace("$", "")
    return Decimal(text) if text else None


def _decimal_from_cents(units: np.ndarray, valid: np.ndarray, precision: int, scale: int
                        ) -> pa.Array:
    """A decimal128 array from int64 counts of 10**-scale (two's complement 128 bit)."""
    words = np.empty(2 * len(units), dtype="<i8")
    words[0::2] = units
    words[1::2] = units >> 63
    validity = None if valid.all() else pa.array(valid).buffers()[1]
    return pa.Array.from_buffers(pa.decimal128(precision, scale), len(units),
                                 [validity, pa.py_buffer(words)])


def _float_amounts(values: np.ndarray, missing: np.ndarray) -> pa.Array | None:
    floats = np.where(missing, np.nan, values).astype("float64")
    valid = ~np.isnan(floats)
    finite = floats[valid]
    if np.abs(finite).max(initial=0) >= 1e13:
        return None
    for scale in range(2, 10):
        factor = 10.0 ** scale
        units = np.round(floats * factor)
        # Exact test: the float nearest the decimal with `scale` places is the value.
        if np.array_equal(units[valid] / factor, finite):
            if np.abs(units[valid]).max(initial=0) >= 2.0 ** 62:
                return None
            units = np.where(valid, units, 0).astype("int64")
            return _decimal_from_cents(units, valid, 18 if scale == 2 else 16 + scale, scale)
    return None


def _general_amounts(name: str, values: Sequence[Any]) -> pa.Array:
    """Any mix of numbers, texts and Decimals, one by one (the rare, slow path)."""
    decimals: list[Decimal | None] = []
    unreadable = 0
    for value in values:
        try:
            number = _to_decimal(value)
        except (InvalidOperation, ValueError):
            number = None
        if number is not None and (not number.is_finite() or number.adjusted() >= 36):
            number = None  # beyond what a decimal128 column holds
        if number is None and not _missing(value) and value != "":
            unreadable += 1
        decimals.append(number)
    if unreadable:
        logger.warning("column %s: %d values are not amounts; left empty", name, unreadable)
    present = [d for d in decimals if d is not None]
    digits = max([1, *(d.adjusted() + 1 for d in present)])
    # Never round: as many decimals as the data has, within decimal128's 38 digits.
    scale = min(max([2, *(-d.as_tuple().exponent for d in present)]), 38 - digits)
    if scale > 2:
        logger.warning("column %s has amounts with %d decimals: kept exact at that scale",
                       name, scale)
    precision = min(38, max(18, 16 + scale, digits + scale))
    step = Decimal(1).scaleb(-scale)
    with localcontext() as context:
        context.prec = 40
        return pa.array([None if d is None else d.quantize(step) for d in decimals],
                        pa.decimal128(precision, scale))


def _amounts(name: str, values: Sequence[Any]) -> pd.api.extensions.ExtensionArray:
    """Exact amounts: decimal128(18, 2), or a wider scale when the data needs it."""
    array: pa.Array | None = None
    values = np.asarray(values, dtype=object)
    missing = pd.isna(values)
    kinds = set(map(type, values[~missing]))
    if not len(values):
        array = pa.array([], _AMOUNT_TYPE)
    elif kinds <= {float, int}:
        array = _float_amounts(values, missing)
        if array is not None and array.type.scale > 2:
            logger.warning("column %s has amounts with %d decimals: kept exact at that scale",
                           name, array.type.scale)
    elif kinds <= {str}:
        try:
            array = pa.array(values, pa.string(), from_pandas=True).cast(_AMOUNT_TYPE)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            array = None
    elif kinds <= {Decimal}:
        try:
            array = pa.array(values, _AMOUNT_TYPE, from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError):
            array = None
    if array is None:
        array = _general_amounts(name, values)
    return pd.arrays.ArrowExtensionArray(array)


def _arrow_timestamps(values: Sequence[Any]) -> pd.Series | None:
    """The fast path: texts that all carry a zone (``...Z``), or that all lack one."""
    try:
        text = pa.array(values, pa.string(), from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    present = text.drop_null()
    if not _CAST_CHECKS_RANGE and present and not _years_within_nanoseconds(present):
        return None
    for target in (pa.timestamp("ns", tz="UTC"), pa.timestamp("ns")):
        try:
            stamps = text.cast(target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
        series = stamps.to_pandas()
        return series if target.tz else series.dt.tz_localize("UTC")
    return None


def _parse_timestamps(values: Sequence[Any]) -> tuple[pd.Series, int]:
    """UTC timestamps, and how many present values could not be read as one."""
    parsed = _arrow_timestamps(values)
    if parsed is not None:
        return parsed, 0
    # Mixed forms, Timestamp objects, or text that is not a timestamp at all.
    series = pd.Series(values, dtype=object)
    readable = series.map(lambda value: isinstance(value, str | dt.date))  # not numbers
    parsed = pd.to_datetime(series.where(readable, None), format="ISO8601", utc=True,
                            errors="coerce")
    # Nanoseconds reach 1677-2262 only; .NET's "no date" 0001-01-01 lies outside.
    parsed = parsed.where((parsed >= _MIN_TIME) & (parsed <= _MAX_TIME))
    return parsed, int(series.notna().sum() - parsed.notna().sum())


def _dated(name: str, parsed: pd.Series) -> pd.api.extensions.ExtensionArray:
    """A column of UTC timestamps as paynb keeps it since issue 32: every instant as sent,
    ``datetime64[ns, UTC]``, printing as dates where all are midnight."""
    from paynb.frames import UtcInstants

    return UtcInstants.of(parsed.astype(_UTC_NS).array)


def _timestamps(name: str, values: Sequence[Any]) -> pd.api.extensions.ExtensionArray:
    """UTC timestamps from ISO 8601 text (``...Z``, zone-less = UTC, date-only, offsets);
    dates for the fields that are dates (:func:`_dated`)."""
    parsed, lost = _parse_timestamps(values)
    if lost:
        logger.warning("column %s: %d values are not ISO 8601 timestamps between 1677 "
                       "and 2262; left empty", name, lost)
    return _dated(name, parsed)


def _lookup(codes: pd.api.extensions.ExtensionArray, table: Mapping[str, str]
            ) -> pd.api.extensions.ExtensionArray:
    """Meanings of codes (R01, C05 ...) through their distinct values only: fast on 1M rows."""
    positions, uniques = pd.factorize(codes)
    meanings = np.array([table.get(str(code).strip().upper()) for code in uniques] + [None],
                        dtype=object)
    return pd.array(meanings[positions], dtype=_STRING_DTYPE)


def _categorical(name: str, values: Sequence[Any], known: Sequence[str],
                 normalise: Callable[[Any], str | None], *, ordered: bool,
                 warn: bool = True) -> pd.Categorical:
    """A categorical over ``known``; other values are appended as extra categories
    (with a warning when ``warn``: an unknown status matters, a new card brand does not)."""
    try:
        positions, uniques = pd.factorize(pd.Series(values, dtype=object))
    except TypeError:  # a list or an object where a code belongs: compare its text
        positions, uniques = pd.factorize(pd.Series(
            [v if _missing(v) else str(v) for v in values], dtype=object))
    normalised = [normalise(value) for value in uniques]
    extra = sorted({v for v in normalised if v is not None} - set(known))
    if extra and warn:
        logger.warning("column %s holds values paynb does not know: %s (kept)", name,
                       ", ".join(extra))
    categories = [*known, *extra]
    index = {value: i for i, value in enumerate(categories)}
    remap = np.array([index[v] if v is not None else -1 for v in normalised] + [-1],
                     dtype="int64")
    return pd.Categorical.from_codes(remap[positions], categories=categories, ordered=ordered)


def _status_code(value: Any) -> str | None:
    if _missing(value):
        return None
    text = str(value).strip()
    if not text:
        return None
    return STATUS_BY_NAME.get(text.lower(), text.upper() if len(text) <= 2 else text)


def _instant_status(value: Any) -> str | None:
    if _missing(value):
        return None
    text = str(value).strip()
    for known in INSTANT_STATUSES:
        if text.lower() == known.lower():
            return known
    return text or None


_BRAND_BY_NAME = {brand.lower(): brand for brand in CARD_BRANDS} | {"amex": "American Express"}


def _card_brand(value: Any) -> str | None:
    if _missing(value):
        return None
    text = str(value).strip()
    return _BRAND_BY_NAME.get(text.lower(), text) or None


def _mask_accounts(strings: pd.api.extensions.ExtensionArray) -> pd.api.extensions.ExtensionArray:
    array = pc.utf8_trim_whitespace(_arrow(strings))
    # Scalars of the array's own type: pyarrow before 16 joins no string with large_string.
    stars, empty = pa.scalar("****", array.type), pa.scalar("", array.type)
    masked = pc.binary_join_element_wise(stars, pc.utf8_slice_codeunits(array, -4), empty)
    short = pc.less_equal(pc.utf8_length(array), 4)
    return _from_arrow(pc.if_else(short, stars, masked))


def _last_four(strings: pd.api.extensions.ExtensionArray) -> pd.api.extensions.ExtensionArray:
    digits = pc.replace_substring_regex(_arrow(strings), r"\D", "")
    return _from_arrow(pc.utf8_slice_codeunits(digits, -4))


# --------------------------------------------------------------------------- field converters
# Each converter takes (name, raw columns by canonical name, context) and returns the
# output columns in order: the field itself, then what is derived from it.

Columns = dict[str, Any]


class _Context:
    def __init__(self, n: int, mask: bool):
        self.n = n
        self.mask = mask

    def nulls(self) -> list[None]:
        return [None] * self.n


def _get(raw: Columns, name: str, ctx: _Context) -> Sequence[Any]:
    values = raw.get(name)
    return ctx.nulls() if values is None else values


def _conv_str(name: str, raw: Columns, ctx: _Context) -> Columns:
    return {name: _strings(_get(raw, name, ctx))}


def _conv_id(name: str, raw: Columns, ctx: _Context) -> Columns:
    return {name: _ids(name, _get(raw, name, ctx))}


def _conv_amount(name: str, raw: Columns, ctx: _Context) -> Columns:
    return {name: _amounts(name, _get(raw, name, ctx))}


INSTANT_AMOUNT_UNIT = ("the service's own whole-number unit, not stated by the spec "
                       "(cents or dollars); the wire integer, unconverted")
"""What ``df.attrs["amountUnit"]`` says of instant card and RTP amounts."""


def _conv_wire_integer(name: str, raw: Columns, ctx: _Context) -> Columns:
    """Instant and RTP amounts: the wire integer as nullable ``Int64`` (their unit is not
    stated, so they are not shown as dollars); exact decimals, with a warning, should the
    service send fractions."""
    values = _get(raw, name, ctx)
    numbers = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
    present = np.array([not _missing(v) and v != "" for v in values], dtype=bool)
    whole = numbers.notna().to_numpy() & (numbers.fillna(0) % 1 == 0).to_numpy()
    if not (present & ~whole).any() and not (numbers.abs() >= 2.0 ** 63).any():
        return {name: _ids(name, values)}
    logger.warning("column %s holds amounts that are not whole numbers; kept as exact "
                   "decimals (instant amounts are whole numbers in the spec)", name)
    return {name: _amounts(name, values)}


def _conv_time(name: str, raw: Columns, ctx: _Context) -> Columns:
    return {name: _timestamps(name, _get(raw, name, ctx))}


def _conv_account(name: str, raw: Columns, ctx: _Context) -> Columns:
    strings = _strings(_get(raw, name, ctx))
    return {name: _mask_accounts(strings) if ctx.mask else strings}


def _conv_item_status(name: str, raw: Columns, ctx: _Context) -> Columns:
    status = _categorical(name, _get(raw, name, ctx), STATUS_ORDER, _status_code, ordered=True)
    names = [STATUS_NAMES[code] for code in STATUS_ORDER]
    codes = np.where(status.codes < len(names), status.codes, -1)
    return {
        name: status,
        "itemStatusName": pd.Categorical.from_codes(codes, categories=names, ordered=True),
    }


def _conv_instant_status(name: str, raw: Columns, ctx: _Context) -> Columns:
    return {name: _categorical(name, _get(raw, name, ctx), INSTANT_STATUSES, _instant_status,
                               ordered=False)}


def _conv_card_brand(name: str, raw: Columns, ctx: _Context) -> Columns:
    return {name: _categorical(name, _get(raw, name, ctx), CARD_BRANDS, _card_brand,
                               ordered=False, warn=False)}


_TRUE = frozenset({"true", "t", "yes", "y", "1"})
_FALSE = frozenset({"false", "f", "no", "n", "0"})


def _flag(value: Any) -> bool | None:
    if _missing(value) or value is pd.NA:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    return True if text in _TRUE else False if text in _FALSE else None


def _conv_bool(name: str, raw: Columns, ctx: _Context) -> Columns:
    """A flag as pandas' nullable ``boolean`` (JSON true/false, or an export's text)."""
    values = _get(raw, name, ctx)
    try:
        return {name: pd.array(values, dtype="boolean")}
    except (TypeError, ValueError):
        flags = [_flag(value) for value in values]
        unreadable = sum(1 for v, f in zip(values, flags, strict=True)
                         if f is None and not _missing(v) and v != "")
        if unreadable:
            logger.warning("column %s: %d values are not true or false; left empty", name,
                           unreadable)
        return {name: pd.array(flags, dtype="boolean")}


def _open_code(value: Any) -> str | None:
    """A code of an open set as sent; blank (the docs' sub-type ``" "``) is absent."""
    if _missing(value):
        return None
    return str(value).strip() or None


def _open_set(known: Mapping[str, str], *, described: str | None = None
              ) -> Callable[[str, Columns, _Context], Columns]:
    """A converter to a categorical over the ``known`` codes (others appended, no warning:
    the set is open), with their meanings in the column ``described`` when given."""
    def convert(name: str, raw: Columns, ctx: _Context) -> Columns:
        codes = _categorical(name, _get(raw, name, ctx), tuple(known), _open_code,
                             ordered=False, warn=False)
        out: Columns = {name: codes}
        if described:
            out[described] = _lookup(pd.array(codes.astype(object), dtype=_STRING_DTYPE),
                                     {k.upper(): v for k, v in known.items()})
        return out

    return convert


def _conv_transaction_code(name: str, raw: Columns, ctx: _Context) -> Columns:
    codes = _ids(name, _get(raw, name, ctx))
    meanings = {str(code): meaning for code, meaning in ACH_TRANSACTION_CODES.items()}
    return {name: codes, "achTransactionCodeDescription": _lookup(
        pd.array([None if pd.isna(c) else str(c) for c in codes], dtype=_STRING_DTYPE),
        meanings)}


class _KnownOrNot(dict):  # type: ignore[type-arg]
    """A code table whose ``get`` of a code in no table (not blank) is ``UNKNOWN_CODE``."""

    def get(self, key: Any, default: Any = None) -> Any:
        return super().get(key, UNKNOWN_CODE if str(key).strip() else default)


def _conv_return_reason(name: str, raw: Columns, ctx: _Context) -> Columns:
    codes = _strings(_get(raw, name, ctx))
    return {name: codes, "returnReasonDescription": _lookup(codes, _KnownOrNot(RETURN_CODES))}


def _conv_change_code(name: str, raw: Columns, ctx: _Context) -> Columns:
    codes = _strings(_get(raw, name, ctx))
    given = _strings(_get(raw, "changeReason", ctx))
    reasons = pd.Series(given).fillna(pd.Series(_lookup(codes, _KnownOrNot(NOC_CODES)))).array
    return {name: codes, "changeReason": reasons}


#: NOC codes whose corrected data holds an account number (NACHA): C01, C03, C06, C07.
_ACCOUNT_NOCS = frozenset({"C01", "C03", "C06", "C07"})
_ROUTING_FIRST_NOCS = frozenset({"C03", "C07"})
_DIGIT_RUN = re.compile(r"\d{5,}")


def _mask_corrected(code: Any, data: Any) -> Any:
    if _missing(data) or _missing(code) or str(code).strip().upper() not in _ACCOUNT_NOCS:
        return data
    text = str(data)
    routing = str(code).strip().upper() in _ROUTING_FIRST_NOCS
    seen = 0

    def mask(match: re.Match[str]) -> str:
        nonlocal seen
        seen += 1
        run = match.group()
        if routing and seen == 1 and len(run) == 9:
            return run  # the corrected routing number is no secret
        return "****" + run[-4:]

    return _DIGIT_RUN.sub(mask, text)


def _conv_corrected_data(name: str, raw: Columns, ctx: _Context) -> Columns:
    values = _get(raw, name, ctx)
    if ctx.mask:
        codes = _get(raw, "changeCode", ctx)
        # NOCs are few; a loop over them is cheap.
        values = [_mask_corrected(c, v) for c, v in zip(codes, values, strict=True)]
    return {name: _strings(values)}


def _conv_card(name: str, raw: Columns, ctx: _Context) -> Columns:
    given = _last_four(_strings(_get(raw, "cardLastFour", ctx)))
    if "cardNumber" in raw:
        derived = _last_four(_strings(raw["cardNumber"]))
        given = pd.Series(given).fillna(pd.Series(derived)).array
    return {"cardLastFour": given}


_TIME_SUFFIXES = ("date", "datetime", "time", "timestamp")


def _conv_extra(name: str, raw: Columns, ctx: _Context) -> Columns:
    """A field paynb does not know: kept, typed from its values."""
    values = raw[name]
    folded = name.lower()
    if folded.endswith("accountnumber"):
        return _conv_account(name, raw, ctx)
    inferred = pd.api.types.infer_dtype(values, skipna=True)
    if inferred == "integer":
        return {name: _ids(name, values)}
    if inferred in ("floating", "mixed-integer-float", "decimal") and folded.endswith("amount"):
        return {name: _amounts(name, values)}
    if inferred == "floating":
        return {name: pd.Series(values, dtype=object).astype("float64").to_numpy()}
    if inferred == "boolean":
        return {name: pd.array(values, dtype="boolean")}
    if inferred == "string":
        if folded.endswith(_TIME_SUFFIXES) or name.endswith("At"):
            parsed, lost = _parse_timestamps(values)
            if not lost:  # a date only when every value is one
                return {name: _dated(name, parsed)}
        return {name: _strings(values)}
    return {name: _objects(values)}


def _conv_object(name: str, raw: Columns, ctx: _Context) -> Columns:
    """A nested object (``iatAddenda``) kept as sent, one dict per row."""
    return {name: _objects(_get(raw, name, ctx))}


def _objects(values: Sequence[Any]) -> np.ndarray:
    """An object column kept as sent (lists and dicts stay one value per row)."""
    array = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        array[i] = value
    return array


# --------------------------------------------------------------------------- schemas

_COMMON_TAIL: list[tuple[str, Callable[..., Columns]]] = [
    ("amount", _conv_amount),
]
_STATUS_FIELDS: list[tuple[str, Callable[..., Columns]]] = [
    ("itemStatus", _conv_item_status),
    ("itemStatusDescription", _conv_str),
    ("returnDate", _conv_time),
    ("returnReason", _conv_return_reason),
    ("returnMessage", _conv_str),
]
_INSTANT_TAIL: list[tuple[str, Callable[..., Columns]]] = [
    ("amount", _conv_wire_integer),
    ("status", _conv_instant_status),
    ("statusCode", _conv_str),
    ("statusDescription", _conv_str),
    ("receivedDateTime", _conv_time),
    ("completedDateTime", _conv_time),
]

_SCHEMAS: dict[str, list[tuple[str, Callable[..., Columns]]]] = {
    "ach": [
        ("achItemId", _conv_id), ("companyCode", _conv_str), ("yourReferenceNumber", _conv_str),
        ("firstSignerFirstName", _conv_str), ("firstSignerLastName", _conv_str),
        ("state", _conv_str), ("zip", _conv_str), ("bankRoutingNumber", _conv_str),
        ("bankAccountNumber", _conv_account), *_COMMON_TAIL,
        ("achAccountType", _open_set(ACH_ACCOUNT_TYPES)),
        ("achTransactionType", _conv_str),
        ("achTransactionSubType", _open_set(ACH_TRANSACTION_SUBTYPES)),
        ("achEntryClass", _open_set(ACH_ENTRY_CLASSES, described="achEntryClassDescription")),
        *_STATUS_FIELDS,
        ("receivedDateTime", _conv_time), ("sendDate", _conv_time), ("settleDate", _conv_time),
        # The rest of the service's documented ACH record (real-service.md), in its order.
        ("flexBatchId", _conv_str), ("merchantId", _conv_id),
        ("address1", _conv_str), ("address2", _conv_str), ("city", _conv_str),
        ("countryCode", _conv_str), ("itemSource", _conv_str), ("returnItemId", _conv_id),
        ("reportStatus", _conv_str), ("achEffectiveDate", _conv_time),
        ("depositDateTime", _conv_time), ("apiReportDateTime", _conv_time),
        ("bankId", _conv_id), ("achTransactionCode", _conv_transaction_code),
        ("achPaymentTypeCode", _conv_str), ("achCheckNumber", _conv_id),
        ("achIdentificationNumber", _conv_str), ("achCompanyEntryDescription", _conv_str),
        ("achCompanyDiscretionaryData", _conv_str),
        ("achTransactionDiscretionaryData", _conv_str), ("achAddendaText", _conv_str),
        ("sameDayAchRequested", _conv_bool), ("returnFileName", _conv_str),
        ("settlementReportFileName", _conv_str), ("returnReportFileName", _conv_str),
        ("iatAddenda", _conv_object), ("requestedSendDate", _conv_time),
        ("requestedAchEffectiveDate", _conv_time),
    ],
    "rcc": [
        ("rccItemId", _conv_id), ("companyCode", _conv_str), ("yourReferenceNumber", _conv_str),
        ("firstSignerFirstName", _conv_str), ("firstSignerLastName", _conv_str),
        ("secondSignerFirstName", _conv_str), ("secondSignerLastName", _conv_str),
        ("address1", _conv_str), ("address2", _conv_str), ("city", _conv_str),
        ("state", _conv_str), ("zip", _conv_str), ("bankRoutingNumber", _conv_str),
        ("bankAccountNumber", _conv_account), *_COMMON_TAIL,
        *_STATUS_FIELDS,
        ("depositDateTime", _conv_time), ("receivedDateTime", _conv_time),
        ("sendDate", _conv_time), ("settleDate", _conv_time),
        # The rest of the service's documented RCC record (real-service.md).
        ("flexBatchId", _conv_str), ("bankName", _conv_str), ("bankCity", _conv_str),
        ("bankState", _conv_str), ("bankZip", _conv_str), ("checkNumber", _conv_id),
        ("checkDate", _conv_time), ("payeeName", _conv_str),
        ("payeeAccountNumber", _conv_account), ("payeePhone", _conv_str),
        ("itemSource", _conv_str), ("returnItemId", _conv_id), ("reportStatus", _conv_str),
        ("bankId", _conv_id), ("apiReportDateTime", _conv_time),
    ],
    "instant": [
        ("uniqueId", _conv_str), ("companyCode", _conv_str), ("yourReferenceNumber", _conv_str),
        ("nameOnCard", _conv_str), ("cardBrand", _conv_card_brand), ("cardLastFour", _conv_card),
        *_INSTANT_TAIL,
    ],
    "rtp": [
        ("uniqueId", _conv_str), ("companyCode", _conv_str), ("yourReferenceNumber", _conv_str),
        ("name", _conv_str), ("firstName", _conv_str), ("lastName", _conv_str),
        ("routingNumber", _conv_str), ("accountNumber", _conv_account), *_INSTANT_TAIL,
        # A request for return of the payment (real-service.md's RTP record).
        ("requestReturnReceivedDateTime", _conv_time),
        ("requestReturnCompletedDateTime", _conv_time),
        ("requestReturnStatus", _conv_instant_status),
        ("requestReturnStatusCode", _conv_str), ("requestReturnStatusDescription", _conv_str),
    ],
    "noc": [
        ("nocId", _conv_id), ("achItemId", _conv_id), ("companyCode", _conv_str),
        ("yourReferenceNumber", _conv_str), ("changeCode", _conv_change_code),
        ("correctedData", _conv_corrected_data), ("nocDate", _conv_time),
    ],
}
#: Kinds whose ``amount`` is the wire integer in an unstated unit.
_WIRE_INTEGER_KINDS = frozenset({"instant", "rtp"})
_KIND_ALIASES = {"nocs": "noc", "achnoc": "noc", "achnocs": "noc", "card": "instant",
                 "instantrtp": "rtp"}
KINDS: tuple[str, ...] = tuple(_SCHEMAS)
"""The item kinds :func:`to_frame` knows."""

#: Field names that other spellings fold onto, per kind, when the canonical one is absent.
_FIELD_ALIASES: dict[str, dict[str, str]] = {
    "ach": {"itemid": "achItemId", "id": "achItemId", "status": "itemStatus"},
    "rcc": {"itemid": "rccItemId", "id": "rccItemId", "status": "itemStatus"},
    "instant": {"id": "uniqueId", "cardnumberlastfour": "cardLastFour", "last4": "cardLastFour"},
    "rtp": {"id": "uniqueId"},
    "noc": {"id": "nocId", "itemid": "achItemId"},
}
#: Fields whose converter reads other fields too (so their column is not empty just
#: because the field itself is absent).
_USES_OTHER_FIELDS = frozenset({"cardLastFour", "changeCode", "correctedData"})
#: Fields that a converter of another field writes; they are not converted on their own.
_CONSUMED = {"itemStatusName", "returnReasonDescription", "changeReason", "cardNumber",
             "achEntryClassDescription", "achTransactionCodeDescription"}

_KNOWN_NAMES: dict[str, str] = {
    _fold(name): name
    for fields in _SCHEMAS.values() for name, _ in fields
}
_KNOWN_NAMES.update({_fold(n): n for n in (
    "itemStatusName", "returnReasonDescription", "changeReason", "cardNumber", "cardLastFour",
    "achEntryClassDescription", "achTransactionCodeDescription",
    "total", "creditAmount", "debitAmount", "validCount", "invalidCount", "errors",
    "itemId", "uniqueId", "pageSize", "page",
)})


def _kind(kind: str) -> str:
    folded = _fold(kind)
    folded = _KIND_ALIASES.get(folded, folded)
    if folded not in _SCHEMAS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {kind!r}")
    return folded


def _raw_columns(records: Sequence[Mapping[str, Any]] | pd.DataFrame, kind: str
                 ) -> tuple[dict[str, Any], int]:
    """Raw values by canonical field name (lists, or the DataFrame's columns)."""
    if isinstance(records, pd.DataFrame):
        keys: list[Any] = list(records.columns)
        n = len(records)

        def column(key: Any) -> Any:
            return records[key].tolist()
    else:
        if not isinstance(records, Sequence):
            records = list(records)
        n = len(records)
        first = list(records[0]) if n else []
        union = set().union(*records) if n else set()
        keys = first + sorted(union.difference(first), key=str)
        # pandas walks the dicts in compiled code (faster than any Python loop here);
        # dtype=object keeps every value as sent. Absent keys read as NaN.
        table = pd.DataFrame(records, columns=keys, dtype=object)

        def column(key: Any) -> Any:
            return table[key].to_numpy()

    names: dict[str, list[Any]] = {}
    for key in keys:
        names.setdefault(camel_case(str(key)), []).append(key)
    aliases = _FIELD_ALIASES[kind]
    for name in list(names):
        target = aliases.get(_fold(name))
        if target is not None and target not in names:
            names[target] = names.pop(name)
    raw: dict[str, Any] = {}
    for name, sources in names.items():
        values = column(sources[0])
        for other in sources[1:]:
            # Two spellings of one field (itemStatus and ItemStatus): first present wins.
            values = [v if not _missing(v) else w
                      for v, w in zip(values, column(other), strict=True)]
        raw[name] = values
    return raw, n


def to_frame(records: Iterable[Mapping[str, Any]] | pd.DataFrame, kind: str, *,
             mask: bool = True) -> pd.DataFrame:
    """An analyst-ready DataFrame of records of one kind.

    Args:
        records: the records (dicts as :func:`extract_records` returns them), or a
            DataFrame read from an export (its columns are typed the same way).
        kind: ``"ach"``, ``"rcc"``, ``"instant"``, ``"rtp"`` or ``"noc"``.
        mask: mask account numbers as ``****6789`` (card numbers are always reduced
            to their last four digits, whatever ``mask`` says).

    Returns:
        The known columns of the kind in a fixed order with fixed dtypes (see
        :func:`empty_frame`), then every other field in the order first seen.
    """
    kind = _kind(kind)
    if not isinstance(mask, bool):
        raise TypeError("mask must be True or False")
    raw, n = _raw_columns(records, kind)
    ctx = _Context(n, mask)
    columns: dict[str, Any] = {}
    schema = _SCHEMAS[kind]
    for name, convert in schema:
        if name in raw or name in _USES_OTHER_FIELDS or not n:
            converted = convert(name, raw, ctx)
        else:
            # A documented field this answer left out: its typed empty column, without
            # converting n missing values (most records carry few of the ~50 fields).
            converted = {out: pd.Series(values).reindex(range(n)).array
                         for out, values in convert(name, {}, _Context(0, mask)).items()}
        for out, values in converted.items():
            columns.setdefault(out, values)
    known = {name for name, _ in schema} | _CONSUMED
    for name in raw:
        if name in known or name in columns:
            continue
        if name == "cardNumber":
            continue
        columns[name] = _conv_extra(name, raw, ctx)[name]
    if "cardNumber" in raw and "cardLastFour" not in columns:
        columns["cardLastFour"] = _conv_card("cardLastFour", raw, ctx)["cardLastFour"]
    frame = pd.DataFrame(columns, index=pd.RangeIndex(n))
    if kind in _WIRE_INTEGER_KINDS:
        frame.attrs["amountUnit"] = INSTANT_AMOUNT_UNIT
    return frame


def empty_frame(kind: str) -> pd.DataFrame:
    """The frame of no records of ``kind``: every known column with its dtype."""
    return to_frame([], kind)
