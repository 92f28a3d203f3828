"""The validation rules of every request field, in one place.

The client (before anything is sent), the forms (on every keystroke) and the
sandbox (when a request arrives) all call these functions, so the three can
never disagree. Each rule returns ``None`` when the value is fine and a short,
human message when it is not. Messages never quote the value: a card number
or an account number must not end up in a log line or an exception.

The strictness policy (``docs/validation.md``): refuse only what is certainly
wrong whatever the service does; for the open sets (account types, entry
classes, sub-types, payment type codes) a known value has its meaning in
:mod:`paynb.codes` and an unknown one is sent with a warning. Blank optional
text means absent. Lengths the service's docs show (two-character country and
payment type codes) are enforced; lengths they leave unshown are the sandbox's
choices, documented in ``docs/sandbox.md``.
"""

from __future__ import annotations

import datetime as dt
import re
from decimal import Decimal
from typing import Any

from paynb import codes
from paynb._coerce import parse_decimal

__all__ = ["ACH_ACCOUNT_TYPES", "ACH_ENTRY_CLASSES", "ACH_PAYMENT_TYPE_CODES",
           "ACH_TRANSACTION_SUBTYPES", "ACH_TRANSACTION_TYPES", "MAX_AMOUNT", "SAME_DAY_LIMIT",
           "US_STATES", "ZERO_DOLLAR_TRANSACTION_CODES", "aba_checksum_ok", "blank_is_absent",
           "check_account_number", "check_ach_amount", "check_ach_zip", "check_card_expiration",
           "check_card_number", "check_code", "check_country_code", "check_instant_amount",
           "check_name", "check_rcc_zip", "check_reference_number", "check_routing_number",
           "check_same_day_amount", "check_state", "check_text", "check_tot_password", "luhn_ok",
           "parse_item_id", "to_decimal", "unknown_value", "wire_datetime"]

#: The one closed set of the ACH request: the spec says "Debit or Credit".
ACH_TRANSACTION_TYPES: tuple[str, ...] = ("Debit", "Credit")
#: Known values of the open sets (their meanings are in :mod:`paynb.codes`); other
#: values are sent with a warning.
ACH_TRANSACTION_SUBTYPES: tuple[str, ...] = tuple(codes.ACH_TRANSACTION_SUBTYPES)
ACH_ACCOUNT_TYPES: tuple[str, ...] = tuple(codes.ACH_ACCOUNT_TYPES)
ACH_ENTRY_CLASSES: tuple[str, ...] = tuple(codes.ACH_ENTRY_CLASSES)
ACH_PAYMENT_TYPE_CODES: tuple[str, ...] = tuple(codes.ACH_PAYMENT_TYPE_CODES)
#: Transaction codes of zero-dollar entries that carry remittance data (NACHA): the
#: only non-prenote entries whose amount is 0.
ZERO_DOLLAR_TRANSACTION_CODES = frozenset({24, 29, 34, 39})

#: Largest amount an item may carry: ten digits with cents, as an ACH entry holds.
MAX_AMOUNT = Decimal("99999999.99")
#: Largest Same Day ACH entry: $1,000,000 per entry since March 18, 2022 (NACHA
#: Operating Rules, "Expanding Same Day ACH", phase 3).
SAME_DAY_LIMIT = Decimal("1000000.00")

US_STATES: frozenset[str] = frozenset(
    """AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT
    NE NV NH NJ NM NY NC ND OH OK OR PA RI SC SD TN TX UT VT VA WA WV WI WY
    AS GU MP PR VI AA AE AP""".split()
)

# ASCII digits only: the service's files are ASCII (a NACHA file's fields are), and
# Python's \d and str.isdigit() also take other scripts' digits ("٠٢١", "²").
_DIGITS = re.compile(r"\d+", re.ASCII)
_ACCOUNT = re.compile(r"[0-9A-Za-z-]+")
_ACH_ZIP = re.compile(r"\d{5}(?:[- ]\d{4})?", re.ASCII)
_RCC_ZIP = re.compile(r"\d{5}(?: \d{4})?", re.ASCII)
_EXPIRATION = re.compile(r"(\d{2})/(\d{4})", re.ASCII)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def aba_checksum_ok(routing_number: str) -> bool:
    """True when a nine-digit ABA routing number passes its 3-7-1 checksum."""
    if len(routing_number) != 9 or not _DIGITS.fullmatch(routing_number):
        return False
    d = [int(c) for c in routing_number]
    total = 3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8])
    return total % 10 == 0


