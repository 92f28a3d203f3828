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
from paynb.history._store import INTERNAL
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
        "extra": pd.Series([[1, 2], None, {"a": 1}, "x"], dtype=object),
        "ratio": [0.5, np.nan, 1.0, -2.0],
        "_hash": [1, 2, 3, 4],                            # internal: left out
    })
    assert (row_hash(frame) == column_by_column(frame)).all()
    # The column order does not count; a column null in a row adds nothing there.
    assert (row_hash(frame[frame.columns[::-1]]) == row_hash(frame)).all()
    widened = frame.assign(new=pd.Series([None] * 4, dtype="str"))
    assert (row_hash(widened) == row_hash(frame)).all()
    changed = frame.copy()
    changed.loc[0, "text"] = "b"
    assert (row_hash(changed) != row_hash(frame)).tolist() == [True, False, False, False]
