"""Copying one journal into another (:meth:`paynb.journal.Journal.copy_from`).

What is copied keeps who did it and when; each row is recognised by what it is (an entry
by its company, kind, operation, reference and moment), so a second copy adds nothing.
A live submission whose reference someone else's live entry already claims in the
destination is copied without claiming it: the two are a duplicate that happened, and the
destination's guard stays as it was.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paynb.journal._common import placeholders
from paynb.journal._db import Connection, entries_lock
from paynb.journal._ledger import COLUMNS, LIVE

__all__ = ["COPIED_TABLES", "LEFT_OUT", "JournalCopy", "copy_tables"]

#: What a copy takes, in order, and the words a report uses for each.
COPIED_TABLES = {"entries": "journal entries", "approvals": "approvals",
                 "noc_applied": "NOC marks", "guard_overrides": "guard overrides",
                 "match_decisions": "match decisions"}
#: What a copy leaves out, and why: the state of one analyst's own machine.
LEFT_OUT = ("the polling memory (what changes() reported to that analyst) and the "
            "monitor's ledger (that machine's morning runs): each analyst's own")

_ENTRY_COLUMNS = (*COLUMNS, "guard")
#: The other tables: their columns, and those that tell one row from another.
_TABLES = {
    "approvals": (("created", "expires", "company", "kind", "operation", "batch",
                   "prepared_by", "why", "items", "total", "summary", "request", "state",
                   "decided_by", "decided_at", "reason"),
                  ("company", "created", "prepared_by")),
    "noc_applied": (("company", "noc_id", "applied_by", "applied_at", "note"),
                    ("company", "noc_id")),
    "guard_overrides": (("created", "company", "kind", "reference", "rule", "detail", "by"),
                        ("created", "company", "kind", "reference", "rule", "by")),
    "match_decisions": (("created", "ledger", "action", "method", "expected", "items",
                         "reason", "note", "withdrawn", "by", "withdrawn_by"),
                        ("created", "ledger", "action", "by")),
}


@dataclass(frozen=True)
class JournalCopy:
    """What a copy did (:meth:`paynb.journal.Journal.copy_from`): for each table of
    :data:`COPIED_TABLES`, the rows ``copied`` and those ``already`` there; ``unclaimed``,
    the live submissions copied without claiming their reference (another's live entry
    held it: a duplicate that happened, listed in ``duplicates`` by company, kind and
    reference); ``dry_run`` when nothing was written."""

    source: str
    destination: str
    copied: Mapping[str, int] = field(default_factory=dict)
    already: Mapping[str, int] = field(default_factory=dict)
    unclaimed: int = 0
    duplicates: tuple[tuple[str, str, str], ...] = ()
    dry_run: bool = False

    @property
    def total(self) -> int:
        """Rows copied, in all tables."""
        return sum(self.copied.values())

    def __str__(self) -> str:
        verb = "would copy" if self.dry_run else "copied"
        lines = [f"{self.source} -> {self.destination}: {verb} {self.total} rows"
                 + (" (dry run: nothing written)" if self.dry_run else "")]
        for table, words in COPIED_TABLES.items():
            lines.append(f"  {words}: {self.copied.get(table, 0)} {verb}, "
                         f"{self.already.get(table, 0)} already there")
        if self.unclaimed:
            shown = ", ".join(f"{kind} {reference} of {company}"
                              for company, kind, reference in self.duplicates[:5])
            more = f" and {len(self.duplicates) - 5} more" if len(self.duplicates) > 5 else ""
            lines.append(f"  {self.unclaimed} live submissions whose reference another live "
                         f"entry of the destination already claims (a duplicate that "
                         f"happened): copied without claiming it: {shown}{more}")
        lines.append(f"  left out: {LEFT_OUT}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return (f"<paynb journal copy {self.source} -> {self.destination}: "
                f"{'would copy' if self.dry_run else 'copied'} {self.total} rows>")


def _select(conn: Connection, table: str, columns: Sequence[str], order: str,
            where: str = "", params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
    return [tuple(row) for row in conn.execute(
        f"SELECT {', '.join(columns)} FROM {table}{where} ORDER BY {order}", params).fetchall()]


class _Target:
    """The destination inside its write transaction; a dry run inserts nothing (its rows
    get made-up ids, for the batches)."""

    def __init__(self, conn: Connection, *, dry_run: bool) -> None:
        self.conn = conn
        self.dry_run = dry_run
        self._made_up = 0

    def insert(self, table: str, columns: Sequence[str], values: Sequence[Any]) -> int | None:
        """Insert one row; its id when the table has one."""
        if self.dry_run:
            self._made_up -= 1
            return self._made_up
        returning = " RETURNING id" if table in ("entries", "approvals") else ""
        cursor = self.conn.execute(f"INSERT INTO {table} ({', '.join(columns)}) VALUES"
                                   f" ({placeholders(len(columns))}){returning}", values)
        return int(cursor.fetchone()[0]) if returning else None

    def name_batch(self, entry: int) -> None:
        """The first entry of a call names its batch."""
        if not self.dry_run:
            self.conn.execute("UPDATE entries SET batch = ? WHERE id = ?", (entry, entry))


class _Present:
    """The rows the destination holds, counted by key: each source row of the same key is
    one of them (a second copy adds nothing) until the count runs out."""

    def __init__(self, rows: Iterable[tuple[Any, ...]], key: Callable[[tuple[Any, ...]], Any],
                 value: Callable[[tuple[Any, ...]], Any] = lambda row: None) -> None:
        self._found: dict[Any, list[Any]] = {}
        for row in rows:
            self._found.setdefault(key(row), []).append(value(row))

    def take(self, key: Any) -> tuple[bool, Any]:
        """Whether a row of ``key`` is there (and its value), using it up."""
        found = self._found.get(key)
        return (True, found.pop(0)) if found else (False, None)


def _copy_entries(source: Connection, target: _Target, item_id: Callable[[Any], Any],
                  ) -> tuple[int, int, list[tuple[str, str, str]], dict[int, int]]:
    """Copy the entries: (copied, already there, the duplicates that happened, the map of
    source ids to destination ids, for the batches and the approvals' batches)."""
    rows = _select(source, "entries", _ENTRY_COLUMNS, "id")
    if not rows:
        return 0, 0, [], {}
    at = {name: n for n, name in enumerate(_ENTRY_COLUMNS)}

    def key(row: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(row[at[name]] for name in ("company", "kind", "operation", "reference",
                                                "created"))

    first, last = min(row[at["created"]] for row in rows), max(row[at["created"]] for row in rows)
    # The destination's entries made within the source's span: the only ones a source
    # entry can be.
    there = _Present(_select(target.conn, "entries", _ENTRY_COLUMNS, "id",
                             " WHERE created >= ? AND created <= ?", (first, last)),
                     key, lambda row: row[0])
    for company, kind in sorted({(row[at["company"]], row[at["kind"]]) for row in rows}):
        target.conn.lock(entries_lock(company, kind))  # as reserve() does
    ids: dict[int, int] = {}
    copied = already = 0
    duplicates: list[tuple[str, str, str]] = []
    columns = _ENTRY_COLUMNS[1:]
    for row in rows:
        found, target_id = there.take(key(row))
        if found:
            ids[row[0]] = target_id
            already += 1
            continue
        values = dict(zip(_ENTRY_COLUMNS, row, strict=True))
        values["batch"] = ids.get(values["batch"]) if values["batch"] is not None else None
        values["item_id"] = item_id(values["item_id"])
        if values["guard"] and values["state"] in LIVE and _claimed(target.conn, values):
            values["guard"] = 0
            duplicates.append((values["company"], values["kind"], values["reference"]))
        new_id = target.insert("entries", columns, [values[name] for name in columns])
        assert new_id is not None
        ids[row[0]] = new_id
        if row[at["batch"]] == row[0]:
            target.name_batch(new_id)
        copied += 1
    return copied, already, duplicates, ids


def _claimed(conn: Connection, entry: Mapping[str, Any]) -> bool:
    """Whether a live entry of the destination claims ``entry``'s reference."""
    return conn.execute(
        "SELECT 1 FROM entries WHERE company = ? AND kind = ? AND reference = ? AND"
        f" guard = 1 AND state IN ({placeholders(len(LIVE))})",
        (entry["company"], entry["kind"], entry["reference"], *LIVE)).fetchone() is not None


def _copy_rows(source: Connection, target: _Target, table: str,
               batches: Mapping[int, int]) -> tuple[int, int]:
    """Copy the rows of ``table`` (one of :data:`_TABLES`) the destination lacks; an
    approval's batch becomes its entries' batch in the destination (``batches``)."""
    columns, keys = _TABLES[table]
    at = [columns.index(name) for name in keys]
    batch = columns.index("batch") if "batch" in columns else None
    order = ", ".join(keys) if batch is None else "id"  # approvals: as they were made

    def key(row: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(row[n] for n in at)

    there = _Present(_select(target.conn, table, columns, order), key)
    copied = already = 0
    for row in _select(source, table, columns, order):
        if there.take(key(row))[0]:
            already += 1
            continue
        values = list(row)
        if batch is not None:
            values[batch] = batches[row[batch]]
        target.insert(table, columns, values)
        copied += 1
    return copied, already


def copy_tables(source: Connection, target: Connection, *, item_id: Callable[[Any], Any],
                dry_run: bool = False) -> tuple[Counter[str], Counter[str],
                                                list[tuple[str, str, str]]]:
    """Copy every table of :data:`COPIED_TABLES` from ``source`` (read) into ``target``
    (inside its write transaction); ``item_id`` turns an item id into the target's form;
    ``dry_run`` counts and writes nothing. Returns the rows copied and already there by
    table, and the duplicates that happened (company, kind, reference)."""
    into = _Target(target, dry_run=dry_run)
    copied: Counter[str] = Counter()
    already: Counter[str] = Counter()
    copied["entries"], already["entries"], duplicates, ids = _copy_entries(source, into,
                                                                           item_id)
    for table in _TABLES:
        copied[table], already[table] = _copy_rows(source, into, table, ids)
    return copied, already, duplicates
