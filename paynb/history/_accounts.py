"""Account keys in the history store, and the reader the submission guards use.

Each stored ACH row carries ``_accountKey``: keyed BLAKE2b (a MAC, RFC 7693) of routing
and account number under a random 32-byte secret, which is **not** in the store (the ACH
table's commits name it, ``accountKey.id``) but the file ``history-keys/<id>.key`` of the
user's data folder. Why: docs/compliance-nocs-and-guards.md, "Matching accounts in a
masked store".
"""

from __future__ import annotations

import datetime as dt
import os
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from hashlib import blake2b
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paynb.history._sql import cursor, parquet_source
from paynb.history._store import KEY_COLUMN, Store, instant, state
from paynb.nacha import (
    ENTRY_FIELDS,
    GUARD_FIELDS,
    NOC_FIELDS,
    NUMBER_KEY,
    accounts_of,
    entries_of,
    noc_accounts,
    parse_corrected_data,
)

if TYPE_CHECKING:
    import pyarrow as pa

__all__ = ["GuardRows", "NocEvidence", "Wanted", "account_key", "account_keys", "arrow_condition",
           "guard_rows", "new_key", "noc_evidence", "number_keys", "read_evidence", "rows_of",
           "secret_of"]
#: How the keys are made (recorded in the metadata, for a later paynb to tell).
SCHEME = "keyed-blake2b-64 (routing, account)"


def _keys_folder() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("paynb", appauthor=False)) / "history-keys"


