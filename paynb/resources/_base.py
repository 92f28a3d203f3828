"""What every resource namespace shares: paths, lists, exports, input checks, journaling."""

from __future__ import annotations

import datetime as dt
import email.message
import io
import logging
import math
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar
from urllib.parse import quote

from paynb._args import backwards, positive_int, status_codes
from paynb._coerce import missing, parse_decimal
from paynb._json import dumps
from paynb._kinds import KINDS
from paynb._lazy import OnFirstUse
from paynb._time import is_date_only, utc_moment
from paynb._warn import user_stacklevel
from paynb.auth import TOKEN_REQUEST
from paynb.errors import (
    ApiError,
    AuthenticationError,
    JournalError,
    PaynbWarning,
    ResponseFormatError,
    TransportError,
    ValidationError,
)
from paynb.journal import STALE_PENDING, SUBMISSIONS
from paynb.models import RequestModel, check
from paynb.paging import Page, iter_pages
from paynb.resources._context import ResourceContext
from paynb.resources._seen import SeenRecords
from paynb.results import ExportFile
from paynb.transport import parse_json, preview

if TYPE_CHECKING:
    import pandas as pd
    import requests

    from paynb.journal import Approval

__all__ = ["Resource", "ResourceContext", "fetch_list", "frame_rows", "page_fetcher",
           "page_reader"]

logger = logging.getLogger("paynb.resources")


# On first use: the frames bring pandas and pyarrow, which a new client does not need.
frames: Any = OnFirstUse("paynb.frames")

Answer = TypeVar("Answer")
_FILETYPE = re.compile(r"[A-Za-z0-9]{1,16}")
_READABLE_EXPORTS = ("csv", "json", "xlsx")
#: The list envelope's totals that reach ``frame.attrs`` (count, and exact Decimal sums).
_ENVELOPE_TOTALS = ("total", "creditAmount", "debitAmount")
#: Records per DataFrame built while later pages are still being fetched.
FRAME_BATCH = 4000


