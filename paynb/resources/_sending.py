"""Sending: every write call of a resource is one :class:`Command`, run by a :class:`Sender`:
checked, held for a second person (dual control), reserved in the journal, sent, each
entry settled with its answer. Approving a held call runs the same command, made again
of what the hold kept: checked again by the approver, its entries claimed, not reserved.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from paynb._args import flag, positive_int
from paynb._coerce import missing, parse_decimal
from paynb._warn import user_stacklevel
from paynb.auth import TOKEN_REQUEST
from paynb.codes import STATUS_NAMES
from paynb.errors import (
    ApiError,
    AuthenticationError,
    JournalError,
    PaynbWarning,
    SubmissionNotAcceptedWarning,
    TransportError,
    ValidationError,
)
from paynb.journal import NOT_ACCEPTED, STALE_PENDING, SUBMISSIONS, SUPPLIED_AT_APPROVAL, Approval
from paynb.models import check

if TYPE_CHECKING:
    from paynb.journal import DualControl
    from paynb.resources._context import Namespace

__all__ = ["Approver", "Command", "Delivery", "Outcome", "Sender", "failure_state",
           "warn_not_accepted"]

logger = logging.getLogger("paynb.resources")

Answer = TypeVar("Answer")
#: The service's fields that say why an item is not accepted.
_REASON_FIELDS = ("itemStatusDescription", "returnReason", "returnMessage", "errors")


def id_of(record: Mapping[str, Any], field: str) -> Any:
    """The id of a raw record, whatever the casing of its field name."""
    return next((value for key, value in record.items() if key.lower() == field.lower()), None)


def _reasons(record: Mapping[str, Any]) -> dict[str, Any]:
    """The service's reason fields of a record that are filled in."""
    found = {name: id_of(record, name) for name in _REASON_FIELDS}
    return {name: value for name, value in found.items()
            if not missing(value) and value not in ("", [], {})}


def amount_of(body: Mapping[str, Any]) -> Decimal | None:
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


class Outcome(NamedTuple):
    """What the journal records of one entry once its answer is known (or lost): the
    row :meth:`paynb.journal.Journal.settle_many` takes."""

    entry: int
    state: str
    item_id: Any = None
    item_status: Any = None
    detail: str | None = None

    @classmethod
    def of(cls, entry: int, record: Mapping[str, Any] | None, id_field: str) -> Outcome:
        """The outcome of ``entry`` answered with ``record`` (``None``: no answer for it):
        ``invalid``/``blocked`` for an item answered ``I``/``B`` (stored, never processed),
        ``rejected`` for an answer with errors or status ``I``, else ``sent``."""
        if record is None:
            return cls(entry, "unknown", detail="no answer for this item")
        errors = id_of(record, "errors")
        item_status = str(id_of(record, "itemStatus") or "").upper()
        if item_status in NOT_ACCEPTED:
            detail = "; ".join(f"{k}: {v}" for k, v in _reasons(record).items()) or None
            return cls(entry, NOT_ACCEPTED[item_status], id_of(record, id_field), item_status,
                       detail if errors is None else str(errors))
        status = id_of(record, "itemStatus") or id_of(record, "status")
        state = "rejected" if errors or str(status).upper() == "I" else "sent"
        return cls(entry, state, id_of(record, id_field), status,
                   str(errors) if errors else None)


