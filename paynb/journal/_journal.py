"""The journal's façade: :class:`Journal` opens one SQLite file or PostgreSQL database
(given, or the default one of ``$PAYNB_JOURNAL``: read here only); its entries are the
ledger's (:class:`~paynb.journal._ledger.Ledger`, its base), the other tables features
on the same connection."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from paynb.errors import JournalError
from paynb.journal import _approvals, _decisions, _ledger, _monitor, _nocs, _overrides, _polling
from paynb.journal._approvals import ApprovalQueue
from paynb.journal._common import current_user, name
from paynb.journal._copy import JournalCopy, copy_tables
from paynb.journal._db import is_address, open_database
from paynb.journal._decisions import MatchDecisions
from paynb.journal._ledger import Ledger
from paynb.journal._monitor import MonitorLedger
from paynb.journal._nocs import NocMarks
from paynb.journal._overrides import GuardOverrides
from paynb.journal._polling import Polling

__all__ = ["SCHEMA_VERSION", "Journal", "journal_variable"]

logger = logging.getLogger("paynb.journal")

# Values of $PAYNB_JOURNAL that turn the journal off.
_OFF = frozenset({"off", "none", "false", "0"})

#: Every table of the journal by the schema version that added it; a journal is brought
#: up to date by the statements of the versions after its own, in order.
SCHEMA: dict[int, tuple[str, ...]] = {}
for _tables in (_ledger.TABLES, _polling.TABLES, _nocs.TABLES, _overrides.TABLES, _decisions.TABLES,
                _monitor.TABLES, _approvals.TABLES):
    for _version, _statements in _tables.items():
        SCHEMA[_version] = SCHEMA.get(_version, ()) + tuple(_statements)
SCHEMA_VERSION = max(SCHEMA)


class Journal(Ledger):
    """The audit log and duplicate guard, with the polling memory, NOC marks, guard
    overrides and match decisions, in one SQLite file or one PostgreSQL database.

    ``Journal(path)`` opens (and if needed creates) the file; ``Journal()`` the default
    one (:meth:`default_address`); ``Journal(":memory:")`` keeps everything in this
    object only. ``Journal("postgresql://user@host/database")`` opens a team's journal
    (with psycopg: ``pip install 'paynb[postgresql]'``; docs/team.md). The schema is
    brought up to date on opening; a journal written by a newer paynb is refused.
    ``connect=False`` connects on first use: a client made while the team's database is
    away still reads the service (see :meth:`check`). One object may be shared by
    threads, one journal by objects and processes (one connection per object and
    process). Besides the entries (the ledger's), each table is a feature on the same
    connection.
    """

    def __init__(self, address: str | os.PathLike[str] | None = None, *,
                 user: str | None = None, connect: bool = True) -> None:
        where = self.default_address() if address is None else address
        #: Who writes through this object, recorded with what it writes unless a call
        #: names someone (``by=``): ``user``, else the OS user (:func:`current_user`).
        self.user = name(user, "user") if user is not None else current_user()
        self._db = open_database(str(where) if is_address(where)
                                 else Path(where).expanduser(), SCHEMA, connect=connect)
        #: The SQLite file (``None`` for a PostgreSQL journal).
        self.path: Path | None = self._db.path
        #: The tables: the memory of ``changes()`` polling, the applied marks of NOCs,
        #: guard overrides, decisions on match results, the morning run's memory and the
        #: payments held for a second person.
        self.polling = Polling(self._db)
        self.nocs = NocMarks(self._db)
        self.overrides = GuardOverrides(self._db)
        self.match_decisions = MatchDecisions(self._db, self.user)
        self.monitor = MonitorLedger(self._db)
        self.approvals = ApprovalQueue(self._db)

    @property
    def location(self) -> str:
        """Where the journal is, for people: the file, or the address without its password."""
        return self._db.location

    def check(self) -> None:
        """Open the connection now, if it is not open: :class:`JournalError` (naming the
        journal, never its password) when the journal cannot be used. A journal made with
        ``connect=False`` connects on first use instead, and again after a failure."""
        self._db.check()

    @property
    def backend(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self._db.backend

    @staticmethod
    def default_address() -> str | Path:
        """``$PAYNB_JOURNAL`` (a file path, or a ``postgresql://`` address), else the default
        file (:meth:`default_path`); :class:`JournalError` when ``$PAYNB_JOURNAL`` turns
        the journal off (see :meth:`from_env`)."""
        where = _default_address()
        if where is None:
            raise JournalError("the journal is turned off (PAYNB_JOURNAL=off)")
        return where

    @staticmethod
    def default_path() -> Path:
        """The journal file: ``$PAYNB_JOURNAL``, else ``journal.sqlite3`` in the user's data
        directory (``~/.local/share/paynb`` on Linux), its folder created if missing;
        :class:`JournalError` when ``$PAYNB_JOURNAL`` turns the journal off or names a
        PostgreSQL database (see :meth:`default_address`)."""
        where = Journal.default_address()
        if not isinstance(where, Path):
            raise JournalError("PAYNB_JOURNAL names a PostgreSQL database, not a file: "
                               "Journal.default_address() gives it")
        return where

    @classmethod
    def from_env(cls, *, user: str | None = None, connect: bool = True) -> Journal | None:
        """The default journal (written to as ``user``; ``connect`` as for
        :class:`Journal`), or ``None`` when ``$PAYNB_JOURNAL`` is ``off`` (also ``none``,
        ``false``, ``0``): what :func:`paynb.connect` uses."""
        where = _default_address()
        return None if where is None else cls(where, user=user, connect=connect)

    def __repr__(self) -> str:
        return f"Journal({self.location!r})"

    def __getstate__(self) -> dict[str, Any]:
        # The whole address, password included, for a copy in another process.
        return {"where": self._db.where, "user": self.user}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["where"], user=state["user"])  # type: ignore[misc]

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Close the connection; the next call opens a new one."""
        self._db.close()

    def copy_from(self, source: Journal | str | os.PathLike[str], *,
                  dry_run: bool = False) -> JournalCopy:
        """Copy another journal into this one: an analyst's own SQLite journal into the
        team's PostgreSQL one (``paynb journal copy SRC DST``; docs/team.md), so that the
        team's duplicate guard knows what that analyst sent.

        Copies the tables of :data:`~paynb.journal._copy.COPIED_TABLES` in one
        transaction, each row keeping who did it and when, none twice (see ``_copy``).
        ``source`` is a :class:`Journal` or where one is (opened, and so brought up to this
        paynb's schema). ``dry_run`` says what would be copied and writes nothing.
        Returns a :class:`~paynb.journal.JournalCopy`.
        """
        opened = source if isinstance(source, Journal) else Journal(source, user=self.user)
        try:
            if opened is self or (str(self._db.where) != ":memory:" and
                                  _same_place(opened._db.where, self._db.where)):
                raise JournalError(f"cannot copy the journal {self.location} into itself")
            with opened._db.reading() as read, self._db.write() as write:
                copied, already, duplicates = copy_tables(read, write, dry_run=dry_run,
                                                          item_id=self._db.item_id)
        finally:
            if opened is not source:
                opened.close()
        done = JournalCopy(source=opened.location, destination=self.location,
                           copied=dict(copied), already=dict(already),
                           unclaimed=len(duplicates), duplicates=tuple(duplicates),
                           dry_run=dry_run)
        logger.info("journal: %r", done)
        return done


def _same_place(one: str | Path, other: str | Path) -> bool:
    """Whether two journals' places are one (a file by any path to it, or one address)."""
    if isinstance(one, Path) and isinstance(other, Path):
        return one.resolve() == other.resolve()
    return str(one) == str(other)


def journal_variable() -> str:
    """``$PAYNB_JOURNAL`` as set (stripped; empty when unset): the one reading of it, for
    the default journal here and for the profile's warning in :mod:`paynb.config`."""
    return os.environ.get("PAYNB_JOURNAL", "").strip()


def _default_address() -> str | Path | None:
    """Where the default journal is (:meth:`Journal.default_address`), ``None`` when
    ``$PAYNB_JOURNAL`` turns it off; a file's folder is created if missing."""
    variable = journal_variable()
    if variable.lower() in _OFF:
        return None
    if is_address(variable):
        return variable
    if variable:
        path = Path(variable).expanduser()
    else:
        import platformdirs

        path = Path(platformdirs.user_data_dir("paynb", appauthor=False)) / "journal.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    return path
