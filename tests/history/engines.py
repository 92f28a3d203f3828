"""Read a synced store with each engine's own reader, without paynb, as docs/history.md
shows it, and sum it up the same way: the ids, and per status the count and the exact
sum of the amounts. ``paynb_summary`` sums ``client.history`` alike."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd

IDS = {"ach": "achItemId", "rcc": "rccItemId", "instant": "uniqueId", "rtp": "uniqueId",
       "nocs": "nocId"}
STATUS = {"ach": "itemStatus", "rcc": "itemStatus", "instant": "status", "rtp": "status",
          "nocs": None}


def _summary(ids: list[Any], statuses: list[Any], amounts: list[Any]) -> dict[str, Any]:
    sums: dict[str, list[Any]] = {}
    for status, amount in zip(statuses, amounts, strict=True):
        count_sum = sums.setdefault(str(status), [0, Decimal(0)])
        count_sum[0] += 1
        if amount is not None and amount == amount:
            count_sum[1] += Decimal(str(amount))
    return {"ids": sorted(str(i) for i in ids), "count": len(ids),
            "sums": {status: tuple(v) for status, v in sorted(sums.items())}}


def _from_frame(frame: pd.DataFrame, kind: str) -> dict[str, Any]:
    status = STATUS[kind]
    statuses = frame[status].astype(object).tolist() if status else [None] * len(frame)
    amounts = frame["amount"].astype(object).tolist() if "amount" in frame else \
        [None] * len(frame)
    return _summary(frame[IDS[kind]].tolist(), statuses, amounts)


def paynb_summary(history: Any, kind: str) -> dict[str, Any]:
    return _from_frame(getattr(history, kind)(), kind)


def deltalake_summary(path: Path, kind: str) -> dict[str, Any]:
    from deltalake import DeltaTable

    return _from_frame(DeltaTable(str(path / kind)).to_pandas(), kind)


def polars_summary(path: Path, kind: str) -> dict[str, Any]:
    import polars as pl

    frame = pl.scan_delta(str(path / kind)).collect()
    status = STATUS[kind]
    statuses = frame[status].to_list() if status else [None] * frame.height
    amounts = frame["amount"].to_list() if "amount" in frame.columns else [None] * frame.height
    return _summary(frame[IDS[kind]].to_list(), statuses, amounts)


def duckdb_summary(path: Path, kind: str) -> dict[str, Any]:
    import duckdb
    from deltalake import DeltaTable

    connection = duckdb.connect()
    connection.register("items", DeltaTable(str(path / kind)).to_pyarrow_dataset())
    status = f'"{STATUS[kind]}"' if STATUS[kind] else "NULL"
    amount = '"amount"' if kind != "nocs" else "NULL"
    rows = connection.execute(f'SELECT "{IDS[kind]}", {status}, {amount} FROM items').fetchall()
    connection.close()
    return _summary([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])


def dask_summary(path: Path, kind: str) -> dict[str, Any]:
    import dask_deltatable

    frame = dask_deltatable.read_deltalake(str(path / kind)).compute()
    return _from_frame(frame, kind)


ENGINES = {"deltalake": deltalake_summary, "polars": polars_summary,
           "duckdb": duckdb_summary, "dask": dask_summary}


def assert_engines_agree(history: Any, path: Path, kinds: tuple[str, ...],
                         engines: tuple[str, ...] = ("deltalake", "polars", "duckdb")) -> None:
    """Every engine reads what ``history`` reads, for each kind whose table exists."""
    from deltalake import DeltaTable

    for kind in kinds:
        if not DeltaTable.is_deltatable(str(path / kind)):
            continue  # none, or a first commit cut short: no table for any reader
        expected = paynb_summary(history, kind)
        for engine in engines:
            assert ENGINES[engine](path, kind) == expected, (engine, kind)
