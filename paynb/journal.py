"""The journal: an SQLite audit log of submissions and voids, the duplicate guard, and
the watermarks of ``changes()`` polling.

Every submission, bulk and void is recorded *before* it is sent (state ``pending``)
and settled with the service's answer afterwards:

- ``sent``      the service accepted it (item id and status recorded);
- ``rejected``  the service refused it (400): nothing was stored, it may be sent again;
- ``failed``    it never left (an error before sending): it may be sent again;
- ``unknown``   it left but no answer came back: it may or may not be stored, so it
  blocks a second submission until :meth:`paynb.Client.reconcile` settles it;
- ``invalid``   the service answered with status ``I``: the item is stored but invalid
  and will not be processed (no money moves); it may be sent again, corrected;
- ``blocked``   the service answered with status ``B`` (state, routing or account
  restrictions): stored and locked, no money moves; it may be sent again.

A submission of a reference number that the same company already has in the journal
for the same kind, in any state but ``rejected``, ``failed``, ``invalid`` or ``blocked``,
is refused with
:class:`~paynb.errors.DuplicateSubmissionError` unless the caller allows it. The check
and the record are one ``BEGIN IMMEDIATE`` transaction, so two threads or two processes
sharing the file cannot both pass it; a unique partial index guards the same rule.

Nothing secret is stored: summaries go through :func:`scrub` (passwords, secrets,
tokens and one-time passwords dropped, card numbers reduced to their last four digits,
account numbers masked).
"""

from __future__ import annotations

import json
import logging
import os
import random
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paynb._coerce import missing
from paynb._redact import mask_card_numbers, redact
from paynb.errors import DuplicateSubmissionError, PaynbError

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "KINDS",
    "OPERATIONS",
    "STATES",
    "SUBMISSIONS",
    "Journal",
    "JournalError",
    "scrub",
    "MATCH_ACTIONS",
    "NOT_ACCEPTED",
]

logger = logging.getLogger("paynb.journal")

#: Item kinds the journal records.
KINDS = ("ach", "rcc", "instant", "rtp")
#: Operations the journal records; those in :data:`SUBMISSIONS` are guarded against duplicates.
OPERATIONS = ("submit", "submit_many", "send", "void", "void_many", "void_references")
SUBMISSIONS = frozenset({"submit", "submit_many", "send"})
#: Entry states, in the order an entry usually goes through them.
STATES = ("pending", "sent", "rejected", "unknown", "failed", "invalid", "blocked")
# States after which the same reference may be submitted again: nothing was stored, or
# what was stored will never move money (answered I or B).
_RETRYABLE = ("rejected", "failed", "invalid", "blocked")
_LIVE = ("pending", "sent", "unknown")
#: The state of a submission the service stored with item status ``I`` or ``B`` (it will
#: never be processed), by that status: what a submission's answer and reconcile record.
NOT_ACCEPTED = {"I": "invalid", "B": "blocked"}
# Voids recorded by item id (their reference is the id); the others go by reference number.
VOIDS_BY_ID = frozenset({"void", "void_many"})

# Values of $PAYNB_JOURNAL that turn the journal off.
_OFF = frozenset({"off", "none", "false", "0"})

#: 2 added ``noc_applied`` and ``guard_overrides`` (a version-1 file gets them on opening:
#: every statement of the schema is ``IF NOT EXISTS``).
SCHEMA_VERSION = 2
_BUSY_TIMEOUT_SECONDS = 30.0
# SQLite builds before 3.32 allow at most 999 parameters in one statement.
_CHUNK = 500

