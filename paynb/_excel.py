"""Excel workbooks, read and written the one way paynb does it.

:func:`read_excel` reads a first sheet with fastexcel, every cell as text (as
``pandas.read_csv(dtype=str)`` reads a CSV), so that the frame builder types it alike;
:func:`read_export_sheet` keeps an export's typed cells where they give the same frame.
:func:`write_excel` turns each column, whole, into an Arrow column by its dtype's rule
(:func:`column_plan`; the rules are those of docs/client.md, "Excel files paynb writes")
for :mod:`paynb._xlsx` to write in Rust.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
from collections.abc import Iterator, Mapping
from typing import Any, BinaryIO

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from paynb import frames
from paynb._pandas_compat import string_dtype
from paynb._xlsx import MAX_ROWS, Sheet, check_size, write_workbook

__all__ = ["DATETIME_FORMAT", "DATE_FORMAT", "INTEGER_FORMAT", "MAX_ROWS", "MONEY_FORMAT",
           "ColumnPlan", "column_plan", "excel_bytes", "read_excel", "read_export_sheet",
           "sheet_name", "write_excel"]

_DAY_NS = 86_400_000_000_000
#: 1970-01-01 as an Excel serial day (the 1900 date system).
_UNIX_EPOCH_SERIAL = 25_569.0
#: Excel's serial days are right from 1900-03-01 on (it counts a 29 February 1900).
_FIRST_SERIAL_NS = int(pd.Timestamp("1900-03-01").value)

DATE_FORMAT = "yyyy-mm-dd"
DATETIME_FORMAT = "yyyy-mm-dd hh:mm:ss"
MONEY_FORMAT = "#,##0.00"
INTEGER_FORMAT = "0"


# --------------------------------------------------------------------------- reading

def read_excel(document: bytes | str | os.PathLike[str]) -> pd.DataFrame:
    """The first sheet of an ``.xlsx`` document (bytes or a path), every cell as text.

    The first row names the columns; an empty cell is missing (NaN), numbers read as
    their shortest text (``1250.5``, ``22``), dates as ``2026-11-23 10:05:03``.

    Raises:
        ValueError: the document is no workbook fastexcel can read (the message says why).
    """
    return _text_sheet(document).to_pandas(
        types_mapper={pa.string(): string_dtype(), pa.large_string(): string_dtype()}.get)


def _first_sheet(document: bytes | str | os.PathLike[str], **options: Any) -> pa.Table:
    """The first sheet as an Arrow table, loaded with fastexcel's ``options``."""
    import fastexcel

    source = document if isinstance(document, bytes) else os.fspath(document)
    try:
        with _quiet_guesses():
            return pa.Table.from_batches(
                [fastexcel.read_excel(source).load_sheet(0, **options).to_arrow()])
    except fastexcel.UnsupportedColumnTypeCombinationError:
        raise  # (typed cells only: read_export_sheet reads such a sheet as text)
    except Exception as exc:  # fastexcel raises its own error types for broken files
        raise ValueError(f"not a readable xlsx workbook ({type(exc).__name__}: {exc})") \
            from None


def _text_sheet(document: bytes | str | os.PathLike[str]) -> pa.Table:
    """The first sheet as an Arrow table of text columns (:func:`read_excel`'s cells)."""
    return _first_sheet(document, dtypes="string")


def read_export_sheet(document: bytes | str | os.PathLike[str], kind: str) -> pa.Table:
    """An export's first sheet as an Arrow table, for :func:`paynb.frames.to_frame` of
    ``kind``: read with typed cells (each column one type, guessed from all its cells)
    where the frame comes out exactly as from the text of :func:`read_excel`
    (:func:`paynb.frames.typed_columns_to_read_as_text`); a column of numbers or flags
    that would type otherwise (a number in a text field, a field paynb does not know) as
    the text fastexcel prints for its cells, without a second parse; any other sheet (a
    column mixing types, times to be read as text) with :func:`read_excel`'s text cells.
    An Arrow table either way: the frame builder reads its columns without a pandas
    frame in between.

    Typed cells spare writing numbers and times as text only to parse them back: they
    read 40,000 ACH items a third faster (benchmarks/RESULTS.md, case 11). A column that
    mixes types (a text among numbers), or numbers where paynb keeps text, is read as
    text, so an odd cell comes out as it does from a CSV export.

    Raises:
        ValueError: the document is no workbook fastexcel can read (the message says why).
    """
    import fastexcel

    try:
        table = _first_sheet(document, dtype_coercion="strict", schema_sample_rows=None)
    except fastexcel.UnsupportedColumnTypeCombinationError:
        # A column mixing types: only fastexcel knows each cell's text.
        return _text_sheet(document)
    as_text = frames.typed_columns_to_read_as_text(table, kind)
    if not all(_printable(table.schema.field(name).type) for name in as_text):
        return _text_sheet(document)  # times as text: parse the sheet again as text
    for name in as_text:
        table = table.set_column(table.column_names.index(name), name,
                                 _typed_cells_text(table.column(name)))
    return table


