"""The morning run's memory (:mod:`paynb.monitor`): what it notified, and its runs.

``monitor_notified``
    one row per company and finding key: the level last notified (or the milder one it
    improved to), its last title, when it was last notified (first said, said worse, or
    a standing breach said again once per ``repeat``) and last seen, when it cleared.
``monitor_runs``
    one row per company and run: when it started, the service's time it measured
    (``as_of``: the previous successful run's is where "new since the previous run"
    starts), its exit status, the report written, and whether the message was delivered.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from paynb.journal._common import name, parse_stamp, stamp
from paynb.journal._db import Table

__all__ = ["DELIVERED", "TABLES", "MonitorLedger", "MonitorRun", "Notified"]

_TABLES = ("""
CREATE TABLE IF NOT EXISTS monitor_notified (
    company  TEXT NOT NULL,
    key      TEXT NOT NULL,
    level    TEXT NOT NULL,
    title    TEXT NOT NULL,
    notified TEXT NOT NULL,
    seen     TEXT NOT NULL,
    cleared  TEXT,
    PRIMARY KEY (company, key)
) {NO_ROWID}""", """
CREATE TABLE IF NOT EXISTS monitor_runs (
    id        {ID},
    company   TEXT NOT NULL,
    started   TEXT NOT NULL,
    as_of     TEXT NOT NULL,
    status    INTEGER NOT NULL,
    report    TEXT,
    delivered TEXT NOT NULL
)""", "CREATE INDEX IF NOT EXISTS monitor_runs_company ON monitor_runs (company, id)")
#: The monitor's tables, by the schema version that holds them (again in 3: journals of 2
#: made them on first use).
TABLES = {2: _TABLES, 3: _TABLES}

#: What a run's ``delivered`` records: the message went out, there was nothing to send,
#: it was only printed (no notification configured), or sending it failed.
DELIVERED = ("sent", "nothing", "printed", "failed")


@dataclass(frozen=True)
class Notified:
    """One row of ``monitor_notified``: a finding's key, the level last notified (or
    reached since, when it improved), its last title, when it was last notified (a
    standing breach said again per ``repeat`` counts) and last seen, and when it
    cleared (None: it stands)."""

    key: str
    level: str
    title: str
    notified: dt.datetime
    seen: dt.datetime
    cleared: dt.datetime | None = None


@dataclass(frozen=True)
class MonitorRun:
    """One row of ``monitor_runs``."""

    company: str
    started: dt.datetime
    as_of: dt.datetime
    status: int
    report: str | None
    delivered: str


def _time(found: dt.datetime | None) -> dt.datetime:
    if found is None:
        raise ValueError("a monitor row without its time")
    return found


_RUNS = "SELECT company, started, as_of, status, report, delivered FROM monitor_runs"


def _run(row: tuple[Any, ...]) -> MonitorRun:
    return MonitorRun(row[0], _time(parse_stamp(row[1])), _time(parse_stamp(row[2])),
                      int(row[3]), row[4], row[5])


class MonitorLedger(Table):
    """The morning run's tables: ``journal.monitor``."""

    def notified(self, company: str) -> dict[str, Notified]:
        """The rows of ``company`` by finding key."""
        rows = self._db.read("SELECT key, level, title, notified, seen, cleared"
                             " FROM monitor_notified WHERE company = ?",
                             (name(company, "company"),))
        # Thousands of rows share a few runs' times: each is read once.
        read = functools.cache(parse_stamp)
        return {key: Notified(key, level, title, _time(read(notified)), _time(read(seen)),
                              read(cleared))
                for key, level, title, notified, seen, cleared in rows}

    def record(self, company: str, rows: Iterable[Notified]) -> None:
        """Write (insert or replace) rows of ``company``."""
        company = name(company, "company")
        written = functools.cache(stamp)  # (a few runs' times, thousands of rows)
        values = [(company, row.key, row.level, row.title, written(row.notified),
                   written(row.seen), None if row.cleared is None else written(row.cleared))
                  for row in rows]
        with self._db.write() as conn:
            conn.executemany(
                "INSERT INTO monitor_notified (company, key, level, title, notified, seen,"
                " cleared) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (company, key) DO UPDATE"
                " SET level = excluded.level, title = excluded.title,"
                " notified = excluded.notified, seen = excluded.seen,"
                " cleared = excluded.cleared", values)

    def record_run(self, run: MonitorRun) -> None:
        """Add a run."""
        delivered = name(run.delivered, "delivered", DELIVERED)
        with self._db.write() as conn:
            conn.execute("INSERT INTO monitor_runs (company, started, as_of, status, report,"
                         " delivered) VALUES (?, ?, ?, ?, ?, ?)",
                         (name(run.company, "company"), stamp(run.started), stamp(run.as_of),
                          int(run.status), run.report, delivered))

    def last_success(self, company: str) -> MonitorRun | None:
        """The last run of ``company`` that completed and whose message (if any) was
        delivered: where "new since the previous run" starts."""
        rows = self._db.read(f"{_RUNS} WHERE company = ? AND status < 3 ORDER BY id DESC"
                             " LIMIT 1", (name(company, "company"),))
        return _run(rows[0]) if rows else None

    def runs(self, company: str | None = None) -> list[MonitorRun]:
        """Every recorded run (of ``company``), oldest first."""
        where, params = (" WHERE company = ?", (name(company, "company"),)) if company \
            else ("", ())
        return [_run(row) for row in self._db.read(f"{_RUNS}{where} ORDER BY id", params)]
