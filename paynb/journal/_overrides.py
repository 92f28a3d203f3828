"""Guard overrides: each entry sent although a NACHA submission guard would have refused
it (``new_authorization=True``), with who, when, the rule and the guard's reason."""

from __future__ import annotations

from typing import Any

from paynb._redact import mask_card_numbers
from paynb.journal._common import KINDS, name, parse_stamp, stamp
from paynb.journal._db import Table

__all__ = ["TABLES", "GuardOverrides"]

#: The table of guard overrides, by the schema version that added it.
TABLES = {2: ("""
CREATE TABLE IF NOT EXISTS guard_overrides (
    id         {ID},
    created    TEXT NOT NULL,
    company    TEXT NOT NULL,
    kind       TEXT NOT NULL,
    reference  TEXT,
    rule       TEXT NOT NULL,
    detail     TEXT,
    by         TEXT NOT NULL
)""",)}


class GuardOverrides(Table):
    """The record of guard overrides: ``journal.overrides``."""

    def record(self, company: str, kind: str, reference: str | None, rule: str,
               detail: str, *, by: str, once: bool = False) -> int:
        """Record that ``by`` sent an entry a submission guard would have refused (``rule``,
        with the guard's ``detail``); returns the record's id. ``once``: not again when
        ``by`` already overrode ``rule`` for that reference (a held payment's overrides,
        recorded when prepared, are judged again when it is approved)."""
        with self._db.write() as conn:
            if once:
                found = conn.execute(
                    "SELECT id FROM guard_overrides WHERE company = ? AND kind = ? AND"
                    " reference = ? AND rule = ? AND by = ? ORDER BY id",
                    (company, kind, str(reference), rule, by)).fetchone()
                if found is not None:
                    return int(found[0])
            (row_id,) = conn.execute(
                "INSERT INTO guard_overrides (created, company, kind, reference, rule, detail,"
                " by) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                (stamp(), name(company, "company"), name(kind, "kind", KINDS),
                 None if reference is None else str(reference), name(rule, "rule"),
                 mask_card_numbers(str(detail)), name(by, "by"))).fetchone()
        return int(row_id)

    def list(self, company: str | None = None) -> list[dict[str, Any]]:
        """The recorded guard overrides, oldest first: ``{id, when, company, kind,
        reference, rule, detail, by}``."""
        where, params = ("WHERE company = ?", (name(company, "company"),)) if company \
            else ("", ())
        rows = self._db.read("SELECT id, created, company, kind, reference, rule, detail, by"
                             f" FROM guard_overrides {where} ORDER BY id", params)
        return [{"id": row[0], "when": parse_stamp(row[1]), "company": row[2],
                 "kind": row[3], "reference": row[4], "rule": row[5], "detail": row[6],
                 "by": row[7]} for row in rows]
