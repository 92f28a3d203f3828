"""paynb's one Excel reader and writer (paynb._excel): every cell by its column's rule."""

from __future__ import annotations

import datetime as dt
import io
import zipfile
from decimal import Decimal
from pathlib import Path

import openpyxl
import pandas as pd
import pyarrow as pa
import pytest

from benchmarks._data import ach_records
from paynb import frames
from paynb._excel import (
    MAX_ROWS,
    MONEY_FORMAT,
    excel_bytes,
    read_excel,
    read_export_sheet,
    sheet_name,
    write_excel,
)
from paynb._xlsx import MAX_TEXT, Sheet, write_workbook


def _sheet(content: bytes, name: str | None = None):
    book = openpyxl.load_workbook(io.BytesIO(content))
    return book[name] if name else book.worksheets[0]


def _cells(sheet, column: str) -> list:
    header = [c.value for c in sheet[1]]
    return [row[header.index(column)] for row in sheet.iter_rows(min_row=2)]


def _sheet_xml(content: bytes) -> str:
    return zipfile.ZipFile(io.BytesIO(content)).read("xl/worksheets/sheet1.xml").decode()


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


def test_a_typed_frame_comes_back_through_excel_as_through_csv(tmp_path: Path) -> None:
    frame = frames.to_frame(ach_records(300), "ach")
    path = tmp_path / "ach.xlsx"
    write_excel(path, {"ach": frame})
    back = frames.to_frame(read_excel(path), "ach")
    through_csv = frames.to_frame(pd.read_csv(io.StringIO(frame.to_csv(index=False)), dtype=str,
                                              keep_default_na=False, na_values=[""]), "ach")
    pd.testing.assert_frame_equal(back, through_csv)
    # Every value as it was, but empty text: an empty cell, as in CSV (Excel shows no
    # difference; the Rust writer writes no empty text cell). Objects (iatAddenda, none
    # here) come back as their JSON text, as from a CSV export.
    assert (frame["achAddendaText"] == "").any()
    assert back["iatAddenda"].isna().all() and frame["iatAddenda"].isna().all()
    texts = frame.select_dtypes(include="string").columns
    expected = frame.assign(**{c: frame[c].replace("", None) for c in texts})
    pd.testing.assert_frame_equal(back.drop(columns="iatAddenda"),
                                  expected.drop(columns="iatAddenda"))


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
    with pytest.raises(ValueError, match="not a readable xlsx workbook"):
        read_export_sheet(b"PK\x03\x04 not really a zip", "ach")


def _typed_as_text(content: bytes, kind: str = "ach") -> bool:
    """Whether the export was read with typed cells; either way, its frame is the one its
    cells read as text give."""
    sheet = read_export_sheet(content, kind)
    pd.testing.assert_frame_equal(frames.to_frame(sheet, kind),
                                  frames.to_frame(read_excel(content), kind))
    return _has_typed_cells(sheet)


def _has_typed_cells(sheet: pa.Table) -> bool:
    return not all(pa.types.is_string(t) or pa.types.is_null(t) for t in sheet.schema.types)


def test_an_export_is_read_with_typed_cells_into_the_frame_its_text_gives(
        caplog: pytest.LogCaptureFixture) -> None:
    frame = frames.to_frame(ach_records(300), "ach")
    assert frame["iatAddenda"].isna().all()  # an empty column: its type is no guess
    assert _typed_as_text(excel_bytes({"ach": frame}))
    assert not [r for r in caplog.records if r.name.startswith("fastexcel")]


def _workbook(rows: list[list[object]]) -> bytes:
    book = openpyxl.Workbook()
    for row in [["achItemId", "amount", "settleDate", "sameDayAchRequested", "zip",
                 "itemStatus", "extraCount"], *rows]:
        book.active.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


_ROW = [22, 10.5, dt.datetime(2026, 11, 23, 10, 5, 3, 123000), True, "02134", "S", "n/a"]