def new_key() -> dict[str, str]:
    """A new secret, saved in the user's data folder; returns the metadata that names it."""
    key_id = secrets.token_hex(8)
    folder = _keys_folder()
    folder.mkdir(parents=True, exist_ok=True)
    # Created readable by the user only, and never overwritten.
    handle = os.open(folder / f"{key_id}.key", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(handle, "wb") as file:
        file.write(secrets.token_bytes(32))
    return {"id": key_id, "scheme": SCHEME}


def secret_of(meta: Mapping[str, Any]) -> bytes | None:
    """The secret the store's metadata names, when this machine holds it."""
    info = meta.get("accountKey")
    key_id = info.get("id") if isinstance(info, Mapping) else None
    if not isinstance(key_id, str) or not key_id.isalnum():
        return None
    try:
        found = (_keys_folder() / f"{key_id}.key").read_bytes()
    except OSError:
        return None
    return found if len(found) == 32 else None


def _text(value: Any) -> str | None:
    if value is None or value != value:  # None, NaN
        return None
    text = str(value).strip()
    return None if not text or "*" in text or text in ("nan", "<NA>", "None") else text


def account_key(secret: bytes, routing: Any, account: Any) -> int | None:
    """The key of one account (None when either number is missing or masked)."""
    return _key(blake2b(key=secret, digest_size=8), routing, account)


def _key(keyed: Any, routing: Any, account: Any) -> int | None:
    """:func:`account_key` with the hash already keyed (``keyed`` is not changed)."""
    routing_text, account_text = _text(routing), _text(account)
    if routing_text is None or account_text is None:
        return None
    digest = keyed.copy()
    digest.update(f"{routing_text}\x1f{account_text}".encode())
    return int.from_bytes(digest.digest(), "big", signed=True)


def account_keys(records: Iterable[Mapping[str, Any]], secret: bytes) -> Any:
    """The keys of raw ACH records (whole numbers, as the service sends them), as a
    nullable ``Int64`` array: one hash per distinct account, not per record, each from a
    copy of one keyed hash (keying it hashes a block: a third of the cost)."""
    return _keys([(record.get("bankRoutingNumber"), record.get("bankAccountNumber"))
                  for record in records], secret)


def number_keys(records: Iterable[Mapping[str, Any]], secret: bytes, kind: str) -> Any:
    """The keys of the account number alone (the store's ``_numberKey``) of raw records, as
    :func:`account_keys` gives them: an ACH record's own number; a NOC's corrected number,
    when its change code corrects one (read from its whole corrected data). With the
    plain routing numbers beside them they tell the accounts of a masked store apart,
    the accounts a NOC corrects to among them (a C02's new routing with the old number)."""
    if kind == "ach":
        numbers = [record.get("bankAccountNumber") for record in records]
    else:
        numbers = [parse_corrected_data(record.get("changeCode"), record.get("correctedData"))
                   .get("bankAccountNumber") for record in records]
    # (a fixed first half, unlike any routing number: never the key of a pair)
    return _keys([("number", number) for number in numbers], secret)


def _keys(pairs: list[tuple[Any, Any]], secret: bytes) -> Any:
    import pandas as pd

    keyed = blake2b(key=secret, digest_size=8)
    done: dict[tuple[Any, Any], int | None] = {}
    keys = []
    for pair in pairs:
        try:
            if pair not in done:
                done[pair] = _key(keyed, *pair)
            keys.append(done[pair])
        except TypeError:  # an unhashable value: no account
            keys.append(None)
    return pd.array(keys, dtype="Int64")


@dataclass
class GuardRows:
    """What a store holds for the guards about some accounts."""

    #: ACH records (the guards' fields) of the accounts asked for, with their routing and
    #: full account number as the caller gave them (in memory only).
    items: list[dict[str, Any]] = field(default_factory=list)
    #: NOCs of the store not applied, about entries among ``items``.
    nocs: list[dict[str, Any]] = field(default_factory=list)
    #: What was read: the store's folder and period.
    checked: str = ""
    #: Why the store cannot be used to match accounts (None: it can).
    problem: str | None = None
    #: Whether the store holds ACH history of the company at all.
    holds: bool = False


def guard_rows(store: Store, company: str, accounts: Iterable[tuple[Any, Any]], *,
               since: dt.datetime, applied: Iterable[Any] = ()) -> GuardRows:
    """The ACH items of ``accounts`` (routing, full account number) received from
    ``since`` on, the NOCs not ``applied`` about them, and the entries those NOCs are
    about whatever their age: read from ``store`` for ``company``, only the guards'
    columns, only the files that may hold them. Accounts are matched by
    :data:`KEY_COLUMN` (in a store synced with ``mask=False`` without keys, by the
    numbers); a store that cannot be matched says why in ``problem``."""
    import pyarrow.compute as pc

    table = store.open("ach")
    kept = state(table)
    where = str(store.path)
    held = kept.get("companies", {}).get(company)
    if table is None or not held:
        return GuardRows(checked=f"history store {where}: no ACH items of {company}")
    start = instant(held["since"]) if held.get("since") else since
    synced = instant(held["syncedAt"])
    checked = (f"history store {where} (ACH items received {max(since, start):%Y-%m-%d} "
               f"to {synced:%Y-%m-%d %H:%M} UTC)")
    pairs = {(r, a) for r, a in ((_text(r), _text(a)) for r, a in accounts)
             if r is not None and a is not None}
    secret = secret_of(kept)
    if secret is not None:
        by_key = {account_key(secret, r, a): (r, a) for r, a in pairs}
        matched = pc.field(KEY_COLUMN).isin(list(by_key))
    elif kept.get("masked") is False:
        matched = pc.field("bankAccountNumber").isin(sorted({a for _r, a in pairs}))
    else:
        why = ("has account keys whose secret is not on this machine (a copied or shared "
               "folder)" if kept.get("accountKey") else
               "was written by a paynb that kept no account keys")
        return GuardRows(checked=checked, holds=True, problem=(
            f"the history store {where} {why} and masks account numbers: the guards cannot "
            "match accounts in it and judge by what this client has seen only; "
            "client.sync(rebuild=True) builds it again with account keys"))
    if not pairs:
        return GuardRows(checked=checked, holds=True)
    done, noc_table = {str(a) for a in applied}, store.open("nocs")
    nocs = [] if noc_table is None else [
        row for row in rows_of(store.scan("nocs", noc_table, [("company", "=", company)],
                                          list(NOC_FIELDS)))
        if str(row.get("nocId")) not in done]
    noc_items = list({n["achItemId"] for n in nocs if n.get("achItemId") is not None})
    wanted = (matched & (pc.field("receivedDateTime") >= since)) | \
        pc.field("achItemId").isin(noc_items)
    rows = store.scan("ach", table, [("company", "=", company)],
                      [*GUARD_FIELDS, KEY_COLUMN] if secret else list(GUARD_FIELDS), wanted)
    items = []
    for row in rows_of(rows):
        pair = by_key.get(row.pop(KEY_COLUMN)) if secret is not None else \
            (_text(row.get("bankRoutingNumber")), _text(row.get("bankAccountNumber")))
        if pair not in pairs:
            continue  # a NOC's entry to another account, or only the account number matched
        row["bankRoutingNumber"], row["bankAccountNumber"] = pair
        items.append(row)
    ids = {row["achItemId"] for row in items}
    return GuardRows(items=items, nocs=[n for n in nocs if n.get("achItemId") in ids],
                     checked=checked, holds=True)


@dataclass
class NocEvidence:
    """What a store holds for the NOC ledger of one company (:func:`noc_evidence`)."""

    #: Every NOC of the company (the ledger's fields, and the keyed hash of a corrected
    #: account number).
    nocs: list[dict[str, Any]] = field(default_factory=list)
    #: The entries the NOCs are about, whatever their age, and every entry to their
    #: accounts before and after correction (the ledger's fields, with the keyed hash of
    #: the account number).
    items: list[dict[str, Any]] = field(default_factory=list)
    #: The secret of the store's keys (None: the store keeps none, or not on this machine).
    secret: bytes | None = None
    #: Whether the store can tell accounts apart: it keeps whole numbers, or keys whose
    #: secret is on this machine.
    matches: bool = True

    def keyed(self, records: Iterable[Mapping[str, Any]], kind: str) -> list[dict[str, Any]]:
        """Raw records (whole numbers: what a client has seen) with the keyed hashes the
        store gives its own (``ach`` or ``noc``), so that the ledger tells their accounts
        as it tells the store's; as they are when the store keeps no keys."""
        import pandas as pd

        rows = [dict(record) for record in records]
        if self.secret is not None:
            for row, key in zip(rows, number_keys(rows, self.secret, kind), strict=True):
                row[NUMBER_KEY] = None if pd.isna(key) else int(key)
        return rows


def noc_evidence(store: Store, company: str) -> NocEvidence:
    """The records the NOC ledger of ``company`` judges, read from ``store``: what
    ``client.nocs.obligations()`` and the morning run give :func:`paynb.nacha.ledger`:
    every NOC, the entries they are about, whatever their age, and every entry to their
    accounts before and after correction (a later entry moves a due date, or shows the
    change made), by routing and account number, or in a masked store by routing and
    the keyed hash of the number (:data:`paynb.nacha.NUMBER_KEY`); only these rows are
    read, and only the ledger's columns."""
    tables = {name: store.open(name) for name in ("nocs", "ach")}
    kept = state(tables["ach"])
    # Keyed numbers when the store's rows carry them (a store synced by an older paynb
    # keeps none: its whole numbers are compared, a masked one's cannot be).
    held = {f.name for f in tables["ach"].schema().fields} if tables["ach"] else set()
    secret = secret_of(kept) if NUMBER_KEY in held else None
    matches = secret is not None or kept.get("masked") is False
    if tables["nocs"] is None or tables["ach"] is None:
        return NocEvidence(secret=secret, matches=matches)

    def read(name: str, fields: Iterable[str], wanted: Wanted = ()) -> list[dict[str, Any]]:
        table = tables[name]
        assert table is not None
        held = {field.name for field in table.schema().fields}
        columns = [f for f in (*fields, NUMBER_KEY) if f in held]
        source = parquet_source(store, name, table)
        if source is None:  # (an object store's: the Arrow dataset reads it)
            return rows_of(store.scan(name, table, [("company", "=", company)], columns,
                                      arrow_condition(wanted)))
        return _selected(store, name, source, company, columns, wanted)

    return NocEvidence(*read_evidence(read), secret=secret, matches=matches)


#: Rows asked for by value: those whose value of any one of the columns is among its
#: values (an Arrow array of the column's type); none: every row.
Wanted = Sequence[tuple[str, "pa.Array"]]


def arrow_condition(wanted: Wanted) -> Any:
    """``wanted`` as an Arrow dataset's filter (None: every row)."""
    import pyarrow.compute as pc

    condition = None
    for column, values in wanted:
        one = pc.field(column).isin(values)
        condition = one if condition is None else condition | one
    return condition


def _selected(store: Store, name: str, source: str, company: str, columns: list[str],
              wanted: Wanted) -> list[dict[str, Any]]:
    """The rows of ``company`` that ``wanted`` asks for, of table ``name`` read by DuckDB
    from ``source`` (:func:`parquet_source`): its reader decodes the other columns of
    the rows a filter keeps only, where an Arrow dataset decodes every row of the
    company's files (the NOCs' entries at 1,000,000 items: 0.1 s against 0.5 s)."""
    import duckdb
    import pyarrow as pa

    with cursor() as connection:
        asked = []
        for n, (column, values) in enumerate(wanted):
            connection.register(f"wanted_{n}", pa.table({"value": values}))
            asked.append(f'"{column}" IN (SELECT value FROM wanted_{n})')
        where = f" AND ({' OR '.join(asked)})" if asked else ""
        selected = ", ".join(f'"{column}"' for column in columns)  # (the table's own names)
        try:
            return rows_of(connection.sql(  # (the company: a parameter)
                f"SELECT {selected} FROM {source} "
                f"WHERE company = ?{where}", params=[company]).to_arrow_table())
        except duckdb.Error as exc:
            raise store.unreadable(name, exc) from None


def rows_of(table: pa.Table) -> list[dict[str, Any]]:
    """The rows of ``table`` as records (``Table.to_pylist``), its UTC times in
    microseconds made ``datetime`` objects of :data:`datetime.UTC` from their whole
    microseconds: Arrow makes each one through a zone of its own, three times as slow
    (the most of the time of 20,000 entries' records)."""
    import pyarrow as pa

    columns = []
    for field_, column in zip(table.schema, table.columns, strict=True):
        if field_.type == pa.timestamp("us", tz="UTC"):
            columns.append([None if count is None else _EPOCH + dt.timedelta(microseconds=count)
                            for count in column.cast(pa.int64()).to_pylist()])
        else:
            columns.append(column.to_pylist())
    names = table.column_names
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def read_evidence(read: Callable[..., list[dict[str, Any]]]
                  ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The NOCs and entries of :func:`noc_evidence`, through ``read(table, fields,
    wanted)``: the rows of table ``nocs`` or ``ach`` (of the company) that ``wanted``
    asks for (:data:`Wanted`), with the fields asked that the table has, and its
    ``_numberKey``."""
    import pyarrow as pa

    nocs = read("nocs", NOC_FIELDS)
    ids = {noc["achItemId"] for noc in nocs if noc.get("achItemId") is not None}
    if not ids:
        return nocs, []
    # The accounts of the NOCs' entries, before and after correction (what tells an
    # account only: the entries are read whole once, with those to their accounts).
    entries = read("ach", _ACCOUNT_READ, [("achItemId", pa.array(sorted(ids), pa.int64()))])
    accounts = noc_accounts(nocs, entries_of(entries))
    asked = []
    # An entry to one of the accounts is read with them, the others by id.
    if alone := sorted(row["achItemId"] for row in entries
                       if not any(account in accounts for account in accounts_of(row))):
        asked.append(("achItemId", pa.array(alone, pa.int64())))
    if texts := sorted({number for _, number in accounts if isinstance(number, str)}):
        asked.append(("bankAccountNumber", pa.array(texts, pa.string())))
    keys = sorted({number[1] for _, number in accounts if not isinstance(number, str)})
    if keys and NUMBER_KEY in entries[0]:  # (a NOC's key; the entries' table has them)
        asked.append((NUMBER_KEY, pa.array(keys, pa.int64())))
    if not asked:  # (no entry of theirs in the store)
        return nocs, []
    # Read by id or number (text or key), then kept by id or account (routing and number).
    rows = read("ach", ENTRY_FIELDS, asked)
    about = [row for row in rows if row["achItemId"] in ids]
    later = [row for row in rows if row["achItemId"] not in ids
             and any(account in accounts for account in accounts_of(row))]
    return nocs, about + later


#: What tells the account of an entry (:func:`paynb.nacha.noc_accounts`), and its id.
_ACCOUNT_READ = ("achItemId", "bankRoutingNumber", "bankAccountNumber")
