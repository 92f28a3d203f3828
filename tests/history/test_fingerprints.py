"""history row fingerprints: the same values as hashing each column on its own.

``fingerprints`` hashes the text columns together (a value's hash does not depend on
its neighbours); the definition is column by column, so the two must agree, and a row's
fingerprint must not depend on the batch it came in, or every stored row would look
changed to the next sync.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from paynb.frames import as_stored
from paynb.history._index import _PRIME, fingerprints
from paynb.history._store import INTERNAL, KEY_COLUMN


def column_by_column(table: pa.Table) -> np.ndarray:
    """The fingerprint as defined: each column's values hashed on their own (texts and
    decimals by their text), mixed with the column's name, nulls left out, summed."""
    total = np.zeros(table.num_rows, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for name in table.column_names:
            if name in (*INTERNAL, KEY_COLUMN, "company", "month"):
                continue
            column = table.column(name)
            if pa.types.is_string(column.type) or pa.types.is_decimal(column.type):
                values = np.array([None if v is None else str(v) for v in column.to_pylist()],
                                  dtype=object)
                values[pd.isna(values)] = ""
            elif pa.types.is_floating(column.type):
                values = column.fill_null(0.0).to_numpy()
            else:  # whole numbers, times, booleans: their 64-bit values
                values = np.array([0 if v is None else int(v) for v in
                                   column.cast(pa.int64()).to_pylist()], dtype=np.int64)
            hashed = pd.util.hash_array(values, categorize=False)
            salt = np.uint64(int.from_bytes(name.encode("utf-8")[:8].ljust(8, b"\0"),
                                            "little") | 1)
            total += np.where(column.is_valid().to_numpy(zero_copy_only=False),
                              (hashed ^ salt) * np.uint64(_PRIME), np.uint64(0))
    return total.view(np.int64)


@pytest.mark.parametrize("kind", ["ach", "rcc", "instant", "rtp", "nocs"])
def test_every_kind_fingerprints_as_column_by_column_and_by_batch(client, kind):
    frame = getattr(client, kind).list(max_items=400, progress=False)
    assert len(frame) > 1
    table = as_stored(frame)
    hashes = fingerprints(table)
    assert (hashes == column_by_column(table)).all()
    half = len(frame) // 2
    parts = [fingerprints(as_stored(part.reset_index(drop=True)))
             for part in (frame.iloc[:half], frame.iloc[half:])]
    assert (np.concatenate(parts) == hashes).all()


def test_odd_columns_fingerprint_as_column_by_column():
    frame = pd.DataFrame({
        "text": pd.Series(["a", None, "ü", ""], dtype="str"),
        "other": pd.Series(["a", "b", None, "a"], dtype="str"),
        "codes": pd.Categorical(["R01", None, "R01", "R02"]),
        "whole": pd.array([1, None, -3, 2**62], dtype="Int64"),
        "plain": np.array([5, 6, 7, -8], dtype=np.int64),
        "flag": pd.array([True, None, False, True], dtype="boolean"),
        "when": pd.to_datetime(["2026-11-01", None, "1999-12-31", "2030-01-01"], utc=True),
        "day": pd.to_datetime(["2026-11-01", None, "1999-12-31", "2030-01-01"]),
        "amount": pd.array([Decimal("1.50"), None, Decimal("-2.00"), Decimal("0.01")],
                           dtype=pd.ArrowDtype(pa.decimal128(18, 2))),
        "extra": pd.Series([[1, 2], None, {"a": 1}, "x"], dtype=object),
        "ratio": [0.5, np.nan, 1.0, -2.0],
        "_hash": [1, 2, 3, 4],                            # paynb's own: left out
    })
    table = as_stored(frame)
    assert (fingerprints(table) == column_by_column(table)).all()
    # The column order does not count; a column null in a row adds nothing there.
    assert (fingerprints(table.select(table.column_names[::-1])) == fingerprints(table)).all()
    widened = table.append_column("new", pa.nulls(4, pa.string()))
    assert (fingerprints(widened) == fingerprints(table)).all()
    changed = frame.copy()
    changed.loc[0, "text"] = "b"
    assert (fingerprints(as_stored(changed)) != fingerprints(table)).tolist() == \
        [True, False, False, False]
    # A row's fingerprint is the same in a batch without the others' nulls.
    for row in range(4):
        alone = as_stored(frame.iloc[[row]].reset_index(drop=True))
        assert fingerprints(alone)[0] == fingerprints(table)[row]
    # A zone-less time is a UTC instant: the same fingerprint as the instant.
    utc = frame.assign(day=frame["day"].dt.tz_localize("UTC"))
    assert (fingerprints(as_stored(utc)) == fingerprints(table)).all()
