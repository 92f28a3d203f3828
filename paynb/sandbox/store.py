"""The sandbox's SQLite store: items, NOCs, the clock and business processing.

One connection guarded by a lock serves every request thread (SQLite does
the work in C, so the lock is held for microseconds to a few milliseconds);
file databases use WAL. Columns carry the service's wire names, amounts are
integer cents (ACH, RCC) or the integer instant amount, timestamps are epoch
milliseconds. Columns starting with ``_`` are internal: ``_seq`` numbers a
company's items 1, 2, 3... so that an unfiltered page is an index range
whatever the table size, and ``_fate_*`` / ``_noc_*`` hold what business
processing will do to an item and when (see :mod:`paynb.sandbox.rules`).
"""

from __future__ import annotations

import builtins
import csv
import functools
import io
import json
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from paynb._xlsx import Sheet, write_workbook
from paynb.codes import NOC_CODES, RETURN_CODES, STATUS_NAMES, STATUS_ORDER
from paynb.sandbox import processing, rules
from paynb.sandbox.wire import dumps

__all__ = ["KINDS", "RETURN_ITEM_BASE", "Kind", "ListQuery", "Store", "VoidError"]


@dataclass(frozen=True)
class Kind:
    """One item table: its wire fields, id, and how amounts and totals work."""

    name: str
    table: str
    id_field: str
    fields: tuple[str, ...]
    timestamps: frozenset[str]
    amount: str  # "cents", "int" or "none"
    totals: str  # how creditAmount/debitAmount are summed: "ach", "debit", "credit", "none"
    internal: tuple[str, ...] = ()
    key: str = field(default="")  # the integer primary key column
    booleans: frozenset[str] = frozenset()  # stored 0/1, sent as true/false
    objects: frozenset[str] = frozenset()  # stored as JSON text, sent as JSON objects

    @property
    def pk(self) -> str:
        """The integer primary key column (the wire id for ACH, RCC and NOCs)."""
        return self.key or self.id_field


_ACH_FIELDS = (
    "achItemId", "companyCode", "flexBatchId", "merchantId", "itemStatus",
    "firstSignerFirstName", "firstSignerLastName", "address1", "address2", "city", "state",
    "zip", "countryCode", "yourReferenceNumber", "amount", "bankRoutingNumber",
    "bankAccountNumber", "returnReason", "returnMessage", "itemSource", "returnItemId",
    "reportStatus", "receivedDateTime", "settleDate", "returnDate", "achEffectiveDate",
    "depositDateTime", "apiReportDateTime", "sendDate", "bankId", "achTransactionCode",
    "achAccountType", "achTransactionType", "achTransactionSubType", "achEntryClass",
    "achPaymentTypeCode", "achCheckNumber", "achIdentificationNumber",
    "achCompanyEntryDescription", "achCompanyDiscretionaryData",
    "achTransactionDiscretionaryData", "achAddendaText", "sameDayAchRequested",
    "returnFileName", "settlementReportFileName", "returnReportFileName", "iatAddenda",
    "requestedSendDate", "requestedAchEffectiveDate",
)
_RCC_FIELDS = (
    "rccItemId", "companyCode", "flexBatchId", "itemStatus", "firstSignerFirstName",
    "firstSignerLastName", "secondSignerFirstName", "secondSignerLastName", "address1",
    "address2", "city", "state", "zip", "yourReferenceNumber", "amount", "bankName",
    "bankRoutingNumber", "bankAccountNumber", "bankCity", "bankState", "bankZip",
    "checkNumber", "returnReason", "returnMessage", "payeeName", "payeeAccountNumber",
    "payeePhone", "itemSource", "returnItemId", "reportStatus", "checkDate", "sendDate",
    "receivedDateTime", "settleDate", "returnDate", "bankId", "depositDateTime",
    "apiReportDateTime",
)
_INSTANT_FIELDS = (
    "uniqueId", "companyCode", "yourReferenceNumber", "nameOnCard", "cardBrand", "cardLastFour",
    "amount", "status", "statusCode", "statusDescription", "receivedDateTime",
    "completedDateTime",
)
_RTP_FIELDS = (
    "uniqueId", "companyCode", "yourReferenceNumber", "name", "firstName", "lastName",
    "routingNumber", "accountNumber", "amount", "receivedDateTime", "completedDateTime",
    "status", "statusCode", "statusDescription", "requestReturnReceivedDateTime",
    "requestReturnCompletedDateTime", "requestReturnStatus", "requestReturnStatusCode",
    "requestReturnStatusDescription",
)
_NOC_FIELDS = (
    "nocId", "companyCode", "achItemId", "yourReferenceNumber", "changeCode", "changeReason",
    "correctedData", "nocDate",
)
# What business processing will do to an item and when (processing.Fates), and its
# planned schedule (processing.Schedule): copied to the wire fields when the time comes.
_FATE = ("_fate_status", "_fate_at", "_fate_code", "_fate_message", "_send_at", "_settle_at")

