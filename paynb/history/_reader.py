"""``paynb.History``: read a history store back as the frames the client lists, or in SQL."""

from __future__ import annotations

import json
import logging
import os
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paynb._attrs import HISTORY
from paynb._warn import user_stacklevel
from paynb.errors import PaynbWarning
from paynb.history._accounts import KEY_COLUMN
from paynb.history._store import (
    ID_FIELDS,
    INTERNAL,
    META_FILE,
    MONTH_FIELDS,
    NO_MONTH,
    STATUS_FIELDS,
    DataFile,
    HistoryError,
    Store,
    event_columns,
    latest,
    months_of,
)
from paynb.history._sync import KIND_NAMES, SHOWN_KINDS, kind_of, when

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["History", "HistoryCompanyWarning"]

logger = logging.getLogger("paynb.history")

#: A read whose Arrow table is at least this big gives Arrow's allocator back the memory
#: it no longer uses, once the frame is made (see History._items).
RELEASE_BYTES = 64 * 2**20


class HistoryCompanyWarning(PaynbWarning):
    """A history opened for a company it holds no items of (its frames are empty)."""


def _statuses(status: str | Iterable[str] | None, kind: str) -> list[str]:
    """Status codes (or names) as the frames write them; an unknown one is an error."""
    from paynb.codes import STATUS_NAMES, STATUS_ORDER
    from paynb.frames import INSTANT_STATUSES
    from paynb.resources._base import invalid

    if status is None:
        return []
    given = [status] if isinstance(status, str) else list(status)
    if kind in ("ach", "rcc"):
        by_name = {name.lower(): code for code, name in STATUS_NAMES.items()}
        known = {code.lower(): code for code in STATUS_ORDER} | by_name
        choices = f"{', '.join(STATUS_ORDER)} ({', '.join(STATUS_NAMES.values())})"
    else:
        known = {name.lower(): name for name in INSTANT_STATUSES}
        choices = ", ".join(INSTANT_STATUSES)
    codes = []
    for one in given:
        code = known.get(str(one).strip().lower())
        if code is None:
            raise invalid("status", f"holds {one!r}, not a status; use some of {choices}")
        codes.append(code)
    return codes


def _like(bound: Any, values: pd.Series) -> Any:
    """``bound`` (a UTC time) comparable with ``values``: paynb.frames shows date fields
    (returnDate at midnight, settleDate...) as zone-less UTC days."""
    import pandas as pd

    stamp = pd.Timestamp(bound)
    if getattr(values.dtype, "tz", None) is None and stamp.tz is not None:
        return stamp.tz_convert("UTC").tz_localize(None)
    return bound


def _range(start: Any, end: Any, names: tuple[str, str]) -> tuple[Any, Any]:
    from paynb.resources._base import backwards

    low, high = when(start, names[0]), when(end, names[1], end=True)
    if low is not None and high is not None and high < low:
        # As the lists say it; a whole day's end shown as its day.
        shown = when(end, names[1])
        assert shown is not None  # end is given: high is not None
        raise backwards(names[0], low.tz_convert(None).to_pydatetime(), names[1],
                        shown.tz_convert(None).to_pydatetime())
    return low, high


