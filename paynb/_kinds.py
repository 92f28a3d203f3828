"""The kinds of record the service keeps, each known once.

One :class:`Kind` per kind (ACH and RCC items, instant card and RTP payments, ACH notices
of change): the field that identifies a record, its status and the month that partitions
it, its wire fields in the order a frame shows them with what each field is (:data:`TYPES`),
the table that holds it in the history, the SQL view and the sandbox, the client's
attribute, and how its amounts are counted. The frames type their columns by it, the
sandbox makes its tables from it, the history lays out its store by it, the resources,
the monitor and the guards find ids and statuses through it: nobody else spells a kind's
field names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = ["KINDS", "KIND_ALIASES", "PAYMENT_KINDS", "RETURN_KINDS", "TYPES", "Field", "Kind",
           "kind_of"]

#: What a field holds, which says how a frame types it (paynb.frames), how the sandbox
#: stores it (integer or text) and which of the service's code tables explain it.
TYPES = frozenset({
    "id",  # a whole number that names a record (Int64 in a frame)
    "text",
    "account",  # an account number: masked to its last four digits unless asked
    "money",  # dollars and cents, exact (decimal)
    "wire_integer",  # the instant payments' whole-number amount, its unit unstated
    "time",  # a UTC instant
    "flag",  # true / false
    "object",  # a nested object kept as sent
    "item_status",  # ACH / RCC status code (W, S, R, I, B, V)
    "instant_status",  # Success / Failed
    "card_brand",
    "card_last_four",  # from cardLastFour or the digits of a card number
    "transaction_code",  # ACH transaction code (22, 27, ...), with its meaning
    "return_reason",  # R01..., with its description
    "change_code",  # C01..., with its reason
    "change_reason",  # the reason of a change code: a frame derives it from the code
    "corrected_data",  # a NOC's corrected data: masked like an account where it is one
    "account_type",  # checking / savings: an open set
    "transaction_subtype",  # an open set
    "entry_class",  # SEC code (PPD, CCD, WEB, ...), with its description: an open set
})


@dataclass(frozen=True)
class Field:
    """One wire field of a kind: its name, what it holds (:data:`TYPES`), and whether the
    sandbox keeps it in its table (``False``: it is derived when a record is sent)."""

    name: str
    type: str
    stored: bool = True

    def __post_init__(self) -> None:
        if self.type not in TYPES:
            raise ValueError(f"unknown field type {self.type!r} of {self.name}")


@dataclass(frozen=True)
class Kind:
    """One kind of record, as every part of paynb knows it."""

    #: The kind's name (``ach``, ``rcc``, ``instant``, ``rtp``, ``noc``): the frames', the
    #: journal's and the resources' ``kind``.
    name: str
    #: The history's table, the SQL view and the client's attribute (``client.nocs``).
    table: str
    #: The field that identifies a record.
    id_field: str
    #: The field of a record's status (``None``: NOCs have none).
    status_field: str | None
    #: The field whose month partitions the history: it never changes once a record exists.
    month_field: str
    #: The wire fields, in the order of a frame's columns.
    fields: tuple[Field, ...]
    #: The fields the service sends, in the order of its documented record
    #: (real-service.md): the sandbox's records keep it.
    wire: tuple[str, ...]
    #: How amounts are sent: cents of dollars (``money``), the service's whole number
    #: (``wire_integer``), or none.
    amount: Literal["money", "wire_integer", "none"]
    #: Whether a client submits payments of this kind (what the journal records).
    payment: bool
    #: Whether the service's returns poll reports items of this kind (B, I or R with a
    #: return date).
    returns: bool
    #: Other spellings of a field that fold onto it when the field itself is absent
    #: (folded: lower case, no ``_`` or ``-``).
    aliases: tuple[tuple[str, str], ...] = ()
    #: How a person calls the kind (a form's label, a chart's title).
    title: str = ""

    def __post_init__(self) -> None:
        stored = {f.name for f in self.fields if f.stored}
        if set(self.wire) != stored or len(self.wire) != len(stored):
            raise ValueError(f"{self.name}: the wire order names other fields than the stored")

    @property
    def field_names(self) -> tuple[str, ...]:
        """The names of :attr:`fields`, in order."""
        return tuple(f.name for f in self.fields)

    def names_of(self, *types: str) -> tuple[str, ...]:
        """The names of the fields of the given types, in order."""
        return tuple(f.name for f in self.fields if f.type in types)

    @property
    def timestamps(self) -> frozenset[str]:
        """The fields that hold a UTC instant."""
        return frozenset(self.names_of("time"))


def _fields(*specs: str | tuple[str, str] | Field) -> tuple[Field, ...]:
    """Fields from their names (text), ``(name, type)`` pairs or ``Field`` objects."""
    return tuple(Field(p, "text") if isinstance(p, str) else p if isinstance(p, Field)
                 else Field(*p) for p in specs)


# The fields of each kind as the service sends them, in its documented order
# (real-service.md): the sandbox's records keep this order; a frame's is each Kind's fields.
_ACH_WIRE = (
    "achItemId", "companyCode", "flexBatchId", "merchantId", "itemStatus",
    "firstSignerFirstName", "firstSignerLastName", "address1", "address2", "city", "state",
    "zip", "countryCode", "yourReferenceNumber", "amount", "bankRoutingNumber",
    "bankAccountNumber", "returnReason", "returnMessage", "itemSource", "returnItemId",
    "reportStatus", "receivedDateTime", "settleDate", "returnDate", "achEffectiveDate",
    "depositDateTime", "apiReportDateTime", "sendDate", "bankId", "achTransactionCode",
    "achAccountType", "achTransactionType", "achTransactionSubType", "achEntryClass",
    "achPaymentTypeCode", "achCheckNumber", "achIdentificationNumber",
    "achCompanyEntryDescription", "achCompanyDiscretionaryData",
    "achTransactionDiscretionaryData", "achAddendaText", "sameDayAchRequested",
    "returnFileName", "settlementReportFileName", "returnReportFileName", "iatAddenda",
    "requestedSendDate", "requestedAchEffectiveDate",
)
_RCC_WIRE = (
    "rccItemId", "companyCode", "flexBatchId", "itemStatus", "firstSignerFirstName",
    "firstSignerLastName", "secondSignerFirstName", "secondSignerLastName", "address1",
    "address2", "city", "state", "zip", "yourReferenceNumber", "amount", "bankName",
    "bankRoutingNumber", "bankAccountNumber", "bankCity", "bankState", "bankZip",
    "checkNumber", "returnReason", "returnMessage", "payeeName", "payeeAccountNumber",
    "payeePhone", "itemSource", "returnItemId", "reportStatus", "checkDate", "sendDate",
    "receivedDateTime", "settleDate", "returnDate", "bankId", "depositDateTime",
    "apiReportDateTime",
)
_INSTANT_WIRE = (
    "uniqueId", "companyCode", "yourReferenceNumber", "nameOnCard", "cardBrand", "cardLastFour",
    "amount", "status", "statusCode", "statusDescription", "receivedDateTime",
    "completedDateTime",
)
_RTP_WIRE = (
    "uniqueId", "companyCode", "yourReferenceNumber", "name", "firstName", "lastName",
    "routingNumber", "accountNumber", "amount", "receivedDateTime", "completedDateTime",
    "status", "statusCode", "statusDescription", "requestReturnReceivedDateTime",
    "requestReturnCompletedDateTime", "requestReturnStatus", "requestReturnStatusCode",
    "requestReturnStatusDescription",
)
_NOC_WIRE = (
    "nocId", "companyCode", "achItemId", "yourReferenceNumber", "changeCode", "changeReason",
    "correctedData", "nocDate",
)

_ITEM_STATUS = (("itemStatus", "item_status"), Field("itemStatusDescription", "text", False),
                ("returnDate", "time"), ("returnReason", "return_reason"), "returnMessage")
_INSTANT_TAIL = (("amount", "wire_integer"), ("status", "instant_status"), "statusCode",
                 "statusDescription", ("receivedDateTime", "time"), ("completedDateTime", "time"))

_ACH = Kind(
    "ach", "ach", "achItemId", "itemStatus", "receivedDateTime", _fields(
        ("achItemId", "id"), "companyCode", "yourReferenceNumber", "firstSignerFirstName",
        "firstSignerLastName", "state", "zip", "bankRoutingNumber",
        ("bankAccountNumber", "account"), ("amount", "money"), ("achAccountType", "account_type"),
        "achTransactionType", ("achTransactionSubType", "transaction_subtype"),
        ("achEntryClass", "entry_class"), *_ITEM_STATUS,
        ("receivedDateTime", "time"), ("sendDate", "time"), ("settleDate", "time"),
        # The rest of the service's documented ACH record (real-service.md), in its order.
        "flexBatchId", ("merchantId", "id"), "address1", "address2", "city", "countryCode",
        "itemSource", ("returnItemId", "id"), "reportStatus", ("achEffectiveDate", "time"),
        ("depositDateTime", "time"), ("apiReportDateTime", "time"), ("bankId", "id"),
        ("achTransactionCode", "transaction_code"), "achPaymentTypeCode",
        ("achCheckNumber", "id"), "achIdentificationNumber", "achCompanyEntryDescription",
        "achCompanyDiscretionaryData", "achTransactionDiscretionaryData", "achAddendaText",
        ("sameDayAchRequested", "flag"), "returnFileName", "settlementReportFileName",
        "returnReportFileName", ("iatAddenda", "object"), ("requestedSendDate", "time"),
        ("requestedAchEffectiveDate", "time")),
    _ACH_WIRE,
    "money", payment=True, returns=True,
    aliases=(("itemid", "achItemId"), ("id", "achItemId"), ("status", "itemStatus")),
    title="ACH")

_RCC = Kind(
    "rcc", "rcc", "rccItemId", "itemStatus", "receivedDateTime", _fields(
        ("rccItemId", "id"), "companyCode", "yourReferenceNumber", "firstSignerFirstName",
        "firstSignerLastName", "secondSignerFirstName", "secondSignerLastName", "address1",
        "address2", "city", "state", "zip", "bankRoutingNumber", ("bankAccountNumber", "account"),
        ("amount", "money"), *_ITEM_STATUS,
        ("depositDateTime", "time"), ("receivedDateTime", "time"), ("sendDate", "time"),
        ("settleDate", "time"),
        # The rest of the service's documented RCC record (real-service.md).
        "flexBatchId", "bankName", "bankCity", "bankState", "bankZip", ("checkNumber", "id"),
        ("checkDate", "time"), "payeeName", ("payeeAccountNumber", "account"), "payeePhone",
        "itemSource", ("returnItemId", "id"), "reportStatus", ("bankId", "id"),
        ("apiReportDateTime", "time")),
    _RCC_WIRE,
    "money", payment=True, returns=True,
    aliases=(("itemid", "rccItemId"), ("id", "rccItemId"), ("status", "itemStatus")),
    title="RCC")

_INSTANT = Kind(
    "instant", "instant", "uniqueId", "status", "receivedDateTime", _fields(
        "uniqueId", "companyCode", "yourReferenceNumber", "nameOnCard",
        ("cardBrand", "card_brand"), ("cardLastFour", "card_last_four"), *_INSTANT_TAIL),
    _INSTANT_WIRE,
    "wire_integer", payment=True, returns=False,
    aliases=(("id", "uniqueId"), ("cardnumberlastfour", "cardLastFour"),
             ("last4", "cardLastFour")), title="Instant card")

_RTP = Kind(
    "rtp", "rtp", "uniqueId", "status", "receivedDateTime", _fields(
        "uniqueId", "companyCode", "yourReferenceNumber", "name", "firstName", "lastName",
        "routingNumber", ("accountNumber", "account"), *_INSTANT_TAIL,
        # A request for return of the payment (real-service.md's RTP record).
        ("requestReturnReceivedDateTime", "time"), ("requestReturnCompletedDateTime", "time"),
        ("requestReturnStatus", "instant_status"), "requestReturnStatusCode",
        "requestReturnStatusDescription"),
    _RTP_WIRE,
    "wire_integer", payment=True, returns=False, aliases=(("id", "uniqueId"),), title="RTP")

_NOC = Kind(
    "noc", "nocs", "nocId", None, "nocDate", _fields(
        ("nocId", "id"), ("achItemId", "id"), "companyCode", "yourReferenceNumber",
        ("changeCode", "change_code"), ("changeReason", "change_reason"),
        ("correctedData", "corrected_data"), ("nocDate", "time")),
    _NOC_WIRE,
    "none", payment=False, returns=False, aliases=(("id", "nocId"), ("itemid", "achItemId")),
    title="NOC")

#: Every kind by its name, in the order paynb lists them.
KINDS: dict[str, Kind] = {k.name: k for k in (_ACH, _RCC, _INSTANT, _RTP, _NOC)}
#: The kinds a client submits payments of (what the journal records).
PAYMENT_KINDS: tuple[str, ...] = tuple(k.name for k in KINDS.values() if k.payment)
#: The kinds the service's returns poll reports (ACH and RCC items).
RETURN_KINDS: tuple[str, ...] = tuple(k.name for k in KINDS.values() if k.returns)
#: Other spellings of a kind paynb reads as it (``nocs``: the client's namespace, the
#: history's table and the SQL view are named so).
KIND_ALIASES: dict[str, str] = {"nocs": "noc", "achnoc": "noc", "achnocs": "noc",
                                "card": "instant", "instantrtp": "rtp"}


def kind_of(name: str) -> Kind:
    """The kind ``name`` names (its name, its table or an alias, any casing).

    Raises ``ValueError`` naming the kinds for anything else.
    """
    folded = re.sub(r"[\s_\-]", "", str(name)).lower()
    found = KINDS.get(KIND_ALIASES.get(folded, folded))
    if found is None:
        raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {name!r}")
    return found

