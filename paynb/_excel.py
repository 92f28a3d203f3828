"""Excel workbooks, read and written the one way paynb does it.

- :func:`read_excel` reads the first sheet of an ``.xlsx`` document with fastexcel (a
  Rust reader, calamine underneath), every cell as text, as ``pandas.read_csv(dtype=str)``
  reads a CSV: the frame builder then types the columns the same way whatever the
  document's format (an export, an upload). About ten times faster than openpyxl.
- :func:`write_excel` writes DataFrames, one sheet each, with xlsxwriter, whose
  ``constant_memory`` mode keeps memory flat for large workbooks. Every column is written
  by one rule for its dtype (:func:`column_plan`):

  - exact amounts (an Arrow ``decimal128`` column, or a column whose values are all
    ``Decimal``) as **numbers** shown with their decimals (``#,##0.00``), never text;
  - integers (ids, and the wire-integer amounts of instant card and RTP, whose unit is
    not stated) as integers (format ``0``, so long ids do not turn into ``1.2E+11``);
  - times in UTC without their zone (Excel has none), as Excel dates: shown as
    ``yyyy-mm-dd`` where every value of the column is midnight, else
    ``yyyy-mm-dd hh:mm:ss``; a column of dates (``datetime.date``, Arrow ``date32``)
    as ``yyyy-mm-dd``;
  - booleans as booleans, text as text (never a formula: ``=1+1`` stays text), nested
    objects (``iatAddenda``) as their JSON, anything else as its ``str``;
  - missing values as empty cells.

  The header row is bold and frozen, with a filter, and columns get a width from their
  header and first values. ``formats`` overrides the number format of named columns
  (percentages, a ledger's float amounts).

The writer is the cost of xlsxwriter's cells, which it writes one Python call each
(benchmarks/RESULTS.md, case 11, compares it with CSV of the same frames).
"""

from __future__ import annotations

import datetime as dt
import io
import json
import math
import os
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from typing import IO, Any

import numpy as np
import pandas as pd
import pyarrow as pa

__all__ = ["MAX_ROWS", "ColumnPlan", "column_plan", "excel_bytes", "read_excel", "sheet_name",
           "write_excel"]

MAX_ROWS = 1_048_576
"""Rows of an Excel sheet, its header included."""
_MAX_COLUMNS = 16_384
#: Above this many cells a workbook is written in xlsxwriter's constant_memory mode (flat
#: memory, strings in line); below, cells are kept until the end (shared strings: a smaller
#: file, written about a fifth faster, ~3 KiB of memory a row of 50 columns).
_CONSTANT_MEMORY_CELLS = 5_000_000
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
    import fastexcel

    source = document if isinstance(document, bytes) else os.fspath(document)
    try:
        sheet = fastexcel.read_excel(source).load_sheet(0, dtypes="string")
        table = sheet.to_arrow()
    except Exception as exc:  # fastexcel raises its own error types for broken files
        raise ValueError(f"not a readable xlsx workbook ({type(exc).__name__}: {exc})") \
            from None
    return table.to_pandas(types_mapper={pa.string(): pd.StringDtype(na_value=np.nan),
                                         pa.large_string(): pd.StringDtype(na_value=np.nan)}
                           .get)


# --------------------------------------------------------------------------- column rules

class ColumnPlan:
    """How one column goes into cells: its values (missing as None), the xlsxwriter
    method that writes them (``"number"``, ``"string"``, ``"boolean"``), a number format
    or None, and a width in characters."""

    __slots__ = ("format", "kind", "values", "width")

    def __init__(self, kind: str, values: list[Any], number_format: str | None,
                 width: float):
        self.kind = kind
        self.values = values
        self.format = number_format
        self.width = width


def _serial_days(nanoseconds: np.ndarray, valid: np.ndarray) -> list[Any]:
    """Excel serial days (floats) from UTC nanoseconds; None where missing."""
    days = nanoseconds.astype("float64") / _DAY_NS + _UNIX_EPOCH_SERIAL
    days[~valid] = np.nan
    return _floats(days)