@pytest.mark.parametrize(("column", "odd", "typed"), [
    ("amount", None, True),                                    # a blank cell
    ("amount", 48.160000000000004, True),                      # cents summed in floats
    ("amount", 1.005, True),                                   # three decimals: as text
    ("amount", 2.0**23, True),                                 # floats' bits show in text
    ("settleDate", dt.datetime(2026, 11, 24), True),           # a midnight among times
    ("achItemId", "00123", False),                             # text among numbers
    ("achItemId", 22.5, True),                                 # no whole number
    ("achItemId", 2**53 + 2, True),                            # beyond a float's whole numbers
    ("amount", "abc", False),
    ("amount", 1e13, True),
    ("settleDate", "2026-11-23T10:00:00Z", False),             # ISO text among times
    ("settleDate", dt.datetime(9999, 12, 31), False),          # beyond what pandas holds
    ("sameDayAchRequested", "yes", False),
    ("zip", 2134, False),                                      # a number among texts: mixed
    ("extraCount", 7, True),                                   # numbers in an unknown field
    ("extraCount", 1e20, True),                                # printed without exponent
    ("extraCount", 1e-7, True),
    ("extraCount", -0.0, True),
    ("extraCount", 1 / 3, True),                               # nine decimals
    ("extraCount", 0.1 + 0.2, True),
    ("sameDayAchRequested", 2, False),                         # a number among flags: mixed
])
def test_an_odd_cell_comes_out_as_its_text_would(column: str, odd: object, typed: bool) -> None:
    """Typed cells only where a column is text or the type its field takes, nothing
    lost; a column of numbers or flags that is not as its text (``typed``: the others
    stay typed); a column mixing types, or times to be read as text, sends the whole
    sheet to its text. Either way the frame is the one the sheet's text gives."""
    odd_row = list(_ROW)
    odd_row[["achItemId", "amount", "settleDate", "sameDayAchRequested", "zip", "itemStatus",
             "extraCount"].index(column)] = odd
    other = column == "extraCount" and [[*_ROW[:-1], 8]] or [_ROW]
    assert _typed_as_text(_workbook([*other, odd_row])) is typed


def test_a_typed_sheet_keeps_the_values_exact() -> None:
    content = _workbook([_ROW, [123456789012, 0.1 + 0.2, None, False, None, "R", None]])
    sheet = read_export_sheet(content, "ach")
    assert _has_typed_cells(sheet)
    frame = frames.to_frame(sheet, "ach")
    assert frame["achItemId"].tolist() == [22, 123456789012]
    assert frame["amount"].tolist() == [Decimal("10.50"), Decimal("0.30")]
    assert frame["settleDate"].iloc[0] == pd.Timestamp("2026-11-23T10:05:03.123Z")
    assert frame["sameDayAchRequested"].tolist() == [True, False]
    assert frame["zip"].iloc[0] == "02134" and pd.isna(frame["zip"].iloc[1])


def test_a_sheet_read_as_text_is_still_an_arrow_table_typed_as_its_frame(
        caplog: pytest.LogCaptureFixture) -> None:
    # An odd cell sends the whole sheet to its text; the frame builder still reads the
    # text as Arrow (no pandas frame in between), flags included, with the same values
    # and the same warning as from read_excel's frame.
    cells = [True, False, 1, 0, 2, "yes", " No ", "TRUE", "", " ", "maybe", None, 0.5]
    content = _workbook([[number, 10.5, None, cell, "02134", "S", None]
                         for number, cell in enumerate(cells)])
    sheet = read_export_sheet(content, "ach")
    assert isinstance(sheet, pa.Table) and not _has_typed_cells(sheet)
    with caplog.at_level("WARNING", logger="paynb"):
        from_sheet = frames.to_frame(sheet, "ach")
    told = [r.getMessage() for r in caplog.records]
    caplog.clear()
    with caplog.at_level("WARNING", logger="paynb"):
        from_frame = frames.to_frame(read_excel(content), "ach")
    pd.testing.assert_frame_equal(from_sheet, from_frame)
    assert told == [r.getMessage() for r in caplog.records]
    assert from_sheet["sameDayAchRequested"].tolist() == [
        True, False, True, False, pd.NA, True, False, True, pd.NA, pd.NA, pd.NA, pd.NA, pd.NA]
    assert any("3 values are not true or false" in m for m in told)  # 2, maybe, 0.5


