"""Whole columns typed from raw values: text, ids, amounts, times (:class:`UtcInstants`),
categoricals, code meanings and masks, mostly in Arrow."""

from __future__ import annotations

import contextlib
import contextvars
import datetime as dt
import functools
import logging
import re
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from decimal import Decimal, InvalidOperation, localcontext
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from paynb._coerce import STATUS_BY_NAME, missing, parse_decimal
from paynb._pandas_compat import string_dtype
from paynb._warn import user_stacklevel
from paynb.codes import (
    INSTANT_STATUSES,
    UNKNOWN_CODE,
    normalise_code,
)
from paynb.errors import UnknownCodeWarning
from paynb.nacha import LEDGER_COLUMNS, NOC_STATES

logger = logging.getLogger("paynb.frames")

CARD_BRANDS: tuple[str, ...] = ("Visa", "Mastercard", "Discover", "American Express")
"""Card brands of instant card transactions, in the order of the ``cardBrand`` categorical."""
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
#: Values read by Arrow (records' text, a sheet's cells, the history's columns).
_ARROW = (pa.Array, pa.ChunkedArray)



def _column(values: Sequence[Any]) -> np.ndarray:
    """The raw values as a 1-D object array (lists and dicts stay one value each)."""
    if isinstance(values, np.ndarray):
        return values
    if isinstance(values, _ARROW):  # text read by Arrow: str or None
        return values.to_numpy(zero_copy_only=False)
    return np.fromiter(values, dtype=object, count=len(values))


def _is_text(kind_of: pa.DataType) -> bool:
    return pa.types.is_string(kind_of) or pa.types.is_large_string(kind_of) \
        or pa.types.is_null(kind_of)


def _text(values: Sequence[Any]) -> pa.Array | None:
    """The values as an Arrow ``large_string`` array (pandas' own storage of ``str``) when
    every present one is text (None, NaN and NA are missing); None when some are not.

    Arrow reads the Python strings about twice as fast as ``pd.array(values, dtype=str)``
    (which checks and copies every value first), and the converters then work in Arrow."""
    if isinstance(values, _ARROW):  # already read by Arrow (_record_reader)
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
        return pd.array([None if missing(v) else str(v) for v in values], dtype=_STRING_DTYPE)


def _arrow(strings: pd.api.extensions.ExtensionArray) -> pa.Array:
    return pa.array(strings, pa.large_string(), from_pandas=True)


def _from_arrow(array: pa.Array | pa.ChunkedArray) -> pd.api.extensions.ExtensionArray:
    return pd.array(array, dtype=_STRING_DTYPE)


def _whole_numbers(values: Sequence[Any]) -> pd.api.extensions.ExtensionArray | None:
    """The values as ``Int64`` when every present one is a 64-bit integer (Arrow infers
    int64 for nothing else: not for floats, booleans or text), else None."""
    try:
        inferred = values if isinstance(values, _ARROW) else pa.array(values, from_pandas=True)
    except (TypeError, ValueError, OverflowError, pa.ArrowNotImplementedError):
        return None
    return pd.Int64Dtype().__from_arrow__(inferred) if pa.types.is_int64(inferred.type) \
        else None


def _integral(values: np.ndarray) -> tuple[pd.Series, np.ndarray, bool]:
    """The values as numbers (NaN where none is), which are whole, and whether every
    present one is."""
    numbers = pd.to_numeric(pd.Series(values, dtype=object), errors="coerce")
    present = np.array([not missing(v) and v != "" for v in values], dtype=bool)
    whole = numbers.notna().to_numpy() & (numbers.fillna(0) % 1 == 0).to_numpy()
    return numbers, whole, not (present & ~whole).any()


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
    numbers, integral, all_whole = _integral(values)
    if all_whole:
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


def decimal_from_cents(units: np.ndarray, valid: np.ndarray, precision: int, scale: int
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
            return decimal_from_cents(units, valid, 18 if scale == 2 else 16 + scale, scale)
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
        if number is None and not missing(value) and value != "":
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
    if isinstance(values, _ARROW) and pa.types.is_decimal(values.type):
        return pd.arrays.ArrowExtensionArray(values)  # (decimals already: the history's)
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
    as UTC), as an Arrow ``timestamp("ns", "UTC")`` array; Arrow times (a typed sheet's,
    the history's) too."""
    if isinstance(values, _ARROW) and pa.types.is_temporal(values.type):
        zoned = getattr(values.type, "tz", None) is not None
        try:
            stamps = values.cast(_UTC_ARROW if zoned else pa.timestamp("ns"))
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            return None  # beyond nanoseconds: read one by one
        return stamps if zoned else stamps.view(_UTC_ARROW)
    try:
        text = values if isinstance(values, _ARROW) else pa.array(values, pa.string(),
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
    if isinstance(parsed, _ARROW):
        # Straight from Arrow's nanoseconds (pandas' accessors cost ~1 ms a column, which
        # a small answer of some fifty columns would feel).
        nanoseconds = parsed.cast(pa.int64()).fill_null(_NAT).to_numpy(zero_copy_only=False)
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
        if isinstance(encoded, pa.ChunkedArray):  # (one dictionary for every chunk)
            # pyarrow 21 cannot combine zero chunks of a dictionary (an empty read).
            encoded = encoded.combine_chunks() if encoded.num_chunks else \
                pc.dictionary_encode(pa.array([], text.type))
        positions = encoded.indices.fill_null(-1).to_numpy(zero_copy_only=False)
        uniques: Any = encoded.dictionary.to_pylist()
    else:
        values = _column(values)
        try:
            positions, uniques = pd.factorize(pd.Series(values, dtype=object))
        except TypeError:  # a list or an object where a code belongs: compare its text
            positions, uniques = pd.factorize(pd.Series(
                [v if missing(v) else str(v) for v in values], dtype=object))
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
    if missing(value):
        return None
    text = str(value).strip()
    if not text:
        return None
    return STATUS_BY_NAME.get(text.lower(), text.upper() if len(text) <= 2 else text)


def _instant_status(value: Any) -> str | None:
    if missing(value):
        return None
    text = str(value).strip()
    for known in INSTANT_STATUSES:
        if text.lower() == known.lower():
            return known
    return text or None


_BRAND_BY_NAME = {brand.lower(): brand for brand in CARD_BRANDS} | {"amex": "American Express"}


def _card_brand(value: Any) -> str | None:
    if missing(value):
        return None
    text = str(value).strip()
    return _BRAND_BY_NAME.get(text.lower(), text) or None


def _mask_accounts(strings: pd.api.extensions.ExtensionArray | pa.Array
                   ) -> pd.api.extensions.ExtensionArray:
    array = pc.utf8_trim_whitespace(strings if isinstance(strings, _ARROW) else
                                    _arrow(strings))
    stars, empty = pa.scalar("****", array.type), pa.scalar("", array.type)
    masked = pc.binary_join_element_wise(stars, pc.utf8_slice_codeunits(array, -4), empty)
    short = pc.less_equal(pc.utf8_length(array), 4)
    return _from_arrow(pc.if_else(short, stars, masked))


def _last_four(strings: pd.api.extensions.ExtensionArray) -> pd.api.extensions.ExtensionArray:
    digits = pc.replace_substring_regex(_arrow(strings), r"\D", "")
    return _from_arrow(pc.utf8_slice_codeunits(digits, -4))




def _code_type(categories: Sequence[Any]) -> type[np.signedinteger[Any]]:
    """The integer type pandas keeps a categorical's codes in (so none is converted)."""
    for kind in (np.int8, np.int16, np.int32):
        if len(categories) < np.iinfo(kind).max:
            return kind
    return np.int64

