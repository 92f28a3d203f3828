"""The history store: Delta tables under one root, a folder or an object-store URI
(``<root>/ach``, ``rcc``, ``instant``, ``rtp``, ``nocs``: one row per item, partitioned by
company and month; ``<root>/events``, by kind and company; ``<root>/.lock``, a folder's).

Every write is a Delta transaction; what paynb keeps of a sync (watermarks, counts, the
service) is the ``paynb`` entry of the commit's metadata (:func:`state`), written with the
data it describes. pandas, pyarrow and deltalake load only when a store is opened.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import weakref
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paynb._kinds import KINDS as KIND_REGISTRY
from paynb._lazy import OnFirstUse
from paynb._time import is_date_only, utc_moment
from paynb.errors import (
    HistoryCorruptError,
    HistoryError,
    HistoryLockedError,
    MissingExtraError,
    ValidationError,
)
from paynb.nacha import NUMBER_KEY

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.dataset as ds
    from deltalake import DeltaTable

__all__ = ["HistoryCorruptError", "HistoryError", "HistoryLockedError", "Store", "default_path",
           "empty", "kind_of", "months", "quoted", "state", "when"]

# On first use: the frames bring pandas and pyarrow, which a client (which imports the
# history to know where its store is) does not need until a store is read or synced.
frames: Any = OnFirstUse("paynb.frames")

#: The kind (:data:`paynb._kinds.KINDS`) of each table of items; the tables are named
#: as the client and the SQL views name the kinds (``nocs`` for the NOCs).
FRAME_KINDS = {kind.table: kind.name for kind in KIND_REGISTRY.values()}
#: The tables of items.
KINDS: tuple[str, ...] = tuple(FRAME_KINDS)
ID_FIELDS = {kind.table: kind.id_field for kind in KIND_REGISTRY.values()}
#: The field whose month partitions the items: it never changes once an item exists.
MONTH_FIELDS = {kind.table: kind.month_field for kind in KIND_REGISTRY.values()}
STATUS_FIELDS = {kind.table: kind.status_field for kind in KIND_REGISTRY.values()}
#: The kinds with a returns poll (items that reach B, I or R get a return date).
RETURN_KINDS = tuple(kind.table for kind in KIND_REGISTRY.values() if kind.returns)
EVENTS = "events"
EVENT_COLUMNS = ("kind", "itemId", "itemStatus", "seenAt")
#: Partition columns of the items tables and of the events table.
PARTITIONS = ("company", "month")
EVENT_PARTITIONS = ("kind", "company")
#: Columns paynb adds to an item's row: its place in the service's list, a fingerprint of
#: its content, when that was first seen; ACH's also the key of its account (_accounts).
INTERNAL = ("_order", "_hash", "_seenAt")
KEY_COLUMN = "_accountKey"
#: ACH's and the NOCs' column of the keyed hash of an account number alone (an ACH row's
#: own, a NOC's corrected one; _accounts): the NOC ledger tells masked accounts by it.
NUMBER_COLUMN = NUMBER_KEY
#: The columns that are not the service's fields (no frame shows them; no fingerprint
#: counts them).
HIDDEN = frozenset({*INTERNAL, KEY_COLUMN, NUMBER_COLUMN, *PARTITIONS})
NO_MONTH = "none"
#: The commit metadata key of paynb's state, and the layout it describes.
STATE_KEY = "paynb"
FORMAT = 2
#: Files of about this size: a sync rewrites the files holding the items it changes, so
#: smaller files mean fewer rows rewritten (benchmarks/RESULTS.md, case 10).
TARGET_FILE_BYTES = 2 * 2**20
#: Bytes of a column's dictionary in a file at most: a column of many distinct values (ids,
#: references, names, keys) falls back to plain encoding early instead of filling
#: deltalake's default dictionary of 1 MiB first, which made every write about a quarter
#: slower and the files bigger (benchmarks/RESULTS.md, case 10).
DICTIONARY_BYTES = 32 * 2**10
#: A partition holding this many small files (under an eighth of the target) is compacted
#: by the sync that wrote the last of them.
SMALL_FILES = 8
#: Days of time travel that :meth:`paynb.History.maintain` keeps when it vacuums.
RETENTION_DAYS = 30
#: Commits between two checkpoints of a table's log (``delta.checkpointInterval``, which
#: deltalake's commits follow): opening a table reads the last checkpoint and the commits
#: since, not every commit since the first (a daily sync adds one): 17 ms to open a table
#: of 50 commits, 4 ms from a checkpoint.
CHECKPOINT_COMMITS = 10
AMOUNT_UNIT_NOTE = ("the service's own whole-number unit, not stated by its spec "
                    "(see docs/history.md)")


def default_path(environment: str) -> Path:
    """The store of ``environment`` in the user's data folder (where the journal lives)."""
    import platformdirs

    folder = re.sub(r"[^A-Za-z0-9._-]+", "_", environment) or "default"
    return Path(platformdirs.user_data_dir("paynb", appauthor=False)) / "history" / folder


