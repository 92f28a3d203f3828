"""``client.sync()``: bring a history up to date from the service.

The first sync of a kind lists every item and writes them in one transaction. Later
syncs read the list's end, the returns poll from the store's watermark and the W and V
counts (docs/history.md, "What an incremental sync reads"), and write what is new or
changed by fingerprint (docs/history.md, "Commits and interruptions"). Each kind's sync
is a loop over the change feed (:class:`paynb.resources.ChangeFeed`), the index of what
is stored (:mod:`._index`) and the Delta writer (:mod:`._writer`).
"""

from __future__ import annotations

import datetime as dt
import itertools
import logging
import math
import shutil
import threading
import time
import warnings
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from paynb._version import __version__
from paynb._warn import user_stacklevel
from paynb.errors import HistoryCorruptError, HistoryError, HistoryWarning, ValidationError
from paynb.history import _store as st
from paynb.history._accounts import account_keys, new_key, number_keys, secret_of
from paynb.history._convert import convert_if_old
from paynb.history._index import StoredIndex, fingerprints
from paynb.history._reader import History
from paynb.history._store import kind_of, when
from paynb.history._writer import DeltaWriter
from paynb.paging import iter_pages
from paynb.resources import ChangeFeed, Resource, ResourceContext

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    from deltalake import DeltaTable

    from paynb.paging import Page

__all__ = ["HistoryPlace", "check_service", "sync"]

logger = logging.getLogger("paynb.history")

#: Statuses reached with no return date (the returns poll misses them); the status they
#: leave (W: the newest items, cheap to count) and the statuses counted.
QUIET_STATUSES = ("S", "V")
WAITING = "W"
COUNTED = (WAITING, "V")
#: Records framed at a time while backfilling.
BATCH = 100_000


class HistoryPlace:
    """Where a client's local history lives, and how the client opens it: the folder (and
    object-store options) its last ``sync(path=...)`` named, else its service's default
    folder (``sandbox-<database id>``, or the profile and the host). The client hands it
    to :func:`sync` and to its guards (:meth:`synced`); it holds no client."""

    def __init__(self, context: ResourceContext) -> None:
        self.context = context
        #: The folder (or object-store URI) the last ``sync(path=...)`` named; ``None``:
        #: the default of the service.
        self.folder: Any = None
        #: The object store's options that went with it (``storage_options=...``).
        self.options: dict[str, str] | None = None
        self._service: str | None = None

    def __repr__(self) -> str:
        return f"<HistoryPlace {self.folder or 'default'} of company {self.context.company_code}>"

    def service(self) -> str:
        """Which service the client talks to, as the store records it (asked once): a
        sandbox says it in ``GET /sandbox/info`` (its database's id); a real service is
        its host."""
        if self._service is None:
            where = self.context.environment
            # By the settings, not the answers: the store's place must not depend on
            # whether the service has answered yet.
            if not where.declared_sandbox:
                self._service = where.host
            else:
                answer = self.context.transport.json("GET", "/sandbox/info")
                answer = answer if isinstance(answer, dict) else {}
                self._service = f"sandbox {answer.get('databaseId') or answer.get('instanceId')}"
        return self._service

    def path(self) -> Any:
        """The store's folder: the one the last ``sync(path=...)`` named, else the default
        of the service."""
        if self.folder is not None:
            return self.folder
        where = self.context.environment
        return st.default_path(self.service().replace(" ", "-") if where.declared_sandbox
                               else f"{where.name}-{where.host}")

    def open(self) -> History:
        """``client.history``: the store, read as the client shows items (its company,
        its masking); one synced from another service is refused."""
        return self._open()[0]

    def synced(self) -> History | None:
        """The store as :meth:`open` gives it, once a sync has written it (what the
        guards read: None says quietly that there is no history yet)."""
        history, synced = self._open()
        return history if synced else None

    def _open(self) -> tuple[History, bool]:
        history = History(self.path(), company=self.context.company_code,
                          mask=self.context.mask, storage_options=self.options)
        tables = history.tables()  # (the History keeps them for its reads)
        for table in tables.values():
            check_service(history.path, st.state(table).get("service"), self.service())
        return history, bool(tables)


