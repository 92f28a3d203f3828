"""Submission guards: NACHA's NOC deadlines, returns that need a new authorization, and
the limits of reinitiation, checked before an ACH entry reaches the wire.

``client.ach.submit`` and ``submit_many`` call :func:`guard_submission` with the
checked bodies, after paynb's own validation and before the journal records anything;
the forms ask :func:`judge` while the analyst types. Each entry gets a :class:`Verdict`:

- **NOC** (NACHA 2.12.1): an unapplied NOC on the entry's account whose sixth banking
  day after receipt has passed refuses the entry, naming the NOC, its date and the
  corrected values; one not yet due warns. An entry that already carries every
  corrected value passes.
- **Returned account** (2.12.4(b)): when the last entry to the account came back
  R02, R03, R04, R05, R07, R08, R10, R16, R29 or R51, the entry is refused unless
  ``new_authorization=True`` (recorded in the journal as an override).
- **Reinitiation** (2.12.4): a debit of the same amount to the account of a debit
  returned R01 or R09 is a reinitiation: at most two, within 180 days of the original
  entry's settlement, with company entry description ``RETRY PYMT`` (paynb sets it when
  the entry has none, refuses one that says something else).

The guards judge by the service's clock (:func:`service_now`: the sandbox's own clock,
else UTC now) and by the history this client has seen (every ACH item and NOC it has
listed, fetched, polled or submitted this session); each verdict says what it checked,
and with no history at all the client warns once that it cannot check.

Layering: :mod:`paynb.resources` sits below this module, so the resources import it
lazily, inside ``submit``/``submit_many``, at the moment of sending. A registration
hook would leave the guards off whenever nothing had imported :mod:`paynb.compliance`
yet, silently; the lazy import cannot be forgotten and keeps ``import paynb`` fast.

paynb helps monitor these rules; it is not legal advice.
"""

from __future__ import annotations

import datetime as dt
import logging
import threading
import warnings
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from paynb._coerce import parse_decimal
from paynb._warn import user_stacklevel
from paynb.codes import RETURN_CODE_TABLE
from paynb.compliance._nocs import (
    SETTLED_STATES,
    Entry,
    account_key,
    as_of_time,
    camel,
    carries,
    corrected_fields,
    corrected_key,
    get,
    index,
    ledger,
    parse_corrected_data,
    present,
    records_of,
    when,
)
from paynb.errors import PaynbError, PaynbWarning, SubmissionRefusedError

if TYPE_CHECKING:
    import pandas as pd

    from paynb.client import Client
    from paynb.resources._base import Resource

__all__ = [
    "MAX_REINITIATIONS",
    "NEW_AUTHORIZATION_CODES",
    "REINITIATION_CODES",
    "REINITIATION_DAYS",
    "RETRY_DESCRIPTION",
    "GuardWarning",
    "Verdict",
    "check_entries",
    "service_now",
]

logger = logging.getLogger("paynb.compliance")

#: Return codes after which the account may not be debited again without a new
#: authorization (NACHA 2.12.4(b)): closed, no account, invalid number, unauthorized,
#: revoked, stopped, not authorized, frozen, and R51 (RCK item ineligible); the codes
#: :data:`paynb.codes.RETURN_CODE_TABLE` marks ``needs_new_authorization``.
NEW_AUTHORIZATION_CODES = tuple(code for code, r in RETURN_CODE_TABLE.items()
                                if r.needs_new_authorization)
#: Return codes whose entries may be reinitiated (insufficient or uncollected funds): the
#: codes :data:`paynb.codes.RETURN_CODE_TABLE` marks ``reinitiable``.
REINITIATION_CODES = tuple(code for code, r in RETURN_CODE_TABLE.items() if r.reinitiable)
#: Reinitiations allowed per original entry (NACHA 2.12.4(a)).
MAX_REINITIATIONS = 2
#: Days after the original entry's settlement within which it may be reinitiated.
REINITIATION_DAYS = 180
#: Company entry description a reinitiated entry must carry (NACHA 2.12.4(c)).
RETRY_DESCRIPTION = "RETRY PYMT"
_DESCRIPTION_FIELD = "achCompanyEntryDescription"
#: Item kinds the NACHA guards apply to.
GUARDED_KINDS = frozenset({"ach"})
#: Unseen entries of NOCs fetched one by one; more are found by listing the ACH items once.
FETCH_ONE_BY_ONE = 20
#: Days of the local history store the guards read, back from the service's today: the
#: 180 days of a reinitiation (2.12.4(a)), which run from the original's settlement, and
#: 30 more for the days between its receipt and settlement and to still recognise (and
#: refuse) a reinitiation a little past them. NOCs not applied are read whatever their age.
STORE_DAYS = REINITIATION_DAYS + 30


