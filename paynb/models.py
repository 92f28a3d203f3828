"""Request bodies of the service, defined once.

These pydantic models are the single source of truth for every body the
service accepts (spec section 2). The client serialises and pre-validates with
them, the forms are generated from them (``title`` is the label,
``description`` the help text, ``json_schema_extra`` carries the placeholder
and whether the input is a secret), and the sandbox parses requests with them.

Python attributes are snake_case; on the wire and in DataFrames every field
has the service's camelCase name (``first_signer_first_name`` is
``firstSignerFirstName``). Both spellings are accepted as input.

The rules themselves live in :mod:`paynb.validation`.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic import ValidationError as PydanticValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from paynb import validation as rules

__all__ = [
    "AchBulkRequest",
    "AchItem",
    "AchVoidByIds",
    "BulkRequest",
    "CardRouteCheck",
    "InstantCardTransaction",
    "RccBulkRequest",
    "RccItem",
    "RccVoidByIds",
    "RequestModel",
    "RtpTransaction",
    "TokenRouteCheck",
    "VoidByReferences",
    "check",
    "field_errors",
]

Model = TypeVar("Model", bound="RequestModel")


def _rule(check_fn: Any, **kwargs: Any) -> AfterValidator:
    """Turn a rule of :mod:`paynb.validation` into a pydantic validator."""

    def run(value: Any) -> Any:
        problem = check_fn(value, **kwargs)
        if problem:
            raise PydanticCustomError("paynb_rule", problem)
        return value

    return AfterValidator(run)


def _as_decimal(value: Any) -> Decimal:
    amount = rules.to_decimal(value)
    if amount is None:
        raise PydanticCustomError("paynb_rule", "must be a number")
    return amount


def _as_text(value: Any) -> Any:
    # Strip pasted whitespace, but leave non-strings for pydantic to reject:
    # a routing number sent as a JSON number is a type error, not a string.
    return value.strip() if isinstance(value, str) else value


def _field(title: str, description: str = "", *, placeholder: str = "", secret: bool = False,
           **kwargs: Any) -> Any:
    extra = {"placeholder": placeholder, "secret": secret}
    return Field(title=title, description=description, json_schema_extra=extra,
                 repr=not secret, **kwargs)


Text = Annotated[str, BeforeValidator(_as_text)]
Name = Annotated[Text, _rule(rules.check_name)]
Reference = Annotated[Text, _rule(rules.check_reference_number)]
RoutingNumber = Annotated[Text, _rule(rules.check_routing_number)]
AccountNumber = Annotated[Text, _rule(rules.check_account_number)]
State = Annotated[Text, BeforeValidator(lambda v: v.upper() if isinstance(v, str) else v),
                  _rule(rules.check_state)]
AchZip = Annotated[Text, _rule(rules.check_ach_zip)]
RccZip = Annotated[Text, _rule(rules.check_rcc_zip)]
Amount = Annotated[Decimal, BeforeValidator(_as_decimal)]
InstantAmount = Annotated[Decimal, BeforeValidator(_as_decimal), _rule(rules.check_instant_amount)]
CardNumber = Annotated[Text, BeforeValidator(lambda v: v.replace(" ", "").replace("-", "")
                                             if isinstance(v, str) else v),
                       _rule(rules.check_card_number)]
CardExpiration = Annotated[Text, _rule(rules.check_card_expiration)]
TotPassword = Annotated[Text, _rule(rules.check_tot_password)]


def _cross_field_error(field: str, message: str) -> PydanticCustomError:
    """An error found by comparing fields, attributed to the camelCase ``field``."""
    return PydanticCustomError("paynb_cross_field", message, {"field": field})


class RequestModel(BaseModel):
    """Base of every request body: camelCase on the wire, unknown fields refused."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON body as the service expects it (camelCase, ``Decimal`` amounts kept exact)."""
        return self.model_dump(by_alias=True, exclude_none=True)

    @classmethod
    def wire_names(cls) -> dict[str, str]:
        """Map of python attribute name to the service's field name."""
        return {name: info.alias or name for name, info in cls.model_fields.items()}


