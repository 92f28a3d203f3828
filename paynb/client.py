"""The client: ``paynb.Client`` and ``paynb.connect()``; it holds one pooled HTTP session
(:mod:`paynb.transport`), one token (:mod:`paynb.auth`), the journal (:mod:`paynb.journal`)
and the resource namespaces (:mod:`paynb.resources`), and is the composition root that
hands each of them what it works with."""

from __future__ import annotations

import datetime as dt
import html
import logging
import os
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast, overload

import requests

from paynb import config, sandbox
from paynb._args import flag, http_url, positive_int, seconds, text
from paynb._redact import shown_url, url_host
from paynb._warn import user_stacklevel
from paynb.auth import PasswordAuth
from paynb.config import Credentials
from paynb.errors import JournalError, PaynbWarning, ValidationError
from paynb.guards import GuardService
from paynb.history import History, HistoryPlace, sync
from paynb.journal import Approval, Approvals, DualControl, Journal, current_user
from paynb.reconcile import SETTLE_AFTER, settle
from paynb.resources import (
    AchResource,
    Environment,
    InstantResource,
    NocResource,
    RccResource,
    ResourceContext,
    RtpResource,
    SeenHistory,
    ServiceClock,
)
from paynb.transport import DEFAULT_MAX_RETRIES, Transport, make_session

if TYPE_CHECKING:
    import pandas as pd

# Environment (defined with the resources' context, which carries it) is the type of
# Client.environment, documented with the client as paynb.client.Environment.
__all__ = ["Client", "connect"]

logger = logging.getLogger("paynb")


class _DefaultJournal:
    def __repr__(self) -> str:
        return "<default journal>"


#: The ``journal`` default: ``$PAYNB_JOURNAL`` (``off`` disables it), else the user's data dir.
DEFAULT_JOURNAL: Any = _DefaultJournal()


def _open_journal(journal: Any, user: str) -> Journal | None:
    if journal is None:
        return None
    if isinstance(journal, Journal):
        return journal
    if journal is DEFAULT_JOURNAL:
        opened = Journal.from_env(user=user, connect=False)
    elif isinstance(journal, str | os.PathLike):
        opened = Journal(journal, user=user, connect=False)
    else:
        raise ValidationError.for_argument(
            "journal", "must be a path, a postgresql:// address, a Journal or None")
    if opened is not None:
        _say_if_unusable(opened)
    return opened


def _say_if_unusable(journal: Journal) -> None:
    """Warn, rather than refuse, when ``journal`` cannot be used now (a team's database
    stopped or out of reach): reading the service does not need it, and the journal is
    tried again by each call that does."""
    try:
        journal.check()
    except JournalError as exc:
        warnings.warn(PaynbWarning(
            f"{exc}. Reading does not need the journal: lists, gets, exports, the local "
            "history and plots work. What must be journaled (submissions, voids, "
            "approvals, NOC marks and obligations, reconcile(), changes()) refuses until "
            "the journal can be used again; nothing is sent without it."),
            stacklevel=user_stacklevel())


def _dual_control(value: Any) -> DualControl | None:
    if value is None or isinstance(value, DualControl):
        return value
    if isinstance(value, Mapping):
        return DualControl.from_profile(value, where="dual_control")
    raise ValidationError.for_argument(
        "dual_control", "must be a paynb.DualControl, its settings as a mapping, or None")


def _policy_text(policy: DualControl | None) -> str:
    """A client's dual control in a few words, for its summary."""
    if policy is None:
        return "off"
    parts = [f"{kind} over {limit}" for kind, limit in policy.limits.items()]
    if policy.bulk:
        parts.append("every bulk")
    if policy.instant:
        parts.append("every instant payment")
    if policy.void_over is not None:
        parts.append("every void" if policy.void_over == 0 else f"voids over {policy.void_over}")
    return f"a second person for {', '.join(parts) or 'nothing'}"


_T = TypeVar("_T")


