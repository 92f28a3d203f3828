"""``paynb.History``: read a history back as the frames the client lists, or in SQL."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from paynb._args import flag, status_codes
from paynb._attrs import HISTORY
from paynb._coerce import arrow_frame
from paynb._pandas_compat import string_dtype
from paynb._warn import user_stacklevel
from paynb.errors import HistoryCompanyWarning, HistoryError, HistoryWarning, ValidationError
from paynb.history import _store as st
from paynb.history._accounts import guard_rows, noc_evidence
from paynb.history._bounds import as_of_moment, one_moment, span, within
from paynb.history._convert import convert_if_old, is_old
from paynb.history._sql import empty, views
from paynb.history._store import kind_of, when
from paynb.history._writer import maintained

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.dataset as pds
    from deltalake import DeltaTable

__all__ = ["History"]

#: A read whose Arrow table is at least this big gives Arrow's allocator back the memory
#: it no longer uses, once the frame is made (see History._items).
RELEASE_BYTES = 64 * 2**20


def _first_entry(table: Any) -> tuple[int, int] | None:
    """Which file holds the first entry of the log of the table in folder ``table``
    (None: none does, or no longer: entries past their retention are cleaned up)."""
    try:
        found = os.stat(table / "_delta_log" / f"{0:020d}.json")
    except OSError:
        return None
    return found.st_ino, found.st_mtime_ns


#: Runs of list places up to which a read's rows are put in order by slicing.
RUNS_SLICED = 1024


def _in_order(table: pa.Table) -> pa.Table:
    """``table``'s rows in the lists' order: by company, then each company's list place
    (``_order``, from 0 in each). Long runs of places are sliced (no copy); files whose
    places interleave (an old version's) are gathered a column at a time, not cut into a
    slice a row (minutes and gigabytes at a million items)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if not table.num_rows:
        return table
    places = table.column("_order").to_numpy()
    if "company" in table.column_names:
        codes = pc.dictionary_encode(table.column("company")).combine_chunks()
        ranks = np.argsort(np.argsort(codes.dictionary.to_pylist()))  # codes by name
        companies = ranks[codes.indices.to_numpy(zero_copy_only=False)].astype(np.int64)
        order = np.lexsort((places, companies))
    else:
        order = np.argsort(places, kind="stable")
    breaks = np.flatnonzero(np.diff(order) != 1) + 1
    if not len(breaks):  # (in order already)
        return table
    if len(breaks) < RUNS_SLICED:
        return pa.concat_tables([table.slice(int(order[a]), int(b - a)) for a, b in zip(
            np.concatenate([[0], breaks]), np.concatenate([breaks, [len(order)]]),
            strict=True)])
    # Each column read is let go as its copy is made: the peak is the table and a column.
    schema, columns = table.schema, table.columns
    del table
    for at in range(len(columns)):
        columns[at] = columns[at].take(order)
    return pa.Table.from_arrays(columns, schema=schema)


class History:
    """A local history of payment items: Delta tables written by :meth:`paynb.Client.sync`.

    Opens with no client and no network (``paynb.History(path)``). Each reader returns
    the frame the client's list returns for the same items (the same columns, dtypes and
    masking), and takes ``as_of=`` (a date, a time or a table version) to read the
    history as it stood then, from the tables' logs.

    Args:
        path: the store's folder, or an object-store URI (``s3://bucket/prefix``,
            ``gs://``, ``az://``, ``abfss://``).
        company: read only this company's items, in the frames, :meth:`scan` and SQL
            alike (default: every company in the store, one after the other).
        mask: show account numbers masked (``****6789``). A store synced with
            ``mask=False`` keeps them whole and masks them on reading unless
            ``mask=False`` here too; a masked store cannot show them whole.
        storage_options: the object store's options (credentials, region, endpoint), as
            ``deltalake`` takes them.
    """

    def __init__(self, path: str | os.PathLike[str], *, company: str | None = None,
                 mask: bool = True, storage_options: Mapping[str, str] | None = None,
                 ) -> None:
        if not isinstance(path, str | os.PathLike):
            raise ValidationError.for_argument(
                "path", "must be the folder or URI of a history store")
        flag(mask, "mask")
        if company is not None and (not isinstance(company, str) or not company.strip()):
            raise ValidationError.for_argument("company", "must be a company code or None")
        st.need_extra()
        self._store = st.Store(path, storage_options)
        self._synced = False
        self._opened: dict[str, tuple[DeltaTable, Any]] = {}
        local = self._store.local
        if local is not None and local.exists() and not local.is_dir():
            raise ValidationError.for_argument(
                "path", f"{local} is a file: give the folder of a history store "
                        "(client.history.path)")
        self.company = company.strip() if company else None
        self.mask = mask
        if is_old(self._store):
            with self._store.locked():
                convert_if_old(self._store)
        self._told: set[Any] = set()

    def __repr__(self) -> str:
        return f"<paynb.History at {self.path}>"

    @property
    def path(self) -> Any:
        """The store's folder (a :class:`~pathlib.Path`), or its object-store URI."""
        return self._store.path

    @property
    def masked(self) -> bool | None:
        """Whether the store keeps account numbers masked (None: nothing synced yet)."""
        masked: bool | None = self.info().get("masked")
        return masked

    def tables(self) -> dict[str, DeltaTable]:
        """The store's Delta tables at their latest version (``deltalake.DeltaTable``), by
        name (``ach``, ..., ``events``; those not made yet are left out, and no store gives
        ``{}`` without a word): for what deltalake itself offers, such as a table's
        ``history()``. This History reads through the same objects: read them, and write
        through paynb (``client.sync``, :meth:`maintain`), which holds the store's lock."""
        found = {name: self._open(name, None) for name in (*st.KINDS, st.EVENTS)}
        return {name: table for name, table in found.items() if table is not None}

    def info(self, *, as_of: Any = None) -> dict[str, Any]:
        """What the store holds: per kind and company the ``since`` it starts at, the
        return-date ``watermark``, the last sync's time, counts by status; the service,
        the masking, the number of the last sync (``version``) and each table's Delta
        version (``versions``)."""
        moment = one_moment(as_of, "info()")
        tables = {name: self._open(name, moment) for name in (*st.KINDS, st.EVENTS)}
        if all(table is None for table in tables.values()):
            self._never_synced()
        states = {name: st.state(table) for name, table in tables.items() if table is not None}
        first = next(iter(states.values()), {})
        synced = [c.get("syncedAt") for name in st.KINDS
                  for c in states.get(name, {}).get("companies", {}).values()]
        return {"format": "delta", "path": str(self.path), "service": first.get("service"),
                "masked": first.get("masked"),
                "version": max((int(s.get("sync") or 0) for s in states.values()), default=0),
                "syncedAt": max((s for s in synced if s), default=None),
                "accountKey": states.get("ach", {}).get("accountKey"),
                "kinds": {name: states[name].get("companies", {})
                          for name in st.KINDS if name in states},
                "versions": {name: table.version() for name, table in tables.items()
                             if table is not None}}

    # ------------------------------------------------------------------ frames

    def ach(self, start: Any = None, end: Any = None, *, status: Any = None,
            returned_from: Any = None, returned_to: Any = None,
            columns: list[str] | None = None, as_of: Any = None) -> pd.DataFrame:
        """ACH items as ``client.ach.list`` returns them.

        Args:
            start, end: range of ``receivedDateTime`` (a date alone covers its whole
                day); only the months in it are read.
            status: one status or several (codes or names, as ``list`` takes them).
            returned_from, returned_to: range of ``returnDate``.
            columns: only these columns (the id always comes along).
            as_of: the history as it stood then: a date (its end, UTC), a time, or a
                version of the table (time travel; see docs/history.md).
        """
        return self._items("ach", start, end, status, returned_from, returned_to, columns,
                           as_of)

    def rcc(self, start: Any = None, end: Any = None, *, status: Any = None,
            returned_from: Any = None, returned_to: Any = None,
            columns: list[str] | None = None, as_of: Any = None) -> pd.DataFrame:
        """RCC items as ``client.rcc.list`` returns them (arguments as :meth:`ach`)."""
        return self._items("rcc", start, end, status, returned_from, returned_to, columns,
                           as_of)

    def instant(self, start: Any = None, end: Any = None, *, status: Any = None,
                columns: list[str] | None = None, as_of: Any = None) -> pd.DataFrame:
        """Instant card payments as ``client.instant.list`` returns them (``status``
        ``Success`` or ``Failed``; other arguments as :meth:`ach`)."""
        return self._items("instant", start, end, status, None, None, columns, as_of)

    def rtp(self, start: Any = None, end: Any = None, *, status: Any = None,
            columns: list[str] | None = None, as_of: Any = None) -> pd.DataFrame:
        """Instant RTP payments as ``client.rtp.list`` returns them (see :meth:`instant`)."""
        return self._items("rtp", start, end, status, None, None, columns, as_of)

    def nocs(self, start: Any = None, end: Any = None, *, columns: list[str] | None = None,
             as_of: Any = None) -> pd.DataFrame:
        """NOCs as ``client.nocs.list`` returns them; ``start`` and ``end`` bound
        ``nocDate`` (other arguments as :meth:`ach`)."""
        return self._items("nocs", start, end, None, None, None, columns, as_of)

    def _tell(self, case: Any, message: str, category: type[Warning] = HistoryWarning,
              ) -> None:
        """Warn ``message`` (naming the store) once per History and ``case``."""
        if case not in self._told:
            self._told.add(case)
            warnings.warn(message, category, stacklevel=user_stacklevel())

    def _open(self, name: str, moment: Any) -> DeltaTable | None:
        """Table ``name`` as of ``moment``. The latest version of a table on this machine
        is kept and brought up to date when asked again (the log's new entries only, not
        the whole log: a run's reads open each table once); one made anew since (the
        first entry of its log another file) is opened again."""
        local = self._store.local
        if moment is not None or local is None:
            return self._store.open(name, moment)
        first = _first_entry(local / name)
        if name in self._opened and self._opened[name][1] == first:
            table = self._opened[name][0]
            from deltalake.exceptions import DeltaError

            try:
                table.update_incremental()
            except (DeltaError, OSError) as exc:
                raise self._store.unreadable(name, exc) from None
            return table
        found = self._store.open(name)
        if found is not None:
            self._opened[name] = (found, first)
        return found

    def _table(self, name: str, moment: Any) -> DeltaTable | None:
        """Table ``name`` as of ``moment``; one not there yet at ``moment`` is said so,
        rather than read as "no items"."""
        table = self._open(name, moment)
        self._synced = self._synced or table is not None
        if table is None and not self._never_synced() and moment is not None \
                and self._store.open(name) is not None:
            self._tell(("before", name), f"the {name} table at {self.path} did not exist "
                                         f"yet at as_of={moment}: the answer is empty")
        return table

    def _never_synced(self) -> bool:
        """Whether the store holds no table at all (a path mistyped, or nothing synced
        there yet): it is said, once, rather than passing for a store with no items."""
        # Once a table was found, the store stays synced (each check opens every table).
        if self._synced or self._store.tables():
            self._synced = True
            return False
        local = self._store.local
        where = "no Delta table of a paynb history is there" if local is None else \
            "the folder does not exist" if not local.exists() else \
            "the folder holds other files, but no table of a paynb history" if any(
                p.name != ".lock" for p in local.iterdir()) else "the folder is empty"
        self._tell("never", f"no history has been synced into {self.path} ({where}): "
                            "the answer is empty; run client.sync() (path= for this "
                            "store) first")
        return True

    def _companies(self, kept: dict[str, Any]) -> dict[str, Any]:
        """The state of each company of a table's state ``kept`` that this History reads."""
        held: dict[str, Any] = kept.get("companies", {})
        return {c: s for c, s in held.items() if self.company in (None, c)}

    def _warn_if_not_held(self, kind: str, kept: dict[str, Any], low: Any) -> None:
        """Say when a kind or a company no sync fetched, or a start before the store's
        own, would pass for "no items" (once per History and case)."""
        held = self._companies(kept)
        if not held:
            every = self.info()["kinds"]  # (nothing synced at all: _table said so)
            companies = sorted({c for states in every.values() for c in states})
            if self.company is not None and companies and self.company not in companies:
                self._tell("company", f"the history at {self.path} holds no items of company "
                                      f"{self.company!r}: it holds "
                                      f"{', '.join(map(repr, companies))}; these frames are "
                                      "empty", HistoryCompanyWarning)
            elif companies:
                synced = ", ".join(name for name in st.KINDS if every.get(name))
                self._tell((kind, ""), f"the history at {self.path} holds no {kind} items: "
                                       f"no sync fetched them (it holds {synced}); "
                                       f"client.sync(kinds={kind!r}) does")
            elif self._synced:  # tables, but no sync's items: its events alone
                self._tell("events only", f"the history at {self.path} holds no items: only "
                           "its events table was written (a first sync stopped before its "
                           "items were committed); the answer is empty; run client.sync() "
                           "again")
            return
        starts = [when(s.get("since"), "since") for s in held.values()]
        if low is None or any(start is None for start in starts):
            return
        first = min(start for start in starts if start is not None)
        if low < first:
            self._tell((kind, str(first)), f"the history at {self.path} keeps {kind} items "
                       f"from {first:%Y-%m-%d %H:%M} UTC on (synced with since=): the frame "
                       f"holds none from before, though start is {low:%Y-%m-%d}; "
                       "client.sync(rebuild=True, since=...) fetches them")

    def held(self, kind: str = "ach") -> dict[str, Any] | None:
        """What the store holds of ``kind`` (``ach``, ``rcc``, ...) for this History's
        company: its ``path``, the ``since`` its items start at and the last sync's time
        (``syncedAt``); None when no sync fetched it. The frames read back carry it in
        ``attrs``; give it to a frame made otherwise (an answer of :meth:`connect`) and
        :mod:`paynb.compliance` says, as it does for them, when a figure's window reaches
        beyond what the store holds."""
        name = kind_of(kind, "kind")
        return self._held(name, st.state(self._table(name, None)))

    def _held(self, kind: str, kept: dict[str, Any]) -> dict[str, Any] | None:
        """What the store holds of ``kind`` (see :data:`paynb._attrs.HISTORY`)."""
        held = self._companies(kept)
        if not held:
            return None
        starts = [str(st.instant(s["since"]).isoformat()) for s in held.values() if s.get("since")]
        return {"path": str(self.path), "kind": kind, "since": max(starts, default=None),
                "syncedAt": min(st.instant(s["syncedAt"]).isoformat() for s in held.values())}

    def _columns(self, kind: str, columns: Any, table: DeltaTable | None) -> list[str] | None:
        """``columns`` checked against the kind's frame and the stored fields."""
        import pyarrow as pa

        if columns is None:
            return None
        if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
            raise ValidationError.for_argument("columns", "must be a list of column names")
        known = [*st.frames.empty_frame(st.FRAME_KINDS[kind]).columns]
        if table is not None:
            known += [c for c in pa.schema(table.schema().to_arrow()).names
                      if c not in known and c not in st.HIDDEN]
        unknown = [c for c in columns if c not in known]
        if unknown:
            raise ValidationError.for_argument(
                "columns", f"holds {', '.join(map(repr, unknown))}, not a column of "
                           f"the {kind} frames; use some of {', '.join(known)}")
        return list(columns)

    def _items(self, kind: str, start: Any, end: Any, status: Any, returned_from: Any,
               returned_to: Any, columns: list[str] | None, as_of: Any) -> pd.DataFrame:
        import pyarrow as pa
        import pyarrow.compute as pc

        moment = as_of_moment(as_of)
        low, high = span(start, end, ("start", "end"))
        r_low, r_high = span(returned_from, returned_to, ("returned_from", "returned_to"))
        codes = [] if status is None else status_codes(status, kind)
        table = self._table(kind, moment)
        kept = st.state(table)
        if table is not None or moment is None:
            self._warn_if_not_held(kind, kept, low)
        if kept.get("masked") is True and not self.mask:
            raise HistoryError(f"the history at {self.path} keeps account numbers masked (it "
                               "was synced so); History(mask=False) cannot show them whole")
        columns = self._columns(kind, columns, table)
        id_field, status_field = st.ID_FIELDS[kind], st.STATUS_FIELDS[kind]
        files: list[Any] = [("company", "=", self.company)] if self.company else []
        condition = within(st.MONTH_FIELDS[kind], low, high) & within(
            "returnDate", r_low, r_high)
        # Only the months in the range are read (a received range bounds the partitions).
        if low is not None:
            files.append(("month", ">=", f"{low:%Y-%m}"))
        if high is not None:
            files.append(("month", "<=", f"{high:%Y-%m}"))
        if codes and status_field:
            condition &= pc.field(status_field).isin(codes)
        wanted = None if columns is None else list(dict.fromkeys(
            [id_field, *st.frames.columns_of(columns), "_order", "company"]))
        arrow = st.empty(kind) if table is None else _in_order(self._store.read(
            kind, table, files, wanted, condition, what=f"history.{kind}() of {self.path}",
            advice=f"read fewer columns (columns=), a range (start=, end=) or statuses; "
                   f"count in SQL (history.sql), or stream it: history.scan({kind!r}) "
                   "(docs/history.md, 'Bigger than memory')"))
        # Typed as the lists type records (masked here when the store keeps numbers whole).
        frame = st.frames.from_stored(
            arrow.drop_columns([c for c in arrow.column_names if c in st.HIDDEN]),
            st.FRAME_KINDS[kind], mask=self.mask and kept.get("masked") is False,
            json_columns=kept.get("json", []), only=wanted)
        if columns is not None:
            frame = frame[[c for c in dict.fromkeys([id_field, *columns]) if c in frame]]
        held = self._held(kind, kept)
        if held is not None:
            frame.attrs[HISTORY] = held
        if arrow.nbytes >= RELEASE_BYTES:
            # Arrow's allocator keeps the memory of the buffers it freed: give it back
            # (reading 1,000,000 ACH items otherwise left the kernel at twice the frame).
            del arrow
            pa.default_memory_pool().release_unused()
        return frame

    def guard_rows(self, accounts: Iterable[tuple[Any, Any]], *, since: Any,
                   applied: Iterable[Any] = ()) -> Any:
        """What the submission guards of :mod:`paynb.compliance` read: the ACH items of
        ``accounts`` (routing, full number) from ``since`` on and the NOCs not
        ``applied`` about them (see :func:`paynb.history._accounts.guard_rows`)."""
        return guard_rows(self._store, self.company or "", accounts, since=since,
                          applied=applied)

    def noc_evidence(self) -> Any:
        """What the NOC ledger of the company judges (``nocs``, ``items``, and ``keyed``
        to give a client's records the store's keys; see
        :func:`paynb.history._accounts.noc_evidence`): read by ``client.nocs.obligations()``
        and the morning run alike."""
        return noc_evidence(self._store, self.company or "")

    # ------------------------------------------------------------------ events

    def events(self, kind: str = "ach", *, item_id: Any = None, start: Any = None,
               end: Any = None, as_of: Any = None) -> pd.DataFrame:
        """The status changes the syncs saw, oldest first.

        One row per item and status it was first seen in: columns ``kind``,
        ``itemId`` (text), ``itemStatus`` and ``seenAt`` (UTC, the sync's time).
        ``item_id`` keeps one item's (or several items') rows; ``start`` and ``end``
        bound ``seenAt``; ``as_of`` as for :meth:`ach`. The events of one sync (one
        ``seenAt``) come in the order of their ids.
        """
        import pandas as pd
        import pyarrow.compute as pc

        name = kind_of(kind, "kind")
        moment = as_of_moment(as_of)
        low, high = span(start, end, ("start", "end"))
        # A version is the events table's; what the kind's table holds is then its latest.
        items = self._table(name, None if isinstance(moment, int) else moment)
        if items is not None or moment is None:
            self._warn_if_not_held(name, st.state(items), None)
        table = self._table(st.EVENTS, moment)
        condition = pc.scalar(True)
        asked: list[str] = []
        if item_id is not None:
            if hasattr(item_id, "item") and not isinstance(item_id, str | bytes):
                item_id = item_id.item()  # a numpy or pandas scalar
            wanted = [item_id] if isinstance(item_id, str | int) else list(item_id)
            asked = list(dict.fromkeys(str(v) for v in wanted))
            condition &= pc.field("itemId").isin(asked)
        condition &= within("seenAt", low, high)
        files: list[Any] = [("kind", "=", name)] + (
            [("company", "=", self.company)] if self.company else [])
        arrow = st.empty(st.EVENTS) if table is None else self._store.scan(
            st.EVENTS, table, files, list(st.EVENT_COLUMNS), condition)
        # Oldest first; a sync's events (one time) by id, a number's digits as a number.
        arrow = arrow.append_column("_length", pc.utf8_length(arrow.column("itemId")))
        arrow = arrow.take(pc.sort_indices(arrow, [("seenAt", "ascending"), (
            "_length", "ascending"), ("itemId", "ascending")]))
        frame = pd.DataFrame({"kind": arrow.column("kind"), "itemId": arrow.column("itemId"),
                              "itemStatus": arrow.column("itemStatus")}, dtype=string_dtype())
        frame["seenAt"] = st.frames.utc_instants(arrow.column("seenAt").to_pandas().array)
        unseen = sorted(set(asked) - set(frame["itemId"]))
        if unseen:
            # A typo, an id of another kind or an item newer than the last sync would
            # pass for "no status change": name the ids no sync has seen.
            shown = ", ".join(unseen[:5]) + (f" and {len(unseen) - 5} more"
                                             if len(unseen) > 5 else "")
            warnings.warn(f"no sync into {self.path} has seen {name} item(s) {shown}: they "
                          "have no events (not synced yet, or not of this kind)",
                          HistoryWarning, stacklevel=user_stacklevel())
        return frame

    # ------------------------------------------------------------------ streams

    def scan(self, kind: str = "ach", *, as_of: Any = None) -> pds.Dataset:
        """A table as a ``pyarrow.dataset.Dataset``, read as it is consumed: for work
        bigger than memory (the readers and :meth:`sql` stop a read that would not fit).

        The rows of this History's company (all companies' without one) of ``kind``'s
        table (``ach``, ..., ``nocs``, or ``events``) as stored: the service's fields,
        paynb's columns (``_order``, ...) and the partitions ``company`` and ``month``,
        in no particular order; ``as_of`` as for :meth:`ach` (a version: that table's).
        Stream it (``to_batches(columns=..., filter=...)``), or hand it to Polars
        (``pl.scan_pyarrow_dataset``) or DuckDB (``duckdb.sql("... from dataset")``),
        which read only what a query needs (docs/history.md, "Bigger than memory")."""
        import pyarrow.dataset as ds

        name = st.EVENTS if kind == st.EVENTS else kind_of(kind, "kind")
        moment = as_of_moment(as_of)
        table = self._table(name, moment)
        if table is not None and name != st.EVENTS:
            self._warn_if_not_held(name, st.state(table), None)
        self._refuse_whole([table], "stream it")
        if table is None:
            return ds.dataset(empty(name))
        return self._store.dataset(name, table, [("company", "=", self.company)]
                                   if self.company else None)

    def _refuse_whole(self, tables: Iterable[DeltaTable | None], what: str) -> None:
        """Refuse to show a store kept whole (``mask=False``) through SQL or a stream
        unless this History was opened with ``mask=False``: neither masks on reading."""
        if self.mask and any(st.state(t).get("masked") is False for t in tables):
            raise HistoryError(f"the history at {self.path} holds whole account numbers "
                               f"(synced with mask=False); open it with "
                               f"History(path, mask=False) to {what}")

    # ------------------------------------------------------------------ SQL

    def sql(self, query: str, *, as_of: Any = None) -> pd.DataFrame:
        """Run a DuckDB query over the store; returns a DataFrame (amounts exact, as
        decimals).

        Views: ``ach``, ``rcc``, ``instant``, ``rtp``, ``nocs`` (one row per item, with
        the partition columns ``company`` and ``month``) and ``events`` (``kind, itemId,
        itemStatus, seenAt, company``), each over its table's committed files, in no
        particular order (see :meth:`connect`); a History of one company sees that
        company's rows only. ``as_of`` a date or a time (each table as it stood then)::

            history.sql("select month, count(*) from ach where itemStatus = 'R' group by 1")

        An answer that would not fit in memory is refused before it fills it
        (:class:`~paynb.errors.HistoryError`, with what to do instead)."""
        if not isinstance(query, str) or not query.strip():
            raise ValidationError.for_argument("query", "must be SQL text")
        import pyarrow as pa

        with self._connect(as_of) as connection:
            answer = connection.sql(query)  # None for a statement that answers nothing
            if answer is None:
                return arrow_frame(pa.table({}))
            # DuckDB 2 names the reader to_arrow_reader (fetch_arrow_reader deprecated);
            # the 1.2 paynb allows has only fetch_arrow_reader.
            reader = getattr(answer, "to_arrow_reader", None) or answer.fetch_arrow_reader
            return arrow_frame(st.gathered(
                reader(), f"the answer of history.sql() of {self.path}",
                "select fewer columns or rows, aggregate in the query, or stream the "
                "answer: history.connect() (its .sql(query) as Arrow batches) or "
                "history.scan(kind) (docs/history.md, 'Bigger than memory')"))

    def connect(self, *, as_of: Any = None) -> Any:
        """A DuckDB connection with the views of :meth:`sql`, for several queries over one
        state of the store; close it when done (``with history.connect() as
        connection:``). Its time zone is UTC (a ``::date`` of a time is its UTC day).

        On a store on this machine the views read the tables' committed files with
        DuckDB's own Parquet reader, which skips inside files what a query does not keep
        (a join on item ids reads the other columns of the matching rows only); on an
        object store, through each table's Arrow dataset. Either way, exactly the rows
        of the tables' current version (or ``as_of``'s), of this History's company only
        when it has one (a History of several companies warns, naming them:
        :class:`~paynb.errors.HistoryCompanyWarning`). The views are the tables as
        stored, in no particular order (``ORDER BY`` what a query needs): putting every
        item in the lists' order first would cost a query that counts or joins as much
        as the query itself.

        The connections of one process are cursors of one in-memory DuckDB database:
        the views (temporary), settings and registered frames of each are its own, and
        the Parquet footers read by one serve the next (a notebook's second query, the
        morning run's next run). A table made with ``CREATE TABLE`` (not ``TEMP``) in
        one is seen by the others."""
        return self._connect(as_of)

    def _connect(self, as_of: Any) -> Any:
        moment = one_moment(as_of, "SQL")
        st.need_extra("duckdb")
        tables = {name: self._table(name, moment) for name in (*st.KINDS, st.EVENTS)}
        self._refuse_whole(tables.values(), "query it in SQL")
        if self.company is None:
            companies = sorted({c for t in tables.values()
                                for c in st.state(t).get("companies", {})})
            if len(companies) > 1:
                self._tell("companies", f"the history at {self.path} holds the items of "
                           f"{len(companies)} companies ({', '.join(companies)}) and this "
                           "History reads them all: its SQL views mix them; group by company "
                           "(or filter company = ...), or open History(path, company=...) "
                           "for one company's", HistoryCompanyWarning)
        return views(self._store, tables, self.company)

    # ------------------------------------------------------------------ housekeeping

    def maintain(self, *, retention_days: int = st.RETENTION_DAYS) -> pd.DataFrame:
        """Merge the small files of every table and remove the files no version of the
        last ``retention_days`` days reads (``vacuum``): time travel (``as_of=``) reaches
        back that far.

        Returns one row per table: its current files and their bytes before and after,
        the small files merged (``files_compacted``) into ``files_written``, the files
        the vacuum removed and the bytes they held, and the table's version after. A sync
        compacts the partitions it wrote once small files pile up there; this does the
        rest, and the vacuum, which a sync never runs. A table made by an earlier paynb
        gets the settings of new ones (its log checkpointed every
        ``delta.checkpointInterval`` commits). A path with no store is said so
        (:class:`~paynb.errors.HistoryWarning`), as the readers say it; nothing is made.
        """
        if isinstance(retention_days, bool) or not isinstance(retention_days, int) \
                or retention_days < 0:
            raise ValidationError.for_argument(
                "retention_days", "must be a whole number of days, 0 or more")
        return maintained(self._store, retention_days, self._never_synced())
