"""ACH and RCC items: one implementation, two sets of names and paths (spec 4.1, 4.2)."""

from __future__ import annotations

import builtins  # `list` is a method of ItemResource: its annotations name the type
import logging
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar

from paynb._args import positive_int, status_codes
from paynb._checks import check_rows, columns_of_frame
from paynb._coerce import missing, parse_decimal
from paynb._warn import user_stacklevel
from paynb.codes import STATUS_NAMES
from paynb.errors import (
    ESCAPE_HATCH,
    BadRequestError,
    BulkRejectedError,
    NotFoundError,
    PaynbWarning,
    SubmissionNotAcceptedWarning,
    ValidationError,
)
from paynb.journal import NOT_ACCEPTED, VOIDS_BY_ID, Approval
from paynb.models import Advisory, BulkRequest, RequestModel, VoidByReferences, check
from paynb.nacha import Verdict
from paynb.resources._base import (
    Resource,
    as_mapping,
    chunked,
    date_range,
    failure_state,
    fetch_list,
    frame_rows,
    id_of,
    wire_body,
)
from paynb.resources._feed import CHANGE_STATUSES, ChangeFeed

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ItemResource"]

logger = logging.getLogger("paynb.resources")

#: Largest bulk request sent at once (the sandbox takes at most 1000 items).
BULK_CHUNK = 1000
_ROW_KEY = re.compile(r"^(?:items)?\[(\d+)\]\.?(.*)$")
#: The service's fields that say why an item is not accepted.
_REASON_FIELDS = ("itemStatusDescription", "returnReason", "returnMessage", "errors")
#: Distinct advisories of one bulk submission warned about one by one; the rest are counted.
_MAX_BULK_WARNINGS = 10


def _reasons(record: Mapping[str, Any]) -> dict[str, Any]:
    """The service's reason fields of a record that are filled in."""
    found = {}
    for field in _REASON_FIELDS:
        value = id_of(record, field)
        if not missing(value) and value not in ("", [], {}):
            found[field] = value
    return found


def _warn_advisories(advice: list[tuple[int | None, Advisory]]) -> None:
    """One warning per distinct advisory, naming the rows it applies to (bulk)."""
    grouped: dict[tuple[str, str, type[Warning]], list[int]] = {}
    for row, advisory in advice:
        rows = grouped.setdefault((advisory.field, advisory.message, advisory.category), [])
        if row is not None:
            rows.append(row)
    for number, ((field, message, category), rows) in enumerate(grouped.items()):
        if number == _MAX_BULK_WARNINGS:
            warnings.warn(f"{len(grouped) - number} more kinds of advisories; see "
                          "client.<kind>.check_many()", category, stacklevel=user_stacklevel())
            break
        where = f" (rows {', '.join(map(str, rows[:20]))}{', ...' if len(rows) > 20 else ''})" \
            if rows else ""
        warnings.warn(f"{field}: {message}{where}; sent anyway (docs/validation.md)", category,
                      stacklevel=user_stacklevel())


def _tell(on_chunk: Callable[[int, int], None] | None, answered: int, requests: int) -> None:
    # The caller's progress display must not break a submission half sent.
    if on_chunk is None:
        return
    try:
        on_chunk(answered, requests)
    except Exception:
        logger.exception("bulk: the on_chunk callback failed (the submission goes on)")


def _records_of(items: Any) -> list[Any]:
    """The rows of a DataFrame or of a list of mappings/models, as given."""
    if hasattr(items, "to_dict") and hasattr(items, "columns"):
        records: list[Any] = items.to_dict("records")
        return records
    if isinstance(items, Mapping | str | bytes) or not isinstance(items, Iterable):
        raise ValidationError.for_argument("items", "must be a DataFrame or a list of mappings")
    return list(items)


def _rows_of(items: Any) -> list[dict[str, Any]]:
    """The rows of a DataFrame (:func:`frame_rows`) or of a list of mappings/models
    (:func:`as_mapping`), as plain dicts."""
    if hasattr(items, "to_dict") and hasattr(items, "columns"):
        return frame_rows(items)
    return [as_mapping(record, f"items[{n}]") for n, record in enumerate(_records_of(items))]


def _reference(value: Any, argument: str) -> str:
    """One reference number to void by: text, or a whole number (numpy ones too) as text.

    ``None``, ``NaN`` and other values are refused rather than sent as ``"None"``.
    """
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise ValidationError.for_argument(
            argument, "must be a reference number (text or a whole number), "
                      "not a missing value or another type")
    return str(value)


