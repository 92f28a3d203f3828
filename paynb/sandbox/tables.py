"""The sandbox's tables, and a stored row as its wire record.

One table per item kind (:data:`KINDS`), columns by their wire names: amounts in integer
cents (ACH, RCC) or the integer instant amount, timestamps in epoch milliseconds.
Columns starting with ``_`` are internal: ``_seq`` numbers a company's items 1, 2, 3...
(an unfiltered page is an index range), ``_fate_*`` / ``_noc_*`` hold what business
processing will do and when. A row becomes the same wire bytes in Python (:func:`record`)
or in SQLite (:func:`record_json`, for list pages).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from paynb._kinds import KINDS as KIND_REGISTRY
from paynb.codes import STATUS_NAMES

__all__ = ["INDEXES", "KINDS", "RETURN_ITEM_BASE", "TABLES", "Kind", "columns", "money", "record",
           "record_json", "record_names", "sql_list", "storable", "yyyymmdd"]

#: A returned item's returnItemId: its own id in the return items' range.
RETURN_ITEM_BASE = 700_000_000


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
    key: str = ""  # the integer primary key column
    booleans: frozenset[str] = frozenset()  # stored 0/1, sent as true/false
    objects: frozenset[str] = frozenset()  # stored as JSON text, sent as JSON objects

    @property
    def pk(self) -> str:
        """The integer primary key column (the wire id for ACH, RCC and NOCs)."""
        return self.key or self.id_field


# What business processing will do to an item and when (processing.Fates), and its
# planned schedule (processing.Schedule): copied to the wire fields when the time comes.
_FATE = ("_fate_status", "_fate_at", "_fate_code", "_fate_message", "_send_at", "_settle_at")


def _kind(name: str, amount: str, totals: str, internal: tuple[str, ...] = (), key: str = ""
          ) -> Kind:
    """The table of a kind of :mod:`paynb._kinds`, with its business processing's columns."""
    kind = KIND_REGISTRY[name]
    return Kind(name, name, kind.id_field, kind.wire, kind.timestamps, amount, totals, internal,
                key, frozenset(kind.names_of("flag")), frozenset(kind.names_of("object")))


KINDS: dict[str, Kind] = {
    "ach": _kind("ach", "cents", "ach", (*_FATE, "_effective_at", "_noc_at", "_noc_code")),
    "rcc": _kind("rcc", "cents", "debit", _FATE),
    "instant": _kind("instant", "int", "credit", key="_id"),
    "rtp": _kind("rtp", "int", "credit", key="_id"),
    "noc": _kind("noc", "none", "none"),
}

_INTEGER_COLUMNS = {"_id", "_seq", "_fate_at", "_noc_at", "_send_at", "_settle_at", "_effective_at",
                    *(f.name for kind in KIND_REGISTRY.values() for f in kind.fields
                      if f.type in ("id", "money", "wire_integer", "time", "flag",
                                    "transaction_code"))}

_COLUMN_RULES = {"uniqueId": "TEXT NOT NULL UNIQUE", "itemStatus": "TEXT NOT NULL DEFAULT 'W'"}


def _schema() -> tuple[list[str], dict[str, str]]:
    """``CREATE TABLE`` statements, and the index statements by index name."""
    tables = ["CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)"]
    on: dict[str, str] = {}  # by index name: what it indexes
    for kind in KINDS.values():
        columns = [f"{kind.key} INTEGER PRIMARY KEY"] if kind.key else []
        for name in (*kind.fields, "_seq", *kind.internal):
            rule = "INTEGER PRIMARY KEY" if name == kind.pk else _COLUMN_RULES.get(
                name, "INTEGER" if name in _INTEGER_COLUMNS else "TEXT")
            columns.append(f"{name} {rule}")
        t = kind.table
        tables.append(f"CREATE TABLE IF NOT EXISTS {t} ({', '.join(columns)})")
        on[f"{t}_company_seq"] = f"{t} (companyCode, _seq)"
        on[f"{t}_company_ref"] = f"{t} (companyCode, yourReferenceNumber)"
        if "itemStatus" in kind.fields:
            # _seq last: the filtered page's ids come from the index alone (covering), in
            # the order the list is answered, without visiting the rows.
            on[f"{t}_company_status_return_seq"] = (f"{t} (companyCode, itemStatus, returnDate, "
                                                    "_seq)")
            # Walking one status's items in id order (a filtered page that most of them
            # match); with the amounts, it also answers the totals of a status alone (a
            # count of W is then read from the index, not from every W item's row).
            totals = "achTransactionType, amount" if kind.totals == "ach" else "amount"
            on[f"{t}_company_status_seq"] = (f"{t} (companyCode, itemStatus, _seq, returnDate, "
                                             f"{totals})")
            on[f"{t}_fate"] = f"{t} (_fate_at) WHERE _fate_status IS NOT NULL"
    on["ach_noc"] = "ach (_noc_at) WHERE _noc_at IS NOT NULL"
    for t in ("ach", "rcc"):
        on[f"{t}_send"] = f"{t} (_send_at) WHERE itemStatus = 'W'"
    unique = {f"{kind.table}_company_seq" for kind in KINDS.values()}
    return tables, {name: f"{'UNIQUE ' if name in unique else ''}INDEX {name} ON {what}"
                    for name, what in on.items()}


