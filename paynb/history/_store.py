"""The history store on disk: layout, metadata, the lock, atomic writes and reading back.

Layout under the store's folder (plain hive-partitioned Parquet)::

    paynb-history.json                       metadata; its "version" is the last commit
    items/kind=ach/company=DEMO1/month=2026-11/v000003-<random>.parquet
    events/kind=ach/company=DEMO1/v000003-<random>.parquet
    returns/kind=ach/company=DEMO1/month=2026-12/v000003-<random>.parquet
    index/items/kind=ach/company=DEMO1/month=2026-11/v000003-<random>.arrow
    .lock                                    held by the process that syncs
    .tmp/                                    files being written

Every file is written under ``.tmp`` and moved into place by the commit, so no reader
ever sees half a file. Each sync writes its files with the next version number, then
commits: moves them into place, flushes them, and replaces the metadata file (by
rename); files of a version above the committed one are left-overs of a commit cut
short, ignored by readers and removed by the next sync, which also empties ``.tmp``
(it looks for left-overs only when ``.tmp`` is there: a sync removes it last). A sync
appends small files (the new and changed items); readers keep the highest version of
each item. When a partition's (or a kind's events folder's) newest files are
:data:`MAX_FILES` small ones (of fewer than :data:`SMALL_FILE_ROWS` rows each), the
sync that writes the last of them merges them into one; big files are never rewritten
(see ``_to_merge`` in :mod:`paynb.history._sync`).

``index`` holds, for each items file, its ids sorted with their ``_hash``, ``_order``
and status (Arrow IPC, outside the folders other Parquet readers glob): the sync's
look-ups of the items it fetched are binary searches there (see
:meth:`Store.read_index`). An index names its file's name, size and modification time,
and is built again from the file whenever it does not match.

``returns`` holds a second copy of every stored row that has a return date (ACH and
RCC), partitioned by the month of that date: a few percent of the rows, so that the
returns dated in a month are one small partition's read, not a search through the
months of the items they come from (see :meth:`paynb.History.ach`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import json
import logging
import os
import re
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote

from paynb.errors import PaynbError

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

__all__ = [
    "AREAS",
    "RETURN_KINDS",
    "HistoryCorruptError",
    "HistoryError",
    "HistoryLockedError",
    "Store",
    "default_path",
    "latest",
]

logger = logging.getLogger("paynb.history")

FORMAT = "paynb-history"
FORMAT_VERSION = 1
META_FILE = "paynb-history.json"
#: The small files a partition collects before the sync that writes the last of them
#: merges them into one.
MAX_FILES = 8
#: Rows per Parquet row group: small enough that a date range skips most of a month's
#: groups by their statistics, large enough that reading everything stays fast.
ROW_GROUP = 32_768
#: A file of fewer rows is small, to be merged (see MAX_FILES): a quarter of a row group,
#: so a backfill's last batch of a month (up to a row group) is written once, and a merge
#: rewrites at most some thousands of rows beside the syncs' files.
SMALL_FILE_ROWS = 8_192
#: The frames kinds, as the folders name them.
KINDS: tuple[str, ...] = ("ach", "rcc", "instant", "rtp", "noc")
ID_FIELDS = {"ach": "achItemId", "rcc": "rccItemId", "instant": "uniqueId", "rtp": "uniqueId",
             "noc": "nocId"}
#: The field whose month partitions the items: it never changes once an item exists.
MONTH_FIELDS = {"ach": "receivedDateTime", "rcc": "receivedDateTime",
                "instant": "receivedDateTime", "rtp": "receivedDateTime", "noc": "nocDate"}
STATUS_FIELDS: dict[str, str | None] = {"ach": "itemStatus", "rcc": "itemStatus",
                                        "instant": "status", "rtp": "status", "noc": None}
#: Columns the store adds to each item row (left out of the frames it returns).
INTERNAL = ("_version", "_order", "_hash", "_seenAt")
NO_MONTH = "none"
#: The folders of data files: items by received month, events, returns by return month.
AREAS = ("items", "events", "returns")
#: The kinds whose returned rows are also kept in ``returns``.
RETURN_KINDS = ("ach", "rcc")
_FILE = re.compile(r"^v(\d{6,})-[0-9a-f]{8,}\.parquet$")
_EVENT_COLUMNS = ("kind", "itemId", "itemStatus", "seenAt")
#: The folder of the items files' indexes (see :meth:`Store.read_index`), the schema
#: metadata key of an index's description, and the version of its layout.
INDEX = "index"
INDEX_KEY = b"paynb-index"
INDEX_FORMAT = 1


class HistoryError(PaynbError):
    """A problem with a history store."""


class HistoryLockedError(HistoryError):
    """Another process is syncing the same store."""


class HistoryCorruptError(HistoryError):
    """A file of the store cannot be read, or does not belong there."""


def default_path(environment: str) -> Path:
    """The store of ``environment`` in the user's data folder (where the journal lives)."""
    import platformdirs

    folder = re.sub(r"[^A-Za-z0-9._-]+", "_", environment) or "default"
    return Path(platformdirs.user_data_dir("paynb", appauthor=False)) / "history" / folder


