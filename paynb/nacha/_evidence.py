"""The evidence the NACHA rules read: records as they come (any casing, missing values,
masked numbers), the ACH entries the guards and the NOC ledger judge, the marks of
applied NOCs, and the key that tells receiving accounts apart.

Pure functions over what is given: no client, no service.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any, cast

from paynb._coerce import missing, parse_decimal, records
from paynb._time import utc_moment
from paynb.errors import ValidationError

__all__ = ["ACCOUNT_FIELDS", "ENTRY_FIELDS", "GUARD_FIELDS", "NOC_FIELDS", "NUMBER_KEY", "Entry",
           "account_key", "account_number", "applied_marks_of", "as_of_time", "camel", "entries_of",
           "get", "pair_key", "present", "records_of", "when"]

#: The field of a stored record (a history store's, masked) that carries a keyed hash of
#: an account number (paynb.history: an ACH row's own, a NOC's corrected one): where the
#: number is masked, the ledger tells accounts apart by it instead.
NUMBER_KEY = "_numberKey"


def account_number(account: Any, number_key: Any = None) -> str | tuple[str, int] | None:
    """What tells an account number apart: its keyed hash (:data:`NUMBER_KEY`) when the
    record has one (every record of a store's evidence has, whole or masked), else the
    whole number's text, else None (missing, or masked without a key)."""
    key = present(number_key)
    if key is not None:
        return ("#", int(key))
    if account is not None:
        text = str(account).strip()
        if text and "*" not in text and text not in ("nan", "<NA>"):
            return text
    return None


def pair_key(routing: Any, number: str | tuple[str, int] | None) -> int | None:
    """The key of an account by its routing number and :func:`account_number` (None when
    either is missing)."""
    if routing is None or number is None:
        return None
    routing_text = str(routing).strip()
    if not routing_text or routing_text in ("nan", "<NA>"):
        return None
    return hash((routing_text, number))


def account_key(routing: Any, account: Any, number_key: Any = None) -> int | None:
    """An opaque key of a receiving account (routing and full account number), or ``None``
    when either is missing or masked: two entries go to the same account when their keys
    are equal. A masked number with its keyed hash (``number_key``, a history store's
    :data:`NUMBER_KEY`) is told apart by that hash. Python's string hash is keyed per
    process, so the key says nothing about the number if it is ever shown, and is
    comparable within this process only."""
    return pair_key(routing, account_number(account, number_key))


#: The fields of an ACH item the guards' verdicts read (:class:`Entry`): what a history
#: store gives the guards.
GUARD_FIELDS = ("achItemId", "bankRoutingNumber", "bankAccountNumber", "itemStatus",
                "returnReason", "returnDate", "receivedDateTime", "amount",
                "achTransactionType", "achTransactionSubType", "achCompanyEntryDescription",
                "settleDate", "sendDate")
#: The fields of an ACH item the guards and the NOC ledger read (the receiver's name,
#: account type, identification and entry class show a NOC's change made): what a client
#: keeps of the items it has seen.
ENTRY_FIELDS = (*GUARD_FIELDS, "firstSignerFirstName", "firstSignerLastName",
                "achAccountType", "achIdentificationNumber", "achEntryClass")
#: The fields of a NOC the ledger reads.
NOC_FIELDS = ("nocId", "achItemId", "changeCode", "changeReason", "correctedData", "nocDate",
              "yourReferenceNumber")

#: Request fields of an ACH item that describe the receiver's account (carried into a
#: corrected record from the entry the NOC was about).
ACCOUNT_FIELDS = ("firstSignerFirstName", "firstSignerLastName", "address1", "address2",
                  "city", "state", "zip", "countryCode", "bankRoutingNumber",
                  "bankAccountNumber", "achAccountType", "achEntryClass",
                  "achIdentificationNumber")


# ---------------------------------------------------------------------------- inputs


def camel(record: Mapping[str, Any]) -> Mapping[str, Any]:
    """``record`` with the service's camelCase field names: as it is when it has them (the
    usual case, and the fast one), else renamed from any other casing (``AchItemId``)."""
    if "achItemId" in record:
        return record
    wanted = {name.lower(): name for name in (*ENTRY_FIELDS, *ACCOUNT_FIELDS)}
    return {wanted.get(str(key).lower(), key): value for key, value in record.items()}


def present(value: Any) -> Any:
    """``value``, or ``None`` for a missing one (``NaN``, ``NaT``, ``pd.NA``)."""
    if type(value) in _NEVER_MISSING:  # (most values: a ledger asks hundreds of thousands)
        return value
    return None if missing(value) else value


#: Types whose values are never missing (:func:`present` gives them back as they are).
_NEVER_MISSING = frozenset({str, int, bool, dt.datetime})


def get(record: Mapping[str, Any], field: str) -> Any:
    """A field of a raw record or frame row, whatever the casing; ``None`` when missing
    (``NaN``, ``NaT`` and ``pd.NA`` too)."""
    value = record.get(field)
    if value is None and field not in record:
        lowered = field.lower()
        value = next((v for k, v in record.items() if str(k).lower() == lowered), None)
    return present(value)


def when(value: Any) -> dt.datetime | None:
    """A record's time as an aware UTC datetime (:func:`paynb._time.utc_moment`); None
    when the record has none, or one that is no time (the ledger then shows no date
    rather than failing on one record)."""
    if type(value) is dt.datetime and value.tzinfo is dt.UTC:
        return value  # (a store's times: read as such, thousands a ledger)
    if missing(value):
        return None
    try:
        return utc_moment(value, "a record's time")
    except ValidationError:
        return None


def as_of_time(as_of: Any, argument: str = "as_of") -> dt.datetime:
    """``as_of`` (None: now, UTC) as an aware UTC datetime; a date is its midnight."""
    if as_of is None:
        return dt.datetime.now(dt.UTC)
    return utc_moment(as_of, argument)


def _amount(value: Any) -> Decimal | None:
    try:
        return parse_decimal(value, currency_sign=True)
    except ValueError:  # the ledger shows no amount rather than failing on one record
        return None


def records_of(data: Any, argument: str) -> list[Mapping[str, Any]]:
    """The rows of a DataFrame, or a list of mappings, as mappings."""
    if data is None:
        return []
    if hasattr(data, "to_dict") and hasattr(data, "columns"):
        return cast("list[Mapping[str, Any]]", records(data))
    if isinstance(data, Mapping | str | bytes) or not isinstance(data, Iterable):
        raise ValidationError.for_argument(argument, "must be a DataFrame or a list of records")
    rows = list(data)
    if not all(isinstance(row, Mapping) for row in rows):
        raise ValidationError.for_argument(
            argument, "must be a DataFrame or a list of records (mappings)")
    return rows


class Entry:
    """One ACH entry of the history, read from a raw record or a frame row."""

    __slots__ = ("amount", "code", "description", "fields", "id", "key", "number",
                 "received", "returned", "settled", "settled_from", "status", "sub_type",
                 "type")

    def __init__(self, record: Mapping[str, Any]) -> None:
        # Camel-cased once, then plain lookups: an index of 100,000 records must stay fast.
        record = camel(record)
        get = record.get

        def field(name: str) -> Any:
            value = get(name)
            return None if value is None else present(value)

        self.id = field("achItemId")
        # A masked store's record tells its account number by its keyed hash.
        self.number = account_number(field("bankAccountNumber"), record.get(NUMBER_KEY))
        self.key = pair_key(field("bankRoutingNumber"), self.number)
        self.status = str(field("itemStatus") or "").upper()
        self.code = (str(field("returnReason") or "").strip().upper() or None)
        self.returned = when(field("returnDate"))
        self.received = when(field("receivedDateTime"))
        self.amount = _amount(field("amount"))
        self.type = str(field("achTransactionType") or "").strip().lower()
        self.sub_type = str(field("achTransactionSubType") or "").strip().lower()
        self.description = str(field("achCompanyEntryDescription") or "").strip()
        # The original entry's settlement starts the 180 days of a reinitiation; an entry
        # returned before paynb saw its settlement date counts from its send date, else
        # from when the service received it (earlier, so never more lenient).
        self.settled, self.settled_from = None, None
        for name in ("settleDate", "sendDate", "receivedDateTime"):
            found = when(field(name))
            if found is not None:
                self.settled, self.settled_from = found, name
                break
        self.fields = {name: str(value) for name in ACCOUNT_FIELDS
                       if (value := get(name)) is not None and present(value) is not None}

    @property
    def went_out(self) -> bool:
        """Whether the entry was originated: not voided, invalid or blocked."""
        return self.status not in ("V", "I", "B")


def entries_of(items: Any) -> list[Entry]:
    """The ACH entries of ``items`` (DataFrame or records), in the order received."""
    found = [Entry(record) for record in records_of(items, "items")]
    epoch = dt.datetime.min.replace(tzinfo=dt.UTC)
    return sorted(found, key=lambda entry: entry.received or epoch)


def applied_marks_of(applied: Any) -> dict[str, dict[str, Any]]:
    """``applied`` (None, ids, a mapping id -> mark, or a frame with nocId) by id text."""
    if applied is None:
        return {}
    if hasattr(applied, "columns"):
        rows = records(applied)
        return {str(get(row, "nocId")): {"by": get(row, "appliedBy") or get(row, "by"),
                                         "when": get(row, "appliedAt") or get(row, "when")}
                for row in rows if get(row, "nocId") is not None}
    if isinstance(applied, Mapping):
        return {str(key): dict(value) if isinstance(value, Mapping) else {}
                for key, value in applied.items()}
    if isinstance(applied, str | bytes) or not isinstance(applied, Iterable):
        raise ValidationError.for_argument(
            "applied", "must be NOC ids, a mapping of NOC id to mark, or a frame")
    return {str(value): {} for value in applied}