KINDS: dict[str, Kind] = {
    "ach": Kind("ach", "ach", "achItemId", _ACH_FIELDS,
                frozenset({"receivedDateTime", "settleDate", "returnDate", "achEffectiveDate",
                           "depositDateTime", "apiReportDateTime", "sendDate",
                           "requestedSendDate", "requestedAchEffectiveDate"}),
                "cents", "ach", (*_FATE, "_effective_at", "_noc_at", "_noc_code"),
                booleans=frozenset({"sameDayAchRequested"}), objects=frozenset({"iatAddenda"})),
    "rcc": Kind("rcc", "rcc", "rccItemId", _RCC_FIELDS,
                frozenset({"checkDate", "sendDate", "receivedDateTime", "settleDate",
                           "returnDate", "depositDateTime", "apiReportDateTime"}),
                "cents", "debit", _FATE),
    "instant": Kind("instant", "instant", "uniqueId", _INSTANT_FIELDS,
                    frozenset({"receivedDateTime", "completedDateTime"}), "int", "credit",
                    key="_id"),
    "rtp": Kind("rtp", "rtp", "uniqueId", _RTP_FIELDS,
                frozenset({"receivedDateTime", "completedDateTime",
                           "requestReturnReceivedDateTime", "requestReturnCompletedDateTime"}),
                "int", "credit", key="_id"),
    "noc": Kind("noc", "noc", "nocId", _NOC_FIELDS, frozenset({"nocDate"}), "none", "none"),
}

_INTEGER_COLUMNS = {"achItemId", "rccItemId", "nocId", "_id", "amount", "merchantId",
                    "returnItemId", "bankId", "achTransactionCode", "achCheckNumber",
                    "checkNumber", "sameDayAchRequested", "_seq", "_fate_at", "_noc_at",
                    "_send_at", "_settle_at", "_effective_at",
                    *(name for kind in KINDS.values() for name in kind.timestamps)}


def _schema() -> tuple[list[str], dict[str, str]]:
    """``CREATE TABLE`` statements, and the index statements by index name."""
    tables = ["CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)"]
    indexes: dict[str, str] = {}
    for kind in KINDS.values():
        columns = []
        if kind.key:
            columns.append(f"{kind.key} INTEGER PRIMARY KEY")
        for name in (*kind.fields, "_seq", *kind.internal):
            kind_of = "INTEGER" if name in _INTEGER_COLUMNS else "TEXT"
            if name == kind.pk:
                columns.append(f"{name} INTEGER PRIMARY KEY")
            elif name == "uniqueId":
                columns.append("uniqueId TEXT NOT NULL UNIQUE")
            elif name == "itemStatus":
                columns.append("itemStatus TEXT NOT NULL DEFAULT 'W'")
            else:
                columns.append(f"{name} {kind_of}")
        t = kind.table
        tables.append(f"CREATE TABLE IF NOT EXISTS {t} ({', '.join(columns)})")
        indexes[f"{t}_company_seq"] = f"UNIQUE INDEX {t}_company_seq ON {t} (companyCode, _seq)"
        indexes[f"{t}_company_ref"] = (f"INDEX {t}_company_ref "
                                       f"ON {t} (companyCode, yourReferenceNumber)")
        if "itemStatus" in kind.fields:
            # _seq last: the filtered page's ids come from the index alone (covering), in
            # the order the list is answered, without visiting the rows.
            indexes[f"{t}_company_status_return_seq"] = (
                f"INDEX {t}_company_status_return_seq "
                f"ON {t} (companyCode, itemStatus, returnDate, _seq)")
            # Walking one status's items in id order (a filtered page that most of them
            # match); with the amounts, it also answers the totals of a status alone (a
            # count of W is then read from the index, not from every W item's row).
            totals = ("achTransactionType, amount" if kind.totals == "ach" else "amount")
            indexes[f"{t}_company_status_seq"] = (
                f"INDEX {t}_company_status_seq "
                f"ON {t} (companyCode, itemStatus, _seq, returnDate, {totals})")
            indexes[f"{t}_fate"] = (f"INDEX {t}_fate ON {t} (_fate_at) "
                                    "WHERE _fate_status IS NOT NULL")
    indexes["ach_noc"] = "INDEX ach_noc ON ach (_noc_at) WHERE _noc_at IS NOT NULL"
    for t in ("ach", "rcc"):
        indexes[f"{t}_send"] = f"INDEX {t}_send ON {t} (_send_at) WHERE itemStatus = 'W'"
    return tables, indexes


