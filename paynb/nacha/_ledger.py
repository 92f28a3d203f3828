"""The NOC correction ledger: what each notification of change obliges, and by when.

NACHA Operating Rules, Article Two, Subsection 2.12.1: an originator receiving a NOC
must make the change within six banking days of receipt or prior to initiating another
entry to the receiver's account, whichever is later. :func:`ledger` gives one obligation
per NOC, from the evidence given (no client, no service).

paynb helps monitor these obligations; it is not legal advice.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Iterable, Mapping
from typing import Any, cast

from paynb._redact import last_four
from paynb.codes import NOC_CODE_TABLE, code_label, code_meaning
from paynb.nacha._evidence import (
    NUMBER_KEY,
    Entry,
    account_number,
    entries_of,
    get,
    pair_key,
    present,
    records_of,
    when,
)

__all__ = ["DUE_SOON_DAYS", "LEDGER_COLUMNS", "NOC_CHANGES", "NOC_DUE_DAYS", "NOC_STATES",
           "SETTLED_STATES", "Correction", "accounts_of", "carries", "corrected_account",
           "corrected_fields", "corrected_key", "describe_code", "index", "joined_evidence",
           "ledger", "must_change", "noc_accounts", "parse_corrected_data"]

#: Banking days after receipt within which a NOC's change must be made (NACHA 2.12.1).
NOC_DUE_DAYS = 6
#: States of an obligation, in the order they usually go through: ``applied late`` when
#: the change was made after the due date; ``no change`` is a refused NOC (C61-C69),
#: which asks the originator to change nothing.
NOC_STATES = ("open", "due soon", "overdue", "applied", "applied late", "no change")
#: The states of an obligation that is met (or never was one): nothing left to do.
SETTLED_STATES = frozenset({"applied", "applied late", "no change"})
#: Banking days before the due date from which an open obligation reads ``due soon``.
DUE_SOON_DAYS = 2

#: What each change code asks to change: the fields its corrected data carries (the
#: request's field names where the ACH item has one) and the words for it, from
#: :data:`paynb.codes.NOC_CODE_TABLE`. C04, C08 and C10-C14 concern data paynb cannot
#: pre-fill (the receiver's name as the bank has it, the IAT receiving bank, the company's
#: own name and identification, the addenda, the entry class). Refused NOCs (C61-C69)
#: ask no change and are not here.
NOC_CHANGES: dict[str, tuple[tuple[str, ...], str]] = {
    code: (noc.fields, noc.change) for code, noc in NOC_CODE_TABLE.items() if noc.fields}

_LABELS = {
    "bankAccountNumber": "account number", "bankRoutingNumber": "routing number",
    "achTransactionCode": "transaction code", "individualName": "receiver's name",
    "receivingDfiIdentification": "receiving bank", "achIdentificationNumber": "individual ID",
    "companyName": "company name", "companyIdentification": "company ID",
    "addenda": "addenda", "achEntryClass": "entry class",
}

#: NACHA transaction codes: first digit the account (2 checking, 3 savings, 4 general
#: ledger, 5 loan), second the direction (2 credit, 3 credit prenote, 7 debit, 8 debit
#: prenote; 1 and 6 are returns and NOCs themselves).
_ACCOUNT_OF_CODE = {"2": "Checking", "3": "Savings", "4": "General ledger", "5": "Loan"}
_DIRECTION_OF_CODE = {"2": "credit", "3": "credit prenote", "7": "debit", "8": "debit prenote"}

def describe_code(code: Any) -> str:
    """``32 (savings credit)``: a transaction code in words."""
    text = str(code).strip()
    account = _ACCOUNT_OF_CODE.get(text[:1])
    direction = _DIRECTION_OF_CODE.get(text[1:2])
    if account and direction:
        return f"{text} ({account.lower()} {direction})"
    return text


def parse_corrected_data(code: Any, data: Any) -> dict[str, str]:
    """The corrected values a NOC carries, by field (see :data:`NOC_CHANGES`).

    Reads the NACHA layout of the corrected-data field (C03: routing number in
    positions 1-9 and account number from 13; C06: account number in 1-17 and
    transaction code in 21-22; C07: routing 1-9, account 10-26, transaction code
    27-28) and the same values separated by blanks, as the sandbox writes them.
    Masked values (``****1234``) are left out: they cannot correct anything.
    An unknown code or data that cannot be read gives ``{}``.
    """
    if code is None or data is None:
        return {}
    code = str(code).strip().upper()
    raw = str(data)
    text = raw.strip()
    if not text or text in ("nan", "<NA>") or code not in NOC_CHANGES:
        return {}
    tokens = text.split()
    found: dict[str, str] = {}
    if code == "C01":
        found = {"bankAccountNumber": tokens[0]}
    elif code == "C02":
        found = {"bankRoutingNumber": tokens[0]}
    elif code == "C03":
        if len(tokens) >= 2:
            found = {"bankRoutingNumber": tokens[0], "bankAccountNumber": tokens[1]}
        elif len(text) > 9:
            found = {"bankRoutingNumber": text[:9], "bankAccountNumber": text[9:].strip()}
    elif code == "C05":
        found = {"achTransactionCode": text[:2]}
    elif code == "C06":
        if len(tokens) >= 2:
            found = {"bankAccountNumber": tokens[0], "achTransactionCode": tokens[-1][:2]}
        elif len(raw) >= 22:
            found = {"bankAccountNumber": raw[:17].strip(), "achTransactionCode": raw[20:22]}
    elif code == "C07":
        if len(tokens) >= 3:
            found = {"bankRoutingNumber": tokens[0], "bankAccountNumber": tokens[1],
                     "achTransactionCode": tokens[-1][:2]}
        elif len(raw) >= 28:
            found = {"bankRoutingNumber": raw[:9], "bankAccountNumber": raw[9:26].strip(),
                     "achTransactionCode": raw[26:28]}
    else:
        (field,) = NOC_CHANGES[code][0][:1]
        found = {field: text}
    return {field: value for field, value in found.items() if value and "*" not in value}


def _shown(field: str, value: str) -> str:
    if field == "bankAccountNumber":
        return last_four(value)
    if field == "achTransactionCode":
        return describe_code(value)
    return value


def must_change(code: Any, corrected: Mapping[str, str]) -> str:
    """What a NOC asks to change, in words, with the corrected values (account numbers
    masked): ``account number to ****4321; transaction code to 32 (savings credit)``."""
    code = str(code).strip().upper()
    if code not in NOC_CHANGES:
        if code in NOC_CODE_TABLE:
            return f"nothing: {code_label(code)}, a notice the ODFI sent back to the bank"
        return f"{code_label(code)}: see the NOC"
    fields, words = NOC_CHANGES[code]
    if not corrected:
        # (a list has no mask option: the whole numbers come from the ledger or a client
        # made with mask=False)
        return (f"{words}: corrected data not readable here (masked or absent; "
                "client.nocs.obligations() reads it in full, as does a client made with "
                "mask=False)")
    return "; ".join(f"{_LABELS.get(field, field)} to {_shown(field, corrected[field])}"
                     for field in fields if field in corrected)

class Correction:
    """The corrected account record of one NOC: the account fields of the entry the NOC
    was about, with the NOC's corrected values in place.

    Shown (``str``, ``repr``, in a DataFrame cell) with account numbers masked;
    :meth:`to_dict` gives the full values, for :meth:`paynb.forms.AchForm.prefill`
    or a request body. It is deliberately not a mapping, so that pandas cannot print
    its values.
    """

    def __init__(self, noc_id: Any, code: str, fields: Mapping[str, str],
                 changed: Iterable[str]) -> None:
        self.noc_id = noc_id
        self.code = code
        self._fields = dict(fields)
        #: The fields the NOC changed.
        self.changed = tuple(changed)

    def to_dict(self) -> dict[str, str]:
        """The record's fields by wire name, full values (never print them)."""
        return dict(self._fields)

    def __str__(self) -> str:
        parts = []
        for field, value in self._fields.items():
            shown = last_four(value) if field == "bankAccountNumber" else value
            parts.append(f"{field}={shown}{' (corrected)' if field in self.changed else ''}")
        return ", ".join(parts)

    def __repr__(self) -> str:
        return f"<Correction of NOC {self.noc_id} ({self.code}): {self}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Correction) and (self.noc_id, self.code, self._fields) == \
            (other.noc_id, other.code, other._fields)

    __hash__ = None  # type: ignore[assignment]