def warn_not_accepted(records: Sequence[Mapping[str, Any]], kind: str, id_field: str, *,
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
        said = "; ".join(f"{k}: {v}" for k, v in _reasons(record).items()) or "no reason given"
        lines.append(f"reference {id_of(record, 'yourReferenceNumber')}, item "
                     f"{id_of(record, id_field)}: status {status} "
                     f"({STATUS_NAMES[status]}) - {said}")
    first = refused[0]
    count = (f"{len(refused)} of {total} items were" if total is not None
             else f"the {kind.upper()} item was")
    more = f"; and {len(refused) - 5} more" if len(refused) > 5 else ""
    message = (f"{count} answered I (invalid) or B (blocked), not W: stored but will not "
               f"be processed (the journal records them invalid/blocked). "
               f"{' | '.join(lines)}{more}")
    warnings.warn(SubmissionNotAcceptedWarning(
        message, status=str(id_of(first, "itemStatus")).upper(), reasons=_reasons(first),
        reference_number=id_of(first, "yourReferenceNumber"),
        item_id=id_of(first, id_field)), stacklevel=user_stacklevel())


@dataclass(frozen=True)
class Approver:
    """Who approves a held call (``client.approve()``), and what they say."""

    approval: Approval
    user: str | None
    #: ``approve(new_authorization=True)``: the receiver authorized again.
    new_authorization: bool


@dataclass
class Command:
    """One write call, prepared: what the journal records, what dual control judges and
    keeps, and how it is sent. Made of ``request`` (what a hold keeps) for the direct call
    and again at approval, so both send alike."""

    operation: str
    #: The journal's references of the call (reference numbers, or item ids of a void).
    keys: list[Any]
    #: What a held call keeps (its bodies, ids or references, its options).
    request: dict[str, Any]
    #: Sends the request(s) through the :class:`Delivery` of the call's journal entries,
    #: settling them as answers come; returns what the call returns.
    deliver: Callable[[Delivery], Any]
    #: ``check(approver)`` before anything is held or sent (NACHA's guards, an instant
    #: payment's route); raises to refuse (``approver`` None: the direct call).
    check: Callable[[Approver | None], None] | None = None
    #: What is only unusual about the request, warned once the check passed.
    advise: Callable[[], None] | None = None
    #: ``weigh(policy)``: the amounts dual control judges and what its queue shows of
    #: each; ``None`` when the policy holds no such call.
    weigh: Callable[[DualControl], tuple[list[Decimal | None], Sequence[Mapping[str, Any]]]
                    | None] | None = None
    #: What the journal's entries show (the bodies of a submission).
    summary: Any = None
    allow_duplicate: bool = False
    #: Whether NACHA's guards judge it (``approve(new_authorization=True)`` applies).
    guarded: bool = False
    #: The request fields its approver gives (field -> argument of ``approve``), each
    #: one the prepared call had and the hold did not keep.
    supplied: dict[str, str] = field(default_factory=dict)


class Delivery:
    """The journal entries of a command on its way (none without a journal): each
    request is sent for some of them and settled with its answers; when one fails, its
    entries are settled by what is known and those not sent yet ``failed``."""

    def __init__(self, sender: Sender, entries: list[int]) -> None:
        self.sender = sender
        self.entries = entries
        self._unsent = list(entries)

    def call(self, entries: Sequence[int], request: Callable[[], Answer]) -> Answer:
        """``request()`` for ``entries``: on failure, they are settled ``rejected``,
        ``failed`` or ``unknown`` (:func:`failure_state`), every entry not sent yet
        ``failed``, and the error goes up."""
        going = set(entries)
        self._unsent = [entry for entry in self._unsent if entry not in going]
        try:
            return request()
        except BaseException as exc:
            self.sender.settle([Outcome(entry, failure_state(exc), detail=str(exc))
                                for entry in entries])
            self.sender.settle([Outcome(entry, "failed",
                                        detail="not sent: an earlier bulk request failed")
                                for entry in self._unsent])
            raise

    def answered(self, entries: Sequence[int],
                 records: Sequence[Mapping[str, Any] | None]) -> None:
        """Settle each of ``entries`` with the record the service answered for it."""
        if self.sender.context.journal is None:
            return
        id_field = self.sender.kind.id_field
        self.sender.settle([Outcome.of(entry, record, id_field)
                            for entry, record in zip(entries, records, strict=True)])


class Sender:
    """Runs the commands of one resource namespace: directly (:meth:`run`) or once
    approved by a second person (:meth:`approve`)."""

    def __init__(self, kind: Namespace) -> None:
        self.kind = kind
        self.context = kind.context

    def run(self, command: Command) -> Any:
        """Check, advise, hold (an :class:`~paynb.journal.Approval` is returned, nothing
        sent), or reserve the journal's entries and deliver."""
        if command.check is not None:
            command.check(None)
        if command.advise is not None:
            command.advise()
        held = self._hold(command)
        if held is not None:
            return held
        # The token first, so that a credentials problem is told before anything is
        # recorded or sent.
        transport = self.context.transport
        if transport.auth is not None:
            transport.auth.token()
        journal = self.context.journal
        entries = [] if journal is None else journal.reserve(
            self.context.company_code, self.kind.kind, command.operation, command.keys,
            allow_duplicate=command.allow_duplicate, summary=command.summary,
            by=self.context.user)
        return command.deliver(Delivery(self, entries))

    def _hold(self, command: Command) -> Approval | None:
        """Hold the call for a second person when the client's dual control asks for one:
        recorded in the journal as awaiting approval, nothing sent."""
        policy = self.context.dual_control
        weighed = None if policy is None or command.weigh is None else command.weigh(policy)
        if policy is None or weighed is None:
            return None
        amounts, summaries = weighed
        why = policy.needs_approval(self.kind.kind, command.operation, amounts)
        if why is None:
            return None
        request = command.request
        if command.supplied:
            # Kept without them; the queue shows which its approver must give.
            (body,) = request["bodies"]
            needs = [argument for name, argument in command.supplied.items()
                     if not missing(body.get(name)) and body.get(name) != ""]
            request = {**request, "supplied": needs, "bodies": [
                {key: value for key, value in body.items() if key not in command.supplied}]}
            summaries = [{**body, SUPPLIED_AT_APPROVAL: needs} if needs else body]
        known = [amount for amount in amounts if amount is not None]
        approval = self.context.require_journal().hold(
            self.context.company_code, self.kind.kind, command.operation, command.keys,
            why=why, summary=summaries, request=request,
            expires_after=policy.expires_after,
            total=sum(known, Decimal(0)) if known else None,
            allow_duplicate=command.allow_duplicate, by=self.context.user)
        logger.info("%s %s of %s held for a second person: approval %d (%s)", self.kind.kind,
                    command.operation, self.context.company_code, approval.id, why)
        return approval

    def approve(self, approval_id: int, make: Callable[[str, dict[str, Any]], Command], *,
                given: Mapping[str, Any], new_authorization: bool,
                allow_duplicate: bool) -> Any:
        """Run a held call of this kind that a second person approves: the command
        ``make(operation, request)`` checked again by the approver, its entries claimed
        from the journal, sent exactly as prepared (with the fields the approver gives,
        ``given``: argument -> value or ``None``). See :meth:`paynb.Client.approve`."""
        approval_id = positive_int(approval_id, "approval_id")
        flag(new_authorization, "new_authorization"), flag(allow_duplicate, "allow_duplicate")
        journal = self.context.require_journal()
        user, company, kind = self.context.user, self.context.company_code, self.kind.kind
        found, request = journal.approvals.peek(approval_id)
        refusal = journal.approvals.refusal(found, company=company, by=user)
        if refusal is not None:
            raise refusal
        if found.kind != kind or request is None:
            raise ValidationError.for_argument(
                "approval_id", f"approval {found.id} holds {found.kind} {found.operation}, "
                               f"not {kind}: client.approve() sends any kind")
        command = make(found.operation, request)
        supplied = self._supplied(found, command, given)
        if allow_duplicate and found.operation not in SUBMISSIONS:
            raise ValidationError.for_argument(
                "allow_duplicate", f"does not apply: approval {found.id} is a "
                                   f"{found.operation}, not a submission")
        if new_authorization and not command.guarded:
            raise ValidationError.for_argument(
                "new_authorization", f"does not apply: approval {found.id} is {found.kind} "
                                     f"{found.operation}, which NACHA's guards do not judge")
        if command.check is not None:
            command.check(Approver(found, user, new_authorization))
        approval, _, entries = journal.approve(approval_id, by=user, company=company,
                                               allow_duplicate=allow_duplicate)
        logger.info("approval %d (%s %s, prepared by %s) approved by %s: sending",
                    approval.id, approval.kind, approval.operation, approval.prepared_by, user)
        for body in command.request.get("bodies") or ():
            body.update(supplied)
        return command.deliver(Delivery(self, entries))

    def _supplied(self, found: Approval, command: Command,
                  given: Mapping[str, Any]) -> dict[str, Any]:
        """The request fields an approver gives (``given``: argument -> value, ``None`` when
        not given): each one the held call needs, none it does not; checked as the model
        checks the field, never quoting the value."""
        request = command.request
        needed = set(request.get("supplied") or ())
        fields = {argument: name for name, argument in command.supplied.items()}
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
            _, errors = check(self.kind.model, {**request["bodies"][0], fields[argument]: value})
            if fields[argument] in errors:
                raise ValidationError.for_argument(argument, "; ".join(errors[fields[argument]]))
            supplied[fields[argument]] = value
        return supplied

    def settle(self, outcomes: Sequence[Outcome]) -> None:
        """Record ``outcomes`` in the journal (none without one).

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
                f"the journal could not record the outcome of {len(outcomes)} "
                f"{self.kind.kind} {entries} ({exc}). They stay pending in it, still "
                "guarding their references. This client keeps their outcomes: "
                "client.reconcile() records them as soon as the journal can be used again. "
                "Should this client be closed first, reconcile() from any client looks them "
                f"up in the service once they have been pending for {STALE_PENDING / 60:.0f}"
                " minutes (until then another process may still be sending them)."),
                stacklevel=user_stacklevel())