def test_typed_number_and_flag_cells_print_as_fastexcel_prints_their_text() -> None:
    # paynb prints the typed cells of a column to be read as text itself (no second
    # parse of the sheet); this holds it to fastexcel's own text of the same cells.
    import random

    from paynb._excel import _text_sheet, _typed_cells_text

    draw = random.Random(32)
    numbers = [22, 1.5, 0.1, 0.1 + 0.2, 1e20, 1e-7, 123456789012, 2**53 + 2, -0.0, 1 / 3,
               48.160000000000004, 1e16, 5e-324, 1.7976931348623157e308, -1e-10, 5e-10,
               1.5e-9, 2.5e-9, 123.4560000001, -731271.5117751976, None]
    numbers += [draw.uniform(-1e6, 1e6) for _ in range(2000)]
    numbers += [round(draw.uniform(0, 1e5), 2) for _ in range(2000)]
    numbers += [draw.uniform(-1, 1) * 10 ** draw.randint(-12, 22) for _ in range(2000)]
    flags = [[True, False, None][i % 3] for i in range(len(numbers))]
    whole = [i * 1000 for i in range(len(numbers))]
    book = openpyxl.Workbook()
    book.active.append(["number", "flag", "whole"])
    for row in zip(numbers, flags, whole, strict=True):
        book.active.append(list(row))
    out = io.BytesIO()
    book.save(out)
    import fastexcel

    typed = pa.Table.from_batches([fastexcel.read_excel(out.getvalue()).load_sheet(
        0, dtype_coercion="strict", schema_sample_rows=None).to_arrow()])
    text = _text_sheet(out.getvalue())
    assert [typed.schema.field(c).type for c in ("number", "flag")] == [pa.float64(),
                                                                        pa.bool_()]
    for column in ("number", "flag", "whole"):
        assert _typed_cells_text(typed.column(column)).to_pylist() == \
            text.column(column).to_pylist(), column


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


def test_ids_are_whole_numbers_shown_whole_never_scientific() -> None:
    frame = pd.DataFrame({
        "achItemId": pd.array([123456789012, 22, None], dtype="Int64"),
        "merchantId": [310_001, 2**40, 7],  # numpy int64
        "ledgerRef": pd.Series([987654321098, None, 5], dtype=object),  # Python ints
    })
    content = excel_bytes({"ids": frame})
    sheet = _sheet(content)
    for name, expected in [("achItemId", [123456789012, 22, None]),
                           ("merchantId", [310_001, 2**40, 7]),
                           ("ledgerRef", [987654321098, None, 5])]:
        cells = _cells(sheet, name)
        assert [c.value for c in cells] == expected, name
        assert {(c.data_type, c.number_format) for c in cells if c.value is not None} == {
            ("n", "0")}, name
    assert "E+" not in _sheet_xml(content)
    assert read_excel(content)["achItemId"].tolist()[:2] == ["123456789012", "22"]


def test_text_that_looks_like_a_formula_stays_text() -> None:
    looks = ["=1+1", '=HYPERLINK("http://example.com","x")', "+1", "-2", "@SUM(A1)", "=A1"]
    frame = pd.DataFrame({"name": looks, "memo": pd.Series(looks, dtype=object),
                          "mixed": pd.Series(["=1+1", 5, None, {"a": "=1"}, 2.5, "x"],
                                             dtype=object)})
    content = excel_bytes({"t": frame})
    sheet = _sheet(content)
    for name in ("name", "memo"):
        assert [(c.value, c.data_type) for c in _cells(sheet, name)] == [
            (text, "s") for text in looks]
    # A column of mixed objects: each value as its text (objects as JSON).
    assert [c.value for c in _cells(sheet, "mixed")] == [
        "=1+1", "5", None, '{"a": "=1"}', "2.5", "x"]
    assert "<f>" not in _sheet_xml(content)  # no formula anywhere in the sheet


def test_times_keep_their_milliseconds_and_early_ones_are_text() -> None:
    frame = pd.DataFrame({
        "sendDate": pd.to_datetime(["2025-06-11T20:50:04.032Z", None], utc=True),
        "arrow": pd.array([pd.Timestamp("2026-11-23T00:00:00Z"), None],
                          dtype=pd.ArrowDtype(pa.timestamp("us", tz="UTC"))),
        "stamps": pd.Series([pd.Timestamp("2026-11-23T05:00:00+05:00"), None], dtype=object),
        "days": pd.Series([dt.date(2026, 11, 19), None], dtype=object),
        "born": pd.to_datetime(["1899-12-31", "2000-01-01T10:00"], format="ISO8601"),
    })
    sheet = _sheet(excel_bytes({"t": frame}))
    send = _cells(sheet, "sendDate")[0]
    assert send.value == dt.datetime(2025, 6, 11, 20, 50, 4, 32000)
    assert send.number_format == "yyyy-mm-dd hh:mm:ss"
    arrow = _cells(sheet, "arrow")
    assert (arrow[0].value, arrow[0].number_format, arrow[1].value) == (
        dt.datetime(2026, 11, 23), "yyyy-mm-dd", None)
    stamp = _cells(sheet, "stamps")[0]  # 05:00 at +05:00 is midnight UTC
    assert (stamp.value, stamp.number_format) == (dt.datetime(2026, 11, 23), "yyyy-mm-dd")
    day = _cells(sheet, "days")[0]
    assert (day.value, day.number_format) == (dt.datetime(2026, 11, 19), "yyyy-mm-dd")
    # Excel's calendar is wrong before 1900-03-01: such a column is ISO text.
    assert [(c.value, c.data_type) for c in _cells(sheet, "born")] == [
        ("1899-12-31T00:00:00", "s"), ("2000-01-01T10:00:00", "s")]


