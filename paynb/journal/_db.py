"""The journal's one connection, to an SQLite file or a PostgreSQL database: opened per
object and process, every write one transaction that holds the lock its checks need.

Each table declares its statements by the schema version that added them, in one SQL for
both databases (the words that differ written ``{ID}``, ``{NO_ROWID}``, ``{ANY}``;
parameters ``?``); :func:`open_database` runs those a database lacks when it opens it.
"""

from __future__ import annotations

import logging
import os
import random
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from paynb._redact import HIDDEN, hide_password
from paynb.errors import JournalError

if TYPE_CHECKING:
    import psycopg

__all__ = ["Connection", "Database", "Schema", "Table", "entries_lock", "is_address",
           "open_database"]

logger = logging.getLogger("paynb.journal")

_BUSY_TIMEOUT_SECONDS = 30.0
#: Seconds to wait for a PostgreSQL server to accept a connection (unless the address
#: sets ``connect_timeout``).
CONNECT_TIMEOUT = 10
_SCHEMES = ("postgresql://", "postgres://")

#: Statements of the schema by the version that added them: ``{version: (sql, ...)}``.
Schema = Mapping[int, Sequence[str]]


def is_address(value: object) -> bool:
    """Whether ``value`` is a PostgreSQL address (``postgresql://...``) rather than a path."""
    return isinstance(value, str) and value.strip().lower().startswith(_SCHEMES)


def entries_lock(company: str, kind: str) -> str:
    """The lock (:meth:`Connection.lock`) of a company's and kind's entries: writers of
    them take turns from the duplicate guard's check to the commit."""
    return f"paynb.entries\x1f{company}\x1f{kind}"