def _words(text: Any) -> list[str]:
    return sorted(str(text or "").upper().split())


def carries(record: Mapping[str, Any], corrected: Mapping[str, str]) -> bool:
    """Whether an entry (a request body, or an ACH record's fields) carries every value a
    NOC corrected: the same text; for a transaction code, that code or the account type
    it stands for (``37``: ``Savings``); for the receiver's name, the same words as the
    entry's first and last name, in any order (``DOE JANE``: Jane Doe). No corrected
    value read (masked, or none given): carried by nothing."""
    if not corrected:
        return False
    for name, value in corrected.items():
        given = record.get(name)
        if name == "achTransactionCode":
            wanted = {"2": "checking", "3": "savings"}.get(str(value)[:1])
            same_type = wanted is not None and \
                str(record.get("achAccountType") or "").strip().lower() == wanted
            if str(given or "").strip() != str(value) and not same_type:
                return False
        elif name == "individualName":
            spelled = given or " ".join(str(record.get(part) or "") for part in (
                "firstSignerFirstName", "firstSignerLastName"))
            if _words(spelled) != _words(value):
                return False
        elif str(given or "").strip() != str(value).strip():
            return False
    return True


def corrected_fields(corrected: Mapping[str, str]) -> dict[str, str]:
    """The request fields a corrected record sets: the values themselves, and for a
    transaction code the account type it stands for (a 3x code: ``Savings``)."""
    fields = {k: v for k, v in corrected.items()
              if k in ("bankAccountNumber", "bankRoutingNumber", "achIdentificationNumber")}
    code = corrected.get("achTransactionCode")
    if code:
        account_type = _ACCOUNT_OF_CODE.get(code[:1])
        if account_type in ("Checking", "Savings"):
            fields["achAccountType"] = account_type
        fields["achTransactionCode"] = code
    return fields


