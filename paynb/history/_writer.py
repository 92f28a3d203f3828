"""The sync's Delta writer: the rows one sync of one kind of one company stages, and their
commit as two transactions, the events first, then the items (docs/history.md, "Commits
and interruptions"): new items alone are appended, changed ones replace the files that
hold them, rewritten in id order; a partition's small files are merged once they pile up.
And the housekeeping of a history (:meth:`paynb.History.maintain`): compaction and vacuum.
"""

from __future__ import annotations

import collections
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from paynb.history import _store as st
from paynb.resources import ChangeFeed

if TYPE_CHECKING:
    import datetime as dt

    import numpy as np
    import pandas as pd
    import pyarrow as pa
    from deltalake import DeltaTable

__all__ = ["DeltaWriter", "compact", "maintained"]


class DeltaWriter:
    """What one sync of ``kind`` of ``company`` writes into ``table`` (None: none yet)
    and the events table ``journal``, from ``kept``, the table's state, on."""

    def __init__(self, store: st.Store, kind: str, company: str, table: DeltaTable | None,
                 journal: DeltaTable | None, kept: dict[str, Any], now: dt.datetime) -> None:
        self.store, self.kind, self.company, self.now = store, kind, company, now
        self.table, self.journal, self.kept = table, journal, kept
        self.id_field, self.status_field = st.ID_FIELDS[kind], st.STATUS_FIELDS[kind]
        #: The company's part of the table's state (read only).
        self.state: dict[str, Any] = kept.get("companies", {}).get(company, {})
        mark = self.state.get("watermark")
        #: The store's watermark, moved on by the returns staged.
        self.feed = ChangeFeed(None if mark is None else st.instant(mark))
        self.counts: dict[str, int] = dict(self.state.get("counts") or {})
        self.next_order = int(self.state.get("nextOrder") or 0)
        #: What the commit writes: item rows, status changes, columns of JSON text.
        self.rows: list[pa.Table] = []
        self.changes: tuple[list[str], list[Any]] = ([], [])
        self.json: set[str] = set()
        #: Rows staged that replace stored ones (none: the new items are appended).
        self.updates = 0
        self.backfilling = False

    def restart(self) -> None:
        """Write the company's part anew (a backfill, a rebuild's too): counts, list
        places and watermark start from what is staged."""
        self.backfilling = True
        self.state, self.counts, self.next_order, self.feed.mark = {}, {}, 0, None

    def stage(self, frame: pd.DataFrame, table: pa.Table, orders: np.ndarray,
               hashes: np.ndarray, *, new: np.ndarray, previous: pd.Series | None) -> None:
        """Keep rows to write (``table``: ``frame`` as Arrow) with paynb's columns, and
        the status changes among them (``new``: never stored; ``previous``: the stored
        status of the others)."""
        import numpy as np
        import pandas as pd

        if frame.empty:
            return
        self.rows.append(st.item_rows(table, self.kind, self.company, orders, hashes,
                                      [self.now] * len(frame)))
        if "returnDate" in frame:
            self.feed.advance(frame["returnDate"])
        self.next_order = max(self.next_order, int(orders.max()) + 1)
        moved = np.asarray(new, dtype=bool).copy()
        self.updates += int((~moved).sum())
        status = None
        if self.status_field:
            status = frame[self.status_field].astype(object)
            status = status.where(status.notna(), None)
            before = [] if previous is None else previous.to_numpy(dtype=object)[~moved]
            for sign, codes in ((-1, pd.Series(before, dtype=object)), (1, status)):
                for code, n in codes.dropna().value_counts().items():
                    self.counts[str(code)] = self.counts.get(str(code), 0) + sign * int(n)
            if previous is not None:
                moved |= previous.to_numpy(dtype=object) != status.to_numpy()
        self.changes[0].extend(frame[self.id_field][moved].astype(str).tolist())
        self.changes[1].extend([None] * int(moved.sum()) if status is None
                               else status[moved].tolist())

    def commit(self, number: int, common: dict[str, Any], held: dict[str, Any],
               ) -> tuple[int, int]:
        """Write the events, then the items, each in one transaction carrying the sync's
        ``number`` and state (``common``: the store's part; ``held``: what the sync keeps
        of the company besides the writer's); (rows, events) written."""
        import pyarrow as pa
        from deltalake import write_deltalake

        mark = None if self.feed.mark is None else self.feed.mark.isoformat()
        kept = {**self.kept, **common, "sync": number,
                "json": sorted({*self.kept.get("json", []), *self.json})}
        kept["companies"] = {**self.kept.get("companies", {}), self.company: {
            **held, "sync": number, "watermark": mark, "syncedAt": self.now.isoformat(),
            "counts": self.counts, "nextOrder": self.next_order}}
        data = pa.concat_tables(self.rows, promote_options="permissive") if self.rows \
            else None
        journal, events = self.journal, self._events()
        company = f"company = {st.quoted(self.company)}"
        with self.store.writing():
            # Appended, a rebuild's too (what the events hold of the items is kept);
            # a first backfill makes the table even when it has no events.
            if len(events) or self.backfilling and journal is None:
                write_deltalake(
                    self.store.table_uri(st.EVENTS), events, mode="append",
                    partition_by=list(st.EVENT_PARTITIONS), storage_options=self.store.options,
                    writer_properties=st.writer(), commit_properties=st.commit_properties(
                        {**common, "sync": number}, (st.app_id(self.kind, self.company), number)),
                    **(st.created(st.EVENTS) if journal is None else {}))
            if data is None and not self.backfilling:
                # Nothing changed: the state (sync time, watermark) is committed alone.
                assert self.table is not None
                self.table.create_write_transaction(
                    [], mode="append", schema=self.table.schema(),
                    partition_by=list(st.PARTITIONS), commit_properties=st.commit_properties(kept))
            else:
                how: dict[str, Any] = {"mode": "overwrite",
                                       "predicate": None if self.table is None else company}
                if self.backfilling:  # the company's rows replaced
                    rows = st.with_unit(st.empty(self.kind) if data is None else data, self.kind)
                elif not self.updates:  # new items only: appended
                    rows, how = data, {"mode": "append"}
                else:
                    rows, spans = self._spans(data)
                    how["predicate"] = f"{company} AND ({spans})"
                write_deltalake(self.store.table_uri(self.kind), rows, **how, schema_mode="merge",
                                partition_by=list(st.PARTITIONS),
                                storage_options=self.store.options, writer_properties=st.writer(),
                                commit_properties=st.commit_properties(kept),
                                **(st.created(self.kind) if self.table is None else {}))
            # Each write adds a small file to the partitions it touches: merged once they
            # pile up.
            compact(self.store, self.kind, self.table, {
                (self.company, month) for month in ([] if data is None else set(
                    data.column("month").to_pylist()))}, kept)
            compact(self.store, st.EVENTS, journal, {(self.kind, self.company)}
                    if len(events) else set(), {**common, "sync": number})
        return 0 if data is None else data.num_rows, len(events)

    def _spans(self, data: pa.Table) -> tuple[pa.Table, str]:
        """The rows to write in place of those stored, and the predicate selecting those:
        per month, spans of ids holding the items written and each stored file they reach
        whole, their stored rows with the new versions in, in id order. So each file stays
        a run of ids and a sync rewrites only the files of the items it changes (a write
        replacing rows by id, or a MERGE, rewrites the rest of their files unsorted:
        benchmarks/RESULTS.md, case 10; a MERGE also writes text as Arrow string views,
        which pyarrow's datasets, and DuckDB and Dask through them, cannot filter)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        assert self.table is not None
        field = self.id_field
        files = pa.table(self.table.get_add_actions(flatten=True))
        ranges: dict[str, list[tuple[Any, Any]]] = {}
        for company, month, first, last in zip(
                files.column("partition.company").to_pylist(),
                files.column("partition.month").to_pylist(),
                files.column(f"min.{field}").to_pylist(),
                files.column(f"max.{field}").to_pylist(), strict=True):
            if company == self.company and first is not None:
                ranges.setdefault(month, []).append((first, last))
        chosen, shown, inside = [], [], pc.scalar(False)
        months, ids = data.column("month").to_pylist(), data.column(field).to_pylist()
        for month in sorted(set(months)):
            written = sorted({i for m, i in zip(months, ids, strict=True)
                              if m == month and i is not None})
            for low, high in spans(written, ranges.get(month, [])):
                chosen.append([("company", "=", self.company), ("month", "=", month),
                               (field, ">=", low), (field, "<=", high)])
                inside |= (pc.field("month") == month) & (pc.field(field) >= low) & (
                    pc.field(field) <= high)
                ends = [st.quoted(v) if isinstance(v, str) else str(v) for v in (low, high)]
                shown.append(f'(month = {st.quoted(month)} AND "{field}" >= {ends[0]} AND '
                             f'"{field}" <= {ends[1]})')
        # The stored rows in the spans (their files' statistics chose the files) less the
        # versions written, and those, in the order of their months and ids.
        stored = self.store.scan(self.kind, self.table, chosen, None, inside & ~pc.field(
            field).isin(data.column(field).combine_chunks()))
        rows = pa.concat_tables([stored, data], promote_options="permissive")
        return rows.take(pc.sort_indices(rows, [("month", "ascending"), (field, "ascending")])), \
            " OR ".join(shown)

    def _events(self) -> pa.Table:
        """The status changes to append, less those the events already hold: after an
        interrupted sync (its events committed, its items not: see the module), those
        since the last sync; in a rebuild, all the company's (each item's earlier
        statuses are kept, and a status already recorded is not recorded again)."""
        import pyarrow as pa
        import pyarrow.compute as pc

        ids, statuses = self.changes
        table = self.journal if ids else None
        ahead = None if table is None or self.backfilling else table.transaction_version(
            st.app_id(self.kind, self.company))
        rows = st.event_rows(self.kind, self.company, ids, statuses, [self.now] * len(ids))
        if table is None or not self.backfilling and (
                ahead is None or ahead <= int(self.state.get("sync") or 0)):
            return rows
        recorded = self.store.scan(
            st.EVENTS, table, [("kind", "=", self.kind), ("company", "=", self.company)],
            ["itemId", "itemStatus"], None if self.backfilling else
            pc.field("seenAt") > st.instant(self.state["syncedAt"]))

        def keyed(events: pa.Table) -> pa.Table:  # (a NOC's status is null)
            return pa.table({"itemId": events.column("itemId"),
                             "itemStatus": pc.fill_null(events.column("itemStatus"), "")})

        fresh = keyed(rows).append_column("_at", pa.array(range(rows.num_rows), pa.int64()))
        new = fresh.join(keyed(recorded), ["itemId", "itemStatus"], join_type="left anti")
        at = new.column("_at")  # (the join keeps no order)
        return rows.take(at.take(pc.sort_indices(at)))


def spans(ids: list[Any], files: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """Spans (low, high) of ``ids`` (sorted) among stored files of id ranges ``files``
    (min, max): every file a span reaches lies whole in it, and spans part only where a
    file no id falls in lies between them."""
    spans: list[list[Any]] = []
    for item in ids:
        if spans and item <= spans[-1][1]:
            continue
        low = high = item
        grown = True
        while grown:  # to the ends of every file the span reaches
            grown = False
            for first, last in files:
                if first <= high and last >= low and (first < low or last > high):
                    low, high, grown = min(low, first), max(high, last), True
        if spans and not any(last > spans[-1][1] and first < low for first, last in files):
            spans[-1][0], spans[-1][1] = min(low, spans[-1][0]), max(high, spans[-1][1])
        else:
            spans.append([low, high])
    merged: list[list[Any]] = []
    for low, high in sorted(spans):  # a file reached back across an earlier span
        if merged and low <= merged[-1][1]:
            merged[-1][1] = max(high, merged[-1][1])
        else:
            merged.append([low, high])
    return [(low, high) for low, high in merged]


def compact(store: st.Store, name: str, found: DeltaTable | None, keys: set[tuple[str, ...]],
            kept: Mapping[str, Any]) -> None:
    """Merge the small files (under an eighth of the target size) of the partitions
    ``keys`` of table ``name`` where a write has just added one, once they pile up
    (:data:`~paynb.history._store.SMALL_FILES`, counted in ``found``, the table before
    the write, plus one); files over half the target size are never rewritten."""
    import pyarrow as pa

    if found is None or not keys:
        return
    columns = st.EVENT_PARTITIONS if name == st.EVENTS else st.PARTITIONS
    actions = pa.table(found.get_add_actions(flatten=True))
    small = collections.Counter(key for key, size in zip(
        zip(*(actions.column(f"partition.{c}").to_pylist() for c in columns), strict=True),
        actions.column("size_bytes").to_pylist(), strict=True)
        if size < st.TARGET_FILE_BYTES // 8)
    full = [key for key in keys if small[key] + 1 >= st.SMALL_FILES]
    table = store.open(name) if full else None
    for key in full:
        assert table is not None  # (it was written just now)
        table.optimize.compact(
            partition_filters=[(c, "=", v) for c, v in zip(columns, key, strict=True)],
            target_size=st.TARGET_FILE_BYTES // 2, writer_properties=st.writer(),
            commit_properties=st.commit_properties(kept))


def maintained(store: st.Store, retention_days: int, never_synced: bool) -> Any:
    """Compact and vacuum every table of ``store`` (nothing where ``never_synced``): one
    row per table, as :meth:`paynb.History.maintain` returns them."""
    import pandas as pd

    rows = []
    if not never_synced:  # (nothing is made where there is no store)
        with store.locked(), store.writing():
            for name, table in store.tables().items():
                kept = st.state(table)
                # A table made before a setting of new tables came in gets it now
                # (its log checkpointed as a new one's is).
                wanted = st.created(name)["configuration"]
                held = table.metadata().configuration
                if any(held.get(key) != value for key, value in wanted.items()):
                    table.alter.set_table_properties(
                        wanted, raise_if_not_exists=False,
                        commit_properties=st.commit_properties(kept))
                before = st.file_sizes(table)
                # Only files under half the target size are merged, a partition's
                # only when it holds several of them.
                done = table.optimize.compact(target_size=st.TARGET_FILE_BYTES // 2,
                                              writer_properties=st.writer(),
                                              commit_properties=st.commit_properties(kept))
                going = table.vacuum(retention_hours=retention_days * 24, dry_run=True,
                                     enforce_retention_duration=False)
                sizes = table.to_pyarrow_dataset().filesystem.get_file_info(going)
                table.vacuum(retention_hours=retention_days * 24, dry_run=False,
                             enforce_retention_duration=False,
                             commit_properties=st.commit_properties(kept))
                after = st.file_sizes(table)
                rows.append((name, len(before), sum(before), len(after), sum(after),
                             int(done.get("numFilesRemoved", 0)),
                             int(done.get("numFilesAdded", 0)), len(going),
                             sum(max(0, f.size or 0) for f in sizes), table.version()))
    return pd.DataFrame(rows, columns=[
        "table", "files_before", "bytes_before", "files_after", "bytes_after",
        "files_compacted", "files_written", "files_removed", "bytes_removed", "version"])