def _times(column: pd.Series) -> ColumnPlan | None:
    dtype = column.dtype
    if isinstance(dtype, pd.DatetimeTZDtype):
        naive = column.dt.tz_convert("UTC").dt.tz_localize(None)
    elif pd.api.types.is_datetime64_dtype(dtype):
        naive = column
    elif isinstance(dtype, pd.ArrowDtype) and pa.types.is_date(dtype.pyarrow_dtype):
        naive = column.astype("datetime64[ns]")
    else:
        return None
    nanoseconds = naive.to_numpy(dtype="datetime64[ns]").view("int64")
    valid = ~np.isnat(naive.to_numpy(dtype="datetime64[ns]"))
    early = valid & (nanoseconds < _FIRST_SERIAL_NS)
    if early.any():
        # Before 1900-03-01 Excel's calendar is wrong: such a column is kept as ISO text.
        text = naive.dt.strftime("%Y-%m-%dT%H:%M:%S")
        return ColumnPlan("string", [v if isinstance(v, str) else None for v in text],
                          None, 20)
    dates_only = bool((nanoseconds[valid] % _DAY_NS == 0).all())
    return ColumnPlan("number", _serial_days(nanoseconds, valid),
                      DATE_FORMAT if dates_only else DATETIME_FORMAT, 11 if dates_only else 19)


def _decimal_format(scale: int) -> str:
    return MONEY_FORMAT if scale <= 2 else "#,##0." + "0" * scale


def _numbers(column: pd.Series) -> ColumnPlan | None:
    dtype = column.dtype
    if isinstance(dtype, pd.ArrowDtype) and pa.types.is_decimal(dtype.pyarrow_dtype):
        # Excel keeps doubles: amounts below 10**13 with two decimals are exact.
        floats = column.astype("float64").to_numpy(na_value=np.nan)
        return ColumnPlan("number", _floats(floats), _decimal_format(dtype.pyarrow_dtype.scale),
                          14)
    if pd.api.types.is_bool_dtype(dtype):
        return ColumnPlan("boolean", [None if pd.isna(v) else bool(v) for v in column], None, 8)
    if pd.api.types.is_integer_dtype(dtype):
        ints = column.astype("Int64")
        mask = ints.isna().to_numpy()
        out = ints.to_numpy(dtype="int64", na_value=0).astype(object)
        out[mask] = None
        return ColumnPlan("number", out.tolist(), INTEGER_FORMAT, 12)
    if pd.api.types.is_float_dtype(dtype):
        return ColumnPlan("number", _floats(column.to_numpy(dtype="float64", na_value=np.nan)),
                          None, 12)
    return None


def _floats(values: np.ndarray) -> list[Any]:
    """Floats as Python numbers, None where NaN."""
    out = values.astype(object)
    out[np.isnan(values)] = None
    plain: list[Any] = out.tolist()
    return plain


def _text_width(values: list[Any]) -> float:
    sample = [len(v) for v in values[:200] if v is not None]
    return max(sample, default=8)


def _cell_text(value: Any) -> str:
    if isinstance(value, dict | list):
        return json.dumps(value, default=str, ensure_ascii=False)
    return str(value)


def _objects(column: pd.Series) -> ColumnPlan:
    values = column.astype(object).tolist()
    present = [v for v in values if not _missing(v)]
    if present and all(isinstance(v, Decimal) for v in present):
        scale = max(-v.as_tuple().exponent for v in present if v.is_finite()) \
            if any(v.is_finite() for v in present) else 2
        return ColumnPlan("number", [None if _missing(v) or not v.is_finite() else float(v)
                                     for v in values], _decimal_format(max(2, int(scale))), 14)
    if present and all(isinstance(v, dt.datetime | pd.Timestamp) for v in present):
        plan = _times(pd.Series(pd.to_datetime(pd.Series(values, dtype=object), utc=True)))
        if plan is not None:
            return plan
    if present and all(isinstance(v, dt.date) and not isinstance(v, dt.datetime)
                       for v in present):
        stamps = pd.Series(pd.to_datetime(pd.Series(values, dtype=object)))
        plan = _times(stamps)
        if plan is not None:
            return plan
    if present and all(isinstance(v, bool | np.bool_) for v in present):
        return ColumnPlan("boolean", [None if _missing(v) else bool(v) for v in values],
                          None, 8)
    if present and all(isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)
                       for v in present):
        return ColumnPlan("number", [None if _missing(v) else int(v) for v in values],
                          INTEGER_FORMAT, 12)
    if present and all(isinstance(v, float | int | np.floating | np.integer)
                       and not isinstance(v, bool | np.bool_) for v in present):
        return ColumnPlan("number", [None if _missing(v) else float(v) for v in values],
                          None, 12)
    texts = [None if _missing(v) else v if isinstance(v, str) else _cell_text(v)
             for v in values]
    return ColumnPlan("string", texts, None, _text_width(texts))