def test_odd_numbers_have_no_invented_values() -> None:
    frame = pd.DataFrame({
        "ledger": pd.Series([Decimal("12.5"), Decimal("NaN"), Decimal("Infinity")],
                            dtype=object),
        "ratio": [1.5, float("nan"), -float("inf")],
    })
    sheet = _sheet(excel_bytes({"t": frame}))
    ledger = _cells(sheet, "ledger")
    assert [c.value for c in ledger] == [12.5, None, None]
    assert ledger[0].number_format == "#,##0.00"
    # Excel holds no infinity: the cell says so in text rather than going empty.
    assert [(c.value, c.data_type) for c in _cells(sheet, "ratio")] == [
        (1.5, "n"), (None, "n"), ("-INF", "s")]


def test_header_widths_and_formats_in_every_sheet() -> None:
    first = pd.DataFrame({"name": ["A" * 30, "B"], "rate": [0.125, 0.5],
                          "amount": [1234.5, 2.0]})
    second = pd.DataFrame({"rate": [0.25], "a very long column name here": [1]})
    sheets = openpyxl.load_workbook(io.BytesIO(excel_bytes(
        {"first": first, "rates/2026": second, "RATES_2026": second},
        formats={"rate": "0.00%", "amount": MONEY_FORMAT})))
    assert sheets.sheetnames == ["first", "rates_2026", "RATES_2026 (2)"]
    one, two = sheets["first"], sheets["RATES_2026 (2)"]
    for sheet in (one, two):
        assert all(cell.font.b for cell in sheet[1])
        assert sheet.freeze_panes == "A2"
    assert one.auto_filter.ref == "A1:C3" and two.auto_filter.ref == "A1:B2"
    assert [c.number_format for c in _cells(one, "rate")] == ["0.00%", "0.00%"]
    assert _cells(one, "amount")[0].number_format == "#,##0.00"
    assert _cells(two, "rate")[0].number_format == "0.00%"
    # Widths: the longest of the header and the first values, two characters more.
    assert round(one.column_dimensions["A"].width) == 33
    assert round(one.column_dimensions["B"].width) == 15  # a number column: 12 + 2
    assert round(two.column_dimensions["B"].width) == 31


def test_text_longer_than_a_cell_is_refused_naming_the_sheet_and_column() -> None:
    frame = pd.DataFrame({"memo": ["x" * (MAX_TEXT + 1)]})
    with pytest.raises(ValueError, match="sheet 'notes', column 'memo'.*32,767.*write CSV"):
        excel_bytes({"notes": frame})


def test_the_table_writer_refuses_a_column_it_would_leave_empty() -> None:
    table = pa.table({"tags": pa.array([["a"], ["b"]])})
    with pytest.raises(ValueError, match="sheet 'x', column 'tags': no Excel cell for"):
        write_workbook(io.BytesIO(), {"x": Sheet(table)})


def test_the_table_writer_writes_arrow_decimals_as_numbers_under_a_plain_header() -> None:
    table = pa.table({"amount": pa.array([Decimal("10.51"), None], pa.decimal128(12, 2)),
                      "itemId": pa.array([123456789012, 5])})
    out = io.BytesIO()
    write_workbook(out, {"ach": Sheet(table)}, header=False)
    sheet = _sheet(out.getvalue())
    assert [c.value for c in _cells(sheet, "amount")] == [10.51, None]
    assert [c.value for c in _cells(sheet, "itemId")] == [123456789012, 5]
    assert not sheet["A1"].font.b and sheet.freeze_panes is None and not sheet.auto_filter.ref
