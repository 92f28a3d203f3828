"""Local history: sync the service's items once into Delta tables, then read them offline.

::

    client.sync()                                   # first run: everything; later: changes
    client.history.ach(start="2026-09-01", status="R")   # the frame client.ach.list gives
    client.history.ach(as_of="2026-11-03")          # what the history held on 3 November
    client.history.sql("select month, count(*) from ach group by 1")
    client.history.events("ach", item_id=1234)       # W -> S -> R, with when each was seen
    paynb.History(path)                              # no client, no network

The store is a Delta table per kind (one row per item) and one of events, so deltalake,
DuckDB, Polars, Dask and Spark read the same tables; a folder or object storage
(``s3://``, ``gs://``, ``az://``); see ``docs/history.md``. It needs the ``history``
extra (deltalake, DuckDB), loaded only when a store is synced or read.
"""

from __future__ import annotations

from paynb.errors import (
    HistoryCompanyWarning,
    HistoryCorruptError,
    HistoryError,
    HistoryLockedError,
    HistoryWarning,
)
from paynb.history._reader import History
from paynb.history._store import default_path
from paynb.history._sync import HistoryPlace, sync

__all__ = [
    "History",
    "HistoryCompanyWarning",
    "HistoryCorruptError",
    "HistoryError",
    "HistoryLockedError",
    "HistoryPlace",
    "HistoryWarning",
    "default_path",
    "sync",
]