class _FrameRows(Sequence[dict[str, Any]]):
    """The rows of a DataFrame as ``submit_many`` reads them, built only when asked for
    (the column checks need only the rows they leave to the models)."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self._frame = frame
        self._keys = list(frame.columns)

    def __len__(self) -> int:
        return len(self._frame)

    def __getitem__(self, n: Any) -> Any:
        values = self._frame.iloc[n].tolist()
        return as_mapping(dict(zip(self._keys, values, strict=True)), f"items[{n}]")


class _MappedRows(Sequence[dict[str, Any]]):
    """Rows read as ``submit_many`` reads them (:func:`as_mapping`), each when asked for."""

    def __init__(self, records: list[Any]) -> None:
        self._records = records

    def __len__(self) -> int:
        return len(self._records)

    def __getitem__(self, n: Any) -> Any:
        return as_mapping(self._records[n], f"items[{n}]")


def _errors_by_row(errors: Mapping[str, list[str]]) -> dict[int, dict[str, list[str]]]:
    """``{"items[3].amount": [...]}`` (or ``[3].amount``) as ``{3: {"amount": [...]}}``."""
    rows: dict[int, dict[str, list[str]]] = {}
    for key, messages in errors.items():
        match = _ROW_KEY.match(key.strip())
        if match is None:
            continue
        rows.setdefault(int(match.group(1)), {}).setdefault(match.group(2) or "item", []) \
            .extend(messages)
    return rows


class ItemResource(Resource):
    """ACH or RCC items of the client's company: list, get, submit, void, export, poll."""

    model: ClassVar[type[RequestModel]]
    bulk_model: ClassVar[type[BulkRequest]]
    void_ids_model: ClassVar[type[RequestModel]]
    #: Last path segment of the void by ids (``achitemids`` / ``rccitemids``).
    void_ids_segment: ClassVar[str]
    #: Path prefix of the bulk submission (the spec writes ``/apiv3`` for RCC's).
    bulk_prefix: ClassVar[str] = "/api/v3"
    range_fields: ClassVar[dict[str, str]] = {
        "returned": "returnDate", "received": "receivedDateTime", "settled": "settleDate"}
    server_filters = frozenset({"status", "returned"})

    # ------------------------------------------------------------------ reading

    def list(self, status: str | Iterable[str] | None = None, returned_from: Any = None,
             returned_to: Any = None, *, received_from: Any = None, received_to: Any = None,
             settled_from: Any = None, settled_to: Any = None, page: int | None = None,
             page_size: int | None = None, max_items: int | None = None,
             progress: bool | None = None) -> pd.DataFrame:
        """Items as a DataFrame, every page of them unless ``page`` is given.

        Filters the service documents a query parameter for (spec 4.5) are **sent**;
        the others are **applied here**, to the records that come back. Every range
        takes dates, datetimes or ISO text (UTC when zone-less); a bare date as the
        ``_to`` end takes in that whole day; a range whose start is after its end is a
        :class:`~paynb.errors.ValidationError` naming both arguments.

        Args:
            status: one status code or several (``"R"``, ``["B", "I", "R"]``; names
                like ``"Returned"`` work too). Sent as repeated ``itemStatus``.
            returned_from, returned_to: range of ``returnDate``. Sent as
                ``returnDateStart``/``returnDateEnd`` (``2026-11-01T00:00:00.000``, UTC).
            received_from, received_to: range of ``receivedDateTime``, when the item
                was submitted. Applied here (the service documents no parameter).
            settled_from, settled_to: range of ``settleDate``. Applied here (the
                service documents no parameter). Items without the date (not yet
                settled) are left out.
            page: fetch only this zero-based page.
            page_size: records per page (default: the client's ``page_size``).
            max_items: stop after this many records, counted before the filters
                applied here.
            progress: False hides the progress bar shown for lists of several pages.

        ``frame.attrs`` holds the envelope's totals of the whole list the service
        matched (not only the rows fetched when ``page`` or ``max_items`` is given):
        ``total`` (an int), ``creditAmount`` and ``debitAmount`` (exact ``Decimal``),
        each when the service sent it.
        """
        filters = self._filters(status, returned_from=returned_from, returned_to=returned_to,
                                received_from=received_from, received_to=received_to,
                                settled_from=settled_from, settled_to=settled_to)
        return self._filtered_list(filters, page=page, page_size=page_size,
                                   max_items=max_items, progress=progress)

    def get(self, item_id: int) -> pd.Series:
        """One item by its id."""
        item_id = positive_int(item_id, "item_id")
        return self._row(self._record("GET", self._path(f"/{item_id}")))

    # ------------------------------------------------------------------ submitting

    def submit(self, item: Any, *, allow_duplicate: bool = False, validate: bool = True,
               new_authorization: bool = False) -> pd.Series | Approval:
        """Submit one item; returns the stored item as the service answered it.

        ``item`` is a mapping (camelCase or snake_case names), a pandas Series or
        a :mod:`paynb.models` instance; every field of the service's documented
        request may be given (``sameDayAchRequested``, ``achCompanyEntryDescription``,
        ``achEffectiveDate``, ``iatAddenda`` ...). It is checked before anything is
        sent: :class:`~paynb.errors.ValidationError` names every field that is
        certainly wrong and the rule it breaks; ``validate=False`` sends it as given
        and leaves the checking to the service (docs/validation.md). What is only
        unusual (an unknown account type, an effective date in the past) is sent
        with a :class:`~paynb.errors.PaynbWarning`.

        The status in the answer says what happens next: ``W`` (waiting) is the only
        one that means the item goes ahead. ``I`` (invalid) or ``B`` (blocked: state,
        routing or account restrictions) means it is stored and locked and will not
        be processed: a :class:`~paynb.errors.SubmissionNotAcceptedWarning` names the
        status and the service's reasons, and the journal records the entry
        ``invalid`` or ``blocked`` (not ``sent``). A reference
        number already in the journal for this company is refused with
        :class:`~paynb.errors.DuplicateSubmissionError` unless ``allow_duplicate``.
        The POST is sent once: when its answer is lost the journal marks it
        ``unknown`` (see :meth:`paynb.Client.reconcile`).

        ACH entries pass NACHA's submission guards first (:mod:`paynb.compliance`):
        an overdue NOC on the account, a last entry returned for a reason that needs a
        new authorization, or a reinitiation over its limits raises
        :class:`~paynb.errors.SubmissionRefusedError` with nothing sent;
        ``new_authorization=True`` says the receiver authorized again (recorded in the
        journal). A reinitiation gets company entry description ``RETRY PYMT``.

        When the client's dual control asks for a second person (an amount over its
        limit), nothing is sent: the item is recorded as awaiting approval and an
        :class:`~paynb.journal.Approval` is returned; :meth:`paynb.Client.approve` by
        another analyst sends it exactly as prepared.
        """
        body = wire_body(self.model, as_mapping(item, "item"), validate=validate)
        self._guard({0: body}, new_authorization=new_authorization, all_or_nothing=True)
        if validate:
            _warn_advisories([(None, a) for a in self.model.model_validate(body).advisories()])
        held = self._hold_submission("submit", [body], {
            "bodies": [body], "allow_duplicate": allow_duplicate,
            "new_authorization": new_authorization}, allow_duplicate=allow_duplicate)
        if held is not None:
            return held
        row = self._post_one("submit", body, allow_duplicate=allow_duplicate)
        self._warn_not_accepted([row])
        return row

    def _guard(self, bodies: dict[int, dict[str, Any]], *, new_authorization: bool,
               all_or_nothing: bool, overrides_by: str | None = None) -> dict[int, Verdict]:
        """NACHA's submission guards on ``bodies`` (``context.guard``; none: unjudged)."""
        guard = self.context.guard
        if guard is None:
            return {}
        return guard.guard_submission(self.kind, bodies, new_authorization=new_authorization,
                                      all_or_nothing=all_or_nothing, overrides_by=overrides_by)

    def _before_approved(self, found: Approval, request: Mapping[str, Any], *,
                         new_authorization: bool) -> Mapping[str, Any]:
        """NACHA's guards judge a held submission again, as they would a direct one: a NOC
        or a return that came in since it was prepared refuses it, the approval still
        waiting (``new_authorization=True`` by the approver overrides what that overrides
        for a direct submit, recorded as the approver's). Every entry must pass, a bulk's
        too: an approval sends what was prepared or nothing. The preparer's own
        ``new_authorization`` still holds (their overrides recorded once). A change the
        guards make (``RETRY PYMT`` on what became a reinitiation) is sent, as it would be."""
        if found.operation not in ("submit", "submit_many"):
            return super()._before_approved(found, request, new_authorization=new_authorization)
        prepared = bool(request.get("new_authorization"))
        bodies = {n: dict(body) for n, body in enumerate(request["bodies"])}
        self._guard(bodies, new_authorization=prepared or new_authorization,
                    all_or_nothing=True,
                    overrides_by=self.context.user if new_authorization else found.prepared_by)
        return {**request, "bodies": [bodies[n] for n in sorted(bodies)]}

    def _warn_not_accepted(self, records: Iterable[Mapping[str, Any]], *,
                           total: int | None = None) -> None:
        """A :class:`~paynb.errors.SubmissionNotAcceptedWarning` when the service answered
        items with ``I`` or ``B``: stored, but they will not be processed."""
        refused = [record for record in records
                   if str(id_of(record, "itemStatus") or "").upper() in NOT_ACCEPTED]
        if not refused:
            return
        lines = []
        for record in refused[:5]:
            status = str(id_of(record, "itemStatus")).upper()
            reasons = _reasons(record)
            said = "; ".join(f"{k}: {v}" for k, v in reasons.items()) or "no reason given"
            lines.append(f"reference {id_of(record, 'yourReferenceNumber')}, item "
                         f"{id_of(record, self.id_field)}: status {status} "
                         f"({STATUS_NAMES[status]}) - {said}")
        first = refused[0]
        status = str(id_of(first, "itemStatus")).upper()
        count = (f"{len(refused)} of {total} items were" if total is not None
                 else f"the {self.kind.upper()} item was")
        more = f"; and {len(refused) - 5} more" if len(refused) > 5 else ""
        message = (f"{count} answered I (invalid) or B (blocked), not W: stored but will not "
                   f"be processed (the journal records them invalid/blocked). "
                   f"{' | '.join(lines)}{more}")
        warnings.warn(SubmissionNotAcceptedWarning(
            message, status=status, reasons=_reasons(first),
            reference_number=id_of(first, "yourReferenceNumber"),
            item_id=id_of(first, self.id_field)), stacklevel=user_stacklevel())

    def _settle_records(self, entries: Any, records: Any) -> None:
        """Settle each entry with its answer: ``invalid``/``blocked`` for an item answered
        ``I``/``B`` (stored, never processed), else as every resource does."""
        journal = self.context.journal
        if journal is None:
            return
        plain_entries, plain_records, outcomes = [], [], []
        for entry, record in zip(entries, records, strict=True):
            status = str(id_of(record, "itemStatus") or "").upper() if record else ""
            if status in NOT_ACCEPTED:
                errors = id_of(record, "errors")
                detail = "; ".join(f"{k}: {v}" for k, v in _reasons(record).items()) or None
                outcomes.append((entry, NOT_ACCEPTED[status], id_of(record, self.id_field),
                                 status, detail if errors is None else str(errors)))
            else:
                plain_entries.append(entry)
                plain_records.append(record)
        self._record_outcomes(outcomes)
        if plain_entries:
            super()._settle_records(plain_entries, plain_records)

    def _check_rows(self, rows: builtins.list[dict[str, Any]]
                    ) -> tuple[dict[int, dict[str, Any]], dict[int, dict[str, builtins.list[str]]]]:
        """Wire bodies of the valid rows and errors of the others, in one validation pass."""
        # Row by row rather than one TypeAdapter over the list: a list's error aborts the
        # whole list, and validating the good rows again made one bad row double the time.
        bodies, bad, _ = self._check_rows_advice(rows)
        return bodies, bad

    def _check_rows_advice(
            self, rows: builtins.list[dict[str, Any]],
    ) -> tuple[dict[int, dict[str, Any]], dict[int, dict[str, builtins.list[str]]],
               builtins.list[tuple[int | None, Advisory]]]:
        """:meth:`_check_rows`, plus the advisories of the valid rows."""
        checked = check_rows(self.model, rows)
        return checked.bodies, checked.errors, checked.advice

    def check_many(self, items: Any) -> pd.DataFrame:
        """Check many items without sending anything: one verdict per row, in input order.

        ``items`` is what :meth:`submit_many` takes (a DataFrame or a list of
        mappings). Each row is judged exactly as :meth:`submit` would judge it
        alone, with the same messages; the columns are checked column by column
        (lengths, patterns, the routing checksum, known values, amounts) and only
        the rows they cannot vouch for go through the models one by one, so a
        100,000-row file is checked in well under a second.

        Returns:
            A DataFrame with the input's index: ``valid`` (bool), ``errors``
            (``{"field": ["message", ...]}`` for an invalid row, else ``None``) and
            ``advisories`` (a tuple of ``"field: message"``: what is unusual about a
            valid row and is sent with a warning; empty when nothing is).
        """
        import numpy as np
        import pandas as pd

        if hasattr(items, "to_dict") and hasattr(items, "columns"):
            frame = items
            checked = check_rows(self.model, _FrameRows(frame), bodies=False,
                                 frame_columns=columns_of_frame(self.model, frame))
            index = frame.index
        else:
            records = _records_of(items)
            checked = check_rows(self.model, _MappedRows(records), raw_rows=records,
                                 bodies=False)
            index = pd.RangeIndex(len(records))
        n = len(index)
        # Tuples: one shared empty tuple for the (many) rows without advisories.
        advice: builtins.list[tuple[str, ...]] = [()] * n
        for row, advisory in checked.advice:
            if row is not None:
                advice[row] = (*advice[row], f"{advisory.field}: {advisory.message}")
        errors: builtins.list[Any] = [None] * n
        valid = np.ones(n, dtype=bool)
        for row, fields in checked.errors.items():
            errors[row] = fields
            valid[row] = False
        return pd.DataFrame({"valid": valid, "errors": errors, "advisories": advice},
                            index=index)

    def submit_many(self, items: Any, *, commit_valid: bool = True,
                    allow_duplicate: bool = False, validate: bool = True,
                    on_chunk: Callable[[int, int], None] | None = None,
                    new_authorization: bool = False) -> pd.DataFrame:
        """Submit several items in bulk; one result row per input row, in input order.

        ``items`` is a DataFrame or a list of mappings. Every row is checked first,
        in one pass. The result has the columns of :meth:`list` (the stored item:
        id, ``itemStatus`` ``W``) plus ``errors``: for a row the service found
        invalid, its ``I`` entry and the service's errors; for a row that failed
        paynb's own checks, ``itemStatus`` ``I``, no id and the errors -- such a
        row is not sent.

        Rows answered ``I`` or ``B`` by the service are stored but will not be
        processed: one :class:`~paynb.errors.SubmissionNotAcceptedWarning` names them,
        and the journal records them ``invalid`` or ``blocked``. Advisories of valid
        rows (an unknown entry class, a past effective date) are warned once each,
        naming the rows.

        ``commit_valid=True`` (the service's ``alwaysCommitValid``) stores the
        valid items. ``commit_valid=False`` is all or nothing: when any row is
        invalid, nothing is sent and :class:`~paynb.errors.BulkRejectedError`
        lists the bad rows. Inputs larger than one request (1000 items) are sent
        in several requests, one after the other; the service's all-or-nothing
        holds *per request*, which is why every row is checked before the first
        request leaves. (``validate=False`` skips paynb's checks and sends the rows
        as given: the service then judges them, request by request.)

        The journal refuses rows whose reference number it already holds
        (:class:`~paynb.errors.DuplicateSubmissionError`, nothing sent) unless
        ``allow_duplicate``.

        ``on_chunk(answered, requests)`` is called before the first request
        (``answered`` 0) and after each answered one, so that a caller can show
        progress; an exception it raises is logged, never stops the submission.

        ACH rows pass NACHA's submission guards (see :meth:`submit`), each row on its
        own: the result's ``guard`` column holds each row's verdict; a refused row is
        not sent (``itemStatus`` ``I``, the reasons in ``errors``), and with
        ``commit_valid=False`` any refusal raises
        :class:`~paynb.errors.SubmissionRefusedError` with nothing sent.
        """
        if on_chunk is not None and not callable(on_chunk):
            raise ValidationError.for_argument(
                "on_chunk", "must be a function of (answered, requests) or None")
        # The bulk model's rule: anything else reached the service as alwaysCommitValid.
        choice, problems = check(BulkRequest, {"alwaysCommitValid": commit_valid})
        if choice is None:
            raise ValidationError.for_argument("commit_valid", problems["alwaysCommitValid"][0])
        commit_valid = choice.always_commit_valid
        rows = _rows_of(items)
        if not rows:
            raise ValidationError.for_argument("items", "must hold at least one item")
        if validate:
            bodies, bad, advice = self._check_rows_advice(rows)
            _warn_advisories(advice)
        else:
            bodies = {n: wire_body(self.model, row, validate=False, where=f"items[{n}].")
                      for n, row in enumerate(rows)}
            bad = {}
        path = self._path("/many", prefix=self.bulk_prefix)
        if bad and not commit_valid:
            raise BulkRejectedError(
                f"{len(bad)} of {len(rows)} rows are invalid (rows "
                f"{', '.join(str(n) for n in sorted(bad)[:20])}"
                f"{', ...' if len(bad) > 20 else ''}); nothing was sent. {ESCAPE_HATCH}",
                rows=bad, status=None, method="POST", path=path,
                errors={f"items[{n}].{field}": messages for n, fields in bad.items()
                        for field, messages in fields.items()})
        verdicts = self._guard(bodies, new_authorization=new_authorization,
                               all_or_nothing=not commit_valid)
        results: builtins.list[dict[str, Any] | None] = [None] * len(rows)
        for n, verdict in verdicts.items():
            if not verdict.allowed:
                results[n] = {"yourReferenceNumber": rows[n].get("yourReferenceNumber"),
                              "itemStatus": "I", "errors": {"guard": verdict.reasons},
                              "itemStatusDescription": "not sent: refused by paynb's guards"}
        for n, errors in bad.items():
            results[n] = {"yourReferenceNumber": rows[n].get("yourReferenceNumber"),
                          "itemStatus": "I", "errors": errors,
                          "itemStatusDescription": "not sent: failed paynb's checks"}
        order = sorted(bodies)
        if order:
            held = self._hold_submission(
                "submit_many", [bodies[n] for n in order],
                {"bodies": [bodies[n] for n in order], "rows": order,
                 "commit_valid": commit_valid, "allow_duplicate": allow_duplicate,
                 "new_authorization": new_authorization},
                allow_duplicate=allow_duplicate)
            if held is not None:
                if len(order) < len(rows):
                    warnings.warn(PaynbWarning(
                        f"{len(rows) - len(order)} of {len(rows)} rows failed paynb's checks "
                        f"or guards and are not part of approval {held.id} (they would not "
                        "have been sent either)"), stacklevel=user_stacklevel())
                return held
            self._send_bulk(order, bodies, results, path, commit_valid=commit_valid,
                            allow_duplicate=allow_duplicate, on_chunk=on_chunk)
        # Only rows the service answered: those paynb refused itself were never sent.
        refused = {n for n, verdict in verdicts.items() if not verdict.allowed}
        sent = [r for n, r in enumerate(results)
                if r is not None and n not in bad and n not in refused]
        self._warn_not_accepted(sent, total=len(rows))
        frame = self._bulk_frame(results)
        if verdicts:
            frame["guard"] = [str(verdicts[n]) if n in verdicts else None
                              for n in range(len(rows))]
        return frame

    def _bulk_frame(self, results: builtins.list[dict[str, Any] | None]) -> pd.DataFrame:
        """The frame of a bulk's answers, one row per input row, with ``errors``."""
        frame = self._frame([r if r is not None else {} for r in results])
        if "errors" not in frame.columns:
            frame["errors"] = None
        return frame

    def _send_bulk(self, order: builtins.list[int], bodies: dict[int, dict[str, Any]],
                   results: builtins.list[dict[str, Any] | None], path: str, *, commit_valid: bool,
                   allow_duplicate: bool, on_chunk: Callable[[int, int], None] | None = None,
                   reserved: builtins.list[int] | None = None) -> None:
        """Send the valid rows ``order`` in chunks, filling ``results`` in place (with the
        journal entries ``reserved`` of an approved bulk, else recorded here)."""
        all_bodies = [bodies[n] for n in order]
        if reserved is None:
            reserved = self._reserve(
                "submit_many", [body.get("yourReferenceNumber") for body in all_bodies],
                allow_duplicate=allow_duplicate, summary=all_bodies)
        # Each chunk is settled with its outcome; on a failure, the chunks not yet sent
        # are settled "failed" before the error goes up.
        chunks = chunked(order, BULK_CHUNK)
        _tell(on_chunk, 0, len(chunks))
        for number, positions in enumerate(chunks):
            chunk = [order[p] for p in positions]
            entries = [reserved[p] for p in positions] if reserved else []
            body = {"alwaysCommitValid": commit_valid, "items": [bodies[n] for n in chunk]}
            try:
                records = self._records("POST", path, body=body)
            except BaseException as exc:
                self._settle(entries, failure_state(exc), detail=str(exc))
                later = [reserved[p] for rest in chunks[number + 1:] for p in rest] \
                    if reserved else []
                self._settle(later, "failed", detail="not sent: an earlier bulk request failed")
                if number:
                    logger.warning("bulk: %d of %d requests were answered before this one "
                                   "failed; see client.journal()", number, len(chunks))
                if isinstance(exc, BadRequestError) and not commit_valid:
                    rows = {chunk[k]: fields for k, fields in _errors_by_row(exc.errors).items()
                            if k < len(chunk)}
                    raise BulkRejectedError(
                        str(exc.args[0]), rows=rows, status=exc.status, method=exc.method,
                        path=exc.path, title=exc.title, detail=exc.detail, errors=exc.errors,
                        body=exc.body) from None
                raise
            matched = self._match(chunk, records, bodies)
            for n, record in zip(chunk, matched, strict=True):
                results[n] = record
            if entries:
                self._settle_records(entries, matched)
            _tell(on_chunk, number + 1, len(chunks))

    @staticmethod
    def _match(chunk: builtins.list[int], records: builtins.list[dict[str, Any]],
               bodies: dict[int, dict[str, Any]]) -> builtins.list[dict[str, Any] | None]:
        """The answer entry of each row: by position, else by reference number."""
        if len(records) == len(chunk):
            return list(records)
        logger.warning("bulk answer holds %d entries for %d items; matching by reference",
                       len(records), len(chunk))
        by_reference: dict[Any, dict[str, Any]] = {}
        for record in records:
            by_reference.setdefault(id_of(record, "yourReferenceNumber"), record)
        return [by_reference.get(bodies[n].get("yourReferenceNumber")) for n in chunk]

    # ------------------------------------------------------------------ voiding

    def void(self, item_id: int) -> pd.Series | Approval:
        """Void one item (only a waiting item can be voided); returns the item after it.

        When the client's dual control asks for a second person for this void, nothing
        is sent: an :class:`~paynb.journal.Approval` is returned (see :meth:`submit`).
        """
        item_id = positive_int(item_id, "item_id")
        held = self._hold_void("void", [item_id], {"item_id": item_id})
        if held is not None:
            return held
        return self._void_one(item_id)

    def _void_one(self, item_id: int, entries: builtins.list[int] | None = None) -> pd.Series:
        path = self._path(f"/{item_id}/void")
        record, entries = self._journaled("void", [item_id],
                                          lambda: self._record("PUT", path), entries=entries)
        self._settle_records(entries, [record])
        return self._row(record)

    def _hold_void(self, operation: str, keys: builtins.list[Any],
                   request: Mapping[str, Any]) -> Approval | None:
        """:meth:`_hold` for a void, judged by the amounts of its items (looked up first,
        unless the policy holds every void or none)."""
        policy = self.context.dual_control
        if policy is None or policy.void_over is None:
            return None
        by_id = operation in VOIDS_BY_ID
        amounts = [None] * len(keys) if policy.void_over == 0 else \
            [self._amount_to_void(key, by_id=by_id) for key in keys]
        label = "itemId" if by_id else "yourReferenceNumber"
        return self._hold(operation, keys, [{label: key, "amount": amount}
                                            for key, amount in zip(keys, amounts, strict=True)],
                          amounts, request)

    def _amount_to_void(self, key: Any, *, by_id: bool) -> Decimal | None:
        """The amount of the item a void names (its id or reference), ``None`` when it
        cannot be found."""
        try:
            if by_id:
                return parse_decimal(self.get(key).get("amount"))
            listed = fetch_list(self, [("yourReferenceNumber", key)], progress=False)
        except NotFoundError:
            return None
        if listed.empty:
            return None
        # Only the item of that reference, whether the service filtered the list or not.
        mine = listed[listed["yourReferenceNumber"].astype("string") == str(key)]
        amounts = [parse_decimal(value) for value in mine["amount"]]
        known = [amount for amount in amounts if amount is not None]
        return sum(known, Decimal(0)) if known else None

    def _void_several(self, operation: str, suffix: str, field: str, values: builtins.list[Any],
                      keys: builtins.list[Any], key_field: str,
                      entries: builtins.list[int] | None = None) -> pd.DataFrame:
        path = self._path(suffix)
        body = {field: values}
        records, entries = self._journaled(operation, keys,
                                           lambda: self._records("PUT", path, body=body),
                                           entries=entries)
        if entries:
            by_key = {str(id_of(record, key_field)): record for record in records}
            self._settle_records(entries, [by_key.get(str(key)) for key in keys])
        return self._frame(records)

    def void_many(self, item_ids: Iterable[int]) -> pd.DataFrame | Approval:
        """Void several items by id; one row per voided item (an
        :class:`~paynb.journal.Approval` when dual control holds the void)."""
        if isinstance(item_ids, str | bytes) or not isinstance(item_ids, Iterable):
            raise ValidationError.for_argument("item_ids", "must be a list of item ids")
        ids = [positive_int(value, f"item_ids[{n}]") for n, value in enumerate(item_ids)]
        body = wire_body(self.void_ids_model, {self._ids_field: ids}, validate=True)
        held = self._hold_void("void_many", ids, {"item_ids": ids})
        if held is not None:
            return held
        return self._void_ids(ids, body)

    def _void_ids(self, ids: builtins.list[int], body: Mapping[str, Any],
                  entries: builtins.list[int] | None = None) -> pd.DataFrame:
        return self._void_several("void_many", f"/void/{self.void_ids_segment}",
                                  self._ids_field, body[self._ids_field], ids, self.id_field,
                                  entries)

    def void_references(self, reference_numbers: Iterable[str]) -> pd.DataFrame | Approval:
        """Void several items by your reference numbers; one row per voided item (an
        :class:`~paynb.journal.Approval` when dual control holds the void).

        Each reference number is text or a whole number; a missing value (``None``,
        ``NaN``), an empty text or any other type raises
        :class:`~paynb.errors.ValidationError` naming ``reference_numbers[n]``
        before anything is sent.
        """
        if isinstance(reference_numbers, str | bytes) or not isinstance(reference_numbers,
                                                                        Iterable):
            raise ValidationError.for_argument(
                "reference_numbers", "must be a list of reference numbers")
        refs = [_reference(ref, f"reference_numbers[{n}]")
                for n, ref in enumerate(reference_numbers)]
        valid, errors = check(VoidByReferences, {"referenceNumbers": refs})
        if valid is None:
            # Named after the argument, like the checks above: referenceNumbers[2] is
            # reference_numbers[2] to the caller.
            raise ValidationError({key.replace("referenceNumbers", "reference_numbers", 1): m
                                   for key, m in errors.items()})
        wire = valid.to_wire()["referenceNumbers"]
        held = self._hold_void("void_references", refs, {"references": refs, "wire": wire})
        if held is not None:
            return held
        return self._void_several("void_references", "/void/referencenumbers",
                                  "referenceNumbers", wire, refs, "yourReferenceNumber")

    # ------------------------------------------------------------------ approved calls

    def _send_approved(self, operation: str, request: Mapping[str, Any],
                       entries: builtins.list[int]) -> pd.Series | pd.DataFrame:
        """Send a held call that another analyst approved, exactly as prepared."""
        if operation == "submit":
            (body,) = request["bodies"]
            row = self._post_one("submit", body, allow_duplicate=request["allow_duplicate"],
                                 entries=entries)
            self._warn_not_accepted([row])
            return row
        if operation == "submit_many":
            bodies = dict(enumerate(request["bodies"]))
            results: builtins.list[dict[str, Any] | None] = [None] * len(bodies)
            self._send_bulk(list(bodies), bodies, results,
                            self._path("/many", prefix=self.bulk_prefix),
                            commit_valid=request["commit_valid"],
                            allow_duplicate=request["allow_duplicate"], reserved=entries)
            self._warn_not_accepted([r for r in results if r is not None], total=len(results))
            frame = self._bulk_frame(results)
            frame.insert(0, "row", request["rows"])  # the rows of the input it was prepared from
            return frame
        if operation == "void":
            return self._void_one(request["item_id"], entries)
        if operation == "void_many":
            ids = request["item_ids"]
            body = wire_body(self.void_ids_model, {self._ids_field: ids}, validate=True)
            return self._void_ids(ids, body, entries)
        if operation == "void_references":
            return self._void_several("void_references", "/void/referencenumbers",
                                      "referenceNumbers", request["wire"],
                                      request["references"], "yourReferenceNumber", entries)
        return super()._send_approved(operation, request, entries)

    @property
    def _ids_field(self) -> str:
        (name,) = self.void_ids_model.wire_names().values()
        return name

    # ------------------------------------------------------------------ polling

    def changes(self, since: Any = "last", until: Any = None, *,
                status: str | Iterable[str] | None = None, received_from: Any = None,
                received_to: Any = None, settled_from: Any = None,
                settled_to: Any = None, progress: bool | None = None) -> pd.DataFrame:
        """Items that became blocked, invalid or returned: the polling call (spec 4.5).

        Asks for ``itemStatus`` B, I and R by return date. ``since="last"`` (the
        default) continues from the previous poll of this company and kind
        (remembered in the journal, or by this client without one) and returns
        only changes not reported before; the first poll returns them all.
        A date, datetime or ISO text for ``since`` returns every change from
        then on (``None``: since ever). ``until`` bounds the return date; an
        ``until`` before ``since`` is an error naming both.

        ``status`` narrows B, I, R to some of them (sent as ``itemStatus``); the
        received and settled ranges are applied here, as in :meth:`list`. A change
        that a filter leaves out is not marked as reported, so a later poll
        without it still returns it. ``progress=False`` hides the progress bar, as
        in :meth:`list`.
        """
        statuses = list(CHANGE_STATUSES)
        if status is not None:
            statuses = status_codes(status, self.kind)
            other = [code for code in statuses if code not in CHANGE_STATUSES]
            if other:
                raise ValidationError.for_argument(
                    "status", f"holds {', '.join(other)}: changes() reports "
                              f"{', '.join(CHANGE_STATUSES)} only")
        context = self.context
        feed = ChangeFeed(context.watermark(self.kind))
        if isinstance(since, str) and since == "last":
            start = feed.start()
        else:
            start = since
            date_range(since, until, "since", "until")
        filters = self._filters(statuses, returned_from=start, returned_to=until,
                                received_from=received_from, received_to=received_to,
                                settled_from=settled_from, settled_to=settled_to)
        frame = self._filtered_list(filters, page=None, page_size=None, max_items=None,
                                    progress=progress)
        keys = list(zip(frame[self.id_field].tolist(), frame["itemStatus"].astype(str).tolist(),
                        frame["returnDate"].tolist(), strict=True))
        seen = context.seen_changes(self.kind, keys)
        context.mark_seen(self.kind, [key for key in keys if key not in seen])
        # A narrowed poll leaves the watermark alone: the changes it left out are older
        # than its newest one and must still be found by the next poll.
        moved = None if filters.local or status is not None else \
            feed.advance(frame["returnDate"])
        if moved is not None:
            context.set_watermark(self.kind, moved)
        if isinstance(since, str) and since == "last" and seen:
            fresh = [key not in seen for key in keys]
            frame = frame[fresh].reset_index(drop=True)
        return frame

