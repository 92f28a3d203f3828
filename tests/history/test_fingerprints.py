"""history row fingerprints: the same values as hashing each column on its own.

``row_hash`` hashes the columns of one dtype together (a value's hash does not depend on
its neighbours); stored fingerprints were computed column by column, so the two must
agree, or every stored row would look changed to the next sync.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from paynb.history._accounts import KEY_COLUMN
from paynb.history._store import INTERNAL, table_of, with_internal
from paynb.history._sync import _PRIME, row_hash


def column_by_column(frame: pd.DataFrame) -> np.ndarray:
    """The fingerprint as first defined: one ``hash_pandas_object`` per column."""
    total = np.zeros(len(frame), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for name in frame.columns:
            if name in INTERNAL or name == KEY_COLUMN:
                continue
            column = frame[name]
            try:
                hashed = pd.util.hash_pandas_object(column, index=False).to_numpy(np.uint64)
            except TypeError:
                hashed = pd.util.hash_pandas_object(column.astype(str), index=False) \
                    .to_numpy(np.uint64)
            salt = np.uint64(int.from_bytes(name.encode("utf-8")[:8].ljust(8, b"\0"),
                                            "little") | 1)
            total += np.where(column.notna().to_numpy(), (hashed ^ salt) * np.uint64(_PRIME),
                              np.uint64(0))
    return total.view(np.int64)


@pytest.mark.parametrize("kind", ["ach", "rcc", "instant", "rtp", "nocs"])
def test_every_kind_fingerprints_as_column_by_column(client, kind):
    frame = getattr(client, kind).list(max_items=400, progress=False)
    assert len(frame) > 0
    assert (row_hash(frame) == column_by_column(frame)).all()
    # The sync takes the text columns from the table it stores: the same fingerprints.
    frame.attrs = {}
    assert (row_hash(frame, table_of(frame, {})) == column_by_column(frame)).all()


@pytest.mark.parametrize("kind", ["ach", "rcc", "instant", "rtp", "nocs"])
def test_the_stored_columns_added_to_a_table_as_if_converted_with_the_frame(client, kind):
    frame = getattr(client, kind).list(max_items=400, progress=False)
    frame.attrs = {}
    info = {"kind": kind, "company": "DEMO1", "masked": True}
    orders = np.arange(len(frame), dtype=np.int64) + 40
    hashes = row_hash(frame)
    seen = pd.Timestamp("2026-11-27T03:00:00Z").as_unit("ns")
    rows = frame.assign(_version=np.int64(3), _order=orders, _hash=hashes, _seenAt=seen)
    added = with_internal(table_of(frame, info), 3, orders, hashes, seen)
    # The same columns, types, values and metadata (pandas' and paynb's dtypes) as the
    # frame with these columns converted: files written either way are alike.
    assert added.equals(table_of(rows, info), check_metadata=True)


def test_odd_columns_fingerprint_as_column_by_column():
    frame = pd.DataFrame({
        "text": pd.Series(["a", None, "ü", ""], dtype="str"),
        "other": pd.Series(["a", "b", None, "a"], dtype="str"),
        "codes": pd.Categorical(["R01", None, "R01", "R02"]),
        "numbered": pd.Categorical([1, 2, None, 1]),   # categories of numbers
        "whole": pd.array([1, None, -3, 2**62], dtype="Int64"),
        "plain": np.array([5, 6, 7, -8], dtype=np.int64),
        "flag": pd.array([True, None, False, True], dtype="boolean"),
        "when": pd.to_datetime(["2026-11-01", None, "1999-12-31", "2030-01-01"], utc=True),
        "day": pd.to_datetime(["2026-11-01", None, "1999-12-31", "2030-01-01"]),
        "amount": pd.array([Decimal("1.50"), None, Decimal("-2.00"), Decimal("0.01")],
                           dtype=pd.ArrowDtype(pa.decimal128(18, 2))),
        # Hashed by their text: Arrow's must be str's, a zero and a big one too.
        "cents": pd.array([Decimal("0.00"), Decimal("-0.00"), Decimal("9999999999999999.99"),
                           None], dtype=pd.ArrowDtype(pa.decimal128(18, 2))),
        "fine": pd.array([Decimal("0.000001"), Decimal("0"), Decimal("-12.5"), None],
                         dtype=pd.ArrowDtype(pa.decimal128(20, 6))),
        # Written with an exponent, by str and by Arrow alike.
        "finer": pd.array([Decimal("0E-7"), Decimal("1E-7"), None, Decimal("3")],
                          dtype=pd.ArrowDtype(pa.decimal128(20, 7))),
        "whole_amount": pd.array([Decimal("7"), None, Decimal("0"), Decimal("-1")],
                                 dtype=pd.ArrowDtype(pa.decimal128(10, 0))),
        "extra": pd.Series([[1, 2], None, {"a": 1}, "x"], dtype=object),
        "ratio": [0.5, np.nan, 1.0, -2.0],
        "_hash": [1, 2, 3, 4],                            # internal: left out
    })
    assert (row_hash(frame) == column_by_column(frame)).all()
    # With the stored table: its text columns are used, not its objects' JSON text.
    assert (row_hash(frame, table_of(frame, {})) == row_hash(frame)).all()
    # The column order does not count; a column null in a row adds nothing there.
    assert (row_hash(frame[frame.columns[::-1]]) == row_hash(frame)).all()
    widened = frame.assign(new=pd.Series([None] * 4, dtype="str"))
    assert (row_hash(widened) == row_hash(frame)).all()
    changed = frame.copy()
    changed.loc[0, "text"] = "b"
    assert (row_hash(changed) != row_hash(frame)).tolist() == [True, False, False, False]


@pytest.mark.parametrize("scale", [0, 2, 6, 7, 12, 20])
def test_amounts_of_any_scale_fingerprint_as_column_by_column(scale):
    # row_hash hashes a decimal by Arrow's text of it; hash_pandas_object by str(Decimal).
    rng = np.random.default_rng(scale)
    units = [int(u) for u in rng.integers(-10**12, 10**12, size=200)] + [0, 1, -1, 10**17]
    amounts = [Decimal(u).scaleb(-scale) for u in units] + [None]
    frame = pd.DataFrame({"amount": pd.array(
        amounts, dtype=pd.ArrowDtype(pa.decimal128(38, scale)))})
    assert (row_hash(frame) == column_by_column(frame)).all()
