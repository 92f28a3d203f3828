"""``client.sync()``: bring a history store up to date from the service.

The first sync of a kind lists every item (all pages, concurrently, with the
listing's progress bar) and writes them in batches. Later syncs fetch only what
can have changed:

1. **The tail of the list.** The service lists items oldest first (the sandbox
   does; the real service's documented examples agree), so new items are at the
   end. Pages are read from the last one backwards until a whole page is items
   the store already holds, starting with the page that is the last if nothing was
   added (its answer's total says whether it is).
2. **The returns poll.** Items that became B, I or R, by return date from the
   store's own watermark minus :data:`~paynb.resources._items.CHANGES_OVERLAP`
   (the poll :meth:`client.ach.changes() <paynb.resources._items.ItemResource.changes>`
   sends; the store keeps its own watermark, because the journal's moves on when
   the user polls, and the store must not skip what it has not stored). The
   overlap is counted rather than read again when the store knows the returns it
   holds there (``window`` in the metadata) and they fill a page: when the
   service counts as many returns (B, I and R together) in the overlap, the poll
   starts just after the watermark (:meth:`_KindSync._poll`, :meth:`_KindSync._overlap`;
   one count suffices because B and I are locked and R is final, so returns only ever
   come into the overlap). As many pages of the poll as the last one had are asked at
   once (returns come at a steady pace: one round of pages, not two).
3. **Quiet changes.** W -> S (an RCC item deposited) and W -> V (voided) set no
   return date, so no documented filter finds them by date. The service's count of
   W and of V items (a list of one record each gives its ``total``) is compared with
   the store's: fewer W means items left W quietly, more V says how many were voided,
   and the rest were sent. Only then is the S or V list read, from its end, until the
   items missing are found. (W, not S, is counted: W is the last days' items, S
   nearly every item ever, and a count costs the service what it matches.)

The poll is asked first, the list's end once the poll is in (its rows are framed
meanwhile), the counts once the poll's rows are framed, while the sync fingerprints
and writes what the poll brought (the service shares its time among the requests it answers, so a
request asked alongside another holds it back). So a sync with
nothing new costs about five requests (after a poll of several pages, as many pages
again), and one with changes adds the pages that hold
them. What was read is compared with the store by id in the items files' indexes
(:meth:`Store.read_index <paynb.history._store.Store.read_index>`), not by reading the
Parquet files. Rows
with a return date are also written to ``returns/`` by return month (see
:mod:`paynb.history._store`). ``sync(rebuild=True)`` reads everything again: it is the
remedy where these assumptions fail (a list out of creation order; a change to an
instant payment, an RTP payment or a NOC already stored, which the tail walk does
not look back for).

Everything a sync writes becomes visible in one commit (see
:mod:`paynb.history._store`); an interrupted sync leaves the store as the last
commit left it, and the next one fetches its changes again: every item is stored
exactly once, and every status change is recorded once.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import functools
import logging
import math
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from paynb._warn import user_stacklevel
from paynb.errors import PaynbWarning
from paynb.history._accounts import KEY_COLUMN, account_keys, new_key, secret_of
from paynb.history._store import (
    ID_FIELDS,
    INTERNAL,
    MAX_FILES,
    MONTH_FIELDS,
    NO_MONTH,
    RETURN_KINDS,
    STATUS_FIELDS,
    HistoryCorruptError,
    Store,
    default_path,
    event_table,
    latest,
    months_of,
    now_utc,
    table_of,
    with_internal,
)

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    from paynb.client import Client
    from paynb.paging import Page
    from paynb.resources._base import Resource

__all__ = ["KIND_NAMES", "check_service", "history_path", "kind_of", "open_history", "row_hash",
           "service_name", "service_of", "sync", "when"]

logger = logging.getLogger("paynb.history")

#: Statuses an item reaches with no return date, so that the returns poll misses them.
QUIET_STATUSES = ("S", "V")
#: The status those items leave, and the statuses whose counts show they did: W is the
#: newest items only, so counting it is cheap where counting every S item ever is not.
WAITING = "W"
COUNTED_STATUSES = (WAITING, "V")
#: The key of the count of the returns in the overlap window (see _KindSync._overlap).
WINDOW = "window"
#: Records per frame and per file while backfilling.
BATCH = 100_000
#: The names of the kinds as the client, the readers and the SQL views call them.
KIND_NAMES = {"ach": "ach", "rcc": "rcc", "instant": "instant", "rtp": "rtp", "nocs": "noc"}
#: The other way: what a message calls a kind.
SHOWN_KINDS = {kind: name for name, kind in KIND_NAMES.items()}
_PRIME = 0x100000001B3


def kind_of(name: Any, argument: str = "kinds") -> str:
    """The frames kind of ``ach``, ``rcc``, ``instant``, ``rtp`` or ``nocs`` (``noc``)."""
    from paynb.resources._base import invalid

    text = str(name).strip().lower() if isinstance(name, str) else None
    if text == "noc":
        text = "nocs"
    if text not in KIND_NAMES:
        known = ", ".join(KIND_NAMES)
        # One kind ("kind"), or each of several ("kinds"): say which of them is wrong.
        raise invalid(argument, f"{name!r} is not one of {known}" if argument == "kind"
                      else f"holds {name!r}, not one of {known}")
    return KIND_NAMES[text]


def when(value: Any, argument: str, *, end: bool = False) -> pd.Timestamp | None:
    """A date or time argument as a UTC timestamp; a date alone as its first (or, for
    ``end``, last) instant."""
    import pandas as pd

    from paynb.resources._base import invalid

    if value is None:
        return None
    whole_day = isinstance(value, dt.date) and not isinstance(value, dt.datetime) or (
        isinstance(value, str) and len(value.strip()) == 10)
    try:
        stamp = pd.Timestamp(value)
    except (TypeError, ValueError):
        raise invalid(argument, "must be a date or an ISO 8601 date-time") from None
    if stamp is pd.NaT:
        raise invalid(argument, "must be a date or an ISO 8601 date-time")
    stamp = stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")
    if whole_day and end:
        stamp = stamp + pd.Timedelta(days=1) - pd.Timedelta(1, "ns")
    return stamp


def service_of(client: Client) -> dict[str, Any]:
    """Which service ``client`` talks to, as the store's metadata records it, and the
    service's time now (``now``, UTC).

    The sandbox says who it is in ``GET /sandbox/info``: its database's id, which a
    file database (the demo sandbox of :func:`paynb.connect`) keeps across restarts and
    an in-memory one (``serve(port=0)``) has alone; and its clock, which
    ``simulate.advance_clock`` moves. A real service is its host (it publishes no clock:
    the local one).
    """
    where = client.environment
    if not where.is_sandbox:
        return {"service": where.host, "now": now_utc()}
    answer = client.context.transport.json("GET", "/sandbox/info")
    answer = answer if isinstance(answer, dict) else {}
    ident = answer.get("databaseId") or answer.get("instanceId")
    now = when(answer.get("now"), "the sandbox clock")
    return {"service": f"sandbox {ident}",
            "now": now_utc() if now is None else now.to_pydatetime()}


_SERVICES: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()


def service_name(client: Client) -> str:
    """:func:`service_of`'s ``service``, asked once per client."""
    name = _SERVICES.get(client)
    if name is None:
        name = _SERVICES[client] = service_of(client)["service"]
    return name


def history_path(client: Client) -> Any:
    """The store folder of ``client``: the one its last ``sync(path=...)`` named, else the
    default of its service: ``sandbox-<database id>`` for a sandbox, the profile's name
    and the host for a real service."""
    given = client.history_folder
    if given is not None:
        return given
    where = client.environment
    # One store per service: a sandbox's port changes from run to run and two sandboxes
    # hold different data, so its database's id names it; a real service's host does.
    name = service_name(client).replace(" ", "-") if where.is_sandbox \
        else f"{where.name}-{where.host}"
    return default_path(name)