class Cursor(Protocol):
    """What a statement gives back (the DB-API cursor of either database)."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any: ...
    def fetchall(self) -> list[Any]: ...


class Connection:
    """A connection inside one transaction (or a read), as every journal feature uses it:
    statements with ``?`` parameters, whatever the database (this class: SQLite's)."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    def _sql(self, sql: str) -> str:
        return sql

    def execute(self, sql: str, params: Sequence[Any] = ()) -> Cursor:
        """Run one statement."""
        cursor = self._conn.cursor()
        cursor.execute(self._sql(sql), tuple(params))
        return cast(Cursor, cursor)

    def executemany(self, sql: str, rows: Sequence[Sequence[Any]]) -> Cursor:
        """Run one statement for each of ``rows``; the cursor's ``rowcount`` is their sum."""
        cursor = self._conn.cursor()
        cursor.executemany(self._sql(sql), [tuple(row) for row in rows])
        return cast(Cursor, cursor)

    def lock(self, key: str) -> None:
        """Hold the lock named ``key`` until the transaction ends, so that two writers
        checking the same thing (a reference number) take turns (SQLite: nothing to do,
        ``BEGIN IMMEDIATE`` holds the file's write lock already)."""


class Database(ABC):
    """One connection per object and process, shared by threads under a lock."""

    #: ``sqlite`` or ``postgresql``.
    backend: str
    #: Where the journal is, for people: the file, or the address without its password.
    location: str
    #: The SQLite file (``None`` for a PostgreSQL database).
    path: Path | None
    #: The error a unique index raises.
    IntegrityError: type[Exception]

    #: The words of a statement that differ between the databases (see the module).
    WORDS: Mapping[str, str]
    _CONNECTION: type[Connection]

    def __init__(self, schema: Schema) -> None:
        self._schema = {version: tuple(statements) for version, statements in schema.items()}
        self.version = max(self._schema)
        self._lock = threading.RLock()
        self._pid = 0
        self._conn: Any = None

    def __repr__(self) -> str:
        return f"<journal database {self.location}>"

    @property
    @abstractmethod
    def where(self) -> str | Path:
        """What opens this database again: the file, or the whole address (with its
        password: never to be shown)."""

    def close(self) -> None:
        """Close the connection; the next call opens a new one."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    def _connection(self) -> Any:
        with self._lock:
            # A connection must not cross a fork (the child opens its own); one the server
            # closed is opened again.
            if self._conn is None or self._pid != os.getpid() or self._lost(self._conn):
                self._conn = self._open()
                self._pid = os.getpid()
            return self._conn

    def _lost(self, conn: Any) -> bool:
        return False

    @abstractmethod
    def _open(self) -> Any:
        """A new connection, its schema brought up to date."""

    @abstractmethod
    def _transaction(self, conn: Any) -> AbstractContextManager[Any]:
        """One transaction on ``conn``."""

    def _failures(self) -> AbstractContextManager[None]:
        """The database's errors as :class:`JournalError` where they need rewording."""
        return nullcontext()

    @contextmanager
    def write(self) -> Iterator[Connection]:
        """One write transaction (a :class:`Connection`) that holds the lock its checks
        need: SQLite's file write lock from its start, so that a check and the write that
        depends on it cannot interleave with another writer's; on PostgreSQL, checks that
        must not interleave take :meth:`Connection.lock`."""
        with self._lock, self._failures():
            conn = self._connection()
            with self._transaction(conn):
                yield self._CONNECTION(conn)

    @contextmanager
    def reading(self) -> Iterator[Connection]:
        """The connection, for reads of several statements."""
        with self._lock, self._failures():
            yield self._CONNECTION(self._connection())

    def check(self) -> None:
        """Open the connection now (if it is not open): :class:`JournalError` when the
        database cannot be used (unreachable, a refused password, a newer schema)."""
        with self.reading():
            pass

    def read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """The rows of one query."""
        with self.reading() as conn:
            return [tuple(row) for row in conn.execute(sql, params).fetchall()]

    def _newer(self, version: int) -> JournalError:
        return JournalError(f"the journal {self.location} was written by a newer paynb "
                            f"(schema {version}, this one knows {self.version}): upgrade "
                            "paynb to use it")

    def item_id(self, value: str | int | None) -> str | int | None:
        """An item id as this database keeps it (SQLite: as given; PostgreSQL: text)."""
        return value if self.backend == "sqlite" or value is None else str(value)

    def ddl(self, statement: str) -> str:
        """A schema statement in this database's words."""
        for word, meaning in self.WORDS.items():
            statement = statement.replace(word, meaning)
        return statement

    def _upgrade(self, conn: Any, version: int, record: Sequence[str]) -> None:
        """Inside the transaction that holds the schema's lock: refuse a schema newer than
        this paynb's, else run the statements of the versions after ``version`` and then
        ``record`` (which says this version), and say so."""
        if version > self.version:
            raise self._newer(version)
        if version == self.version:
            return
        for since in sorted(self._schema):
            if since > version:
                for statement in self._schema[since]:
                    conn.execute(self.ddl(statement))
        for statement in record:
            conn.execute(statement)
        if version:
            logger.warning("journal %s: schema %d brought up to %d (paynb before this "
                           "version cannot open it any more)", self.location, version,
                           self.version)


class Table:
    """One table of the journal, a feature on its connection (``journal.nocs``, ...)."""

    def __init__(self, db: Database) -> None:
        self._db = db


def open_database(where: str | Path, schema: Schema, *, connect: bool = True) -> Database:
    """The database at ``where``: a PostgreSQL address, else an SQLite file path
    (``":memory:"``: in this object only). ``connect=False`` connects on first use
    (:meth:`Database.check` connects at once)."""
    database = _Postgres(str(where).strip(), schema) if is_address(where) \
        else _Sqlite(Path(where), schema)
    if connect:
        database.check()
    return database


# ---------------------------------------------------------------------------- SQLite

class _Sqlite(Database):
    backend = "sqlite"
    IntegrityError = sqlite3.IntegrityError
    WORDS = {"{ID}": "INTEGER PRIMARY KEY", "{NO_ROWID}": " WITHOUT ROWID", "{ANY}": ""}
    _CONNECTION = Connection
    path: Path

    def __init__(self, path: Path, schema: Schema) -> None:
        super().__init__(schema)
        self.path = path
        self.location = str(path)

    @property
    def where(self) -> Path:
        return self.path

    def _transaction(self, conn: sqlite3.Connection) -> AbstractContextManager[None]:
        return _immediate(conn)

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
            # What is erased (a held payment's request once decided: its card number) is
            # overwritten in the file, not left in its free space.
            conn.execute("PRAGMA secure_delete = ON")
            self._migrate(conn)
        except sqlite3.DatabaseError as exc:
            raise JournalError(f"cannot use the journal {self.path}: {exc}") from exc
        return conn

    def _migrate(self, conn: sqlite3.Connection) -> None:
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version == self.version:
            return
        if version > self.version:
            raise self._newer(version)
        self._switch_to_wal(conn)
        with _immediate(conn):
            # Another process may have done it while this one waited for the lock.
            version = conn.execute("PRAGMA user_version").fetchone()[0]
            self._upgrade(conn, version, [f"PRAGMA user_version = {self.version}"])

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


# ---------------------------------------------------------------------------- PostgreSQL

# The advisory lock of schema changes (any number: paynb's own).
_SCHEMA_LOCK = 0x7061796E62  # "paynb"
_VERSION_TABLE = "paynb_schema"


class _PostgresConnection(Connection):
    def _sql(self, sql: str) -> str:
        """A statement written with ``?`` parameters, as psycopg takes them."""
        return sql.replace("%", "%%").replace("?", "%s")

    def lock(self, key: str) -> None:
        self.execute("SELECT pg_advisory_xact_lock(hashtextextended(?, 0))", (key,))


class _Address:
    """A PostgreSQL address kept out of sight: its repr hides the password, and
    :meth:`hide` takes the password out of any text (an error that quotes it)."""

    def __init__(self, value: str, password: str | None) -> None:
        self.value = value
        self._password = password

    def __repr__(self) -> str:
        return repr(hide_password(self.value))

    def hide(self, text: str) -> str:
        text = hide_password(text)
        return text.replace(self._password, HIDDEN) if self._password else text


class _Postgres(Database):
    backend = "postgresql"
    WORDS = {"{ID}": "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", "{NO_ROWID}": "",
             "{ANY}": "TEXT"}
    _CONNECTION = _PostgresConnection

    def __init__(self, address: str, schema: Schema) -> None:
        super().__init__(schema)
        try:
            import psycopg
        except ImportError:
            raise JournalError(
                f"the journal {hide_password(address)} is a PostgreSQL database, which needs "
                "psycopg: pip install 'paynb[postgresql]'") from None
        self.IntegrityError = psycopg.errors.UniqueViolation
        self._psycopg = psycopg
        self.path = None
        self.location = hide_password(address)
        try:
            given = psycopg.conninfo.conninfo_to_dict(address)
        except psycopg.ProgrammingError:
            raise JournalError(f"the journal address {self.location} is not a valid "
                               "PostgreSQL address (postgresql://user@host:port/database)"
                               ) from None
        password = given.get("password")
        self._address = _Address(address, str(password) if password else None)
        self._options: dict[str, Any] = {"autocommit": True, "application_name": "paynb"}
        if "connect_timeout" not in given:
            self._options["connect_timeout"] = CONNECT_TIMEOUT

    @property
    def where(self) -> str:
        return self._address.value

    def _lost(self, conn: psycopg.Connection[Any]) -> bool:
        return bool(conn.closed or conn.broken)

    @contextmanager
    def _failures(self) -> Iterator[None]:
        """A lost or refused server as a :class:`JournalError` naming the journal, never its
        password (psycopg's own text names the host, the port and the user)."""
        try:
            yield
        except self._psycopg.OperationalError as exc:
            raise JournalError(f"cannot use the journal {self.location}: "
                               f"{self._address.hide(str(exc)).strip()}") from None

    def _transaction(self, conn: psycopg.Connection[Any]) -> AbstractContextManager[Any]:
        return conn.transaction()

    def _open(self) -> psycopg.Connection[Any]:
        with self._failures():
            conn = self._psycopg.connect(self._address.value, **self._options)
            try:
                self._migrate(_PostgresConnection(conn), conn)
            except BaseException:
                conn.close()
                raise
        return conn

    def _migrate(self, conn: _PostgresConnection, raw: psycopg.Connection[Any]) -> None:
        found = conn.execute("SELECT to_regclass(?)", (_VERSION_TABLE,)).fetchone()[0]
        if found is not None:
            version = self._version(conn)
            if version == self.version:
                return
            if version > self.version:
                raise self._newer(version)
        with raw.transaction():
            # One process changes the schema; the others wait, then find it done.
            conn.execute(f"SELECT pg_advisory_xact_lock({_SCHEMA_LOCK})")
            conn.execute(f"CREATE TABLE IF NOT EXISTS {_VERSION_TABLE} "
                         "(version INTEGER NOT NULL)")
            self._upgrade(conn, self._version(conn), [
                f"DELETE FROM {_VERSION_TABLE}",
                f"INSERT INTO {_VERSION_TABLE} (version) VALUES ({self.version})"])

    @staticmethod
    def _version(conn: Connection) -> int:
        row = conn.execute(f"SELECT max(version) FROM {_VERSION_TABLE}").fetchone()
        return int(row[0]) if row and row[0] is not None else 0
