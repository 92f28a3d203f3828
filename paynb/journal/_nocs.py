"""NOC marks: which notices of change the analysts have applied (the correction made),
by whom and when; the NOC ledger (``client.nocs.obligations()``) reads them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from paynb._redact import mask_card_numbers
from paynb.journal._common import name, parse_stamp, stamp
from paynb.journal._db import Table

__all__ = ["TABLES", "NocMarks"]

#: The table of NOC marks, by the schema version that added it.
TABLES = {2: ("""
CREATE TABLE IF NOT EXISTS noc_applied (
    company    TEXT NOT NULL,
    noc_id     TEXT NOT NULL,
    applied_by TEXT NOT NULL,
    applied_at TEXT NOT NULL,
    note       TEXT,
    PRIMARY KEY (company, noc_id)
) {NO_ROWID}""",)}


class NocMarks(Table):
    """The applied marks of NOCs: ``journal.nocs``."""

    def apply(self, company: str, noc_id: str | int, *, by: str, note: str | None = None,
              when: datetime | None = None) -> dict[str, Any]:
        """Mark NOC ``noc_id`` of ``company`` applied (the correction is made) by ``by``.

        The first mark stands: marking a NOC again changes nothing and returns the
        existing mark (``already`` True). Returns ``{noc_id, by, when, note, already}``.
        """
        company = name(company, "company")
        key = name(str(noc_id), "noc_id")
        by = name(by, "by")
        text = None if note is None else mask_card_numbers(str(note))
        with self._db.write() as conn:
            inserted = conn.execute(
                "INSERT INTO noc_applied (company, noc_id, applied_by, applied_at, note)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (company, noc_id) DO NOTHING",
                (company, key, by, stamp(when), text)).rowcount
            row = conn.execute("SELECT applied_by, applied_at, note FROM noc_applied"
                               " WHERE company = ? AND noc_id = ?", (company, key)).fetchone()
        return {"noc_id": key, "by": row[0], "when": parse_stamp(row[1]), "note": row[2],
                "already": not inserted}

    def applied(self, company: str) -> dict[str, dict[str, Any]]:
        """The NOCs of ``company`` marked applied: ``{noc_id (text): {by, when, note}}``."""
        rows = self._db.read("SELECT noc_id, applied_by, applied_at, note FROM noc_applied"
                             " WHERE company = ? ORDER BY applied_at",
                             (name(company, "company"),))
        return {noc: {"by": by, "when": parse_stamp(at), "note": note}
                for noc, by, at, note in rows}