def _missing(value: Any) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def column_plan(column: pd.Series) -> ColumnPlan:
    """How ``column`` is written (see the module's rules)."""
    dtype = column.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        column = column.astype(dtype.categories.dtype)
        dtype = column.dtype
    plan = _times(column) or _numbers(column)
    if plan is not None:
        return plan
    if isinstance(dtype, pd.StringDtype):
        texts = [v if isinstance(v, str) else None for v in column.tolist()]
        return ColumnPlan("string", texts, None, _text_width(texts))
    return _objects(column)


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


def _rows(plans: list[ColumnPlan], n: int) -> Iterator[list[tuple[int, Any]]]:
    """Per row, the (column position, value) of its present cells."""
    for r in range(n):
        yield [(c, plan.values[r]) for c, plan in enumerate(plans)
               if plan.values[r] is not None]


def write_excel(target: str | os.PathLike[str] | IO[bytes],
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
        ValueError: a frame has more rows or columns than an Excel sheet holds (the
            message names the sheet and says to write CSV instead).
    """
    import xlsxwriter

    for name, frame in sheets.items():
        if len(frame) + 1 > MAX_ROWS or len(frame.columns) > _MAX_COLUMNS:
            raise ValueError(
                f"sheet {name!r} has {len(frame):,} rows and {len(frame.columns):,} columns; "
                f"an Excel sheet holds {MAX_ROWS - 1:,} rows and {_MAX_COLUMNS:,} columns: "
                f"write CSV instead")
    target = os.fspath(target) if isinstance(target, str | os.PathLike) else target
    cells = sum(frame.size for frame in sheets.values())
    book = xlsxwriter.Workbook(target, {"constant_memory": cells > _CONSTANT_MEMORY_CELLS,
                                        "nan_inf_to_errors": True,
                                        "strings_to_numbers": False,
                                        "strings_to_formulas": False,
                                        "strings_to_urls": False})
    try:
        header = book.add_format({"bold": True})
        number_formats: dict[str | None, Any] = {None: None}

        def cell_format(code: str | None) -> Any:
            if code not in number_formats:
                number_formats[code] = book.add_format({"num_format": code})
            return number_formats[code]

        taken: set[str] = set()
        for name, frame in sheets.items():
            title = sheet_name(name, taken)
            taken.add(title)
            sheet = book.add_worksheet(title)
            plans = [column_plan(frame.iloc[:, i]) for i in range(len(frame.columns))]
            writers: list[Callable[..., Any]] = []
            styles: list[Any] = []
            for c, (column, plan) in enumerate(zip(frame.columns, plans, strict=True)):
                code = (formats or {}).get(str(column), plan.format)
                styles.append(cell_format(code))
                writers.append({"number": sheet.write_number, "string": sheet.write_string,
                                "boolean": sheet.write_boolean}[plan.kind])
                width = min(60.0, max(8.0, len(str(column)) + 2.0, plan.width + 2.0))
                sheet.set_column(c, c, width)
            sheet.freeze_panes(1, 0)
            if len(frame.columns):
                sheet.autofilter(0, 0, max(len(frame), 1), len(frame.columns) - 1)
            sheet.write_row(0, 0, [str(column) for column in frame.columns], header)
            # Row by row (as constant_memory needs); each present cell by its typed writer.
            for r, cells in enumerate(_rows(plans, len(frame)), 1):
                for c, value in cells:
                    writers[c](r, c, value, styles[c])
    finally:
        book.close()


def excel_bytes(sheets: Mapping[str, pd.DataFrame], **options: Any) -> bytes:
    """:func:`write_excel` into memory: the workbook's bytes."""
    out = io.BytesIO()
    write_excel(out, sheets, **options)
    return out.getvalue()
