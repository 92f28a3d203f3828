"""The memory of ``changes()`` polling: per company and kind, the time up to which
changes were reported (the watermark) and the key of each change already reported."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from paynb._coerce import missing
from paynb.journal._common import KINDS, chunks, name, parse_stamp, placeholders, stamp, utc
from paynb.journal._db import Table

__all__ = ["TABLES", "Polling"]

#: The tables of polling, by the schema version that added them.
TABLES = {1: ("""
CREATE TABLE IF NOT EXISTS watermarks (
    company TEXT NOT NULL,
    kind    TEXT NOT NULL,
    mark    TEXT NOT NULL,
    updated TEXT NOT NULL,
    PRIMARY KEY (company, kind)
) {NO_ROWID}""", """
CREATE TABLE IF NOT EXISTS seen_changes (
    company TEXT NOT NULL,
    kind    TEXT NOT NULL,
    key     TEXT NOT NULL,
    seen    TEXT NOT NULL,
    PRIMARY KEY (company, kind, key)
) {NO_ROWID}""")}


def _key_text(key: object) -> str:
    return "\x1f".join("" if missing(part) else stamp(part) if isinstance(part, datetime)
                        else str(part) for part in (key if isinstance(key, tuple) else (key,)))


class Polling(Table):
    """Watermarks and seen changes of ``changes()``: ``journal.polling``."""

    def watermark(self, company: str, kind: str) -> datetime | None:
        """The time up to which ``changes()`` of this company and kind were reported (UTC),
        or ``None`` before the first poll."""
        rows = self._db.read("SELECT mark FROM watermarks WHERE company = ? AND kind = ?",
                             (name(company, "company"), name(kind, "kind", KINDS)))
        return parse_stamp(rows[0][0]) if rows else None

    def set_watermark(self, company: str, kind: str, when: datetime) -> None:
        """Remember ``when`` (a zone-less time is taken as UTC) as the watermark."""
        mark = stamp(utc(when))
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO watermarks (company, kind, mark, updated) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (company, kind) DO UPDATE SET mark = excluded.mark,"
                " updated = excluded.updated",
                (name(company, "company"), name(kind, "kind", KINDS), mark, stamp()))

    def seen_changes(self, company: str, kind: str, keys: Iterable[Any]) -> set[Any]:
        """Which of ``keys`` were already reported (:meth:`mark_seen`).

        A key is any hashable, typically ``(item_id, item_status, return_date)``; parts are
        compared by their text, datetimes by their UTC time, ``None``/``NaT`` as empty.
        Returns the given key objects that were seen.
        """
        company = name(company, "company")
        kind = name(kind, "kind", KINDS)
        by_text: dict[str, list[Any]] = {}
        for key in keys:
            by_text.setdefault(_key_text(key), []).append(key)
        texts = list(by_text)
        seen: set[Any] = set()
        with self._db.reading() as conn:
            for chunk in chunks(texts):
                for (text,) in conn.execute(
                        "SELECT key FROM seen_changes WHERE company = ? AND kind = ? AND key IN"
                        f" ({placeholders(len(chunk))})", (company, kind, *chunk)).fetchall():
                    seen.update(by_text[text])
        return seen

    def mark_seen(self, company: str, kind: str, keys: Iterable[Any]) -> int:
        """Remember ``keys`` as reported (see :meth:`seen_changes`); returns how many were new."""
        company = name(company, "company")
        kind = name(kind, "kind", KINDS)
        now = stamp()
        rows = [(company, kind, text, now) for text in {_key_text(key) for key in keys}]
        if not rows:
            return 0
        with self._db.write() as conn:
            added: int = conn.executemany(
                "INSERT INTO seen_changes (company, kind, key, seen) VALUES (?, ?, ?, ?)"
                " ON CONFLICT (company, kind, key) DO NOTHING", rows).rowcount
        return added