class History:
    """A local history of payment items: Parquet files written by :meth:`paynb.Client.sync`.

    Opens with no client and no network (``paynb.History(path)``), so a notebook can
    be rerun offline or the folder shared. Each reader returns the frame the client's
    list returns for the same items: the same columns, dtypes and masking.

    Args:
        path: the store's folder (``client.history.path``).
        company: read only this company's items (default: every company in the store).
        mask: show account numbers masked (``****6789``). A store synced with
            ``mask=False`` keeps them whole and masks them on reading unless
            ``mask=False`` here too; a masked store cannot show them whole.
    """

    def __init__(self, path: str | os.PathLike[str], *, company: str | None = None,
                 mask: bool = True) -> None:
        from paynb.resources._base import invalid

        if not isinstance(path, str | os.PathLike):
            raise invalid("path", "must be the folder of a history store")
        if not isinstance(mask, bool):
            raise invalid("mask", "must be True or False")
        if company is not None and (not isinstance(company, str) or not company.strip()):
            raise invalid("company", "must be a company code or None")
        self._store = Store(path)
        if self._store.path.exists() and not self._store.path.is_dir():
            raise invalid("path", f"{self._store.path} is a file: give the folder of a "
                          "history store (client.history.path)")
        self.company = company.strip() if company else None
        self.mask = mask
        self._store.meta()  # a broken metadata file is reported on opening
        self._told_empty = False
        self._told_company = False
        #: The kinds (and starts) already said to be missing from the store.
        self._told_held: set[tuple[str, str]] = set()

    def __repr__(self) -> str:
        return f"<paynb.History at {self.path}>"

    @property
    def path(self) -> Path:
        """The store's folder."""
        return self._store.path

    @property
    def masked(self) -> bool | None:
        """Whether the store keeps account numbers masked (None: nothing synced yet)."""
        return self._store.meta().get("masked")

    def info(self) -> dict[str, Any]:
        """The store's metadata: format, last version, masking, and per kind and company
        the ``since`` it starts at, the return-date ``watermark`` and the last sync time."""
        return self._store.meta()

    # ------------------------------------------------------------------ frames

    def ach(self, start: Any = None, end: Any = None, *, status: Any = None,
            returned_from: Any = None, returned_to: Any = None,
            columns: list[str] | None = None) -> pd.DataFrame:
        """ACH items as ``client.ach.list`` returns them.

        Args:
            start, end: range of ``receivedDateTime`` (a date alone covers its whole
                day); only the months in it are read.
            status: one status or several (codes or names, as ``list`` takes them).
            returned_from, returned_to: range of ``returnDate``.
            columns: only these columns (the id always comes along).
        """
        return self._items("ach", start, end, status, returned_from, returned_to, columns)

    def rcc(self, start: Any = None, end: Any = None, *, status: Any = None,
            returned_from: Any = None, returned_to: Any = None,
            columns: list[str] | None = None) -> pd.DataFrame:
        """RCC items as ``client.rcc.list`` returns them (arguments as :meth:`ach`)."""
        return self._items("rcc", start, end, status, returned_from, returned_to, columns)

    def instant(self, start: Any = None, end: Any = None, *, status: Any = None,
                columns: list[str] | None = None) -> pd.DataFrame:
        """Instant card payments as ``client.instant.list`` returns them (``status``
        ``Success`` or ``Failed``; other arguments as :meth:`ach`)."""
        return self._items("instant", start, end, status, None, None, columns)

    def rtp(self, start: Any = None, end: Any = None, *, status: Any = None,
            columns: list[str] | None = None) -> pd.DataFrame:
        """Instant RTP payments as ``client.rtp.list`` returns them (see :meth:`instant`)."""
        return self._items("rtp", start, end, status, None, None, columns)

    def nocs(self, start: Any = None, end: Any = None, *,
             columns: list[str] | None = None) -> pd.DataFrame:
        """NOCs as ``client.nocs.list`` returns them; ``start`` and ``end`` bound
        ``nocDate``."""
        return self._items("noc", start, end, None, None, None, columns)

    def _files(self, area: str, kind: str, low: Any = None, high: Any = None
               ) -> list[DataFile]:
        files = self._store.files(area, kind=kind, company=self.company)
        if low is None and high is None:
            return files
        first = "0000-00" if low is None else f"{low:%Y-%m}"
        last = "9999-99" if high is None else f"{high:%Y-%m}"
        return [f for f in files if f.month != NO_MONTH and first <= (f.month or "") <= last]

    def _warn_if_never_synced(self) -> None:
        # An empty answer from a folder nothing was ever synced into (a typo in the path,
        # or no sync yet) would pass for "no items": say so, once per History.
        if not self._store.exists() and not self._told_empty:
            self._told_empty = True
            if not self.path.exists():
                state = "the folder does not exist"
            elif any(self.path.iterdir()):
                state = f"the folder holds other files, but no {META_FILE}"
            else:
                state = "the folder is empty"
            warnings.warn(f"no history has been synced into {self.path} ({state}): "
                          "these frames are empty; run client.sync() (path= for this "
                          "folder) first", PaynbWarning, stacklevel=user_stacklevel())

    def _warn_if_not_held(self, meta: dict[str, Any], kind: str, low: Any) -> None:
        # A kind no sync fetched, or a start before the one the store was synced from,
        # would pass for "no items" (or for all of them): say what the store holds.
        states = meta.get("kinds", {})
        if not states:
            return  # nothing synced at all: _warn_if_never_synced has said so
        name = SHOWN_KINDS.get(kind, kind)
        held = states.get(kind, {})
        if not held:
            if (kind, "") not in self._told_held:
                self._told_held.add((kind, ""))
                synced = ", ".join(sorted(SHOWN_KINDS.get(k, k) for k in states))
                warnings.warn(f"the history at {self.path} holds no {name} items: no sync "
                              f"fetched them (it holds {synced}); "
                              f"client.sync(kinds={name!r}) does", PaynbWarning,
                              stacklevel=user_stacklevel())
            return
        if self.company is not None:  # another company's: _warn_if_company_unknown's
            held = {c: state for c, state in held.items() if c == self.company}
        starts = [when(state.get("since"), "since") for state in held.values()]
        if low is None or not starts or any(start is None for start in starts):
            return
        first = min(start for start in starts if start is not None)
        if low < first and (kind, str(first)) not in self._told_held:
            self._told_held.add((kind, str(first)))
            warnings.warn(f"the history at {self.path} keeps {name} items from "
                          f"{first:%Y-%m-%d %H:%M} UTC on (synced with since=): the frame "
                          f"holds none from before, though start is {low:%Y-%m-%d}; "
                          "client.sync(rebuild=True, since=...) fetches them", PaynbWarning,
                          stacklevel=user_stacklevel())

    def _held(self, meta: dict[str, Any], kind: str) -> dict[str, Any] | None:
        """What the store holds of ``kind`` (see :data:`paynb._attrs.HISTORY`), for the
        frames' ``attrs``; None when no sync fetched it."""
        states = meta.get("kinds", {}).get(kind, {})
        if self.company is not None:
            states = {c: state for c, state in states.items() if c == self.company}
        synced = [when(state.get("syncedAt"), "syncedAt") for state in states.values()]
        if not states or any(stamp is None for stamp in synced):
            return None
        starts = [when(state.get("since"), "since") for state in states.values()]
        given = [start for start in starts if start is not None]
        return {"path": str(self.path), "kind": SHOWN_KINDS.get(kind, kind),
                "since": max(given).isoformat() if given else None,
                "syncedAt": min(stamp for stamp in synced if stamp is not None).isoformat()}

    def _warn_if_unseen(self, kind: str, asked: list[str], seen: set[str]) -> None:
        # An id of another kind, a typo or an item synced after this store's last sync
        # would pass for "no status change": name the ids no sync has seen.
        unseen = [item for item in asked if item not in seen]
        if not unseen:
            return
        shown = ", ".join(unseen[:5]) + (f" and {len(unseen) - 5} more" if len(unseen) > 5
                                         else "")
        warnings.warn(f"no sync into {self.path} has seen {kind} item(s) {shown}: they have "
                      "no events (not synced yet, or not of this kind)", PaynbWarning,
                      stacklevel=user_stacklevel())

    def _warn_if_company_unknown(self, meta: dict[str, Any]) -> None:
        # company="NOPE" (a typo, or another company's store) would pass for "no items"
        # too: name the companies the store holds, once per History.
        held = sorted({c for states in meta.get("kinds", {}).values() for c in states})
        if self.company is None or not held or self.company in held or self._told_company:
            return
        self._told_company = True
        warnings.warn(f"the history at {self.path} holds no items of company "
                      f"{self.company!r}: it holds {', '.join(map(repr, held))}; these "
                      "frames are empty", HistoryCompanyWarning, stacklevel=user_stacklevel())

    def _columns(self, kind: str, columns: Any, files: list[DataFile]) -> list[str] | None:
        """``columns`` checked against the kind's frame and the stored fields."""
        from paynb import frames
        from paynb.resources._base import invalid

        if columns is None:
            return None
        if isinstance(columns, str) or not all(isinstance(c, str) for c in columns):
            raise invalid("columns", "must be a list of column names")
        known = [*frames.empty_frame(kind).columns]
        if any(c not in known for c in columns):
            # Fields the service sent that this paynb does not know are columns too.
            known += [c for c in self._store.info(files)["dtypes"]
                      if c not in known and c not in INTERNAL and c != KEY_COLUMN]
        unknown = [c for c in columns if c not in known]
        if unknown:
            raise invalid("columns", f"holds {', '.join(map(repr, unknown))}, not a column of "
                          f"the {kind} frames; use some of {', '.join(known)}")
        return list(columns)

    def _items(self, kind: str, start: Any, end: Any, status: Any, returned_from: Any,
               returned_to: Any, columns: list[str] | None) -> pd.DataFrame:
        self._warn_if_never_synced()
        import numpy as np
        import pyarrow as pa

        low, high = _range(start, end, ("start", "end"))
        r_low, r_high = _range(returned_from, returned_to, ("returned_from", "returned_to"))
        codes = _statuses(status, kind)
        meta = self._store.meta()
        self._warn_if_company_unknown(meta)
        self._warn_if_not_held(meta, kind, low)
        if meta.get("masked") is True and not self.mask:
            raise HistoryError(f"the history at {self.path} keeps account numbers masked (it "
                               "was synced so); History(mask=False) cannot show them whole")
        files = self._files("items", kind, low, high)
        id_field, month_field = ID_FIELDS[kind], MONTH_FIELDS[kind]
        wanted = None
        columns = self._columns(kind, columns, files)
        if columns is not None:
            wanted = list(dict.fromkeys([id_field, *columns, "companyCode", month_field,
                                         "_order", "_version"]))
            if codes:
                wanted.append(STATUS_FIELDS[kind] or "")
            if r_low is not None or r_high is not None:
                wanted.append("returnDate")
            wanted = list(dict.fromkeys(wanted))
        where: list[tuple[str, str, Any]] = []
        if codes and STATUS_FIELDS[kind]:
            where.append((STATUS_FIELDS[kind] or "", "isin", codes))
        for column, lo, hi in ((month_field, low, high), ("returnDate", r_low, r_high)):
            if lo is not None:
                where.append((column, ">=", lo))
            if hi is not None:
                where.append((column, "<=", hi))
        tables = []
        companies = sorted({f.company for f in files})
        states = meta.get("kinds", {}).get(kind, {})
        copies = None
        if (r_low is not None or r_high is not None) and all(
                states.get(c, {}).get("returns") is True for c in companies):
            # Returns by date: their own partitions (by return month), not the items'.
            copies = self._files("returns", kind, r_low, r_high)
        for company in companies:
            mine = [f for f in files if f.company == company]
            if copies is None:
                tables.append(latest(self._read(mine, wanted, where, id_field), id_field))
            else:
                tables.append(self._returned(kind, [f for f in copies if f.company == company],
                                             mine, wanted, where))
        table = tables[0] if len(tables) == 1 else \
            pa.concat_tables(tables, promote_options="permissive") if tables else pa.table({})
        info = self._store.info(files)
        frame = self._pandas(table, kind, info)
        big = table.nbytes >= RELEASE_BYTES
        del table, tables
        keep = np.ones(len(frame), dtype=bool)
        for column, lo, hi in ((month_field, low, high), ("returnDate", r_low, r_high)):
            if (lo is not None or hi is not None) and column in frame:
                values = frame[column]
                if lo is not None:
                    keep &= (values >= _like(lo, values)).fillna(False).to_numpy()
                if hi is not None:
                    keep &= (values <= _like(hi, values)).fillna(False).to_numpy()
        if codes and STATUS_FIELDS[kind] in frame:
            keep &= frame[STATUS_FIELDS[kind]].astype(object).isin(codes).to_numpy()
        if not keep.all():
            frame = frame[keep]
        if "_order" in frame and not frame["_order"].is_monotonic_increasing:
            # Several companies, or items moved in the list: the slow way.
            frame = frame.sort_values("_order", kind="stable")
        frame = frame.drop(columns=[c for c in (*INTERNAL, KEY_COLUMN) if c in frame]) \
            .reset_index(drop=True)
        frame = self._typed(frame, kind, info, bool(meta.get("masked")))
        if columns is not None:
            frame = frame[[c for c in dict.fromkeys([id_field, *columns]) if c in frame]]
        held = self._held(meta, kind)
        if held is not None:
            frame.attrs[HISTORY] = held
        if big:
            # The files' decoded buffers are freed by now, but Arrow's allocator keeps
            # their memory: reading 1,000,000 ACH items left the kernel at 2.0 GB with a
            # frame of 0.65 GB (1.06 GB once given back, in some 30 ms), and the next sync
            # framed its rows up to 2x slower on the heap kept (benchmarks/RESULTS.md,
            # case 10, follow-up 8).
            pa.default_memory_pool().release_unused()
        return frame

    def _read(self, files: list[DataFile], columns: list[str] | None,
              where: list[tuple[str, str, Any]], id_field: str) -> Any:
        """The rows of one company's ``files`` that may meet ``where``, with every version
        of the items that have several (a condition may hold for an old version only)."""
        import pandas as pd

        months = [f.month for f in files]
        again: list[Any] = []
        if where and len(set(months)) < len(months):
            ids = self._store.read([f for f in files if months.count(f.month) > 1],
                                   [id_field]).column(id_field).to_numpy(zero_copy_only=False)
            again = pd.unique(ids[pd.Series(ids).duplicated(keep=False).to_numpy()]).tolist()
        return self._store.read(files, columns, where=where, also=(id_field, again))

    def _returned(self, kind: str, copies: list[DataFile], files: list[DataFile],
                  columns: list[str] | None, where: list[tuple[str, str, Any]]) -> Any:
        """The rows of ``copies`` (one company's ``returns`` partitions) that may meet
        ``where`` and are the latest version of their item, in list order.

        A row is stale when a later sync stored the item again: the new row has a
        higher ``_version``, in a file of a higher version, in ``returns`` when it has a
        return date and in the item's partition of ``files`` in any case.
        """
        import numpy as np
        import pandas as pd
        import pyarrow as pa
        import pyarrow.compute as pc

        id_field = ID_FIELDS[kind]
        rows = self._store.read(copies, columns, where=where)
        if rows.num_rows == 0:
            return rows
        ids = rows.column(id_field).to_numpy(zero_copy_only=False)
        versions = rows.column("_version").to_numpy(zero_copy_only=False)
        oldest = int(versions.min())
        months = set(months_of(rows.column(MONTH_FIELDS[kind]).to_pandas()).tolist())
        later = [f for f in files if f.version > oldest and f.month in months]
        every_id, every_version = [ids], [versions]
        if later:
            stored = self._store.read(later, [id_field, "_version"],
                                      where=[(id_field, "isin", pd.unique(ids).tolist())])
            if stored.num_rows:
                every_id.append(stored.column(id_field).to_numpy(zero_copy_only=False))
                every_version.append(stored.column("_version").to_numpy(zero_copy_only=False))
        newest = pd.Series(np.concatenate(every_version)).groupby(
            np.concatenate(every_id)).max()
        keep = versions == newest.reindex(ids).to_numpy()
        rows = rows.filter(pa.array(keep))
        return rows.take(pc.sort_indices(rows, [("_order", "ascending")]))

    @staticmethod
    def _pandas(table: Any, kind: str, info: dict[str, Any]) -> pd.DataFrame:
        import pandas as pd
        import pyarrow as pa

        from paynb import frames

        if table.num_columns == 0:
            return frames.empty_frame(kind)

        def arrow_types(kind_of_column: pa.DataType) -> Any:
            # Exact decimals stay pyarrow decimals, as the frames hold them.
            return pd.ArrowDtype(kind_of_column) if pa.types.is_decimal(kind_of_column) \
                else None

        frame = table.to_pandas(types_mapper=arrow_types)
        for name in info.get("json", []):
            if name in frame:
                frame[name] = [None if v is None or v != v else json.loads(v)
                               for v in frame[name]]
        return frame

    def _typed(self, frame: pd.DataFrame, kind: str, info: dict[str, Any],
               masked: bool) -> pd.DataFrame:
        """``frame`` with exactly the columns and dtypes ``to_frame`` gives its items.

        A field that none of the items read carries (all empty) is left out, as a list
        of those items would not have it. Stored columns keep their types, so this is
        cheap: categories are set as the frames set them (the known ones, then the others
        present, sorted). When the frames of this paynb type a column differently from
        the files (a newer paynb knows a field an older one kept as text), or when an
        unmasked store is read masked, the rows go through
        :func:`paynb.frames.to_frame` again, which gives the same frame a list would.
        """
        import pandas as pd

        from paynb import frames

        template = frames.empty_frame(kind)
        stored = info.get("dtypes", {})
        drifted = [name for name in template.columns
                   if name in stored and stored[name] != str(template[name].dtype)]
        if drifted or (self.mask and not masked):
            if drifted:
                logger.info("history %s: columns %s were stored with other types than this "
                            "paynb gives them; converting (sync(rebuild=True) stores them "
                            "anew)", kind, ", ".join(drifted))
            return frames.to_frame(frame, kind, mask=self.mask)
        columns: dict[str, Any] = {}
        n = len(frame)
        for name in template.columns:
            target = template[name].dtype
            if name not in frame:
                columns[name] = template[name].reindex(range(n)).array
                continue
            values = frame[name]
            if isinstance(target, pd.CategoricalDtype):
                if not isinstance(values.dtype, pd.CategoricalDtype):
                    values = values.astype("category")
                # As to_frame sets them: the known categories, then the others present.
                present = values.cat.remove_unused_categories().cat.categories
                extra = sorted(set(present) - set(target.categories))
                values = values.cat.set_categories([*target.categories, *extra],
                                                   ordered=target.ordered)
            elif values.dtype != target:
                values = values.astype(target)
            columns[name] = values.array
        for name in frame.columns:
            if name in columns:
                continue
            values = frame[name]
            if values.isna().all():
                # A field none of these items carries: the list of them would not have it.
                continue
            dtype = stored.get(name)
            if dtype in ("Int64", "boolean", "float64") and str(values.dtype) != dtype:
                values = values.astype(dtype)
            columns[name] = values.array if dtype != "object" else values.to_numpy()
        return pd.DataFrame(columns, index=pd.RangeIndex(n))

    def guard_rows(self, accounts: Iterable[tuple[Any, Any]], *, since: Any,
                   applied: Iterable[Any] = ()) -> Any:
        """What the submission guards of :mod:`paynb.compliance` read: the ACH items of
        ``accounts`` (routing, full number) from ``since`` on and the NOCs not
        ``applied`` about them (see :func:`paynb.history._accounts.guard_rows`)."""
        from paynb.history._accounts import guard_rows

        return guard_rows(self._store, self.company or "", accounts, since=since,
                          applied=applied)

    # ------------------------------------------------------------------ events

    def events(self, kind: str = "ach", *, item_id: Any = None, start: Any = None,
               end: Any = None) -> pd.DataFrame:
        """The status changes the syncs saw, oldest first.

        One row per item and status it was first seen in: columns ``kind``,
        ``itemId`` (text), ``itemStatus`` and ``seenAt`` (UTC, the sync's time).
        ``item_id`` keeps one item's (or several items') rows; ``start`` and ``end``
        bound ``seenAt``.
        """
        import numpy as np
        import pandas as pd

        name = kind_of(kind, "kind")
        low, high = _range(start, end, ("start", "end"))
        meta = self._store.meta()
        self._warn_if_company_unknown(meta)
        self._warn_if_not_held(meta, name, None)
        table = self._store.read(self._files("events", name))
        columns = list(event_columns())
        if table.num_rows == 0:
            frame = pd.DataFrame({c: pd.Series(dtype="str") for c in columns[:3]})
            frame["seenAt"] = pd.Series(dtype="datetime64[ns, UTC]")
            frame["kind"] = frame["kind"].astype("str")
        else:
            frame = table.to_pandas()[columns]
        keep = np.ones(len(frame), dtype=bool)
        if item_id is not None:
            if hasattr(item_id, "item") and not isinstance(item_id, str | bytes):
                item_id = item_id.item()  # a numpy or pandas scalar
            wanted = [item_id] if isinstance(item_id, str | int) else list(item_id)
            asked = list(dict.fromkeys(str(v) for v in wanted))
            keep &= frame["itemId"].isin(asked).to_numpy()
            self._warn_if_unseen(name, asked, set(frame["itemId"][keep]))
        if low is not None:
            keep &= (frame["seenAt"] >= low).to_numpy()
        if high is not None:
            keep &= (frame["seenAt"] <= high).to_numpy()
        frame = frame[keep].sort_values("seenAt", kind="stable").reset_index(drop=True)
        frame["kind"] = frame["kind"].map(lambda k: SHOWN_KINDS.get(k, k)).astype("str")
        return frame

    # ------------------------------------------------------------------ SQL

    def sql(self, query: str) -> pd.DataFrame:
        """Run a DuckDB query over the store; returns a DataFrame.

        Views: ``ach``, ``rcc``, ``instant``, ``rtp``, ``nocs`` (the latest version of
        each item, with the partition columns ``company`` and ``month``) and
        ``events`` (``kind, itemId, itemStatus, seenAt``)::

            history.sql("select month, count(*) from ach where itemStatus = 'R' group by 1")
        """
        from paynb.resources._base import invalid

        if not isinstance(query, str) or not query.strip():
            raise invalid("query", "must be SQL text")
        meta = self._store.meta()
        if self.mask and meta.get("masked") is False:
            raise HistoryError(f"the history at {self.path} holds whole account numbers "
                               "(synced with mask=False); open it with "
                               "History(path, mask=False) to query it in SQL")
        try:
            import duckdb
        except ImportError:
            raise HistoryError("history.sql needs DuckDB: pip install 'paynb[history]' "
                               "(or duckdb)") from None

        connection = duckdb.connect()
        try:
            for name, kind in KIND_NAMES.items():
                connection.execute(f"CREATE VIEW {name} AS {self._view(kind)}")
            events = [str(f.path) for k in KIND_NAMES.values()
                      for f in self._files("events", k)]
            if events:
                connection.execute(
                    "CREATE VIEW events AS SELECT kind, itemId, itemStatus, seenAt FROM "
                    f"read_parquet({_sql_list(events)}, union_by_name = true, "
                    "hive_partitioning = false)")
            else:
                connection.execute("CREATE VIEW events AS SELECT NULL::VARCHAR AS kind, "
                                   "NULL::VARCHAR AS itemId, NULL::VARCHAR AS itemStatus, "
                                   "NULL::TIMESTAMPTZ AS seenAt WHERE false")
            return connection.execute(query).df()
        finally:
            connection.close()

    def _view(self, kind: str) -> str:
        files = self._files("items", kind)
        id_field = ID_FIELDS[kind]
        if not files:
            from paynb import frames

            template = frames.empty_frame(kind)
            nulls = ", ".join(f'NULL AS "{name}"' for name in template.columns)
            return f"SELECT {nulls} WHERE false"
        internal = ", ".join(INTERNAL)
        return (f"SELECT * EXCLUDE ({internal}, _latest) FROM (SELECT *, row_number() OVER "
                f'(PARTITION BY company, "{id_field}" ORDER BY _version DESC) AS _latest '
                f"FROM read_parquet({_sql_list([str(f.path) for f in files])}, "
                "union_by_name = true, hive_partitioning = true)) WHERE _latest = 1 "
                "ORDER BY _order")


def _sql_list(paths: list[str]) -> str:
    return "[" + ", ".join("'" + p.replace("'", "''") + "'" for p in paths) + "]"