def luhn_ok(number: str) -> bool:
    """True when a string of digits passes the Luhn check (card numbers)."""
    if not _DIGITS.fullmatch(number):
        return False
    total = 0
    for i, ch in enumerate(reversed(number)):
        n = int(ch)
        if i % 2 == 1:
            n = n * 2 - 9 if n > 4 else n * 2
        total += n
    return total % 10 == 0


def to_decimal(value: object) -> Decimal | None:
    """An amount as an exact ``Decimal``; ``None`` when it is not a finite number.

    :func:`paynb._coerce.parse_decimal` reads it (floats through their shortest repr,
    commas only between thousands, booleans not numbers); a request's amount is
    stricter than what the frames read from the service: no ``$``, and no infinity.
    """
    try:
        result = parse_decimal(value)
    except ValueError:
        return None
    return result if result is not None and result.is_finite() else None


def check_text(value: str, *, max_length: int | None = 50) -> str | None:
    """A free-text field: not blank, no control characters, not too long (``None``: no
    limit, for fields whose length the service's docs leave unshown)."""
    if not value.strip():
        return "must not be blank"
    if max_length is not None and len(value) > max_length:
        return f"must be at most {max_length} characters"
    if _CONTROL.search(value):
        return "must not contain control characters"
    return None


def blank_is_absent(value: Any) -> Any:
    """An optional text left blank (empty or only whitespace, like the docs' sub-type
    ``" "``) is absent: ``None``. Any other value is returned unchanged."""
    return None if isinstance(value, str) and not value.strip() else value


def check_code(value: str, *, width: int) -> str | None:
    """A short code of at most ``width`` characters, as the service's docs show its width."""
    if len(value) > width:
        return f"must be at most {width} characters (the service's documented width)"
    if _CONTROL.search(value):
        return "must not contain control characters"
    return None


def check_country_code(value: str) -> str | None:
    """A two-letter country code (ISO 3166-1 alpha-2, upper case): the documented width."""
    if len(value) != 2 or not value.isalpha() or not value.isascii():
        return "must be a two-letter country code, like US"
    return None


def unknown_value(value: Any, known: Any, what: str) -> str | None:
    """The warning for a value of an open set that paynb does not know (``None``: known).

    Sent anyway: the service documents no allowed set, so an unknown value may be one
    it accepts (docs/validation.md).
    """
    if value is None or value in known:
        return None
    shown = ", ".join(str(k) for k in known)
    return (f"{value!r} is not {what} paynb knows ({shown}); it is sent as given "
            "and the service decides")


def check_same_day_amount(amount: Decimal) -> str | None:
    """A Same Day ACH entry carries at most $1,000,000 (NACHA, since March 2022)."""
    if amount > SAME_DAY_LIMIT:
        return (f"must be at most {SAME_DAY_LIMIT:,} for a same-day entry (NACHA's "
                "per-entry Same Day ACH limit); send it as a next-day entry instead")
    return None


def wire_datetime(value: dt.datetime) -> str:
    """A datetime as the service's docs write one: ``2025-06-11T18:25:21.435Z`` (UTC, ms)."""
    value = value.astimezone(dt.UTC) if value.tzinfo else value
    return f"{value:%Y-%m-%dT%H:%M:%S}.{value.microsecond // 1000:03d}Z"


def check_name(value: str) -> str | None:
    """A person's or business's name (at most 50 characters)."""
    return check_text(value, max_length=50)


def check_reference_number(value: str) -> str | None:
    """The client's own reference: 1 to 50 printable characters, no apostrophe."""
    problem = check_text(value, max_length=50)
    if problem:
        return problem
    if "'" in value:
        return "must not contain an apostrophe"
    return None


def check_routing_number(value: str) -> str | None:
    """Nine digits that pass the ABA checksum."""
    if len(value) != 9 or not _DIGITS.fullmatch(value):
        return "must be exactly 9 digits"
    if not aba_checksum_ok(value):
        return "is not a valid ABA routing number (checksum fails)"
    return None