def check_service(path: Any, recorded: str | None, service: str) -> None:
    """Refuse a store synced from another service than ``service``: its items are not
    this service's (a guard would judge by them, a sync would mix them)."""
    if recorded is not None and recorded != service:
        raise HistoryError(
            f"the history at {path} was synced from {recorded}, not from this "
            f"client's {service}: open it with paynb.History(path), or give this client "
            "a folder of its own (client.sync(path=...)), or, in a folder, rebuild it from "
            f"this service (client.sync(rebuild=True)), which deletes its history of {recorded}")


class _KindSync:
    """One sync of one kind of one company: what it reads (the module's description) is
    compared with the index, and what is new or changed staged with the writer."""

    def __init__(self, context: ResourceContext, resource: Resource, store: st.Store,
                 kind: str, table: DeltaTable | None,
                 kept: dict[str, Any], *, since: pd.Timestamp | None, masked: bool,
                 now: dt.datetime, progress: bool | None, secret: bytes | None,
                 journal: DeltaTable | None = None) -> None:
        self.context, self.resource, self.kind = context, resource, kind
        self.id_field, self.month_field = st.ID_FIELDS[kind], st.MONTH_FIELDS[kind]
        self.status_field = st.STATUS_FIELDS[kind]
        self.masked, self.progress, self.since = masked, progress, since
        self.secret = secret if kind in ("ach", "nocs") else None
        self.index = StoredIndex(store, kind, context.company_code, table)
        self.writer = DeltaWriter(store, kind, context.company_code, table, journal, kept, now)
        #: The poll reads from the watermark the store had; the writer's moves on.
        self.feed = ChangeFeed(self.writer.feed.mark)
        self.poll_pages = int(self.writer.state.get("pollPages") or 1)
        self.requests = 0
        self._counting = threading.Lock()

    def _frame(self, records: Sequence[dict[str, Any]]) -> pd.DataFrame:
        frame = st.frames.to_frame(records, st.FRAME_KINDS[self.kind], mask=self.masked)
        frame.attrs = {}  # not stored; and a column taken from a frame deep-copies them
        if self.secret is not None and len(frame) == len(records):
            if self.kind == "ach":
                frame[st.KEY_COLUMN] = account_keys(records, self.secret)
            frame[st.NUMBER_COLUMN] = number_keys(records, self.secret, self.kind)
        return _last_at_first(frame, self.id_field)

    def _fetcher(self, params: list[tuple[str, Any]], size: int) -> Any:
        fetch = self.resource.listing.pages(params, size)

        def counted(number: int) -> Page:
            with self._counting:  # pages are asked on several threads
                self.requests += 1
            return fetch(number)

        return counted

    def _records(self, params: list[tuple[str, Any]], expect: int = 1) -> Any:
        """Every page of the list of ``params`` (concurrently; ``expect`` pages asked at
        once), record lists in order."""
        size = self.context.page_size
        return iter_pages(self._fetcher(params, size), page_size=size,
                          max_workers=self.context.max_workers, progress=self.progress,
                          desc=f"history {self.kind} pages", expect=expect)

    def backfill(self) -> None:
        """Every item of the kind (from ``since``), framed batch by batch."""
        import numpy as np

        self.writer.restart()
        self.poll_pages = 1
        batch: list[dict[str, Any]] = []
        seen: set[Any] = set()
        for records in itertools.chain(self._records([]), [None]):
            if records is not None:
                batch.extend(records)
                if len(batch) < BATCH:
                    continue
            frame = self._frame(batch)
            frame = frame[~frame[self.id_field].isin(seen).to_numpy()].reset_index(drop=True)
            seen.update(frame[self.id_field].dropna().tolist())
            if self.since is not None and len(frame):
                frame = frame[self._from_since(frame)].reset_index(drop=True)
            table = st.frames.as_stored(frame, self.writer.json)
            start = self.writer.next_order
            self.writer.stage(frame, table, np.arange(start, start + len(frame)),
                              fingerprints(table), new=np.ones(len(frame), dtype=bool),
                              previous=None)
            batch = []

    def _from_since(self, frame: pd.DataFrame) -> np.ndarray:
        """Whether each row's month field is at or after ``since`` (a missing one is not)."""
        return (frame[self.month_field] >= self.since).fillna(False).to_numpy(dtype=bool)

    def incremental(self) -> None:
        """New and changed items since the last commit (see the module's description)."""
        returns = self.kind in st.RETURN_KINDS
        size = self.context.page_size
        # The page that is the list's last if nothing was added: its total says.
        guess = 0 if self.since is not None else \
            max(0, math.ceil(self.writer.next_order / size) - 1)
        # The returns the store holds in the day before the watermark, when they fill a
        # page: counting them then costs less than reading them again.
        held = self.index.held_in_overlap(self.feed) if returns and self.feed.mark else 0
        window = held if held >= size else None
        with ThreadPoolExecutor(max_workers=3, thread_name_prefix="paynb-history") as pool:
            # The poll first; the list's end and the counts (W, V; the returns of the day
            # before the watermark) once it is in: the service shares its time among the
            # requests it answers, so the poll's answer is not held back.
            after = pool.submit(self._poll, window is not None).result() if returns else []
            first = pool.submit(self._fetcher([], size), guess)
            asked = {code: [("itemStatus", code)] for code in COUNTED} \
                if returns and self.since is None else {}
            if window is not None:
                asked["window"] = self.feed.overlap_query()
            counts = {key: pool.submit(lambda q: self._fetcher(q, 1)(0).total, query)
                      for key, query in asked.items()}
            # The stored rows of the poll's items and the list's end's, in one look-up.
            self.index.lookup([r.get(self.id_field) for r in (*after, *first.result().records)])
            fetched = self._walk([], self._known, guess=guess, first=first)
            applied = self._apply(self._frame([*fetched, *after]))
            later: list[dict[str, Any]] = []
            if returns:
                if window is not None and counts["window"].result() != window:
                    # A late return dated back into the day: read it again.
                    later = [r for page in self._records(self.feed.overlap_query())
                             for r in page if r.get(self.id_field) not in applied]
                later += self._quiet_changes(self._frame(later), counts)
        if later:
            self._apply(self._frame(later))

    def _poll(self, counted: bool) -> list[dict[str, Any]]:
        """Items that became B, I or R since the watermark, as ``changes()`` polls: from
        just after it when the day before it is counted instead (``counted``)."""
        # As many pages as the last poll had, asked at once: returns come at a steady pace.
        records = [r for page in self._records(self.feed.query(counted=counted),
                                               self.poll_pages) for r in page]
        self.poll_pages = max(1, math.ceil(len(records) / self.context.page_size))
        return records

    def _apply(self, frame: pd.DataFrame) -> set[Any]:
        """Stage the rows of ``frame`` that are new or differ from the stored ones (and
        their status changes); the ids of ``frame``."""
        import numpy as np
        import pandas as pd

        if frame.empty:
            return set()
        ids = frame[self.id_field]
        known = self.index.lookup(ids.tolist())
        stored = known.reindex(ids)
        table = st.frames.as_stored(frame, self.writer.json)
        hashes = fingerprints(table)
        changed = stored["_hash"].isna().to_numpy() | (stored["_hash"].to_numpy() != hashes)
        held = ids.isin(known.index).to_numpy()
        if self.since is not None:
            changed &= held | self._from_since(frame)
        orders = np.where(held, stored["_order"].fillna(0).to_numpy(np.int64),
                          self.writer.next_order + np.cumsum(~held) - 1)
        keep = np.flatnonzero(changed)
        written = frame.iloc[keep].reset_index(drop=True)
        self.index.note(written[self.id_field].to_numpy(), hashes[keep], orders[keep],
                        written[self.status_field].astype(object).to_numpy()
                        if self.status_field else None)
        self.writer.stage(written, table.take(keep), orders[keep], hashes[keep],
                          new=~held[keep], previous=pd.Series(stored["status"].to_numpy()[keep]))
        return set(ids.tolist())

    def _walk(self, params: list[tuple[str, Any]], done: Any, *, guess: int = 0,
              first: Any = None, wanted: int = 0) -> list[dict[str, Any]]:
        """Pages of a list from its last one backwards, until ``done(records)``; their
        records in list order. Page ``guess``, the likely last one, is asked first (or
        was: ``first`` is its answer's future), so that its total says which is last;
        then the pages that can hold the list's last ``wanted`` records at a time, at once
        (the last page holds what the total leaves over: twelve records may span four
        pages of five), their items looked up in the store together."""
        size = self.context.page_size
        fetch = self._fetcher(params, size)
        page = first.result() if first is not None else fetch(guess)
        if page.total is None:
            logger.warning("history %s: the list gives no total, so its last pages cannot be "
                           "found; reading every page", self.kind)
            return [r for records in self._records(params) for r in records]
        asked = {guess: page.records}
        gathered: list[list[dict[str, Any]]] = []
        last = max(0, math.ceil(page.total / size) - 1)
        ahead = 1 + math.ceil(max(0, wanted - (page.total - last * size)) / size)
        workers = max(1, min(ahead, self.context.max_workers))
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="paynb-history") as pool:
            for number in range(last, -1, -1):
                if number not in asked:
                    batch = [n for n in range(number, max(-1, number - ahead), -1)
                             if n not in asked]
                    for n, answer in zip(batch, pool.map(fetch, batch), strict=True):
                        asked[n] = answer.records
                    self.index.lookup([r.get(self.id_field) for n in batch for r in asked[n]])
                gathered.insert(0, asked[number])
                if asked[number] and done(asked[number]):
                    break
        return [record for records in gathered for record in records]

    def _known(self, records: list[dict[str, Any]]) -> bool:
        """Whether the store holds every item of a page (or leaves it out, before
        ``since``): the pages before it hold no new item."""
        if self.since is not None:
            frame = self._frame(records)  # the times read as the store reads them
            held = frame[self.id_field].isin(self.index.lookup(frame[self.id_field].tolist()).index)
            return bool((held.to_numpy() | ~self._from_since(frame)).all())
        stored = self.index.lookup([r.get(self.id_field) for r in records]).index
        return all(r.get(self.id_field) in stored for r in records)

    def _quiet_changes(self, seen: pd.DataFrame, counts: dict[str, Any],
                       ) -> list[dict[str, Any]]:
        """Items that went W -> S or W -> V, which no filter of the service shows by date.
        The service's counts of W and of V are compared with the store's (as this sync
        leaves it): W items it counts fewer of left W quietly, V items it counts more of
        were voided, the rest were sent. Only for a status with items missing is its list
        read, from its end, until they are found, and no further back than the oldest item
        the store holds as waiting."""
        import pandas as pd

        if self.since is not None:
            return []  # items before ``since`` are not stored: the counts cannot be met
        ids = seen[self.id_field].to_numpy()
        fresh = pd.Series(seen[self.status_field].astype(object).to_numpy(), index=ids)
        replaced = self.index.lookup(ids.tolist())["status"].reindex(ids)

        def have(code: str) -> int:
            return self.writer.counts.get(code, 0) - int((replaced == code).sum()) \
                + int((fresh == code).sum())

        waiting, voided = counts[WAITING].result(), counts["V"].result()
        if waiting is None or voided is None:
            return []
        missing = {"V": voided - have("V")}
        missing["S"] = have(WAITING) - waiting - max(0, missing["V"])
        if max(missing.values()) <= 0:
            return []
        # No item older than the oldest the store holds as waiting can have left W.
        floor = self.index.oldest(WAITING)
        floor = self.writer.next_order if floor is None else floor
        found: list[dict[str, Any]] = []
        for code in (c for c in QUIET_STATUSES if missing[c] > 0):
            todo = [missing[code]]

            def done(page: list[dict[str, Any]], code: str = code, todo: list[int] = todo,
                     ) -> bool:
                page_ids = [r.get(self.id_field) for r in page]
                stored = self.index.lookup(page_ids).reindex(page_ids)
                now = fresh.reindex(page_ids)
                todo[0] -= int((now.where(now.notna(), stored["status"]) != code).sum())
                orders = stored["_order"].dropna()
                return todo[0] <= 0 or (len(orders) > 0 and orders.max() < floor)

            found += self._walk([("itemStatus", code)], done, wanted=missing[code])
            if todo[0] > 0:
                logger.warning(
                    "history %s: %d item(s) the store holds as waiting are %s on the "
                    "service, yet not on its list of %s items as far back as the oldest "
                    "waiting one, nor in the returns poll (a return dated before the "
                    "store's watermark?); sync(rebuild=True) reads them", self.kind,
                    todo[0], "voided" if code == "V" else "no longer waiting", code)
        return found