# ---------------------------------------------------------------------------- the ledger


def _day(value: dt.datetime) -> dt.date:
    return value.astimezone(dt.UTC).date()


def index(entries: list[Entry]) -> tuple[dict[str, Entry], dict[int, list[Entry]]]:
    """``entries`` by id, and those that went out by account key (in the order received)."""
    by_id = {str(entry.id): entry for entry in entries if entry.id is not None}
    by_key: dict[int, list[Entry]] = {}
    for entry in entries:
        if entry.key is not None and entry.went_out:
            by_key.setdefault(entry.key, []).append(entry)
    return by_id, by_key


def corrected_key(item: Entry, corrected: Mapping[str, str], *, code: Any = None,
                  number_key: Any = None) -> int | None:
    """The :func:`account_key` of the account a NOC's entry goes to once corrected: its
    routing and account number, each as the NOC corrected it. A masked NOC (its
    ``code`` corrects the account number, which ``corrected`` lacks) names the new number
    by its keyed hash, ``number_key`` (:data:`NUMBER_KEY`); without one the corrected
    account is unknown (None)."""
    account = corrected_account(item, corrected, code=code, number_key=number_key)
    return None if account is None else pair_key(*account)


def corrected_account(item: Entry, corrected: Mapping[str, str], *, code: Any = None,
                      number_key: Any = None) -> tuple[str, str | tuple[str, int]] | None:
    """The account of :func:`corrected_key` as ``(routing, number)``: the number as its
    text, or ``("#", key)`` when known by its keyed hash only (a masked store's); None
    when unknown. What a store is asked for to find the entries to it."""
    number = account_number(corrected.get("bankAccountNumber"), number_key)
    if number is None:
        fields = NOC_CHANGES.get(str(code or "").strip().upper(), ((), ""))[0]
        if "bankAccountNumber" in fields:
            return None
        number = item.number
    routing = corrected.get("bankRoutingNumber") or item.fields.get("bankRoutingNumber")
    if pair_key(routing, number) is None:
        return None
    return str(routing).strip(), cast("str | tuple[str, int]", number)


def noc_accounts(nocs: Any, entries: Iterable[Entry]) -> set[tuple[str, str | tuple[str, int]]]:
    """The accounts whose entries the ledger of ``nocs`` needs beside the NOCs' own
    entries (``entries``): each NOC's account (a later entry there moves its due date) and
    its account as corrected (a later entry there shows the change made), as
    :func:`corrected_account` gives them."""
    by_id = {str(entry.id): entry for entry in entries if entry.id is not None}
    found: set[tuple[str, str | tuple[str, int]]] = set()
    for noc in records_of(nocs, "nocs"):
        item = by_id.get(str(get(noc, "achItemId")))
        if item is None:
            continue
        code = get(noc, "changeCode")
        for account in (corrected_account(item, {}), corrected_account(
                item, parse_corrected_data(code, get(noc, "correctedData")), code=code,
                number_key=get(noc, NUMBER_KEY))):
            if account is not None:
                found.add(account)
    return found


