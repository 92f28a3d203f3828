"""Answers of the service -> typed, masked pandas DataFrames.

Two steps, both tolerant of whatever the real service sends (the spec leaves
most response shapes "not shown"):

1. :func:`extract_records` finds the records in a decoded answer: a bare JSON
   array, or an object holding them under any of the usual keys
   (``transactions``, ``items``, ``data``, ``results``, ``value``, ``nocs`` ...,
   any casing), or a single record, bare or wrapped (``transaction``).
   :func:`extract_record` does the same for answers of one item, and
   :func:`list_metadata` returns the list's totals (``total``,
   ``creditAmount``, ``debitAmount`` ...).
2. :func:`to_frame` turns records into an analyst-ready DataFrame whose columns
   and dtypes depend only on the kind (``ach``, ``rcc``, ``instant``, ``rtp``,
   ``noc``), never on the number of rows nor on the values (a time column is
   ``datetime64[ns, UTC]`` whether the service sends midnights or times of day):

   - names in camelCase as the service spells them (``ItemStatus``,
     ``item_status`` -> ``itemStatus``); every field paynb does not know is kept
     as its own column after the known ones;
   - ids (``achItemId``, ``rccItemId``, ``nocId``) nullable ``Int64`` (read from
     numbers or digits; a column holding an id that is no 64-bit integer stays text,
     with a warning), ``uniqueId`` a string. A generic ``itemId``/``id`` becomes the
     kind's id and, for ACH and RCC, a bare ``status`` becomes ``itemStatus``;
   - ``itemStatus`` an ordered categorical over :data:`paynb.codes.STATUS_ORDER`
     with ``itemStatusName`` beside it. Codes are read in any casing and full
     names (``"Returned"``) become their code. A code paynb does not know is
     **kept**: it is appended to the categories (after the known ones, in
     alphabetical order) and its ``itemStatusName`` is missing, and a warning
     is logged. Instant and RTP ``status`` is a categorical over
     :data:`INSTANT_STATUSES`, extended the same way. An instant card's
     ``cardBrand`` is a categorical over :data:`CARD_BRANDS` (read in any
     casing), extended with any other brand without a warning;
   - times read from ``2025-06-11T20:50:04.032Z``, the spec's zone-less
     ``2026-11-01T00:00:00.000`` (read as UTC), date-only values (midnight UTC) and
     explicit offsets. Values that are no timestamp, or lie outside 1677-2262 (like
     .NET's "no date" ``0001-01-01``), are empty, with a warning. **The rule:** every
     time the service sends is kept as the instant it is, in UTC: one dtype,
     ``datetime64[ns, UTC]``, for every time column (``settleDate``, ``returnDate``,
     ``sendDate``, ``receivedDateTime``, a NOC's ``nocDate`` ...) whatever the records
     hold, so an empty answer and a full one have the same dtypes and nothing of what
     was sent is dropped (neither a time of day nor a zone). A column whose values are
     all midnight **prints as dates** (``2026-11-23``), in the repr, the notebook's
     table and Excel, without changing the data (:class:`UtcInstants`); a column with
     one time of day in it prints its times (``2026-11-23 15:30:00+00:00``). The
     columns keep ``.dt``, arithmetic and comparisons with ``"2026-11-23"`` or a
     ``Timestamp``; ``.dt.date`` gives the UTC days;
   - ACH and RCC ``amount`` exact, as pyarrow ``decimal128(18, 2)``. Amounts with
     more than two decimals are never rounded: the column then gets the scale they
     need (``decimal128(16 + scale, scale)``) and a warning is logged. Instant card
     and RTP ``amount`` is the wire integer as sent, nullable ``Int64``: its unit is
     not stated by the service (cents or dollars?), so it is not shown as dollars;
     ``df.attrs["amountUnit"]`` says so (:data:`INSTANT_AMOUNT_UNIT`);
   - ``returnReasonDescription`` beside ``returnReason`` (R01...), and
     ``changeReason`` filled from the NOC code (C01...) where the service left it
     out, from the tables of :mod:`paynb.codes`; a code in none of them reads
     ``not a NACHA code paynb knows``, with one
     :class:`~paynb.errors.UnknownCodeWarning` per frame;
   - card numbers only as their last four digits (``cardLastFour``; a
     ``cardNumber`` field is always dropped), account numbers masked as
     ``****6789`` unless ``mask=False`` (also the account part of a NOC's
     ``correctedData``, and any unknown field whose name ends in ``AccountNumber``);
   - unknown fields typed from their values: integers ``Int64``, booleans
     ``boolean``, texts ``str``, ISO texts in a field named ``...Date``/``...Time``
     timestamps, numbers in a field named ``...Amount`` exact decimals; lists and
     objects are kept as they are (``object``).

The conversion works column by column in Arrow (and numpy): the known text fields of
the records are read by Arrow in one pass straight into the ``large_string`` arrays pandas
keeps its text in, the other fields by item getters, and dates, amounts, categoricals,
meanings and masks are computed on whole columns; a column holding anything unexpected
is read value by value instead, with the same result. A typed frame costs no more than a
plain ``pd.DataFrame(records)`` of the same records (benchmarks/RESULTS.md, case 2).
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import functools
import json
import logging
import operator
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

import paynb.accessor  # noqa: F401  (df.paynb on every frame, the client's included)
from paynb._coerce import STATUS_BY_NAME, missing, parse_decimal
from paynb._kinds import KINDS as KIND_REGISTRY
from paynb._kinds import kind_of
from paynb._pandas_compat import string_dtype
from paynb._redact import hide_numbers
from paynb._warn import user_stacklevel
from paynb.codes import (
    ACH_ACCOUNT_TYPES,
    ACH_ENTRY_CLASSES,
    ACH_TRANSACTION_CODES,
    ACH_TRANSACTION_SUBTYPES,
    INSTANT_STATUSES,
    ITEM_KINDS,
    NOC_CODE_TABLE,
    NOC_CODES,
    RETURN_CODES,
    STATUS_NAMES,
    STATUS_ORDER,
    UNKNOWN_CODE,
    normalise_code,
)
from paynb.errors import ResponseFormatError, UnknownCodeWarning
from paynb.nacha import LEDGER_COLUMNS, NOC_STATES

__all__ = [
    "CARD_BRANDS",
    "INSTANT_AMOUNT_UNIT",
    "INSTANT_STATUSES",
    "KINDS",
    "UtcInstants",
    "camel_case",
    "empty_frame",
    "extract_record",
    "extract_records",
    "list_metadata",
    "noc_ledger_frame",
    "to_frame",
    "typed_columns_to_read_as_text",
    "unknown_codes_told_once",
    "utc_instants",
]

logger = logging.getLogger("paynb.frames")

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
_UTC_ARROW = pa.timestamp("ns", tz="UTC")
#: The zone at the end of an ISO 8601 time: Z, +02:00, -0500.
_ZONE = re.compile(r"(?:[Zz]|[+-]\d\d:?\d\d)$")
#: pyarrow before 23 casts text outside the nanosecond range (1677-2262) to a wrong time
#: without an error (0001-01-01 became 1754-08-30); from 23 on the cast refuses it.
_CAST_CHECKS_RANGE = int(pa.__version__.split(".")[0]) >= 23
_MIN_TIME = pd.Timestamp.min.tz_localize("UTC")
_MAX_TIME = pd.Timestamp.max.tz_localize("UTC")
_AMOUNT_TYPE = pa.decimal128(18, 2)


_missing = missing


def _column(values: Sequence[Any]) -> np.ndarray:
    """The raw values as a 1-D object array (lists and dicts stay one value each)."""
    if isinstance(values, np.ndarray):
        return values
    if isinstance(values, pa.Array):  # text read by Arrow: str or None
        return values.to_numpy(zero_copy_only=False)
    return np.fromiter(values, dtype=object, count=len(values))


def _text(values: Sequence[Any]) -> pa.Array | None:
    """The values as an Arrow ``large_string`` array (pandas' own storage of ``str``) when
    every present one is text (None, NaN and NA are missing); None when some are not.

    Arrow reads the Python strings about twice as fast as ``pd.array(values, dtype=str)``
    (which checks and copies every value first), and the converters then work in Arrow."""
    if isinstance(values, pa.Array):  # already read by Arrow (_record_reader)
        return values
    try:
        return pa.array(values, pa.large_string(), from_pandas=True)
    except (TypeError, ValueError, OverflowError, pa.ArrowNotImplementedError):
        return None


def _strings(values: Sequence[Any]) -> pd.api.extensions.ExtensionArray:
    text = _text(values)
    if text is not None:
        return _from_arrow(text)
    values = _column(values)
    try:
        return pd.array(values, dtype=_STRING_DTYPE)
    except (TypeError, ValueError):
        # Numbers among strings (a zip sent as 12345): pandas writes them as text.
        return pd.array([None if _missing(v) else str(v) for v in values], dtype=_STRING_DTYPE)


def _arrow(strings: pd.api.extensions.ExtensionArray) -> pa.Array:
    return pa.array(strings, pa.large_string(), from_pandas=True)


def _from_arrow(array: pa.Array | pa.ChunkedArray) -> pd.api.extensions.ExtensionArray:
    return pd.array(array, dtype=_STRING_DTYPE)


def _whole_numbers(values: Sequence[Any]) -> pd.api.extensions.ExtensionArray | None:
    """The values as ``Int64`` when every present one is a 64-bit integer (Arrow infers
    int64 for nothing else: not for floats, booleans or text), else None."""
    try:
        inferred = pa.array(values, from_pandas=True)
    except (TypeError, ValueError, OverflowError, pa.ArrowNotImplementedError):
        return None
    return pd.Int64Dtype().__from_arrow__(inferred) if pa.types.is_int64(inferred.type) \
        else None


def _ids(name: str, values: Sequence[Any]) -> pd.api.extensions.ExtensionArray:
    whole = _whole_numbers(values)
    if whole is not None:
        return whole
    values = _column(values)
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
    # What the service and its exports send: a $ sign is read too (see parse_decimal).
    return parse_decimal(value, currency_sign=True)


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
    values = _column(values)
    missing = pd.isna(values)
    # Number cells of a sheet come as one float array: no Python object per value.
    kinds = {float} if values.dtype.kind == "f" else set(map(type, values[~missing]))
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


def _arrow_timestamps(values: Sequence[Any]) -> pa.Array | None:
    """The fast path: texts that all carry a zone (``...Z``), or that all lack one (read
    as UTC), as an Arrow ``timestamp("ns", "UTC")`` array."""
    try:
        text = values if isinstance(values, pa.Array) else pa.array(values, pa.string(),
                                                                      from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None
    # Each cast takes one form only; the first value's form goes first, as a cast that
    # fails costs some thirty times one that succeeds (an xlsx export's times are
    # zone-less text, JSON's and CSV's carry their zone).
    present = text.drop_null()
    if not _CAST_CHECKS_RANGE and present and not _years_within_nanoseconds(present):
        return None
    zoned = not present or _ZONE.search(str(present[0].as_py())) is not None
    for target in (_UTC_ARROW, pa.timestamp("ns")) if zoned else (pa.timestamp("ns"),
                                                                   _UTC_ARROW):
        try:
            stamps = text.cast(target)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            continue
        # Zone-less text is UTC: the same count of nanoseconds, labelled UTC.
        return stamps if target.tz else stamps.view(_UTC_ARROW)
    return None


def _years_within_nanoseconds(text: pa.Array) -> bool:
    """Whether every text starts with a year that nanoseconds hold whole (1678-2261); the
    slow path reads the others, and 1677 and 2262 to the day."""
    years = pc.min_max(pc.utf8_slice_codeunits(text, 0, 4))
    return years["min"].as_py() >= "1678" and years["max"].as_py() <= "2261"


def _parse_timestamps(values: Sequence[Any]) -> tuple[pd.Series | pa.Array, int]:
    """UTC timestamps, and how many present values could not be read as one."""
    parsed = _arrow_timestamps(values)
    if parsed is not None:
        return parsed, 0
    # Mixed forms, Timestamp objects, or text that is not a timestamp at all.
    series = pd.Series(_column(values), dtype=object)
    readable = series.map(lambda value: isinstance(value, str | dt.date))  # not numbers
    parsed = pd.to_datetime(series.where(readable, None), format="ISO8601", utc=True,
                            errors="coerce")
    # Nanoseconds reach 1677-2262 only; .NET's "no date" 0001-01-01 lies outside.
    parsed = parsed.where((parsed >= _MIN_TIME) & (parsed <= _MAX_TIME))
    return parsed, int(series.notna().sum() - parsed.notna().sum())


class UtcInstants(pd.arrays.DatetimeArray):
    """A column of UTC instants that prints as dates where every value is midnight.

    In every other way it is pandas' own ``datetime64[ns, UTC]`` array (``.dt``,
    arithmetic, comparisons, ``resample``, Arrow and Parquet all see a ``DatetimeArray``
    of that dtype): only its text changes. pandas prints a zone-less column whose
    values are all midnight as dates (``2026-11-23``) and a UTC column always with its
    time and zone (``2026-11-23 00:00:00+00:00``); this array follows the zone-less
    rule in UTC, so a ``settleDate`` the service sends as midnight reads as the date it
    is, and a ``returnDate`` sent at 15:30 shows its time in the whole column. The rule
    is pandas' (``_is_dates_only``), read per column, in the repr, the notebook's HTML
    table, ``to_string``, ``to_csv`` and ``astype(str)``; Excel follows the same rule
    (:mod:`paynb._excel`).

    Why an array, and not the frame: pandas has no per-column display option, a
    ``DataFrame`` subclass is lost by most of what analysts do with a frame (and changes
    its type for every library that checks it), and ``attrs`` cannot reach the
    repr. The array travels with its column through filtering, sorting, ``concat``,
    ``merge``, ``groupby``, ``copy`` and pickling; an operation that builds a new column
    (``tz_convert``, a frame rebuilt from Arrow) gives pandas' plain array, which prints
    as pandas prints UTC, and :func:`utc_instants` makes one again.
    """

    @classmethod
    def of(cls, values: Any) -> UtcInstants:
        """``values`` (times, dates, a pandas datetime column; zone-less ones are UTC) as
        such an array."""
        if isinstance(values, pd.Series | pd.Index):
            values = values.array
        if not isinstance(values, pd.arrays.DatetimeArray):
            values = pd.array(pd.to_datetime(values, utc=True))
        if values.tz is None:
            values = values.tz_localize("UTC")
        return cls.from_nanoseconds(values.tz_convert("UTC").as_unit("ns").asi8)

    @classmethod
    def from_nanoseconds(cls, nanoseconds: np.ndarray) -> UtcInstants:
        """From int64 nanoseconds since the epoch, UTC (the smallest int64 is NaT)."""
        return cls._simple_new(np.asarray(nanoseconds, dtype=np.int64).view("datetime64[ns]"),
                               dtype=_UTC_NS)

    @property
    def _is_dates_only(self) -> bool:
        stamps = self.asi8[~self.isna()]
        return bool((stamps % _DAY_UNITS[self.unit] == 0).all())


_DAY_UNITS = {"s": 86_400, "ms": 86_400_000, "us": 86_400_000_000, "ns": 86_400_000_000_000}


def utc_instants(values: Any) -> pd.api.extensions.ExtensionArray:
    """``values`` as a ``datetime64[ns, UTC]`` column that prints as dates where every
    value is midnight (:class:`UtcInstants`): for a column built outside the frames
    (dates paynb computes, a frame read back from Parquet or Delta). A Series keeps its
    index: ``df["due"] = utc_instants(df["due"])``."""
    if isinstance(values, pd.Series):
        return pd.Series(UtcInstants.of(values.array), index=values.index, name=values.name)
    return UtcInstants.of(values)


def noc_ledger_frame(rows: Sequence[Mapping[str, Any]]) -> pd.DataFrame:
    """The NOC ledger's rows (:func:`paynb.nacha.ledger`) as the typed frame
    :func:`paynb.compliance.noc_obligations` and ``client.nocs.obligations()`` return."""
    frame = pd.DataFrame([{column: row[column] for column in LEDGER_COLUMNS} for row in rows],
                         columns=list(LEDGER_COLUMNS), dtype=object)
    # One dtype per column whatever the rows: UTC instants like the frames' times, the
    # days paynb computes (the sixth banking day, the due date) at their midnight, so that
    # they print as the dates they are and compare with the service's times directly.
    for column in ("received", "nextEntry", "appliedAt", "sixthBankingDay", "dueDate"):
        frame[column] = utc_instants(frame[column])

    def whole(column: str) -> str:
        ints = all(isinstance(v, int) and not isinstance(v, bool) or hasattr(v, "is_integer")
                   and float(v).is_integer() for v in frame[column] if v is not None)
        return "Int64" if ints else "string"

    return frame.astype({"nocId": whole("nocId"), "achItemId": whole("achItemId"),
                         "appliedEntryId": whole("appliedEntryId"),
                         "yourReferenceNumber": "string", "changeCode": "string",
                         "changeReason": "string", "bankRoutingNumber": "string",
                         "bankAccountNumber": "string", "mustChange": "string",
                         "appliedBy": "string",
                         "state": pd.CategoricalDtype(NOC_STATES, ordered=True)})


def _dated(parsed: pd.Series | pa.Array) -> UtcInstants:
    """A column of UTC timestamps as paynb keeps it: every instant as the service sent it,
    ``datetime64[ns, UTC]``, printing as dates where all are midnight (:class:`UtcInstants`)."""
    if isinstance(parsed, pa.Array):
        # Straight from Arrow's nanoseconds (pandas' accessors cost ~1 ms a column, which
        # a small answer of some fifty columns would feel).
        nanoseconds = parsed.view(pa.int64()).fill_null(_NAT).to_numpy(zero_copy_only=False)
        return UtcInstants.from_nanoseconds(nanoseconds)
    return UtcInstants.of(parsed.astype(_UTC_NS).array)


_NAT = np.iinfo(np.int64).min


def _timestamps(name: str, values: Sequence[Any]) -> pd.api.extensions.ExtensionArray:
    """UTC timestamps from ISO 8601 text (``...Z``, zone-less = UTC, date-only, offsets),
    as :func:`_dated` keeps them."""
    parsed, lost = _parse_timestamps(values)
    if lost:
        logger.warning("column %s: %d values are not ISO 8601 timestamps between 1677 "
                       "and 2262; left empty", name, lost)
    return _dated(parsed)


def _meanings(positions: np.ndarray, uniques: Iterable[Any], table: Mapping[str, str]
              ) -> pd.api.extensions.ExtensionArray:
    """The meaning of each distinct code (R01, C05 ...) looked up once and spread over the
    rows by position (-1: no code), in Arrow: fast on 1M rows."""
    meanings = pa.array([table.get(str(code).strip().upper()) for code in uniques] + [None],
                        pa.large_string())
    missing = len(meanings) - 1
    return _from_arrow(meanings.take(np.where(positions < 0, missing, positions)))


#: ``(column, code)`` of the unknown codes already warned of, while
#: :func:`unknown_codes_told_once` is in force (None: every frame warns).
_TOLD: contextvars.ContextVar[set[tuple[str, str]] | None] = contextvars.ContextVar(
    "paynb_unknown_codes_told", default=None)


@contextlib.contextmanager
def unknown_codes_told_once(told: set[tuple[str, str]]) -> Iterator[None]:
    """Within it, frames warn of an unknown return or change code only when ``told`` does
    not hold it yet (and add it): the frames built in batches for one list share one set,
    so that the list warns once, as one frame would."""
    token = _TOLD.set(told)
    try:
        yield
    finally:
        _TOLD.reset(token)


def _warn_unknown_codes(column: str, unknown: list[str], what: str) -> None:
    told = _TOLD.get()
    if told is not None:
        unknown = [code for code in unknown if (column, code) not in told]
        told.update((column, code) for code in unknown)
    if not unknown:
        return
    one = len(unknown) == 1
    counted = ("counted in the overall return rate only" if what == "return" else
               "its NOC kept on the ledger with its six banking days")
    warnings.warn(UnknownCodeWarning(
        f"{column}: {', '.join(unknown)} {'is' if one else 'are'} not {'a ' if one else ''}"
        f"NACHA {what} code{'' if one else 's'} paynb knows (a typo at the service, or a "
        f"code newer than paynb): kept, described as '{UNKNOWN_CODE}', {counted}, and "
        "summed under 'other' in charts (docs/codes.md)", column=column, codes=tuple(unknown)),
        stacklevel=user_stacklevel())


def _code_meanings(column: str, codes: pd.api.extensions.ExtensionArray,
                   table: Mapping[str, str], what: str) -> pd.api.extensions.ExtensionArray:
    """Meanings of return or change codes (R01, C05 ...) through their distinct values
    only; a code in no table reads :data:`paynb.codes.UNKNOWN_CODE`, with one warning."""
    positions, uniques = pd.factorize(codes)
    keys = [normalise_code(code) for code in uniques]
    unknown = sorted({key for key in keys if key and key not in table})
    if unknown:
        _warn_unknown_codes(column, unknown, what)
    return _meanings(positions, uniques,
                     {key: table.get(key, UNKNOWN_CODE) for key in keys if key})


def _categorical(name: str, values: Sequence[Any], known: Sequence[str],
                 normalise: Callable[[Any], str | None], *, ordered: bool,
                 warn: bool = True) -> pd.Categorical:
    """A categorical over ``known``; other values are appended as extra categories
    (with a warning when ``warn``: an unknown status matters, a new card brand does not)."""
    text = _text(values)
    if text is not None:
        # Text (the usual case): Arrow finds the distinct values without Python objects.
        encoded = pc.dictionary_encode(text)
        positions = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False)
        uniques: Any = encoded.dictionary.to_pylist()
    else:
        values = _column(values)
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
                     dtype=_code_type(categories))
    return pd.Categorical.from_codes(remap[positions],
                                     dtype=_categories(tuple(categories), ordered))


@functools.lru_cache(maxsize=256)
def _categories(categories: tuple[str, ...], ordered: bool) -> pd.CategoricalDtype:
    """The categorical dtype, checked once (pandas validates the categories every time)."""
    return pd.CategoricalDtype(list(categories), ordered=ordered)


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


def _mask_accounts(strings: pd.api.extensions.ExtensionArray | pa.Array
                   ) -> pd.api.extensions.ExtensionArray:
    array = pc.utf8_trim_whitespace(strings if isinstance(strings, pa.Array) else
                                    _arrow(strings))
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
    whole = _whole_numbers(_get(raw, name, ctx))
    if whole is not None:
        return {name: whole}
    values = _column(_get(raw, name, ctx))
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
    values = _get(raw, name, ctx)
    if not ctx.mask:
        return {name: _strings(values)}
    text = _text(values)
    return {name: _mask_accounts(text if text is not None else _strings(values))}


def _conv_item_status(name: str, raw: Columns, ctx: _Context) -> Columns:
    status = _categorical(name, _get(raw, name, ctx), STATUS_ORDER, _status_code, ordered=True)
    names = [STATUS_NAMES[code] for code in STATUS_ORDER]
    codes = np.where(status.codes < len(names), status.codes, -1)
    return {
        name: status,
        "itemStatusName": pd.Categorical.from_codes(codes, dtype=_categories(tuple(names),
                                                                             True)),
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


def _text_flags(name: str, text: pa.Array) -> pd.api.extensions.ExtensionArray:
    """Flags written as text and read by Arrow (a sheet's ``true``), by the words of
    :func:`_flag`, in compiled code (no Python call per value)."""
    words = pc.utf8_lower(pc.utf8_trim_whitespace(text))
    true = pc.is_in(words, value_set=pa.array(sorted(_TRUE), words.type))
    false = pc.is_in(words, value_set=pa.array(sorted(_FALSE), words.type))
    flags = pc.if_else(true, True, pc.if_else(false, False, pa.scalar(None, pa.bool_())))
    unreadable = pc.sum(pc.and_(pc.invert(pc.or_(true, false)),
                                pc.not_equal(text, ""))).as_py() or 0
    if unreadable:
        logger.warning("column %s: %d values are not true or false; left empty", name,
                       unreadable)
    return pd.BooleanDtype().__from_arrow__(flags)


def _conv_bool(name: str, raw: Columns, ctx: _Context) -> Columns:
    """A flag as pandas' nullable ``boolean`` (JSON true/false, or an export's text)."""
    values = _get(raw, name, ctx)
    if isinstance(values, pa.Array) and pa.types.is_large_string(values.type):
        return {name: _text_flags(name, values)}
    values = _column(values)
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


#: The converters :func:`_open_set` made (they read text only).
_OPEN_SETS: list[Callable[..., Columns]] = []


def _open_set(known: Mapping[str, str], *, described: str | None = None
              ) -> Callable[[str, Columns, _Context], Columns]:
    """A converter to a categorical over the ``known`` codes (others appended, no warning:
    the set is open), with their meanings in the column ``described`` when given."""
    def convert(name: str, raw: Columns, ctx: _Context) -> Columns:
        codes = _categorical(name, _get(raw, name, ctx), tuple(known), _open_code,
                             ordered=False, warn=False)
        out: Columns = {name: codes}
        if described:
            # Each category's meaning once, spread over the rows by the categorical's codes.
            out[described] = _meanings(codes.codes, codes.categories,
                                       {k.upper(): v for k, v in known.items()})
        return out

    _OPEN_SETS.append(convert)
    return convert


def _conv_transaction_code(name: str, raw: Columns, ctx: _Context) -> Columns:
    codes = _ids(name, _get(raw, name, ctx))
    meanings = {str(code): meaning for code, meaning in ACH_TRANSACTION_CODES.items()}
    # The distinct codes (numbers, or text when they are no integers) looked up once.
    positions, uniques = pd.factorize(codes)
    return {name: codes, "achTransactionCodeDescription": _meanings(positions, uniques,
                                                                     meanings)}


def _conv_return_reason(name: str, raw: Columns, ctx: _Context) -> Columns:
    codes = _strings(_get(raw, name, ctx))
    return {name: codes,
            "returnReasonDescription": _code_meanings(name, codes, RETURN_CODES, "return")}


def _conv_change_code(name: str, raw: Columns, ctx: _Context) -> Columns:
    codes = _strings(_get(raw, name, ctx))
    given = _strings(_get(raw, "changeReason", ctx))
    meanings = _code_meanings(name, codes, NOC_CODES, "change")
    reasons = pd.Series(given).fillna(pd.Series(meanings)).array
    return {name: codes, "changeReason": reasons}


#: NOC codes whose corrected data holds an account number (NACHA): C01, C03, C06, C07.
_ACCOUNT_NOCS = frozenset(code for code, noc in NOC_CODE_TABLE.items()
                          if "bankAccountNumber" in noc.fields)
#: Of those, the ones whose corrected data starts with the routing number: C03, C07.
_ROUTING_FIRST_NOCS = frozenset(code for code in _ACCOUNT_NOCS
                                if "bankRoutingNumber" in NOC_CODE_TABLE[code].fields)
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
    values = _column(raw[name])
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
                return {name: _dated(parsed)}
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

#: The converter of each type of field (paynb._kinds.TYPES). A ``change_reason`` has none:
#: the ``change_code`` converter writes it beside the code.
_CONVERTERS: dict[str, Callable[..., Columns]] = {
    "id": _conv_id, "text": _conv_str, "account": _conv_account, "money": _conv_amount,
    "wire_integer": _conv_wire_integer, "time": _conv_time, "flag": _conv_bool,
    "object": _conv_object, "item_status": _conv_item_status,
    "instant_status": _conv_instant_status, "card_brand": _conv_card_brand,
    "card_last_four": _conv_card, "transaction_code": _conv_transaction_code,
    "return_reason": _conv_return_reason, "change_code": _conv_change_code,
    "corrected_data": _conv_corrected_data,
    "account_type": _open_set(ACH_ACCOUNT_TYPES),
    "transaction_subtype": _open_set(ACH_TRANSACTION_SUBTYPES),
    "entry_class": _open_set(ACH_ENTRY_CLASSES, described="achEntryClassDescription"),
}
_SCHEMAS: dict[str, list[tuple[str, Callable[..., Columns]]]] = {
    kind.name: [(f.name, _CONVERTERS[f.type]) for f in kind.fields if f.type in _CONVERTERS]
    for kind in KIND_REGISTRY.values()}
#: Converters that read their field as text only (missing or a string), which may
#: therefore be handed an Arrow ``large_string`` array (see :func:`_record_reader`).
_TEXT_CONVERTERS: frozenset[Callable[..., Columns]] = frozenset({
    _conv_str, _conv_account, _conv_time, _conv_item_status, _conv_instant_status,
    _conv_card_brand, _conv_return_reason, *_OPEN_SETS})
#: The fields of each kind that :func:`_record_reader` may read as Arrow text.
_TEXT_FIELDS: dict[str, frozenset[str]] = {
    kind: frozenset(name for name, convert in fields if convert in _TEXT_CONVERTERS)
    for kind, fields in _SCHEMAS.items()}
#: Kinds whose ``amount`` is the wire integer in an unstated unit.
_WIRE_INTEGER_KINDS = frozenset(k.name for k in KIND_REGISTRY.values()
                                 if k.amount == "wire_integer")
KINDS: tuple[str, ...] = ITEM_KINDS
"""The item kinds :func:`to_frame` knows (:data:`paynb.codes.ITEM_KINDS`)."""

#: Field names that other spellings fold onto, per kind, when the canonical one is absent.
_FIELD_ALIASES: dict[str, dict[str, str]] = {
    kind.name: dict(kind.aliases) for kind in KIND_REGISTRY.values()}
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
    return kind_of(kind).name


def _raw_columns(records: Sequence[Mapping[str, Any]] | pd.DataFrame | pa.Table, kind: str
                 ) -> tuple[dict[str, Any], int]:
    """Raw values by canonical field name: Arrow text arrays for the known text fields of
    records (and of a sheet read with typed cells), else the values as sent (lists, the
    DataFrame's columns, a typed sheet's numbers, times and flags)."""
    if isinstance(records, pd.DataFrame | pa.Table):
        keys: list[Any] = list(records.columns) if isinstance(records, pd.DataFrame) \
            else records.column_names
        n = len(records)
    else:
        if not isinstance(records, Sequence):
            records = list(records)
        n = len(records)
        first = list(records[0]) if n else []
        union = set().union(*records) if n else set()
        keys = first + sorted(union.difference(first), key=str)
    names = _field_names(keys, kind)
    if isinstance(records, pd.DataFrame):
        frame = records

        def column(key: Any) -> Any:
            return frame[key].tolist()
    elif isinstance(records, pa.Table):
        column = _sheet_reader(records, names, kind)
    else:
        column = _record_reader(records, names, kind)
    raw: dict[str, Any] = {}
    for name, sources in names.items():
        values = column(sources[0])
        for other in sources[1:]:
            # Two spellings of one field (itemStatus and ItemStatus): first present wins.
            values = [v if not _missing(v) else w
                      for v, w in zip(values, column(other), strict=True)]
        raw[name] = values
    return raw, n


def _field_names(keys: Sequence[Any], kind: str) -> dict[str, list[Any]]:
    """The given keys by the canonical field name each spells (camelCase, then the kind's
    aliases where the canonical name is absent), in their order."""
    names: dict[str, list[Any]] = {}
    for key in keys:
        names.setdefault(camel_case(str(key)), []).append(key)
    aliases = _FIELD_ALIASES[kind]
    for name in list(names):
        target = aliases.get(_fold(name))
        if target is not None and target not in names:
            names[target] = names.pop(name)
    return names


def _is_text(kind_of: pa.DataType) -> bool:
    return pa.types.is_string(kind_of) or pa.types.is_large_string(kind_of) \
        or pa.types.is_null(kind_of)


def _sheet_reader(table: pa.Table, names: Mapping[str, list[Any]], kind: str
                  ) -> Callable[[Any], Any]:
    """A reader of a sheet read with typed cells (:func:`typed_columns_to_read_as_text`)
    or as text: the known text fields as Arrow text (as :func:`_record_reader` gives
    them), and flags written as text too (:func:`_text_flags`), times as their Arrow
    timestamps, every other column as a NumPy array (numbers as floats, other text and
    flag cells as objects)."""
    converters = dict(_SCHEMAS[kind])
    arrow_text = {sources[0] for name, sources in names.items()
                  if len(sources) == 1 and (name in _TEXT_FIELDS[kind]
                                            or converters.get(name) is _conv_bool)}
    amounts = {sources[0] for name, sources in names.items()
               if converters.get(name) is _conv_amount}

    def column(key: Any) -> Any:
        array = table.column(key).combine_chunks()
        if _is_text(array.type):
            text = array.cast(pa.large_string())
            if key in arrow_text:
                return text
            # Missing as NaN, as in the text of an export read by pandas.
            values = text.to_numpy(zero_copy_only=False)
            values[text.is_null().to_numpy(zero_copy_only=False)] = np.nan
            return values
        if pa.types.is_timestamp(array.type) or pa.types.is_date(array.type):
            return array
        values = array.to_numpy(zero_copy_only=False)
        if key in amounts and values.dtype.kind == "f":
            return np.round(values * 100) / 100  # the cents their text shows
        return values

    return column


#: Converters that read whole numbers from number cells (exact below 2**53).
_WHOLE_NUMBER_CONVERTERS: frozenset[Callable[..., Columns]] = frozenset({
    _conv_id, _conv_transaction_code, _conv_wire_integer})
#: How far from whole cents a number cell of an amount column may lie and still read as
#: them (its text, to nine decimals, is the cents value).
_CENT_NOISE = 5e-10
#: The times a ``datetime64[ns]`` column holds.
_TIME_RANGE = (pa.scalar(pd.Timestamp.min.ceil("s").to_pydatetime(), pa.timestamp("ms")),
               pa.scalar(pd.Timestamp.max.floor("s").to_pydatetime(), pa.timestamp("ms")))


def typed_columns_to_read_as_text(table: pa.Table, kind: str) -> list[str]:
    """The typed columns of a sheet read with typed cells (fastexcel: each column one
    type, guessed from all its cells) that :func:`to_frame` would type otherwise than
    their text; the others may stay typed, as each column is converted on its own.

    A column may stay typed when it is a known field whose converter takes that type with
    nothing lost: whole numbers below 2**53 for ids and wire integers, whole cents below
    2**23 (give or take a float's last bits) for amounts, times within 1677-2262, flags.
    Any other typed column (a number in a text field, a field paynb does not know holding
    numbers, a sub-cent amount) is to be read as its text. An empty answer: the whole
    sheet types as its text does."""
    kind = _kind(kind)
    converters = dict(_SCHEMAS[kind])
    as_text: list[str] = []
    for name, sources in _field_names(table.column_names, kind).items():
        typed = [source for source in sources
                 if not _is_text(table.schema.field(source).type)]
        if not typed:
            continue
        convert = converters.get(name)
        if len(sources) > 1 or convert is None \
                or not _typed_cells_fit(table.column(sources[0]), convert):
            as_text.extend(typed)
    return as_text


def _typed_cells_fit(values: pa.ChunkedArray, convert: Callable[..., Columns]) -> bool:
    """Whether ``convert`` types the typed cells ``values`` as it types their text."""
    kind_of = values.type
    if pa.types.is_floating(kind_of) or pa.types.is_integer(kind_of):
        extent = pc.max(pc.abs(values)).as_py() or 0
        if convert is _conv_amount:
            # Cents, give or take a float's last bits (an amount summed in floats,
            # 48.160000000000004): the text of such a cell is the cents value. Other
            # amounts (sub-cent ones, or above 2**23 where a float's bits reach the
            # ninth decimal the text shows) are read from their text.
            cents = pc.divide(pc.round(pc.multiply(values, 100)), 100)
            noise = pc.max(pc.abs(pc.subtract(values, cents))).as_py() or 0
            return extent < 2 ** 23 and noise < _CENT_NOISE
        if convert in _WHOLE_NUMBER_CONVERTERS:
            whole = pc.all(pc.equal(pc.floor(values), values)).as_py() \
                if pa.types.is_floating(kind_of) else True
            return extent < 2 ** 53 and whole is not False
        return False
    if pa.types.is_timestamp(kind_of) or pa.types.is_date(kind_of):
        if convert is not _conv_time:
            return False
        stamps = values.cast(pa.timestamp("ms"))
        first, last = pc.min(stamps), pc.max(stamps)
        return not (first.is_valid and (pc.less(first, _TIME_RANGE[0]).as_py()
                                        or pc.greater(last, _TIME_RANGE[1]).as_py()))
    return pa.types.is_boolean(kind_of) and convert is _conv_bool


def _record_reader(records: Sequence[Mapping[str, Any]], names: Mapping[str, list[Any]],
                   kind: str) -> Callable[[Any], Any]:
    """A reader of the records' values by key, every value as sent, in compiled code.

    The known text fields (most of a record) are read by Arrow in one pass straight into
    ``large_string`` arrays, pandas' own storage of text, with no Python object per value;
    should one hold anything but text (or null), they are read like the others. The others
    are read field by field by an item getter (by ``get`` when a record lacks the field,
    which then reads as NaN, as pandas reads it). Together about 0.6 of pandas' dicts ->
    2-D object block -> columns, text conversion included."""
    text_keys = [sources[0] for name, sources in names.items()
                 if len(sources) == 1 and isinstance(sources[0], str)
                 and name in _TEXT_FIELDS[kind]]
    texts: dict[Any, pa.Array] = {}
    if text_keys and records:
        struct = pa.struct([pa.field(key, pa.large_string()) for key in text_keys])
        try:
            table = pa.array(records, type=struct, from_pandas=True)
        except (TypeError, ValueError, KeyError, OverflowError, pa.ArrowNotImplementedError):
            pass  # a number or a list among the texts: read as sent, typed as today
        else:
            texts = {key: table.field(i) for i, key in enumerate(text_keys)}
    absent = float("nan")

    def column(key: Any) -> Any:
        if key in texts:
            return texts[key]
        try:
            return list(map(operator.itemgetter(key), records))
        except KeyError:
            return [record.get(key, absent) for record in records]

    return column


@functools.lru_cache(maxsize=512)
def _empty_columns(kind: str, name: str, mask: bool) -> Columns:
    """The typed empty columns a field's converter gives (built once per kind and field)."""
    convert = dict(_SCHEMAS[kind])[name]
    return convert(name, {}, _Context(0, mask))


def _all_missing(empty: Any, n: int) -> Any:
    """``n`` missing values of the type of the empty column ``empty``."""
    if isinstance(empty.dtype, pd.ArrowDtype):  # amounts: an all-null Arrow array, no take
        return pd.arrays.ArrowExtensionArray(pa.nulls(n, empty.dtype.pyarrow_dtype))
    if empty.dtype == _STRING_DTYPE:
        return _from_arrow(pa.nulls(n, pa.large_string()))
    if isinstance(empty, pd.Categorical):
        return pd.Categorical.from_codes(np.full(n, -1, dtype=_code_type(empty.categories)),
                                         dtype=empty.dtype)
    if isinstance(empty, pd.arrays.IntegerArray | pd.arrays.BooleanArray):
        # Values never read under an all-true mask: zeroed pages, not written ones.
        return type(empty)(np.zeros(n, dtype=empty.dtype.numpy_dtype), np.ones(n, dtype=bool))
    if isinstance(empty, UtcInstants):
        return UtcInstants.from_nanoseconds(np.full(n, _NAT, dtype=np.int64))
    return pd.api.extensions.take(empty, np.full(n, -1, dtype=np.intp), allow_fill=True)


def _code_type(categories: Sequence[Any]) -> type[np.signedinteger[Any]]:
    """The integer type pandas keeps a categorical's codes in (so none is converted)."""
    for kind in (np.int8, np.int16, np.int32):
        if len(categories) < np.iinfo(kind).max:
            return kind
    return np.int64


def to_frame(records: Iterable[Mapping[str, Any]] | pd.DataFrame | pa.Table, kind: str, *,
             mask: bool = True) -> pd.DataFrame:
    """An analyst-ready DataFrame of records of one kind.

    Args:
        records: the records (dicts as :func:`extract_records` returns them), or a
            DataFrame read from an export (its columns are typed the same way), or an
            export's sheet read with typed cells where
            :func:`typed_columns_to_read_as_text` allows.
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
            converted = {out: _all_missing(values, n)
                         for out, values in _empty_columns(kind, name, mask).items()}
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
    # copy=False: every column is new here (pandas would copy each one again).
    frame = pd.DataFrame(columns, index=pd.RangeIndex(n), copy=False)
    if kind in _WIRE_INTEGER_KINDS:
        frame.attrs["amountUnit"] = INSTANT_AMOUNT_UNIT
    return frame


def empty_frame(kind: str) -> pd.DataFrame:
    """The frame of no records of ``kind``: every known column with its dtype."""
    return to_frame([], kind)