def _last_at_first(frame: pd.DataFrame, id_field: str) -> pd.DataFrame:
    """The last row of each id of ``frame`` at the place of the id's first row: an item
    both new on the list's end and returned in the poll is as the poll saw it, in its
    list place. Rows with no id are all kept."""
    import numpy as np
    import pandas as pd

    ids = frame[id_field]
    later = (ids.duplicated(keep="last") & ids.notna()).to_numpy()
    if not later.any():
        return frame.reset_index(drop=True)
    # Each id's code (in the order ids first come; -1: none) and its first row.
    codes, _ = pd.factorize(ids)
    firsts = np.flatnonzero(~ids.duplicated().to_numpy() & (codes >= 0))
    place = np.where(codes >= 0, firsts[codes], np.arange(len(frame)))
    kept = np.flatnonzero(~later)
    return frame.iloc[kept[np.argsort(place[kept], kind="stable")]].reset_index(drop=True)


def sync(place: HistoryPlace, resources: Mapping[str, Resource], *, kinds: Any = None,
         since: Any = None, rebuild: bool = False, progress: bool | None = None,
         path: Any = None, mask: bool | None = None,
         storage_options: Any = None) -> pd.DataFrame:
    """Bring the history store at ``place`` up to date, from the namespaces ``resources``
    (by kind: ``ach``, ``rcc``, ``instant``, ``rtp``, ``nocs``); see
    :meth:`paynb.Client.sync`."""
    import pandas as pd

    chosen, start = _arguments(kinds, since, rebuild=rebuild, progress=progress, mask=mask)
    st.need_extra()
    if path is None and storage_options is None:  # the store the client remembers
        storage_options = place.options
    store = st.Store(place.path() if path is None else path, storage_options)
    context, service = place.context, place.service()
    now = context.clock.now()
    if start is not None and start > now:
        raise ValidationError.for_argument(
            "since", f"({start:%Y-%m-%d %H:%M} UTC) is after the service's time "
                     f"now ({now:%Y-%m-%d %H:%M} UTC): no item would be kept; "
                     "give a date in the past")
    rows: list[tuple[Any, ...]] = []
    ignored: list[str] = []
    with store.locked():
        if path is not None:  # only a store that could be written becomes the client's
            place.folder, place.options = path, storage_options
        convert_if_old(store, rebuild=rebuild)
        # The kinds synced and the events say what the store is (its service, masking,
        # last sync); a change of masking is judged against every kind it holds.
        tables = _tables(store, list(st.KINDS) if rebuild or mask is not None else chosen,
                         chosen if rebuild else [])
        states = {name: st.state(table) for name, table in tables.items()}
        try:
            for kept in states.values():
                check_service(store.path, kept.get("service"), service)
        except HistoryError:
            if not rebuild or store.local is None:
                raise
            # A folder synced from another service, built again from this one (the way out
            # the error names): none of its tables is this service's to keep.
            for name in tables:
                shutil.rmtree(store.local / name)
            tables, states = {}, {}
        masked = _masking(store, states, chosen, context, mask, rebuild)
        number = 1 + max((int(kept.get("sync") or 0) for kept in states.values()), default=0)
        key, secret = _account_key(store, states, chosen, context.company_code, rebuild)
        common = {"format": st.FORMAT, "service": service, "masked": masked,
                  "paynb": __version__}
        for kind in chosen:
            began = time.perf_counter()
            kept = states.get(kind, {})
            held = None if rebuild else kept.get("companies", {}).get(context.company_code)
            job = _KindSync(context, resources[kind], store, kind, tables.get(kind), kept,
                            since=start if held is None else _kept_since(kind, held, start,
                                                                         ignored),
                            masked=masked, now=now, progress=progress, secret=secret,
                            journal=tables.get(st.EVENTS))
            job.backfill() if held is None else job.incremental()
            # What the sync keeps of the company besides the writer's: where its items
            # start, and how many pages its poll had.
            written, events = job.writer.commit(number, {**common, **(
                {"accountKey": key} if kind == "ach" and key else {})}, {
                "since": None if job.since is None else job.since.isoformat(),
                "pollPages": job.poll_pages})
            rows.append((kind, job.requests, written, events, time.perf_counter() - began))
        if rebuild and masked and any(k.get("masked") is False for k in states.values()):
            # No earlier version may keep the whole numbers: their files go now.
            for table in store.tables().values():
                table.vacuum(retention_hours=0, enforce_retention_duration=False,
                             dry_run=False, commit_properties=st.commit_properties(
                                 st.state(table)))
    if ignored:
        warnings.warn(f"since={start:%Y-%m-%d %H:%M} UTC is ignored: the history at "
                      f"{store.path} already starts elsewhere ({'; '.join(ignored)}); "
                      "sync(rebuild=True, since=...) starts it again there",
                      HistoryWarning, stacklevel=user_stacklevel())
    logger.info("history: synced %s into %s (sync %d)", ", ".join(chosen), store.path, number)
    return pd.DataFrame(rows, columns=["kind", "requests", "written", "events", "seconds"])


