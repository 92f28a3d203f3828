"""Stores of the format paynb wrote before the Delta tables (docs/history.md): converted,
or rebuilt. That format kept every version of an item in numbered files; its metadata
named the last committed version and the files a compaction had replaced. The old files
move into ``paynb-history-v1/``, which also marks a conversion under way.
"""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path
from typing import Any
from urllib.parse import quote

from paynb._version import __version__
from paynb._warn import user_stacklevel
from paynb.errors import HistoryCorruptError, HistoryWarning
from paynb.history import _store as st
from paynb.history._index import fingerprints

__all__ = ["convert_if_old", "is_old"]

OLD_META = "paynb-history.json"
BACKUP = "paynb-history-v1"
DONE = "converted"
_OLD_AREAS = ("items", "events", "returns", "index", ".tmp", OLD_META)  # the metadata last
_FILE = re.compile(r"^v(\d{6,})-[0-9a-f]{8,}\.parquet$")


def is_old(store: st.Store) -> bool:
    """Whether ``store`` is of the older format, or its conversion was cut short."""
    root = store.local
    return root is not None and ((root / OLD_META).is_file() or (
        (root / BACKUP / OLD_META).is_file() and not (root / BACKUP / DONE).exists()))


def convert_if_old(store: st.Store, *, rebuild: bool = False) -> None:
    """Convert a store of the older format (the caller holds the lock), or with
    ``rebuild`` remove its files (the sync then fetches everything again)."""
    root = store.local
    if root is None or not is_old(store):
        return
    backup = root / BACKUP
    if rebuild:
        warnings.warn(f"the history at {root} was in the format of an earlier paynb: its "
                      "files are removed and it is built again from the service",
                      HistoryWarning, stacklevel=user_stacklevel())
        for target in [root / name for name in _OLD_AREAS] + [backup]:
            shutil.rmtree(target) if target.is_dir() else target.unlink(missing_ok=True)
        return
    warnings.warn(f"the history at {root} is in the format of an earlier paynb (Parquet "
                  "files of its own): converting it to Delta tables; the old files are "
                  f"kept in {backup} (remove that folder once you no longer need it)",
                  HistoryWarning, stacklevel=user_stacklevel())
    with store.writing():
        backup.mkdir(exist_ok=True)
        if (root / OLD_META).exists():  # the metadata last: then every folder is moved
            for name in _OLD_AREAS:
                if (root / name).exists() and not (backup / name).exists():
                    (root / name).rename(backup / name)
        try:
            _convert(store, backup, json.loads((backup / OLD_META).read_text("utf-8")))
        except (OSError, ValueError, KeyError) as exc:
            raise HistoryCorruptError(
                f"the history at {root} (format of an earlier paynb) cannot be converted "
                f"({exc}); its files are in {backup}; client.sync(rebuild=True) builds it "
                "again from the service") from None
        (backup / DONE).touch()


def _read(backup: Path, area: str, kind: str, company: str, meta: dict[str, Any],
          ) -> tuple[Any, set[str]]:
    """The rows of the committed files of one kind and company in ``area`` (the folder
    names are not columns), oldest version first, and their JSON columns."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    superseded = set(meta.get("superseded", []))
    folder = backup / area / f"kind={kind}" / f"company={quote(company, safe='')}"
    found = sorted((int(match.group(1)), file.name, file) for file in folder.rglob("*.parquet")
                   if (match := _FILE.match(file.name)) and int(match.group(1)) <= int(
                       meta["version"]) and file.relative_to(backup).as_posix() not in superseded)
    tables, as_json = [], set()
    for _, _, file in found:
        parquet = pq.ParquetFile(file)
        as_json.update(json.loads((parquet.schema_arrow.metadata or {}).get(
            b"paynb", b"{}")).get("json", []))
        tables.append(parquet.read())
    return pa.concat_tables(tables, promote_options="permissive"), as_json


def _convert(store: st.Store, backup: Path, meta: dict[str, Any]) -> None:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
    from deltalake import write_deltalake

    common = {"format": st.FORMAT, "service": meta.get("service"),
              "masked": meta.get("masked"), "paynb": __version__, "sync": 1}
    items: dict[str, Any] = {}
    events, apps = [], []
    for old, companies in meta.get("kinds", {}).items():
        kind = "nocs" if old == "noc" else old
        kept: dict[str, Any] = {**common, "companies": {}, "json": []}
        if kind == "ach" and meta.get("accountKey"):
            kept["accountKey"] = meta["accountKey"]
        parts = []
        for company, held in companies.items():
            rows, as_json = _read(backup, "items", old, company, meta)
            kept["json"] = sorted({*kept["json"], *as_json})
            # The latest committed version of each item, in the list's order.
            rows = rows.take(pc.sort_indices(rows, [("_version", "ascending")]))
            last = ~pd.Series(rows.column(st.ID_FIELDS[kind]).to_numpy(zero_copy_only=False)
                              ).duplicated(keep="last").to_numpy()
            rows = rows.filter(pa.array(last)).drop_columns(["_version"])
            rows = st.frames.delta_types(rows.take(pc.sort_indices(rows, [("_order",
                                                                           "ascending")])))
            rows = st.item_rows(rows.drop_columns(list(st.INTERNAL)), kind, company,
                                rows.column("_order"), fingerprints(rows),
                                rows.column("_seenAt"))
            parts.append(rows)
            kept["companies"][company] = {
                "sync": 1, **{key: held.get(key) for key in ("since", "watermark", "syncedAt")},
                "counts": held["counts"], "nextOrder": held["nextOrder"]}
            seen, _ = _read(backup, "events", old, company, meta)
            if seen.num_rows:
                seen = st.frames.delta_types(seen)
                events.append(st.event_rows(kind, company, seen.column("itemId"),
                                            seen.column("itemStatus"), seen.column("seenAt")))
            apps.append((st.app_id(kind, company), 1))
        items[kind] = (pa.concat_tables(parts, promote_options="permissive"), kept)
    # Events first, as a sync commits them; each write replaces what a conversion cut
    # short may have left.
    write_deltalake(store.table_uri(st.EVENTS), pa.concat_tables(events) if events else
                    pa.table({"kind": pa.array([], pa.string())}), mode="overwrite",
                    schema_mode="overwrite", partition_by=list(st.EVENT_PARTITIONS),
                    writer_properties=st.writer(),
                    commit_properties=st.commit_properties(common, *apps),
                    **st.created(st.EVENTS))
    for kind, (rows, kept) in items.items():
        write_deltalake(store.table_uri(kind), st.with_unit(rows, kind), mode="overwrite",
                        schema_mode="overwrite", partition_by=list(st.PARTITIONS),
                        writer_properties=st.writer(), commit_properties=st.commit_properties(kept),
                        **st.created(kind))