def check_account_number(value: str) -> str | None:
    """4 to 17 letters, digits or hyphens (an apostrophe or space is invalid)."""
    if not 4 <= len(value) <= 17:
        return "must be 4 to 17 characters"
    if not _ACCOUNT.fullmatch(value):
        return "may contain only letters, digits and hyphens"
    return None


def check_state(value: str) -> str | None:
    """A two-letter US state, district, territory or military code, upper case."""
    if len(value) != 2 or not value.isalpha():
        return "must be a two-letter state code"
    if value not in US_STATES:
        return "is not a US state code"
    return None


def check_ach_zip(value: str) -> str | None:
    """ACH zip: ``12345``, ``12345-6789`` or ``12345 6789``."""
    if not _ACH_ZIP.fullmatch(value):
        return "must be 5 digits, optionally followed by a 4-digit extension"
    return None


def check_rcc_zip(value: str) -> str | None:
    """RCC zip: ``12345`` or ``12345 6789`` (a space before the extension)."""
    if not _RCC_ZIP.fullmatch(value):
        return "must be 5 digits, or 5 digits, a space and 4 digits"
    return None


def _decimal_places(amount: Decimal) -> int:
    exponent = amount.normalize().as_tuple().exponent
    return -exponent if isinstance(exponent, int) and exponent < 0 else 0


def check_ach_amount(amount: Decimal, *, prenote: bool = False,
                     zero_allowed: bool = False) -> str | None:
    """An ACH or RCC amount: above 0 with at most 2 decimals; exactly 0 for a prenote
    (and allowed to be 0 for a zero-dollar entry, ``zero_allowed``)."""
    if prenote:
        return None if amount == 0 else "must be 0 for a prenote (a prenote carries no money)"
    if amount < 0:
        return "must not be negative (the transaction type says debit or credit)"
    if amount == 0 and not zero_allowed:
        return "must be greater than 0 (an amount of 0 is a prenote: set the sub-type Prenote)"
    if _decimal_places(amount) > 2:
        return "must have at most 2 decimal places"
    if amount > MAX_AMOUNT:
        return f"must be at most {MAX_AMOUNT}"
    return None


def check_instant_amount(amount: Decimal) -> str | None:
    """An instant amount: a whole number above 0, passed on in the service's own unit."""
    if amount != amount.to_integral_value():
        return "must be a whole number"
    if amount <= 0:
        return "must be greater than 0"
    if amount > 9_999_999_999:
        return "must be at most 9999999999"
    return None


def check_card_number(value: str) -> str | None:
    """13 to 19 digits that pass the Luhn check."""
    if not _DIGITS.fullmatch(value) or not 13 <= len(value) <= 19:
        return "must be 13 to 19 digits"
    if not luhn_ok(value):
        return "is not a valid card number (Luhn check fails)"
    return None


def check_card_expiration(value: str, *, today: dt.date | None = None) -> str | None:
    """``MM/YYYY``, a real month, not before the current month (``today``: the UTC day,
    the service's, not this machine's local one)."""
    match = _EXPIRATION.fullmatch(value)
    if not match:
        return "must have the shape MM/YYYY"
    month, year = int(match[1]), int(match[2])
    if not 1 <= month <= 12:
        return "month must be 01 to 12"
    today = today or dt.datetime.now(dt.UTC).date()
    if (year, month) < (today.year, today.month):
        return "card has expired"
    return None


def check_tot_password(value: str) -> str | None:
    """The one-time value: 4 to 10 digits."""
    if not _DIGITS.fullmatch(value) or not 4 <= len(value) <= 10:
        return "must be 4 to 10 digits"
    return None


def parse_item_id(text: str) -> int | None:
    """An integer item id from text such as a URL path segment, or None.

    Only ASCII digits count: ``str.isdigit()`` also accepts digits like ``"³"``
    that ``int()`` then refuses, and ``int()`` accepts ``"٣"``, spaces, signs and
    underscores. More than 19 digits, or a value past a 64-bit signed integer
    (the largest id SQLite stores), is no id either.
    """
    if not (0 < len(text) <= 19 and text.isascii() and text.isdigit()):
        return None
    value = int(text)
    return value if value < 2**63 else None
