"""What every request body shares: the field types (each a rule of
:mod:`paynb.validation`) and what the forms read of a field, :class:`RequestModel`,
:class:`Advisory`, and a pydantic error said per field (:func:`field_errors`,
:func:`check`). The bodies themselves are :mod:`paynb.models`'."""

from __future__ import annotations

import datetime as dt
import numbers
from decimal import Decimal
from typing import Annotated, Any, NamedTuple, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    ValidatorFunctionWrapHandler,
    WrapValidator,
)
from pydantic import ValidationError as PydanticValidationError
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError

from paynb import validation as rules
from paynb._time import utc_moment
from paynb.errors import ValidationError

__all__ = ["Advisory", "RequestModel", "check", "field_errors"]


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
        raise PydanticCustomError("paynb_rule", _not_a_number(value))
    return amount


def _not_a_number(value: Any) -> str:
    """Why an amount is not read, for the two spellings a spreadsheet gives: a currency
    sign, and a decimal comma (``12,30``, refused rather than read as 1230). The value
    itself is not quoted, as no rejected value is."""
    plain = value.replace("$", "") if isinstance(value, str) else ""
    if rules.to_decimal(plain.replace(",", "")) is None:  # not one of those two alone
        return "must be a number"
    if rules.to_decimal(plain) is not None:
        return "must be a number without a currency sign, like 1250.00 or 1,250.00"
    return ("must be a number with a decimal point, like 12.30: a comma may only "
            "separate thousands (1,250.00)")


def _as_text(value: Any) -> Any:
    # Strip pasted whitespace, but leave non-strings for pydantic to reject:
    # a routing number sent as a JSON number is a type error, not a string.
    return value.strip() if isinstance(value, str) else value


def _as_datetime(value: Any) -> Any:
    # Dates, datetimes, pandas Timestamps and ISO texts (paynb._time); anything else is
    # malformed, said the pydantic way so that the field's name is attached.
    if value is None:
        return None
    try:
        return utc_moment(value, "value")
    except ValidationError:
        raise PydanticCustomError(
            "paynb_rule", "must be a date or an ISO 8601 date-time, like 2025-06-11T18:25:21.435Z"
        ) from None


def _field(title: str, description: str = "", *, placeholder: str = "", secret: bool = False,
           suggestions: Any = (), more: bool = False, **kwargs: Any) -> Any:
    """A field with what the forms need: the ``title`` is the label, ``description`` the help;
    ``suggestions`` are the known values of an open set (offered, not enforced), and
    ``more`` puts the field in the forms' collapsed "More fields" section."""
    extra: dict[str, Any] = {"placeholder": placeholder, "secret": secret}
    if suggestions:
        extra["suggestions"] = [str(value) for value in suggestions]
    if more:
        extra["more"] = True
    return Field(title=title, description=description, json_schema_extra=extra,
                 repr=not secret, **kwargs)


def _known_spelling(known: Any) -> BeforeValidator:
    """A known value of an open set in any casing becomes its documented spelling
    (``checking`` -> ``Checking``); other values are left as given."""
    by_fold = {str(value).lower(): value for value in known}

    def spell(value: Any) -> Any:
        if isinstance(value, str):
            return by_fold.get(value.strip().lower(), value.strip())
        return value

    return BeforeValidator(spell)


Text = Annotated[str, BeforeValidator(_as_text)]
Name = Annotated[Text, _rule(rules.check_name)]
Reference = Annotated[Text, _rule(rules.check_reference_number)]
RoutingNumber = Annotated[Text, _rule(rules.check_routing_number)]
AccountNumber = Annotated[Text, _rule(rules.check_account_number)]
_UPPER = BeforeValidator(lambda v: v.upper() if isinstance(v, str) else v)
State = Annotated[Text, _UPPER, _rule(rules.check_state)]
AchZip = Annotated[Text, _rule(rules.check_ach_zip)]
RccZip = Annotated[Text, _rule(rules.check_rcc_zip)]
Amount = Annotated[Decimal, BeforeValidator(_as_decimal)]
InstantAmount = Annotated[Decimal, BeforeValidator(_as_decimal), _rule(rules.check_instant_amount)]
CardNumber = Annotated[Text, BeforeValidator(lambda v: v.replace(" ", "").replace("-", "")
                                             if isinstance(v, str) else v),
                       _rule(rules.check_card_number)]
