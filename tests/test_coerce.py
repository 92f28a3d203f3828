"""The one decimal parser and the one ``missing``, at their edges, and the two readings
built on the parser: a request's amount (``validation.to_decimal``) and what the frames
read from the service (``frames``: a ``$`` too)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

from paynb import frames
from paynb._coerce import arrow_frame, missing, parse_decimal, records
from paynb.validation import to_decimal

NOT_A_NUMBER = ValueError


@pytest.mark.parametrize(("given", "parsed", "request_amount", "frame_amount"), [
    ("1e3", Decimal("1E+3"), Decimal("1000"), Decimal("1000.00")),
    (" 12.30 ", Decimal("12.30"), Decimal("12.30"), Decimal("12.30")),
    ("1,250.00", Decimal("1250.00"), Decimal("1250.00"), Decimal("1250.00")),
    # A decimal comma is not read as a thousands separator (that would be 1230).
    ("12,30", NOT_A_NUMBER, None, None),
    ("1,2,3", NOT_A_NUMBER, None, None),
    (Decimal("NaN"), None, None, None),
    (Decimal("Infinity"), Decimal("Infinity"), None, None),
    (0.1, Decimal("0.1"), Decimal("0.1"), Decimal("0.10")),
    (np.float64(0.1), Decimal("0.1"), Decimal("0.1"), Decimal("0.10")),
    (float("nan"), None, None, None),
    (12, Decimal(12), Decimal(12), Decimal("12.00")),
    (np.int64(12), Decimal(12), Decimal(12), Decimal("12.00")),
    (True, NOT_A_NUMBER, None, None),
    (None, None, None, None),
    ("", None, None, None),
    ("   ", None, None, None),
    ("lots", NOT_A_NUMBER, None, None),
    (["12"], NOT_A_NUMBER, None, None),
    # A $ is read in what the service sends (an export's cell), never in a request.
    ("$1,250.00", NOT_A_NUMBER, None, Decimal("1250.00")),
])
def test_the_one_decimal_parser_and_its_two_readings(given, parsed, request_amount,
                                                     frame_amount) -> None:
    if parsed is NOT_A_NUMBER:
        with pytest.raises(ValueError):
            parse_decimal(given)
    else:
        found = parse_decimal(given)
        assert found == parsed and (found is None or str(found) == str(parsed))
    assert to_decimal(given) == request_amount
    column = frames.to_frame([{"achItemId": 1, "amount": given}], "ach")["amount"]
    shown = column.iloc[0]
    assert (None if pd.isna(shown) else shown) == frame_amount


def test_a_float_is_read_as_the_text_it_was_typed_as() -> None:
    assert parse_decimal(0.1 + 0.2) == Decimal("0.30000000000000004")
    assert parse_decimal(125.1) == Decimal("125.1")
    assert parse_decimal("$12", currency_sign=True) == Decimal("12")


@pytest.mark.parametrize("value", [None, float("nan"), np.nan, pd.NA, pd.NaT,
                                   Decimal("NaN"), np.datetime64("NaT")])
def test_missing_values(value) -> None:
    assert missing(value)


@pytest.mark.parametrize("value", ["", " ", 0, 0.0, False, Decimal(0), [], {}, "NaN",
                                   np.array([1.0, np.nan])])
def test_present_values(value) -> None:
    assert not missing(value)


def test_records_are_the_rows_to_dict_gives() -> None:
    """The column-by-column rows equal ``to_dict("records")``'s, value and type, on the
    dtypes paynb's frames hold (Arrow text and integers, nullable, times, Decimal)."""
    frame = pd.DataFrame({
        "nocId": pd.array([1, None, 3], dtype="int64[pyarrow]"),
        "code": pd.array(["C01", None, "C02"], dtype="string[pyarrow]"),
        "status": pd.Categorical(["R", "S", None]),
        "when": pd.to_datetime(["2026-11-27T10:00:00Z", None, "2026-11-28T00:00:00Z"]),
        "amount": [Decimal("12.30"), None, Decimal("0.10")],
        "count": pd.array([1, 2, None], dtype="Int64"),
        "flag": pd.array([True, None, False], dtype="bool[pyarrow]"),
        "share": [0.5, float("nan"), 1.0],
        7: ["x", "y", "z"],  # a column named by a number keeps its name, as in to_dict
    })
    expected = frame.to_dict("records")
    got = records(frame)
    assert len(got) == 3
    for want, row in zip(expected, got, strict=True):
        assert list(row) == list(want)
        for name, value in want.items():
            assert type(row[name]) is type(value), name
            assert missing(row[name]) if missing(value) else row[name] == value, name
    # Empty cells of nullable columns are None, as to_dict gives them (not pd.NA).
    assert [got[1][name] for name in ("nocId", "code", "amount")] == [None, None, None]
    assert got[2]["count"] is None and got[2]["status"] != got[2]["status"]
    assert records(frame.iloc[:0]) == []
    assert records(pd.DataFrame(index=range(2))) == [{}, {}]


def test_arrow_frame_keeps_amounts_exact_and_gaps_in_whole_numbers() -> None:
    import pyarrow as pa

    table = pa.table({
        "amount": pa.array([Decimal("0.10"), None], pa.decimal128(18, 2)),
        "count": pa.array([1, None], pa.int64()),
        "n": pa.array([1, 2], pa.int64()),
        "day": pa.array([dt.date(2026, 11, 27), None], pa.date32())})
    frame = arrow_frame(table)
    assert frame["amount"].tolist()[0] == Decimal("0.10")
    assert str(frame["count"].dtype) == "Int64" and frame["count"].tolist()[0] == 1
    assert frame["n"].dtype == "int64"
    assert frame["day"].dtype.kind == "M" and frame["day"].iloc[0] == pd.Timestamp("2026-11-27")