# Decisions an analyst took on paynb.match results (manual pairs, resolved exceptions);
# also created on first use in a journal made before the table existed.
_MATCH_SCHEMA = """
CREATE TABLE IF NOT EXISTS match_decisions (
    id        INTEGER PRIMARY KEY,
    created   TEXT NOT NULL,
    ledger    TEXT NOT NULL,
    action    TEXT NOT NULL,
    method    TEXT NOT NULL,
    expected  TEXT NOT NULL,
    items     TEXT NOT NULL,
    reason    TEXT,
    note      TEXT,
    withdrawn TEXT
);
CREATE INDEX IF NOT EXISTS match_decisions_ledger ON match_decisions (ledger, withdrawn);
"""
#: What a match decision can be: a pair made by hand, or an exception marked resolved.
MATCH_ACTIONS = ("pair", "resolve")

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS entries (
    id              INTEGER PRIMARY KEY,
    batch           INTEGER,
    created         TEXT NOT NULL,
    updated         TEXT NOT NULL,
    company         TEXT NOT NULL,
    kind            TEXT NOT NULL,
    operation       TEXT NOT NULL,
    reference       TEXT,
    state           TEXT NOT NULL,
    item_id,
    item_status     TEXT,
    detail          TEXT,
    summary         TEXT,
    allow_duplicate INTEGER NOT NULL DEFAULT 0,
    guard           INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS entries_reference ON entries (company, kind, reference);
CREATE INDEX IF NOT EXISTS entries_state ON entries (state, company);
CREATE UNIQUE INDEX IF NOT EXISTS entries_guard ON entries (company, kind, reference)
    WHERE guard = 1 AND state IN {_LIVE!r};
CREATE TABLE IF NOT EXISTS watermarks (
    company TEXT NOT NULL,
    kind    TEXT NOT NULL,
    mark    TEXT NOT NULL,
    updated TEXT NOT NULL,
    PRIMARY KEY (company, kind)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS seen_changes (
    company TEXT NOT NULL,
    kind    TEXT NOT NULL,
    key     TEXT NOT NULL,
    seen    TEXT NOT NULL,
    PRIMARY KEY (company, kind, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS noc_applied (
    company    TEXT NOT NULL,
    noc_id     TEXT NOT NULL,
    applied_by TEXT NOT NULL,
    applied_at TEXT NOT NULL,
    note       TEXT,
    PRIMARY KEY (company, noc_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS guard_overrides (
    id         INTEGER PRIMARY KEY,
    created    TEXT NOT NULL,
    company    TEXT NOT NULL,
    kind       TEXT NOT NULL,
    reference  TEXT,
    rule       TEXT NOT NULL,
    detail     TEXT,
    by         TEXT NOT NULL
);
{_MATCH_SCHEMA}"""

_ENTRY_COLUMNS = ("id", "batch", "created", "updated", "company", "kind", "operation",
                  "reference", "state", "item_id", "item_status", "detail", "summary",
                  "allow_duplicate")
_SELECT = f"SELECT {', '.join(_ENTRY_COLUMNS)} FROM entries"


class JournalError(PaynbError):
    """The journal file cannot be used (written by a newer paynb, unreadable, ...)."""


# ---------------------------------------------------------------------------- scrubbing

#: A copy of a value that is safe to store (:func:`paynb._redact.redact`: the one rule
#: for what a secret looks like, shared with the transport, errors and results).
scrub = redact


# ---------------------------------------------------------------------------- helpers

def _utc(when: datetime) -> datetime:
    if not isinstance(when, datetime):
        raise TypeError(f"when must be a datetime, not {type(when).__name__}")
    # A zone-less time is taken as UTC, like the service's own zone-less timestamps.
    return when.replace(tzinfo=UTC) if when.tzinfo is None else when.astimezone(UTC)


def _stamp(when: datetime | None = None) -> str:
    return _utc(when or datetime.now(UTC)).isoformat(timespec="microseconds")


def _parse_stamp(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)


def _name(value: object, argument: str, choices: Sequence[str] | None = None) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{argument} must be a non-empty string")
    if choices is not None and value not in choices:
        raise ValueError(f"{argument} must be one of {', '.join(choices)}; got {value!r}")
    return value.strip()


def _states(state: str | Iterable[str] | None) -> list[str] | None:
    if state is None:
        return None
    states = [state] if isinstance(state, str) else list(state)
    for one in states:
        _name(one, "state", STATES)
    return states


def _chunks(values: Sequence[Any]) -> Iterator[Sequence[Any]]:
    for start in range(0, len(values), _CHUNK):
        yield values[start:start + _CHUNK]


def _placeholders(count: int) -> str:
    return ", ".join("?" * count)


def _key_text(key: object) -> str:
    parts = key if isinstance(key, tuple) else (key,)
    texts = []
    for part in parts:
        if missing(part):
            texts.append("")
        elif isinstance(part, datetime):
            texts.append(_stamp(part))
        else:
            texts.append(str(part))
    return "\x1f".join(texts)


def _scalar(value: Any) -> str | int | None:
    """An item id as SQLite can store it: numpy and pandas scalars (ids taken from a
    DataFrame) become Python ints, missing values ``None``, anything else its text."""
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if missing(value):
        return None
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | str):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return str(value)


def _entry(row: sqlite3.Row | tuple[Any, ...]) -> dict[str, Any]:
    entry = dict(zip(_ENTRY_COLUMNS, row, strict=True))
    entry["when"] = _parse_stamp(entry.pop("created"))
    entry["updated"] = _parse_stamp(entry["updated"])
    entry["summary"] = json.loads(entry["summary"]) if entry["summary"] else None
    entry["allow_duplicate"] = bool(entry["allow_duplicate"])
    return {"id": entry.pop("id"), "when": entry.pop("when"), **entry}


# ---------------------------------------------------------------------------- the journal

class Journal:
    """The audit log, duplicate guard and polling watermarks, in one SQLite file.

    ``Journal(path)`` opens (and if needed creates) the file; ``Journal()`` opens the
    default one (:meth:`default_path`); ``Journal(":memory:")`` keeps everything in this
    object only (for tests and throw-away sessions). One object may be shared by threads;
    several objects and several processes may share one file. Opening is cheap: one
    connection per object and process, about a millisecond.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else self.default_path()
        self._lock = threading.RLock()
        self._conn: sqlite3.Connection | None = None
        self._pid = 0
        self._connection()

    @staticmethod
    def default_path() -> Path:
        """The journal file: ``$PAYNB_JOURNAL``, else ``journal.sqlite3`` in the user's data
        directory (``~/.local/share/paynb`` on Linux). Its folder is created if missing.

        Raises :class:`JournalError` when ``$PAYNB_JOURNAL`` turns the journal off
        (see :meth:`from_env`)."""
        override = os.environ.get("PAYNB_JOURNAL", "").strip()
        if override.lower() in _OFF:
            raise JournalError("the journal is turned off (PAYNB_JOURNAL=off)")
        if override:
            path = Path(override).expanduser()
        else:
            import platformdirs

            path = Path(platformdirs.user_data_dir("paynb", appauthor=False)) / "journal.sqlite3"
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    @classmethod
    def from_env(cls) -> Journal | None:
        """The default journal, or ``None`` when ``$PAYNB_JOURNAL`` is ``off`` (also
        ``none``, ``false``, ``0``): what :func:`paynb.connect` uses."""
        if os.environ.get("PAYNB_JOURNAL", "").strip().lower() in _OFF:
            return None
        return cls(cls.default_path())

    def __repr__(self) -> str:
        return f"Journal({str(self.path)!r})"

    def __getstate__(self) -> dict[str, Any]:
        return {"path": self.path}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["path"])  # type: ignore[misc]

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection; the next call opens a new one."""
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None

    # ------------------------------------------------------------------ connection

    def _connection(self) -> sqlite3.Connection:
        with self._lock:
            # A connection must not cross a fork: the child opens its own.
            if self._conn is None or self._pid != os.getpid():
                self._conn = self._open()
                self._pid = os.getpid()
            return self._conn

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
        if version == SCHEMA_VERSION:
            return
        if version > SCHEMA_VERSION:
            raise JournalError(f"the journal {self.path} was written by a newer paynb "
                               f"(schema {version}, this one knows {SCHEMA_VERSION})")
        self._switch_to_wal(conn)
        with _immediate(conn):
            # Another process may have created it while this one waited for the lock.
            if conn.execute("PRAGMA user_version").fetchone()[0] < SCHEMA_VERSION:
                for statement in _SCHEMA.split(";"):
                    if statement.strip():
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

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
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._connection()
            with _immediate(conn):
                yield conn

    def _read(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._connection().execute(sql, params).fetchall()

    # ------------------------------------------------------------------ submissions and voids

    def reserve(self, company: str, kind: str, operation: str,
                references: Iterable[str | int | None], *, allow_duplicate: bool = False,
                summary: Mapping[str, Any] | Sequence[Mapping[str, Any] | None] | None = None,
                ) -> list[int]:
        """Record one ``pending`` entry per reference, before anything is sent.

        ``references`` are the ``yourReferenceNumber`` values of a submission (``submit``,
        ``submit_many``, ``send``), or the item ids (``void``, ``void_many``) or reference
        numbers (``void_references``) of a void. ``summary`` is one mapping for every
        entry, or a sequence with one mapping (or ``None``) per reference; it is stored
        scrubbed (:func:`scrub`).

        A submission is refused, with nothing recorded, when any of its references already
        has an entry for this company and kind that is not ``rejected`` or ``failed`` (or
        appears twice in ``references``), unless ``allow_duplicate``: raises
        :class:`~paynb.errors.DuplicateSubmissionError` with ``previous`` the earlier
        entry. Voids are never refused.

        Returns the entry ids, in the order of ``references``.
        """
        company = _name(company, "company")
        kind = _name(kind, "kind", KINDS)
        operation = _name(operation, "operation", OPERATIONS)
        if isinstance(references, str | bytes):
            raise TypeError("references must be a list of reference numbers, not one string")
        given = list(references)
        refs = [None if ref is None else str(ref) for ref in given]
        summaries = _per_entry(summary, len(refs))
        if not refs:
            return []
        guarded = operation in SUBMISSIONS and not allow_duplicate
        if guarded:
            _refuse_repeats(company, kind, refs)
        now = _stamp()
        repeated: dict[str, dict[str, Any]] = {}
        with self._write() as conn:
            if guarded:
                self._refuse_known(conn, company, kind, refs)
            elif operation in SUBMISSIONS:
                repeated = self._blocking(conn, company, kind, refs)
            ids: list[int] = []
            for ref, original, one_summary in zip(refs, given, summaries, strict=True):
                item_id = _scalar(original) if operation in VOIDS_BY_ID else None
                try:
                    (entry_id,) = conn.execute(
                        "INSERT INTO entries (batch, created, updated, company, kind, operation,"
                        " reference, state, item_id, summary, allow_duplicate, guard)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?, ?) RETURNING id",
                        (ids[0] if ids else None, now, now, company, kind, operation, ref,
                         item_id, one_summary, int(allow_duplicate),
                         int(guarded and ref is not None)),
                    ).fetchone()
                except sqlite3.IntegrityError:
                    # Only the unique guard index can fail here; the check above should
                    # have caught it, so say what is there.
                    self._refuse_known(conn, company, kind, [ref])
                    raise
                ids.append(entry_id)
            conn.execute("UPDATE entries SET batch = id WHERE id = ?", (ids[0],))
        if repeated:
            logger.warning("journal: %d %s reference(s) of %s submitted again with "
                           "allow_duplicate=True (first: %s)", len(repeated), kind, company,
                           next(ref for ref in refs if ref in repeated))
        logger.debug("journal: reserved %d %s %s entries for %s (batch %d)", len(ids), kind,
                     operation, company, ids[0])
        return ids

    def _blocking(self, conn: sqlite3.Connection, company: str, kind: str,
                  refs: Sequence[str | None]) -> dict[str, dict[str, Any]]:
        """The latest blocking submission entry of each of ``refs`` that has one."""
        wanted = sorted({ref for ref in refs if ref is not None})
        found: dict[str, dict[str, Any]] = {}
        for chunk in _chunks(wanted):
            rows = conn.execute(
                f"{_SELECT} WHERE company = ? AND kind = ? AND reference IN"
                f" ({_placeholders(len(chunk))}) AND operation IN"
                f" ({_placeholders(len(SUBMISSIONS))}) AND state NOT IN"
                f" ({_placeholders(len(_RETRYABLE))}) ORDER BY id",
                (company, kind, *chunk, *sorted(SUBMISSIONS), *_RETRYABLE),
            ).fetchall()
            for row in rows:
                entry = _entry(row)
                found[entry["reference"]] = entry
        return found

    def _refuse_known(self, conn: sqlite3.Connection, company: str, kind: str,
                      refs: Sequence[str | None]) -> None:
        found = self._blocking(conn, company, kind, refs)
        if not found:
            return
        first = next(ref for ref in refs if ref in found)
        previous = found[first]
        others = len(found) - 1
        more = f" (and {others} more of these references)" if others else ""
        item = f", item {previous['item_id']}" if previous["item_id"] is not None else ""
        raise DuplicateSubmissionError(
            f"{kind} reference {first!r} of company {company} is already in the journal: "
            f"{previous['operation']} at {previous['when']:%Y-%m-%d %H:%M:%S} UTC, "
            f"{previous['state']}{item}{more}. Nothing was sent; pass allow_duplicate=True "
            "to send it again.",
            reference_number=first, previous=previous)

    def duplicates(self, company: str, kind: str,
                   references: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Which of ``references`` :meth:`reserve` would refuse, each with the earlier entry.

        For showing or dropping the repeats of a bulk before submitting it; the guard
        itself stays in :meth:`reserve`.
        """
        company = _name(company, "company")
        kind = _name(kind, "kind", KINDS)
        with self._lock:
            return self._blocking(self._connection(), company, kind,
                                  [str(ref) for ref in references])

    def previous(self, company: str, kind: str, reference: str) -> dict[str, Any] | None:
        """The entry that blocks a new submission of ``reference``, or ``None``."""
        return self.duplicates(company, kind, [reference]).get(str(reference))

    def settle(self, entry_id: int, state: str, *, item_id: str | int | None = None,
               item_status: str | None = None, detail: str | None = None) -> None:
        """Record the outcome of entry ``entry_id``: its new ``state`` and, when known, the
        service's item id and status and a short ``detail`` (an error message, never a
        secret). Values left ``None`` keep what the entry had."""
        self.settle_many([(entry_id, state, item_id, item_status, detail)])

    def settle_many(self, outcomes: Iterable[Sequence[Any]]) -> None:
        """Settle many entries in one transaction: ``outcomes`` holds tuples
        ``(entry_id, state[, item_id[, item_status[, detail]]])`` as for :meth:`settle`.
        Raises ``KeyError`` (and changes nothing) when an entry id is not in the journal."""
        now = _stamp()
        rows = []
        for outcome in outcomes:
            if not 2 <= len(outcome) <= 5:
                raise ValueError("each outcome is (entry_id, state[, item_id[, item_status"
                                 "[, detail]]])")
            entry_id, state, item_id, item_status, detail = (*outcome, None, None, None)[:5]
            _name(state, "state", STATES)
            rows.append({"id": int(entry_id), "state": state, "item_id": _scalar(item_id),
                         "item_status": None if item_status is None else str(item_status),
                         "detail": None if detail is None else mask_card_numbers(str(detail)),
                         "live": state in _LIVE, "now": now})
        if not rows:
            return
        with self._write() as conn:
            cursor = conn.executemany(
                "UPDATE entries SET state = :state, updated = :now,"
                " item_id = COALESCE(:item_id, item_id),"
                " item_status = COALESCE(:item_status, item_status),"
                " detail = COALESCE(:detail, detail),"
                # An entry coming back to life beside another live submission of the same
                # reference (say a 'failed' one found sent after all) is a duplicate that
                # happened: record it, and let it leave the unique guard.
                " guard = CASE WHEN :live AND guard = 1 AND EXISTS (SELECT 1 FROM entries o"
                "   WHERE o.company = entries.company AND o.kind = entries.kind"
                "   AND o.reference = entries.reference AND o.guard = 1"
                f"  AND o.state IN {_LIVE!r} AND o.id != entries.id) THEN 0 ELSE guard END"
                " WHERE id = :id",
                rows,
            )
            if cursor.rowcount != len(rows):
                ids = sorted({row["id"] for row in rows})
                known = {found for chunk in _chunks(ids) for (found,) in conn.execute(
                    f"SELECT id FROM entries WHERE id IN ({_placeholders(len(chunk))})", chunk)}
                missing = [entry_id for entry_id in ids if entry_id not in known]
                if missing:
                    raise KeyError(f"no journal entry {missing[0]}"
                                   + (f" (and {len(missing) - 1} more)" if len(missing) > 1
                                      else ""))
        logger.debug("journal: settled %d entries", len(rows))

    # ------------------------------------------------------------------ reading

    def entries(self, company: str | None = None, kind: str | None = None,
                state: str | Iterable[str] | None = None, *, operation: str | None = None,
                reference: str | None = None) -> list[dict[str, Any]]:
        """Entries, oldest first, filtered by company, kind, state (one or several),
        operation and reference. Each is a dict: ``id, when`` (UTC datetime of the
        reservation), ``batch`` (id of the first entry of the same call), ``updated,
        company, kind, operation, reference, state, item_id, item_status, detail, summary,
        allow_duplicate``."""
        clauses: list[str] = []
        params: list[Any] = []
        for column, value, choices in (("company", company, None), ("kind", kind, KINDS),
                                       ("operation", operation, OPERATIONS),
                                       ("reference", reference, None)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(_name(value, column, choices) if column != "reference"
                              else str(value))
        states = _states(state)
        if states is not None:
            clauses.append(f"state IN ({_placeholders(len(states))})")
            params.extend(states)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        return [_entry(row) for row in self._read(f"{_SELECT}{where} ORDER BY id", params)]

    def unknown_entries(self, company: str | None = None, *,
                        stale_after: float | None = 600.0) -> list[dict[str, Any]]:
        """Entries whose outcome is not known, oldest first: state ``unknown``, and
        ``pending`` entries older than ``stale_after`` seconds (their process stopped
        between recording and answer; ``None`` leaves pending entries out). These are what
        :meth:`paynb.Client.reconcile` looks up in the service."""
        found = self.entries(company, state=("unknown", "pending"))
        now = datetime.now(UTC)
        return [entry for entry in found if entry["state"] == "unknown"
                or (stale_after is not None
                    and (now - entry["when"]).total_seconds() > stale_after)]

    def frame(self, company: str | None = None, kind: str | None = None,
              state: str | Iterable[str] | None = None, *, operation: str | None = None,
              reference: str | None = None) -> pd.DataFrame:
        """:meth:`entries` as a typed DataFrame: ``when``/``updated`` UTC timestamps,
        ``state`` categorical in :data:`STATES` order, ids nullable integers, the same
        columns when empty."""
        import pandas as pd

        found = self.entries(company, kind, state, operation=operation, reference=reference)
        columns = ["id", "when", "batch", "updated", "company", "kind", "operation",
                   "reference", "state", "item_id", "item_status", "detail", "summary",
                   "allow_duplicate"]
        df = pd.DataFrame.from_records(found, columns=columns)
        return df.astype({
            "id": "Int64", "batch": "Int64",
            "when": "datetime64[ns, UTC]", "updated": "datetime64[ns, UTC]",
            "company": "string", "kind": pd.CategoricalDtype(KINDS),
            "operation": pd.CategoricalDtype(OPERATIONS), "reference": "string",
            "state": pd.CategoricalDtype(STATES),
            "item_id": "string", "item_status": "string", "detail": "string",
            "summary": "object", "allow_duplicate": "bool",
        })

    # ------------------------------------------------------------------ polling

    def watermark(self, company: str, kind: str) -> datetime | None:
        """The time up to which ``changes()`` of this company and kind were reported (UTC),
        or ``None`` before the first poll."""
        rows = self._read("SELECT mark FROM watermarks WHERE company = ? AND kind = ?",
                          (_name(company, "company"), _name(kind, "kind", KINDS)))
        return _parse_stamp(rows[0][0]) if rows else None

    def set_watermark(self, company: str, kind: str, when: datetime) -> None:
        """Remember ``when`` (a zone-less time is taken as UTC) as the watermark."""
        mark = _stamp(_utc(when))
        with self._write() as conn:
            conn.execute(
                "INSERT INTO watermarks (company, kind, mark, updated) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (company, kind) DO UPDATE SET mark = excluded.mark,"
                " updated = excluded.updated",
                (_name(company, "company"), _name(kind, "kind", KINDS), mark, _stamp()))

    def seen_changes(self, company: str, kind: str, keys: Iterable[Any]) -> set[Any]:
        """Which of ``keys`` were already reported (:meth:`mark_seen`).

        A key is any hashable, typically ``(item_id, item_status, return_date)``; parts are
        compared by their text, datetimes by their UTC time, ``None``/``NaT`` as empty.
        Returns the given key objects that were seen.
        """
        company = _name(company, "company")
        kind = _name(kind, "kind", KINDS)
        by_text: dict[str, list[Any]] = {}
        for key in keys:
            by_text.setdefault(_key_text(key), []).append(key)
        texts = list(by_text)
        seen: set[Any] = set()
        with self._lock:
            conn = self._connection()
            for chunk in _chunks(texts):
                for (text,) in conn.execute(
                        "SELECT key FROM seen_changes WHERE company = ? AND kind = ? AND key IN"
                        f" ({_placeholders(len(chunk))})", (company, kind, *chunk)):
                    seen.update(by_text[text])
        return seen

    def mark_seen(self, company: str, kind: str, keys: Iterable[Any]) -> int:
        """Remember ``keys`` as reported (see :meth:`seen_changes`); returns how many were new."""
        company = _name(company, "company")
        kind = _name(kind, "kind", KINDS)
        now = _stamp()
        rows = [(company, kind, text, now) for text in {_key_text(key) for key in keys}]
        with self._write() as conn:
            before = conn.total_changes
            conn.executemany("INSERT OR IGNORE INTO seen_changes (company, kind, key, seen)"
                             " VALUES (?, ?, ?, ?)", rows)
            return conn.total_changes - before

    # ------------------------------------------------------------------ match decisions

    def _match_table(self, conn: sqlite3.Connection) -> None:
        # A journal made before the table existed gets it here (same schema version).
        for statement in _MATCH_SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)

    def record_match_decision(self, ledger: str, action: str, *, expected: Sequence[str],
                              items: Sequence[str], method: str = "manual",
                              reason: str | None = None, note: str | None = None) -> int:
        """Keep a decision taken on a :func:`paynb.match` result; returns its id.

        ``action`` is ``pair`` (``expected`` line keys paired with ``items`` keys by hand)
        or ``resolve`` (the exception ``reason`` of that pair marked resolved, with a
        ``note``). ``ledger`` names the expected ledger, so several can share a journal.
        The note is scrubbed like every stored text.
        """
        ledger = _name(ledger, "ledger")
        action = _name(action, "action", MATCH_ACTIONS)
        if isinstance(expected, str) or isinstance(items, str):
            raise TypeError("expected and items are lists of keys, not one string")
        with self._write() as conn:
            self._match_table(conn)
            (decision,) = conn.execute(
                "INSERT INTO match_decisions (created, ledger, action, method, expected,"
                " items, reason, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (_stamp(), ledger, action, _name(method, "method"),
                 json.dumps([str(k) for k in expected]), json.dumps([str(k) for k in items]),
                 reason, None if note is None else mask_card_numbers(str(note)))).fetchone()
        return int(decision)

    def withdraw_match_decision(self, decision_id: int) -> None:
        """Take back a match decision (it stays in the log, marked withdrawn)."""
        with self._write() as conn:
            self._match_table(conn)
            done = conn.execute("UPDATE match_decisions SET withdrawn = ? WHERE id = ?"
                                " AND withdrawn IS NULL", (_stamp(), int(decision_id)))
            if done.rowcount != 1:
                raise KeyError(f"no match decision {decision_id} in force")

    def match_decisions(self, ledger: str | None = None) -> list[dict[str, Any]]:
        """The match decisions in force (not withdrawn), oldest first: dicts with ``id,
        when, ledger, action, method, expected, items, reason, note``."""
        with self._write() as conn:
            self._match_table(conn)
            where = " AND ledger = ?" if ledger is not None else ""
            rows = conn.execute(
                "SELECT id, created, ledger, action, method, expected, items, reason, note"
                f" FROM match_decisions WHERE withdrawn IS NULL{where} ORDER BY id",
                (_name(ledger, "ledger"),) if ledger is not None else ()).fetchall()
        return [{"id": row[0], "when": _parse_stamp(row[1]), "ledger": row[2],
                 "action": row[3], "method": row[4], "expected": json.loads(row[5]),
                 "items": json.loads(row[6]), "reason": row[7], "note": row[8]}
                for row in rows]
    # ------------------------------------------------------------------ NOCs and guards

    def apply_noc(self, company: str, noc_id: str | int, *, by: str, note: str | None = None,
                  when: datetime | None = None) -> dict[str, Any]:
        """Mark NOC ``noc_id`` of ``company`` applied (the correction is made) by ``by``.

        The first mark stands: marking a NOC again changes nothing and returns the
        existing mark (``already`` True). Returns ``{noc_id, by, when, note, already}``.
        """
        company = _name(company, "company")
        key = _name(str(noc_id), "noc_id")
        by = _name(by, "by")
        stamp = _stamp(when)
        text = None if note is None else mask_card_numbers(str(note))
        with self._write() as conn:
            inserted = conn.execute(
                "INSERT OR IGNORE INTO noc_applied (company, noc_id, applied_by, applied_at,"
                " note) VALUES (?, ?, ?, ?, ?)", (company, key, by, stamp, text)).rowcount
            row = conn.execute("SELECT applied_by, applied_at, note FROM noc_applied"
                               " WHERE company = ? AND noc_id = ?", (company, key)).fetchone()
        return {"noc_id": key, "by": row[0], "when": _parse_stamp(row[1]), "note": row[2],
                "already": not inserted}

    def applied_nocs(self, company: str) -> dict[str, dict[str, Any]]:
        """The NOCs of ``company`` marked applied: ``{noc_id (text): {by, when, note}}``."""
        rows = self._read("SELECT noc_id, applied_by, applied_at, note FROM noc_applied"
                          " WHERE company = ? ORDER BY applied_at",
                          (_name(company, "company"),))
        return {noc: {"by": by, "when": _parse_stamp(at), "note": note}
                for noc, by, at, note in rows}

    def record_override(self, company: str, kind: str, reference: str | None, rule: str,
                        detail: str, *, by: str) -> int:
        """Record that ``by`` sent an entry a submission guard would have refused (``rule``,
        with the guard's ``detail``); returns the record's id."""
        with self._write() as conn:
            (row_id,) = conn.execute(
                "INSERT INTO guard_overrides (created, company, kind, reference, rule, detail,"
                " by) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (_stamp(), _name(company, "company"), _name(kind, "kind", KINDS),
                 None if reference is None else str(reference), _name(rule, "rule"),
                 mask_card_numbers(str(detail)), _name(by, "by"))).fetchone()
        return int(row_id)

    def overrides(self, company: str | None = None) -> list[dict[str, Any]]:
        """The recorded guard overrides, oldest first: ``{id, when, company, kind,
        reference, rule, detail, by}``."""
        where, params = ("WHERE company = ?", (_name(company, "company"),)) if company \
            else ("", ())
        rows = self._read("SELECT id, created, company, kind, reference, rule, detail, by"
                          f" FROM guard_overrides {where} ORDER BY id", params)
        return [{"id": row[0], "when": _parse_stamp(row[1]), "company": row[2],
                 "kind": row[3], "reference": row[4], "rule": row[5], "detail": row[6],
                 "by": row[7]} for row in rows]


@contextmanager
def _immediate(conn: sqlite3.Connection) -> Iterator[None]:
    """One write transaction that takes the database's write lock at once, so that a
    check and the write that depends on it cannot interleave with another writer's."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        # SQLite may already have rolled back (some errors end the transaction).
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _refuse_repeats(company: str, kind: str, refs: Sequence[str | None]) -> None:
    seen: set[str] = set()
    for ref in refs:
        if ref is None:
            continue
        if ref in seen:
            raise DuplicateSubmissionError(
                f"{kind} reference {ref!r} of company {company} appears more than once in this "
                "submission. Nothing was sent; pass allow_duplicate=True to send it anyway.",
                reference_number=ref)
        seen.add(ref)


def _per_entry(summary: Mapping[str, Any] | Sequence[Mapping[str, Any] | None] | None,
               count: int) -> list[str | None]:
    """The scrubbed JSON summary of each entry."""
    if summary is None or isinstance(summary, Mapping) or hasattr(summary, "to_wire"):
        text = None if summary is None else json.dumps(scrub(summary), ensure_ascii=False)
        return [text] * count
    summaries = list(summary)
    if len(summaries) != count:
        raise ValueError(f"summary has {len(summaries)} entries for {count} references")
    return [None if one is None else json.dumps(scrub(one), ensure_ascii=False)
            for one in summaries]