TABLES, INDEXES = _schema()


def money(cents: int | None) -> Decimal | None:
    """Integer cents as the exact amount (None stays None)."""
    return None if cents is None else Decimal(cents).scaleb(-2)


def storable(item_id: int | str) -> int | str:
    """An id as SQLite can compare it: SQLite integers are 64-bit, so a larger id
    cannot exist (and would overflow): it becomes -1, which matches no item."""
    if isinstance(item_id, int) and not -(2**63) <= item_id < 2**63:
        return -1
    return item_id


def sql_list(values: tuple[str, ...]) -> str:
    """A tuple of fixed status codes as an SQL list (never user input)."""
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


def _sql_text(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def yyyymmdd(column: str) -> str:
    """SQL for the UTC day of an epoch-milliseconds column, as ``YYYYMMDD`` text."""
    return f"strftime('%Y%m%d', {column} / 1000, 'unixepoch')"


@functools.cache
def _record_shape(kind: Kind) -> tuple[tuple[str, ...], int | None, bool]:
    """Names of a wire record's fields, the position of ``itemStatus`` (its name is added
    after it) and whether ``amount`` is stored in cents."""
    fields = kind.fields
    at = fields.index("itemStatus") if "itemStatus" in fields else None
    names = fields if at is None else (*fields[:at + 1], "itemStatusDescription",
                                       *fields[at + 1:])
    return names, at, kind.amount == "cents" and "amount" in fields


def record_names(kind: Kind) -> list[str]:
    """The fields of a wire record of ``kind``, in order (an export's header)."""
    return list(_record_shape(kind)[0])


def columns(kind: Kind) -> str:
    """The SELECT list of a record; SQLite formats the timestamps (it is much faster)."""
    return ", ".join(f"strftime('%Y-%m-%dT%H:%M:%fZ', {name} / 1000.0, 'unixepoch')"
                     if name in kind.timestamps else name for name in kind.fields)


def record(kind: Kind, row: Sequence[Any]) -> dict[str, Any]:
    """A wire record from a row selected with :func:`columns` (timestamps formatted)."""
    # Built in C (tuple slices, dict(zip)) rather than field by field: this runs for
    # every record of every page, and was a third of the time of a list page.
    names, status_at, cents = _record_shape(kind)
    if status_at is not None:
        # The status name goes right after its code, as the wire shows it.
        row = (*row[:status_at + 1], STATUS_NAMES.get(row[status_at]), *row[status_at + 1:])
    built = dict(zip(names, row, strict=True))
    if cents:
        built["amount"] = money(built["amount"])
    for name in kind.booleans:
        if built[name] is not None:
            built[name] = bool(built[name])
    for name in kind.objects:
        if built[name] is not None:
            built[name] = json.loads(built[name], parse_float=Decimal)
    return built


@functools.cache
def record_json(kind: Kind) -> str:
    """A SQL expression rendering a row as its wire record, byte for byte what :func:`record`
    and :func:`~paynb.sandbox.wire.dumps` make of it, for list pages: SQLite builds the JSON
    in C, where dicts and their encoding took half a page's server time (benchmarks case 1)."""
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
