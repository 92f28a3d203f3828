"""What a resource namespace is given to work with: :class:`ResourceContext`, which the
client builds once and hands to each of its namespaces (they never hold the client;
docs/reference/internals.md)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from paynb._kinds import KINDS
from paynb._time import utc_moment
from paynb.errors import PaynbError
from paynb.journal import DualControl, Journal, current_user
from paynb.nacha import ENTRY_FIELDS, Verdict
from paynb.resources._seen import SeenRecords
from paynb.transport import Transport

if TYPE_CHECKING:
    from paynb.models import RequestModel

__all__ = ["Environment", "Namespace", "ResourceContext", "SeenHistory", "ServiceClock",
           "SubmissionGuard"]


@dataclass(frozen=True)
class Environment:
    """Where a client's calls go: the sandbox, or the real service.

    ``name`` is ``"sandbox"``, the profile's name, ``"env"`` (the ``PAYNB_*``
    variables) or ``"custom"`` (arguments given in code); ``host`` is the
    service's host; ``declared_sandbox``: the settings named the sandbox
    (``paynb.connect()`` with nothing configured, ``Sandbox.connect()``);
    ``answers``: the transport whose answers say whether the service is the sandbox
    (:mod:`paynb._sign`). Compares equal to its ``name`` (``client.environment ==
    "sandbox"``); :attr:`label` is what reprs and form headers show.
    """

    name: str
    host: str
    declared_sandbox: bool
    answers: Transport | None = field(default=None, repr=False, compare=False)

    @property
    def is_sandbox(self) -> bool:
        """The sandbox: named so by the settings, or recognised by its answers (the
        ``X-Paynb-Sandbox: 1`` header, which the real service never sends), however it
        was reached. Until the service has answered, settings that do not name the
        sandbox are taken for the real service."""
        return self.declared_sandbox or (self.answers is not None
                                         and self.answers.sandbox is True)

    @property
    def label(self) -> str:
        """``sandbox (simulated, nothing is paid)``, or ``REAL SERVICE <host> (profile
        <name>)``: what the repr, the form headers and the confirmations say. A sandbox
        reached by a profile, ``PAYNB_*`` variables or settings in code says which."""
        source = {"env": "PAYNB_* variables", "custom": "settings given in code"}.get(
            self.name, f"profile {self.name}")
        if self.declared_sandbox:
            return "sandbox (simulated, nothing is paid)"
        if self.is_sandbox:
            return f"sandbox {self.host} (simulated, nothing is paid; {source})"
        return f"REAL SERVICE {self.host} ({source})"

    def __str__(self) -> str:
        return self.label

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            return self.name == other
        if isinstance(other, Environment):
            return (self.name, self.host, self.is_sandbox) == (
                other.name, other.host, other.is_sandbox)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.name)


class ServiceClock:
    """The service's time (UTC), the one clock every part of paynb judges by.

    The sandbox's own clock when the client is connected to a sandbox (``GET
    /sandbox/clock``; it moves with ``simulate.advance_clock``), however it was reached
    (:attr:`Environment.is_sandbox`), else the local UTC time (the real service publishes
    no clock). Asked before the service has said which it is, it asks
    ``GET /sandbox/clock``: the sandbox answers it with its header, the real service
    does not, and the local time is taken.
    """

    def __init__(self, transport: Transport, environment: Environment) -> None:
        self._transport = transport
        self._environment = environment

    @property
    def sandbox(self) -> bool:
        """Whether this is the sandbox's clock (as far as the answers so far say)."""
        return self._environment.is_sandbox

    def __repr__(self) -> str:
        return f"<ServiceClock {'of the sandbox' if self.sandbox else 'local UTC'}>"

    def identify(self) -> bool:
        """Whether the service is the sandbox; asked before anything has answered, it asks
        ``GET /sandbox/clock`` once: only a sandbox answers with its header."""
        if not self._environment.declared_sandbox:
            self._transport.identify("/sandbox/clock")
        return self.sandbox

    def now(self) -> dt.datetime:
        """The service's time now, an aware UTC datetime."""
        if not self.identify():
            return dt.datetime.now(dt.UTC)
        answer = self._transport.json("GET", "/sandbox/clock")
        return utc_moment(answer.get("now") if isinstance(answer, Mapping) else None,
                          "the sandbox clock")


class SeenHistory:
    """The ACH items and NOCs a client has seen this session (every list page, get, poll
    and submission answer): the history the submission guards judge an entry by.

    ``ach`` keeps the fields the guards read (:data:`paynb.nacha.ENTRY_FIELDS`) once
    compacted, ``noc`` whole records; both keep full account numbers and are never shown.
    """

    def __init__(self) -> None:
        self.ach = SeenRecords(KINDS["ach"].id_field, ENTRY_FIELDS)
        self.noc = SeenRecords(KINDS["noc"].id_field)

    def of(self, kind: str) -> SeenRecords | None:
        """The records kept of ``kind`` (``ach``, ``noc``; ``None`` for the others)."""
        return {"ach": self.ach, "noc": self.noc}.get(kind)