class AchItem(RequestModel):
    """One ACH item (spec 2.1): a debit, a credit, or a debit prenote (amount 0)."""

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
    ach_account_type: Literal[rules.ACH_ACCOUNT_TYPES] = _field(  # type: ignore[valid-type]
        "Account type", "Checking or Savings", default="Checking")
    ach_entry_class: Literal[rules.ACH_ENTRY_CLASSES] = _field(  # type: ignore[valid-type]
        "Entry class", "SEC code; PPD for consumer items", default="PPD")
    ach_transaction_type: Literal[rules.ACH_TRANSACTION_TYPES] = _field(  # type: ignore[valid-type]
        "Transaction type", "Debit pulls money from the account, Credit pushes money to it")
    ach_transaction_sub_type: Literal[rules.ACH_TRANSACTION_SUBTYPES] | None = _field(  # type: ignore[valid-type]
        "Sub-type", "Prenote marks a zero-amount debit that tests the account", default=None)
    amount: Amount = _field("Amount", "Dollars and cents, above 0; 0 for a prenote",
                            placeholder="125.00")

    @field_validator("amount")
    @classmethod
    def _amount_rules(cls, amount: Decimal, info: ValidationInfo) -> Decimal:
        # The sub-type is declared before the amount, so it is already in info.data.
        prenote = info.data.get("ach_transaction_sub_type") == "Prenote"
        problem = rules.check_ach_amount(amount, prenote=prenote)
        if problem:
            raise PydanticCustomError("paynb_rule", problem)
        return amount

    @model_validator(mode="after")
    def _prenote_is_debit(self) -> AchItem:
        if self.ach_transaction_sub_type == "Prenote" and self.ach_transaction_type != "Debit":
            raise _cross_field_error("achTransactionType", "a prenote must be a Debit")
        return self


class RccItem(RequestModel):
    """One RCC item (spec 2.3)."""

    first_signer_first_name: Name = _field("First signer first name", placeholder="Jane")
    first_signer_last_name: Name = _field("First signer last name", placeholder="Doe")
    second_signer_first_name: Name | None = _field("Second signer first name", default=None)
    second_signer_last_name: Name | None = _field("Second signer last name", default=None)
    address1: Name = _field("Address line 1", placeholder="1 Main St")
    address2: Name | None = _field("Address line 2", default=None)
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

    name_on_card: Name | None = _field("Name on card", placeholder="JANE DOE", default=None)
    card_number: CardNumber | None = _field("Card number", "13 to 19 digits", secret=True,
                                            default=None)
    card_expiration: CardExpiration | None = _field("Expiration", "MM/YYYY",
                                                    placeholder="12/2028", default=None)
    token_id: Name | None = _field("Token id", "Instead of card data", default=None)
    your_sub_client_id: Name | None = _field("Sub-client id", "Used with the token id",
                                             default=None)
    tot_password: TotPassword | None = _field("One-time password", "4 to 10 digits",
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

    name: Name | None = _field("Name", "Receiver's full or business name", default=None)
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


_PLAIN_MESSAGES = {
    "missing": "is required",
    "extra_forbidden": "is not a field of this request",
    "string_type": "must be text",
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "list_type": "must be a list",
    "too_short": "must not be empty",
    "literal_error": None,  # pydantic's own text lists the allowed values
    "model_type": "must be an object",
    "model_attributes_type": "must be an object",
}


def _error_key(loc: tuple[Any, ...]) -> str:
    key = ""
    for part in loc:
        if isinstance(part, int):
            key += f"[{part}]"
        else:
            key += f".{part}" if key else str(part)
    return key


def field_errors(exc: PydanticValidationError) -> dict[str, list[str]]:
    """A pydantic error as ``{"fieldName": ["message", ...]}``, keys in wire spelling.

    Nested keys look like ``items[3].amount``, as ASP.NET names them. The
    rejected values are never quoted, so a card number cannot leak through.
    """
    errors: dict[str, list[str]] = {}
    for error in exc.errors(include_url=False, include_input=False):
        loc = tuple(error["loc"])
        if error["type"] == "paynb_cross_field":
            loc = (*loc, error["ctx"]["field"])
        message = _PLAIN_MESSAGES.get(error["type"]) or error["msg"]
        errors.setdefault(_error_key(loc) or "body", []).append(message)
    return errors


def check(model: type[Model], data: Any) -> tuple[Model | None, dict[str, list[str]]]:
    """Validate ``data`` against ``model``: the model, or ``None`` and the errors per field."""
    try:
        return model.model_validate(data), {}
    except PydanticValidationError as exc:
        return None, field_errors(exc)