class _ContextOption(Generic[_T]):
    """A client option read from the resources' context (so the client and its resources
    cannot disagree). Setting one says how to get the client wanted: Python's own
    "property has no setter" names neither the remedy nor why."""

    def __init__(self, name: str, option: str, more: str = "", *, doc: str) -> None:
        self.name, self.option, self.more = name, option, more
        self.__doc__ = doc

    @overload
    def __get__(self, client: None, owner: type | None = None) -> _ContextOption[_T]: ...
    @overload
    def __get__(self, client: Client, owner: type | None = None) -> _T: ...
    def __get__(self, client: Client | None,
                owner: type | None = None) -> _T | _ContextOption[_T]:
        if client is None:
            return self
        value: _T = getattr(client.context, self.name)
        return value

    def __set__(self, client: Client, value: Any) -> None:
        raise AttributeError(
            f"client.{self.name} is set when the client is made and cannot be changed: make "
            f"a new client with {self.option}, e.g. paynb.connect({self.option}) or "
            f"sandbox.connect({self.option}){self.more}")


_REWRITE = ("paynb.Client(base_url=..., auth_url=..., company_code=..., "
            "credentials=paynb.Credentials(client_id=..., client_secret=..., username=..., "
            "password=...)), or paynb.connect(), Client.from_env() or Client.from_profile()")


class _KeywordsOnly:
    """Refuses the old positional (and loose-credential) calls of :class:`Client` with a
    message saying what to write instead. The values are never echoed: some are secrets."""

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if args:
            raise TypeError(
                f"paynb.Client takes keyword arguments only ({len(args)} positional "
                f"value{'s' if len(args) != 1 else ''} given, not shown): write {_REWRITE}")
        loose = [name for name in config.CREDENTIALS if name in kwargs]
        if loose:
            raise TypeError(
                f"paynb.Client takes the credentials as one object, not {', '.join(loose)}: "
                f"write {_REWRITE}")
        return super().__new__(cls)