def need_extra(module: str = "deltalake") -> None:
    """Stop with :class:`~paynb.errors.MissingExtraError` naming the ``history`` extra when
    ``module`` (deltalake, or DuckDB for SQL) cannot be imported."""
    import importlib

    try:
        importlib.import_module(module)  # lazy: the extra loads when a store is used
    except ImportError:
        raise MissingExtraError(
            f"the local history needs the history extra (Delta tables through deltalake, "
            f"SQL through DuckDB): pip install 'paynb[history]' (missing: {module})",
            extra="history", missing=[module]) from None


def quoted(text: str) -> str:
    """``text`` as an SQL string literal."""
    return "'" + text.replace("'", "''") + "'"


class Store:
    """The root of a history: its tables, their state, the lock and errors naming it."""

    def __init__(self, path: str | os.PathLike[str],
                 storage_options: Mapping[str, str] | None = None) -> None:
        text = os.fspath(path)
        remote = bool(re.match(r"^[a-z][a-z0-9+.-]*://", text)) and not text.startswith("file:")
        self.local = None if remote else Path(text.removeprefix("file://")).expanduser()
        self.uri = text.rstrip("/") if remote else str(Path(text.removeprefix("file://"))
                                                        .expanduser().absolute())
        if storage_options is not None and not (isinstance(storage_options, Mapping) and all(
                isinstance(k, str) and isinstance(v, str) for k, v in storage_options.items())):
            raise ValidationError.for_argument(
                "storage_options", "must be a dict of option names to texts")
        self.options = dict(storage_options) if storage_options else None

    @property
    def path(self) -> Any:
        """The folder (a :class:`~pathlib.Path`) or the object-store URI."""
        return self.local if self.local is not None else self.uri

    def table_uri(self, name: str) -> str:
        return f"{self.uri}/{name}"

    def open(self, name: str, as_of: Any = None) -> DeltaTable | None:
        """Table ``name`` (None when there is none, or none yet at ``as_of``: a table
        version, or a UTC time whose last commit is read)."""
        from deltalake import DeltaTable
        from deltalake.exceptions import DeltaError, TableNotFoundError

        try:
            try:
                table = DeltaTable(self.table_uri(name), storage_options=self.options)
            except TableNotFoundError:
                return None
            if as_of is None:
                return table
            # Read at the latest version: deltalake numbers the commits of the history()
            # of a table loaded at an older one from that version down, not as they are.
            commits = table.history()
            if isinstance(as_of, dt.datetime):
                ms = as_of.timestamp() * 1000
                version = next((c["version"] for c in commits
                                if c.get("timestamp", 0) <= ms), None)
                if version is None:
                    return None
            else:
                if as_of > table.version():
                    raise ValidationError.for_argument(
                        "as_of", f"is version {as_of}, but the {name} table at {self.path} "
                                 f"is at version {table.version()}")
                version = as_of
            table.load_as_version(version)
            _travelled[id(table)] = _found_state(commits, version)
            weakref.finalize(table, _travelled.pop, id(table), None)
            return table
        except (DeltaError, OSError) as exc:
            raise self.unreadable(name, exc) from None

    def scan(self, name: str, table: DeltaTable, files: list[Any] | None = None,
             columns: list[str] | None = None, condition: Any = None) -> pa.Table:
        """The rows of ``table`` (named ``name``) meeting ``condition``, read from the
        files ``files`` selects by partition and statistics (each fragment keeps its
        statistics, so the filter skips files too)."""
        import pyarrow as pa
        from deltalake.exceptions import DeltaError

        try:
            return self.dataset(name, table, files).to_table(columns=columns, filter=condition)
        except (OSError, DeltaError, pa.ArrowException) as exc:
            raise self.unreadable(name, exc) from None

    def read(self, name: str, table: DeltaTable, files: list[Any] | None, columns: list[str]
             | None, condition: Any, *, what: str, advice: str) -> pa.Table:
        """The rows :meth:`scan` reads, read batch by batch and refused once they would
        not fit in memory (:func:`gathered`: ``what`` is read, ``advice`` what to do
        instead). Text comes as ``large_string``, the type of the frame's text columns:
        read so, a batch at a time, not cast as a whole table after (25 % of a month's
        read at 1M items, and a copy of every text column the less)."""
        import pyarrow as pa
        from deltalake.exceptions import DeltaError

        try:
            return gathered(self.dataset(name, table, files, large=True)
                            .scanner(columns=columns, filter=condition).to_reader(),
                            what, advice)
        except (OSError, DeltaError, pa.ArrowException) as exc:
            raise self.unreadable(name, exc) from None

    def dataset(self, name: str, table: DeltaTable, files: list[Any] | None = None, *,
                large: bool = False) -> ds.Dataset:
        """deltalake's Arrow dataset of ``table`` (named ``name``): the files ``files``
        selects by partition (all: None), text as ``large_string`` when ``large``. On this
        machine its files are read through Arrow's own file system (when their paths are
        their folders, :meth:`parquet_files`), not deltalake's default, a file system
        written in Python: Arrow's reading threads then call into Python, and a process
        that ends while one winds down aborts ("terminate called without an active
        exception", exit 134: apache/arrow#34314, delta-io/delta-rs#2184; every other
        process that had read the NOCs did)."""
        filesystem = None
        if self.parquet_files(name, table) is not None:
            import pyarrow.fs as pafs

            filesystem = pafs.SubTreeFileSystem(self.table_uri(name), pafs.LocalFileSystem())
        return table.to_pyarrow_dataset(file_pruning_predicate=files or None,
                                        filesystem=filesystem, as_large_types=large)

    def parquet_files(self, name: str, table: DeltaTable) -> list[str] | None:
        """The committed files of ``table`` (named ``name``) when DuckDB's own Parquet
        reader reads them as Delta does: a store on this machine, a table of reader
        version 1 (no deletion vectors, no column mapping), each file in the folder of its
        partition values (``company=DEMO1/month=2026-11/``). None otherwise (the Arrow
        dataset reads it then). DuckDB's reader skips what a query does not need inside
        a file too (the rows of a join it does not keep); an Arrow dataset cannot."""
        version = table.version()
        known = _files_of.get(id(table))
        if known is not None and known[0] == version:
            return None if known[1] is None else list(known[1])
        files = self._parquet_files(name, table)
        if known is None:
            weakref.finalize(table, _files_of.pop, id(table), None)
        _files_of[id(table)] = (version, files)
        return None if files is None else list(files)

    def _parquet_files(self, name: str, table: DeltaTable) -> list[str] | None:
        import pyarrow as pa

        if self.local is None or table.protocol().min_reader_version != 1:
            return None
        columns = EVENT_PARTITIONS if name == EVENTS else PARTITIONS
        actions = pa.table(table.get_add_actions(flatten=True))
        paths = actions.column("path").to_pylist()
        values = [actions.column(f"partition.{c}").to_pylist() for c in columns]
        for path, *partition in zip(paths, *values, strict=True):
            folder = "/".join(f"{c}={v}" for c, v in zip(columns, partition, strict=True))
            if not path.startswith(folder + "/") or "/" in path[len(folder) + 1:]:
                return None
        root = self.local / name
        return [str(root / path) for path in paths]

    def unreadable(self, name: str, exc: BaseException) -> HistoryCorruptError:
        return HistoryCorruptError(
            f"the {name} table at {self.path} cannot be read ({_first_line(exc)}); run "
            f"client.sync(rebuild=True) to build the history at {self.path} again")

    def tables(self) -> dict[str, DeltaTable]:
        """Every table the store holds, by name."""
        found = {name: self.open(name) for name in (*KINDS, EVENTS)}
        return {name: table for name, table in found.items() if table is not None}

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the store's lock, or raise :class:`HistoryLockedError` at once: an OS lock
        on ``.lock``, which the system drops when the process ends, however it ends (an
        object store has none: docs/history.md, "One writer at a time")."""
        if self.local is None:
            yield
            return
        with self.writing():
            self.local.mkdir(parents=True, exist_ok=True)
            handle = open(self.local / ".lock", "a+", encoding="utf-8")  # noqa: SIM115
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
                _lock(handle, held=False)
        finally:
            handle.close()

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        """Turn a refusal to write (no such folder, a file in the way, no permission, a
        full disk, an object store's error) into an error that names ``path``."""
        from deltalake.exceptions import CommitFailedError, DeltaError

        try:
            yield
        except CommitFailedError as exc:
            raise HistoryLockedError(
                f"another process wrote the history at {self.path} while this sync ran "
                f"({_first_line(exc)}); run one sync of a store at a time, then sync again"
            ) from None
        except (OSError, DeltaError) as exc:
            reason = getattr(exc, "strerror", None) or _first_line(exc)
            file = getattr(exc, "filename", None)
            where = f" ({file})" if file else ""
            raise HistoryError(
                f"path {str(self.path)!r} cannot be written as a history: {reason}{where}. "
                "Give client.sync(path=...) a folder you can write to (it and its parents "
                "are created), or leave path out for the default in your user data folder"
            ) from None


#: The share of the memory available that a read may fill with its Arrow table: the frame
#: made from it takes about as much again while it is built.
MEMORY_SHARE = 0.45


def available_memory() -> int | None:
    """Bytes of memory this machine has available now (Linux's ``MemAvailable``, else
    the free pages the C library counts); None where neither says."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, OSError, ValueError):
        return None


def gathered(reader: Any, what: str, advice: str) -> pa.Table:
    """The record batches of ``reader`` as one Arrow table, read one after another; once
    they reach :data:`MEMORY_SHARE` of the memory available (asked when the read begins),
    the read stops with a :class:`HistoryError` that says how big ``what`` was getting
    and gives ``advice``: before the frame it would make runs the machine out of
    memory, rather than being killed by the system."""
    import pyarrow as pa

    available = available_memory()
    budget = None if available is None else int(available * MEMORY_SHARE)
    batches, held = [], 0
    for batch in reader:
        batches.append(batch)
        held += batch.nbytes
        if available is not None and budget is not None and held > budget:
            rows = sum(b.num_rows for b in batches)
            del batches
            pa.default_memory_pool().release_unused()
            raise HistoryError(
                f"{what} does not fit in memory: {rows:,} rows read took {held / 2**30:.1f} "
                f"GiB before the read was stopped ({available / 2**30:.1f} GiB available, and "
                f"a frame takes about as much again); {advice}")
    return pa.Table.from_batches(batches, schema=reader.schema)


def instant(text: str) -> dt.datetime:
    """A time the state keeps (ISO text; zone-less: UTC)."""
    return utc_moment(text, "a time of the history's state")


def app_id(kind: str, company: str) -> str:
    """The application id of the events a sync commits for ``kind`` of ``company``."""
    return f"paynb {kind} {company}"


def _first_line(exc: BaseException) -> str:
    """An error's message without the trace some of deltalake's carry."""
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


#: paynb's state of each table :meth:`Store.open` loaded at an earlier version (what its
#: log said then, read before the table went back), by the table's id while it lives.
_travelled: dict[int, dict[str, Any] | None] = {}
#: :meth:`Store.parquet_files` of each table object (by ``id``, while it lives), at the
#: version it was found for (a version's files never change; the sync's index asks them
#: of one table 30 times a sync).
_files_of: dict[int, tuple[int, list[str] | None]] = {}


def _found_state(commits: list[dict[str, Any]], version: int) -> dict[str, Any] | None:
    """paynb's state in the last of ``commits`` (newest first) at or before ``version``
    that carries it; None when none of them does."""
    for commit in commits:
        if commit.get("version", 0) <= version and STATE_KEY in commit:
            found: dict[str, Any] = json.loads(commit[STATE_KEY])
            return found
    return None


def state(table: DeltaTable | None) -> dict[str, Any]:
    """paynb's state as the table's last paynb commit (at or before the version read)
    recorded it: ``{}`` for no table, or one no paynb sync wrote."""
    if table is None:
        return {}
    if id(table) in _travelled:
        return _travelled[id(table)] or {}
    version, limit = table.version(), 1  # paynb's commits all carry it: the last one
    while True:
        commits = table.history(limit)
        found = _found_state(commits, version)
        if found is not None:
            return found
        if len(commits) < limit:
            return {}
        limit *= 8


def commit_properties(kept: Mapping[str, Any], *apps: tuple[str, int]) -> Any:
    """A commit's properties carrying paynb's ``kept`` state (and application
    transactions ``apps``: id and version each)."""
    from deltalake import CommitProperties, Transaction

    return CommitProperties(
        custom_metadata={STATE_KEY: json.dumps(kept, sort_keys=True)},
        app_transactions=[Transaction(app_id=a, version=v) for a, v in apps] or None)


def created(kind: str) -> dict[str, Any]:
    """What a new table of ``kind`` is written with: its name, its description, the
    target size of its files and how often its log is checkpointed."""
    return {"name": f"paynb {kind}", "configuration": {
        "delta.targetFileSize": str(TARGET_FILE_BYTES),
        "delta.checkpointInterval": str(CHECKPOINT_COMMITS)}, "description": (
        "paynb's local history: one row per item, its latest version as the service "
        "listed it (docs/history.md)" if kind != EVENTS else
        "paynb's local history: each item's first sight in each status")}


def writer() -> Any:
    """How paynb writes Parquet files (every write and compaction of the store):
    snappy, as deltalake by default, with dictionaries of :data:`DICTIONARY_BYTES`."""
    from deltalake import WriterProperties

    return WriterProperties(compression="SNAPPY", dictionary_page_size_limit=DICTIONARY_BYTES)


def with_unit(table: pa.Table, kind: str) -> pa.Table:
    """``table`` whose instant or RTP ``amount`` says its unit in the column's comment."""
    if KIND_REGISTRY[FRAME_KINDS[kind]].amount != "wire_integer":
        return table
    at = table.schema.get_field_index("amount")
    return table.set_column(at, table.schema.field(at).with_metadata(
        {"comment": AMOUNT_UNIT_NOTE}), table.column(at))


def empty(name: str) -> pa.Table:
    """No rows of table ``name``: a kind's (the columns its frames have, then paynb's and
    the partitions) or the events'."""
    if name == EVENTS:
        return event_rows("", "", [], [], [])
    return item_rows(frames.as_stored(frames.empty_frame(FRAME_KINDS[name])), name, "", [],
                     [], [])


def event_rows(kind: str, company: str, ids: Any, statuses: Any, seen: Any) -> pa.Table:
    """Status changes of items of ``kind`` of ``company`` as the events table holds them:
    the items' ids (as text), the statuses and when each was first seen."""
    import pyarrow as pa

    return pa.table({"kind": pa.array([kind] * len(ids), pa.string()),
                     "itemId": pa.array(ids, pa.string()),
                     "itemStatus": pa.array(statuses, pa.string()),
                     "seenAt": pa.array(seen, pa.timestamp("us", "UTC")),
                     "company": pa.array([company] * len(ids), pa.string())})


def item_rows(table: pa.Table, kind: str, company: str, orders: Any, hashes: Any,
              seen: Any) -> pa.Table:
    """``table`` (items of ``kind`` as :func:`paynb.frames.as_stored` gives them) with
    paynb's columns (:data:`INTERNAL`: list places ``orders``, fingerprints ``hashes``,
    first sights ``seen``) and the partitions (``company``, and the month of each item)."""
    import pyarrow as pa

    for name, values in (("_order", pa.array(orders, pa.int64())),
                         ("_hash", pa.array(hashes, pa.int64())),
                         ("_seenAt", pa.array(seen, pa.timestamp("us", "UTC"))),
                         ("company", pa.array([company] * table.num_rows, pa.string())),
                         ("month", months(table.column(MONTH_FIELDS[kind])))):
        table = table.append_column(name, values)
    return table


def months(times: Any) -> pa.Array:
    """The month partition (``2026-11``, or ``none``) of each UTC time of ``times``."""
    import pyarrow.compute as pc

    return pc.fill_null(pc.strftime(times, format="%Y-%m"), NO_MONTH)


def file_sizes(table: DeltaTable) -> list[int]:
    """The bytes of each current file of ``table``."""
    import pyarrow as pa

    return pa.table(table.get_add_actions(flatten=True)).column("size_bytes").to_pylist()


def _lock(handle: Any, held: bool = True) -> None:
    """Take (``held``) or drop the OS lock on the open file ``handle``, not waiting."""
    try:
        import fcntl
    except ImportError:  # Windows
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK if held else msvcrt.LK_UNLCK, 1)
    else:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB if held else fcntl.LOCK_UN)


def kind_of(name: Any, argument: str = "kinds") -> str:
    """The table of ``ach``, ``rcc``, ``instant``, ``rtp`` or ``nocs`` (or ``noc``)."""
    text = str(name).strip().lower() if isinstance(name, str) else None
    text = next((k.table for k in KIND_REGISTRY.values() if k.name == text), text)
    if text not in KINDS:
        known = ", ".join(KINDS)
        raise ValidationError.for_argument(
            argument, f"{name!r} is not one of {known}" if argument == "kind"
            else f"holds {name!r}, not one of {known}")
    return text


def when(value: Any, argument: str, *, end: bool = False) -> pd.Timestamp | None:
    """A date or time argument as a UTC timestamp (paynb's one reading of moments); a
    date alone as its first (or, for ``end``, last) instant."""
    import pandas as pd

    if value is None:
        return None
    stamp = pd.Timestamp(utc_moment(value, argument))
    return stamp + pd.Timedelta(days=1) - pd.Timedelta(1, "us") \
        if end and is_date_only(value) else stamp
