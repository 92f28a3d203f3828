"""The submission guards' rules: NACHA's NOC deadlines, returns that need a new
authorization, and the limits of reinitiation, as pure functions over the evidence (the
entries and NOCs of an account, the NOCs marked applied, the moment judged).

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

:func:`judge` gives each entry a :class:`Verdict`; the guard service (:mod:`paynb.guards`)
gathers the evidence.

paynb helps monitor these rules; it is not legal advice.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paynb._coerce import parse_decimal
from paynb.codes import RETURN_CODE_TABLE, code_meaning
from paynb.nacha._evidence import Entry, account_key, camel, entries_of, get, present, when
from paynb.nacha._ledger import (
    SETTLED_STATES,
    carries,
    corrected_fields,
    corrected_key,
    index,
    ledger,
    parse_corrected_data,
)

__all__ = ["MAX_REINITIATIONS", "NEW_AUTHORIZATION_CODES", "NEW_AUTHORIZATION_OVERRIDES",
           "REINITIATION_CODES", "REINITIATION_DAYS", "RETRY_DESCRIPTION", "AccountHistory",
           "Verdict", "judge"]

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
#: The refusals ``new_authorization=True`` overrides (recorded as overrides): a new
#: authorization answers a return that needs one (2.12.4(b)), and makes a debit a new
#: entry rather than a reinitiation (2.12.4). An overdue NOC it does not: the entry
#: must carry the corrected data (2.12.1).
NEW_AUTHORIZATION_OVERRIDES = frozenset({"returned-account", "reinitiation-limit",
                                         "reinitiation-window", "reinitiation-description"})


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
    def overridable(self) -> bool:
        """Whether ``new_authorization=True`` would let it go: refused, and only for
        what a new authorization answers (:data:`NEW_AUTHORIZATION_OVERRIDES`)."""
        return bool(self.refusals) and all(rule in NEW_AUTHORIZATION_OVERRIDES
                                           for rule, _reason in self.refusals)

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


class AccountHistory:
    """The ACH entries and NOCs the guards judge by (seen by a client, read from a history
    store), indexed by account.

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
        self.noc_entries = [entry for entry in noc_items if entry.key is None] + \
            [by_item.get(str(entry.id), entry)
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
               keys: set[int | None]) -> AccountHistory:
        """A history of the accounts ``keys`` only: what this client has seen of them,
        and ``items`` and ``nocs`` (of the same accounts, from the history store) that it
        has not seen (what it has seen is the later word)."""
        mine = [record for key in keys if key is not None for record in self._raw.get(key, ())]
        known = {str(present(record.get("achItemId"))) for record in mine}
        noc_ids = {str(get(noc, "nocId")) for noc in self.nocs}
        return AccountHistory([*mine, *(r for r in items if str(r.get("achItemId")) not in known)],
                        [*self.nocs, *(n for n in nocs if str(n.get("nocId")) not in noc_ids)],
                        {})

    def has(self, key: int | None) -> bool:
        """Whether the account has some history (entries, or a NOC)."""
        return key is not None and (key in self._raw or key in self.noc_keys)

    def entries(self, key: int, *, went_out: bool = True) -> list[Entry]:
        """The entries to the account, in the order the service received them (only
        those that went to the bank, unless ``went_out`` is False)."""
        if key not in self._entries:
            self._entries[key] = entries_of(self._raw.get(key, []))
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
            f"{original.id}) was returned {original.code} "
            f"({code_meaning(original.code)}) on {_day(original.returned)}")
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
        note = (f"reinitiation {len(later) + 1} of {MAX_REINITIATIONS} of item {original.id} "
                f"({basis} {_day(settled)}, {days} days ago)")
        if not given:
            verdict.changes[_DESCRIPTION_FIELD] = RETRY_DESCRIPTION
            verdict.notes.append(f"{note}: company entry description set to {RETRY_DESCRIPTION}")
        elif given.upper() != RETRY_DESCRIPTION:
            verdict.refusals.append((
                "reinitiation-description",
                f"{what} is a reinitiation, which must carry the company entry description "
                f"{RETRY_DESCRIPTION!r} (NACHA 2.12.4(c)); this entry says {given!r}"))
        else:
            verdict.notes.append(note)


def judge(bodies: Mapping[int, Mapping[str, Any]], history: AccountHistory, *,
          at: dt.datetime, applied: Mapping[str, Mapping[str, Any]],
          new_authorization: bool = False, checked: str | None = None,
          empty: bool | None = None, remedy: str = "client.sync()") -> dict[int, Verdict]:
    """The verdict on each body (wire-named ACH request fields), by row, judged at ``at``
    by ``history`` and the NOCs marked ``applied`` (id -> mark); no side effects.

    ``checked`` says what the history rests on (default: the history's own words);
    ``empty`` that there was nothing to check against (each verdict then warns, naming
    ``remedy``)."""
    checked = history.checked if checked is None else checked
    empty = history.empty if empty is None else empty
    today = at.date()
    keys = {row: account_key(body.get("bankRoutingNumber"), body.get("bankAccountNumber"))
            for row, body in bodies.items()}
    by_noc_key = history.obligations(at, applied) \
        if history.noc_keys & {key for key in keys.values() if key is not None} else {}
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
        if key is not None and history.has(key):
            entries = history.entries(key)
            _noc_rule(verdict, body, by_noc_key.get(key, []), today)
            _returned_rule(verdict, entries, new_authorization=new_authorization)
            _reinitiation_rule(verdict, body, entries, today=today,
                               new_authorization=new_authorization)
        verdicts[row] = verdict
    return verdicts
