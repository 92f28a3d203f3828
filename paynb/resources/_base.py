"""What every resource namespace shares: paths, calls, frames, input checks; its list
(:mod:`~paynb.resources._listing`), export (:mod:`~paynb.resources._export`) and sending
(:mod:`~paynb.resources._sending`) are rooms of their own."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar, cast
from urllib.parse import quote

from paynb._coerce import missing
from paynb._json import dumps
from paynb._kinds import KINDS
from paynb.errors import ValidationError
from paynb.models import RequestModel, check
from paynb.resources._context import ResourceContext
from paynb.resources._export import export
from paynb.resources._listing import RANGES, Listing, frames
from paynb.resources._seen import SeenRecords
from paynb.resources._sending import (
    Approver,
    Command,
    Delivery,
    Sender,
    amount_of,
    warn_not_accepted,
)
from paynb.results import ExportFile

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Resource", "ResourceContext", "frame_rows"]


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
            blank = {n for n, value in enumerate(cells) if missing(value) or (
                blank_text and isinstance(value, str) and not value.strip())}
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
        #: This kind's list: its filters, pages and frames (what history and
        #: ``reconcile()`` read through too).
        self.listing = Listing(self, self._path(), self._frame)
        #: Runs this kind's write calls: directly, or once a second person approves.
        self._sender = Sender(self)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} of company {self.context.company_code}>"

    # ------------------------------------------------------------------ paths and calls

    def _path(self, suffix: str = "", *, segment: str | None = None,
              prefix: str = "/api/v3") -> str:
        company = quote(self.context.company_code, safe="")
        return f"{prefix}/{segment or self.segment}/companycode/{company}{suffix}"

    def _call(self, method: str, path: str, *, params: Any = None,
              body: Any = None) -> Any:
        text = dumps(body) if body is not None else None
        # A body goes to an endpoint (submit, bulk, voids, route checks), never to one
        # item: a 404 there means no such path (a wrong base_url), not a missing item.
        return self.context.transport.json(method, path, params=params, body=text,
                                           collection=body is not None)

    def _record(self, method: str, path: str, *, body: Any = None) -> dict[str, Any]:
        return cast("dict[str, Any]", frames.extract_record(
            self._call(method, path, body=body), method=method, path=path))

    def _records(self, method: str, path: str, *, body: Any = None) -> list[dict[str, Any]]:
        return cast("list[dict[str, Any]]", frames.extract_records(
            self._call(method, path, body=body), method=method, path=path))

    # ------------------------------------------------------------------ frames

    def _frame(self, records: Sequence[Mapping[str, Any]] | pd.DataFrame) -> pd.DataFrame:
        if self.seen is not None and not hasattr(records, "columns"):
            self.seen.add(records)  # every list page, get, poll and submission answer
        return frames.to_frame(records, self.kind, mask=self.context.mask)

    def _row(self, record: Mapping[str, Any]) -> pd.Series:
        row = self._frame([record]).iloc[0]
        row.name = None
        return row

    def _list(self, call: dict[str, Any]) -> pd.DataFrame:
        """The one body of every kind's ``list`` (``call``: its ``locals()``); each kind
        documents its own, as its filters mean other fields."""
        ranges = {name: call[name] for stem in RANGES for name in (f"{stem}_from", f"{stem}_to")}
        return self.listing.frame(self.listing.filters(call["status"], **ranges),
                                  page=call["page"], page_size=call["page_size"],
                                  max_items=call["max_items"], progress=call["progress"])

    # ------------------------------------------------------------------ rooms

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
        filters = self.listing.filters(status, everything_here=True,
                                       returned_from=returned_from, returned_to=returned_to,
                                       received_from=received_from, received_to=received_to,
                                       settled_from=settled_from, settled_to=settled_to)
        return export(self.listing, filetype, filters)

    def approve(self, approval_id: int, *, tot_password: str | None = None,
                new_authorization: bool = False,
                allow_duplicate: bool = False) -> pd.Series | pd.DataFrame:
        """Approve a call of this kind held for a second person and send it exactly as
        prepared: what :meth:`paynb.Client.approve` does (see there) once it has found
        the approval's kind."""
        return cast("pd.Series | pd.DataFrame", self._sender.approve(
            approval_id, self._command, given={"tot_password": tot_password},
            new_authorization=new_authorization, allow_duplicate=allow_duplicate))

    #: The request fields a held call does not keep, each with the argument of
    #: :meth:`approve` that gives it then (an instant card payment's one-time password:
    #: stale by the time a colleague approves, and a secret in a shared database).
    approver_supplies: ClassVar[Mapping[str, str]] = {}

    def _command(self, operation: str, request: dict[str, Any]) -> Command:
        """The command of ``operation`` made of ``request`` (what the call prepared, or
        what its hold kept): the one way this kind's write calls are sent."""
        raise NotImplementedError(f"{self.kind} holds no {operation} for approval")

    def _submission(self, operation: str, request: dict[str, Any],
                    deliver: Callable[[Delivery], Any],
                    check: Callable[[Approver | None], None] | None = None, *,
                    guarded: bool = False) -> Command:
        """The command of a submission of ``request["bodies"]``: journaled by their
        reference numbers, held by their amounts."""
        bodies: list[dict[str, Any]] = request["bodies"]
        return Command(operation, [body.get("yourReferenceNumber") for body in bodies],
                       request, deliver, check=check, summary=bodies,
                       weigh=lambda policy: ([amount_of(body) for body in bodies], bodies),
                       allow_duplicate=request["allow_duplicate"], guarded=guarded,
                       supplied=dict(self.approver_supplies))

    def _post(self, operation: str, request: dict[str, Any],
              check: Callable[[Approver | None], None] | None = None, *,
              guarded: bool = False) -> Command:
        """The command that POSTs one new item or payment (``request["bodies"]``' one
        body) to the kind's path; it returns the stored record as a Series."""
        path = self._path()

        def deliver(delivery: Delivery) -> pd.Series:
            (body,) = request["bodies"]  # as the check and the approver left it
            record = delivery.call(delivery.entries,
                                   lambda: self._record("POST", path, body=body))
            delivery.answered(delivery.entries, [record])
            row = self._row(record)
            warn_not_accepted([row], self.kind, self.id_field)
            return row

        return self._submission(operation, request, deliver, check, guarded=guarded)
