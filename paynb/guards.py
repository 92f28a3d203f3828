"""The guard service: gathers the evidence NACHA's submission guards judge by, and applies
their verdicts before an ACH entry reaches the wire.

The rules themselves are pure (:mod:`paynb.nacha`). This service, one per client and
wired by it, gives them their evidence: the ACH items and NOCs the client has seen
(``context.seen``: every list page, get, poll and submission answer), the rows of its
local history store, the NOCs marked applied in the journal, and the service's clock.
The resources ask it through :class:`paynb.resources.SubmissionGuard`
(``context.guard``): ``submit`` and ``submit_many`` before the journal records anything,
``client.nocs.obligations()`` and ``client.nocs.apply()`` for the NOC ledger; the forms
ask :meth:`GuardService.judge`, ``client.check_entries()`` :meth:`GuardService.check`.

Each verdict says what it checked; with no history at all the client warns once that it
cannot check.

paynb helps monitor these rules; it is not legal advice.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from paynb._warn import user_stacklevel
from paynb.errors import GuardWarning, PaynbError, SubmissionRefusedError
from paynb.journal import Journal
from paynb.nacha import (
    REINITIATION_DAYS,
    AccountHistory,
    Verdict,
    account_key,
    as_of_time,
    get,
    joined_evidence,
    judge,
    ledger,
    present,
    records_of,
)
from paynb.resources import SeenHistory, ServiceClock

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["FETCH_ONE_BY_ONE", "GUARDED_KINDS", "STORE_DAYS", "GuardService", "StoreReader"]

#: Item kinds the NACHA guards apply to.
GUARDED_KINDS = frozenset({"ach"})
#: Unseen entries of NOCs fetched one by one; more are found by listing the ACH items once.
FETCH_ONE_BY_ONE = 20
#: Days of the local history store the guards read, back from the service's today: the
#: 180 days of a reinitiation (2.12.4(a)), which run from the original's settlement, and
#: 30 more for the days between its receipt and settlement and to still recognise (and
#: refuse) a reinitiation a little past them. NOCs not applied are read whatever their age.
STORE_DAYS = REINITIATION_DAYS + 30

# The guards log as the compliance they apply (they always have).
logger = logging.getLogger("paynb.compliance")


class StoreReader(Protocol):
    """What the guards read of a local history store (:class:`paynb.History`)."""

    @property
    def path(self) -> Any:
        """Where the store is."""
        ...

    def info(self) -> dict[str, Any]:
        """The store's metadata (``version`` once a sync has written it)."""
        ...

    def guard_rows(self, accounts: Sequence[tuple[Any, Any]], *, since: Any,
                   applied: list[str]) -> Any:
        """The ACH rows and NOCs of ``accounts`` from ``since``, with ``problem``,
        ``checked``, ``holds``, ``items`` and ``nocs``."""
        ...

    def noc_evidence(self) -> Any:
        """What the NOC ledger judges: ``nocs``, ``items``, ``matches`` and ``keyed``."""
        ...

    def nocs(self, *, columns: list[str] | None = None) -> Any:
        """The NOCs the store holds (a DataFrame)."""
        ...


class _Lister(Protocol):
    def list(self, *, progress: bool | None = None) -> Any: ...


class _ItemLister(_Lister, Protocol):
    def get(self, item_id: int) -> Any: ...


