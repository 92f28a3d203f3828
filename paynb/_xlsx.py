"""Arrow tables written to an ``.xlsx`` workbook: the one place paynb calls its writer,
rustpy-xlsxwriter (``rust_xlsxwriter`` in Rust: every cell written in Rust, in constant
memory; pure-Python XlsxWriter made a workbook nine times slower than its CSV,
benchmarks/RESULTS.md, case 11).

What goes in is plain: ``float64``, ``int64``, ``bool``, text or ``null`` columns; a
decimal is written as the nearest double (Excel keeps no other number). Times go in as
Excel serial days (``float64`` with a date format): the library's own timestamp columns
lose their milliseconds and put a time of day before 1970 on the next day (0.8.0). Any
other type is refused (the writer would leave its cells empty, silently), as is a table
larger than a sheet or text longer than a cell: a ``ValueError`` naming the sheet. Only
pyarrow is needed: this module sits in the bottom layer, for the sandbox's export too.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, cast

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["MAX_COLUMNS", "MAX_ROWS", "MAX_TEXT", "Sheet", "check_size", "write_workbook"]

MAX_ROWS = 1_048_576
"""Rows of an Excel sheet, its header included."""
MAX_COLUMNS = 16_384
"""Columns of an Excel sheet."""
MAX_TEXT = 32_767
"""Characters of an Excel cell."""


@dataclass(frozen=True)
class Sheet:
    """One sheet: its table (the column names are the header), and per column in order
    an Excel number format (None: General) and a width in characters; left empty: no
    number formats, Excel's default widths."""

    table: pa.Table
    number_formats: Sequence[str | None] = ()
    widths: Sequence[float] = ()


def check_size(name: str, rows: int, columns: int) -> None:
    """Refuse a table of ``rows`` and ``columns`` that sheet ``name`` cannot hold."""
    if rows + 1 > MAX_ROWS or columns > MAX_COLUMNS:
        raise ValueError(
            f"sheet {name!r} has {rows:,} rows and {columns:,} columns; an Excel sheet "
            f"holds {MAX_ROWS - 1:,} rows and {MAX_COLUMNS:,} columns: write CSV instead")


def _writable(name: str, table: pa.Table) -> pa.Table:
    """``table`` with its decimals as doubles, after checking what a sheet can hold."""
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = table.num_rows
    check_size(name, rows, table.num_columns)
    arrays = []
    for field, column in zip(table.schema, table.columns, strict=True):
        kind = field.type
        if pa.types.is_decimal(kind):
            column = column.cast(pa.float64())
        elif pa.types.is_string(kind) or pa.types.is_large_string(kind):
            longest = pc.max(pc.utf8_length(column)).as_py() if rows else None
            if longest is not None and longest > MAX_TEXT:
                raise ValueError(
                    f"sheet {name!r}, column {field.name!r} holds text of {longest:,} "
                    f"characters; an Excel cell holds {MAX_TEXT:,}: write CSV instead")
        elif kind not in (pa.float64(), pa.int64(), pa.bool_(), pa.null()):
            raise ValueError(f"sheet {name!r}, column {field.name!r}: no Excel cell for "
                             f"Arrow type {kind} (give float64, int64, bool or text)")
        arrays.append(column)
    return pa.Table.from_arrays(arrays, names=table.column_names)


def write_workbook(target: str | os.PathLike[str] | BinaryIO, sheets: Mapping[str, Sheet],
                   *, header: bool = True) -> None:
    """Write ``sheets`` (by their valid, distinct names) to one workbook at ``target`` (a
    path, replaced, or a binary file object).

    ``header=True`` makes the header row bold and frozen, with a filter over the data; with
    False it is a plain first row, as a service's export is.

    Raises:
        ValueError: a table larger than a sheet, text longer than a cell, a column of a
            type no cell holds (the message names the sheet).
    """
    from rustpy_xlsxwriter import FastExcel, Format

    tables = {name: _writable(name, sheet.table) for name, sheet in sheets.items()}
    book = FastExcel(target)
    book.format(inf_value="INF", bold_headers=header)  # -inf: -INF
    if header:
        book.freeze(row=1, col=0)
    formats: dict[str, Format] = {}
    for name, sheet in sheets.items():
        for code in sheet.number_formats:
            if code is not None and code not in formats:
                formats[code] = Format().set_num_format(code)
        # None leaves a column as General (the library takes it; its stub says Format).
        column_formats = cast("list[Format]", [None if code is None else formats[code]
                                               for code in sheet.number_formats])
        book.sheet(name, tables[name], column_formats=column_formats or None,
                   column_widths=list(sheet.widths) or None, autofilter=header)
    book.save()
