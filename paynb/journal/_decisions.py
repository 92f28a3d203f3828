"""Match decisions: what an analyst decided on a :func:`paynb.match` result (pairs made
by hand, exceptions marked resolved), per ledger, so that the next run applies them."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from paynb._redact import mask_card_numbers
from paynb.journal._common import name, parse_stamp, stamp
from paynb.journal._db import Database

__all__ = ["MATCH_ACTIONS", "TABLES", "MatchDecisions"]

#: What a match decision can be: a pair made by hand, or an exception marked resolved.
MATCH_ACTIONS = ("pair", "resolve")

_TABLE = """
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
)"""

#: The table of match decisions, by the schema version that added it. Journals of
#: version 2 made it on first use, so version 3 makes it where it is missing before
#: adding who decided (``by``) and who withdrew (``withdrawn_by``).
_INDEX = "CREATE INDEX IF NOT EXISTS match_decisions_ledger ON match_decisions (ledger, withdrawn)"
TABLES = {2: (_TABLE, _INDEX),
          3: (_TABLE, _INDEX, "ALTER TABLE match_decisions ADD COLUMN by TEXT",
              "ALTER TABLE match_decisions ADD COLUMN withdrawn_by TEXT")}


class MatchDecisions:
    """The decisions taken on match results: ``journal.match_decisions``. Each records who
    took it (``by``: the journal's user unless a call names someone)."""

    def __init__(self, db: Database, user: str) -> None:
        self._db = db
        self._user = user

    def record(self, ledger: str, action: str, *, expected: Sequence[str],
               items: Sequence[str], method: str = "manual", reason: str | None = None,
               note: str | None = None, by: str | None = None) -> int:
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
            (decision,) = conn.execute(
                "INSERT INTO match_decisions (created, by, ledger, action, method, expected,"
                " items, reason, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (stamp(), name(by, "by") if by is not None else self._user, ledger, action,
                 name(method, "method"), json.dumps([str(k) for k in expected]),
                 json.dumps([str(k) for k in items]), reason,
                 None if note is None else mask_card_numbers(str(note)))).fetchone()
        return int(decision)

    def withdraw(self, decision_id: int, *, by: str | None = None) -> None:
        """Take back a match decision (it stays in the log, marked withdrawn, and by whom)."""
        with self._db.write() as conn:
            done = conn.execute(
                "UPDATE match_decisions SET withdrawn = ?, withdrawn_by = ? WHERE id = ?"
                " AND withdrawn IS NULL",
                (stamp(), name(by, "by") if by is not None else self._user, int(decision_id)))
            if done.rowcount != 1:
                raise KeyError(f"no match decision {decision_id} in force")

    def in_force(self, ledger: str | None = None) -> list[dict[str, Any]]:
        """The match decisions in force (not withdrawn), oldest first: dicts with ``id,
        when, by, ledger, action, method, expected, items, reason, note`` (``by``:
        ``None`` for decisions taken before schema 3)."""
        where = " AND ledger = ?" if ledger is not None else ""
        rows = self._db.read(
            "SELECT id, created, by, ledger, action, method, expected, items, reason, note"
            f" FROM match_decisions WHERE withdrawn IS NULL{where} ORDER BY id",
            (name(ledger, "ledger"),) if ledger is not None else ())
        return [{"id": row[0], "when": parse_stamp(row[1]), "by": row[2], "ledger": row[3],
                 "action": row[4], "method": row[5], "expected": json.loads(row[6]),
                 "items": json.loads(row[7]), "reason": row[8], "note": row[9]}
                for row in rows]
