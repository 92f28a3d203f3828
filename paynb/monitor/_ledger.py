"""The monitor's memory in the journal: what was notified, and each run.

Two small tables in the journal's SQLite file, created on first use like the journal's
``match_decisions`` (``CREATE TABLE IF NOT EXISTS``; a journal made before them gets them
when the monitor first runs), written in ``BEGIN IMMEDIATE`` transactions so that two
runs sharing the file cannot interleave:

``monitor_notified``
    one row per company and finding key: the level last notified (or the milder one it
    improved to), its last title, when it was notified and last seen, when it cleared.
``monitor_runs``
    one row per company and run: when it started, the service's time it measured
    (``as_of``: the previous run's is where "new since the previous run" starts), its
    exit status, the report written, and whether the message was delivered.

Everything about these tables is in this module, so that it moves as one piece with the
journal (its schema, its connection, the SQL).
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import threading
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from paynb.monitor._news import Notified

__all__ = ["SCHEMA", "Ledger", "Run"]

SCHEMA = """
CREATE TABLE IF NOT EXISTS monitor_notified (
    company  TEXT NOT NULL,
    key      TEXT NOT NULL,
    level    TEXT NOT NULL,
    title    TEXT NOT NULL,
    notified TEXT NOT NULL,
    seen     TEXT NOT NULL,
    cleared  TEXT,
    PRIMARY KEY (company, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS monitor_runs (
    id        INTEGER PRIMARY KEY,
    company   TEXT NOT NULL,
    started   TEXT NOT NULL,
    as_of     TEXT NOT NULL,
    status    INTEGER NOT NULL,
    report    TEXT,
    delivered TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS monitor_runs_company ON monitor_runs (company, id);
"""

#: What ``delivered`` records: the message went out, there was nothing to send, it was
#: printed only (no notification configured), or sending failed.
DELIVERED = ("sent", "nothing", "printed", "failed")

_BUSY_TIMEOUT_MS = 30_000
# A journal kept in memory (``Journal(":memory:")``) has no file to open again: its
# monitor tables live in a memory database of their own, one per journal object.
_MEMORY: weakref.WeakKeyDictionary[Any, sqlite3.Connection] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _stamp(when: dt.datetime) -> str:
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.astimezone(dt.UTC).isoformat(timespec="microseconds")


def _parse(text: str | None) -> dt.datetime | None:
    return None if text is None else dt.datetime.fromisoformat(text)


@dataclass(frozen=True)
class Run:
    """One row of ``monitor_runs``."""

    company: str
    started: dt.datetime
    as_of: dt.datetime
    status: int
    report: str | None
    delivered: str


class Ledger:
    """The monitor's tables in ``journal`` (a :class:`paynb.journal.Journal`)."""

    def __init__(self, journal: Any) -> None:
        self.journal = journal
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Ledger({self.journal!r})"

    @contextmanager
    def _connection(self) -> Iterator[sqlite3.Connection]:
        path = str(self.journal.path)
        with self._lock:
            if path == ":memory:":
                with _LOCK:
                    conn = _MEMORY.get(self.journal)
                    if conn is None:
                        conn = _MEMORY[self.journal] = sqlite3.connect(
                            ":memory:", isolation_level=None, check_same_thread=False)
                        conn.executescript(SCHEMA)
                yield conn
                return
            conn = sqlite3.connect(path, isolation_level=None, timeout=_BUSY_TIMEOUT_MS / 1000)
            try:
                conn.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
                conn.executescript(SCHEMA)
                yield conn
            finally:
                conn.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._connection() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

    def notified(self, company: str) -> dict[str, Notified]:
        """The ledger rows of ``company`` by key."""
        with self._connection() as conn:
            rows = conn.execute("SELECT key, level, title, notified, seen, cleared"
                                " FROM monitor_notified WHERE company = ?", (company,)).fetchall()
        return {key: Notified(key, level, title, _parse(notified), _parse(seen),  # type: ignore[arg-type]
                              _parse(cleared))
                for key, level, title, notified, seen, cleared in rows}

    def record(self, company: str, rows: Iterable[Notified]) -> None:
        """Write (insert or replace) ledger rows of ``company``."""
        values = [(company, row.key, row.level, row.title, _stamp(row.notified),
                   _stamp(row.seen), None if row.cleared is None else _stamp(row.cleared))
                  for row in rows]
        with self._write() as conn:
            conn.executemany(
                "INSERT INTO monitor_notified (company, key, level, title, notified, seen,"
                " cleared) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (company, key) DO UPDATE"
                " SET level = excluded.level, title = excluded.title,"
                " notified = excluded.notified, seen = excluded.seen,"
                " cleared = excluded.cleared", values)

    def record_run(self, run: Run) -> None:
        """Add a run of ``run.company``."""
        if run.delivered not in DELIVERED:
            raise ValueError(f"delivered must be one of {', '.join(DELIVERED)}")
        with self._write() as conn:
            conn.execute("INSERT INTO monitor_runs (company, started, as_of, status, report,"
                         " delivered) VALUES (?, ?, ?, ?, ?, ?)",
                         (run.company, _stamp(run.started), _stamp(run.as_of), run.status,
                          run.report, run.delivered))

    def last_success(self, company: str) -> Run | None:
        """The last run of ``company`` that completed and whose message (if any) was
        delivered: where "new since the previous run" starts."""
        with self._connection() as conn:
            row = conn.execute(
                "SELECT company, started, as_of, status, report, delivered FROM monitor_runs"
                " WHERE company = ? AND status < 3 AND delivered != 'failed'"
                " ORDER BY id DESC LIMIT 1", (company,)).fetchone()
        if row is None:
            return None
        return Run(row[0], _parse(row[1]), _parse(row[2]), row[3], row[4], row[5])  # type: ignore[arg-type]

    def runs(self, company: str | None = None) -> list[Run]:
        """Every recorded run (of ``company``), oldest first."""
        where, params = (" WHERE company = ?", (company,)) if company else ("", ())
        with self._connection() as conn:
            rows = conn.execute("SELECT company, started, as_of, status, report, delivered"
                                f" FROM monitor_runs{where} ORDER BY id", params).fetchall()
        return [Run(r[0], _parse(r[1]), _parse(r[2]), r[3], r[4], r[5])  # type: ignore[arg-type]
                for r in rows]