def check_service(path: Any, meta: dict[str, Any], service: str) -> None:
    """Refuse a store synced from another service than ``service``: its items are not
    this service's (a guard would judge by them, a sync would mix them)."""
    recorded = meta.get("service")
    if recorded is not None and recorded != service:
        from paynb.history._store import HistoryError

        raise HistoryError(
            f"the history at {path} was synced from {recorded}, not from this "
            f"client's {service}: open it with paynb.History(path), or give this client "
            "a folder of its own (client.sync(path=...)), or rebuild it from this service "
            "(client.sync(rebuild=True))")


def open_history(client: Client) -> Any:
    """``client.history``: the client's store, read as the client shows items; a store of
    another service is an error."""
    from paynb.history._reader import History

    history = History(history_path(client), company=client.company_code, mask=client.mask)
    check_service(history.path, history.info(), service_name(client))
    return history


def row_hash(frame: pd.DataFrame, table: pa.Table | None = None) -> np.ndarray:
    """A 64-bit fingerprint of each row, the same whatever batch the row came in.

    Summed per column (so the column order does not count), and a column that is null
    in a row adds nothing (so a field that only some batches carry does not count
    where it is empty). A column's part is its values' ``hash_pandas_object``, mixed with
    the column's name.

    A value's hash does not depend on the values beside it, so the text columns (and the
    categories, whose values are text) are hashed together as one Arrow column, each
    distinct text once, and the whole-number, boolean and time columns as one array of
    their 64-bit values: three calls rather than one per column (about 50), which was
    most of the cost for the few thousand rows of a daily sync. The amounts join the text,
    since the text of a ``Decimal`` is what is hashed of it; other columns (objects) are
    hashed one by one. ``tests/history/test_fingerprints.py`` checks that the
    fingerprints are those of the column-by-column definition.

    ``table``: the frame as :func:`~paynb.history._store.table_of` gives it, when the
    caller has it: the text columns are taken from it rather than converted again.
    """
    import numpy as np
    import pandas as pd

    rows = len(frame)
    # A column taken from a frame deep-copies the frame's attrs (the list's totals).
    plain = frame.copy(deep=False)
    plain.attrs = {}
    converted = set(table.column_names) if table is not None else set()
    text: list[tuple[str, Any]] = []
    numbers: list[tuple[str, np.ndarray, np.ndarray]] = []
    total = np.zeros(rows, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for name, dtype in plain.dtypes.items():
            if name in INTERNAL or name == KEY_COLUMN:
                continue
            if table is not None and name in converted \
                    and isinstance(dtype, pd.StringDtype | pd.CategoricalDtype):
                arrow = _as_text(table.column(name))
                if arrow is not None:
                    text.append((name, arrow))
                    continue
            column = plain[name]
            arrow = _text_arrow(column)
            if arrow is None:
                arrow = _decimal_text(column, table.column(name)
                                      if table is not None and name in converted else None)
            if arrow is not None:
                text.append((name, arrow))
                continue
            values = _raw_u8(column)
            if values is not None:
                numbers.append((name, values, ~np.asarray(column.array.isna(), dtype=bool)))
                continue
            try:
                hashed = pd.util.hash_pandas_object(column, index=False).to_numpy(np.uint64)
            except TypeError:  # lists or objects: their text
                hashed = pd.util.hash_pandas_object(column.astype(str), index=False) \
                    .to_numpy(np.uint64)
            total += _mixed([name], hashed, column.notna().to_numpy())
        if text:
            import pyarrow as pa
            import pyarrow.compute as pc

            joined = pa.chunked_array([arrow for _, arrow in text]).combine_chunks()
            encoded = pc.dictionary_encode(joined)
            distinct = pd.util.hash_array(
                encoded.dictionary.to_numpy(zero_copy_only=False), categorize=False)
            codes = encoded.indices.fill_null(0).to_numpy()
            hashed = distinct[codes] if len(distinct) else np.zeros(len(codes), np.uint64)
            total += _mixed([name for name, _ in text], hashed,
                            joined.is_valid().to_numpy(zero_copy_only=False))
        if numbers:
            hashed = pd.util.hash_array(np.concatenate([v for _, v, _ in numbers]),
                                        categorize=False)
            total += _mixed([name for name, _, _ in numbers], hashed,
                            np.concatenate([present for _, _, present in numbers]))
    return total.view(np.int64)


def _mixed(names: list[str], hashed: np.ndarray, present: np.ndarray) -> np.ndarray:
    """The part of the columns ``names`` in each row's fingerprint: their values' hashes
    (the columns one after another), each mixed with its column's name, nulls left out,
    summed over the columns."""
    import numpy as np

    salts = np.array([int.from_bytes(name.encode("utf-8")[:8].ljust(8, b"\0"), "little") | 1
                      for name in names], dtype=np.uint64)
    shape = (len(names), len(hashed) // max(1, len(names)))
    mixed = (hashed.reshape(shape) ^ salts[:, None]) * np.uint64(_PRIME)
    parts: np.ndarray = np.where(present.reshape(shape), mixed, np.uint64(0)).sum(
        axis=0, dtype=np.uint64)
    return parts


def _text_arrow(column: pd.Series) -> Any:
    """A text or text-category column as an Arrow ``large_string`` array (hashed as
    ``hash_pandas_object`` hashes its values: each text by itself), else None."""
    import pandas as pd
    import pyarrow as pa

    dtype = column.dtype
    if not isinstance(dtype, pd.StringDtype | pd.CategoricalDtype):
        return None
    try:
        arrow = pa.array(column.array)
    except (pa.ArrowException, TypeError, ValueError):
        return None
    return _as_text(arrow)


def _as_text(arrow: Any) -> Any:
    """An Arrow text or text-dictionary array (or chunked array) as one ``large_string``
    array, else None (categories of numbers are hashed as numbers)."""
    import pyarrow as pa

    if isinstance(arrow, pa.ChunkedArray):
        arrow = arrow.combine_chunks()
    if pa.types.is_dictionary(arrow.type):
        if not (pa.types.is_string(arrow.type.value_type)
                or pa.types.is_large_string(arrow.type.value_type)):
            return None
    elif not (pa.types.is_string(arrow.type) or pa.types.is_large_string(arrow.type)):
        return None
    return arrow.cast(pa.large_string())


def _decimal_text(column: pd.Series, converted: Any = None) -> Any:
    """An Arrow decimal column (the amounts) as the text of each value, which is what
    ``hash_pandas_object`` hashes of a ``Decimal`` (its ``str``), as a ``large_string``
    array; else None. ``converted``: the column as Arrow, when the caller has it.

    Arrow writes a decimal as ``str`` writes it, exponents included (``0E-7``): the same
    rules (the General Decimal Arithmetic's to-scientific-string), which
    ``tests/history/test_fingerprints.py`` checks."""
    import pandas as pd
    import pyarrow as pa

    dtype = column.dtype
    if not (isinstance(dtype, pd.ArrowDtype) and pa.types.is_decimal(dtype.pyarrow_dtype)):
        return None
    arrow = pa.array(column.array) if converted is None else converted
    if isinstance(arrow, pa.ChunkedArray):
        arrow = arrow.combine_chunks()
    return arrow.cast(pa.large_string())


def _raw_u8(column: pd.Series) -> np.ndarray | None:
    """A column of 64-bit whole numbers, booleans or times as the unsigned 64-bit values
    ``hash_pandas_object`` hashes (nulls as 0: they are left out), else None."""
    import numpy as np
    import pandas as pd

    dtype = column.dtype
    if isinstance(dtype, pd.Int64Dtype | pd.UInt64Dtype) or dtype in (np.int64, np.uint64):
        return column.to_numpy(dtype=dtype.numpy_dtype if hasattr(dtype, "numpy_dtype")
                               else dtype, na_value=0).view(np.uint64)
    if isinstance(dtype, pd.BooleanDtype) or dtype == np.bool_:
        return column.to_numpy(dtype=bool, na_value=False).astype(np.uint64)
    if isinstance(dtype, pd.DatetimeTZDtype) or (isinstance(dtype, np.dtype)
                                                 and dtype.kind in "mM"):
        return np.asarray(column.array.view("i8")).view(np.uint64)
    return None


def _fetcher(resource: Resource, params: list[tuple[str, Any]], size: int) -> Any:
    """``fetch(n)`` -> :class:`~paynb.paging.Page` of the kind's list (as ``list`` pages)."""
    from paynb.resources._base import page_fetcher

    return page_fetcher(resource, params, size)


class _Index:
    """Stored status, fingerprint and list position of items, looked up by id and kept
    for the rest of the sync: an incremental sync over a million items searches the
    indexes of the files of the months its records fall in (see Store.read_index)."""

    def __init__(self, job: _KindSync) -> None:
        import pandas as pd

        self.job = job
        self.asked: set[Any] = set()
        #: The files' indexes read (see Store.read_index).
        self.cache: dict[Any, Any] = {}
        self.frame = pd.DataFrame({"_hash": [], "_order": [], "status": []})

    def open(self, until: Any) -> None:
        """Open the indexes of the files, the newest month's first, until the future
        ``until`` is done: the look-ups made while pages are being received (several
        threads wanting the interpreter) then make no system call, each of which could
        cost them a thread switch's wait."""
        # File by file: the frames of the answers wait for no more than one opening.
        for data in sorted(self.job.committed, key=lambda f: f.month, reverse=True):
            if until.done():
                break
            self.job.store.read_index([data], self.job.id_field, self.job.status_field, [],
                                      self.cache)

    def lookup(self, ids: Iterable[Any], months: Callable[[], set[str] | None]
               ) -> pd.DataFrame:
        """The stored rows of ``ids`` (indexed by id; an id the store does not hold has
        no row), looked for in the partitions ``months()`` names (None: all), asked only
        when some id was not looked up before."""
        import pandas as pd

        new = [i for i in dict.fromkeys(ids) if not pd.isna(i) and i not in self.asked]
        if new:
            named = months()
            files = [f for f in self.job.committed if named is None or f.month in named]
            part = self.job._read_index(files, new, self.cache)
            if len(part):
                self.frame = part if self.frame.empty else pd.concat([self.frame, part])
            self.asked.update(new)
        return self.frame

    def of_frame(self, frame: pd.DataFrame) -> pd.DataFrame:
        """:meth:`lookup` of the items of a frame."""
        return self.lookup(frame[self.job.id_field].tolist(), lambda: self.job._months(frame))

    def of_both(self, frame: pd.DataFrame, records: list[dict[str, Any]]) -> pd.DataFrame:
        """:meth:`lookup` of the items of a frame and of unframed records in one search
        (the frame's months are read from its typed times, not from the text)."""
        def months() -> set[str] | None:
            named = self.job._record_months(records)
            return None if named is None else named | self.job._months(frame)

        field = self.job.id_field
        return self.lookup([*frame[field].tolist(), *(r.get(field) for r in records)], months)

    def of_records(self, records: list[dict[str, Any]]) -> pd.DataFrame:
        """:meth:`lookup` of the items of a page as the service sent it (no framing)."""
        return self.lookup([r.get(self.job.id_field) for r in records],
                           lambda: self.job._record_months(records))

    def update(self, ids: np.ndarray, hashes: np.ndarray, orders: np.ndarray,
               status: np.ndarray | None) -> None:
        """Note rows this sync wrote: later look-ups of these ids compare with them."""
        import pandas as pd

        if not len(ids):
            return
        part = pd.DataFrame({"_hash": hashes, "_order": orders, "status": status},
                            index=pd.Index(ids))
        kept = self.frame[~self.frame.index.isin(part.index)]
        self.frame = part if kept.empty else pd.concat([kept, part])
        self.asked.update(ids.tolist())

    def everything(self) -> pd.DataFrame:
        """Every stored item's row (for a store written before the counts were kept)."""
        return self.job._read_index(self.job.committed, None)


class _KindSync:
    """One sync of one kind of one company into ``store``."""

    def __init__(self, client: Client, store: Store, meta: dict[str, Any], kind: str, *,
                 since: pd.Timestamp | None, masked: bool, version: int, now: dt.datetime,
                 progress: bool | None, secret: bytes | None = None) -> None:
        self.client, self.store, self.kind = client, store, kind
        self.company = client.company_code
        self.resource: Resource = {"ach": client.ach, "rcc": client.rcc,
                                   "instant": client.instant, "rtp": client.rtp,
                                   "noc": client.nocs}[kind]
        self.id_field = ID_FIELDS[kind]
        self.month_field = MONTH_FIELDS[kind]
        self.status_field = STATUS_FIELDS[kind]
        self.masked, self.version, self.now, self.progress = masked, version, now, progress
        #: The store's account-key secret (ACH only; see paynb.history._accounts).
        self.secret = secret if kind == "ach" else None
        self.meta = meta
        #: The kind's committed state (read only: the sync writes a new one).
        self.state: dict[str, Any] = meta.get("kinds", {}).get(kind, {}).get(self.company, {})
        self.since = since
        self.superseded: list[str] = []
        #: Files to write (table, folder, index; see _write).
        self.writes: list[tuple[Any, Any, Any]] = []
        #: The partitions (area, month) a write of this sync has compacted.
        self.compacted: set[tuple[str, str]] = set()
        self.requests = 0
        self._counting = threading.Lock()
        self.latest_return: dt.datetime | None = None
        #: Items per status (the quiet changes compare them with the service's) and the
        #: next list position, kept in the metadata so that a sync need not read them.
        self.counts: dict[str, int] = dict(self.state.get("counts") or {})
        self.next_order = int(self.state.get("nextOrder") or 0)
        #: Pages of the last returns poll (the next one asks as many at once).
        self.poll_pages = int(self.state.get("pollPages") or 1)
        self.written = 0
        self.events = 0
        #: The returns poll's records, and the stored window it counted instead of reading.
        self.kept: dict[str, Any] | None = None
        #: The returns (ids, statuses, return times) among the rows this sync read, for
        #: the window: see _note_returns (None: a kind with no returns poll).
        self.returns_seen: tuple[list[Any], list[Any], list[int]] | None = None

    # The store's files are listed when first needed: an incremental sync sends its first
    # requests before, so that the listing overlaps their waiting.

    @functools.cached_property
    def committed(self) -> list[Any]:
        """The items files as the last commit left them: what the sync looks items up in
        (:attr:`files` loses the ones a compaction merges; they stay until the commit)."""
        return self.store.files("items", kind=self.kind, company=self.company, meta=self.meta)

    @functools.cached_property
    def files(self) -> list[Any]:
        """The items files, as the sync's compactions leave them."""
        return list(self.committed)

    @functools.cached_property
    def return_files(self) -> list[Any]:
        return self.store.files("returns", kind=self.kind, company=self.company, meta=self.meta)

    @functools.cached_property
    def event_files(self) -> list[Any]:
        return self.store.files("events", kind=self.kind, company=self.company, meta=self.meta)

    def _list_files(self) -> None:
        """List the store's files of the kind now (each listing is kept)."""
        for area in ("files", "return_files", "event_files"):
            getattr(self, area)

    def holds_items(self) -> bool:
        """Whether the store holds items files of this kind and company (without listing
        them all: the sync's clean-up has removed any that are not committed)."""
        folder = self.store.items_folder(self.kind, self.company, NO_MONTH).parent
        return folder.is_dir() and next(folder.rglob("*.parquet"), None) is not None

    # ------------------------------------------------------------------ the index

    def _read_index(self, files: list[Any], ids: list[Any] | None,
                    cache: dict[Any, Any] | None = None) -> pd.DataFrame:
        """Status, fingerprint and list position by id of the items of ``files`` (only
        of ``ids`` unless None, from the files' indexes; ``cache`` as
        :meth:`Store.read_index` takes it)."""
        import pandas as pd

        columns = [self.id_field, "_hash", "_order"]
        if self.status_field:
            columns.append(self.status_field)
        table = self.store.read(files, columns) if ids is None else \
            self.store.read_index(files, self.id_field, self.status_field, ids, cache)
        frame = latest(table, self.id_field).to_pandas()
        if frame.empty:
            return pd.DataFrame({"_hash": [], "_order": [], "status": []})
        status = frame[self.status_field] if self.status_field else None
        return pd.DataFrame({"_hash": frame["_hash"].to_numpy(),
                             "_order": frame["_order"].to_numpy(),
                             "status": None if status is None
                             else status.astype(object).to_numpy()},
                            index=pd.Index(frame[self.id_field].to_numpy()))

    def _months(self, frame: pd.DataFrame) -> set[str]:
        """The partitions the items of ``frame`` live in."""
        return set(months_of(frame[self.month_field]).tolist()) if len(frame) else set()

    def _record_months(self, records: list[dict[str, Any]]) -> set[str] | None:
        """The partitions the items of unframed ``records`` may live in: the month their
        time's text names (UTC, or zone-less, which paynb reads as UTC), and with another
        offset the ones either side too (it may move the time across the turn of a
        month); None (all) when a time is not such text."""
        months = set()
        for record in records:
            text = record.get(self.month_field)
            if text is None:
                months.add(NO_MONTH)
                continue
            if not isinstance(text, str) or len(text) < 7 or text[4] != "-" \
                    or not (text[:4] + text[5:7]).isdigit():
                return None
            year, month = int(text[:4]), int(text[5:7])
            utc = text.endswith("Z") or not any(c in text[10:] for c in "+-")
            for step in (0,) if utc else (-1, 0, 1):
                y, m = divmod(year * 12 + month - 1 + step, 12)
                months.add(f"{y:04d}-{m + 1:02d}")
        return months

    # ------------------------------------------------------------------ fetching

    def _joined(self, parts: list[tuple[list[dict[str, Any]], pd.DataFrame]]) -> pd.DataFrame:
        """The frame of records framed in parts (``(records, their frame)`` each, in
        order), as :meth:`_frame` gives it for them all: the frames one after another, a
        later row of an item replacing an earlier one; framed again together should the
        parts differ in their columns or dtypes (a field the service did not document)."""
        import pandas as pd

        if len(parts) == 1:
            return parts[0][1]
        frames = [frame for _, frame in parts]
        columns = list(frames[0].columns)
        joined = pd.concat(frames, ignore_index=True) \
            if all(list(frame.columns) == columns for frame in frames) else None
        if joined is None or any((frame.dtypes != joined.dtypes).any() for frame in frames):
            return self._frame([record for records, _ in parts for record in records])
        return _last_at_first(joined, self.id_field)

    def _frame(self, records: Sequence[dict[str, Any]]) -> pd.DataFrame:
        from paynb import frames

        frame = frames.to_frame(records, self.kind, mask=self.masked)
        # Not stored; and a column taken from a frame deep-copies them.
        frame.attrs = {}
        if self.secret is not None and len(frame) == len(records):
            frame[KEY_COLUMN] = account_keys(records, self.secret)
        if self.id_field in frame.columns:
            return _last_at_first(frame, self.id_field)
        return frame.reset_index(drop=True)

    def _pages(self, params: list[tuple[str, Any]], desc: str, *,
               expect: int = 1) -> Iterable[list[dict[str, Any]]]:
        from paynb.paging import iter_pages

        size = self.client.page_size
        fetch = self._fetcher(params, size)
        return iter_pages(fetch, page_size=size, max_workers=self.client.max_workers,
                          progress=self.progress, desc=desc, expect=expect)

    def _fetcher(self, params: list[tuple[str, Any]], size: int) -> Any:
        fetch = _fetcher(self.resource, params, size)

        def counted(number: int) -> Page:
            with self._counting:  # pages are asked on several threads
                self.requests += 1
            return fetch(number)

        return counted

    def backfill(self) -> None:
        """Every item of the kind, written batch by batch as the pages come."""
        if self.kind in RETURN_KINDS:
            self.returns_seen = ([], [], [])
        batch: list[dict[str, Any]] = []
        seen: set[Any] = set()
        order = 0
        for records in self._pages([], f"history {self.kind} pages"):
            batch.extend(records)
            if len(batch) >= BATCH:
                order = self._write_new(batch, seen, order)
                batch = []
        self._write_new(batch, seen, order)

    def _write_new(self, records: list[dict[str, Any]], seen: set[Any], order: int) -> int:
        import numpy as np

        frame = self._frame(records)
        if self.id_field in frame.columns:
            fresh = ~frame[self.id_field].isin(seen)
            frame = frame[fresh.to_numpy()].reset_index(drop=True)
            seen.update(frame[self.id_field].dropna().tolist())
        frame = self._in_scope(frame)
        self._note_returns(frame)
        orders = np.arange(order, order + len(frame), dtype=np.int64)
        self._write(frame, orders, new=np.ones(len(frame), dtype=bool), previous=None)
        return order + len(frame)

    def _in_scope(self, frame: pd.DataFrame) -> pd.DataFrame:
        if self.since is None or frame.empty:
            return frame
        return frame[self._from_since(frame)].reset_index(drop=True)

    def _from_since(self, frame: pd.DataFrame) -> np.ndarray:
        """Whether each row's month field is at or after ``since`` (a missing one is not).
        A NOC's ``nocDate`` is a zone-less UTC date (see paynb.frames.DATE_FIELDS), the
        other kinds' ``receivedDateTime`` a UTC time: ``since`` (UTC) is compared as such."""
        import pandas as pd

        stamps = frame[self.month_field]
        since = self.since
        if since is not None and not isinstance(stamps.dtype, pd.DatetimeTZDtype):
            since = since.tz_convert("UTC").tz_localize(None)
        return (stamps >= since).fillna(False).to_numpy(dtype=bool)

    def incremental(self) -> None:
        """New and changed items since the last commit (see the module's description)."""
        from concurrent.futures import ThreadPoolExecutor

        import pandas as pd

        index = _Index(self)
        if "counts" not in self.state or "nextOrder" not in self.state:
            # A store written before these were kept: count once.
            every = index.everything()
            self.counts = {str(k): int(v) for k, v in every["status"].value_counts().items()}
            self.next_order = int(every["_order"].max()) + 1 if len(every) else 0
        returns = self.kind in RETURN_KINDS
        if returns:
            self.returns_seen = ([], [], [])
        # The last page if nothing was added (the items stored).
        guess = 0 if self.since is not None else \
            max(0, math.ceil(self.next_order / self.client.page_size) - 1)
        # The requests go one group after another: the returns poll (most changes are
        # there), then the list's end, then the counts once the poll's rows are framed.
        # The service shares its time among the requests it answers, so a request asked
        # alongside another holds it back; asked in turn, each answer comes while the
        # sync works on the one before (the poll's rows are framed while the list's end
        # is answered, fingerprinted and written while the service counts).
        pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="paynb-history")
        try:
            polled_all, framed_all = threading.Event(), threading.Event()
            polled = pool.submit(self._poll, polled_all) if returns else None
            first = pool.submit(_after, polled_all if returns else None,
                                self._fetcher([], self.client.page_size), guess)
            counts = self._counts(pool, framed_all) if returns else {}
            # While the first answers are awaited: the store's files (the writes need
            # them), and the indexes of the months, newest first (new items and recent
            # returns are there), as long as the wait lasts.
            self._list_files()
            index.open(polled if polled is not None else first)
            after = polled.result() if polled is not None else []
            framed = [(after, self._frame(after))] if after else []
            framed_all.set()
            if after:
                # The stored rows of the poll's items and of the list's end's in one
                # look-up (each costs a search of every file of the months named).
                index.of_both(framed[0][1], first.result().records)
            fetched = self._walk([], lambda page: self._known(page, index), guess=guess,
                                 first=first)
            fetched = self._unseen(fetched, index, after)
            # Written (on threads) while the counts are awaited; the poll's records last:
            # an item on both is as the poll saw it.
            parts = ([(fetched, self._frame(fetched))] if fetched else []) + framed
            applied = self._apply(self._joined(parts), index) if parts else set()
            later: list[dict[str, Any]] = []
            if returns:
                overlap = self._overlap(counts)
                # The poll's records after the watermark came later than the overlap's.
                later = [r for r in overlap if r.get(self.id_field) not in applied]
                seen = self._frame(later) if later else pd.DataFrame(
                    {self.id_field: [], self.status_field: []})
                later += self._quiet_changes(index, seen, counts)
        finally:
            framed_all.set()  # also when it failed: the counts wait for it
            # Every answer used has been awaited: the threads are not joined (each would
            # wait for the interpreter, which the writing threads hold, to end).
            pool.shutdown(wait=False, cancel_futures=True)
        if later:
            self._apply(self._frame(later), index)

    def _apply(self, frame: pd.DataFrame, index: _Index) -> set[Any]:
        """Write the rows of ``frame`` that are new or differ from the stored ones (their
        events too), and note them in ``index`` as now stored; the ids of ``frame``."""
        import numpy as np
        import pandas as pd

        if frame.empty:
            return set()
        self._note_returns(frame)
        stored_index = index.of_frame(frame)
        ids = frame[self.id_field]
        stored = stored_index.reindex(ids)
        table = self._table(frame)
        hashes = row_hash(frame, table)
        changed = stored["_hash"].isna().to_numpy() | (stored["_hash"].to_numpy() != hashes)
        known = ids.isin(stored_index.index).to_numpy()
        if self.since is not None:
            changed &= known | self._from_since(frame)
        new_orders = self.next_order + np.cumsum(~known) - 1
        orders = np.where(known, stored["_order"].fillna(0).to_numpy(np.int64), new_orders)
        keep = np.flatnonzero(changed)
        previous = pd.Series(stored["status"].to_numpy()[keep])
        # Every row, as a daily sync's changes mostly are: no take of every column.
        written = frame if len(keep) == len(frame) else frame.iloc[keep].reset_index(drop=True)
        index.update(written[self.id_field].to_numpy(), hashes[keep], orders[keep],
                     written[self.status_field].astype(object).to_numpy()
                     if self.status_field else None)
        applied = set(ids.tolist())
        self._write(written, orders[keep], new=~known[keep], previous=previous,
                    hashes=hashes[keep],
                    table=table if len(keep) == len(frame) else table.take(keep))
        return applied

    def _unseen(self, records: list[dict[str, Any]], index: _Index,
                polled: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The records of the list's end that can hold something to write: for ACH and
        RCC not those of stored items in their stored status (their changes are the
        poll's and the counts' to find, as on every other page), nor those of stored
        items the returns poll ``polled`` holds too (the poll's record is the one
        written, and a stored item keeps its list position: framing and joining the
        list's copy cost a daily sync more than framing the poll). A new item's record
        is kept: its place in the list gives it its position."""
        if self.kind not in RETURN_KINDS or not records or not self.status_field:
            return records
        field, id_field = self.status_field, self.id_field
        stored = index.of_records(records)["status"]
        statuses = stored.reindex([r.get(id_field) for r in records]).to_numpy()
        in_poll = {r.get(id_field) for r in polled}
        return [r for r, status in zip(records, statuses, strict=True)
                if status is None or status != status
                or (r.get(field) != status and r.get(id_field) not in in_poll)]

    def _walk(self, params: list[tuple[str, Any]], done: Any, *,
              guess: int | None = None, first: Any = None) -> list[dict[str, Any]]:
        """Pages of a list from its last one backwards, until ``done(records of the page)``;
        their records in list order. Page ``guess``, the likely last one, is asked first
        (or was: ``first`` is the future of its answer): its answer's total says which
        page is the last, so that the list's first page is not asked for its total (where
        nothing was added, ``guess`` is the last page)."""
        size = self.client.page_size
        fetch = self._fetcher(params, size)
        number = guess if guess else 0
        page = first.result() if first is not None else fetch(number)
        if page.total is None:
            logger.warning("history %s: the list gives no total, so its last pages cannot be "
                           "found; reading every page", self.kind)
            return [r for records in self._pages(params, f"history {self.kind} pages")
                    for r in records]
        asked = {number: page.records}
        gathered: list[list[dict[str, Any]]] = []
        number = max(0, math.ceil(page.total / size) - 1)
        while number >= 0:
            records = asked[number] if number in asked else fetch(number).records
            gathered.insert(0, records)
            if records and done(records):
                break
            number -= 1
        return [record for records in gathered for record in records]

    def _known(self, records: list[dict[str, Any]], index: _Index) -> bool:
        """Whether the store holds every item of a page (or leaves it out, before
        ``since``): the pages before it hold no new item. Changes of known items are
        the poll's and the counts' to find."""
        if self.since is not None:
            # Only then the times count: framed, so that they are read as the store does.
            frame = self._frame(records)
            known = frame[self.id_field].isin(index.of_frame(frame).index).to_numpy()
            return bool((known | ~self._from_since(frame)).all())
        stored = index.of_records(records).index
        return all(r.get(self.id_field) in stored for r in records)

    def _window(self) -> dict[str, Any] | None:
        """The stored returns of the overlap before the watermark, when they fill a page
        (so that counting them costs less than reading them again), else None."""
        window = self.state.get("window")
        mark = self.state.get("watermark")
        if not isinstance(window, dict) or mark is None or window.get("mark") != mark:
            return None
        if len(window.get("ids", ())) < self.client.page_size:
            return None
        return window

    def _counts(self, pool: Any, after: threading.Event) -> dict[Any, Any]:
        """The service's totals the sync compares with the store, asked on ``pool`` once
        ``after`` is set: of W and of V (see :meth:`_quiet_changes`), and of the returns
        (B, I and R together) within the overlap window (see :meth:`_overlap`)."""
        asked: dict[Any, list[tuple[str, Any]]] = {}
        if self.since is None:
            asked.update({code: [("itemStatus", code)] for code in COUNTED_STATUSES})
        window = self._window()
        if window is not None:
            asked[WINDOW] = _window_list(window["mark"])
        # One thread asks the window's count, another the W and V counts one after the
        # other: a thread and a connection per count cost the client more than the
        # waiting they save.
        groups = [[key for key in asked if key == WINDOW],
                  [key for key in asked if key != WINDOW]]
        counts: dict[Any, Any] = {}
        for group in groups:
            if group:
                task = pool.submit(lambda keys: after.wait() and {
                    key: self._fetcher(asked[key], 1)(0).total for key in keys}, group)
                counts.update({key: _Count(task, key) for key in group})
        return counts

    def _poll(self, done: threading.Event) -> list[dict[str, Any]]:
        """Items that became B, I or R since the watermark (see :meth:`_overlap` for the
        day before it).

        When the store knows the returns of that day (``window`` in the metadata), the
        poll starts just after the watermark, and the day is counted instead (the count
        is asked meanwhile, see :meth:`_counts`); else it starts a day before the
        watermark, as ``changes()`` polls (no watermark: every return).
        """
        from paynb.resources._base import wire_time
        from paynb.resources._items import CHANGE_STATUSES, CHANGES_OVERLAP

        params: list[tuple[str, Any]] = [("itemStatus", code) for code in CHANGE_STATUSES]
        mark = self.state.get("watermark")
        try:
            if mark is None:
                return self._records(params)
            if self._window() is not None:
                # The filter is inclusive, to the millisecond.
                start = dt.datetime.fromisoformat(mark) + dt.timedelta(milliseconds=1)
            else:
                start = dt.datetime.fromisoformat(mark) - CHANGES_OVERLAP
            # As many pages as the last poll had are asked at once: returns come at a
            # steady pace, and a daily sync then waits for one round of pages, not two.
            records = self._records([*params, ("returnDateStart",
                                               wire_time(start, "watermark"))],
                                    expect=self.poll_pages)
            self.poll_pages = max(1, math.ceil(len(records) / self.client.page_size))
            return records
        finally:
            done.set()  # also when it failed: the counts wait for it

    def _overlap(self, counts: dict[Any, Any]) -> list[dict[str, Any]]:
        """The returns of the day before the watermark, read again only when they may hold
        something new: when the service counts another number of them than the store
        holds (``window`` in the metadata). Then the records are, with :meth:`_poll`'s,
        those of one poll from the overlap's start.

        One count of B, I and R together suffices: an item in B or I is locked and R is
        the end of an item's life (the service's documentation), so returns only ever
        come into that day; the same number is the same returns.
        """
        window = self._window()
        self.kept = None
        if window is None or WINDOW not in counts:
            return []
        if counts[WINDOW].result() == len(window["ids"]):
            self.kept = window  # nothing came into the window since the last sync
            return []
        return self._records(_window_list(window["mark"]))

    def _records(self, params: list[tuple[str, Any]], *,
                 expect: int = 1) -> list[dict[str, Any]]:
        """Every record of the list of ``params`` (the returns poll's; ``expect`` pages
        are asked at once, see :func:`paynb.paging.iter_pages`)."""
        return [record for records in self._pages(params, f"history {self.kind} returns",
                                                  expect=expect)
                for record in records]

    def window(self) -> dict[str, Any] | None:
        """The returns in the overlap before the new watermark, as the service holds
        them now (what the last poll read, and what it skipped because it was counted
        unchanged): the next sync counts them instead of reading them again."""
        import pandas as pd

        from paynb.resources._items import CHANGES_OVERLAP

        mark = self.watermark()
        if mark is None or self.returns_seen is None:
            return None
        ids, status, ms = (list(part) for part in self.returns_seen)
        if self.kept is not None:
            again = set(ids)
            for i, item in enumerate(self.kept["ids"]):
                if item not in again:
                    ids.append(item)
                    status.append(self.kept["status"][i])
                    ms.append(self.kept["ms"][i])
        top = pd.Timestamp(dt.datetime.fromisoformat(mark))
        # A watermark from a day field (zone-less UTC, see paynb.frames.DAY_FIELDS) is UTC.
        top = top.tz_localize("UTC") if top.tzinfo is None else top.tz_convert("UTC")
        low = int((top - CHANGES_OVERLAP).value // 1_000_000)
        high = int(top.value // 1_000_000)
        keep = [i for i, m in enumerate(ms) if m is not None and low <= m <= high]
        return {"mark": mark, "ids": [ids[i] for i in keep],
                "status": [status[i] for i in keep], "ms": [ms[i] for i in keep]}

    def _note_returns(self, frame: pd.DataFrame) -> None:
        """Keep the ids, statuses and return times of the returns (B, I, R) among rows
        the sync read (all of a backfill's; the poll's and the list end's of a later
        sync), for :meth:`window`: the next sync counts the day before the watermark
        instead of reading it again."""
        import numpy as np
        import pandas as pd

        from paynb.resources._items import CHANGE_STATUSES

        if self.returns_seen is None or not self.status_field or "returnDate" not in frame:
            return
        status = frame[self.status_field].astype(object)
        stamps = frame["returnDate"]
        chosen = (status.isin(CHANGE_STATUSES) & stamps.notna()).to_numpy()
        if not chosen.any():
            return
        if isinstance(stamps.dtype, pd.DatetimeTZDtype):
            stamps = stamps.dt.tz_convert("UTC").dt.tz_localize(None)
        ms = stamps[chosen].astype("datetime64[ms]").to_numpy().astype(np.int64).tolist()
        ids, codes, times = self.returns_seen
        ids += frame[self.id_field][chosen].tolist()
        codes += status[chosen].tolist()
        times += ms

    def _quiet_changes(self, index: _Index, seen: pd.DataFrame, counts: dict[Any, Any],
                       ) -> list[dict[str, Any]]:
        """Items that went W -> S or W -> V: no filter of the service shows them by date.

        The service's counts of W and of V items (one request of one record each) are
        compared with the store's, as the pages and the poll above leave them: the W
        items the service counts fewer than the store left W quietly, the V items it
        counts more of were voided, and the rest were sent (S). Only for a status with
        items missing is its list read, from its end (the items that changed last are
        the newest ones), until they are found. Counting W rather than S keeps the
        common case cheap: W is the last few days' items, S nearly every item ever.
        """
        import pandas as pd

        if self.since is not None:
            # Items before ``since`` are not stored, so the service's counts cannot be met.
            return []
        ids = seen[self.id_field].to_numpy()
        fresh = pd.Series(seen[self.status_field].astype(object).to_numpy(), index=ids)
        replaced = index.of_frame(seen)["status"].reindex(ids)

        def have(code: str) -> int:
            return self.counts.get(code, 0) - int((replaced == code).sum()) \
                + int((fresh == code).sum())

        def status_of(page: list[dict[str, Any]]) -> Any:
            page_ids = [r.get(self.id_field) for r in page]
            stored = index.of_records(page)["status"].reindex(page_ids)
            now = fresh.reindex(page_ids)
            return now.where(now.notna(), stored).to_numpy()

        waiting, voided = counts[WAITING].result(), counts["V"].result()
        if waiting is None or voided is None:
            return []
        left = have(WAITING) - waiting
        missing = {"V": voided - have("V")}
        missing["S"] = left - max(0, missing["V"])
        found: list[dict[str, Any]] = []
        if max(missing.values()) <= 0:
            return found
        floor = self._oldest_waiting()
        for code in QUIET_STATUSES:
            if missing[code] <= 0:
                continue
            todo = [missing[code]]

            def done(page: list[dict[str, Any]], code: str = code, todo: list[int] = todo,
                     ) -> bool:
                todo[0] -= int((status_of(page) != code).sum())
                # A page older than every item the store holds as waiting holds none that
                # left W; nor does any page before it.
                orders = index.of_records(page)["_order"].reindex(
                    [r.get(self.id_field) for r in page]).dropna()
                return todo[0] <= 0 or (len(orders) > 0 and orders.max() < floor)

            found += self._walk([("itemStatus", code)], done)
            if todo[0] > 0:
                # Something the model of the list misses: say so rather than pass for done.
                logger.warning(
                    "history %s: %d item(s) the store holds as waiting are %s on the "
                    "service, yet not on its list of %s items as far back as the oldest "
                    "waiting one, nor in the returns poll (a return dated before the "
                    "store's watermark?); sync(rebuild=True) reads them", self.kind,
                    todo[0], "voided" if code == "V" else "no longer waiting", code)
        return found

    def _oldest_waiting(self) -> int:
        """The smallest list position of an item the store holds as waiting (W), or of one
        it held so (an older version's row counts too: it only lowers the bound)."""
        if not self.status_field:
            return 0
        table = self.store.read(self.committed, ["_order"],
                                where=[(self.status_field, "isin", [WAITING])])
        if table.num_rows == 0:
            return self.next_order
        return int(table.column("_order").to_numpy().min())

    # ------------------------------------------------------------------ writing

    def _table(self, frame: pd.DataFrame) -> pa.Table:
        """``frame`` as Arrow, as it is stored (its internal columns still to add)."""
        return table_of(frame, {"kind": self.kind, "company": self.company,
                                "masked": self.masked})

    def _write(self, frame: pd.DataFrame, orders: np.ndarray, *, new: np.ndarray,
               previous: pd.Series | None, hashes: np.ndarray | None = None,
               table: pa.Table | None = None) -> None:
        """Append the rows of ``frame`` to their month partitions, and their status changes
        (and first sights) to the events. ``new`` marks the rows never stored before;
        ``previous`` holds the stored status of the others; ``hashes`` and ``table``
        are the rows' fingerprints and Arrow table, when the caller has them."""
        import numpy as np
        import pandas as pd
        import pyarrow as pa

        if frame.empty:
            return
        # One conversion to Arrow (which the fingerprints use too), then a slice per
        # partition (converting each slice from pandas cost most of a small sync).
        if table is None:
            table = self._table(frame)
        if hashes is None:
            hashes = row_hash(frame, table)
        orders = np.asarray(orders, dtype=np.int64)
        table = with_internal(table, self.version, orders, hashes,
                              pd.Timestamp(self.now).tz_convert("UTC").as_unit("ns"))
        months = months_of(frame[self.month_field])
        for month in sorted(set(months)):
            self._append(str(month), table.filter(pa.array(months == month)))
        if self.kind in RETURN_KINDS and "returnDate" in frame:
            # The returned rows again, by return month (the returns of a month are then
            # one small partition's read).
            returned = months_of(frame["returnDate"])
            for month in sorted(set(returned) - {NO_MONTH}):
                self._append(str(month), table.filter(pa.array(returned == month)),
                             area="returns")
        self.written += len(frame)
        if "returnDate" in frame:
            latest = frame["returnDate"].max()
            if latest is not pd.NaT and latest == latest and (
                    self.latest_return is None or latest > self.latest_return):
                self.latest_return = latest.to_pydatetime()
        self.next_order = max(self.next_order, int(orders.max()) + 1)
        status = None
        moved = np.asarray(new, dtype=bool).copy()
        if self.status_field:
            status = frame[self.status_field].astype(object)
            status = status.where(status.notna(), None)
            before = [] if previous is None else \
                previous.to_numpy(dtype=object)[~np.asarray(new, dtype=bool)]
            for sign, codes in ((-1, pd.Series(before, dtype=object)), (1, status)):
                for code, n in codes.dropna().value_counts().items():
                    self.counts[str(code)] = self.counts.get(str(code), 0) + sign * int(n)
            if previous is not None:
                moved |= previous.to_numpy(dtype=object) != status.to_numpy()
        self._log_events(frame[self.id_field][moved],
                         None if status is None else status[moved])
        # The files are handed to the writing threads once this work is done: Python
        # code of theirs (Arrow's writer's) running meanwhile held it up for the
        # interpreter's switch interval at a time.
        for table, folder, index in self.writes:
            self.store.write_table(table, folder, self.version, index=index)
        self.writes.clear()

    def _append(self, month: str, table: pa.Table, area: str = "items") -> None:
        """Write ``table`` into its partition of ``area`` (``items`` or ``returns``),
        merged with the partition's newest small files when they are many (see
        :func:`_to_merge`; the files merged are superseded by the commit)."""
        import pandas as pd
        import pyarrow as pa

        if area == "returns":
            folder = self.store.returns_folder(self.kind, self.company, month)
            files = self.return_files
        else:
            folder = self.store.items_folder(self.kind, self.company, month)
            files = self.files
        existing = [f for f in files if f.month == month]
        # The items files' indexes serve the sync's look-ups (see Store.read_index).
        index = (self.id_field, self.status_field) if area == "items" else None
        # Once per sync: a second write of the sync (see incremental) merging the files
        # in place would leave out the first one's, still in .tmp, and outrank it.
        merge = [] if (area, month) in self.compacted else _to_merge(existing)
        if merge:
            self.compacted.add((area, month))
            old = self.store.read(merge)
            merged = pa.concat_tables([old, table], promote_options="permissive")
            ids = pd.Series(merged.column(self.id_field).to_pandas())
            keep = ~ids.duplicated(keep="last").to_numpy()
            merged = merged.filter(pa.array(keep)).replace_schema_metadata(
                table.schema.metadata)
            merged = _with_info(merged, self.store.info(merge))
            self.writes.append((merged, folder, index))
            self.superseded += [f.path.relative_to(self.store.path).as_posix()
                                for f in merge]
            files[:] = [f for f in files if f not in merge]
        else:
            self.writes.append((table, folder, index))

    def _log_events(self, ids: pd.Series, status: pd.Series | None) -> None:
        import pandas as pd

        if ids.empty:
            return
        table = event_table(self.kind, self.company, ids.astype(str).tolist(),
                            None if status is None else status.tolist(),
                            pd.Timestamp(self.now).tz_convert("UTC").as_unit("ns"))
        folder = self.store.events_folder(self.kind, self.company)
        self.events += table.num_rows
        merge = [] if ("events", "") in self.compacted else _to_merge(self.event_files)
        if not merge:
            # Every sync adds an events file; its newest small ones are merged as an items
            # partition's are, and the big ones (a backfill's) are never rewritten.
            self.writes.append((table, folder, None))
            return
        self.compacted.add(("events", ""))
        import pyarrow as pa

        old = self.store.read(merge, list(table.column_names))
        # Every row kept, in the order the files hold them (the readers sort by seenAt
        # stably): the events files' schema never changes, so the new table's is theirs.
        merged = pa.concat_tables([old.cast(table.schema), table])
        self.writes.append((merged, folder, None))
        self.superseded += [f.path.relative_to(self.store.path).as_posix() for f in merge]
        self.event_files[:] = [f for f in self.event_files if f not in merge]

    def watermark(self) -> str | None:
        """The latest return date the store holds (where the next returns poll starts):
        the previous one, or a later one among the rows this sync wrote."""
        previous = self.state.get("watermark")
        if self.latest_return is None:
            return previous
        latest = self.latest_return.isoformat()
        if previous is None or self.latest_return > dt.datetime.fromisoformat(previous):
            return latest
        return previous


class _Count:
    """One total of a group of counts asked together: ``result()`` as a future's."""

    def __init__(self, task: Any, key: Any) -> None:
        self.task, self.key = task, key

    def result(self) -> int | None:
        total: int | None = self.task.result()[self.key]
        return total


def _last_at_first(frame: pd.DataFrame, id_field: str) -> pd.DataFrame:
    """The last row of each id of ``frame`` at the place of the id's first row (as
    :func:`~paynb.history._store.latest` keeps stored rows): an item both new on the
    list's end and returned in the poll is as the poll saw it, in its list place, which
    its list position (``_order``) follows. Rows with no id are all kept."""
    import numpy as np

    ids = frame[id_field]
    later = (ids.duplicated(keep="last") & ids.notna()).to_numpy()
    if not later.any():
        return frame.reset_index(drop=True)
    place = np.arange(len(frame))
    known = ids.notna().to_numpy()
    firsts = known & ~ids.duplicated(keep="first").to_numpy()
    first_place = dict(zip(ids[firsts].tolist(), place[firsts].tolist(), strict=True))
    place[known] = [first_place[item] for item in ids[known].tolist()]
    kept = np.flatnonzero(~later)
    return frame.iloc[kept[np.argsort(place[kept], kind="stable")]].reset_index(drop=True)


def _after(event: threading.Event | None, fetch: Any, number: int) -> Any:
    """``fetch(number)`` once ``event`` is set (at once with None)."""
    if event is not None:
        event.wait()
    return fetch(number)


def _window_list(mark: str) -> list[tuple[str, Any]]:
    """The query of the returns (B, I, R) in the day before the watermark ``mark``."""
    from paynb.resources._base import wire_time
    from paynb.resources._items import CHANGE_STATUSES, CHANGES_OVERLAP

    end = dt.datetime.fromisoformat(mark)
    return [*[("itemStatus", code) for code in CHANGE_STATUSES],
            ("returnDateStart", wire_time(end - CHANGES_OVERLAP, "watermark")),
            ("returnDateEnd", wire_time(end, "watermark"))]


def _to_merge(files: list[Any]) -> list[Any]:
    """The files of a partition (oldest version first) that the new file written into it
    is merged with: the newest files while they are small (fewer than
    :data:`~paynb.history._store.SMALL_FILE_ROWS` rows), once they are :data:`MAX_FILES`
    - 1 (with the new one, ``MAX_FILES``); else none.

    So a partition holds its big files and fewer than :data:`MAX_FILES` small ones, and
    a sync of a few thousand rows merges only every ``MAX_FILES - 1``-th time, the rows
    of the syncs since (a merge at every sync once a partition is full rewrote a file
    that grew to a row group, sync after sync). Big files (a backfill's, a merge's that
    reached the threshold) are never rewritten: with a threshold of a row group, the
    weekly merge also rewrote the 30,000 rows of a backfill's last batch in the newest
    month, and of its last events file. Only a run of the newest files may be
    merged: the merged file takes the sync's version, above every file left, as the rows
    it holds are the latest of theirs.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    from paynb.history import _store

    wanted = MAX_FILES - 1
    if len(files) < wanted:
        return []
    small: list[Any] = []
    for data in reversed(files[-wanted:]):
        try:
            rows = pq.read_metadata(data.path).num_rows
        except (OSError, pa.ArrowException):
            rows = 0  # read by the merge, which names the file
        if rows >= _store.SMALL_FILE_ROWS:
            return []
        small.insert(0, data)
    return small


def _with_info(table: Any, older: dict[str, Any]) -> Any:
    """``table`` whose ``paynb`` metadata also keeps the dtypes and JSON columns of the
    ``older`` files it was compacted with."""
    import json

    info = json.loads((table.schema.metadata or {}).get(b"paynb", b"{}"))
    info["dtypes"] = {**older.get("dtypes", {}), **info.get("dtypes", {})}
    info["json"] = sorted({*older.get("json", []), *info.get("json", [])})
    return table.replace_schema_metadata({**(table.schema.metadata or {}),
                                          b"paynb": json.dumps(info).encode("utf-8")})


def sync(client: Client, *, kinds: Any = None, since: Any = None, rebuild: bool = False,
         progress: bool | None = None, path: Any = None, mask: bool | None = None,
         ) -> pd.DataFrame:
    """Bring the history store up to date; see :meth:`paynb.Client.sync`."""
    import pandas as pd

    from paynb.resources._base import invalid

    if kinds is None:
        chosen = list(KIND_NAMES.values())
    else:
        given = [kinds] if isinstance(kinds, str) else list(kinds)
        if not given:
            raise invalid("kinds", "must name at least one kind")
        chosen = list(dict.fromkeys(kind_of(k) for k in given))
    start = when(since, "since")
    if not isinstance(rebuild, bool):
        raise invalid("rebuild", "must be True or False")
    if progress is not None and not isinstance(progress, bool):
        raise invalid("progress", "must be True, False or None")
    if mask is not None and not isinstance(mask, bool):
        raise invalid("mask", "must be True, False or None")
    service = service_of(client)
    _SERVICES[client] = service["service"]
    if start is not None and start > service["now"]:
        # Nothing received yet could be kept: an empty history, sync after sync.
        raise invalid("since", f"({start:%Y-%m-%d %H:%M} UTC) is after the service's time "
                      f"now ({service['now']:%Y-%m-%d %H:%M} UTC): no item would be kept; "
                      "give a date in the past")
    store = Store(history_path(client) if path is None else path)
    rows = []
    with store.locked(), contextlib.closing(store):
        if path is not None:
            # Only a folder that could be written becomes the client's history.
            client.history_folder = path
        if rebuild:
            try:
                last = int(store.meta().get("version", 0))
            except HistoryCorruptError:
                last = 0
            store.remove_all_data()
            store.meta_path.unlink(missing_ok=True)
            meta = store.meta()
            meta["version"] = last
        else:
            meta = store.meta()
            check_service(store.path, meta, service["service"])
            store.remove_uncommitted(meta)
        masked = meta.get("masked")
        wanted = client.mask if mask is None else mask
        if masked is None:
            masked = wanted
        elif mask is not None and mask != masked:
            raise invalid("mask", f"is {mask}, but the history at {store.path} keeps account "
                          f"numbers {'masked' if masked else 'unmasked'}; use "
                          "sync(rebuild=True, mask=...) to build it again the other way")
        version = int(meta["version"]) + 1
        # The service's time: a sandbox's clock may have been moved, and the guards'
        # "items received ... to <syncedAt>" must be in the service's time.
        now = service["now"]
        # Copied as deep as the sync writes (a kind's state is replaced whole); a deep
        # copy of the returns window's lists cost more than the rest of a quiet sync.
        new_meta = {**meta, "kinds": {kind: dict(companies)
                                      for kind, companies in meta.get("kinds", {}).items()}}
        if "ach" in chosen and not meta.get("accountKey") and not meta.get("kinds", {}).get("ach"):
            # Keys from the first ACH row on: a store either has them on every row or not.
            new_meta["accountKey"] = new_key()
        secret = secret_of(new_meta)
        if "ach" in chosen and new_meta.get("accountKey") and secret is None:
            logger.warning("history: the secret of the account keys of %s is not on this "
                           "machine: new ACH rows get no key (the guards cannot match "
                           "accounts in them); sync(rebuild=True) makes a new one", store.path)
        new_meta["superseded"] = []
        ignored: list[str] = []
        for kind in chosen:
            began = time.perf_counter()
            state = meta.get("kinds", {}).get(kind, {}).get(client.company_code)
            kind_since = start
            if state is not None:
                stored = when(state.get("since"), "since")
                if start is not None and stored is not None and start < stored:
                    raise invalid("since", f"is before {stored:%Y-%m-%d}, where the history of "
                                  f"{kind} starts; use sync(rebuild=True, since=...) to fetch "
                                  "the earlier items")
                if start is not None and start != stored:
                    # A later start than the store's drops nothing already kept: said
                    # (once, below) rather than let the frames pass for "from since on".
                    ignored.append(f"{SHOWN_KINDS.get(kind, kind)} keeps " + (
                        "every item" if stored is None
                        else f"the items from {stored:%Y-%m-%d %H:%M} UTC on"))
                kind_since = stored
            job = _KindSync(client, store, meta, kind, since=kind_since, masked=masked,
                            version=version, now=now, progress=progress, secret=secret)
            if state is None or not job.holds_items():
                job.backfill()
                # Every returned row went to ``returns`` too: readers may rely on it.
                copied = kind in RETURN_KINDS
            else:
                job.incremental()
                copied = bool(state.get("returns"))
            new_meta["superseded"] += job.superseded
            new_meta.setdefault("kinds", {}).setdefault(kind, {})[client.company_code] = {
                "since": None if kind_since is None else kind_since.isoformat(),
                "watermark": job.watermark(),
                "window": job.window(),
                "returns": copied,
                "syncedAt": now.isoformat(),
                "counts": job.counts,
                "nextOrder": job.next_order,
                "pollPages": job.poll_pages,
            }
            rows.append({"kind": kind, "requests": job.requests, "written": job.written,
                         "events": job.events, "seconds": time.perf_counter() - began})
        if ignored:
            warnings.warn(f"since={start:%Y-%m-%d %H:%M} UTC is ignored: the history at "
                          f"{store.path} already starts elsewhere ({'; '.join(ignored)}); "
                          "sync(rebuild=True, since=...) starts it again there",
                          PaynbWarning, stacklevel=user_stacklevel())
        new_meta.update(version=version, masked=masked, syncedAt=now.isoformat(),
                        service=service["service"])
        from paynb._version import __version__

        new_meta["paynb"] = __version__
        store.commit(new_meta)
        store.remove_superseded(new_meta["superseded"])
        store.finish()
    logger.info("history: synced %s into %s (version %d)", ", ".join(chosen), store.path,
                version)
    return pd.DataFrame(rows, columns=["kind", "requests", "written", "events", "seconds"])
