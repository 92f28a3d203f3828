"""The journal's one connection: opened per object and process, its schema brought up
to date on opening, every write one transaction that holds the write lock.

Every table of the journal (:mod:`paynb.journal._entries`, ``_polling``, ``_nocs``,
``_overrides``, ``_decisions``) declares its own statements by the schema version that
added them; :class:`Database` runs those the file lacks when it opens it, and refuses a
file written by a newer paynb.
"""

from __future__ import annotations

import logging
import os
import random
import sqlite3
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from paynb.errors import PaynbError

__all__ = ["Database", "JournalError", "Schema"]

logger = logging.getLogger("paynb.journal")

_BUSY_TIMEOUT_SECONDS = 30.0

#: Statements of the schema by the version that added them: ``{version: (sql, ...)}``.
Schema = Mapping[int, Sequence[str]]


class JournalError(PaynbError):
    """The journal file cannot be used (written by a newer paynb, unreadable, ...)."""


class Database:
    """One SQLite connection per object and process, shared by threads under a lock.

    ``schema`` holds every table's statements by version (each ``IF NOT EXISTS``, so
    that a file missing some gains them); ``path`` ``":memory:"`` keeps everything in
    this object only.
    """

    def __init__(self, path: Path, schema: Schema) -> None:
        self.path = path
        self._schema = {version: tuple(statements) for version, statements in schema.items()}
        self.version = max(self._schema)
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid = 0
        self.connection()

    def close(self) -> None:
        """Close the connection; the next call opens a new one."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def connection(self) -> sqlite3.Connection:
        """The open connection (opened, and the schema brought up to date, when needed)."""
        with self._lock:
            # A connection must not cross a fork: the child opens its own.
            if self._conn is None or self._pid != os.getpid():
                self._conn = self._open()
                self._pid = os.getpid()
            return self._conn

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction that holds the database's write lock from its start, so
        that a check and the write that depends on it cannot interleave with another
        writer's."""
        with self._lock:
            conn = self.connection()
            with _immediate(conn):
                yield conn

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """The connection, for reads that take several statements."""
        with self._lock:
            yield self.connection()

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one query."""
        with self._lock:
            return self.connection().execute(sql, params).fetchall()

    # ------------------------------------------------------------------ opening

    def _open(self) -> sqlite3.Connection:
        if str(self.path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # The file holds payment details: readable by its owner only. SQLite gives the
            # -wal and -shm files the same permissions.
            os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
        try:
            conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_SECONDS,
                                   isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_SECONDS * 1000)}")
            # A reservation must survive a power cut before the payment is sent.
            conn.execute("PRAGMA synchronous = FULL")
            self._migrate(conn)
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"cannot use the journal {self.path}: {exc}") from exc
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == self.version:
            return
        if version > self.version:
            raise JournalError(f"the journal {self.path} was written by a newer paynb "
                               f"(schema {version}, this one knows {self.version})")
        self._switch_to_wal(conn)
        with _immediate(conn):
            # Another process may have created it while this one waited for the lock.
            if conn.execute("PRAGMA user_version").fetchone()[0] < self.version:
                for statements in self._schema.values():
                    for statement in statements:
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {self.version}")

    def _switch_to_wal(self, conn: sqlite3.Connection) -> None:
        # Switching to WAL needs an exclusive lock, and SQLite answers "database is locked"
        # at once, without its busy handler, while another connection is creating the
        # same fresh file. Waiting and asking again is what the busy handler would do.
        deadline = time.monotonic() + _BUSY_TIMEOUT_SECONDS
        pause = 0.005
        while True:
            try:
                if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                    conn.execute("PRAGMA journal_mode = WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
            time.sleep(pause * (1 + random.random()))
            pause = min(pause * 2, 0.2)


@contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction that takes the database's write lock at once."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        # SQLite may already have rolled back (some errors end the transaction).
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
