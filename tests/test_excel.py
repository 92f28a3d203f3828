"""paynb's one Excel reader and writer (paynb._excel): every cell by its column's rule."""

from __future__ import annotations

import datetime as dt
import io
from decimal import Decimal
from pathlib import Path

import openpyxl
import pandas as pd
import pyarrow as pa
import pytest

from benchmarks._data import ach_records
from paynb import frames
from paynb._excel import MAX_ROWS, excel_bytes, read_excel, sheet_name, write_excel


def _sheet(content: bytes, name: str | None = None):
    book = openpyxl.load_workbook(io.BytesIO(content))
    return book[name] if name else book.worksheets[0]


def _cells(sheet, column: str) -> list:
    header = [c.value for c in sheet[1]]
    return [row[header.index(column)] for row in sheet.iter_rows(min_row=2)]


def test_amounts_are_numbers_with_two_decimals_whatever_holds_them() -> None:
    frame = pd.DataFrame({
        "exact": pd.array([Decimal("83.73"), None, Decimal("1250.00")],
                          dtype=pd.ArrowDtype(pa.decimal128(18, 2))),
        # An analyst's own column of Decimal objects: numbers too, never the text '83.73'.
        "ledger": pd.Series([Decimal("83.73"), Decimal("0.10"), None], dtype=object),
        "cents": pd.array([Decimal("1.125"), None, None],
                          dtype=pd.ArrowDtype(pa.decimal128(19, 3))),
        "wire": pd.array([2500, None, 7], dtype="Int64"),
    })
    sheet = _sheet(excel_bytes({"amounts": frame}))
    exact, ledger = _cells(sheet, "exact"), _cells(sheet, "ledger")
    assert [c.value for c in exact] == [83.73, None, 1250]
    assert [c.value for c in ledger] == [83.73, 0.1, None]
    assert {c.data_type for c in exact + ledger if c.value is not None} == {"n"}
    assert {c.number_format for c in exact + ledger if c.value is not None} == {"#,##0.00"}
    assert _cells(sheet, "cents")[0].number_format == "#,##0.000"
    wire = _cells(sheet, "wire")
    assert [c.value for c in wire] == [2500, None, 7] and wire[0].number_format == "0"


def test_times_are_dates_where_a_column_holds_only_midnights() -> None:
    frame = pd.DataFrame({
        "settleDate": pd.to_datetime(["2026-11-23", None, "2026-11-24"], utc=True),
        "receivedDateTime": pd.to_datetime(["2026-11-23T21:05:03Z", "2026-11-24T00:00:00Z", None],
                                           utc=True),
        "naive": pd.to_datetime(["2026-11-23", "2026-11-24", None]),
        "due": pd.array([dt.date(2026, 11, 19), None, dt.date(2026, 11, 20)],
                        dtype=pd.ArrowDtype(pa.date32())),
    })
    sheet = _sheet(excel_bytes({"times": frame}))
    settle = _cells(sheet, "settleDate")
    assert [c.value for c in settle] == [dt.datetime(2026, 11, 23), None,
                                         dt.datetime(2026, 11, 24)]
    assert settle[0].number_format == "yyyy-mm-dd"
    received = _cells(sheet, "receivedDateTime")
    assert received[0].value == dt.datetime(2026, 11, 23, 21, 5, 3)
    assert received[1].number_format == "yyyy-mm-dd hh:mm:ss"  # one time of day: all times
    assert _cells(sheet, "naive")[0].number_format == "yyyy-mm-dd"
    due = _cells(sheet, "due")
    assert due[2].value == dt.datetime(2026, 11, 20) and due[2].number_format == "yyyy-mm-dd"


def test_text_stays_text_objects_become_json_and_missing_is_empty() -> None:
    frame = pd.DataFrame({
        "note": ["=1+1", None, "0123"],
        "status": pd.Categorical(["W", None, "R"]),
        "iatAddenda": [{"transactionTypeCode": "ANN"}, None, None],
        "flag": pd.array([True, None, False], dtype="boolean"),
    })
    sheet = _sheet(excel_bytes({"t": frame}))
    assert [(c.value, c.data_type) for c in _cells(sheet, "note")] == [
        ("=1+1", "s"), (None, "n"), ("0123", "s")]
    assert [c.value for c in _cells(sheet, "status")] == ["W", None, "R"]
    assert _cells(sheet, "iatAddenda")[0].value == '{"transactionTypeCode": "ANN"}'
    assert [c.value for c in _cells(sheet, "flag")] == [True, None, False]
    assert sheet.freeze_panes == "A2" and sheet.auto_filter.ref == "A1:D4"


def test_a_typed_frame_comes_back_the_same_through_excel(tmp_path: Path) -> None:
    frame = frames.to_frame(ach_records(300), "ach")
    path = tmp_path / "ach.xlsx"
    write_excel(path, {"ach": frame})
    back = frames.to_frame(read_excel(path), "ach")
    # Objects (iatAddenda, none here) come back as their JSON text, as from a CSV export.
    assert back["iatAddenda"].isna().all() and frame["iatAddenda"].isna().all()
    pd.testing.assert_frame_equal(back.drop(columns="iatAddenda"),
                                  frame.drop(columns="iatAddenda"))


def test_read_excel_gives_text_cells_like_read_csv() -> None:
    frame = pd.DataFrame({"id": [22, 123456789012], "zip": ["02134", None],
                          "amount": [1250.5, 0.1]})
    read = read_excel(excel_bytes({"s": frame}))
    assert read["id"].tolist() == ["22", "123456789012"]
    assert read["zip"].iloc[0] == "02134" and pd.isna(read["zip"].iloc[1])
    assert read["amount"].tolist() == ["1250.5", "0.1"]


def test_a_broken_workbook_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="not a readable xlsx workbook"):
        read_excel(b"PK\x03\x04 not really a zip")


def test_sheet_names_are_made_valid_and_unique() -> None:
    taken: set[str] = set()
    first = sheet_name("unmatched: expected/items [2026]", taken)
    taken.add(first)
    assert first == "unmatched_ expected_items _2026"[:31]
    assert sheet_name("UNMATCHED_ EXPECTED_ITEMS _2026", taken).endswith(" (2)")
    assert sheet_name("   ", set()) == "Sheet"


def test_a_frame_larger_than_a_sheet_is_refused_naming_it() -> None:
    frame = pd.DataFrame({"n": range(MAX_ROWS)})
    with pytest.raises(ValueError, match="sheet 'big' has 1,048,576 rows.*write CSV"):
        excel_bytes({"big": frame})