def _arguments(kinds: Any, since: Any, **flags: Any) -> tuple[list[str], pd.Timestamp | None]:
    """The tables of ``kinds`` and the moment ``since`` of a sync, its ``flags`` checked."""
    given = [kinds] if isinstance(kinds, str) else list(st.KINDS if kinds is None else kinds)
    if not given:
        raise ValidationError.for_argument("kinds", "must name at least one kind")
    for name, value in flags.items():
        if not isinstance(value, bool) and (value is not None or name == "rebuild"):
            raise ValidationError.for_argument(
                name, "must be True or False" + ("" if name == "rebuild" else " or None"))
    return list(dict.fromkeys(kind_of(k) for k in given)), when(since, "since")


def _kept_since(kind: str, held: dict[str, Any], start: pd.Timestamp | None,
                ignored: list[str]) -> pd.Timestamp | None:
    """Where the items of ``kind`` the store ``held`` start: an earlier ``start`` is
    refused, another is noted in ``ignored``."""
    stored = when(held.get("since"), "since")
    if start is not None and stored is not None and start < stored:
        raise ValidationError.for_argument(
            "since", f"is before {stored:%Y-%m-%d}, where the history of {kind} starts; "
                     "use sync(rebuild=True, since=...) to fetch the earlier items")
    if start is not None and start != stored:
        ignored.append(f"{kind} keeps " + ("every item" if stored is None else
                                           f"the items from {stored:%Y-%m-%d %H:%M} UTC on"))
    return stored