_TABLES, _INDEXES = _schema()


def _cents(amount: Decimal) -> int:
    return int(amount * 100)


def _money(cents: int | None) -> Decimal | None:
    return None if cents is None else Decimal(cents).scaleb(-2)


@dataclass(frozen=True)
class ListQuery:
    """Filters and paging of a list or export (wire names in comments)."""

    page: int = 0
    page_size: int = 100
    statuses: tuple[str, ...] = ()  # itemStatus
    return_from: int | None = None  # returnDateStart, epoch ms, inclusive
    return_to: int | None = None  # returnDateEnd, epoch ms, inclusive
    reference: str | None = None  # yourReferenceNumber

    @property
    def filtered(self) -> bool:
        """True when any filter is set (else the page is an index range on ``_seq``)."""
        return bool(self.statuses or self.return_from is not None
                    or self.return_to is not None or self.reference is not None)


class VoidError(Exception):
    """A void that cannot be done: ``errors`` names each item and why."""

    def __init__(self, detail: str, errors: dict[str, list[str]]):
        super().__init__(detail)
        self.detail = detail
        self.errors = errors


class Store:
    """Every item the sandbox holds, the sandbox clock and business processing."""

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
        for statement in _TABLES:
            self._db.execute(statement)
        self._create_indexes()
        self._versions = dict.fromkeys(KINDS, 0)
        self._aggregates: dict[tuple[Any, ...], tuple[int, tuple[int, int, int]]] = {}
        self._route_checks: dict[tuple[str, str], int] = {}
        self._load_counters()
        self._next_due = 0  # sandbox time of the next business event; 0: look again
        offset = self._meta("clock_offset_ms")
        self._clock_offset = int(offset) if offset else 0

    # -- bookkeeping ------------------------------------------------------------------

    def _meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        """Store a sandbox setting that survives a restart of a file database."""
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def get_meta(self, key: str) -> str | None:
        """A setting stored with :meth:`set_meta`."""
        with self._lock:
            return self._meta(key)

    def _load_counters(self) -> None:
        """Next ids and per-company totals, read once so later pages never count rows."""
        self._next_id: dict[str, int] = {}
        self._stats: dict[tuple[str, str], list[int]] = {}
        for kind in KINDS.values():
            (top,) = self._db.execute(f"SELECT MAX({kind.pk}) FROM {kind.table}").fetchone()
            self._next_id[kind.name] = (top or 0) + 1
            credit, debit = self._total_expressions(kind)
            for company, n, c, d in self._db.execute(
                    f"SELECT companyCode, MAX(_seq), {credit}, {debit} FROM {kind.table} "
                    "GROUP BY companyCode"):
                self._stats[(kind.name, company)] = [n, c or 0, d or 0]

    @staticmethod
    def _total_expressions(kind: Kind) -> tuple[str, str]:
        if kind.totals == "ach":
            return ("SUM(CASE WHEN achTransactionType = 'Credit' THEN amount END)",
                    "SUM(CASE WHEN achTransactionType = 'Debit' THEN amount END)")
        if kind.totals == "credit":
            return "SUM(amount)", "0"
        if kind.totals == "debit":
            return "0", "SUM(amount)"
        return "0", "0"

    def _changed(self, kind: str) -> None:
        """Note a write: cached totals of ``kind`` are stale, the next event may be sooner."""
        self._versions[kind] += 1
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

    # -- clock ------------------------------------------------------------------------

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

    # -- writing ----------------------------------------------------------------------

    def load(self, kind_name: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        """Bulk-insert rows in one transaction (the demo generator's path).

        Each row gives ``columns`` in order, ids and ``_seq`` included; the
        counters and totals are read again afterwards.
        """
        kind = KINDS[kind_name]
        marks = ", ".join("?" * len(columns))
        with self._transaction() as db:
            db.executemany(
                f"INSERT INTO {kind.table} ({', '.join(columns)}) VALUES ({marks})", rows)
        with self._lock:
            self._load_counters()
            self._changed(kind_name)

    def _create_indexes(self) -> None:
        for statement in _INDEXES.values():
            self._db.execute("CREATE " + statement.replace("INDEX ", "INDEX IF NOT EXISTS ", 1))

    @contextmanager
    def bulk_mode(self) -> Iterator[None]:
        """Fast loading: no durability and no indexes until the end (built once, sorted)."""
        with self._lock:
            self._db.execute("PRAGMA synchronous=OFF")
            self._db.execute("PRAGMA cache_size=-262144")
            for name in _INDEXES:
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
        amount = row.get("amount") or 0
        stats = self._stats[(kind.name, company)]
        if kind.totals == "credit" or (kind.totals == "ach"
                                       and row.get("achTransactionType") == "Credit"):
            stats[1] += amount
        elif kind.totals == "debit" or (kind.totals == "ach"
                                        and row.get("achTransactionType") == "Debit"):
            stats[2] += amount

    def insert(self, kind_name: str, company: str,
               build: Sequence[Any]) -> list[dict[str, Any]]:
        """Store new items in one transaction and return their records.

        ``build`` holds one callable per item, ``build(item_id, seq) -> row dict``,
        called with the lock held so ids, draws and ``_seq`` follow input order.
        """
        kind = KINDS[kind_name]
        with self._lock:
            saved = (dict(self._next_id), {k: list(v) for k, v in self._stats.items()})
            rows = []
            for make in build:
                item_id, seq = self.allocate(kind_name, company)
                row = make(item_id, seq)
                row["_seq"] = seq
                row["companyCode"] = company
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
                f"SELECT {_columns(kind)} FROM {kind.table} WHERE {kind.pk} BETWEEN ? AND ? "
                f"ORDER BY {kind.pk}", (rows[0][kind.pk], rows[-1][kind.pk])).fetchall()
        return [self._record(kind, row) for row in found]

    # -- business processing ----------------------------------------------------------

    def process(self) -> None:
        """Apply every business event due by the sandbox clock (a no-op until the next one).

        The transitions of :data:`paynb.sandbox.processing.TRANSITIONS`, in the order
        they happen to one item: checks (I, B), the cut-off (S), returns (R), NOCs.
        """
        now = self.now()
        with self._lock:
            if now < self._next_due:
                return
            with self._transaction():
                changed = {"ach": 0, "rcc": 0, "noc": 0}
                for table in ("ach", "rcc"):
                    changed[table] += self._apply_fates(table, now, ("I", "B"), "W")
                    changed[table] += self._send(table, now)
                    changed[table] += self._apply_fates(table, now, ("R",), "S")
                changed["noc"] += self._emit_nocs(now)
            for kind, count in changed.items():
                if count:
                    self._changed(kind)
            self._next_due = min(
                (due for (due,) in (self._db.execute(query).fetchone() for query in _NEXT_DUE)
                 if due is not None), default=_NEVER)

    def _send(self, table: str, now: int) -> int:
        """W -> S at the cut-off: the planned dates become the record's."""
        ach = table == "ach"
        return self._db.execute(
            f"UPDATE {table} SET itemStatus = 'S', sendDate = _send_at, "
            "depositDateTime = _send_at, apiReportDateTime = _send_at + ?, "
            "settleDate = _settle_at, reportStatus = 'Sent'"
            + (", achEffectiveDate = _effective_at, settlementReportFileName = 'SETTLE_' || "
               f"companyCode || '_' || {_yyyymmdd('_settle_at')} || '.csv'" if ach else "")
            + " WHERE itemStatus = 'W' AND _send_at <= ?",
            (self.config.report_delay_ms, now)).rowcount

    def _apply_fates(self, table: str, now: int, fates: tuple[str, ...], current: str) -> int:
        kind = KINDS[table]
        files = (", returnFileName = CASE WHEN _fate_status = 'R' THEN 'RET_' || companyCode "
                 f"|| '_' || {_yyyymmdd('_fate_at')} || '.ach' END, returnReportFileName = "
                 "CASE WHEN _fate_status = 'R' THEN 'RETRPT_' || companyCode || '_' || "
                 f"{_yyyymmdd('_fate_at')} || '.csv' END" if table == "ach" else "")
        return self._db.execute(
            f"UPDATE {table} SET itemStatus = _fate_status, "
            f"returnDate = _fate_at - _fate_at % {processing.DAY_MS}, returnReason = _fate_code, "
            "returnMessage = _fate_message, returnItemId = CASE WHEN _fate_status = 'R' THEN "
            f"{kind.pk} + {RETURN_ITEM_BASE} END, reportStatus = CASE WHEN _fate_status = 'R' "
            f"THEN 'Returned' ELSE reportStatus END{files}, _fate_status = NULL, _fate_at = NULL "
            f"WHERE _fate_status IS NOT NULL AND _fate_at <= ? AND _fate_status IN {_sql(fates)} "
            "AND itemStatus = ?", (now, current)).rowcount

    def _emit_nocs(self, now: int) -> int:
        due = self._db.execute(
            "SELECT achItemId, companyCode, yourReferenceNumber, _noc_code, _noc_at, "
            "achAccountType FROM ach WHERE _noc_at IS NOT NULL AND _noc_at <= ? "
            "AND itemStatus IN ('S', 'R')", (now,)).fetchall()
        for ach_id, company, reference, code, at, account_type in due:
            noc_id, seq = self.allocate("noc", company)
            u = rules.draws(self.seed, "noc", noc_id, 1)[0]
            self._db.execute(
                "INSERT INTO noc (nocId, companyCode, _seq, achItemId, yourReferenceNumber, "
                "changeCode, changeReason, correctedData, nocDate) VALUES (?,?,?,?,?,?,?,?,?)",
                (noc_id, company, seq, ach_id, reference, code, NOC_CODES.get(code),
                 processing.noc_corrected_data(code, u, savings=account_type == "Savings"), at))
        self._db.execute("UPDATE ach SET _noc_at = NULL, _noc_code = NULL "
                         "WHERE _noc_at IS NOT NULL AND _noc_at <= ?", (now,))
        return len(due)

    # -- reading ----------------------------------------------------------------------

    def _record(self, kind: Kind, row: Sequence[Any]) -> dict[str, Any]:
        """A wire record from a row selected with :func:`_columns` (timestamps formatted)."""
        # Built in C (tuple slices, dict(zip)) rather than field by field: this runs for
        # every record of every page, and was a third of the time of a list page.
        names, status_at, cents = _record_shape(kind)
        if status_at is not None:
            # The status name goes right after its code, as the wire shows it.
            row = (*row[:status_at + 1], STATUS_NAMES.get(row[status_at]), *row[status_at + 1:])
        record = dict(zip(names, row, strict=True))
        if cents:
            record["amount"] = _money(record["amount"])
        for name in kind.booleans:
            if record[name] is not None:
                record[name] = bool(record[name])
        for name in kind.objects:
            if record[name] is not None:
                record[name] = json.loads(record[name], parse_float=Decimal)
        return record

    @staticmethod
    def _fit(kind: Kind, query: ListQuery) -> ListQuery:
        """The query without the filters ``kind`` has no column for (they are ignored)."""
        if "itemStatus" in kind.fields:
            if not query.statuses and (query.return_from is not None
                                       or query.return_to is not None):
                # Every status, so the (company, status, returnDate) index serves the range.
                return replace(query, statuses=STATUS_ORDER)
            return query
        return replace(query, statuses=(), return_from=None, return_to=None)

    def _where(self, kind: Kind, company: str, query: ListQuery, *,
               totals: bool = False) -> tuple[str, list[Any]]:
        """``FROM`` source (with the index that serves the filters; for ``totals``, the
        one that also holds the amounts when it can) and ``WHERE`` clause."""
        t = kind.table
        clauses, params = self._clauses(company, query)
        # The planner, avoiding a sort for ORDER BY _seq, would rather walk the whole
        # company; the filters' own index is always the better choice here.
        dated = query.return_from is not None or query.return_to is not None
        index = (f"{t}_company_ref" if query.reference is not None else
                 f"{t}_company_status_seq" if query.statuses and totals and not dated else
                 f"{t}_company_status_return_seq" if query.statuses else f"{t}_company_seq")
        return f"{t} INDEXED BY {index} WHERE {clauses}", params

    @staticmethod
    def _clauses(company: str, query: ListQuery) -> tuple[str, list[Any]]:
        """The ``WHERE`` conditions of ``query`` for ``company``, and their parameters."""
        clauses: builtins.list[str] = ["companyCode = ?"]
        params: builtins.list[Any] = [company]
        if query.statuses:
            clauses.append(f"itemStatus IN ({', '.join('?' * len(query.statuses))})")
            params += query.statuses
        if query.return_from is not None:
            clauses.append("returnDate >= ?")
            params.append(query.return_from)
        if query.return_to is not None:
            clauses.append("returnDate <= ?")
            params.append(query.return_to)
        if query.reference is not None:
            clauses.append("yourReferenceNumber = ?")
            params.append(query.reference)
        return " AND ".join(clauses), params

    def _page_rowids(self, kind: Kind, company: str, query: ListQuery,
                     total: int) -> tuple[str, list[Any]]:
        """A ``SELECT`` of the rowids of a filtered page (``total`` items match), and its
        parameters.

        Two ways: the filters' index finds every match and sorts them by id, which costs
        ``total``; or each status's items are walked in id order, keeping the matches
        until the page is full, then merged, which costs about ``wanted / share`` where
        ``share`` is the part of those statuses' items that match. A poll of every return
        date at 1,000,000 items costs 3.6 ms the first way and 0.75 ms the second; a
        narrow date range is much cheaper the first way."""
        t = kind.table
        first = query.page * query.page_size
        wanted = first + query.page_size
        if query.statuses and query.reference is None and total:
            in_statuses = self._count(kind, company, query.statuses)
            if wanted * in_statuses < total * total:
                parts, params = [], []
                dates = replace(query, statuses=())
                for status in query.statuses:
                    clauses, values = self._clauses(company, dates)
                    parts.append(
                        f"SELECT * FROM (SELECT rowid AS r, _seq AS s FROM {t} INDEXED BY "
                        f"{t}_company_status_seq WHERE itemStatus = ? AND {clauses} "
                        "ORDER BY _seq LIMIT ?)")
                    params += [status, *values, wanted]
                return (f"SELECT r FROM ({' UNION ALL '.join(parts)}) ORDER BY s "
                        "LIMIT ? OFFSET ?", [*params, query.page_size, first])
        where, params = self._where(kind, company, query)
        return (f"SELECT rowid FROM {where} ORDER BY _seq LIMIT ? OFFSET ?",
                [*params, query.page_size, first])

    def _count(self, kind: Kind, company: str, statuses: tuple[str, ...]) -> int:
        """How many items of ``company`` are in ``statuses``, for the page planner: from the
        status index alone. (The answer's aggregate also sums the amounts, which visits
        every row: 0.2 s for the 40,000 R items of 1,000,000, paid by the first filtered
        page after any change.)"""
        key = (kind.name, company, statuses, "count")
        cached = self._aggregates.get(key)
        if cached and cached[0] == self._versions[kind.name]:
            return cached[1][0]
        t = kind.table
        n = self._db.execute(
            f"SELECT COUNT(*) FROM {t} INDEXED BY {t}_company_status_seq WHERE companyCode = ? "
            f"AND itemStatus IN ({', '.join('?' * len(statuses))})",
            [company, *statuses]).fetchone()[0]
        self._aggregates[key] = (self._versions[kind.name], (n, 0, 0))
        return int(n)

    def _aggregate(self, kind: Kind, company: str, query: ListQuery) -> tuple[int, int, int]:
        if not query.filtered:
            n, credit, debit = self._stats.get((kind.name, company), (0, 0, 0))
            return n, credit, debit
        key = (kind.name, company, query.statuses, query.return_from, query.return_to,
               query.reference)
        cached = self._aggregates.get(key)
        if cached and cached[0] == self._versions[kind.name]:
            return cached[1]
        where, params = self._where(kind, company, query, totals=True)
        credit_sql, debit_sql = self._total_expressions(kind)
        n, c, d = self._db.execute(
            f"SELECT COUNT(*), {credit_sql}, {debit_sql} FROM {where}",
            params).fetchone()
        if len(self._aggregates) > 10_000:
            self._aggregates.clear()
        self._aggregates[key] = (self._versions[kind.name], (n, c or 0, d or 0))
        return n, c or 0, d or 0

    def _amount_total(self, kind: Kind, value: int) -> Decimal | int:
        return _money(value) if kind.amount == "cents" else value  # type: ignore[return-value]

    def list(self, kind_name: str, company: str, query: ListQuery) -> dict[str, Any]:
        """One page as a mapping (amounts ``Decimal``): :meth:`list_json`, parsed."""
        return json.loads(self.list_json(kind_name, company, query), parse_float=Decimal)

    def list_json(self, kind_name: str, company: str, query: ListQuery) -> bytes:
        """One page, as the wire JSON ``{"total", "creditAmount", "debitAmount",
        "transactions"}``, the records in id order."""
        kind = KINDS[kind_name]
        query = self._fit(kind, query)
        record = _record_json(kind)
        with self._lock:
            self.process()
            total, credit, debit = self._aggregate(kind, company, query)
            first = query.page * query.page_size
            if query.filtered:
                # The page's rows are picked from an index first and only they are read
                # and formatted: sorting every match with its formatted timestamps made a
                # poll page 6x slower at 1,000,000 items than at 10,000 (benchmarks case 7).
                chosen, params = self._page_rowids(kind, company, query, total)
                rows = self._db.execute(
                    f"SELECT {record} FROM {kind.table} WHERE rowid IN ({chosen}) "
                    "ORDER BY _seq", params).fetchall()
            else:
                # _seq runs 1..n per company, so a page is an index range, not an OFFSET scan.
                rows = self._db.execute(
                    f"SELECT {record} FROM {kind.table} WHERE companyCode = ? "
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
                f"SELECT {_columns(kind)} FROM {kind.table} "
                f"WHERE {kind.id_field} = ? AND companyCode = ?",
                (_storable(item_id), company)).fetchone()
        return self._record(kind, row) if row else None

    def export(self, kind_name: str, company: str, query: ListQuery,
               filetype: str) -> bytes:
        """Every item of ``company`` matching ``query`` as a csv, json or xlsx document."""
        kind = KINDS[kind_name]
        query = self._fit(kind, query)
        with self._lock:
            self.process()
            where, params = self._where(kind, company, query)
            rows = self._db.execute(
                f"SELECT {_columns(kind)} FROM {where} ORDER BY _seq",
                params).fetchall()
        records = [self._record(kind, row) for row in rows]
        names = list(records[0]) if records else self._record_names(kind)
        if filetype == "json":
            return dumps(records)
        for record in records:
            # A cell holds text: an object (iatAddenda) goes in as its JSON.
            for name in kind.objects:
                if record[name] is not None:
                    record[name] = dumps(record[name]).decode()
        if filetype == "csv":
            out = io.StringIO()
            writer = csv.writer(out, lineterminator="\r\n")
            writer.writerow(names)
            writer.writerows([r[n] for n in names] for r in records)
            return out.getvalue().encode("utf-8")
        return _xlsx(kind.name, names, records)

    @staticmethod
    def _record_names(kind: Kind) -> builtins.list[str]:
        return list(_record_shape(kind)[0])

    # -- voids and simulation ---------------------------------------------------------

    def void(self, kind_name: str, company: str, *, ids: Sequence[int] = (),
             references: Sequence[str] = (),
             field_name: str) -> builtins.list[dict[str, Any]]:  # (Store.list shadows list)
        """Void items (W -> V), all or none; :class:`VoidError` names each refusal.

        Items are chosen by id (``ids``) or by reference number (every W item with
        that reference). ``field_name`` is the request field the errors are keyed by.
        """
        kind = KINDS[kind_name]
        with self._lock:
            self.process()
            chosen: list[int] = []
            errors: dict[str, list[str]] = {}
            for index, item_id in enumerate(ids):
                row = self._db.execute(
                    f"SELECT itemStatus FROM {kind.table} WHERE {kind.pk} = ? "
                    "AND companyCode = ?", (_storable(item_id), company)).fetchone()
                if row is None:
                    errors[f"{field_name}[{index}]"] = [f"item {item_id} does not exist"]
                elif not processing.voidable(row[0]):
                    errors[f"{field_name}[{index}]"] = [_not_voidable(item_id, row[0])]
                else:
                    chosen.append(item_id)
            for index, reference in enumerate(references):
                found = self._db.execute(
                    f"SELECT {kind.pk}, itemStatus FROM {kind.table} WHERE companyCode = ? "
                    "AND yourReferenceNumber = ?", (company, reference)).fetchall()
                waiting = [item_id for item_id, status in found if processing.voidable(status)]
                if not found:
                    errors[f"{field_name}[{index}]"] = ["no item has this reference number"]
                elif not waiting:
                    errors[f"{field_name}[{index}]"] = [_not_voidable(found[0][0], found[0][1])]
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
                (*values, _storable(item_id), company))
            self._changed(kind_name)
            return cursor.rowcount > 0

    def create_noc(self, company: str, ach_item_id: int, code: str, *, at: int,
                   corrected_data: str | None = None) -> dict[str, Any] | None:
        """Simulation: a NOC for an ACH item now; None when the item does not exist."""
        with self._lock:
            row = self._db.execute(
                "SELECT yourReferenceNumber, achAccountType FROM ach "
                "WHERE achItemId = ? AND companyCode = ?",
                (_storable(ach_item_id), company)).fetchone()
            if row is None:
                return None

            def make(noc_id: int, seq: int) -> dict[str, Any]:
                data = corrected_data
                if data is None:
                    data = processing.noc_corrected_data(
                        code, rules.draws(self.seed, "noc", noc_id, 1)[0],
                        savings=row[1] == "Savings")
                return {"nocId": noc_id, "achItemId": ach_item_id,
                        "yourReferenceNumber": row[0], "changeCode": code,
                        "changeReason": NOC_CODES.get(code), "correctedData": data,
                        "nocDate": at}

            return self.insert("noc", company, [make])[0]

    # -- route checks -----------------------------------------------------------------

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


