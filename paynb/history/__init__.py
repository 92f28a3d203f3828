"""Local history: sync the service's items once into Parquet files, then read them offline.

::

    client.sync()                                   # first run: everything; later: changes
    client.history.ach(start="2026-09-01", status="R")   # the frame client.ach.list gives
    client.history.sql("select month, count(*) from ach group by 1")
    client.history.events("ach", item_id=1234)       # W -> S -> R, with when each was seen
    paynb.History(path)                              # no client, no network

The store is plain hive-partitioned Parquet (``kind``, ``company``, ``month``), so
DuckDB, Polars, Spark and Dask read the same files; see ``docs/history.md``.
pandas, pyarrow and DuckDB load only when a store is synced or read.
"""

from __future__ import annotations

from paynb.history._reader import History, HistoryCompanyWarning
from paynb.history._store import (
    HistoryCorruptError,
    HistoryError,
    HistoryLockedError,
    default_path,
)
from paynb.history._sync import sync

__all__ = [
    "History",
    "HistoryCompanyWarning",
    "HistoryCorruptError",
    "HistoryError",
    "HistoryLockedError",
    "default_path",
    "sync",
]