def _rebuild_hint(path: Path) -> str:
    return (f"; remove it, or run client.sync(rebuild=True) to build the history at "
            f"{path} again from the service")


@dataclass(frozen=True)
class DataFile:
    """One committed Parquet file of the store."""

    path: Path
    kind: str
    company: str
    month: str | None  # None for event files
    version: int


class Store:
    """A history folder: its metadata, files, lock, writes and reads."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser()
        self._written = 0
        #: Files being written under ``.tmp`` since the last commit: (the write's future,
        #: its temporary file, where the commit moves it).
        self._pending: list[tuple[Any, Path, Path]] = []
        self._pool: Any = None

    # ------------------------------------------------------------------ metadata

    @property
    def meta_path(self) -> Path:
        return self.path / META_FILE

    def exists(self) -> bool:
        return self.meta_path.exists()

    def meta(self) -> dict[str, Any]:
        """The committed metadata (an empty store's when there is none yet)."""
        if not self.meta_path.exists():
            return {"format": FORMAT, "formatVersion": FORMAT_VERSION, "version": 0,
                    "masked": None, "kinds": {}, "superseded": []}
        try:
            meta = json.loads(self.meta_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise HistoryCorruptError(f"{self.meta_path} is not readable history metadata "
                                      f"({exc})" + _rebuild_hint(self.path)) from None
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise HistoryCorruptError(f"{self.meta_path} is not paynb history metadata"
                                      + _rebuild_hint(self.path))
        if meta.get("formatVersion") != FORMAT_VERSION:
            raise HistoryCorruptError(
                f"{self.meta_path} is of history format {meta.get('formatVersion')!r}; this "
                f"paynb reads format {FORMAT_VERSION}" + _rebuild_hint(self.path))
        return meta

    def commit(self, meta: dict[str, Any]) -> None:
        """Replace the metadata in one rename: the sync's files become visible at once.

        The files written since the last commit (see :meth:`write_table`), flushed to disk
        by the threads that wrote them, are moved into place first, so that metadata on
        disk never names a file that is not.
        """
        import orjson

        if self._pending:
            with self.writing():
                for future, part, target in self._pending:
                    future.result()  # written and flushed (see _write_part)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(part, target)
            self._pending = []
        # orjson: the standard encoder is pure Python once it indents.
        self._atomic_write(self.meta_path, orjson.dumps(
            meta, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS))

    def close(self) -> None:
        """Stop the writing threads, once the running writes end (a sync that failed
        leaves its files in ``.tmp``, which the next one removes)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None
        self._pending = []

    # ------------------------------------------------------------------ the lock

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's lock, or raise :class:`HistoryLockedError` at once.

        An OS lock on ``.lock`` (``fcntl``; ``msvcrt`` on Windows): the system drops it
        when the process ends, however it ends, so a killed sync never leaves it held.
        """
        with self.writing():
            self.path.mkdir(parents=True, exist_ok=True)
            lock_path = self.path / ".lock"
            handle = open(lock_path, "a+", encoding="utf-8")  # noqa: SIM115 (held until exit)
        try:
            try:
                _lock(handle)
            except OSError:
                handle.seek(0)
                holder = handle.read().strip() or "unknown"
                raise HistoryLockedError(
                    f"another process (pid {holder}) is syncing the history at {self.path}; "
                    "wait until it has finished, then sync again") from None
            handle.seek(0)
            handle.truncate()
            handle.write(str(os.getpid()))
            handle.flush()
            try:
                yield
            finally:
                _unlock(handle)
        finally:
            handle.close()

    # ------------------------------------------------------------------ files

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Turn the system's refusal to write the store (no such folder, a file in the
        way, no permission, a full disk) into an error that names ``path``."""
        try:
            yield
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            where = f" ({exc.filename})" if exc.filename and str(exc.filename) != str(
                self.path) else ""
            raise HistoryError(
                f"path {str(self.path)!r} cannot be written as a history folder: {reason}"
                f"{where}. Give client.sync(path=...) a folder you can write to (it and "
                "its parents are created), or leave path out for the default in your "
                "user data folder") from None

    def _atomic_write(self, target: Path, data: bytes) -> None:
        with self.writing():
            tmp = self.path / ".tmp"
            tmp.mkdir(parents=True, exist_ok=True)
            part = tmp / f"{target.name}.{secrets.token_hex(4)}"
            with open(part, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(part, target)

    def write_table(self, table: pa.Table, folder: Path, version: int, *,
                    index: tuple[str, str | None] | None = None) -> Path:
        """Write ``table`` as a new file of ``folder``, and with ``index = (id field,
        status field)`` its index (see :meth:`read_index`); return the file's path.

        Written on a thread into ``.tmp`` (Arrow's writer leaves the interpreter free
        meanwhile), and moved into place by :meth:`commit`: a sync interrupted at any
        point leaves its files in ``.tmp``, which the next sync removes.
        """
        from concurrent.futures import ThreadPoolExecutor

        # The counter keeps one sync's files of a partition in the order they were written.
        self._written += 1
        name = f"v{version:06d}-{self._written:06x}{secrets.token_hex(3)}.parquet"
        with self.writing():
            tmp = self.path / ".tmp"
            tmp.mkdir(parents=True, exist_ok=True)
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="paynb-write")
        target = folder / name
        future = self._pool.submit(self._write_part, table, tmp / name, index)
        self._pending.append((future, tmp / name, target))
        if index is not None:
            self._pending.append((future, tmp / f"{name}.index", self.index_path(target)))
        return target

    def _write_part(self, table: pa.Table, part: Path,
                    index: tuple[str, str | None] | None) -> None:
        import pyarrow.parquet as pq

        # Snappy: read about 2.5x faster than zstd here, and every Parquet reader has it.
        pq.write_table(table, part, compression="snappy", row_group_size=ROW_GROUP)
        # Flushed here, while the sync goes on, rather than all at the commit.
        _fsync(part)
        if index is not None:
            # Of the file as it will be in place: a rename keeps its size and time.
            self._write_index(part.parent / f"{part.name}.index", part, part.name, table,
                              *index)

    def items_folder(self, kind: str, company: str, month: str) -> Path:
        return (self.path / "items" / f"kind={kind}" / f"company={quote(company, safe='')}"
                / f"month={month}")

    def returns_folder(self, kind: str, company: str, month: str) -> Path:
        return (self.path / "returns" / f"kind={kind}" / f"company={quote(company, safe='')}"
                / f"month={month}")

    def events_folder(self, kind: str, company: str) -> Path:
        return self.path / "events" / f"kind={kind}" / f"company={quote(company, safe='')}"

    def files(self, area: str, *, kind: str | None = None, company: str | None = None,
              meta: dict[str, Any] | None = None, committed: bool = True) -> list[DataFile]:
        """The data files of ``area`` (``items``, ``events`` or ``returns``), oldest version
        first.

        Only committed, not superseded files unless ``committed=False`` (then every
        file, for the sync's clean-up). A file that does not belong to the layout is an
        error naming it.
        """
        meta = self.meta() if meta is None else meta
        version = int(meta.get("version", 0))
        superseded = set(meta.get("superseded", []))
        depth = 2 if area == "events" else 3
        found: list[DataFile] = []
        root = self.path / area
        if not root.exists():
            return found
        # Every file, of other kinds too: a file that is not the store's is named.
        for folder, _, names in os.walk(root):
            for name in names:
                file = Path(folder, name)
                data = _parse(file.relative_to(root), depth)
                if data is None:
                    raise HistoryCorruptError(
                        f"{file} does not belong to a paynb history (the folder {root} "
                        "holds only the files paynb writes)" + _rebuild_hint(self.path))
                file_kind, file_company, month, file_version = data
                if kind is not None and file_kind != kind:
                    continue
                if company is not None and file_company != company:
                    continue
                if committed and (file_version > version
                                  or file.relative_to(self.path).as_posix() in superseded):
                    continue
                found.append(DataFile(file, file_kind, file_company, month, file_version))
        found.sort(key=lambda f: (f.kind, f.company, f.month or "", f.version, f.path.name))
        return found

    def remove_uncommitted(self, meta: dict[str, Any]) -> None:
        """Delete what an interrupted sync left: files above the committed version, files
        a committed compaction replaced, and temporary files.

        Only where a sync did not finish: each one writes its files under ``.tmp`` and
        removes ``.tmp`` last, after its commit and clean-up (see :meth:`finish`), so a
        store without ``.tmp`` has nothing to remove and is not searched.
        """
        if not (self.path / ".tmp").exists():
            return
        version = int(meta.get("version", 0))
        superseded = set(meta.get("superseded", []))
        for area in AREAS:
            for data in self.files(area, meta=meta, committed=False):
                if data.version > version or \
                        data.path.relative_to(self.path).as_posix() in superseded:
                    data.path.unlink(missing_ok=True)
        # An index whose items file is gone (uncommitted, superseded) goes too.
        index = self.path / INDEX
        if index.exists():
            for file in index.rglob("*.arrow"):
                if not (self.path / file.relative_to(index).with_suffix(".parquet")).exists():
                    file.unlink(missing_ok=True)
        shutil.rmtree(self.path / ".tmp", ignore_errors=True)

    def finish(self) -> None:
        """Remove ``.tmp``: the sync committed and cleaned up (see
        :meth:`remove_uncommitted`)."""
        shutil.rmtree(self.path / ".tmp", ignore_errors=True)

    def remove_superseded(self, relatives: list[str]) -> None:
        """Delete the files a committed compaction replaced, and their indexes."""
        for relative in relatives:
            data = self.path / relative
            data.unlink(missing_ok=True)
            self.index_path(data).unlink(missing_ok=True)

    def remove_all_data(self) -> None:
        """Delete every data file (for a rebuild); the metadata is rewritten by the commit."""
        for area in (*AREAS, INDEX):
            shutil.rmtree(self.path / area, ignore_errors=True)

    # ------------------------------------------------------------------ reading

    def read(self, files: list[DataFile], columns: list[str] | None = None, *,
             where: list[tuple[str, str, Any]] | None = None,
             also: tuple[str, list[Any]] | None = None) -> pa.Table:
        """One table of ``files`` (columns a file lacks are nulls: the schema widens).

        ``where`` holds conditions ``(column, op, value)`` with op ``isin``, ``>=`` or
        ``<=``: only the rows that meet them are returned, and only the row groups that
        hold some are decoded beyond the conditions' own columns (the files are cut in
        groups of :data:`ROW_GROUP` rows in list order). The caller still filters exactly.
        ``also = (column, values)`` keeps the rows whose ``column`` is in ``values``
        whatever ``where`` says (every version of an item that has several, so that the
        latest one is known before filtering).
        """
        import pyarrow as pa
        import pyarrow.parquet as pq

        tables = []
        for data in files:
            try:
                # ParquetFile, not read_table: the folder names are not columns of the file.
                parquet = pq.ParquetFile(data.path)
                schema = parquet.schema_arrow
                wanted = None if columns is None else [c for c in columns if c in schema.names]
                condition = _condition(where or [], schema, also)
                if condition is None:
                    table = parquet.read(columns=wanted)
                else:
                    table = _read_matching(parquet, wanted, condition, where or [], also)
            except (OSError, pa.ArrowException) as exc:
                raise HistoryCorruptError(
                    f"{data.path} is not a readable Parquet file of this history ({exc})"
                    + _rebuild_hint(self.path)) from None
            tables.append(table)
        if not tables:
            return pa.table({})
        if len(tables) == 1:
            return tables[0]
        return pa.concat_tables(tables, promote_options="permissive")

    # ------------------------------------------------------------------ the index

    def index_path(self, data: Path) -> Path:
        """The index file of the items file ``data``: the same path under ``index/``,
        ending ``.arrow`` (outside ``items/``, so that Parquet readers never meet it)."""
        return (self.path / INDEX / data.relative_to(self.path)).with_suffix(".arrow")

    def _write_index(self, path: Path, data: Path, name: str, table: pa.Table,
                     id_field: str, status_field: str | None) -> None:
        """Write to ``path`` the index of the items file ``data`` (to be named ``name``),
        whose rows are ``table``: its ids sorted, with the fingerprint, list position and
        status of each (the last row of an id the file holds twice)."""
        import pyarrow as pa

        index = _index_table(table, id_field, status_field)
        stat = data.stat()
        info = {"format": INDEX_FORMAT, "file": name, "bytes": stat.st_size,
                "mtime": stat.st_mtime_ns, "rows": index.num_rows}
        index = index.replace_schema_metadata({INDEX_KEY: json.dumps(info).encode("utf-8")})
        with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, index.schema) as writer:
            writer.write_table(index)

    def read_index(self, files: list[DataFile], id_field: str, status_field: str | None,
                   ids: list[Any], cache: dict[Any, Any] | None = None) -> pa.Table:
        """The stored id, ``_hash``, ``_order`` and status of the items of ``files`` whose
        id is in ``ids`` (every version, oldest file first), found in the files' indexes
        by a binary search: no Parquet file is decoded.

        An index that is missing, unreadable or not of its file as it is now (another
        name, size or modification time) is not trusted: it is built again from the file
        and written (only a sync, which holds the lock, calls this). ``cache`` (a dict
        the caller keeps) holds the indexes read, so that asking again reads nothing.
        """
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        cache = {} if cache is None else cache
        tables = []
        wanted: Any = None
        asked: Any = None
        for data in files:
            index = cache.get(data.path)
            if index is None:
                index = cache[data.path] = self._index_of(data, id_field, status_field)
            if not ids or index.num_rows == 0:
                continue
            column = index.column(id_field)
            if wanted is None or wanted.type != column.type:
                try:
                    wanted = pa.array(ids).cast(column.type)
                except (pa.ArrowException, TypeError):
                    continue  # ids of another type: none of them is in this file
                asked = None
            if pa.types.is_integer(column.type) and column.null_count == 0:
                keys = column.to_numpy()
                if asked is None:
                    asked = np.unique(wanted.drop_null().to_numpy(zero_copy_only=False))
                # Only the ids within the file's range are searched for: a file holds a
                # run of the list (a backfill's batch of it, a sync's changes), so most ids
                # asked lie outside most files of their month.
                within = asked[np.searchsorted(asked, keys[0]):
                               np.searchsorted(asked, keys[-1], side="right")]
                place = np.searchsorted(keys, within)
                rows = place[keys[place] == within]
            else:
                found = pc.index_in(wanted, value_set=column.combine_chunks())
                rows = found.drop_null().to_numpy(zero_copy_only=False)
            if len(rows):
                tables.append(index.take(pa.array(np.unique(rows))))
        if not tables:
            return pa.table({})
        if len(tables) == 1:
            return tables[0]
        return pa.concat_tables(tables, promote_options="permissive")

    def _index_of(self, data: DataFile, id_field: str, status_field: str | None) -> pa.Table:
        """The index of ``data`` (see :meth:`read_index`), built again when not trusted."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = self.index_path(data.path)
        columns = [id_field, "_hash", "_order", *([status_field] if status_field else [])]
        try:
            stat = data.path.stat()
            expected = {"format": INDEX_FORMAT, "file": data.path.name,
                        "bytes": stat.st_size, "mtime": stat.st_mtime_ns}
            # Mapped, not read: a look-up touches only the pages its binary search does.
            # (The sync drops its indexes before it deletes superseded files: a mapped
            # file cannot be deleted on Windows.)
            index = pa.ipc.open_file(pa.memory_map(str(path))).read_all()
            info = json.loads((index.schema.metadata or {})[INDEX_KEY])
            if {k: info.get(k) for k in expected} == expected and info.get("rows") == \
                    index.num_rows and index.column_names == columns:
                return index.combine_chunks()
        except (OSError, pa.ArrowException, KeyError, ValueError, TypeError):
            pass
        logger.info("history: building the index of %s", data.path)
        try:
            table = pq.ParquetFile(data.path).read(columns=columns)
        except (OSError, pa.ArrowException) as exc:
            raise HistoryCorruptError(
                f"{data.path} is not a readable Parquet file of this history ({exc})"
                + _rebuild_hint(self.path)) from None
        target = self.index_path(data.path)
        with self.writing():
            part = self.path / ".tmp" / f"{target.name}.{secrets.token_hex(4)}"
            part.parent.mkdir(parents=True, exist_ok=True)
            self._write_index(part, data.path, data.path.name, table, id_field, status_field)
            target.parent.mkdir(parents=True, exist_ok=True)
            # Not flushed: an index lost or torn by a crash is not trusted, but built again.
            os.replace(part, target)
        return _index_table(table, id_field, status_field).combine_chunks()

    def info(self, files: list[DataFile]) -> dict[str, Any]:
        """What the files say of their columns: the pandas ``dtypes`` they were written
        with and the ``json`` columns (later files win; columns in first-seen order)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        dtypes: dict[str, str] = {}
        json_columns: set[str] = set()
        for data in files:
            try:
                metadata = pq.read_schema(data.path).metadata or {}
            except (OSError, pa.ArrowException) as exc:
                raise HistoryCorruptError(
                    f"{data.path} is not a readable Parquet file of this history ({exc})"
                    + _rebuild_hint(self.path)) from None
            info = json.loads(metadata.get(b"paynb", b"{}"))
            dtypes.update(info.get("dtypes", {}))
            json_columns.update(info.get("json", []))
        return {"dtypes": dtypes, "json": sorted(json_columns)}


def _fsync(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def _parse(relative: Path, depth: int) -> tuple[str, str, str | None, int] | None:
    """(kind, company, month, version) of a data file's path under its area, or None."""
    parts = relative.parts
    if len(parts) != depth + 1:
        return None
    match = _FILE.match(parts[-1])
    keys = [part.partition("=") for part in parts[:-1]]
    expected = ("kind", "company", "month")[:depth]
    if match is None or tuple(k for k, _, _ in keys) != expected:
        return None
    kind = keys[0][2]
    if kind not in KINDS:
        return None
    month = keys[2][2] if depth == 3 else None
    return kind, unquote(keys[1][2]), month, int(match.group(1))


def _condition(where: list[tuple[str, str, Any]], schema: pa.Schema,
               also: tuple[str, list[Any]] | None = None) -> Any:
    """The Arrow filter of the conditions on columns ``schema`` has (None: no filter),
    or'ed with ``also``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    parts = []
    for column, op, value in where:
        if column not in schema.names:
            continue
        field = pc.field(column)
        if op == "isin":
            parts.append(field.isin(list(value)))
            continue
        kind = schema.field(column).type
        bound = pa.scalar(value, type=kind) if pa.types.is_timestamp(kind) else value
        parts.append(field >= bound if op == ">=" else field <= bound)
    if not parts:
        return None
    condition = parts[0]
    for part in parts[1:]:
        condition = condition & part
    if also is not None and also[1] and also[0] in schema.names:
        condition = condition | pc.field(also[0]).isin(list(also[1]))
    return condition


def _read_matching(parquet: Any, columns: list[str] | None, condition: Any,
                   where: list[tuple[str, str, Any]], also: tuple[str, list[Any]] | None,
                   ) -> pa.Table:
    """The rows of one file that meet ``condition``: its columns are read first, then
    only the row groups holding a match (a month of returns is a few percent of rows)."""
    import numpy as np
    import pyarrow as pa

    names = parquet.schema_arrow.names
    used = list(dict.fromkeys([c for c, _, _ in where if c in names]
                              + ([also[0]] if also and also[1] and also[0] in names else [])))
    probe = parquet.read(columns=used)
    probe = probe.append_column("_row", pa.array(np.arange(probe.num_rows, dtype=np.int64)))
    rows = probe.filter(condition).column("_row").to_numpy()
    metadata = parquet.metadata
    sizes = np.array([metadata.row_group(i).num_rows for i in range(metadata.num_row_groups)],
                     dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    group_of = np.searchsorted(starts, rows, side="right") - 1
    groups = np.unique(group_of)
    if not len(groups):
        return parquet.schema_arrow.empty_table().select(
            columns if columns is not None else names)
    table = parquet.read_row_groups(groups.tolist(), columns=columns)
    # The chosen groups follow one another in ``table``: a row's place there is its
    # group's offset plus its place in the group.
    offsets = np.concatenate([[0], np.cumsum(sizes[groups])[:-1]])
    place = offsets[np.searchsorted(groups, group_of)] + (rows - starts[group_of])
    return table.take(pa.array(place))


def _index_table(table: pa.Table, id_field: str, status_field: str | None) -> pa.Table:
    """The index rows of an items file's ``table``: one per id (its last row), sorted by
    id, with the columns :meth:`Store.read_index` returns."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    columns = [id_field, "_hash", "_order", *([status_field] if status_field else [])]
    table = table.select(columns)
    table = table.filter(pc.is_valid(table.column(id_field)))
    if status_field and table.schema.field(status_field).type != pa.string():
        table = table.set_column(table.schema.get_field_index(status_field), status_field,
                                 pc.cast(table.column(status_field), pa.string()))
    ids = table.column(id_field)
    order = pc.sort_indices(ids)  # stable: an id's rows stay in file order
    table = table.take(order)
    if table.num_rows > 1:
        ids = table.column(id_field).combine_chunks()
        # The last row of each run of equal ids.
        last = pc.not_equal(ids.slice(1), ids.slice(0, len(ids) - 1))
        keep = np.append(last.to_numpy(zero_copy_only=False), True)
        if not keep.all():
            table = table.filter(pa.array(keep))
    return table


def latest(table: pa.Table, id_field: str) -> pa.Table:
    """The last row of each id of ``table`` (files concatenated oldest version first),
    at the place of the id's first row: the list's order is kept, and the rows that
    stay in place are zero-copy slices of ``table``, not a gather of every column."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    if table.num_rows == 0 or id_field not in table.column_names:
        return table
    ids = table.column(id_field).to_numpy(zero_copy_only=False)
    # Codes are numbered in the order of first sight: code c's row goes to place c.
    codes, uniques = pd.factorize(ids, use_na_sentinel=False)
    if len(uniques) == len(ids):
        return table
    last = np.empty(len(uniques), dtype=np.int64)
    last[codes] = np.arange(len(ids), dtype=np.int64)  # later rows overwrite earlier ones
    breaks = np.flatnonzero(np.diff(last) != 1) + 1
    starts = np.concatenate([[0], breaks])
    ends = np.concatenate([breaks, [len(last)]])
    return pa.concat_tables([table.slice(int(last[a]), int(b - a))
                             for a, b in zip(starts, ends, strict=True)])


def months_of(stamps: pd.Series) -> Any:
    """The partition name of each timestamp (``2026-11``, or ``none``), as an array."""
    import numpy as np
    import pandas as pd

    if isinstance(stamps.dtype, pd.DatetimeTZDtype):
        stamps = stamps.dt.tz_localize(None)  # the month of its own time
    months = stamps.to_numpy(dtype="datetime64[ns]").astype("datetime64[M]")
    # Each distinct month named once (strftime per row cost a millisecond a sync).
    distinct, where = np.unique(months, return_inverse=True)
    names = np.array([NO_MONTH if np.isnat(month) else
                      pd.Timestamp(month).strftime("%Y-%m") for month in distinct], dtype=object)
    return names[where.reshape(-1)]


def event_columns() -> tuple[str, ...]:
    """The columns of :meth:`paynb.History.events`."""
    return _EVENT_COLUMNS


def event_table(kind: str, company: str, ids: list[str], status: list[Any] | None,
                seen: pd.Timestamp) -> pa.Table:
    """The events file's table of ``ids`` (text) seen in ``status`` (None: no status) at
    ``seen``: as :func:`table_of` gives it for the frame of these columns (the same
    schema and metadata), without building the frame."""
    import pyarrow as pa

    schema = _event_schema()
    statuses = [None if s is None or s != s else str(s) for s in status] \
        if status is not None else [None] * len(ids)
    table = pa.table([pa.array([kind] * len(ids), pa.large_string()),
                      pa.array(ids, pa.large_string()),
                      pa.array(statuses, pa.large_string()),
                      pa.array([seen.value] * len(ids), pa.int64()).cast(
                          schema.field("seenAt").type)], schema=schema)
    info = json.loads(schema.metadata[b"paynb"])
    extra = json.dumps({"kind": kind, "company": company, **info}).encode("utf-8")
    return table.replace_schema_metadata({**schema.metadata, b"paynb": extra})


@functools.cache
def _event_schema() -> pa.Schema:
    """The schema :func:`table_of` gives an events frame (its pandas metadata does not
    depend on the rows)."""
    import pandas as pd

    frame = pd.DataFrame({"kind": pd.Series(["k"], dtype="str"),
                          "itemId": pd.Series(["1"], dtype="str"),
                          "itemStatus": pd.Series(["S"], dtype="str"),
                          "seenAt": pd.Series([pd.Timestamp(0, tz="UTC")]).dt.as_unit("ns")})
    return table_of(frame, {}).schema


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def table_of(frame: pd.DataFrame, info: dict[str, Any]) -> pa.Table:
    """``frame`` as an Arrow table carrying its pandas dtypes in the ``paynb`` metadata.

    Object columns (lists and objects the service sent in a field paynb does not know)
    are stored as JSON text and read back as such values.
    """
    import pyarrow as pa

    frame = frame.copy(deep=False)
    # A column taken from a frame deep-copies the frame's attrs; they are not stored.
    frame.attrs = {}
    dtypes = frame.dtypes
    json_columns = [name for name, dtype in dtypes.items() if str(dtype) == "object"]
    for name in json_columns:
        frame[name] = [None if v is None or (isinstance(v, float) and v != v)
                       else json.dumps(v, default=str) for v in frame[name]]
    table = pa.Table.from_pandas(frame, preserve_index=False)
    kept = {name: ("object" if name in json_columns else str(dtype))
            for name, dtype in dtypes.items()}
    extra = json.dumps({**info, "dtypes": kept, "json": json_columns}).encode("utf-8")
    return table.replace_schema_metadata({**(table.schema.metadata or {}), b"paynb": extra})


def with_internal(table: pa.Table, version: int, orders: Any, hashes: Any,
                  seen_at: pd.Timestamp) -> pa.Table:
    """``table`` (as :func:`table_of` gives a frame) with the store's columns of its rows
    added (:data:`INTERNAL`: the version, list positions, fingerprints and the time they
    were seen), as :func:`table_of` gives the frame with these columns: the same
    schema and metadata, without converting the frame again."""
    import numpy as np
    import pyarrow as pa

    rows = table.num_rows
    fields, described, dtypes = _internal_schema()
    arrays = [pa.array(np.full(rows, version, dtype=np.int64)),
              pa.array(np.asarray(orders, dtype=np.int64)),
              pa.array(np.asarray(hashes, dtype=np.int64)),
              pa.array(np.full(rows, seen_at.value, dtype=np.int64)).cast(fields[3].type)]
    metadata = dict(table.schema.metadata or {})
    if b"pandas" in metadata:
        pandas_meta = json.loads(metadata[b"pandas"])
        pandas_meta["columns"] += described
        metadata[b"pandas"] = json.dumps(pandas_meta).encode("utf-8")
    info = json.loads(metadata[b"paynb"])
    info["dtypes"].update(dtypes)
    metadata[b"paynb"] = json.dumps(info).encode("utf-8")
    schema = pa.schema([*table.schema, *fields], metadata=metadata)
    return pa.Table.from_arrays([*table.columns, *arrays], schema=schema)


@functools.lru_cache(maxsize=1)
def _internal_schema() -> tuple[list[pa.Field], list[dict[str, Any]], dict[str, str]]:
    """The Arrow fields, pandas metadata entries and dtypes :func:`table_of` gives the
    store's columns (the same for any rows: learnt once from a row of them)."""
    import numpy as np
    import pandas as pd

    row = table_of(pd.DataFrame({
        "_version": np.zeros(1, dtype=np.int64), "_order": np.zeros(1, dtype=np.int64),
        "_hash": np.zeros(1, dtype=np.int64),
        "_seenAt": pd.Series(pd.Timestamp(0, tz="UTC").as_unit("ns"), index=range(1))}), {})
    if row.column_names != list(INTERNAL):
        raise AssertionError(f"the store's columns are {INTERNAL}, not {row.column_names}")
    return (list(row.schema), json.loads(row.schema.metadata[b"pandas"])["columns"],
            json.loads(row.schema.metadata[b"paynb"])["dtypes"])


def _lock(handle: Any) -> None:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK, 1)
    else:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)


def _unlock(handle: Any) -> None:
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_UNLCK, 1)
    else:
        fcntl.flock(handle.fileno(), fcntl.LOCK_UN)