def _storable(item_id: int | str) -> int | str:
    """An id as SQLite can compare it: SQLite integers are 64-bit, so a larger id
    cannot exist (and would overflow): it becomes -1, which matches no item."""
    if isinstance(item_id, int) and not -(2**63) <= item_id < 2**63:
        return -1
    return item_id


def _sql(values: tuple[str, ...]) -> str:
    """A tuple of fixed status codes as an SQL list (never user input)."""
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


#: When the next business event is due, each query served by a partial index.
_NEXT_DUE = (
    "SELECT MIN(_fate_at) FROM ach WHERE _fate_status IS NOT NULL",
    "SELECT MIN(_fate_at) FROM rcc WHERE _fate_status IS NOT NULL",
    "SELECT MIN(_send_at) FROM ach WHERE itemStatus = 'W'",
    "SELECT MIN(_send_at) FROM rcc WHERE itemStatus = 'W'",
    "SELECT MIN(_noc_at) FROM ach WHERE _noc_at IS NOT NULL",
)
#: A returned item's returnItemId: its own id in the return items' range.
RETURN_ITEM_BASE = 700_000_000


def _yyyymmdd(column: str) -> str:
    return f"strftime('%Y%m%d', {column} / 1000, 'unixepoch')"
_NEVER = 2**62