CardExpiration = Annotated[Text, _rule(rules.check_card_expiration)]
TotPassword = Annotated[Text, _rule(rules.check_tot_password)]
#: Free text whose length the service's docs do not show: no control characters.
FreeText = Annotated[Text, _rule(rules.check_text, max_length=None)]
CountryCode = Annotated[Text, _UPPER, _rule(rules.check_country_code)]
TwoCharacters = Annotated[Text, _rule(rules.check_code, width=2)]
#: An instant in time: read from a date, datetime, Timestamp or ISO text, sent as the
#: docs write it (``2025-06-11T18:25:21.435Z``).
WireDateTime = Annotated[dt.datetime, BeforeValidator(_as_datetime),
                         PlainSerializer(rules.wire_datetime, return_type=str)]
NonNegativeInt = Annotated[int, Field(ge=0)]


def _open_set(known: Any, width: int | None = None) -> Any:
    """Text of an open set: known values take their documented spelling, others pass."""
    checked = _rule(rules.check_code, width=width) if width else _rule(rules.check_text,
                                                                        max_length=None)
    return Annotated[Text, _known_spelling(known), checked]


def _optional(kind: Any) -> Any:
    """``kind`` or absent; blank text (``""``, ``" "``) is absent, never an error."""
    return Annotated[kind | None, BeforeValidator(rules.blank_is_absent)]


def _keep_blank(value: Any, handler: ValidatorFunctionWrapHandler) -> Any:
    if isinstance(value, str) and not value.strip():
        return value
    return handler(value)


def _optional_as_given(kind: Any) -> Any:
    """``kind`` or absent, in a nested object: blank text (``""``, ``" "``) is never an
    error and is **sent as given**. A nested object is written by its caller, field by
    field (no form or file leaves a field blank there by omission), and the service may
    want the key itself: paynb never drops what a documented body holds."""
    return Annotated[kind | None, WrapValidator(_keep_blank)]


class Advisory(NamedTuple):
    """Something unusual about a valid request: sent anyway, with a warning.

    ``field`` is the wire name, ``message`` says what and why, ``category`` is the
    :class:`~paynb.errors.PaynbWarning` subclass the client warns with.
    """

    field: str
    message: str
    category: type[Warning]


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
        # Validators are built on first validation, not at import: a new client (and
        # `import paynb` users who only list) do not pay for every model's schema.
        defer_build=True,
    )

    def to_wire(self) -> dict[str, Any]:
        """The JSON body as the service expects it (camelCase, ``Decimal`` amounts kept exact,
        date-times as ``2025-06-11T18:25:21.435Z``; absent optional fields left out)."""
        return self.model_dump(by_alias=True, exclude_none=True)

    def advisories(self, *, today: dt.date | None = None) -> list[Advisory]:
        """What is unusual but not certainly wrong about this request (sent anyway).

        ``today`` (default: the current UTC date) is the day a date is compared with.
        """
        return []

    @classmethod
    def wire_names(cls) -> dict[str, str]:
        """Map of python attribute name to the service's field name."""
        return {name: info.alias or name for name, info in cls.model_fields.items()}


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


_NUMBER_FOR_TEXT = ("must be text, not a number (a number drops leading zeros: read CSV "
                    "files with dtype=str)")


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
    for error in exc.errors(include_url=False):
        loc = tuple(error["loc"])
        if error["type"] == "paynb_cross_field":
            loc = (*loc, error["ctx"]["field"])
        message = _PLAIN_MESSAGES.get(error["type"]) or error["msg"]
        given = error.get("input")
        if error["type"] == "string_type" and isinstance(given, numbers.Number) \
                and not isinstance(given, bool):
            # What pandas makes of a CSV's routing numbers, account numbers and ZIP
            # codes by default: the input's type is named, never its value.
            message = _NUMBER_FOR_TEXT
        errors.setdefault(_error_key(loc) or "body", []).append(message)
    return errors


def check(model: type[Model], data: Any) -> tuple[Model | None, dict[str, list[str]]]:
    """Validate ``data`` against ``model``: the model, or ``None`` and the errors per field."""
    try:
        return model.model_validate(data), {}
    except PydanticValidationError as exc:
        return None, field_errors(exc)