class GuardService:
    """NACHA's submission guards for one client: evidence gathered, verdicts applied.

    Args:
        company_code: the company the client acts for.
        user: who acts (the overrides recorded name them).
        journal: where overrides are recorded and applied marks read (``None``: neither).
        clock: the service's time, which the rules judge by.
        seen: the ACH items and NOCs the client has seen.

    :meth:`bind` gives it the client's ``ach`` and ``nocs`` namespaces, through which
    it fetches the entries of NOCs the client has not seen, and its history store.
    """

    def __init__(self, *, company_code: str, user: str, journal: Journal | None,
                 clock: ServiceClock, seen: SeenHistory) -> None:
        self.company_code = company_code
        self.user = user
        self.journal = journal
        self.clock = clock
        self.seen = seen
        self._store: Callable[[], StoreReader | None] = lambda: None
        self._ach: _ItemLister | None = None
        self._nocs: _Lister | None = None
        self._lock = threading.Lock()
        self._versions: tuple[int, int] = (-1, -1)
        self._history: AccountHistory | None = None
        #: The last read of the history store: its cache key and what it gave.
        self._stored: tuple[Any, Any] | None = None
        #: What was told once per client: "cannot check", the stores' problems (no account
        #: keys, unreadable).
        self._told: set[str] = set()

    def __repr__(self) -> str:
        return f"<GuardService of company {self.company_code}>"

    def bind(self, *, ach: _ItemLister, nocs: _Lister,
             store: Callable[[], StoreReader | None]) -> None:
        """The namespaces through which unseen entries and NOCs are fetched, and the
        client's local history store (asked at each judgement, as a sync may write one at
        any time)."""
        self._ach, self._nocs, self._store = ach, nocs, store

    def _lookups(self) -> tuple[_ItemLister, _Lister]:
        if self._ach is None or self._nocs is None:
            raise PaynbError("the guard service was not bound to a client's namespaces")
        return self._ach, self._nocs

    # ------------------------------------------------------------------ evidence

    def history(self, *, whole: bool = False) -> AccountHistory:
        """What the client has seen, indexed once per change of it.

        NOCs about entries the client has not seen get those entries fetched (a get each,
        up to :data:`FETCH_ONE_BY_ONE`, else one list of the ACH items), so that each NOC's
        account is known; ``whole`` also fetches the entries known only by the guards'
        fields, for the corrected records of the ledger.
        """
        ach, _ = self._lookups()
        items, nocs = self.seen.ach, self.seen.noc
        with self._lock:
            wanted = sorted({i for i in (get(noc, "achItemId") for noc in nocs.records())
                             if i is not None}, key=str)
            if whole:
                items.keep_whole.update(str(i) for i in wanted)
            missing = [i for i in wanted
                       if (items.whole(i) is None if whole else i not in items)]
            if len(missing) > FETCH_ONE_BY_ONE:
                ach.list(progress=False)   # one list beats hundreds of single gets
            else:
                for item_id in missing:
                    try:
                        ach.get(item_id)
                    except PaynbError as exc:  # unmatched NOC: the ledger shows no account
                        logger.warning("guards: cannot fetch ACH item %s of a NOC: %s",
                                       item_id, exc)
            versions = (items.version, nocs.version)
            if self._history is None or self._versions != versions:
                items.compact()   # the guards read a dozen fields: let the rest go
                wholes = {str(i): record for i in wanted
                          if (record := items.whole(i)) is not None}
                self._history = AccountHistory(items.records(), nocs.records(), wholes)
                self._versions = versions
            return self._history

    def applied_marks(self) -> dict[str, dict[str, Any]]:
        """The journal's applied NOCs of the company (none without a journal)."""
        if self.journal is None:
            return {}
        return self.journal.nocs.applied(self.company_code)

    def _store_meta(self) -> tuple[StoreReader, dict[str, Any]] | None:
        """The local history store and its metadata, when a sync has written one; an
        unreadable one is told once and not used."""
        try:
            store = self._store()
            meta = store.info() if store is not None else {}
        except PaynbError as exc:  # paynb.history.HistoryError: a broken metadata file
            self._tell("unreadable", f"the history store cannot be read ({exc}): the guards "
                                     "judge by what this client has seen only")
            return None
        return (store, meta) if store is not None and meta.get("version") else None

    def _tell(self, what: str, text: str) -> None:
        """Warn ``text`` once per client (and ``what``)."""
        with self._lock:
            if what in self._told:
                return
            self._told.add(what)
        warnings.warn(text, GuardWarning, stacklevel=user_stacklevel())

    def _from_store(self, found: tuple[StoreReader, dict[str, Any]],
                    accounts: Sequence[tuple[Any, Any]], since: dt.datetime,
                    applied: Mapping[str, Any]) -> Any:
        """What the history store holds of ``accounts`` from ``since`` (the guards' columns,
        kept until the store, the accounts, the day or the applied NOCs change); its
        problem, if any, is told once."""
        store, meta = found
        key = (str(store.path), meta.get("version"),
               tuple(sorted(meta.get("versions", {}).items())), frozenset(map(str, accounts)),
               since.date(), frozenset(applied))
        with self._lock:
            if self._stored is not None and self._stored[0] == key:
                rows = self._stored[1]
            else:
                rows = store.guard_rows(accounts, since=since, applied=list(applied))
                self._stored = (key, rows)
        if rows.problem:
            self._tell(str(store.path), rows.problem)
        return rows

    # ------------------------------------------------------------------ verdicts

    def judge(self, bodies: Mapping[int, Mapping[str, Any]], *,
              new_authorization: bool = False,
              now: dt.datetime | None = None) -> dict[int, Verdict]:
        """The verdict on each body (wire-named ACH request fields), by row; no side
        effects but the fetching of what the evidence lacks."""
        seen = self.history()
        accounts = {row: (body.get("bankRoutingNumber"), body.get("bankAccountNumber"))
                    for row, body in bodies.items()}
        keys = {row: account_key(*pair) for row, pair in accounts.items()}
        store = self._store_meta() if any(key is not None for key in keys.values()) else None
        # The service's clock is asked only when some account has a history to judge by:
        # an entry to an account never seen before (with no history store) costs no request.
        relevant = store is not None or any(seen.has(key) for key in keys.values())
        at = now or (self.clock.now() if relevant else dt.datetime.now(dt.UTC))
        applied = self.applied_marks()
        judged, checked, empty = seen, seen.checked, seen.empty
        # The remedy the no-history warning names: a store that cannot match accounts is
        # not mended by a plain sync.
        remedy = "client.sync()"
        if store is not None:
            pairs = sorted({pair for row, pair in accounts.items() if keys[row] is not None})
            rows = self._from_store(store, pairs, at - dt.timedelta(days=STORE_DAYS), applied)
            if rows.problem:
                checked += f"; not the {rows.checked} (it cannot match accounts)"
                remedy = ("client.sync(rebuild=True) for its history store, which cannot "
                          "match accounts")
            else:
                checked += f"; {rows.checked}"
                empty = empty and not rows.holds
                if rows.items or rows.nocs:
                    judged = seen.joined(rows.items, rows.nocs, set(keys.values()))
        return judge(bodies, judged, at=at, applied=applied,
                     new_authorization=new_authorization, checked=checked, empty=empty,
                     remedy=remedy)

    def check(self, items: Any, *, new_authorization: bool = False,
              as_of: Any = None) -> pd.DataFrame:
        """:meth:`judge` of ACH ``items`` as a frame, a row per item: what
        :meth:`paynb.Client.check_entries` answers. Empty cells of a frame are fields left
        out, as ``submit_many`` reads them."""
        import pandas as pd  # lazy: a client that never asks loads no pandas for it

        rows = [items] if isinstance(items, Mapping) else records_of(items, "items")
        bodies = {n: {str(k): v for k, v in row.items() if present(v) is not None}
                  for n, row in enumerate(rows)}
        now = as_of_time(as_of) if as_of is not None else None
        verdicts = self.judge(bodies, new_authorization=new_authorization, now=now)
        return pd.DataFrame([(
            n, v.reference, v.verdict, v.allowed, [rule for rule, _ in v.refusals], v.reasons,
            v.warnings, [rule for rule, _ in v.overridden], v.changes, v.notes, v.checked)
            for n, v in verdicts.items()], columns=[
            "row", "yourReferenceNumber", "verdict", "allowed", "rules", "reasons", "warnings",
            "overridden", "changes", "notes", "checked"])

    def guard_submission(self, kind: str, bodies: dict[int, dict[str, Any]], *,
                         new_authorization: bool, all_or_nothing: bool,
                         overrides_by: str | None = None) -> dict[int, Verdict]:
        """The guards of ``submit``/``submit_many``: judge ``bodies`` (row -> wire body)
        before anything is sent.

        Refused rows are removed from ``bodies``; when ``all_or_nothing``, any refusal
        raises :class:`~paynb.errors.SubmissionRefusedError` and nothing is sent. The rows
        that go get paynb's changes (``RETRY PYMT``), their warnings as
        :class:`~paynb.errors.GuardWarning`, and their overrides recorded in the journal
        (by this client's user; at an approval, by ``overrides_by``, once per reference
        and rule).
        Returns the verdict of every judged row (none for kinds the rules do not cover).
        """
        if kind not in GUARDED_KINDS or not bodies:
            return {}
        verdicts = self.judge(bodies, new_authorization=new_authorization)
        logger.info("guards: %d entries judged against %s", len(verdicts),
                    next(iter(verdicts.values())).checked)
        refused = {row: v for row, v in verdicts.items() if not v.allowed}
        if refused and all_or_nothing:
            first = refused[min(refused)]
            where = f"row {first.row}: " if len(bodies) > 1 else ""
            more = f" (and {len(refused) - 1} more rows)" if len(refused) > 1 else ""
            raise SubmissionRefusedError(
                f"not sent: {where}{first.reasons[0]}{more} (checked: {first.checked})",
                verdicts=list(refused.values()))
        for row in refused:
            del bodies[row]
        by = overrides_by or self.user
        for row, verdict in verdicts.items():
            if row in refused:
                continue
            bodies[row].update(verdict.changes)
            for rule, reason in verdict.overridden:
                if self.journal is not None:
                    self.journal.overrides.record(self.company_code, kind, verdict.reference,
                                                  rule, reason, by=by,
                                                  once=overrides_by is not None)
                logger.warning("guards: %s sent with new_authorization=True: %s", rule, reason)
        texts = sorted({text for v in verdicts.values() if v.allowed for text in v.warnings})
        for text in texts:
            if text.startswith("cannot check"):
                self._tell("cannot check", text)
            else:
                warnings.warn(text, GuardWarning, stacklevel=user_stacklevel())
        return verdicts

    # ------------------------------------------------------------------ the NOC ledger

    def noc_ledger(self, as_of: dt.datetime) -> list[dict[str, Any]]:
        """The ledger rows (:func:`paynb.nacha.ledger`) of every NOC the client has seen,
        as the ledger stood on ``as_of``, with the journal's applied marks; the entries
        the NOCs are about are fetched when the client has not seen them whole."""
        seen = self.history(whole=True)
        found = self._store_meta()
        stored = found[0].noc_evidence() if found is not None else None
        if stored is None or not stored.matches:
            return ledger(seen.nocs, seen.noc_entries, as_of=as_of,
                          applied=self.applied_marks(), indexed=seen.noc_indexed,
                          as_it_stood=True)
        # The history store's evidence (what the morning run judges), and what this client
        # has seen besides, keyed as the store keys its own: a masked store's accounts and
        # the client's whole numbers are told apart alike.
        items = self.seen.ach
        nocs, entries = joined_evidence(
            stored.nocs, stored.items, stored.keyed(self.seen.noc.records(), "noc"),
            stored.keyed([items.whole(get(record, "achItemId")) or record
                          for record in items.records()], "ach"))
        return ledger(nocs, entries, as_of=as_of, applied=self.applied_marks(),
                      as_it_stood=True)

    def unknown_noc(self, noc_id: str) -> str | None:
        """None when ``noc_id`` (as text) is a NOC of the company; else where it was looked
        for, for the error that refuses to mark it.

        It is looked for among the NOCs the client has seen, then in the service's NOC
        list (listed now: a mark is rare, and an id typed by hand is the case to catch),
        then in the history store's NOCs (the service may no longer list an old one).
        """
        _, lister = self._lookups()
        nocs = self.seen.noc

        def held() -> set[str]:
            return {str(get(noc, "nocId")) for noc in nocs.records()}

        if noc_id in held():
            return None
        listed = lister.list(progress=False)
        if noc_id in held():
            return None
        looked = f"the service lists {len(listed):,} NOCs of company {self.company_code}"
        store = self._store_meta()
        if store is not None:
            stored = store[0].nocs(columns=["nocId"])
            if noc_id in set(stored["nocId"].astype(str)):
                return None
            looked += f" and its history store {len(stored):,}"
        return looked
