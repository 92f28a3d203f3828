"""ACH and RCC items: one implementation, two sets of names and paths (spec 4.1, 4.2)."""

from __future__ import annotations

import builtins  # `list` is a method of ItemResource: its annotations name the type
import warnings
from collections.abc import Callable, Iterable
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar, cast

from paynb._args import positive_int, status_codes
from paynb._checks import check_rows
from paynb._coerce import parse_decimal
from paynb._warn import user_stacklevel
from paynb.errors import (
    ESCAPE_HATCH,
    BulkRejectedError,
    NotFoundError,
    PaynbWarning,
    ValidationError,
)
from paynb.journal import VOIDS_BY_ID, Approval
from paynb.models import BulkRequest, RequestModel, VoidByReferences, check
from paynb.nacha import Verdict
from paynb.resources._base import Resource, as_mapping, wire_body
from paynb.resources._bulk import check_many, rows_of, send_bulk, warn_advisories
from paynb.resources._feed import CHANGE_STATUSES, ChangeFeed
from paynb.resources._listing import date_range
from paynb.resources._sending import Approver, Command, Delivery, id_of, warn_not_accepted

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["ItemResource"]


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
        return self._list(locals())

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
        command = self._command("submit", {"bodies": [body], "allow_duplicate": allow_duplicate,
                                           "new_authorization": new_authorization})
        if validate:  # what is unusual about the entry as the guards leave it
            command.advise = lambda: warn_advisories(
                [(None, a) for a in self.model.model_validate(body).advisories()])
        return cast("pd.Series | Approval", self._sender.run(command))

    def _guard(self, bodies: dict[int, dict[str, Any]], *, new_authorization: bool,
               all_or_nothing: bool, overrides_by: str | None = None) -> dict[int, Verdict]:
        """NACHA's submission guards on ``bodies`` (``context.guard``; none: unjudged)."""
        guard = self.context.guard
        if guard is None:
            return {}
        return guard.guard_submission(self.kind, bodies, new_authorization=new_authorization,
                                      all_or_nothing=all_or_nothing, overrides_by=overrides_by)

    def _judge(self, request: dict[str, Any]) -> Callable[[Approver | None], None]:
        """NACHA's guards on a submission's bodies, every one of which must pass (a change
        they make, ``RETRY PYMT`` on a reinitiation, is sent). Judged again at approval:
        a NOC or a return that came in since it was prepared refuses it, the approval
        still waiting (``new_authorization=True`` by the approver overrides what that
        overrides for a direct submit, recorded as the approver's); the preparer's own
        ``new_authorization`` still holds (their overrides recorded once)."""
        def judge(approver: Approver | None) -> None:
            bodies = dict(enumerate(request["bodies"]))
            prepared = bool(request.get("new_authorization"))
            if approver is None:
                self._guard(bodies, new_authorization=prepared, all_or_nothing=True)
            else:
                again = approver.new_authorization
                self._guard(bodies, new_authorization=prepared or again, all_or_nothing=True,
                            overrides_by=approver.user if again
                            else approver.approval.prepared_by)
            request["bodies"][:] = [bodies[n] for n in sorted(bodies)]

        return judge

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
        return check_many(self.model, items)

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
        rows = rows_of(items)
        if not rows:
            raise ValidationError.for_argument("items", "must hold at least one item")
        if validate:
            # Row by row rather than one TypeAdapter over the list: a list's error aborts
            # the whole list, and validating the good rows again made one bad row double
            # the time.
            checked = check_rows(self.model, rows)
            bodies, bad = checked.bodies, checked.errors
            warn_advisories(checked.advice)
        else:
            bodies = {n: wire_body(self.model, row, validate=False, where=f"items[{n}].")
                      for n, row in enumerate(rows)}
            bad = {}
        if bad and not commit_valid:
            raise BulkRejectedError(
                f"{len(bad)} of {len(rows)} rows are invalid (rows "
                f"{', '.join(str(n) for n in sorted(bad)[:20])}"
                f"{', ...' if len(bad) > 20 else ''}); nothing was sent. {ESCAPE_HATCH}",
                rows=bad, status=None, method="POST", path=self._bulk_path,
                errors={f"items[{n}].{field}": messages for n, fields in bad.items()
                        for field, messages in fields.items()})
        verdicts = self._guard(bodies, new_authorization=new_authorization,
                               all_or_nothing=not commit_valid)
        # The rows paynb does not send, each with its reasons (as an answer gives them).
        unsent = {**{n: ({"guard": verdict.reasons}, "refused by paynb's guards")
                     for n, verdict in verdicts.items() if not verdict.allowed},
                  **{n: (errors, "failed paynb's checks") for n, errors in bad.items()}}
        results: builtins.list[dict[str, Any] | None] = [None] * len(rows)
        for n, (errors, why) in unsent.items():
            results[n] = {"yourReferenceNumber": rows[n].get("yourReferenceNumber"),
                          "itemStatus": "I", "errors": errors,
                          "itemStatusDescription": f"not sent: {why}"}
        order = sorted(bodies)
        if order:
            request = {"bodies": [bodies[n] for n in order], "rows": order,
                       "commit_valid": commit_valid, "allow_duplicate": allow_duplicate,
                       "new_authorization": new_authorization}
            # The rows were judged above, each on its own: not again as a whole.
            answer = self._sender.run(self._bulk(request, judged=True, on_chunk=on_chunk))
            if isinstance(answer, Approval):
                if len(order) < len(rows):
                    warnings.warn(PaynbWarning(
                        f"{len(rows) - len(order)} of {len(rows)} rows failed paynb's checks "
                        f"or guards and are not part of approval {answer.id} (they would not "
                        "have been sent either)"), stacklevel=user_stacklevel())
                return answer
            for n, record in zip(order, answer, strict=True):
                results[n] = record
        # Only rows the service answered: those paynb refused itself were never sent.
        sent = [r for n, r in enumerate(results) if r is not None and n not in unsent]
        warn_not_accepted(sent, self.kind, self.id_field, total=len(rows))
        frame = self._bulk_frame(results)
        if verdicts:
            frame["guard"] = [str(verdicts[n]) if n in verdicts else None
                              for n in range(len(rows))]
        return frame

    @property
    def _bulk_path(self) -> str:
        return self._path("/many", prefix=self.bulk_prefix)

    def _bulk_frame(self, results: builtins.list[dict[str, Any] | None]) -> pd.DataFrame:
        """The frame of a bulk's answers, one row per input row, with ``errors``."""
        frame = self._frame([r if r is not None else {} for r in results])
        if "errors" not in frame.columns:
            frame["errors"] = None
        return frame

    def _bulk(self, request: dict[str, Any], *, judged: bool = False,
              on_chunk: Callable[[int, int], None] | None = None) -> Command:
        """The command of a bulk submission: its answers, one per body (``judged``: its
        rows were judged while prepared); approved, the bulk's frame with each row's
        ``row`` in the input it was prepared from."""
        path = self._bulk_path

        def deliver(delivery: Delivery) -> Any:
            answers = send_bulk(delivery, request["bodies"], rows,
                                lambda body: self._records("POST", path, body=body),
                                commit_valid=request["commit_valid"], on_chunk=on_chunk)
            if judged:
                return answers
            warn_not_accepted([r for r in answers if r is not None], self.kind,
                              self.id_field, total=len(answers))
            frame = self._bulk_frame(answers)
            frame.insert(0, "row", request["rows"])  # the rows of the input it came from
            return frame

        judge = self._judge(request)
        # Refused rows are named by their place in the input (prepared), or in the bulk.
        rows = request["rows"] if judged else range(len(request["bodies"]))
        return self._submission("submit_many", request, deliver, None if judged else judge,
                                guarded=True)

    def void(self, item_id: int) -> pd.Series | Approval:
        """Void one item (only a waiting item can be voided); returns the item after it.

        When the client's dual control asks for a second person for this void, nothing
        is sent: an :class:`~paynb.journal.Approval` is returned (see :meth:`submit`).
        """
        item_id = positive_int(item_id, "item_id")
        return cast("pd.Series | Approval",
                    self._sender.run(self._command("void", {"item_id": item_id})))

    def void_many(self, item_ids: Iterable[int]) -> pd.DataFrame | Approval:
        """Void several items by id; one row per voided item (an
        :class:`~paynb.journal.Approval` when dual control holds the void)."""
        if isinstance(item_ids, str | bytes) or not isinstance(item_ids, Iterable):
            raise ValidationError.for_argument("item_ids", "must be a list of item ids")
        ids = [positive_int(value, f"item_ids[{n}]") for n, value in enumerate(item_ids)]
        return cast("pd.DataFrame | Approval", self._sender.run(
            self._command("void_many", {"item_ids": ids})))

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
        return cast("pd.DataFrame | Approval", self._sender.run(self._command(
            "void_references", {"references": refs,
                                "wire": valid.to_wire()["referenceNumbers"]})))

    def _command(self, operation: str, request: dict[str, Any]) -> Command:
        """A submission (judged by NACHA's guards, every entry), a bulk or a void."""
        if operation == "submit":
            return self._post(operation, request, self._judge(request), guarded=True)
        if operation == "submit_many":
            return self._bulk(request)
        if operation not in ("void", "void_many", "void_references"):
            return super()._command(operation, request)
        by_id = operation in VOIDS_BY_ID
        if operation == "void":
            keys: builtins.list[Any] = [request["item_id"]]
            path = self._path(f"/{request['item_id']}/void")
            body = None
        elif by_id:
            keys = request["item_ids"]
            path = self._path(f"/void/{self.void_ids_segment}")
            (field,) = self.void_ids_model.wire_names().values()
            body = wire_body(self.void_ids_model, {field: keys}, validate=True)
        else:
            keys = request["references"]
            path = self._path("/void/referencenumbers")
            body = {"referenceNumbers": request["wire"]}

        def deliver(delivery: Delivery) -> pd.Series | pd.DataFrame:
            if body is None:  # one item: its record
                record = delivery.call(delivery.entries, lambda: self._record("PUT", path))
                delivery.answered(delivery.entries, [record])
                return self._row(record)
            records = delivery.call(delivery.entries,
                                    lambda: self._records("PUT", path, body=body))
            if delivery.entries:
                key_field = self.id_field if by_id else "yourReferenceNumber"
                by_key = {str(id_of(record, key_field)): record for record in records}
                delivery.answered(delivery.entries, [by_key.get(str(key)) for key in keys])
            return self._frame(records)

        def weigh(policy: Any) -> Any:
            """The void's amounts: the items' (looked up first, unless the policy holds
            every void or none)."""
            if policy.void_over is None:
                return None
            amounts = [None] * len(keys) if policy.void_over == 0 else \
                [self._amount_to_void(key, by_id=by_id) for key in keys]
            label = "itemId" if by_id else "yourReferenceNumber"
            return amounts, [{label: key, "amount": amount}
                             for key, amount in zip(keys, amounts, strict=True)]

        return Command(operation, keys, request, deliver, weigh=weigh)

    def _amount_to_void(self, key: Any, *, by_id: bool) -> Decimal | None:
        """The amount of the item a void names (its id or reference), ``None`` when it
        cannot be found."""
        try:
            if by_id:
                return parse_decimal(self.get(key).get("amount"))
            listed = self.listing.frame([("yourReferenceNumber", key)])
        except NotFoundError:
            return None
        if listed.empty:
            return None
        # Only the item of that reference, whether the service filtered the list or not.
        mine = listed[listed["yourReferenceNumber"].astype("string") == str(key)]
        amounts = [parse_decimal(value) for value in mine["amount"]]
        known = [amount for amount in amounts if amount is not None]
        return sum(known, Decimal(0)) if known else None

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
        filters = self.listing.filters(statuses, returned_from=start, returned_to=until,
                                received_from=received_from, received_to=received_to,
                                settled_from=settled_from, settled_to=settled_to)
        frame = self.listing.frame(filters, progress=progress)
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

