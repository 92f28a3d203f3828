"""A kind's list: its filters, its pages, the frame built from them in batches, narrowing.

One :class:`Listing` per resource namespace (``client.ach.listing``). The lists,
``changes()`` and exports read through it, and so do the history's sync and
``reconcile()``, through its public :meth:`Listing.pages` and :meth:`Listing.frame`.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from paynb._args import backwards, positive_int, status_codes
from paynb._lazy import OnFirstUse
from paynb._time import is_date_only, utc_moment
from paynb.errors import ResponseFormatError, ValidationError
from paynb.paging import Page, iter_pages
from paynb.transport import parse_json

if TYPE_CHECKING:
    import pandas as pd
    import requests

    from paynb.resources._context import Namespace, ResourceContext

__all__ = ["RANGES", "DateBound", "Filters", "Listing", "Pages", "date_range", "wire_time"]

logger = logging.getLogger("paynb.resources")

# On first use: the frames bring pandas and pyarrow, which a new client does not need.
frames: Any = OnFirstUse("paynb.frames")

#: The list envelope's totals that reach ``frame.attrs`` (count, and exact Decimal sums).
_ENVELOPE_TOTALS = ("total", "creditAmount", "debitAmount")
#: Records per DataFrame built while later pages are still being fetched.
FRAME_BATCH = 4000
#: The date ranges of the list filters, by argument stem (``received`` ->
#: ``received_from``/``received_to``).
RANGES = ("returned", "received", "settled")


class _Batches:
    """One frame of a list's pages, built in batches while later pages are fetched.

    Building holds the interpreter lock, which the fetching threads need to read answers
    and send requests: so a batch of ``last_batch`` records (a round of pages) is built
    while they wait on the network anyway (:meth:`idle`). Pages that leave no idle moment
    get a batch per ``FRAME_BATCH`` records, and per ``last_batch`` in the list's last
    ``FRAME_BATCH`` (``expected()``: its size, ``inf`` while unknown), so that little is
    left to build once the last page is in.
    """

    def __init__(self, frame: Callable[[list[dict[str, Any]]], pd.DataFrame], *,
                 expected: Callable[[], float], last_batch: int) -> None:
        self._build = frame
        self._expected = expected
        self._last_batch = last_batch
        self._records: list[dict[str, Any]] = []
        self._pieces: list[pd.DataFrame] = []
        self._converted = 0
        #: The unknown codes the batches warned of: the list warns once, as one frame.
        self._told: set[tuple[str, str]] = set()

    def _frame(self, records: list[dict[str, Any]]) -> pd.DataFrame:
        with frames.unknown_codes_told_once(self._told):
            return self._build(records)

    def _flush(self) -> None:
        self._pieces.append(self._frame(self._records[self._converted:]))
        self._converted = len(self._records)

    def _waiting(self, *, idle: bool) -> bool:
        waiting = len(self._records) - self._converted
        near_end = self._expected() - len(self._records) < FRAME_BATCH
        return waiting >= (self._last_batch if idle or near_end else FRAME_BATCH)

    def add(self, records: list[dict[str, Any]]) -> None:
        """The records of the next page."""
        self._records.extend(records)
        if self._waiting(idle=False):
            self._flush()

    def idle(self) -> None:
        """The next page has not come yet: build what waits, if it is worth a batch."""
        if self._waiting(idle=True):
            self._flush()

    def result(self) -> pd.DataFrame:
        """The frame of every record added."""
        import pandas as pd

        if self._converted < len(self._records) or not self._pieces:
            self._flush()
        pieces = self._pieces
        if len(pieces) == 1:
            return pieces[0]
        first = pieces[0].dtypes
        if all(piece.dtypes.equals(first) for piece in pieces[1:]):
            return pd.concat(pieces, ignore_index=True)
        # The batches disagree (a status code or field only some pages have): one frame
        # of all records gives the dtypes the whole list calls for.
        return self._frame(self._records)


def _moment(value: Any, argument: str) -> tuple[dt.datetime, bool]:
    """``value`` as a zone-less UTC datetime (:func:`paynb._time.utc_moment`), and whether
    it named a whole day (a date, or ISO text without a time)."""
    return utc_moment(value, argument).replace(tzinfo=None), is_date_only(value)


def wire_time(value: Any, argument: str) -> str:
    """A date or time as the spec writes it: ``2026-11-01T00:00:00.000`` (UTC, no zone)."""
    value, _ = _moment(value, argument)
    return f"{value:%Y-%m-%dT%H:%M:%S}.{value.microsecond // 1000:03d}"


@dataclass(frozen=True)
class DateBound:
    """One checked range filter applied here: ``field`` within ``[start, end)``/``[start, end]``."""

    argument: str
    field: str
    start: dt.datetime | None
    end: dt.datetime | None
    #: The end was a bare date: the whole of that day is in the range (end is exclusive).
    end_exclusive: bool


@dataclass(frozen=True)
class Filters:
    """The list filters of one call, checked: the query parameters sent to the service,
    and what is applied to the records that come back."""

    params: list[tuple[str, Any]] = field(default_factory=list)
    statuses: list[str] | None = None
    bounds: list[DateBound] = field(default_factory=list)

    @property
    def local(self) -> bool:
        """Whether anything is applied to the records here."""
        return self.statuses is not None or bool(self.bounds)


def date_range(start: Any, end: Any, start_name: str, end_name: str
               ) -> tuple[dt.datetime | None, dt.datetime | None, bool]:
    """A checked range: start, end (zone-less UTC) and whether the end is a whole day.

    A bare date as the end (``2026-11-30``) takes in that whole day. A range whose
    start is after its end is an error naming both arguments: it would select nothing.
    """
    begin = _moment(start, start_name)[0] if start is not None else None
    finish, whole_day = _moment(end, end_name) if end is not None else (None, False)
    if finish is not None and whole_day:
        finish += dt.timedelta(days=1)
    if begin is not None and finish is not None and (
            begin >= finish if whole_day else begin > finish):
        raise backwards(start_name, begin, end_name,
                        finish - dt.timedelta(days=1) if whole_day else finish)
    return begin, finish, whole_day


class Pages:
    """The pages of one list query, each on demand: ``pages(n)`` is page ``n``
    (zero-based, :attr:`size` records) as a :class:`~paynb.paging.Page`.

    For :func:`paynb.paging.iter_pages`: ``iter_pages(pages, page_size=pages.size)``, or,
    to parse each page in the thread that iterates rather than in the fetching threads,
    ``iter_pages(pages.request, decode=pages.read, ...)``. :attr:`envelope` holds the
    first page's totals (count, exact Decimal sums) once a page has been read.
    """

    def __init__(self, context: ResourceContext, path: str, params: Sequence[tuple[str, Any]],
                 size: int) -> None:
        self.size = size
        #: The envelope's totals of the whole list (every page carries the same ones).
        self.envelope: dict[str, Any] = {}
        self._transport = context.transport
        self._path = path
        self._params = list(params)

    def request(self, number: int) -> requests.Response:
        """Send the request of page ``number``; its answer (retries and error answers as
        for any read)."""
        query = [*self._params, ("page", number), ("pageSize", self.size)]
        return self._transport.request("GET", self._path, params=query, collection=True)

    def read(self, response: requests.Response) -> Page:
        """The :class:`~paynb.paging.Page` of an answer (a body that is no JSON raises
        :class:`~paynb.errors.ResponseFormatError`)."""
        answer = parse_json(response, "GET", self._path)
        records = frames.extract_records(answer, method="GET", path=self._path)
        meta = frames.list_metadata(answer)
        if not self.envelope:
            self.envelope.update({key: meta[key] for key in _ENVELOPE_TOTALS if key in meta})
        total = meta.get("total")
        return Page(records, total if isinstance(total, int) else None)

    def __call__(self, number: int) -> Page:
        return self.read(self.request(number))


class Listing:
    """The list of one kind of the client's company (``client.ach.listing``): its checked
    :meth:`filters`, its :meth:`pages`, the :meth:`frame` of every page (built in batches
    while later pages come) and the filters applied here (:meth:`narrow`).

    ``frame_of(records)`` makes the kind's typed frame of raw records (the namespace's, so
    that what is listed is also what the client has seen).
    """

    def __init__(self, kind: Namespace, path: str,
                 frame_of: Callable[[Sequence[Mapping[str, Any]]], pd.DataFrame]) -> None:
        self.kind = kind
        #: The list's path (``/api/v3/AchTransactions/companycode/DEMO1``).
        self.path = path
        self.frame_of = frame_of

    def pages(self, params: Sequence[tuple[str, Any]] = (), page_size: int | None = None
              ) -> Pages:
        """The pages of the list with the raw query ``params`` (such as
        ``("yourReferenceNumber", ...)``, which the public filters do not offer), ``page_size``
        records each (default: the client's ``page_size``): ``pages(n)`` is page ``n``."""
        size = positive_int(page_size, "page_size") if page_size is not None \
            else self.kind.context.page_size
        return Pages(self.kind.context, self.path, params, size)

    def frame(self, query: Filters | Sequence[tuple[str, Any]] = (), *, page: int | None = None,
              page_size: int | None = None, max_items: int | None = None,
              progress: bool | None = False) -> pd.DataFrame:
        """The list of ``query`` (checked :class:`Filters`, or raw query parameters) as one
        frame of the kind's columns: every page unless ``page`` is given, at most
        ``max_items`` records (counted before the filters applied here); a record seen
        twice while paging is kept once. ``frame.attrs`` holds the envelope's totals."""
        filters = query if isinstance(query, Filters) else Filters(list(query))
        pages = self.pages(filters.params, page_size)
        if max_items is not None:
            max_items = positive_int(max_items, "max_items", minimum=0)
        if progress is not None and not isinstance(progress, bool):
            raise ValidationError.for_argument("progress", "must be True, False or None")
        if page is not None:
            records = pages(positive_int(page, "page", minimum=0)).records
            frame = self.frame_of(records if max_items is None else records[:max_items])
        else:
            workers = self.kind.context.max_workers

            def expected() -> float:
                total = pages.envelope.get("total")
                known = total if isinstance(total, int) else math.inf
                return known if max_items is None else min(known, max_items)

            batches = _Batches(self.frame_of, expected=expected,
                               last_batch=max(workers * pages.size, FRAME_BATCH // 4))
            for records in iter_pages(
                    pages.request, page_size=pages.size, max_items=max_items,
                    max_workers=workers, progress=progress, desc=f"{self.kind.kind} pages",
                    decode=pages.read, idle=batches.idle):
                batches.add(records)
            frame = batches.result()
        id_field = self.kind.id_field
        if id_field in frame.columns and len(frame):
            ids = frame[id_field]
            repeats = ids.duplicated() & ids.notna()
            if repeats.any():
                # A record that moved to a later page while paging: keep its first sight.
                logger.info("%s list: dropped %d records seen twice", self.kind.kind,
                            repeats.sum())
                frame = frame[~repeats].reset_index(drop=True)
        frame.attrs.update(pages.envelope)
        return self.narrow(frame, filters)

    def filters(self, status: Any = None, *, everything_here: bool = False,
                **ranges: Any) -> Filters:
        """The checked filters of a list, export or poll call.

        ``ranges`` holds ``returned_from`` ... ``settled_to``. Filters in the kind's
        ``server_filters`` become query parameters; the others are applied to the records
        that come back (all of them, with ``everything_here``, for documents whose
        filtering the service does not promise). A filter this kind has no field for is
        an error naming it.
        """
        kind = self.kind
        params: list[tuple[str, Any]] = []
        statuses = None
        if status is not None:
            if kind.status_field is None:
                raise ValidationError.for_argument(
                    "status", f"does not apply: {kind.kind} records have no status")
            statuses = status_codes(status, kind.kind)
            if "status" in kind.server_filters:
                params.extend(("itemStatus", code) for code in statuses)
                if not everything_here:
                    statuses = None
        bounds = []
        for stem in RANGES:
            start_name, end_name = f"{stem}_from", f"{stem}_to"
            start, end = ranges.pop(start_name, None), ranges.pop(end_name, None)
            if start is None and end is None:
                continue
            if stem not in kind.range_fields:
                named = start_name if start is not None else end_name
                raise ValidationError.for_argument(
                    named, f"does not apply: {kind.kind} records have no such date "
                           f"(their date filters: "
                           f"{', '.join(f'{k}_from/_to' for k in kind.range_fields)})")
            begin, finish, whole_day = date_range(start, end, start_name, end_name)
            if stem in kind.server_filters:
                # Sent as given: a bare end date is midnight, which holds the whole day
                # of a date-only field such as returnDate.
                if start is not None:
                    params.append(("returnDateStart", wire_time(start, start_name)))
                if end is not None:
                    params.append(("returnDateEnd", wire_time(end, end_name)))
                if not everything_here:
                    continue
            bounds.append(DateBound(stem, kind.range_fields[stem], begin, finish, whole_day))
        if ranges:
            raise TypeError(f"unexpected filter {next(iter(ranges))!r}")
        return Filters(params, statuses, bounds)

    def narrow(self, frame: pd.DataFrame, filters: Filters) -> pd.DataFrame:
        """The rows of ``frame`` that pass the filters applied here (a row without the
        date a range asks about does not)."""
        if not filters.local or not len(frame):
            return frame
        import numpy as np
        import pandas as pd

        keep = np.ones(len(frame), dtype=bool)
        if filters.statuses is not None and self.kind.status_field is not None:
            values = frame[self.kind.status_field].astype(object)
            keep &= values.isin(filters.statuses).to_numpy()
        for bound in filters.bounds:
            column = frame[bound.field]
            if not isinstance(column.dtype, pd.DatetimeTZDtype | np.dtype) or \
                    column.dtype.kind != "M":
                raise ResponseFormatError(
                    f"{self.kind.kind} list: {bound.field} holds no dates, so "
                    f"{bound.argument}_from/_to cannot be applied")
            zoned = getattr(column.dtype, "tz", None) is not None

            def stamp(moment: dt.datetime, zoned: bool = zoned) -> pd.Timestamp:
                value = pd.Timestamp(moment)
                return value.tz_localize("UTC") if zoned else value

            if bound.start is not None:
                keep &= (column >= stamp(bound.start)).fillna(False).to_numpy(dtype=bool)
            if bound.end is not None:
                inside = column < stamp(bound.end) if bound.end_exclusive \
                    else column <= stamp(bound.end)
                keep &= inside.fillna(False).to_numpy(dtype=bool)
        if keep.all():
            return frame
        return frame[keep].reset_index(drop=True)