def accounts_of(record: Mapping[str, Any]) -> list[tuple[str, str | tuple[str, int]]]:
    """The ``(routing, number)`` an entry's record is found by among the accounts of
    :func:`noc_accounts` (none when it has no account)."""
    routing = present(record.get("bankRoutingNumber"))
    if routing is None or not str(routing).strip():
        return []
    number = account_number(record.get("bankAccountNumber"), record.get(NUMBER_KEY))
    return [] if number is None else [(str(routing).strip(), number)]


def joined_evidence(nocs: list[Mapping[str, Any]], items: list[Mapping[str, Any]],
                    seen_nocs: list[Mapping[str, Any]], seen_items: list[Mapping[str, Any]]
                    ) -> tuple[list[Mapping[str, Any]], list[Entry]]:
    """A store's NOC evidence (``nocs``, ``items``: a history store's ``noc_evidence``)
    with what a client has seen besides: its NOCs (listed now: the later word) and, of
    the items the store lacks (sent since the last sync), those the ledger needs (the
    NOCs' own, and those to their accounts as :func:`noc_accounts` names them)."""
    listed = {str(get(noc, "nocId")) for noc in seen_nocs}
    joined = [*(noc for noc in nocs if str(get(noc, "nocId")) not in listed), *seen_nocs]
    held = {str(get(item, "achItemId")) for item in items}
    about = {str(get(noc, "achItemId")) for noc in joined}
    new = [item for item in seen_items if str(get(item, "achItemId")) not in held]
    accounts = noc_accounts(joined, entries_of(
        [*items, *(item for item in new if str(get(item, "achItemId")) in about)]))
    wanted = [item for item in new if str(get(item, "achItemId")) in about
              or any(account in accounts for account in accounts_of(item))]
    return joined, entries_of([*items, *wanted])


def _correcting_entry(by_key: Mapping[int, list[Entry]], item: Entry | None,
                      corrected: Mapping[str, str], received: dt.datetime | None,
                      until: dt.date | None, *, code: str, number_key: Any) -> Entry | None:
    """The first entry after the NOC to the corrected account (its routing and account
    number once corrected) that carries every corrected value: the change made, as the
    service saw it (a corrected number known by its key only is carried by the entries to
    that account). None when the NOC's entry or corrected data is unknown, or no later
    entry carries it (received by ``until``'s day, when given)."""
    keyed = present(number_key) is not None
    if item is None or received is None or not (corrected or keyed):
        return None
    key = corrected_key(item, corrected, code=code, number_key=number_key)
    # Every entry found by the corrected account's key goes to that routing and number:
    # the rest of the corrected values is what an entry must carry (a masked entry shows
    # no number to compare).
    rest = {name: value for name, value in corrected.items()
            if name not in ("bankAccountNumber", "bankRoutingNumber")} if keyed else corrected
    for entry in by_key.get(key, ()) if key is not None else ():
        if entry.received is None or entry.received <= received or str(entry.id) == str(item.id):
            continue
        if until is not None and _day(entry.received) > until:
            return None
        if (keyed and not rest) or carries(entry.fields, rest):
            return entry
    return None