def _account_key(store: st.Store, states: dict[str, dict[str, Any]], chosen: list[str],
                 company: str, rebuild: bool) -> tuple[str | None, bytes | None]:
    """The key of the store's account keys and its secret: the ACH table's (a sync of
    the NOCs alone keys their corrected numbers with it), a new one for the first ACH
    rows (every row has one, or none) or a rebuild of the only company."""
    try:
        ach = states["ach"] if "ach" in states else st.state(store.open("ach"))
    except HistoryCorruptError:
        ach = {}
    key = ach.get("accountKey")
    if "ach" in chosen and (key is None or rebuild and not ach.get("companies", {}).keys()
                            - {company}):
        key = new_key()
    secret = secret_of({"accountKey": key})
    if "ach" in chosen and key and secret is None:
        logger.warning("history: the secret of the account keys of %s is not on this "
                       "machine: new ACH rows get no key (the guards cannot match "
                       "accounts in them); sync(rebuild=True) makes a new one", store.path)
    return key, secret


def _tables(store: st.Store, names: list[str], rebuilt: list[str]) -> dict[str, DeltaTable]:
    """The store's tables ``names`` (and the events); one of the kinds ``rebuilt`` (or the
    events, in a rebuild) that cannot be read is removed, to be written anew (a folder's
    only)."""
    tables = {}
    for name in (*names, st.EVENTS):
        try:
            if (table := store.open(name)) is not None:
                tables[name] = table
        except HistoryCorruptError:
            if store.local is None or not (name in rebuilt or rebuilt and name == st.EVENTS):
                raise
            shutil.rmtree(store.local / name)
    return tables


def _masking(store: st.Store, states: dict[str, dict[str, Any]], chosen: list[str],
             context: ResourceContext, mask: bool | None, rebuild: bool) -> bool:
    """Whether this sync writes account numbers masked: as the store keeps them (a
    change needs a rebuild of all it holds), else as asked, else as the client shows."""
    masked = next((kept["masked"] for kept in states.values() if "masked" in kept), None)
    if masked is None:
        return context.mask if mask is None else mask
    held = {(kind, company) for kind in st.KINDS
            for company in states.get(kind, {}).get("companies", {})}
    if mask is None or mask == masked:
        return bool(masked)
    if rebuild and held <= {(kind, context.company_code) for kind in chosen}:
        return mask
    raise ValidationError.for_argument(
        "mask", f"is {mask}, but the history at {store.path} keeps account numbers "
                f"{'masked' if masked else 'unmasked'}; use sync(rebuild=True, mask=...) "
                "of every kind it holds to build it again the other way")