@functools.cache
def _record_shape(kind: Kind) -> tuple[tuple[str, ...], int | None, bool]:
    """Names of a wire record's fields, the position of ``itemStatus`` (its name is added
    after it) and whether ``amount`` is stored in cents."""
    fields = kind.fields
    at = fields.index("itemStatus") if "itemStatus" in fields else None
    names = fields if at is None else (*fields[:at + 1], "itemStatusDescription",
                                       *fields[at + 1:])
    return names, at, kind.amount == "cents" and "amount" in fields


@functools.cache
def _record_json(kind: Kind) -> str:
    """A SQL expression that renders a row as its wire record, byte for byte what
    :meth:`Store._record` and :func:`~paynb.sandbox.wire.dumps` make of it.

    List pages are rendered this way: SQLite builds the JSON in C, where building
    dicts and encoding them took half of a page's server time (benchmarks case 1)."""
    names, status_at, cents = _record_shape(kind)
    values = {name: name for name in kind.fields}
    for name in kind.timestamps:
        values[name] = f"strftime('%Y-%m-%dT%H:%M:%fZ', {name} / 1000.0, 'unixepoch')"
    if cents:
        # Exactly two decimals, as dumps writes a Decimal of cents; json() keeps the text
        # of a number, so it goes out as a number, not a string.
        values["amount"] = ("CASE WHEN amount IS NOT NULL THEN json(printf('%s%d.%02d', "
                            "CASE WHEN amount < 0 THEN '-' ELSE '' END, "
                            "abs(amount) / 100, abs(amount) % 100)) END")
    for name in kind.booleans:
        values[name] = (f"CASE WHEN {name} IS NULL THEN NULL WHEN {name} THEN json('true') "
                        "ELSE json('false') END")
    for name in kind.objects:
        values[name] = f"json({name})"  # stored as dumps wrote it: the same bytes go out
    if status_at is not None:
        cases = " ".join(f"WHEN {_sql_text(code)} THEN {_sql_text(name)}"
                         for code, name in STATUS_NAMES.items())
        values["itemStatusDescription"] = f"CASE itemStatus {cases} END"
    return "json_object(" + ", ".join(f"'{name}', {values[name]}" for name in names) + ")"


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _columns(kind: Kind) -> str:
    """The SELECT list of a record; SQLite formats the timestamps (it is much faster)."""
    return ", ".join(f"strftime('%Y-%m-%dT%H:%M:%fZ', {name} / 1000.0, 'unixepoch')"
                     if name in kind.timestamps else name for name in kind.fields)


def _not_voidable(item_id: int, status: str) -> str:
    return (f"item {item_id} is {status} ({STATUS_NAMES.get(status, status)}); "
            "only W (Waiting) items can be voided")


def _xlsx(title: str, names: list[str], records: list[dict[str, Any]]) -> bytes:
    """The records as a one-sheet workbook with a plain header row, written by paynb's
    Arrow-to-xlsx writer (Rust, constant memory). Cells hold what the JSON holds: times as
    their ISO text, numbers as numbers, never a formula."""
    import pyarrow as pa

    table = pa.table({name: pa.array([record[name] for record in records])
                      for name in names})
    out = io.BytesIO()
    write_workbook(out, {title: Sheet(table)}, header=False)
    return out.getvalue()
