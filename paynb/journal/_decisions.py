"""Match decisions: what an analyst decided on a :func:`paynb.match` result (pairs made
by hand, exceptions marked resolved), per ledger, so that the next run applies them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from paynb._redact import mask_card_numbers
from paynb.journal._common import name, parse_stamp, stamp
from paynb.journal._db import Connection, Database

__all__ = ["MATCH_ACTIONS", "TABLES", "MatchDecisions"]

#: What a match decision can be: a pair made by hand, or an exception marked resolved.
MATCH_ACTIONS = ("pair", "resolve")

#: The table of match decisions, by the schema version that added it. (A journal made
#: before the table existed gets it on first use: see :meth:`MatchDecisions._table`.)
TABLES = {2: ("""
CREATE TABLE IF NOT EXISTS match_decisions (
    id        {ID},
    created   TEXT NOT NULL,
    ledger    TEXT NOT NULL,
    action    TEXT NOT NULL,
    method    TEXT NOT NULL,
    expected  TEXT NOT NULL,
    items     TEXT NOT NULL,
    reason    TEXT,
    note      TEXT,
    withdrawn TEXT
)""", "CREATE INDEX IF NOT EXISTS match_decisions_ledger"
      " ON match_decisions (ledger, withdrawn)")}


class MatchDecisions:
    """The decisions taken on match results: ``journal.match_decisions``."""

    def __init__(self, db: Database) -> None:
        self._db = db

    def _table(self, conn: Connection) -> None:
        # A journal made before the table existed (same schema version) gets it here.
        for statement in TABLES[2]:
            conn.execute(self._db.ddl(statement))

    def record(self, ledger: str, action: str, *, expected: Sequence[str],
               items: Sequence[str], method: str = "manual", reason: str | None = None,
               note: str | None = None) -> int:
        """Keep a decision taken on a :func:`paynb.match` result; returns its id.

        ``action`` is ``pair`` (``expected`` line keys paired with ``items`` keys by hand)
        or ``resolve`` (the exception ``reason`` of that pair marked resolved, with a
        ``note``). ``ledger`` names the expected ledger, so several can share a journal.
        The note is scrubbed like every stored text.
        """
        ledger = name(ledger, "ledger")
        action = name(action, "action", MATCH_ACTIONS)
        if isinstance(expected, str) or isinstance(items, str):
            raise TypeError("expected and items are lists of keys, not one string")
        with self._db.write() as conn:
            self._table(conn)
            (decision,) = conn.execute(
                "INSERT INTO match_decisions (created, ledger, action, method, expected,"
                " items, reason, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (stamp(), ledger, action, name(method, "method"),
                 json.dumps([str(k) for k in expected]), json.dumps([str(k) for k in items]),
                 reason, None if note is None else mask_card_numbers(str(note)))).fetchone()
        return int(decision)

    def withdraw(self, decision_id: int) -> None:
        """Take back a match decision (it stays in the log, marked withdrawn)."""
        with self._db.write() as conn:
            self._table(conn)
            done = conn.execute("UPDATE match_decisions SET withdrawn = ? WHERE id = ?"
                                " AND withdrawn IS NULL", (stamp(), int(decision_id)))
            if done.rowcount != 1:
                raise KeyError(f"no match decision {decision_id} in force")

    def in_force(self, ledger: str | None = None) -> list[dict[str, Any]]:
        """The match decisions in force (not withdrawn), oldest first: dicts with ``id,
        when, ledger, action, method, expected, items, reason, note``."""
        with self._db.write() as conn:
            self._table(conn)
            where = " AND ledger = ?" if ledger is not None else ""
            rows = conn.execute(
                "SELECT id, created, ledger, action, method, expected, items, reason, note"
                f" FROM match_decisions WHERE withdrawn IS NULL{where} ORDER BY id",
                (name(ledger, "ledger"),) if ledger is not None else ()).fetchall()
        return [{"id": row[0], "when": parse_stamp(row[1]), "ledger": row[2],
                 "action": row[3], "method": row[4], "expected": json.loads(row[5]),
                 "items": json.loads(row[6]), "reason": row[7], "note": row[8]}
                for row in rows]
