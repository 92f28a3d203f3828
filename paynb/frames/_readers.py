"""Records, a DataFrame or an Arrow table of one kind -> the typed frame
(:func:`to_frame`): the raw values read column by column, then converted (:func:`build`).

The history's tables hold a frame as :func:`as_stored` makes it; :func:`from_stored`
reads it back through the same :func:`build`, so that the history's frames are the
lists' frames by construction, not by a second typing kept equal."""

from __future__ import annotations

import functools
import json
import operator
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from paynb._coerce import missing
from paynb._kinds import kind_of
from paynb.frames._columns import (
    _NAT,
    _STRING_DTYPE,
    UtcInstants,
    _code_type,
    _from_arrow,
    _is_text,
)
from paynb.frames._converters import (
    _CONSUMED,
    _FIELD_ALIASES,
    _SCHEMAS,
    _TEXT_FIELDS,
    _WIRE_INTEGER_KINDS,
    DERIVED_FROM,
    INSTANT_AMOUNT_UNIT,
    READS_ALSO,
    Columns,
    _Context,
    _conv_amount,
    _conv_bool,
    _conv_card,
    _conv_extra,
    _conv_id,
    _conv_time,
    _conv_transaction_code,
    _conv_wire_integer,
    _kind,
)
from paynb.frames._envelopes import _fold, camel_case


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
            values = [v if not missing(v) else w
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
    return build(raw, n, kind, mask)


def build(raw: Mapping[str, Any], n: int, kind: str, mask: bool,
          only: frozenset[str] | None = None) -> pd.DataFrame:
    """The typed frame of ``n`` rows of ``kind`` from raw values by canonical field name
    (lists, NumPy or Arrow arrays): the one typing of records, whatever they were read
    from. With ``only``, just the known fields in it (with what they derive)."""
    ctx = _Context(n, mask)
    columns: dict[str, Any] = {}
    schema = _SCHEMAS[kind]
    for name, convert in schema:
        if only is not None and name not in only:
            continue
        if name in raw or name in READS_ALSO or not n:
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


def delta_types(table: pa.Table) -> pa.Table:
    """``table`` (from a frame, or an older store) as the tables hold it: times as UTC
    instants in microseconds (a zone-less time is UTC), text plain, categories as their
    text; without pandas' metadata."""
    fields = []
    for field in table.schema:
        kind = field.type
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        if pa.types.is_large_string(kind) or pa.types.is_null(kind):
            kind = pa.string()
        elif pa.types.is_timestamp(kind):
            kind = pa.timestamp("us", tz="UTC")
        fields.append(pa.field(field.name, kind))
    # Not "safe": the service's times are to the millisecond, so nothing is lost.
    return table.cast(pa.schema(fields), safe=False)


def as_stored(frame: pd.DataFrame, json_columns: set[str] | None = None) -> pa.Table:
    """``frame`` as the tables hold it (:func:`delta_types`); columns of objects (what the
    service nests) as JSON text, their names added to ``json_columns``."""
    frame = frame.copy(deep=False)
    frame.attrs = {}  # not stored (pandas would try to keep them as JSON)
    for name in [n for n, dtype in frame.dtypes.items() if dtype == np.dtype(object)]:
        if json_columns is not None:
            json_columns.add(name)
        frame[name] = pa.array([None if v is None or v != v else
                                json.dumps(v, default=str, sort_keys=True)
                                for v in frame[name]], pa.string())
    return delta_types(pa.Table.from_pandas(frame, preserve_index=False))


def columns_of(columns: Iterable[str]) -> list[str]:
    """The stored columns that the frame's ``columns`` are typed from: them, the fields
    their derived columns come from (``itemStatus`` for ``itemStatusName``), and what
    those fields' converters read besides (a NOC's code to mask its corrected data)."""
    needed = dict.fromkeys(columns)
    needed.update(dict.fromkeys(DERIVED_FROM[c] for c in list(needed) if c in DERIVED_FROM))
    needed.update(dict.fromkeys(o for c in list(needed) for o in READS_ALSO.get(c, ())))
    return list(needed)


def _parsed(column: pa.ChunkedArray) -> np.ndarray:
    """A column of JSON text as its values (None where there is none, mostly)."""
    values = np.full(len(column), None, dtype=object)
    valid = np.flatnonzero(column.is_valid().to_numpy(zero_copy_only=False))
    for at, text in zip(valid, column.drop_null().to_pylist(), strict=True):
        values[at] = json.loads(text)
    return values


def from_stored(table: pa.Table, kind: str, *, mask: bool, json_columns: Iterable[str] = (),
                only: Iterable[str] | None = None) -> pd.DataFrame:
    """Rows of ``kind`` as :func:`as_stored` keeps them -> the frame :func:`to_frame` gives
    of the same records, typed by the same converters.

    Columns of objects, kept as JSON text (``json_columns`` and the kind's ``object``
    fields), are parsed back; a field paynb does not know that none of these rows holds is
    left out (the store's columns are those of every sync). ``mask`` masks account
    numbers (of a store kept whole). ``only``: just these known fields (see
    :func:`columns_of`)."""
    kind = _kind(kind)
    objects = {*json_columns, *kind_of(kind).names_of("object")}
    known = {name for name, _ in _SCHEMAS[kind]} | _CONSUMED
    rows = table.num_rows
    raw: dict[str, Any] = {}
    for name in table.column_names:
        column = table.column(name)
        if name not in known and column.null_count == rows:
            continue
        if name in objects:
            raw[name] = _parsed(column)
        else:  # (chunks as read: a column's text is not copied)
            raw[name] = column.cast(pa.large_string()) if _is_text(column.type) else column
    return build(raw, rows, kind, mask, None if only is None else frozenset(columns_of(only)))
