"""Request bodies of the service, defined once.

These pydantic models are the single source of truth for every body the
service accepts (spec section 2). The client serialises and pre-validates with
them, the forms are generated from them (``title`` is the label,
``description`` the help text, ``json_schema_extra`` carries the placeholder
and whether the input is a secret), and the sandbox parses requests with them.

Python attributes are snake_case; on the wire and in DataFrames every field
has the service's camelCase name (``first_signer_first_name`` is
``firstSignerFirstName``). Both spellings are accepted as input.

The rules themselves live in :mod:`paynb.validation`; the strictness policy
(what is refused, what only warns) is ``docs/validation.md``. A model refuses
only what is certainly wrong; what is merely unusual (a value of an open set
paynb does not know, an effective date in the past) is an *advisory*:
:meth:`RequestModel.advisories` lists them, the client turns them into
:class:`~paynb.errors.PaynbWarning` warnings and the forms show them as the
analyst types. What every body shares (field types, the base class, errors said per
field) is ``paynb.models._fields``.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from paynb import codes
from paynb import validation as rules
from paynb.errors import UnknownValueWarning, ValidationWarning
from paynb.models._fields import (
    AccountNumber,
    AchZip,
    Advisory,
    Amount,
    CardExpiration,
    CardNumber,
    CountryCode,
    FreeText,
    InstantAmount,
    Name,
    NonNegativeInt,
    RccZip,
    Reference,
    RequestModel,
    RoutingNumber,
    State,
    TotPassword,
    TwoCharacters,
    WireDateTime,
    _cross_field_error,
    _field,
    _open_set,
    _optional,
    _optional_as_given,
    _rule,
    check,
    field_errors,
)

__all__ = ["AchBulkRequest", "AchItem", "Advisory", "AchVoidByIds", "BulkRequest", "CardRouteCheck",
           "ForeignParty", "IatAddenda", "InstantCardTransaction", "RccBulkRequest", "RccItem",
           "RccVoidByIds", "RequestModel", "RtpTransaction", "TokenRouteCheck", "VoidByReferences",
           "check", "field_errors"]


class ForeignParty(RequestModel):
    """The foreign beneficiary or payer of an IAT entry (part of :class:`IatAddenda`)."""

    name: _optional_as_given(FreeText) = _field(
        "Name", "Foreign beneficiary's or payer's name", default=None)
    street_address: _optional_as_given(FreeText) = _field("Street address", default=None)
    city: _optional_as_given(FreeText) = _field("City", default=None)
    state_code: _optional_as_given(FreeText) = _field("State or province", default=None)
    postal_code: _optional_as_given(FreeText) = _field("Postal code", default=None)
    country_code: _optional_as_given(CountryCode) = _field(
        "Country code", "Two letters, like CA", placeholder="CA", default=None)


class IatAddenda(RequestModel):
    """The IAT addenda of an international ACH entry (entry class ``IAT``)."""

    transaction_type_code: _optional_as_given(
        _open_set(codes.IAT_TRANSACTION_TYPE_CODES)) = _field(
        "IAT transaction type", "NACHA code of the payment's purpose, like SAL or REM",
        suggestions=codes.IAT_TRANSACTION_TYPE_CODES, default=None)
    foreign_beneficiary_payer: ForeignParty | None = _field(
        "Foreign beneficiary or payer", default=None)


def _warn_unknown(advice: list[Advisory], field: str, value: Any, known: Any,
                  what: str) -> None:
    if value is None or value in known:  # the usual case, checked first: bulk runs it a lot
        return
    if isinstance(value, str) and not value.strip():
        return  # a blank sent as given (a nested field): no value to judge
    message = rules.unknown_value(value, known, what)
    if message:
        advice.append(Advisory(field, message, UnknownValueWarning))


#: NACHA widths of fields whose length the service's docs do not show: longer text is
#: sent (the service decides) with a warning that it may be cut.
_NACHA_WIDTHS = {
    "achCompanyEntryDescription": ("ach_company_entry_description", 10),
    "achCompanyDiscretionaryData": ("ach_company_discretionary_data", 20),
    "achIdentificationNumber": ("ach_identification_number", 15),
    "achAddendaText": ("ach_addenda_text", 80),
}


class AchItem(RequestModel):
    """One ACH item (spec 2.1 and the service's documented request): a debit, a credit, or
    a prenote (amount 0). The spec's 12 fields first, then the documented optional ones."""

    first_signer_first_name: Name = _field("First name", "First signer's first name",
                                           placeholder="Jane")
    first_signer_last_name: Name = _field("Last name", "First signer's last name",
                                          placeholder="Doe")
    state: State = _field("State", "Two-letter US state code", placeholder="NY")
    zip: AchZip = _field("Zip", "12345, 12345-6789 or 12345 6789", placeholder="10001")
    your_reference_number: Reference = _field(
        "Your reference", "Your own unique reference; used to find and void the item",
        placeholder="INV-2026-0001")
    bank_routing_number: RoutingNumber = _field("Routing number", "Nine-digit ABA routing number",
                                                placeholder="021000021")
    bank_account_number: AccountNumber = _field("Account number", "4 to 17 letters or digits",
                                                placeholder="000123456789", secret=True)
    ach_account_type: _open_set(codes.ACH_ACCOUNT_TYPES) = _field(
        "Account type", "Checking, Savings, PersonalChecking, ... (others are sent with a "
        "warning)", suggestions=codes.ACH_ACCOUNT_TYPES, default="Checking")
    ach_entry_class: _open_set(codes.ACH_ENTRY_CLASSES) = _field(
        "Entry class", "SEC code: PPD for consumer items, CCD corporate, WEB, TEL, IAT "
        "international, ...", suggestions=codes.ACH_ENTRY_CLASSES, default="PPD")
    ach_transaction_type: Literal[rules.ACH_TRANSACTION_TYPES] = _field(  # type: ignore[valid-type]
        "Transaction type", "Debit pulls money from the account, Credit pushes money to it")
    ach_transaction_sub_type: _optional(_open_set(codes.ACH_TRANSACTION_SUBTYPES)) = _field(
        "Sub-type", "Prenote marks a zero-amount entry that tests the account; blank for an "
        "ordinary item", suggestions=codes.ACH_TRANSACTION_SUBTYPES, default=None)
    amount: Amount = _field("Amount", "Dollars and cents, above 0; 0 for a prenote",
                            placeholder="125.00")
    address1: _optional(FreeText) = _field("Address line 1", placeholder="1 Main St",
                                           default=None, more=True)
    address2: _optional(FreeText) = _field("Address line 2", default=None, more=True)
    city: _optional(FreeText) = _field("City", placeholder="New York", default=None, more=True)
    country_code: _optional(CountryCode) = _field("Country code", "Two letters, like US",
                                                  placeholder="US", default=None, more=True)
    ach_transaction_code: _optional(NonNegativeInt) = _field(
        "Transaction code", "NACHA code: 22 checking credit, 27 checking debit, 32/37 savings, "
        "...", placeholder="27", default=None, more=True)
    ach_payment_type_code: _optional(_open_set(codes.ACH_PAYMENT_TYPE_CODES, width=2)) = _field(
        "Payment type code", "Up to two characters: R recurring, S single entry (WEB, TEL)",
        suggestions=codes.ACH_PAYMENT_TYPE_CODES, default=None, more=True)
    ach_check_number: _optional(NonNegativeInt) = _field(
        "Check number", "Whole number (check conversion entries)", default=None, more=True)
    ach_identification_number: _optional(FreeText) = _field(
        "Identification number", "The receiver's id at the originator (NACHA: 15 characters)",
        default=None, more=True)
    ach_company_entry_description: _optional(FreeText) = _field(
        "Entry description", "Shown on the receiver's statement (NACHA: 10 characters); "
        "RETRY PYMT on a reinitiated entry", placeholder="PAYROLL", default=None)
    ach_company_discretionary_data: _optional(FreeText) = _field(
        "Company discretionary data", "NACHA: 20 characters", default=None, more=True)
    ach_transaction_discretionary_data: _optional(TwoCharacters) = _field(
        "Transaction discretionary data", "Up to two characters", default=None, more=True)
    ach_addenda_text: _optional(FreeText) = _field(
        "Addenda text", "Payment related information (NACHA: 80 characters)", default=None,
        more=True)
    same_day_ach_requested: bool | None = _field(
        "Same-day ACH", "Settle today (at most $1,000,000 per entry)", default=None)
    send_date: _optional(WireDateTime) = _field(
        "Send date", "When to send it: a date, or an ISO 8601 date-time (UTC)",
        placeholder="2026-11-24", default=None, more=True)
    ach_effective_date: _optional(WireDateTime) = _field(
        "Effective date", "The date the entry should settle (a banking day)",
        placeholder="2026-11-24", default=None)
    iat_addenda: IatAddenda | None = _field(
        "IAT addenda", "Required for entry class IAT", default=None)

    @field_validator("amount")
    @classmethod
    def _amount_rules(cls, amount: Decimal, info: ValidationInfo) -> Decimal:
        # The sub-type is declared before the amount, so it is already in info.data.
        # A zero amount is judged with the transaction code, after every field.
        prenote = info.data.get("ach_transaction_sub_type") == "Prenote"
        problem = rules.check_ach_amount(amount, prenote=prenote, zero_allowed=True)
        if problem:
            raise PydanticCustomError("paynb_rule", problem)
        return amount

    @model_validator(mode="after")
    def _entry_rules(self) -> AchItem:
        prenote = self.ach_transaction_sub_type == "Prenote"
        zero_dollar = self.ach_transaction_code in rules.ZERO_DOLLAR_TRANSACTION_CODES
        if not prenote and self.amount == 0 and not zero_dollar:
            raise _cross_field_error("amount", rules.check_ach_amount(self.amount) or "")
        if self.same_day_ach_requested:
            problem = rules.check_same_day_amount(self.amount)
            if problem:
                raise _cross_field_error("amount", problem)
        if self.ach_entry_class == "IAT" and self.iat_addenda is None:
            raise _cross_field_error(
                "iatAddenda", "is required for an IAT entry (NACHA: every IAT entry carries "
                "the IAT addenda records)")
        return self

    def advisories(self, *, today: dt.date | None = None) -> list[Advisory]:
        """Unknown values of the open sets, an effective date in the past, a credit prenote,
        IAT addenda on a non-IAT entry, text longer than its NACHA field."""
        advice: list[Advisory] = []
        _warn_unknown(advice, "achAccountType", self.ach_account_type, codes.ACH_ACCOUNT_TYPES,
                      "an account type")
        _warn_unknown(advice, "achEntryClass", self.ach_entry_class, codes.ACH_ENTRY_CLASSES,
                      "an entry class")
        _warn_unknown(advice, "achTransactionSubType", self.ach_transaction_sub_type,
                      codes.ACH_TRANSACTION_SUBTYPES, "a transaction sub-type")
        _warn_unknown(advice, "achPaymentTypeCode", self.ach_payment_type_code,
                      codes.ACH_PAYMENT_TYPE_CODES, "a payment type code")
        _warn_unknown(advice, "achTransactionCode", self.ach_transaction_code,
                      codes.ACH_TRANSACTION_CODES, "a transaction code")
        if self.iat_addenda is not None:
            _warn_unknown(advice, "iatAddenda.transactionTypeCode",
                          self.iat_addenda.transaction_type_code,
                          codes.IAT_TRANSACTION_TYPE_CODES, "an IAT transaction type code")
            if self.ach_entry_class != "IAT":
                advice.append(Advisory("iatAddenda", "IAT addenda belong to entry class IAT; "
                                       f"this entry is {self.ach_entry_class}",
                                       ValidationWarning))
        if self.ach_effective_date is not None and self.ach_effective_date.date() < (
                today or dt.datetime.now(dt.UTC).date()):
            advice.append(Advisory(
                "achEffectiveDate", f"{self.ach_effective_date.date()} is in the past: the "
                "bank settles a stale entry on its next settlement day (NACHA)",
                ValidationWarning))
        if self.ach_transaction_sub_type == "Prenote" and self.ach_transaction_type != "Debit":
            advice.append(Advisory("achTransactionType", "the service documents prenotes as "
                                   "debits; a credit prenote is sent as given",
                                   ValidationWarning))
        for field, (attribute, width) in _NACHA_WIDTHS.items():
            text = getattr(self, attribute)
            if text is not None and len(text) > width:
                advice.append(Advisory(field, f"is {len(text)} characters; NACHA's field holds "
                                       f"{width}, so the service may cut it", ValidationWarning))
        return advice


class RccItem(RequestModel):
    """One RCC item (spec 2.3): second signer and address line 2 may be left out (blank
    is absent), as on a check with one signer."""

    first_signer_first_name: Name = _field("First signer first name", placeholder="Jane")
    first_signer_last_name: Name = _field("First signer last name", placeholder="Doe")
    second_signer_first_name: _optional(Name) = _field("Second signer first name",
                                                       default=None)
    second_signer_last_name: _optional(Name) = _field("Second signer last name", default=None)
    address1: Name = _field("Address line 1", placeholder="1 Main St")
    address2: _optional(Name) = _field("Address line 2", default=None)
    city: Name = _field("City", placeholder="Springfield")
    state: State = _field("State", "Two-letter US state code", placeholder="IL")
    zip: RccZip = _field("Zip", "12345 or 12345 6789 (a space before the extension)",
                         placeholder="62701")
    your_reference_number: Reference = _field(
        "Your reference", "Your own unique reference; used to find and void the item",
        placeholder="RCC-2026-0001")
    bank_routing_number: RoutingNumber = _field("Routing number", "Nine-digit ABA routing number",
                                                placeholder="021000021")
    bank_account_number: AccountNumber = _field("Account number", "4 to 17 letters or digits",
                                                placeholder="000123456789", secret=True)
    amount: Annotated[Amount, _rule(rules.check_ach_amount)] = _field(
        "Amount", "Dollars and cents, above 0", placeholder="125.00")


class BulkRequest(RequestModel):
    """Base of the bulk bodies (spec 2.2): the commit choice and the items."""

    always_commit_valid: bool = _field(
        "Commit valid items",
        "True: commit the valid items and report the invalid ones. "
        "False: all or nothing, one invalid item rejects the whole set.",
        default=True)


class AchBulkRequest(BulkRequest):
    """ACH bulk request (spec 2.2)."""

    items: list[AchItem] = Field(min_length=1)


class RccBulkRequest(BulkRequest):
    """RCC bulk request (spec 2.3)."""

    items: list[RccItem] = Field(min_length=1)


class CardRouteCheck(RequestModel):
    """Instant card route check by card number (spec 2.4)."""

    card_number: CardNumber = _field("Card number", "13 to 19 digits", secret=True)


class TokenRouteCheck(RequestModel):
    """Instant card route check by token (spec 2.4)."""

    token_id: Name = _field("Token id", "Token standing for the card")
    your_sub_client_id: Name = _field("Sub-client id", "Your sub-client the token belongs to")


class InstantCardTransaction(RequestModel):
    """Instant card transaction (spec 2.5): card data, or a token and sub-client id.

    ``amount`` is a whole number in the service's own unit (not shown in the
    spec): paynb passes it on unchanged.
    """

    name_on_card: _optional(Name) = _field("Name on card", placeholder="JANE DOE", default=None)
    card_number: _optional(CardNumber) = _field("Card number", "13 to 19 digits", secret=True,
                                            default=None)
    card_expiration: _optional(CardExpiration) = _field("Expiration", "MM/YYYY",
                                                    placeholder="12/2028", default=None)
    token_id: _optional(Name) = _field("Token id", "Instead of card data", default=None)
    your_sub_client_id: _optional(Name) = _field("Sub-client id", "Used with the token id",
                                             default=None)
    tot_password: _optional(TotPassword) = _field("One-time password", "4 to 10 digits",
                                              secret=True, default=None)
    amount: InstantAmount = _field("Amount", "Whole number, in the service's unit",
                                   placeholder="1000")
    your_reference_number: Reference = _field("Your reference", placeholder="IC-2026-0001")

    @model_validator(mode="after")
    def _card_or_token(self) -> InstantCardTransaction:
        if self.card_number and self.token_id:
            raise _cross_field_error("tokenId", "give card data or a token, not both")
        if self.card_number:
            for name, value in (("nameOnCard", self.name_on_card),
                                ("cardExpiration", self.card_expiration)):
                if not value:
                    raise _cross_field_error(name, "is required with a card number")
        elif self.token_id:
            if not self.your_sub_client_id:
                raise _cross_field_error("yourSubClientId", "is required with a token id")
        else:
            raise _cross_field_error("cardNumber", "give a card number or a token id")
        return self


class RtpTransaction(RequestModel):
    """Instant RTP transaction (spec 2.6). ``amount`` is passed on unchanged (unit not shown)."""

    name: _optional(Name) = _field("Name", "Receiver's full or business name", default=None)
    first_name: Name = _field("First name", placeholder="Jane")
    last_name: Name = _field("Last name", placeholder="Doe")
    routing_number: RoutingNumber = _field("Routing number", "Nine-digit ABA routing number",
                                           placeholder="021000021")
    account_number: AccountNumber = _field("Account number", "4 to 17 letters or digits",
                                           secret=True)
    amount: InstantAmount = _field("Amount", "Whole number, in the service's unit",
                                   placeholder="1000")
    your_reference_number: Reference = _field("Your reference", placeholder="RTP-2026-0001")


class VoidByReferences(RequestModel):
    """Void ACH or RCC items by the client's reference numbers (spec 2.7)."""

    reference_numbers: list[Reference] = Field(min_length=1)


class AchVoidByIds(RequestModel):
    """Void ACH items by service item id (spec 2.7)."""

    ach_item_ids: list[Annotated[int, Field(gt=0, strict=True)]] = Field(min_length=1)


class RccVoidByIds(RequestModel):
    """Void RCC items by service item id (spec 2.7)."""

    rcc_item_ids: list[Annotated[int, Field(gt=0, strict=True)]] = Field(min_length=1)