class SubmissionGuard(Protocol):
    """What the resources ask of NACHA's submission guards (:mod:`paynb.guards` is the
    client's): a verdict on the entries about to be sent, and the NOC ledger."""

    def judge(self, bodies: Mapping[int, Mapping[str, Any]], *,
              new_authorization: bool = False,
              now: dt.datetime | None = None) -> dict[int, Verdict]:
        """The verdict on each body (row -> wire body), sending nothing."""
        ...

    def guard_submission(self, kind: str, bodies: dict[int, dict[str, Any]], *,
                         new_authorization: bool, all_or_nothing: bool,
                         overrides_by: str | None = None) -> dict[int, Verdict]:
        """Judge ``bodies`` (row -> wire body) of ``kind`` before anything is sent; refused
        rows are removed (or, ``all_or_nothing``, refused with an error); overrides are
        recorded (by ``overrides_by``, once, at an approval)."""
        ...

    def noc_ledger(self, as_of: dt.datetime) -> list[dict[str, Any]]:
        """The NOC correction ledger's rows (:func:`paynb.nacha.ledger`) of every NOC the
        client has seen, as it stood on ``as_of``, with the journal's applied marks."""
        ...

    def unknown_noc(self, noc_id: str) -> str | None:
        """None when ``noc_id`` is a NOC of the company, else where it was looked for."""
        ...


@dataclass(frozen=True, eq=False)
class ResourceContext:
    """The narrow view of a client that its resources work with.

    Args:
        transport: the HTTP transport (token, retries of reads, answers decoded).
        company_code: the company every call acts for.
        environment: where the calls go (the sandbox, or the real service's host).
        clock: the service's time.
        journal: the journal, or ``None`` (``Client(journal=None)``): nothing recorded.
        page_size: records per page of a list.
        max_workers: pages fetched at the same time.
        mask: account numbers shown as ``****6789`` in frames.
        user: who acts, recorded with every journal entry (default: the OS user).
        dual_control: which calls need a second person (``None``: none), held in the
            journal until another analyst approves them.
        seen: the ACH items and NOCs seen, for the guards (default: a new, empty one).
        guard: NACHA's submission guards (``None``: entries are sent unjudged).
    """

    transport: Transport
    company_code: str
    environment: Environment
    clock: ServiceClock
    journal: Journal | None = None
    page_size: int = 200
    max_workers: int = 8
    mask: bool = True
    user: str = field(default_factory=current_user)
    dual_control: DualControl | None = None
    seen: SeenHistory = field(default_factory=SeenHistory)
    guard: SubmissionGuard | None = None
    # Polling state kept here when there is no journal to keep it (mutated, never rebound).
    _marks: dict[str, dt.datetime] = field(default_factory=dict, init=False, repr=False)
    _seen: dict[str, set[Any]] = field(default_factory=dict, init=False, repr=False)
    # Outcomes the service answered that the journal could not record (mutated, never
    # rebound): recorded by record_kept(), which client.reconcile() calls first.
    _kept: list[tuple[Any, ...]] = field(default_factory=list, init=False, repr=False)

    def require_journal(self) -> Journal:
        """The journal; :class:`~paynb.errors.PaynbError` when the client has none."""
        if self.journal is None:
            raise PaynbError("this client was made with journal=None: nothing is recorded")
        return self.journal

    def keep_outcomes(self, outcomes: Sequence[tuple[Any, ...]]) -> None:
        """Keep outcomes (``(entry, state, item_id, item_status, detail)``) the journal
        could not record, for :meth:`record_kept`."""
        self._kept.extend(outcomes)

    def record_kept(self) -> list[int]:
        """Record in the journal the outcomes kept while it could not be used; the ids of
        their entries. :class:`~paynb.errors.JournalError` (the outcomes still kept) when
        it still cannot be used."""
        kept = list(self._kept)
        if kept:
            self.require_journal().settle_many(kept)
            del self._kept[:len(kept)]
        return [int(outcome[0]) for outcome in kept]

    def require_guard(self) -> SubmissionGuard:
        """The submission guards; :class:`~paynb.errors.PaynbError` when none was given."""
        if self.guard is None:
            raise PaynbError("this context has no submission guards (paynb.Client gives one)")
        return self.guard

    # ------------------------------------------------------------------ polling state

    def watermark(self, kind: str) -> dt.datetime | None:
        """The newest change ``changes()`` reported for ``kind`` (None before the first)."""
        if self.journal is None:
            return self._marks.get(kind)
        return self.journal.polling.watermark(self.company_code, kind)

    def set_watermark(self, kind: str, when: dt.datetime) -> None:
        """Remember ``when`` as the watermark of ``kind``."""
        if self.journal is None:
            self._marks[kind] = when
        else:
            self.journal.polling.set_watermark(self.company_code, kind, when)

    def seen_changes(self, kind: str, keys: list[Any]) -> set[Any]:
        """Those of ``keys`` (id, status, date) already reported for ``kind``."""
        if self.journal is None:
            return {key for key in keys if key in self._seen.get(kind, set())}
        return self.journal.polling.seen_changes(self.company_code, kind, keys)

    def mark_seen(self, kind: str, keys: list[Any]) -> None:
        """Remember ``keys`` as reported for ``kind``."""
        if self.journal is None:
            self._seen.setdefault(kind, set()).update(keys)
        elif keys:
            self.journal.polling.mark_seen(self.company_code, kind, keys)


class Namespace(Protocol):
    """What the rooms of a resource namespace (its listing, its sender) know of it: the
    class attributes of :class:`~paynb.resources.Resource`, and its context."""

    kind: ClassVar[str]
    id_field: ClassVar[str]
    status_field: ClassVar[str | None]
    range_fields: ClassVar[dict[str, str]]
    server_filters: ClassVar[frozenset[str]]
    model: ClassVar[type[RequestModel]]
    context: ResourceContext