class Client(_KeywordsOnly):
    """A connection to the payment item service for one company.

    Every argument is a keyword: ``paynb.Client(base_url=..., auth_url=...,
    company_code=..., credentials=paynb.Credentials(...))``.

    Args:
        base_url: the service address (``{base_url}`` of the spec).
        auth_url: the token server address; the token comes from
            ``{auth_url}/connect/token``.
        company_code: the company every call acts for.
        credentials: the password-grant credentials, a :class:`paynb.Credentials`
            (from code, :meth:`~paynb.Credentials.from_env`, a profile or the keyring).
            They are kept only by the token fetcher and never shown.
        session: a ``requests.Session`` of your own, e.g. with ``proxies``, ``verify``
            (a CA bundle), ``cert`` (mTLS) or extra headers: paynb keeps all of those,
            mounts its pooled adapter for ``http://`` and ``https://`` (no retries of its
            own: paynb retries reads itself) unless you mounted an adapter of your own
            class there, and sets ``Accept: application/json`` unless you set an Accept.
            It adds the bearer token to each request. You keep the session: closing the
            client does not close it. Default: a new session.
        timeout: seconds every HTTP call may take.
        max_retries: how often a read (GET) is retried after a connection error,
            408, 429 or 5xx (default 5; backoff doubles from 0.25 s, capped at 8 s).
            Submissions and voids are never re-sent (except once after a 401).
        page_size: records per page of a list.
        max_workers: pages fetched at the same time (also the connection pool size).
        journal: the journal: a file path, a ``postgresql://`` address (a team's shared
            journal, docs/team.md) or a :class:`~paynb.journal.Journal`; the default is
            the profile's ``journal``, else ``$PAYNB_JOURNAL``, else
            ``journal.sqlite3`` in the user's data directory; ``None`` turns the journal
            (and its duplicate guard) off.
        mask: show account numbers as ``****6789`` in frames (card numbers are
            always shown as their last four digits).
        environment: where the settings came from, for :attr:`environment`:
            ``"sandbox"`` (what :func:`connect` and ``Sandbox.connect()`` pass), a
            profile name, ``"env"``; default ``"custom"``. Anything but ``"sandbox"``
            is shown as the real service until the service's answers say it is the
            sandbox (its ``X-Paynb-Sandbox`` header, which the real service never sends).
        user: who acts through this client, recorded with every journal entry, NOC
            mark, guard override and approval (default: the profile's ``user``, else
            the OS user).
        dual_control: which submissions need a second person before they are sent
            (docs/team.md): a :class:`paynb.DualControl`, or its settings as a mapping
            (``{"ach_over": "10000", "bulk": True, ...}``, as in a profile's
            ``dual_control`` table); default: the profile's, else none. Needs a journal.
    """

    def __init__(self, *, base_url: str, auth_url: str, company_code: str,
                 credentials: Credentials, session: requests.Session | None = None,
                 timeout: float = 30.0, max_retries: int = DEFAULT_MAX_RETRIES,
                 page_size: int = 200, max_workers: int = 8, journal: Any = DEFAULT_JOURNAL,
                 mask: bool = True, environment: str | None = None, user: str | None = None,
                 dual_control: DualControl | Mapping[str, Any] | None = None) -> None:
        config.check_names()  # a misspelt PAYNB_JOURNAL, say: refused before anything
        self.base_url = http_url(base_url, "base_url")
        self.auth_url = http_url(auth_url, "auth_url")
        company_code = text(company_code, "company_code")
        if not isinstance(credentials, Credentials):
            raise ValidationError.for_argument(
                "credentials", "must be a paynb.Credentials(client_id=..., "
                               "client_secret=..., username=..., password=...)")
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
            raise ValidationError.for_argument("timeout", "must be a positive number of seconds")
        page_size = positive_int(page_size, "page_size")
        max_workers = positive_int(max_workers, "max_workers")
        max_retries = positive_int(max_retries, "max_retries", minimum=0)
        mask = flag(mask, "mask")
        user = text(user, "user") if user is not None else current_user()
        policy = _dual_control(dual_control)
        name = text(environment, "environment") if environment is not None else "custom"
        owned = session is None
        if not owned and not isinstance(session, requests.Session):
            raise ValidationError.for_argument("session", "must be a requests.Session (or None)")
        session = make_session(max_workers + 2, session)
        auth = PasswordAuth(self.auth_url, **credentials.as_dict(),
                            session=session, timeout=float(timeout))
        self._transport = Transport(self.base_url, auth, session=session,
                                    timeout=float(timeout), max_retries=max_retries,
                                    owns_session=owned)
        self.environment = Environment(name=name, host=url_host(self.base_url),
                                       declared_sandbox=name == "sandbox",
                                       answers=self._transport)
        """Where the calls go (:class:`Environment`: ``is_sandbox``, ``label``, ``host``);
        a sandbox is known by its settings or, once it has answered, by its answers."""
        self._journal = _open_journal(journal, user)
        if policy is not None and self._journal is None:
            raise ValidationError.for_argument(
                "dual_control", "needs a journal: the payments waiting for a second person "
                                "are kept there (journal=None was given, or PAYNB_JOURNAL=off)")
        # The composition root: each part gets what it works with, none gets the client.
        clock = ServiceClock(self._transport, self.environment)
        seen = SeenHistory()
        guards = GuardService(company_code=company_code, user=user, journal=self._journal,
                              clock=clock, seen=seen)
        #: What the resource namespaces are given (they never read this object's
        #: attributes): transport, journal, the service's clock, the records the guards
        #: judge by and the guards, polling watermarks, options.
        self.context = ResourceContext(
            transport=self._transport, company_code=company_code,
            environment=self.environment, clock=clock,
            journal=self._journal, page_size=page_size, max_workers=max_workers, mask=mask,
            user=user, dual_control=policy, seen=seen, guard=guards)
        self.ach = AchResource(self.context)
        """ACH items: list, get, submit, submit_many, void, void_many, void_references,
        export, changes."""
        self.rcc = RccResource(self.context)
        """RCC items: the same calls as ``ach``."""
        self.instant = InstantResource(self.context)
        """Instant card payments: check_route, send, list, get, export."""
        self.rtp = RtpResource(self.context)
        """Instant RTP payments: check_route, send, list, get, export."""
        self.nocs = NocResource(self.context)
        """ACH notices of change: list, export."""
        # Where the local history lives (the folder a sync names is remembered there).
        self._history = HistoryPlace(self.context)
        guards.bind(ach=self.ach, nocs=self.nocs, store=self._history.synced)
        self._guards = guards

    # The options the resources work with live in their context, once; read-only here.
    company_code = _ContextOption[str]("company_code", "company_code='...'",
                                  doc="The company every call acts for.")
    page_size = _ContextOption[int]("page_size", "page_size=...",
                               "; for one list, client.ach.list(page_size=...)",
                               doc="Records per page of a list.")
    max_workers = _ContextOption[int]("max_workers", "max_workers=...",
                                 doc="Pages fetched at the same time.")
    mask = _ContextOption[bool]("mask", "mask=False",
                          doc="Whether frames show account numbers as ``****6789``.")
    user = _ContextOption[str]("user", "user='...'",
                               doc="Who acts through this client (recorded in the journal).")
    dual_control = _ContextOption["DualControl | None"](
        "dual_control", "dual_control=paynb.DualControl(...)",
        doc="Which submissions need a second person (``None``: none).")

    @property
    def transport(self) -> Transport:
        """The HTTP transport every call of this client goes through
        (:class:`paynb.Transport`): its ``session``, ``base_url``, ``max_retries``,
        ``sleep`` between retries and raw ``request``/``json`` calls, for tests, proxies
        and recordings of the wire. Read-only: a client keeps its transport."""
        return self._transport

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_env(cls, **options: Any) -> Client:
        """A client from ``PAYNB_BASE_URL``, ``PAYNB_AUTH_URL``, ``PAYNB_COMPANY_CODE``,
        ``PAYNB_CLIENT_ID``, ``PAYNB_CLIENT_SECRET``, ``PAYNB_USERNAME`` and
        ``PAYNB_PASSWORD``; ``options`` are the keyword options of :class:`Client`."""
        config.check_names()
        settings = config.from_env()
        if settings is None:
            raise ValidationError({config.ENV_VARIABLES["base_url"]: ["is not set"]},
                                  message="PAYNB_BASE_URL is not set")
        return cls(**settings.client_arguments(**options))

    @classmethod
    def from_profile(cls, name: str | None = None, **options: Any) -> Client:
        """A client from profile ``name`` of the config file (see :mod:`paynb.config`)."""
        settings = config.from_profile(name)
        if settings is None:
            raise ValidationError({"profile": [f"no profile in {config.config_path()}"]})
        return cls(**settings.client_arguments(**options))

    def close(self) -> None:
        """Close the HTTP connections and the journal."""
        self._transport.close()
        if self._journal is not None:
            self._journal.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"<paynb.Client {self.environment.label}: {shown_url(self.base_url)}, "
                f"company {self.company_code}>")

    def _repr_html_(self) -> str:
        rows = [("environment", self.environment.label), ("service", shown_url(self.base_url)),
                ("company", self.company_code),
                ("journal", self._journal.location if self._journal else "off"),
                ("acting as", self.user),
                ("dual control", _policy_text(self.dual_control)),
                ("masking", "on" if self.mask else "off")]
        body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
                       for k, v in rows)
        if self.environment.is_sandbox:
            css, color, note = ("paynb-env-sandbox", "#e8f1fb",
                                "<b>Sandbox</b>: simulated service with fake data; "
                                "nothing is paid.")
        else:
            css, color, note = ("paynb-env-real", "#fde8e8",
                                f"<b>Real service</b> at {html.escape(self.environment.host)}: "
                                "submissions move real money.")
        return (f"<div class='paynb-client {css}' style='background:{color};padding:0.4em'>"
                f"<b>paynb.Client</b> &middot; company <b>{html.escape(self.company_code)}"
                f"</b><p style='margin:0.2em 0'>{note}</p><table>{body}</table></div>")

    # ------------------------------------------------------------------ NACHA's guards

    def service_now(self) -> dt.datetime:
        """The service's time (UTC), which the guards and the NOC ledger judge by: the
        sandbox's own clock when connected to a sandbox, however reached (it names itself
        in its answers; it moves with ``simulate.advance_clock``), else the local UTC time
        (the real service publishes no clock)."""
        return self.context.clock.now()

    def check_entries(self, items: Any, *, new_authorization: bool = False,
                      as_of: Any = None) -> pd.DataFrame:
        """What NACHA's submission guards would say of ACH ``items``, sending nothing:
        judged against the history this client has seen (and its local history store),
        at the service's time or ``as_of``. ``items``: one mapping, a DataFrame or a list
        of mappings (wire names). One row per item: ``row, yourReferenceNumber, verdict``
        (``refused``, ``warning``, ``ok``), ``allowed, rules`` (of the refusals),
        ``reasons, warnings, overridden, changes`` (fields paynb would set), ``notes`` and
        ``checked``."""
        return self._guards.check(items, new_authorization=new_authorization, as_of=as_of)

    # ------------------------------------------------------------------ journal

    def journal(self) -> pd.DataFrame:
        """The journal of this company: every submission, bulk row and void, oldest first.

        Columns: ``id, when, by`` (who made the entry), ``batch, updated, company, kind,
        operation, reference, state`` (awaiting, pending, sent, rejected, unknown,
        failed, invalid, blocked, declined, expired), ``item_id, item_status, detail,
        summary`` (the body without secrets), ``allow_duplicate``.
        """
        return self.context.require_journal().frame(self.company_code)

    # ------------------------------------------------------------------ dual control

    def approvals(self, *, state: str | list[str] | None = "awaiting") -> Approvals:
        """The payments of this company held for a second person (dual control), oldest
        first: who prepared each, what, totals, masked accounts, age, why. ``state``
        picks others (``approved``, ``rejected``, ``expired``; ``None``: all). Those
        whose time ran out are marked ``expired`` first: they are never sent.

        paynb holds them; the service does not enforce dual control (anyone holding
        its credentials can send without paynb): see docs/team.md.
        """
        return self.context.require_journal().approvals.list(self.company_code, state)

    def approve(self, approval_id: int, *, tot_password: str | None = None,
                new_authorization: bool = False,
                allow_duplicate: bool = False) -> pd.Series | pd.DataFrame:
        """Approve a held payment (or bulk, or void) and send it exactly as prepared;
        returns what the prepared call would have returned (the stored item, the bulk's
        frame with each row's ``row`` in the input, the void's answer).

        Refused with :class:`~paynb.errors.ApprovalError`, nothing sent, when this
        client's :attr:`user` prepared it (a second person approves), when it is not
        waiting any more (approved, rejected or expired) or is another company's.

        What a direct call would be refused for is judged again now, by this client, and
        refuses the approval the same way (it keeps waiting: reject it, or approve it
        with the override): NACHA's guards on ACH entries
        (:class:`~paynb.errors.SubmissionRefusedError`, e.g. a NOC overdue since it was
        prepared; ``new_authorization=True`` as for ``submit``), the journal's duplicate
        guard (:class:`~paynb.errors.DuplicateSubmissionError` when someone sent one of
        its references meanwhile with ``allow_duplicate=True``; ``allow_duplicate=True``
        here sends it anyway), and an instant payment's route (checked by this client).

        Args:
            tot_password: the one-time password of an instant card payment that was
                prepared with one (:attr:`paynb.Approval.approver_supplies`): paynb does
                not keep it, so its approver gives a current one.
            new_authorization: the receiver authorized again: overrides the guards'
                refusals that ``submit(new_authorization=True)`` overrides (recorded as
                this client's user's).
            allow_duplicate: send it although a reference of it was sent meanwhile.

        Once claimed the approval is ``approved`` and its entries go through the journal
        like any submission (a lost answer is ``unknown`` until :meth:`reconcile`).
        """
        approval_id = positive_int(approval_id, "approval_id")
        found, _ = self.context.require_journal().approvals.peek(approval_id)
        return cast("pd.Series | pd.DataFrame", self._resources()[found.kind].approve(
            approval_id, tot_password=tot_password, new_authorization=new_authorization,
            allow_duplicate=allow_duplicate))

    def reject(self, approval_id: int, *, reason: str) -> Approval:
        """Reject a held payment, saying why: it is never sent, and its references may be
        used again. Anyone may reject (the person who prepared it too, to withdraw it).
        Returns the rejected :class:`~paynb.journal.Approval`."""
        approval_id = positive_int(approval_id, "approval_id")
        reason = text(reason, "reason")
        return self.context.require_journal().approvals.reject(
            approval_id, by=self.user, company=self.company_code, reason=reason)

    def _resources(self) -> dict[str, Any]:
        return {"ach": self.ach, "rcc": self.rcc, "instant": self.instant, "rtp": self.rtp}

    def reconcile(self, *, settle_after: float = SETTLE_AFTER) -> pd.DataFrame:
        """Settle the journal's ``unknown`` entries (answer lost) by looking them up.

        A submission is looked for by its reference number: found, it becomes
        ``sent`` with the service's id and status (``invalid`` or ``blocked`` when the
        service stored it with status ``I`` or ``B``: it will not be processed, and a
        corrected one may be submitted). Not found, it becomes ``failed`` (it never
        arrived, so it may be submitted again) only once its answer was lost at
        least ``settle_after`` seconds ago: a service may still store a request
        whose answer the client gave up on (a timeout, a dropped connection), and
        sending it again before then could pay twice. Until then the entry stays
        ``unknown`` (and keeps blocking a second submission); a later
        ``reconcile()`` settles it. Pass ``settle_after=0`` only when the service
        certainly never got the request.

        A void is settled at once by the item's status (``V``: ``sent``; voiding
        again cannot pay twice). Entries still ``pending`` after ten minutes
        (:data:`paynb.journal.STALE_PENDING`: their process stopped) are treated alike.

        First, the answers this client received while the journal could not be used
        (a team's database away: a warning said so) are recorded, with a row each
        (``was`` ``pending``): no lookup, no wait. A few entries of one kind are looked up
        one by one; more than :data:`paynb.reconcile.BULK_LOOKUP` (a lost bulk) are matched against
        the kind's whole list, fetched once.

        Returns one row per entry looked at, with its state after the lookup
        (``unknown`` for one kept waiting; its ``detail`` says from when it may be
        settled).
        """
        wait = seconds(settle_after, "settle_after")
        journal = self.context.require_journal()
        recorded = self.context.record_kept()
        return settle(journal, self.company_code, self._resources(), settle_after=wait,
                      recorded=recorded)

    # ------------------------------------------------------------------ local history

    @property
    def history_folder(self) -> Any:
        """The folder (or object-store URI) the last :meth:`sync` (``path=...``) named for
        the local history; ``None``: the default folder of :attr:`environment`. Set it to
        read another store as this client's."""
        return self._history.folder

    @history_folder.setter
    def history_folder(self, folder: Any) -> None:
        self._history.folder = folder

    @property
    def history_options(self) -> dict[str, str] | None:
        """The object store's options that went with :attr:`history_folder`."""
        return self._history.options

    @property
    def history(self) -> History:
        """The local history of this company (:class:`paynb.History`), read with this
        client's masking: ``client.history.ach(...)``, ``.sql(...)``, ``.events(...)``,
        ``.path``. Filled by :meth:`sync`."""
        return self._history.open()

    def sync(self, kinds: Any = None, since: Any = None, rebuild: bool = False,
             progress: bool | None = None, *, path: Any = None, mask: bool | None = None,
             storage_options: dict[str, str] | None = None) -> pd.DataFrame:
        """Bring the local history (Delta tables) up to date; see ``docs/history.md``.

        Args:
            kinds: some of ``ach``, ``rcc``, ``instant``, ``rtp``, ``nocs`` (default all).
            since: the first sync keeps items received (NOCs: dated) from then on
                (default: all); later syncs keep that start (an earlier one needs
                ``rebuild``, a later one is ignored with a warning); a time after the
                service's now is refused.
            rebuild: fetch everything of ``kinds`` again, replacing what the store
                holds of this company.
            progress: False hides the progress bars.
            path: the store's folder or object-store URI (``s3://bucket/prefix``;
                default: ``history/<service>`` in the user's data folder, one per
                service); remembered for :attr:`history`.
            mask: keep account numbers masked in the files (default: as this client
                shows them; fixed when the store is first written).
            storage_options: the object store's options (credentials, region,
                endpoint), as ``deltalake`` takes them; remembered with ``path``.

        The first sync of a kind lists every item; later ones fetch only the new and
        changed items. An interrupted sync leaves the last complete one in place, and
        the next one finishes the job. Returns one row per kind: requests sent, item
        versions written, status changes recorded, seconds.
        """
        return sync(self._history, {**self._resources(), "nocs": self.nocs}, kinds=kinds,
                    since=since, rebuild=rebuild, progress=progress, path=path, mask=mask,
                    storage_options=storage_options)


def connect(profile: str | None = None, **options: Any) -> Client:
    """A ready client: the named ``profile`` (or the one ``PAYNB_PROFILE`` names), else
    the ``PAYNB_*`` variables, else the ``default`` profile, else the embedded sandbox.

    With nothing configured, the sandbox is started (or a running one reused)
    and a warning says so plainly: its data is fake and nothing is paid.
    ``options`` are the keyword options of :class:`Client`.
    """
    config.check_names()
    settings = config.resolve(profile)
    if settings is not None:
        logger.info("connecting to %s (%s), company %s", settings.base_url,
                    settings.environment, settings.company_code)
        return Client(**settings.client_arguments(**options))
    handle = sandbox.ensure_running()
    logger.warning("no profile and no PAYNB_* connection variables: connected to the "
                   "embedded SANDBOX at %s (simulated service, fake data, nothing is paid). "
                   "To use the real service, set PAYNB_* variables or a profile "
                   "(docs/real-service.md).", handle.base_url)
    return cast("Client", handle.connect(**options))


# A sandbox handle's connect() builds this module's Client (the sandbox never imports it).
sandbox.register_client(Client)