class _Batches:
    """One frame of a list's pages, built in batches while later pages are fetched.

    A batch is built once ``last_batch`` records (a round of pages, but not so few
    records that each frame's fixed cost dominates) wait while the main thread would
    wait for the next page anyway (:meth:`idle`): building holds the interpreter lock, and
    while it does the fetching threads can neither read their answers nor send their next
    requests, so it is best done while they wait on the network. Pages that come faster
    than that leave no idle moment: a batch is then built once ``FRAME_BATCH`` records
    wait, and in the list's last ``FRAME_BATCH`` records once ``last_batch`` wait, so that
    little is left to build once the last page is in. ``expected()`` is how many records
    the list will hold (``inf`` while unknown).
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


#: The date ranges of the list filters, by argument stem (``received`` ->
#: ``received_from``/``received_to``).
RANGES = ("returned", "received", "settled")


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


def _plain(value: Any) -> Any:
    """A value fit for JSON: numpy and pandas scalars become python ones."""
    if isinstance(value, Decimal | str | bool | int | float) or value is None:
        return value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "item"):
        return value.item()
    return value


def as_mapping(item: Any, argument: str) -> dict[str, Any]:
    """One input item (mapping, pandas Series or request model) as a plain dict.

    Missing values (``None``, ``NaN``, ``NaT``) are left out, so that a row of
    a DataFrame with an empty optional column is the item without that field.
    """
    if isinstance(item, RequestModel):
        return item.to_wire()
    if hasattr(item, "to_dict") and not isinstance(item, Mapping):
        item = item.to_dict()
    if not isinstance(item, Mapping):
        raise ValidationError.for_argument(
            argument, "must be a mapping of field names to values (or a model)")
    return {str(key): _plain(value) for key, value in item.items() if not missing(value)}


def _blank_text(value: Any) -> bool:
    return isinstance(value, str) and not value.strip()


def frame_rows(frame: pd.DataFrame, names: Mapping[Any, str | None] | None = None, *,
               blank_text: bool = False) -> list[dict[str, Any]]:
    """The rows of ``frame`` as plain dicts, read column by column (a 100,000-row upload
    in a fraction of a second): the one row reading of ``submit_many`` and the bulk form.

    Each row holds the values :func:`as_mapping` would give it: missing cells (``None``,
    ``NaN``, ``NaT``, ``NA``) left out, numpy scalars as python ones, dates as ISO text.

    Args:
        names: the key of each column (``None``: the column is left out); default the
            column's own name. Two columns with one key (``sameDayAchRequested`` and
            ``same_day_ach_requested`` in an upload) fill each other's blanks, the first
            column winning where both hold a value.
        blank_text: leave out blank text too (empty or only whitespace). The bulk form
            does: an empty spreadsheet cell is absent. ``submit_many`` does not: a blank
            value sent on purpose is the model's to judge (``must not be blank``).
    """
    import pandas as pd

    keys: list[str] = []
    values: list[list[Any]] = []
    blanks: list[set[int]] = []
    for position, column in enumerate(frame.columns):
        key = str(column) if names is None else names.get(column)
        if key is None:
            continue
        series = frame.iloc[:, position]
        cells = series.tolist()
        if blank_text and isinstance(series.dtype, pd.StringDtype) and not series.isna().any():
            # An uploaded file's column: text in every cell (nothing to make plain).
            blank = {n for n, value in enumerate(cells) if not value.strip()}
        else:
            cells = [_plain(value) for value in cells]
            blank = {n for n, value in enumerate(cells)
                     if missing(value) or (blank_text and _blank_text(value))}
        if key in keys:
            at = keys.index(key)
            for n in blanks[at] - blank:
                values[at][n] = cells[n]
            blanks[at] &= blank
            continue
        keys.append(key)
        values.append(cells)
        blanks.append(blank)
    rows = [dict(zip(keys, row, strict=True)) for row in zip(*values, strict=True)] \
        if keys else [{} for _ in range(len(frame))]
    for key, blank in zip(keys, blanks, strict=True):
        for n in blank:
            del rows[n][key]
    return rows


def _float_amount(value: float, field: str) -> Decimal:
    """A float amount as the decimal it was typed as (``125.1``), or an error naming ``field``
    for a float artefact (``0.1 + 0.2``) or anything that is not a whole number of cents."""
    amount = Decimal(repr(value))  # repr: the shortest text that reads back as this float
    if not amount.is_finite() or amount != amount.quantize(Decimal("0.01"), rounding="ROUND_DOWN"):
        raise ValidationError.for_argument(
            field, "is a float that is not a whole number of cents; pass a Decimal "
                   "or a string such as '0.30'")
    return amount


def wire_body(model: type[RequestModel], data: Mapping[str, Any], *,
              validate: bool, where: str = "") -> dict[str, Any]:
    """The body for ``data``: checked by ``model`` and serialised by it, or (``validate=False``)
    sent as given with python names turned into the service's.

    Even unchecked, no float artefact reaches the wire: a float in a field whose name
    ends in ``amount`` is sent as its shortest decimal, and one that is not a whole number
    of cents is refused (:class:`ValidationError`, a ``ValueError``, naming ``where`` +
    the field, e.g. ``items[3].amount``).
    """
    if validate:
        valid, errors = check(model, data)
        if valid is None:
            raise ValidationError(errors, skippable=True)
        return valid.to_wire()
    names = model.wire_names()
    body = {names.get(key, key): value for key, value in data.items()}
    for name, value in body.items():
        if isinstance(value, float) and name.lower().endswith("amount"):
            body[name] = _float_amount(value, where + name)
    return body


def id_of(record: Mapping[str, Any], field: str) -> Any:
    """The id of a raw record, whatever the casing of its field name."""
    for key, value in record.items():
        if key.lower() == field.lower():
            return value
    return None


def _filename(disposition: str | None) -> str | None:
    if not disposition:
        return None
    message = email.message.Message()
    message["content-disposition"] = disposition
    return message.get_filename()


def _export_format(content_type: str, filetype: str) -> str | None:
    kind = content_type.split(";")[0].strip().lower()
    if "csv" in kind:
        return "csv"
    if kind.endswith("json"):
        return "json"
    if "spreadsheetml" in kind or "ms-excel" in kind:
        return "xlsx"
    if kind in ("", "application/octet-stream", "text/plain") and filetype in _READABLE_EXPORTS:
        return filetype
    return None


class Resource:
    """Base of the namespaces ``client.ach``, ``client.rcc``, ``client.instant``, ...

    A subclass names its ``kind`` (:mod:`paynb._kinds`: its records' id and status
    fields come from there) and its path ``segment``.
    """

    kind: ClassVar[str]
    segment: ClassVar[str]
    #: The field that identifies a record (the kind's).
    id_field: ClassVar[str]
    #: The request model of one new item or payment (none for NOCs).
    model: ClassVar[type[RequestModel]]
    #: The field the ``status`` filter reads (None: records of this kind have no status).
    status_field: ClassVar[str | None] = None
    #: The record field of each date range filter this kind has (see :data:`RANGES`).
    range_fields: ClassVar[dict[str, str]] = {}
    #: Filters the service documents a query parameter for (spec 4.5: ACH ``itemStatus``,
    #: ``returnDateStart``/``returnDateEnd``): sent, and not applied again here.
    server_filters: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "kind" in vars(cls):
            cls.id_field = KINDS[cls.kind].id_field
            cls.status_field = KINDS[cls.kind].status_field

    def __init__(self, context: ResourceContext) -> None:
        #: What this namespace works with (transport, journal, clock, guards, watermarks,
        #: options): all it knows of the client.
        self.context = context
        #: The raw ACH items or NOCs the client has seen (``context.seen``): the history the
        #: submission guards check an entry against; ``None`` for the other kinds.
        self.seen: SeenRecords | None = context.seen.of(self.kind)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of company {self._company}>"

    # ------------------------------------------------------------------ paths and calls

    @property
    def _company(self) -> str:
        return self.context.company_code

    def _path(self, suffix: str = "", *, segment: str | None = None,
              prefix: str = "/api/v3") -> str:
        company = quote(self._company, safe="")
        return f"{prefix}/{segment or self.segment}/companycode/{company}{suffix}"

    def _call(self, method: str, path: str, *, params: Any = None,
              body: Any = None) -> Any:
        text = dumps(body) if body is not None else None
        # A body goes to an endpoint (submit, bulk, voids, route checks), never to one
        # item: a 404 there means no such path (a wrong base_url), not a missing item.
        return self.context.transport.json(method, path, params=params, body=text,
                                           collection=body is not None)

    def _record(self, method: str, path: str, *, body: Any = None) -> dict[str, Any]:
        answer = self._call(method, path, body=body)
        record: dict[str, Any] = frames.extract_record(answer, method=method, path=path)
        return record

    def _records(self, method: str, path: str, *, body: Any = None) -> list[dict[str, Any]]:
        answer = self._call(method, path, body=body)
        records: list[dict[str, Any]] = frames.extract_records(answer, method=method, path=path)
        return records

    # ------------------------------------------------------------------ frames

    def _frame(self, records: Sequence[Mapping[str, Any]] | pd.DataFrame) -> pd.DataFrame:
        if self.seen is not None and not hasattr(records, "columns"):
            self.seen.add(records)  # every list page, get, poll and submission answer
        return frames.to_frame(records, self.kind, mask=self.context.mask)

    def _row(self, record: Mapping[str, Any]) -> pd.Series:
        row = self._frame([record]).iloc[0]
        row.name = None
        return row

    # ------------------------------------------------------------------ lists

    def _list(self, params: list[tuple[str, Any]], *, page: int | None, page_size: int | None,
              max_items: int | None, progress: bool | None) -> pd.DataFrame:
        size = positive_int(page_size, "page_size") if page_size is not None \
            else self.context.page_size
        if max_items is not None:
            max_items = positive_int(max_items, "max_items", minimum=0)
        if progress is not None and not isinstance(progress, bool):
            raise ValidationError.for_argument("progress", "must be True, False or None")
        # The envelope's totals of the whole list (every page carries the same ones).
        envelope: dict[str, Any] = {}
        fetch, decode = page_reader(self, params, size, envelope=envelope)
        if page is not None:
            records = decode(fetch(positive_int(page, "page", minimum=0))).records
            if max_items is not None:
                records = records[:max_items]
            frame = self._frame(records)
        else:
            workers = self.context.max_workers

            def expected() -> float:
                total = envelope.get("total")
                known = total if isinstance(total, int) else math.inf
                return known if max_items is None else min(known, max_items)

            batches = _Batches(self._frame, expected=expected,
                               last_batch=max(workers * size, FRAME_BATCH // 4))
            for records in iter_pages(
                    fetch, page_size=size, max_items=max_items, max_workers=workers,
                    progress=progress, desc=f"{self.kind} pages", decode=decode,
                    idle=batches.idle):
                batches.add(records)
            frame = batches.result()
        if self.id_field in frame.columns and len(frame):
            ids = frame[self.id_field]
            repeats = ids.duplicated() & ids.notna()
            if repeats.any():
                # A record that moved to a later page while paging: keep its first sight.
                logger.info("%s list: dropped %d records seen twice", self.kind, repeats.sum())
                frame = frame[~repeats].reset_index(drop=True)
        frame.attrs.update(envelope)
        return frame

    # ------------------------------------------------------------------ filters

    def _filters(self, status: Any = None, *, everything_here: bool = False,
                 **ranges: Any) -> Filters:
        """The checked filters of a list, export or poll call.

        ``ranges`` holds ``returned_from`` ... ``settled_to``. Filters in
        :attr:`server_filters` become query parameters; the others are applied to
        the records that come back (all of them, with ``everything_here``, for
        documents whose filtering the service does not promise). A filter this kind
        has no field for is an error naming it.
        """
        params: list[tuple[str, Any]] = []
        statuses = None
        if status is not None:
            if self.status_field is None:
                raise ValidationError.for_argument(
                    "status", f"does not apply: {self.kind} records have no status")
            statuses = status_codes(status, self.kind)
            if "status" in self.server_filters:
                params.extend(("itemStatus", code) for code in statuses)
                if not everything_here:
                    statuses = None
        bounds = []
        for stem in RANGES:
            start_name, end_name = f"{stem}_from", f"{stem}_to"
            start, end = ranges.pop(start_name, None), ranges.pop(end_name, None)
            if start is None and end is None:
                continue
            if stem not in self.range_fields:
                named = start_name if start is not None else end_name
                raise ValidationError.for_argument(
                    named, f"does not apply: {self.kind} records have no such date "
                           f"(their date filters: "
                           f"{', '.join(f'{k}_from/_to' for k in self.range_fields)})")
            begin, finish, whole_day = date_range(start, end, start_name, end_name)
            if stem in self.server_filters:
                # Sent as given: a bare end date is midnight, which holds the whole day
                # of a date-only field such as returnDate.
                if start is not None:
                    params.append(("returnDateStart", wire_time(start, start_name)))
                if end is not None:
                    params.append(("returnDateEnd", wire_time(end, end_name)))
                if not everything_here:
                    continue
            bounds.append(DateBound(stem, self.range_fields[stem], begin, finish, whole_day))
        if ranges:
            raise TypeError(f"unexpected filter {next(iter(ranges))!r}")
        return Filters(params, statuses, bounds)

    def _narrow(self, frame: pd.DataFrame, filters: Filters) -> pd.DataFrame:
        """The rows of ``frame`` that pass the filters applied here (a row without the
        date a range asks about does not)."""
        if not filters.local or not len(frame):
            return frame
        import numpy as np
        import pandas as pd

        keep = np.ones(len(frame), dtype=bool)
        if filters.statuses is not None and self.status_field is not None:
            values = frame[self.status_field].astype(object)
            keep &= values.isin(filters.statuses).to_numpy()
        for bound in filters.bounds:
            column = frame[bound.field]
            if not isinstance(column.dtype, pd.DatetimeTZDtype | np.dtype) or \
                    column.dtype.kind != "M":
                raise ResponseFormatError(
                    f"{self.kind} list: {bound.field} holds no dates, so "
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

    def _filtered_list(self, filters: Filters, *, page: int | None, page_size: int | None,
                       max_items: int | None, progress: bool | None) -> pd.DataFrame:
        frame = self._list(filters.params, page=page, page_size=page_size,
                           max_items=max_items, progress=progress)
        return self._narrow(frame, filters)

    # ------------------------------------------------------------------ exports

    def export(self, filetype: str = "csv", *, status: Any = None,
               returned_from: Any = None, returned_to: Any = None,
               received_from: Any = None, received_to: Any = None,
               settled_from: Any = None, settled_to: Any = None) -> pd.DataFrame | ExportFile:
        """The service's export document of this kind, optionally filtered.

        ``csv``, ``json`` and ``xlsx`` documents (known by their content type,
        else by ``filetype``) come back as a DataFrame typed like :meth:`list`'s;
        any other document as an :class:`~paynb.ExportFile` (bytes, name,
        ``.save(path)``).

        The filters are those of :meth:`list`, with the same meaning. The ones the
        service documents a query parameter for (ACH and RCC ``status`` and the
        return-date range) are sent with the export request; since the spec does
        not say that exports honour them, every filter is also applied to the
        document's rows here. Filters therefore need a readable document:
        with another ``filetype`` they are an error.
        """
        filters = self._filters(status, everything_here=True,
                                returned_from=returned_from, returned_to=returned_to,
                                received_from=received_from, received_to=received_to,
                                settled_from=settled_from, settled_to=settled_to)
        if filters.local and isinstance(filetype, str) and \
                filetype.lower() not in _READABLE_EXPORTS:
            raise ValidationError.for_argument(
                "filetype", f"must be one of {', '.join(_READABLE_EXPORTS)} when "
                            f"filters are given (paynb applies them to the document's rows)")
        if not isinstance(filetype, str) or not _FILETYPE.fullmatch(filetype):
            raise ValidationError.for_argument(
                "filetype", "must be a short word of letters and digits, like 'csv'")
        path = self._path(f"/export/filetype/{filetype}")
        response = self.context.transport.request("GET", path, params=filters.params or None,
                                                  headers={"Accept": "*/*"}, collection=True)
        content_type = response.headers.get("Content-Type", "")
        name = _filename(response.headers.get("Content-Disposition")) or \
            f"{self.kind}-export.{filetype}"
        form = _export_format(content_type, filetype.lower())
        if form is None:
            if filters.local:
                raise ResponseFormatError(
                    f"GET {path}: the export came as {content_type or 'an unnamed type'}, "
                    f"not csv, json or xlsx, so the filters could not be applied to it")
            return ExportFile(content=response.content, name=name, content_type=content_type)
        import pandas as pd

        from paynb._excel import read_export_sheet  # pandas, fastexcel: with the first export

        data: Any
        if form == "json":
            data = frames.extract_records(parse_json(response, "GET", path),
                                          method="GET", path=path)
        else:
            try:
                if form == "csv":
                    data = pd.read_csv(io.BytesIO(response.content), dtype=str,
                                       keep_default_na=False, na_values=[""])
                else:
                    data = read_export_sheet(response.content, self.kind)
            except Exception as exc:  # pandas/fastexcel raise many kinds on a broken document
                raise ResponseFormatError(
                    f"GET {path}: the export is not a readable {form} document "
                    f"({type(exc).__name__}): {preview(response.text)!r}") from None
        return self._narrow(self._frame(data), filters)

    # ------------------------------------------------------------------ journal

    def _reserve(self, operation: str, references: Sequence[Any], *,
                 allow_duplicate: bool = False, summary: Any = None) -> list[int]:
        """Record ``references`` in the journal before sending (no-op without a journal).

        The token is fetched first, so that a credentials problem is reported
        before anything is recorded or sent.
        """
        transport = self.context.transport
        if transport.auth is not None:
            transport.auth.token()
        journal = self.context.journal
        if journal is None:
            return []
        return journal.reserve(self._company, self.kind, operation, list(references),
                               allow_duplicate=allow_duplicate, summary=summary,
                               by=self.context.user)

    def _journaled(self, operation: str, references: Sequence[Any], call: Callable[[], Answer],
                   *, allow_duplicate: bool = False, summary: Any = None,
                   entries: list[int] | None = None) -> tuple[Answer, list[int]]:
        """Record ``references`` in the journal, then ``call()``; on failure settle them.
        ``entries`` already recorded (an approved call's) are used instead.

        The entries' state after a failure says what is known: ``rejected`` when
        the service refused (4xx), ``failed`` when no connection was made (refused,
        host not found: it never reached the service), ``unknown`` when the call may
        have reached the service (no answer, 5xx, an unreadable answer, an
        interruption).
        """
        if entries is None:
            entries = self._reserve(operation, references, allow_duplicate=allow_duplicate,
                                    summary=summary)
        try:
            answer = call()
        except BaseException as exc:
            self._settle(entries, failure_state(exc), detail=str(exc))
            raise
        return answer, entries

    def _post_one(self, operation: str, body: dict[str, Any], *,
                  allow_duplicate: bool, entries: list[int] | None = None) -> pd.Series:
        """POST one new payment to the kind's path, journaled (or with the ``entries`` of
        an approved call); the stored record as a Series."""
        path = self._path()
        record, entries = self._journaled(
            operation, [body.get("yourReferenceNumber")],
            lambda: self._record("POST", path, body=body),
            allow_duplicate=allow_duplicate, summary=body, entries=entries)
        self._settle_records(entries, [record])
        return self._row(record)

    # ------------------------------------------------------------------ dual control

    def _hold(self, operation: str, keys: Sequence[Any], summaries: Sequence[Mapping[str, Any]],
              amounts: Sequence[Decimal | None], request: Mapping[str, Any], *,
              allow_duplicate: bool = False) -> Approval | None:
        """Hold the call for a second person when the client's dual control asks for one:
        recorded in the journal as awaiting approval, nothing sent. Returns the
        :class:`~paynb.journal.Approval`, or ``None`` when the call may go ahead.

        ``keys`` are the journal's references of the call, ``summaries`` what the queue
        shows of each (scrubbed when stored), ``amounts`` what the policy judges and
        ``request`` what :meth:`_send_approved` gets back, exactly as prepared.
        """
        policy = self.context.dual_control
        if policy is None:
            return None
        why = policy.needs_approval(self.kind, operation, amounts)
        if why is None:
            return None
        known = [amount for amount in amounts if amount is not None]
        approval = self.context.require_journal().hold(
            self._company, self.kind, operation, list(keys), why=why, summary=summaries,
            request=request, expires_after=policy.expires_after,
            total=sum(known, Decimal(0)) if known else None,
            allow_duplicate=allow_duplicate, by=self.context.user)
        logger.info("%s %s of %s held for a second person: approval %d (%s)", self.kind,
                    operation, self._company, approval.id, why)
        return approval

    def _hold_submission(self, operation: str, bodies: Sequence[dict[str, Any]],
                         request: Mapping[str, Any], *, allow_duplicate: bool,
                         summaries: Sequence[Mapping[str, Any]] | None = None,
                         ) -> Approval | None:
        """:meth:`_hold` for new payments, judged by their ``amount`` (the queue shows
        ``summaries``, default the bodies)."""
        if self.context.dual_control is None:
            return None
        return self._hold(operation, [body.get("yourReferenceNumber") for body in bodies],
                          bodies if summaries is None else summaries,
                          [_amount_of(body) for body in bodies], request,
                          allow_duplicate=allow_duplicate)

    def approve(self, approval_id: int, *, tot_password: str | None = None,
                new_authorization: bool = False,
                allow_duplicate: bool = False) -> pd.Series | pd.DataFrame:
        """Approve a call of this kind held for a second person and send it exactly as
        prepared: what :meth:`paynb.Client.approve` does (see there) once it has found
        the approval's kind."""
        approval_id = positive_int(approval_id, "approval_id")
        for flag, value in (("new_authorization", new_authorization),
                            ("allow_duplicate", allow_duplicate)):
            if not isinstance(value, bool):
                raise ValidationError.for_argument(flag, "must be True or False")
        journal = self.context.require_journal()
        user, company = self.context.user, self._company
        found, request = journal.approvals.peek(approval_id)
        refusal = journal.approvals.refusal(found, company=company, by=user)
        if refusal is not None:
            raise refusal
        if found.kind != self.kind or request is None:
            raise ValidationError.for_argument(
                "approval_id", f"approval {found.id} holds {found.kind} {found.operation}, "
                               f"not {self.kind}: client.approve() sends any kind")
        supplied = self._supplied(found, request, {"tot_password": tot_password})
        if allow_duplicate and found.operation not in SUBMISSIONS:
            raise ValidationError.for_argument(
                "allow_duplicate", f"does not apply: approval {found.id} is a "
                                   f"{found.operation}, not a submission")
        judged = self._before_approved(found, request, new_authorization=new_authorization)
        approval, _, entries = journal.approve(approval_id, by=user, company=company,
                                               allow_duplicate=allow_duplicate)
        logger.info("approval %d (%s %s, prepared by %s) approved by %s: sending",
                    approval.id, approval.kind, approval.operation, approval.prepared_by, user)
        if supplied:
            judged = {**judged, "bodies": [{**body, **supplied} for body in judged["bodies"]]}
        return self._send_approved(approval.operation, judged, entries)

    #: The request fields a held call does not keep, each with the argument of
    #: :meth:`approve` that gives it then (an instant card payment's one-time password:
    #: stale by the time a colleague approves, and a secret in a shared database).
    approver_supplies: ClassVar[Mapping[str, str]] = {}

    def _held_request(self, body: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """What a held call keeps of ``body`` (without :attr:`approver_supplies`' fields),
        and the arguments its approver must give (those fields ``body`` had)."""
        kept = {key: value for key, value in body.items() if key not in self.approver_supplies}
        needs = [argument for field, argument in self.approver_supplies.items()
                 if not missing(body.get(field)) and body.get(field) != ""]
        return kept, needs

    def _supplied(self, found: Approval, request: Mapping[str, Any],
                  given: Mapping[str, Any]) -> dict[str, Any]:
        """The request fields an approver gives (``given``: argument -> value, ``None`` when
        not given): each one the held call needs, none it does not; checked as the model
        checks the field, never quoting the value."""
        needed = set(request.get("supplied") or ())
        fields = {argument: field for field, argument in self.approver_supplies.items()}
        supplied: dict[str, Any] = {}
        for argument, value in given.items():
            if value is None:
                if argument in needed:
                    raise ValidationError.for_argument(
                        argument, f"is needed: approval {found.id} ({found.kind} "
                                  f"{found.operation}) was prepared with one, which paynb does "
                                  f"not keep (one-time, and a secret): give the current one, "
                                  f"client.approve({found.id}, {argument}=...). Nothing was "
                                  "sent.")
                continue
            if argument not in needed:
                raise ValidationError.for_argument(
                    argument, f"does not apply: approval {found.id} ({found.kind} "
                              f"{found.operation}) was not prepared with one")
            # Checked in the body it completes, by the model's rule for the field.
            _, errors = check(self.model, {**request["bodies"][0], fields[argument]: value})
            if fields[argument] in errors:
                raise ValidationError.for_argument(argument, "; ".join(errors[fields[argument]]))
            supplied[fields[argument]] = value
        return supplied

    def _before_approved(self, found: Approval, request: Mapping[str, Any], *,
                         new_authorization: bool) -> Mapping[str, Any]:
        """What to check before an approved call is sent, while it can still be left
        waiting (ACH entries: NACHA's guards again; payments: their route); raises to
        leave it so. Returns the request to send."""
        if new_authorization:
            raise ValidationError.for_argument(
                "new_authorization", f"does not apply: approval {found.id} is {found.kind} "
                                     f"{found.operation}, which NACHA's guards do not judge")
        return request

    def _send_approved(self, operation: str, request: Mapping[str, Any],
                       entries: list[int]) -> pd.Series | pd.DataFrame:
        """Send an approved call exactly as prepared, with its journal ``entries``."""
        raise NotImplementedError(f"{self.kind} holds no {operation} for approval")

    def _settle(self, entries: Iterable[int], state: str, *, detail: str | None = None) -> None:
        """Settle journal ``entries`` with one state (no-op without a journal)."""
        self._record_outcomes([(entry, state, None, None, detail) for entry in entries])

    def _record_outcomes(self, outcomes: Sequence[tuple[Any, ...]]) -> None:
        """Settle journal entries (``(entry, state, item_id, item_status, detail)`` each).

        Their requests went out already: when the journal cannot be reached now (a team's
        database gone away), a warning says so rather than an error that would hide the
        service's answer. The entries stay ``pending`` there, still guarding their
        references; the context keeps their outcomes, which ``client.reconcile()``
        records first, as soon as the journal can be used again.
        """
        journal = self.context.journal
        if journal is None or not outcomes:
            return
        try:
            journal.settle_many(outcomes)
        except JournalError as exc:
            self.context.keep_outcomes(outcomes)
            entries = f"entr{'y' if len(outcomes) == 1 else 'ies'}"
            warnings.warn(PaynbWarning(
                f"the journal could not record the outcome of {len(outcomes)} {self.kind} "
                f"{entries} ({exc}). They stay pending in it, still guarding their "
                "references. This client keeps their outcomes: client.reconcile() records "
                "them as soon as the journal can be used again. Should this client be "
                "closed first, reconcile() from any client looks them up in the service "
                f"once they have been pending for {STALE_PENDING / 60:.0f} minutes (until "
                "then another process may still be sending them)."),
                stacklevel=user_stacklevel())

    def _settle_records(self, entries: Sequence[int], records: Sequence[Mapping[str, Any] | None],
                       ) -> None:
        """Settle each entry with the record the service answered for it."""
        journal = self.context.journal
        if journal is None:
            return
        outcomes: list[tuple[Any, ...]] = []
        for entry, record in zip(entries, records, strict=True):
            if record is None:
                outcomes.append((entry, "unknown", None, None, "no answer for this item"))
                continue
            status = id_of(record, "itemStatus") or id_of(record, "status")
            errors = id_of(record, "errors")
            state = "rejected" if errors or str(status).upper() == "I" else "sent"
            outcomes.append((entry, state, id_of(record, self.id_field), status,
                             str(errors) if errors else None))
        self._record_outcomes(outcomes)


def page_fetcher(resource: Resource, params: list[tuple[str, Any]], size: int, *,
                 envelope: dict[str, Any] | None = None) -> Callable[[int], Page]:
    """``fetch(n)``: page ``n`` (``size`` records) of ``resource``'s list with the query
    ``params``, as :func:`paynb.paging.iter_pages` reads it. The first page's envelope
    totals (count, exact Decimal sums) go into ``envelope`` when it is given."""
    fetch, decode = page_reader(resource, params, size, envelope=envelope)

    def page(number: int) -> Page:
        return decode(fetch(number))

    return page


def page_reader(resource: Resource, params: list[tuple[str, Any]], size: int, *,
                envelope: dict[str, Any] | None = None,
                ) -> tuple[Callable[[int], requests.Response], Callable[[requests.Response], Page]]:
    """:func:`page_fetcher` in two steps, for ``iter_pages(fetch, decode=decode)``:
    ``fetch(n)`` sends the request of page ``n`` and returns the answer (retries and
    error answers as for any read), ``decode(answer)`` parses it into a :class:`Page`
    (a body that is no JSON raises :class:`~paynb.errors.ResponseFormatError`)."""
    path = resource._path()
    transport = resource.context.transport

    def fetch(number: int) -> requests.Response:
        query = [*params, ("page", number), ("pageSize", size)]
        return transport.request("GET", path, params=query, collection=True)

    def decode(response: requests.Response) -> Page:
        answer = parse_json(response, "GET", path)
        records = frames.extract_records(answer, method="GET", path=path)
        meta = frames.list_metadata(answer)
        if envelope is not None and not envelope:
            envelope.update({key: meta[key] for key in _ENVELOPE_TOTALS if key in meta})
        total = meta.get("total")
        return Page(records, total if isinstance(total, int) else None)

    return fetch, decode


def fetch_list(resource: Resource, params: list[tuple[str, Any]], *,
               progress: bool | None = False) -> pd.DataFrame:
    """Every page of ``resource``'s list with the raw query ``params`` (such as
    ``("yourReferenceNumber", ...)``, which the public filters do not offer), as one
    frame of the kind's columns."""
    return resource._list(params, page=None, page_size=None, max_items=None,
                          progress=progress)


def _amount_of(body: Mapping[str, Any]) -> Decimal | None:
    """A request body's amount, exact; ``None`` when it has none that reads as a number."""
    try:
        return parse_decimal(body.get("amount"))
    except (TypeError, ValueError):
        return None


def failure_state(exc: BaseException) -> str:
    """The journal state of a call that raised ``exc``: ``rejected`` when the service
    refused it, ``failed`` when it never reached the service (no connection was made, or
    no token came for it), else ``unknown`` (it may have been processed)."""
    if isinstance(exc, ApiError | AuthenticationError) and (exc.status or 0) < 500:
        return "rejected"
    if isinstance(exc, TransportError) and (not exc.connected
                                            or exc.request == TOKEN_REQUEST):
        return "failed"
    return "unknown"


def chunked(values: Sequence[Any], size: int) -> list[range]:
    """Index ranges that cut ``values`` into pieces of at most ``size``."""
    return [range(start, min(start + size, len(values)))
            for start in range(0, len(values), size)] if values else []
