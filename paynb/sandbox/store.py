"""The sandbox's SQLite store: every item it holds, the sandbox clock, writes and voids.

One connection guarded by a lock serves every request thread (SQLite does the work in C,
so the lock is held for microseconds to a few milliseconds); file databases use WAL.
Business processing (:mod:`paynb.sandbox.processing`) runs what is due before every read,
so that a read sees the sandbox's time.
"""

from __future__ import annotations

import builtins
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

from paynb.codes import NOC_CODES, RETURN_CODES, STATUS_NAMES
from paynb.sandbox import exports, processing, rules
from paynb.sandbox.queries import ListQuery, Queries, fit, total_expressions, where
from paynb.sandbox.tables import (
    INDEXES,
    KINDS,
    RETURN_ITEM_BASE,
    TABLES,
    Kind,
    columns,
    money,
    record,
    record_json,
    storable,
)
from paynb.sandbox.wire import dumps

__all__ = ["Store", "VoidError"]


class VoidError(Exception):
    """A void that cannot be done: ``errors`` names each item and why."""

    def __init__(self, detail: str, errors: dict[str, list[str]]):
        super().__init__(detail)
        self.detail = detail
        self.errors = errors


class Store:
    """Every item the sandbox holds and the sandbox clock; what is due by the clock is
    applied (:func:`paynb.sandbox.processing.apply_due`) before every read."""

    def __init__(self, path: str | None = None, *, seed: int = 1,
                 config: processing.Config | None = None):
        self.path = path
        self.seed = seed
        self.config = config or processing.Config()
        self._lock = threading.RLock()
        self._db = sqlite3.connect(path or ":memory:", check_same_thread=False,
                                   isolation_level=None)
        if path:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
        for statement in TABLES:
            self._db.execute(statement)
        self._create_indexes()
        self._queries = Queries(self._db)
        self._route_checks: dict[tuple[str, str], int] = {}
        self._load_counters()
        self._next_due = 0  # sandbox time of the next business event; 0: look again
        self._clock_offset = int(self.get_meta("clock_offset_ms") or 0)

    def set_meta(self, key: str, value: str) -> None:
        """Store a sandbox setting that survives a restart of a file database."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def get_meta(self, key: str) -> str | None:
        """A setting stored with :meth:`set_meta`."""
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def _load_counters(self) -> None:
        """Next ids and per-company totals, read once so later pages never count rows."""
        self._next_id: dict[str, int] = {}
        self._stats: dict[tuple[str, str], list[int]] = {}
        for kind in KINDS.values():
            (top,) = self._db.execute(f"SELECT MAX({kind.pk}) FROM {kind.table}").fetchone()
            self._next_id[kind.name] = (top or 0) + 1
            credit, debit = total_expressions(kind)
            for company, n, c, d in self._db.execute(
                    f"SELECT companyCode, MAX(_seq), {credit}, {debit} FROM {kind.table} "
                    "GROUP BY companyCode"):
                self._stats[(kind.name, company)] = [n, c or 0, d or 0]

    def _changed(self, kind: str) -> None:
        """Note a write: cached totals of ``kind`` are stale, the next event may be sooner."""
        self._queries.changed(kind)
        self._next_due = 0

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction (with the lock held), rolled back on any error."""
        with self._lock:
            self._db.execute("BEGIN")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def now(self) -> int:
        """The sandbox clock, epoch milliseconds: real time plus the simulated advance."""
        return int(time.time() * 1000) + self._clock_offset

    def advance_clock(self, ms: int) -> int:
        """Move the sandbox clock forward by ``ms``, run business processing, return the time."""
        if ms < 0:
            raise ValueError("the sandbox clock only moves forward")
        with self._lock:
            self._clock_offset += ms
            self.set_meta("clock_offset_ms", str(self._clock_offset))
            self.process()
            return self.now()

    def load(self, kind_name: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        """Bulk-insert rows in one transaction (the demo generator's path): each row gives
        ``columns`` in order, ids and ``_seq`` included; the counters are read again."""
        kind = KINDS[kind_name]
        marks = ", ".join("?" * len(columns))
        with self._transaction() as db:
            db.executemany(
                f"INSERT INTO {kind.table} ({', '.join(columns)}) VALUES ({marks})", rows)
        with self._lock:
            self._load_counters()
            self._changed(kind_name)

    def _create_indexes(self) -> None:
        for statement in INDEXES.values():
            self._db.execute("CREATE " + statement.replace("INDEX ", "INDEX IF NOT EXISTS ", 1))

    @contextmanager
    def bulk_mode(self) -> Iterator[None]:
        """Fast loading: no durability and no indexes until the end (built once, sorted)."""
        with self._lock:
            self._db.execute("PRAGMA synchronous=OFF")
            self._db.execute("PRAGMA cache_size=-262144")
            for name in INDEXES:
                self._db.execute(f"DROP INDEX IF EXISTS {name}")
            try:
                yield
            finally:
                self._create_indexes()
                self._db.execute("ANALYZE")
                self._db.execute("PRAGMA synchronous=NORMAL")

    def update_many(self, kind_name: str, columns: Sequence[str],
                    rows: Iterable[Sequence[Any]]) -> None:
        """Set ``columns`` of many items: each row gives their values, then the item's id."""
        kind = KINDS[kind_name]
        assignments = ", ".join(f"{c} = ?" for c in columns)
        with self._transaction() as db:
            db.executemany(f"UPDATE {kind.table} SET {assignments} WHERE {kind.pk} = ?", rows)
            self._changed(kind_name)

    def allocate(self, kind_name: str, company: str) -> tuple[int, int]:
        """The next ``(id, _seq)`` for an item of ``company`` (call with the lock held)."""
        kind_id = self._next_id[kind_name]
        self._next_id[kind_name] += 1
        stats = self._stats.setdefault((kind_name, company), [0, 0, 0])
        stats[0] += 1
        return kind_id, stats[0]

    def _add_totals(self, kind: Kind, company: str, row: dict[str, Any]) -> None:
        side = row.get("achTransactionType") if kind.totals == "ach" else kind.totals.title()
        column = {"Credit": 1, "Debit": 2}.get(side)  # as queries.total_expressions sums
        if column:
            self._stats[(kind.name, company)][column] += row.get("amount") or 0

    def insert(self, kind_name: str, company: str,
               build: Sequence[Any]) -> list[dict[str, Any]]:
        """Store new items in one transaction and return their records: ``build`` holds one
        ``build(item_id, seq) -> row dict`` per item, called in order with the lock held."""
        kind = KINDS[kind_name]
        with self._lock:
            saved = (dict(self._next_id), {k: list(v) for k, v in self._stats.items()})
            rows = []
            for make in build:
                item_id, seq = self.allocate(kind_name, company)
                row = make(item_id, seq)
                row.update(_seq=seq, companyCode=company)
                for name, value in rules.company_fields(company).items():
                    if name in kind.fields:
                        row.setdefault(name, value)
                rows.append(row)
            try:
                with self._transaction() as db:
                    for row in rows:
                        names = list(row)
                        db.execute(f"INSERT INTO {kind.table} ({', '.join(names)}) "
                                   f"VALUES ({', '.join('?' * len(names))})",
                                   [row[n] for n in names])
                        self._add_totals(kind, company, row)
            except BaseException:
                self._next_id, self._stats = saved
                raise
            self._changed(kind_name)
            found = self._db.execute(
                f"SELECT {columns(kind)} FROM {kind.table} WHERE {kind.pk} BETWEEN ? AND ? "
                f"ORDER BY {kind.pk}", (rows[0][kind.pk], rows[-1][kind.pk])).fetchall()
        return [record(kind, row) for row in found]

    def process(self) -> None:
        """Apply every business event due by the sandbox clock (a no-op until the next one):
        :func:`paynb.sandbox.processing.apply_due`."""
        now = self.now()
        with self._lock:
            if now < self._next_due:
                return
            with self._transaction() as db:
                changed = processing.apply_due(db, now, self.config, new_noc=self._new_noc)
            for kind, count in changed.items():
                if count:
                    self._changed(kind)
            self._next_due = processing.next_due(self._db)

    def _new_noc(self, company: str) -> tuple[int, int, float]:
        """A new NOC's id and ``_seq``, and the draw its corrected data is made of."""
        noc_id, seq = self.allocate("noc", company)
        return noc_id, seq, rules.draws(self.seed, "noc", noc_id, 1)[0]

    def _totals(self, kind: Kind, company: str, query: ListQuery) -> tuple[int, int, int]:
        """How many items match ``query`` and their credit and debit sums (an unfiltered
        list's from the counters, never counting rows)."""
        if not query.filtered:
            n, credit, debit = self._stats.get((kind.name, company), (0, 0, 0))
            return n, credit, debit
        return self._queries.totals(kind, company, query)

    @staticmethod
    def _amount_total(kind: Kind, value: int) -> Decimal | int:
        return money(value) if kind.amount == "cents" else value  # type: ignore[return-value]

    def list(self, kind_name: str, company: str, query: ListQuery) -> dict[str, Any]:
        """One page as a mapping (amounts ``Decimal``): :meth:`list_json`, parsed."""
        return json.loads(self.list_json(kind_name, company, query), parse_float=Decimal)

    def list_json(self, kind_name: str, company: str, query: ListQuery) -> bytes:
        """One page, as the wire JSON ``{"total", "creditAmount", "debitAmount",
        "transactions"}``, the records in id order."""
        kind = KINDS[kind_name]
        query = fit(kind, query)
        rendered = record_json(kind)
        with self._lock:
            self.process()
            total, credit, debit = self._totals(kind, company, query)
            first = query.page * query.page_size
            if query.filtered:
                # The page's rows are picked from an index first and only they are read
                # and formatted: sorting every match with its formatted timestamps made a
                # poll page 6x slower at 1,000,000 items than at 10,000 (benchmarks case 7).
                chosen, params = self._queries.page_rowids(kind, company, query, total)
                rows = self._db.execute(
                    f"SELECT {rendered} FROM {kind.table} WHERE rowid IN ({chosen}) "
                    "ORDER BY _seq", params).fetchall()
            else:
                # _seq runs 1..n per company, so a page is an index range, not an OFFSET scan.
                rows = self._db.execute(
                    f"SELECT {rendered} FROM {kind.table} WHERE companyCode = ? "
                    "AND _seq > ? AND _seq <= ? ORDER BY _seq",
                    (company, first, first + query.page_size)).fetchall()
        head = dumps({"total": total, "creditAmount": self._amount_total(kind, credit),
                      "debitAmount": self._amount_total(kind, debit)})
        records = ",".join(row[0] for row in rows).encode()
        return b"".join((head[:-1], b',"transactions":[', records, b"]}"))

    def get(self, kind_name: str, company: str, item_id: int | str) -> dict[str, Any] | None:
        """One item of ``company`` by its id, or None."""
        kind = KINDS[kind_name]
        with self._lock:
            self.process()
            row = self._db.execute(
                f"SELECT {columns(kind)} FROM {kind.table} "
                f"WHERE {kind.id_field} = ? AND companyCode = ?",
                (storable(item_id), company)).fetchone()
        return record(kind, row) if row else None

    def export(self, kind_name: str, company: str, query: ListQuery,
               filetype: str) -> bytes:
        """Every item of ``company`` matching ``query`` as a csv, json or xlsx document
        (:func:`paynb.sandbox.exports.document`)."""
        kind = KINDS[kind_name]
        query = fit(kind, query)
        with self._lock:
            self.process()
            source, params = where(kind, company, query)
            rows = self._db.execute(
                f"SELECT {columns(kind)} FROM {source} ORDER BY _seq",
                params).fetchall()
        return exports.document(kind, [record(kind, row) for row in rows], filetype)

    def void(self, kind_name: str, company: str, *, ids: Sequence[int] = (),
             references: Sequence[str] = (),
             field_name: str) -> builtins.list[dict[str, Any]]:  # (Store.list shadows list)
        """Void items (W -> V) by id or by reference number (every W item with it), all or
        none; :class:`VoidError` names each refusal by ``field_name``, the request's field."""
        kind = KINDS[kind_name]
        with self._lock:
            self.process()
            chosen: list[int] = []
            errors: dict[str, list[str]] = {}
            asked = [*((index, kind.pk, storable(i), f"item {i} does not exist")
                       for index, i in enumerate(ids)),
                     *((index, "yourReferenceNumber", reference, "no item has this reference "
                        "number") for index, reference in enumerate(references))]
            for index, column, value, why in asked:
                found = self._db.execute(
                    f"SELECT {kind.pk}, itemStatus FROM {kind.table} WHERE companyCode = ? "
                    f"AND {column} = ?", (company, value)).fetchall()
                waiting = [item_id for item_id, status in found if processing.voidable(status)]
                if found and not waiting:
                    item_id, status = found[0]
                    why = (f"item {item_id} is {status} ({STATUS_NAMES.get(status, status)}); "
                           "only W (Waiting) items can be voided")
                if not waiting:
                    errors[f"{field_name}[{index}]"] = [why]
                chosen += waiting
            if errors:
                raise VoidError(f"{len(errors)} of the items cannot be voided; nothing was voided",
                                errors)
            chosen = list(dict.fromkeys(chosen))
            with self._transaction() as db:
                db.executemany(
                    f"UPDATE {kind.table} SET itemStatus = 'V', _fate_status = NULL, "
                    f"_fate_at = NULL, _send_at = NULL"
                    f"{', _noc_at = NULL' if kind.name == 'ach' else ''} "
                    f"WHERE {kind.pk} = ?", [(i,) for i in chosen])
            self._changed(kind_name)
            return [self.get(kind_name, company, i) for i in chosen]  # type: ignore[misc]

    def force_status(self, kind_name: str, company: str, item_id: int, status: str, *,
                     at: int, code: str | None = None, message: str | None = None) -> bool:
        """Simulation: put an item in ``status`` now, with a return code and event time."""
        kind = KINDS[kind_name]
        ach = kind.name == "ach"
        # Sent (S, R): the planned dates become the record's, as at the cut-off.
        sent = ("sendDate = COALESCE(sendDate, _send_at), depositDateTime = "
                "COALESCE(depositDateTime, _send_at), settleDate = COALESCE(settleDate, "
                "_settle_at)" + (", achEffectiveDate = COALESCE(achEffectiveDate, "
                                 "_effective_at)" if ach else ""))
        with self._lock:
            self.process()
            if status in ("I", "B", "R"):
                message = message or (RETURN_CODES.get(code, "") if code else
                                      {"I": "Invalid", "B": "Blocked"}.get(status, ""))
                values: tuple[Any, ...] = (status, rules.day_start(at), code, message)
            else:
                values = (status, None, None, None)
            extra = {"S": f", {sent}, reportStatus = 'Sent', returnItemId = NULL",
                     "R": f", {sent}, reportStatus = 'Returned', "
                          f"returnItemId = {kind.pk} + {RETURN_ITEM_BASE}"}.get(
                status, ", returnItemId = NULL")
            cursor = self._db.execute(
                f"UPDATE {kind.table} SET itemStatus = ?, returnDate = ?, returnReason = ?, "
                f"returnMessage = ?{extra}, _fate_status = NULL, _fate_at = NULL"
                f"{', _noc_at = NULL' if ach else ''}"
                f"{'' if status == 'W' else ', _send_at = NULL'} "
                f"WHERE {kind.pk} = ? AND companyCode = ?",
                (*values, storable(item_id), company))
            self._changed(kind_name)
            return cursor.rowcount > 0

    def create_noc(self, company: str, ach_item_id: int, code: str, *, at: int,
                   corrected_data: str | None = None) -> dict[str, Any] | None:
        """Simulation: a NOC for an ACH item now; None when the item does not exist."""
        with self._lock:
            row = self._db.execute(
                "SELECT yourReferenceNumber, achAccountType, achTransactionCode FROM ach "
                "WHERE achItemId = ? AND companyCode = ?",
                (storable(ach_item_id), company)).fetchone()
            if row is None:
                return None

            def make(noc_id: int, seq: int) -> dict[str, Any]:
                data = corrected_data
                if data is None:
                    data = processing.noc_corrected_data(
                        code, rules.draws(self.seed, "noc", noc_id, 1)[0],
                        transaction_code=row[2], savings=row[1] == "Savings")
                return {"nocId": noc_id, "achItemId": ach_item_id,
                        "yourReferenceNumber": row[0], "changeCode": code,
                        "changeReason": NOC_CODES.get(code), "correctedData": data,
                        "nocDate": at}

            return self.insert("noc", company, [make])[0]

    def remember_route_check(self, scope: str, key: str) -> None:
        """Record a successful route check of ``key`` (a card, token or routing number)."""
        with self._lock:
            self._route_checks[(scope, key)] = self.now()

    def route_checked(self, scope: str, key: str) -> bool:
        """True when ``key`` had a successful route check within the allowed window."""
        with self._lock:
            at = self._route_checks.get((scope, key))
        return at is not None and self.now() - at <= self.config.route_check_valid_ms

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()