class GuardWarning(PaynbWarning):
    """A submission guard's warning: an open NOC not yet due, or no history to check.

    A :class:`~paynb.errors.PaynbWarning`, so ``warnings.filterwarnings("ignore",
    category=paynb.PaynbWarning)`` covers it with every other paynb warning."""


@dataclass
class Verdict:
    """What the guards say of one entry.

    ``refusals`` and ``overridden`` hold ``(rule, reason)`` pairs (rules:
    ``noc-overdue``, ``returned-account``, ``reinitiation-limit``,
    ``reinitiation-window``, ``reinitiation-description``); ``changes`` the fields
    paynb sets on the entry (``achCompanyEntryDescription``: ``RETRY PYMT``);
    ``checked`` the history the verdict rests on; ``corrections`` the fields the NOCs
    on the account ask to set (full values: not in the repr).
    """

    row: int | None = None
    reference: str | None = None
    refusals: list[tuple[str, str]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    overridden: list[tuple[str, str]] = field(default_factory=list)
    changes: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    checked: str = ""
    #: The request fields each unapplied NOC on the account asks to set (full values, so
    #: kept out of the repr): what a form offers to fill in (:meth:`AchForm.prefill`).
    corrections: list[dict[str, str]] = field(default_factory=list, repr=False)

    @property
    def allowed(self) -> bool:
        """Whether the entry may be sent."""
        return not self.refusals

    @property
    def reasons(self) -> list[str]:
        """Why it is refused (empty when allowed)."""
        return [reason for _rule, reason in self.refusals]

    @property
    def verdict(self) -> str:
        """``refused``, ``warning`` or ``ok``."""
        return "refused" if self.refusals else "warning" if self.warnings else "ok"

    def __str__(self) -> str:
        parts = [*(f"refused: {reason}" for reason in self.reasons),
                 *(f"warning: {text}" for text in self.warnings),
                 *(f"override ({rule}): {reason}" for rule, reason in self.overridden),
                 *self.notes]
        return "; ".join(parts) or "ok"


# ---------------------------------------------------------------------------- clock


def service_now(client: Client) -> dt.datetime:
    """The service's time (UTC): the sandbox's clock when the client is connected to the
    sandbox (``GET /sandbox/clock``; it moves with ``simulate.advance_clock``), else the
    local UTC time (the real service publishes no clock)."""
    if getattr(client, "environment", None) == "sandbox":
        answer = client.context.transport.json("GET", "/sandbox/clock")
        found = as_of_time(answer.get("now") if isinstance(answer, Mapping) else None,
                           "the sandbox clock")
        return found
    return dt.datetime.now(dt.UTC)


# ---------------------------------------------------------------------------- history


class _History:
    """The ACH entries and NOCs a client has seen, indexed by account.

    Built in one light pass (an account key per record); the entries of an account are
    read in full only when an entry to that account is judged, so that a history of
    100,000 items costs a fraction of a second, once per change of what was seen.
    """

    def __init__(self, items: Sequence[Mapping[str, Any]], nocs: Sequence[Mapping[str, Any]],
                 wholes: Mapping[str, Mapping[str, Any]]) -> None:
        self.nocs = nocs
        wanted = {str(get(noc, "achItemId")) for noc in nocs}
        self._raw: dict[int, list[Mapping[str, Any]]] = {}
        self._entries: dict[int, list[Entry]] = {}
        noc_items: list[Entry] = []
        received: list[Any] = []
        for record in items:
            fields = camel(record)
            key = account_key(present(fields.get("bankRoutingNumber")),
                              present(fields.get("bankAccountNumber")))
            if key is not None:
                self._raw.setdefault(key, []).append(fields)
            if (at := present(fields.get("receivedDateTime"))) is not None:
                received.append(at)
            if wanted and (item_id := str(present(fields.get("achItemId")))) in wanted:
                # The whole record, when known, gives the corrected record its fields.
                noc_items.append(Entry(wholes.get(item_id) or fields))
        #: Accounts with a NOC (whose entry this client has seen).
        self.noc_keys: set[int] = {entry.key for entry in noc_items if entry.key is not None}
        # The accounts as the NOCs corrected them: a later entry there carrying the
        # corrected values shows the change made (the ledger's "applied").
        by_item = {str(entry.id): entry for entry in noc_items}
        corrected_keys = {key for noc in nocs if str(get(noc, "achItemId")) in by_item
                          if (key := corrected_key(
                              by_item[str(get(noc, "achItemId"))],
                              parse_corrected_data(get(noc, "changeCode"),
                                                   get(noc, "correctedData")))) is not None}
        #: The entries the NOC ledger needs: the NOCs' own, and those of their accounts
        #: before and after correction.
        whole = {str(entry.id): entry for entry in noc_items}
        self.noc_entries = [entry for entry in noc_items if entry.key is None] + \
            [whole.get(str(entry.id), entry)
             for key in sorted(self.noc_keys | corrected_keys)
             for entry in self.entries(key, went_out=False)]
        self.noc_indexed = index(self.noc_entries)
        self.empty = not items and not nocs
        if self.empty:
            self.checked = "nothing: this client has seen no ACH items or NOCs"
        else:
            first, last = (when(min(received, key=str)), when(max(received, key=str))) \
                if received else (None, None)
            span = f"received {first:%Y-%m-%d} to {last:%Y-%m-%d} " if first and last else ""
            self.checked = (f"{len(items):,} ACH items {span}and {len(nocs):,} NOCs seen by "
                            "this client")

    def joined(self, items: list[dict[str, Any]], nocs: list[dict[str, Any]],
               keys: set[int | None]) -> _History:
        """A history of the accounts ``keys`` only: what this client has seen of them,
        and ``items`` and ``nocs`` (of the same accounts, from the history store) that it
        has not seen (what it has seen is the later word)."""
        mine = [record for key in keys if key is not None for record in self._raw.get(key, ())]
        known = {str(present(record.get("achItemId"))) for record in mine}
        noc_ids = {str(get(noc, "nocId")) for noc in self.nocs}
        return _History([*mine, *(r for r in items if str(r.get("achItemId")) not in known)],
                        [*self.nocs, *(n for n in nocs if str(n.get("nocId")) not in noc_ids)],
                        {})

    def has(self, key: int | None) -> bool:
        """Whether the account has some history (entries, or a NOC)."""
        return key is not None and (key in self._raw or key in self.noc_keys)

    def entries(self, key: int, *, went_out: bool = True) -> list[Entry]:
        """The entries to the account, in the order the service received them (only
        those that went to the bank, unless ``went_out`` is False)."""
        if key not in self._entries:
            epoch = dt.datetime.min.replace(tzinfo=dt.UTC)
            self._entries[key] = sorted((Entry(record) for record in self._raw.get(key, ())),
                                        key=lambda entry: entry.received or epoch)
        found = self._entries[key]
        return [entry for entry in found if entry.went_out] if went_out else found

    def obligations(self, as_of: dt.datetime,
                    applied: Mapping[str, Mapping[str, Any]]) -> dict[int, list[dict[str, Any]]]:
        """The ledger rows of the NOCs, by account key."""
        rows = ledger(self.nocs, self.noc_entries, as_of=as_of, applied=applied,
                      indexed=self.noc_indexed)
        by_key: dict[int, list[dict[str, Any]]] = {}
        for row in rows:
            if row["accountKey"] is not None:
                by_key.setdefault(row["accountKey"], []).append(row)
        return by_key


@dataclass
class _State:
    """What the guards keep per client: the indexed history and the one-time warning."""

    versions: tuple[int, int] = (-1, -1)
    history: _History | None = None
    warned: bool = False
    #: The last read of the history store: its cache key and what it gave.
    stored: tuple[Any, Any] | None = None
    #: The stores whose problem (no account keys, unreadable) was told.
    told: set[str] = field(default_factory=set)
    lock: threading.Lock = field(default_factory=threading.Lock)


_STATES: weakref.WeakKeyDictionary[Any, _State] = weakref.WeakKeyDictionary()
_STATES_LOCK = threading.Lock()


def _state(client: Client) -> _State:
    with _STATES_LOCK:
        state = _STATES.get(client)
        if state is None:
            state = _STATES[client] = _State()
        return state


def history(client: Client, *, whole: bool = False) -> _History:
    """The client's history, indexed once per change of what it has seen.

    NOCs about entries this client has not seen get those entries fetched (a get each,
    up to :data:`FETCH_ONE_BY_ONE`, else one list of the ACH items), so that each NOC's
    account is known; ``whole`` also fetches the entries known only by the guards'
    fields, for the corrected records of the ledger.
    """
    items, nocs = client.ach.seen, client.nocs.seen
    assert items is not None and nocs is not None
    state = _state(client)
    with state.lock:
        wanted = sorted({i for i in (get(noc, "achItemId") for noc in nocs.records())
                         if i is not None}, key=str)
        if whole:
            items.keep_whole.update(str(i) for i in wanted)
        missing = [i for i in wanted
                   if (items.whole(i) is None if whole else i not in items)]
        if len(missing) > FETCH_ONE_BY_ONE:
            client.ach.list(progress=False)   # one list beats hundreds of single gets
        else:
            for item_id in missing:
                try:
                    client.ach.get(item_id)
                except PaynbError as exc:  # the NOC stays unmatched: the ledger shows no account
                    logger.warning("guards: cannot fetch ACH item %s of a NOC: %s", item_id, exc)
        versions = (items.version, nocs.version)
        if state.history is None or state.versions != versions:
            items.compact()   # the guards read a dozen fields: let the rest go
            wholes = {str(i): record for i in wanted if (record := items.whole(i)) is not None}
            state.history = _History(items.records(), nocs.records(), wholes)
            state.versions = versions
        return state.history


def _store_meta(client: Client) -> tuple[Any, dict[str, Any]] | None:
    """The client's local history store (``client.history``) and its metadata, when a
    sync has written one; an unreadable one is told once and not used."""
    try:
        store = client.history
        meta = store.info()
    except PaynbError as exc:  # paynb.history.HistoryError: a broken metadata file
        _tell(client, "unreadable", f"the history store cannot be read ({exc}): the guards "
                                    "judge by what this client has seen only")
        return None
    return (store, meta) if meta.get("version") else None


def _tell(client: Client, what: str, text: str) -> None:
    """Warn ``text`` once per client (and ``what``)."""
    state = _state(client)
    with state.lock:
        if what in state.told:
            return
        state.told.add(what)
    warnings.warn(text, GuardWarning, stacklevel=user_stacklevel())


def from_store(client: Client, found: tuple[Any, dict[str, Any]],
               accounts: Sequence[tuple[Any, Any]], since: dt.datetime,
               applied: Mapping[str, Any]) -> Any:
    """What the history store holds of ``accounts`` from ``since`` (the guards' columns,
    kept until the store, the accounts, the day or the applied NOCs change); its problem,
    if any, is told once."""
    store, meta = found
    state = _state(client)
    key = (str(store.path), meta.get("version"), frozenset(map(str, accounts)), since.date(),
           frozenset(applied))
    with state.lock:
        if state.stored is not None and state.stored[0] == key:
            rows = state.stored[1]
        else:
            rows = store.guard_rows(accounts, since=since, applied=list(applied))
            state.stored = (key, rows)
    if rows.problem:
        _tell(client, str(store.path), rows.problem)
    return rows


def unknown_noc(client: Client, noc_id: str) -> str | None:
    """None when ``noc_id`` (as text) is a NOC of the client's company; else where it was
    looked for, for the error that refuses to mark it.

    It is looked for among the NOCs this client has seen, then in the service's NOC list
    (listed now: a mark is rare, and an id typed by hand is the case to catch), then in
    the history store's NOCs (the service may no longer list an old one).
    """
    nocs = client.nocs.seen
    assert nocs is not None

    def held() -> set[str]:
        return {str(get(noc, "nocId")) for noc in nocs.records()}

    if noc_id in held():
        return None
    listed = client.nocs.list(progress=False)
    if noc_id in held():
        return None
    looked = f"the service lists {len(listed):,} NOCs of company {client.company_code}"
    store = _store_meta(client)
    if store is not None:
        stored = store[0].nocs(columns=["nocId"])
        if noc_id in set(stored["nocId"].astype(str)):
            return None
        looked += f" and its history store {len(stored):,}"
    return looked


def applied_marks(client: Client) -> dict[str, dict[str, Any]]:
    """The journal's applied NOCs of the client's company (none without a journal)."""
    journal = client.context.journal
    return journal.nocs.applied(client.company_code) if journal is not None else {}


# ---------------------------------------------------------------------------- rules


def _day(value: dt.datetime | None) -> str:
    return f"{value:%Y-%m-%d}" if value is not None else "an unknown date"


def _noc_rule(verdict: Verdict, body: Mapping[str, Any], obligations: list[dict[str, Any]],
              today: dt.date) -> None:
    for row in obligations:
        if row["state"] in SETTLED_STATES:
            continue
        what = (f"NOC {row['nocId']} ({row['changeCode']} {row['changeReason']}) on account "
                f"{row['bankAccountNumber']}, received {_day(row['received'])}")
        if carries(body, row["corrected"]):
            verdict.notes.append(f"{what}: this entry carries its corrected values; mark the "
                                 f"NOC applied (client.nocs.apply({row['nocId']!r}))")
            continue
        if row["corrected"]:
            verdict.corrections.append(corrected_fields(row["corrected"]))
        sixth = row["sixthBankingDay"]
        if sixth is not None and today > sixth:
            verdict.refusals.append((
                "noc-overdue",
                f"{what}, was due {sixth:%Y-%m-%d} (six banking days) and is not applied: "
                f"change {row['mustChange']}. Send the entry with the corrected values "
                f"(client.nocs.obligations() has the corrected record) and mark the NOC "
                f"applied with client.nocs.apply({row['nocId']!r})"))
        else:
            due = f"{sixth:%Y-%m-%d}" if sixth is not None else "soon"
            verdict.warnings.append(f"{what}, due {due}: change {row['mustChange']} before "
                                    "then, or this entry goes to the old data")


def _returned_rule(verdict: Verdict, entries: list[Entry], *, new_authorization: bool) -> None:
    if not entries:
        return
    last = entries[-1]
    if last.status != "R" or last.code not in NEW_AUTHORIZATION_CODES:
        return
    reason = (f"the last entry to this account (item {last.id}, received "
              f"{_day(last.received)}) was returned {last.code} "
              f"({RETURN_CODE_TABLE[last.code].meaning}) on {_day(last.returned)}: "
              "another entry needs a new authorization from the receiver (NACHA 2.12.4(b)); "
              "pass new_authorization=True once you hold one")
    if new_authorization:
        verdict.overridden.append(("returned-account", reason))
    else:
        verdict.refusals.append(("returned-account", reason))


def _original(chain: list[Entry], last: Entry) -> Entry:
    """The entry ``last`` reinitiates, following reinitiations of reinitiations back."""
    original = last
    while True:
        before = [e for e in chain if e.received is not None and original.received is not None
                  and e.received < original.received and e.status == "R"
                  and e.code in REINITIATION_CODES and e.returned is not None
                  and original.received > e.returned and e.settled is not None
                  and (original.received.date() - e.settled.date()).days <= REINITIATION_DAYS]
        if not before:
            return original
        original = before[-1]


def _reinitiation_rule(verdict: Verdict, body: Mapping[str, Any], entries: list[Entry], *,
                       today: dt.date, new_authorization: bool) -> None:
    kind = str(body.get("achTransactionType") or "").strip().lower()
    if kind != "debit" or str(body.get("achTransactionSubType") or "").strip():
        return
    try:
        amount = parse_decimal(body.get("amount"))
    except ValueError:
        return  # not an amount: the request model refuses it, with its own message
    if amount is None:
        return
    chain = [e for e in entries if e.type == "debit" and not e.sub_type and e.amount == amount]
    returned = [e for e in chain if e.status == "R" and e.code in REINITIATION_CODES]
    if not returned:
        return
    original = _original(chain, returned[-1])
    # After the return, and after the original itself: a return date is a day (its
    # midnight), so an original received that same day is not its own reinitiation.
    later = [e for e in chain if e.received is not None and original.returned is not None
             and e.received > original.returned and e is not original
             and (original.received is None or e.received > original.received)]
    if any(e.status == "S" and e.settled_from == "settleDate" and e.settled is not None
           and e.settled.date() < today for e in later):
        # A reinitiation settled and was not returned: the original is paid, and a new
        # debit of the same amount is a new entry (the next instalment), not a retry.
        return
    what = (f"a debit of {amount} to an account whose debit of that amount (item "
            f"{original.id}) was returned {original.code} on {_day(original.returned)}")
    if new_authorization:
        verdict.overridden.append(("reinitiation", f"{what}: sent as a new entry under a new "
                                   "authorization, not as a reinitiation"))
        return
    settled = original.settled
    days = (today - settled.date()).days if settled is not None else None
    basis = {"settleDate": "settled", "sendDate": "sent (settlement not seen)",
             "receivedDateTime": "received (settlement not seen)"}.get(
        original.settled_from or "", "settled")
    if len(later) >= MAX_REINITIATIONS:
        ids = ", ".join(str(e.id) for e in later)
        verdict.refusals.append((
            "reinitiation-limit",
            f"{what} is a reinitiation, and it was reinitiated {len(later)} times already "
            f"(items {ids}): NACHA allows at most {MAX_REINITIATIONS} (2.12.4(a))"))
    elif days is None or days > REINITIATION_DAYS:
        verdict.refusals.append((
            "reinitiation-window",
            f"{what} is a reinitiation, and the original was {basis} {_day(settled)}, "
            f"{days} days ago: a reinitiation must be sent within {REINITIATION_DAYS} days "
            "of the original's settlement (NACHA 2.12.4(a))"))
    else:
        given = str(body.get(_DESCRIPTION_FIELD) or "").strip()
        number = len(later) + 1
        if not given:
            verdict.changes[_DESCRIPTION_FIELD] = RETRY_DESCRIPTION
            verdict.notes.append(f"reinitiation {number} of {MAX_REINITIATIONS} of item "
                                 f"{original.id} ({basis} {_day(settled)}, {days} days ago): "
                                 f"company entry description set to {RETRY_DESCRIPTION}")
        elif given.upper() != RETRY_DESCRIPTION:
            verdict.refusals.append((
                "reinitiation-description",
                f"{what} is a reinitiation, which must carry the company entry description "
                f"{RETRY_DESCRIPTION!r} (NACHA 2.12.4(c)); this entry says {given!r}"))
        else:
            verdict.notes.append(f"reinitiation {number} of {MAX_REINITIATIONS} of item "
                                 f"{original.id} ({basis} {_day(settled)}, {days} days ago)")


def judge(client: Client, bodies: Mapping[int, Mapping[str, Any]], *,
          new_authorization: bool = False, now: dt.datetime | None = None) -> dict[int, Verdict]:
    """The verdict on each body (wire-named ACH request fields), by row; no side effects."""
    seen = history(client)
    accounts = {row: (body.get("bankRoutingNumber"), body.get("bankAccountNumber"))
                for row, body in bodies.items()}
    keys = {row: account_key(*pair) for row, pair in accounts.items()}
    store = _store_meta(client) if any(key is not None for key in keys.values()) else None
    # The service's clock is asked only when some account has a history to judge by:
    # an entry to an account never seen before (with no history store) costs no request.
    relevant = store is not None or any(seen.has(key) for key in keys.values())
    at = now or (service_now(client) if relevant else dt.datetime.now(dt.UTC))
    today = at.date()
    applied = applied_marks(client)
    judged, checked, empty = seen, seen.checked, seen.empty
    # The remedy the no-history warning names: a store that cannot match accounts is
    # not mended by a plain sync.
    remedy = "client.sync()"
    if store is not None:
        pairs = sorted({pair for row, pair in accounts.items() if keys[row] is not None})
        rows = from_store(client, store, pairs, at - dt.timedelta(days=STORE_DAYS), applied)
        if rows.problem:
            checked += f"; not the {rows.checked} (it cannot match accounts)"
            remedy = "client.sync(rebuild=True) for its history store, which cannot match accounts"
        else:
            checked += f"; {rows.checked}"
            empty = empty and not rows.holds
            if rows.items or rows.nocs:
                judged = seen.joined(rows.items, rows.nocs, set(keys.values()))
    by_noc_key = judged.obligations(at, applied) if judged.noc_keys and relevant else {}
    verdicts: dict[int, Verdict] = {}
    for row, body in bodies.items():
        verdict = Verdict(row=row, reference=body.get("yourReferenceNumber"),
                          checked=f"{checked}, as of {at:%Y-%m-%d %H:%M} UTC")
        if empty:
            verdict.warnings.append(
                "cannot check NOCs, returns and reinitiations: this client has listed no ACH "
                "items or NOCs and has no history store holding them (list them first, e.g. "
                f"client.ach.list() and client.nocs.list(), or {remedy})")
        if "*" in str(body.get("bankAccountNumber") or ""):
            verdict.warnings.append("the account number is masked (****): cannot match it "
                                    "against the history; give the full number")
        key = keys[row]
        if key is not None and relevant:
            entries = judged.entries(key)
            _noc_rule(verdict, body, by_noc_key.get(key, []), today)
            _returned_rule(verdict, entries, new_authorization=new_authorization)
            _reinitiation_rule(verdict, body, entries, today=today,
                               new_authorization=new_authorization)
        verdicts[row] = verdict
    return verdicts


def guard_submission(resource: Resource, bodies: dict[int, dict[str, Any]], *,
                     new_authorization: bool, all_or_nothing: bool) -> dict[int, Verdict]:
    """The guards of ``submit``/``submit_many``: judge ``bodies`` (row -> wire body) before
    anything is sent.

    Refused rows are removed from ``bodies``; when ``all_or_nothing``, any refusal raises
    :class:`~paynb.errors.SubmissionRefusedError` and nothing is sent. The rows that go
    get paynb's changes (``RETRY PYMT``), their warnings as :class:`GuardWarning`, and
    their overrides recorded in the journal. Returns the verdict of every judged row
    (none for kinds the rules do not cover).
    """
    if resource.kind not in GUARDED_KINDS or not bodies:
        return {}
    client = resource.client
    verdicts = judge(client, bodies, new_authorization=new_authorization)
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
    state = _state(client)
    by = resource.context.user
    for row, verdict in verdicts.items():
        if row in refused:
            continue
        bodies[row].update(verdict.changes)
        for rule, reason in verdict.overridden:
            journal = client.context.journal
            if journal is not None:
                journal.overrides.record(client.company_code, resource.kind,
                                        verdict.reference, rule, reason, by=by)
            logger.warning("guards: %s sent with new_authorization=True: %s", rule, reason)
    texts = sorted({text for v in verdicts.values() if v.allowed for text in v.warnings})
    for text in texts:
        if text.startswith("cannot check"):
            if state.warned:
                continue
            state.warned = True
        warnings.warn(text, GuardWarning, stacklevel=user_stacklevel())
    return verdicts


def check_entries(client: Client, items: Any, *, new_authorization: bool = False,
                  as_of: Any = None) -> pd.DataFrame:
    """What the submission guards would say of ACH ``items``, sending nothing.

    ``items`` is one mapping, a DataFrame or a list of mappings (wire names). Judged
    against the history this client has seen, at the service's time (or ``as_of``).
    Returns one row per item: ``row, yourReferenceNumber, verdict`` (``refused``,
    ``warning``, ``ok``), ``allowed, rules`` (of the refusals), ``reasons, warnings,
    overridden, changes`` (fields paynb would set), ``notes`` and ``checked``.
    """
    import pandas as pd

    rows = [items] if isinstance(items, Mapping) else records_of(items, "items")
    # Empty cells of a frame (NaN, NA) are fields left out, as submit_many reads them.
    bodies = {n: {str(k): v for k, v in row.items() if present(v) is not None}
              for n, row in enumerate(rows)}
    now = as_of_time(as_of) if as_of is not None else None
    verdicts = judge(client, bodies, new_authorization=new_authorization, now=now)
    columns = ["row", "yourReferenceNumber", "verdict", "allowed", "rules", "reasons",
               "warnings", "overridden", "changes", "notes", "checked"]
    return pd.DataFrame([{
        "row": n, "yourReferenceNumber": v.reference, "verdict": v.verdict,
        "allowed": v.allowed, "rules": [rule for rule, _ in v.refusals],
        "reasons": v.reasons, "warnings": v.warnings,
        "overridden": [rule for rule, _ in v.overridden], "changes": v.changes,
        "notes": v.notes, "checked": v.checked} for n, v in verdicts.items()],
        columns=columns)