def _printable(kind_of: pa.DataType) -> bool:
    return bool(pa.types.is_floating(kind_of) or pa.types.is_integer(kind_of)
                or pa.types.is_boolean(kind_of))


def _typed_cells_text(values: pa.ChunkedArray) -> pa.Array:
    """Typed number or flag cells as the text :func:`read_excel` reads for them (tests
    hold the two equal), so that one column of a typed sheet reads as its text without
    parsing the sheet again."""
    if pa.types.is_boolean(values.type):
        return pc.if_else(values, "true", "false").cast(pa.string())
    if pa.types.is_integer(values.type):
        return values.cast(pa.string())
    # As fastexcel prints a number cell: to nine decimals, trailing zeros cut (22, 0.1,
    # 0.333333333, 100000000000000000000, -0).
    return pa.array([None if value is None else f"{value:.9f}".rstrip("0").rstrip(".")
                     for value in values.to_pylist()], pa.string())


@contextlib.contextmanager
def _quiet_guesses() -> Iterator[None]:
    """Without fastexcel's warning for each empty column whose type it cannot guess (it
    then reads text, as paynb wants): not the user's concern."""
    guesses = logging.getLogger("fastexcel.types.dtype")

    def notices(record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Could not determine dtype")

    guesses.addFilter(notices)
    try:
        yield
    finally:
        guesses.removeFilter(notices)


# --------------------------------------------------------------------------- column rules

class ColumnPlan:
    """How one column goes into cells: its values as an Arrow array of a type the
    writer takes (``float64``, ``int64``, ``bool``, text; missing values null), a number
    format or None, and a width in characters."""

    __slots__ = ("format", "values", "width")

    def __init__(self, values: pa.Array, number_format: str | None, width: float):
        self.values = values
        self.format = number_format
        self.width = width


def _text(values: pd.Series) -> pa.Array:
    """Text cells; NaN, None and NA as missing."""
    return pa.array(values, type=pa.string(), from_pandas=True)


def _floats(values: np.ndarray, number_format: str | None, width: float) -> ColumnPlan:
    """Numbers; NaN as missing (infinities stay: the writer shows them as INF)."""
    return ColumnPlan(pa.array(values, type=pa.float64(), from_pandas=True), number_format,
                      width)


def _utc_naive(column: pd.Series) -> pd.Series | None:
    """A time column as UTC times without zone; None if ``column`` holds no times."""
    dtype = column.dtype
    if isinstance(dtype, pd.DatetimeTZDtype):
        return column.dt.tz_convert("UTC").dt.tz_localize(None)
    if pd.api.types.is_datetime64_dtype(dtype):
        return column
    if isinstance(dtype, pd.ArrowDtype) and (pa.types.is_date(dtype.pyarrow_dtype)
                                              or pa.types.is_timestamp(dtype.pyarrow_dtype)):
        zoned = getattr(dtype.pyarrow_dtype, "tz", None) is not None
        return _utc_naive(column.astype("datetime64[ns, UTC]" if zoned else "datetime64[ns]"))
    return None


def _times(column: pd.Series) -> ColumnPlan | None:
    naive = _utc_naive(column)
    if naive is None:
        return None
    stamps = naive.to_numpy(dtype="datetime64[ns]")
    valid = ~np.isnat(stamps)
    nanoseconds = stamps.view("int64")
    if (valid & (nanoseconds < _FIRST_SERIAL_NS)).any():
        # Before 1900-03-01 Excel's calendar is wrong: such a column is kept as ISO text.
        return ColumnPlan(_text(naive.dt.strftime("%Y-%m-%dT%H:%M:%S")), None, 20)
    dates_only = bool((nanoseconds[valid] % _DAY_NS == 0).all())
    # An Excel time is a number of days (the 1900 date system) shown by a date format.
    days = nanoseconds.astype("float64") / _DAY_NS + _UNIX_EPOCH_SERIAL
    days[~valid] = np.nan
    return _floats(days, DATE_FORMAT if dates_only else DATETIME_FORMAT,
                   11 if dates_only else 19)


def _decimal_format(scale: int) -> str:
    return MONEY_FORMAT if scale <= 2 else "#,##0." + "0" * scale


def _numbers(column: pd.Series) -> ColumnPlan | None:
    dtype = column.dtype
    if isinstance(dtype, pd.ArrowDtype) and pa.types.is_decimal(dtype.pyarrow_dtype):
        # Excel keeps doubles: amounts below 10**13 with two decimals are exact.
        return _floats(column.to_numpy(dtype="float64", na_value=np.nan),
                       _decimal_format(dtype.pyarrow_dtype.scale), 14)
    if pd.api.types.is_bool_dtype(dtype):
        return ColumnPlan(pa.array(column.astype("boolean"), type=pa.bool_()), None, 8)
    if pd.api.types.is_integer_dtype(dtype):
        return ColumnPlan(pa.array(column.astype("Int64"), type=pa.int64()), INTEGER_FORMAT,
                          12)
    if pd.api.types.is_float_dtype(dtype):
        return _floats(column.to_numpy(dtype="float64", na_value=np.nan), None, 12)
    return None


def _text_width(values: pa.Array) -> float:
    longest = pc.max(pc.utf8_length(values.slice(0, 200))).as_py()
    return float(longest or 8)


def _cell_text(value: Any) -> str:
    if isinstance(value, dict | list):
        return json.dumps(value, default=str, ensure_ascii=False)
    return str(value)


def _objects(column: pd.Series) -> ColumnPlan:
    """A column of Python objects, by what all its present values are (pandas' own
    inference, in C)."""
    kind = pd.api.types.infer_dtype(column, skipna=True)
    if kind == "decimal":
        floats = column.astype("float64").to_numpy()
        finite = np.isfinite(floats)  # Decimal NaN and infinities: empty cells
        scale = pa.array(column[finite]).type.scale if finite.any() else 2
        return _floats(np.where(finite, floats, np.nan), _decimal_format(max(2, scale)), 14)
    if kind in ("datetime", "datetime64", "date"):
        plan = _times(pd.Series(pd.to_datetime(column, utc=kind != "date")))
        if plan is not None:
            return plan
    if kind == "boolean":
        return ColumnPlan(pa.array(column.astype("boolean"), type=pa.bool_()), None, 8)
    if kind == "integer":
        # Python integers may exceed int64; Excel keeps doubles anyway.
        return _floats(column.astype("float64").to_numpy(), INTEGER_FORMAT, 12)
    if kind in ("floating", "mixed-integer-float"):
        return _floats(column.astype("float64").to_numpy(), None, 12)
    texts = _text(column if kind in ("string", "empty")
                  else column.map(_cell_text, na_action="ignore"))
    return ColumnPlan(texts, None, _text_width(texts))


def column_plan(column: pd.Series) -> ColumnPlan:
    """How ``column`` is written (see the module's rules)."""
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        column = column.astype(dtype.categories.dtype)
        dtype = column.dtype
    plan = _times(column) or _numbers(column)
    if plan is not None:
        return plan
    if isinstance(dtype, pd.StringDtype) or (isinstance(dtype, pd.ArrowDtype)
                                             and pa.types.is_string(dtype.pyarrow_dtype)):
        texts = _text(column)
        return ColumnPlan(texts, None, _text_width(texts))
    return _objects(column.astype(object))


# --------------------------------------------------------------------------- writing

_FORBIDDEN_IN_NAMES = str.maketrans({c: "_" for c in "[]:*?/\\"})


def sheet_name(name: str, taken: set[str] | None = None) -> str:
    """``name`` as Excel accepts a sheet's name: at most 31 characters, none of
    ``[]:*?/\\``, not blank, and unlike the names in ``taken`` (compared as Excel does,
    ignoring case)."""
    base = str(name).translate(_FORBIDDEN_IN_NAMES).strip("'").strip() or "Sheet"
    base = base[:31]
    taken_folded = {t.lower() for t in taken or ()}
    candidate, number = base, 1
    while candidate.lower() in taken_folded:
        number += 1
        suffix = f" ({number})"
        candidate = base[:31 - len(suffix)] + suffix
    return candidate


def write_excel(target: str | os.PathLike[str] | BinaryIO,
                sheets: Mapping[str, pd.DataFrame], *,
                formats: Mapping[str, str] | None = None) -> None:
    """Write each frame of ``sheets`` to a sheet of one ``.xlsx`` workbook.

    Args:
        target: a path (the file is replaced) or a binary file object.
        sheets: frames by sheet name (names made valid with :func:`sheet_name`); the
            index is not written: reset it first to keep it.
        formats: Excel number formats by column name (``{"rate": "0.00%"}``), in every
            sheet that has such a column, instead of the dtype's.

    Raises:
        ValueError: a frame has more rows or columns than an Excel sheet holds, or text
            longer than a cell holds (the message names the sheet and says to write CSV
            instead).
    """
    for name, frame in sheets.items():
        check_size(name, len(frame), len(frame.columns))
    prepared: dict[str, Sheet] = {}
    for name, frame in sheets.items():
        title = sheet_name(name, set(prepared))
        plans = [column_plan(frame.iloc[:, i]) for i in range(len(frame.columns))]
        headers = [str(column) for column in frame.columns]
        columns = list(zip(headers, plans, strict=True))
        prepared[title] = Sheet(
            pa.Table.from_arrays([plan.values for plan in plans], names=headers),
            [(formats or {}).get(header, plan.format) for header, plan in columns],
            [min(60.0, max(8.0, len(header) + 2.0, plan.width + 2.0))
             for header, plan in columns])
    write_workbook(target, prepared)


def excel_bytes(sheets: Mapping[str, pd.DataFrame], **options: Any) -> bytes:
    """:func:`write_excel` into memory: the workbook's bytes."""
    out = io.BytesIO()
    write_excel(out, sheets, **options)
    return out.getvalue()