def ledger(nocs: Any, entries: list[Entry], *, as_of: dt.datetime,
           applied: Mapping[str, Mapping[str, Any]], due_soon: int = DUE_SOON_DAYS,
           indexed: tuple[dict[str, Entry], dict[int, list[Entry]]] | None = None,
           as_it_stood: bool = False) -> list[dict[str, Any]]:
    """One obligation per NOC, as dicts (with the private ``accountKey``); the work of
    :func:`paynb.compliance.noc_obligations`, shared with the submission guards (which
    pass ``indexed``, the :func:`index` of ``entries`` they keep). ``as_it_stood``: the
    ledger as it stood on ``as_of``'s day, without the NOCs dated later nor the marks
    made later (a ledger asked of a past day; the guards judge an entry sent now by
    every mark)."""
    # Lazy: the calendar brings numpy, which a new client does not need (numpy loads
    # with the first ledger, not with `paynb.Client`).
    from paynb import calendar

    # Thousands of NOCs fall on a few hundred days: each day's calendar sums once.
    @functools.cache
    def sixth_banking_day(day: dt.date) -> dt.date:
        receipt = calendar.next_banking_day(day).date()
        sixth: dt.date = calendar.add_banking_days(receipt, NOC_DUE_DAYS).date()
        return sixth

    @functools.cache
    def days_left(due: dt.date) -> int:
        return int(calendar.banking_days_between(today, due))

    by_id, by_key = indexed or index(entries)
    today = _day(as_of)
    rows = []
    for noc in records_of(nocs, "nocs"):
        noc_id = get(noc, "nocId")
        code = str(get(noc, "changeCode") or "").strip().upper()
        received = when(get(noc, "nocDate"))
        if as_it_stood and received is not None and _day(received) > today:
            continue  # not received yet on the day judged
        corrected = parse_corrected_data(code, get(noc, "correctedData"))
        item = by_id.get(str(get(noc, "achItemId")))
        key = item.key if item is not None else None
        # A NOC that arrives on a weekend or holiday is taken as received the next
        # banking day; the six banking days count from there.
        sixth = sixth_banking_day(_day(received)) if received else None
        following = None
        if key is not None and received is not None:
            following = next((e for e in by_key.get(key, ())
                              if e.received is not None and e.received > received
                              and str(e.id) != str(item.id if item else None)), None)
        due = sixth
        if sixth is not None and following is not None and following.received is not None:
            due = max(sixth, _day(following.received))
        mark = applied.get(str(noc_id))
        marked = when(mark.get("when")) if mark is not None else None
        if as_it_stood and marked is not None and _day(marked) > today:
            mark, marked = None, None  # applied after the day judged: not yet then
        shown = _correcting_entry(by_key, item, corrected, received,
                                  today if as_it_stood else None, code=code,
                                  number_key=get(noc, NUMBER_KEY))
        done = min((t for t in (marked, shown.received if shown else None) if t is not None),
                   default=None)
        if code in NOC_CODE_TABLE and code not in NOC_CHANGES:
            sixth = due = None  # a refused NOC: nothing to change, no deadline
            state = "no change"
        elif mark is not None or shown is not None:
            late = done is not None and due is not None and _day(done) > due
            state = "applied late" if late else "applied"
        elif due is None:
            state = "open"
        elif today > due:
            state = "overdue"
        elif days_left(due) <= due_soon:
            state = "due soon"
        else:
            state = "open"
        fields = dict(item.fields) if item is not None else {}
        changes = corrected_fields(corrected)
        fields.update(changes)
        correction = Correction(noc_id, code, fields, changes) \
            if changes and item is not None else None
        account = item.fields.get("bankAccountNumber") if item is not None else None
        rows.append({
            "nocId": noc_id, "achItemId": get(noc, "achItemId"),
            "yourReferenceNumber": get(noc, "yourReferenceNumber"), "changeCode": code,
            "changeReason": get(noc, "changeReason") or code_meaning(code),
            "bankRoutingNumber": item.fields.get("bankRoutingNumber") if item else None,
            "bankAccountNumber": last_four(account) if account else None,
            "mustChange": must_change(code, corrected),
            "received": received, "sixthBankingDay": sixth,
            "nextEntry": following.received if following is not None else None,
            "nextEntryId": following.id if following is not None else None,
            "dueDate": due, "state": state,
            "appliedBy": mark.get("by") if mark else None,
            "appliedAt": done if done is not None else (mark.get("when") if mark else None),
            "appliedEntryId": shown.id if shown is not None else None,
            "correction": correction, "corrected": corrected, "accountKey": key,
        })
    return rows


#: The columns of the ledger as :func:`paynb.compliance.noc_obligations` shows it, in order.
LEDGER_COLUMNS = ("nocId", "achItemId", "yourReferenceNumber", "changeCode", "changeReason",
                  "bankRoutingNumber", "bankAccountNumber", "mustChange", "received",
                  "sixthBankingDay", "nextEntry", "dueDate", "state", "appliedBy",
                  "appliedAt", "appliedEntryId", "correction")
