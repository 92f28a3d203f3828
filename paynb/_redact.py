"""What a secret looks like and how it is shown: the one place paynb decides.

Secrets are passwords, client secrets, tokens, one-time passwords (``totPassword``),
security codes and full card numbers; an account number is shown masked to its last
four (``****6789``). Every part of paynb that shows or stores something the service or
the user wrote goes through here (docs/reference/internals.md lists who uses what).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from paynb._coerce import missing
from paynb.validation import luhn_ok

__all__ = [
    "HIDDEN",
    "field_name",
    "hide_numbers",
    "hide_urls",
    "hide_password",
    "is_account_field",
    "is_card_field",
    "is_secret_field",
    "last_four",
    "mask_card_numbers",
    "preview",
    "redact",
    "shown_url",
    "url_host",
    "url_scheme",
]

#: What a repr shows in place of a secret.
HIDDEN = "<hidden>"

# Field names (lower case, letters and digits only: any spelling) that hold a secret.
_SECRET_FIELDS = frozenset({
    "password", "totpassword", "secret", "clientsecret", "token", "accesstoken",
    "refreshtoken", "idtoken", "authorization", "apikey", "cvv", "cvv2", "cvc",
    "securitycode", "pin", "cardexpiration",
    # Notification URLs (paynb monitor's, apprise's): they carry tokens and passwords.
    "notify", "notifyurl", "notifyurls", "webhook", "webhookurl",
})
# Field names that hold a full card number (stored only as cardLastFour).
_CARD_FIELDS = frozenset({"cardnumber", "pan", "primaryaccountnumber"})

# A card number in free text: 13 to 19 digits, maybe in groups split by spaces or dashes.
_CARD_LIKE = re.compile(r"(?<!\d)\d(?:[ -]?\d){12,18}(?!\d)")
# For previews: unbroken runs of 9+ digits (accounts, cards), and card numbers as people
# write them, groups of 3+ digits split by single spaces or dashes (4111 1111 1111 1111,
# 3782-822463-10005); groups of 3+ digits, so dates stay readable.
_LONG_DIGITS = re.compile(r"\d{9,}")
_DIGIT_GROUPS = re.compile(r"(?<!\d)\d{3,}(?:[ -]\d{3,})+(?!\d)")
_TAGS = re.compile(r"<[^>]*>")
# For unreadable answers: a secret's value after its name (JSON or form encoded), and
# any run of 5+ digits.
_SECRET_VALUE = re.compile(
    r'("?(?:access_token|refresh_token|id_token|token|password|client_secret|totpassword|'
    r'cardnumber)"?\s*[:=]\s*)("[^"]*"|[^\s,&}]+)',
    re.IGNORECASE,
)
_DIGIT_RUN = re.compile(r"\d{5,}")
# A password in a database address: scheme://user:PASSWORD@host, and password=... (in the
# query of an address or in a key=value connection string; quoted or not).
# (Up to the last @ before the path: a password may hold an @ its writer did not escape.)
_URL_PASSWORD = re.compile(r"(://[^:/@\s]*:)[^/\s]*(@)")
_PASSWORD_PARAM = re.compile(r"(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&]+)", re.IGNORECASE)


def field_name(key: object) -> str:
    """``key`` as the rules compare it: lower case, letters and digits only
    (``totPassword``, ``tot_password`` and ``TOT-PASSWORD`` are all ``totpassword``)."""
    return re.sub(r"[^a-z0-9]", "", str(key).lower())


def is_secret_field(key: object) -> bool:
    """Whether a field named ``key`` holds a secret (password, secret, token, one-time
    password, security code, card expiration), in any spelling."""
    name = field_name(key)
    return name in _SECRET_FIELDS or "password" in name or "secret" in name


def is_card_field(key: object) -> bool:
    """Whether a field named ``key`` holds a full card number."""
    return field_name(key) in _CARD_FIELDS


def is_account_field(key: object) -> bool:
    """Whether a field named ``key`` holds an account number (``accountNumber``,
    ``bankAccountNumber``, ``payeeAccountNumber``...)."""
    return field_name(key).endswith("accountnumber")


def last_four(value: Any) -> str:
    """An account, card or token as ``****6789``: its last four characters only
    (``****`` alone for four characters or fewer)."""
    text = "" if value is None else str(value).strip()
    return "****" + text[-4:] if len(text) > 4 else "****"


def mask_card_numbers(text: str) -> str:
    """``text`` with anything that looks like a full card number (13 to 19 digits,
    maybe grouped, passing the Luhn check) shown as ``****1111``."""

    def replace(match: re.Match[str]) -> str:
        digits = re.sub(r"\D", "", match.group())
        return last_four(digits) if luhn_ok(digits) else match.group()

    return _CARD_LIKE.sub(replace, text)


def shown_url(url: str) -> str:
    """``url`` as a message may show it: the user-info part (``user:password@``) and the
    value of every query parameter shown as ``<hidden>`` (a configured address that has
    them carries credentials), scheme, host, port and path as they are.

    >>> shown_url("https://ops:s3cret@api.example.com/api?key=abc")
    'https://<hidden>@api.example.com/api?key=<hidden>'
    """
    parts = urlsplit(str(url))
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{HIDDEN}@{netloc.rpartition('@')[2]}"
    query = "&".join(f"{pair.partition('=')[0]}={HIDDEN}" if "=" in pair else HIDDEN
                     for pair in parts.query.split("&") if pair)
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def url_host(url: str) -> str:
    """The host (and port) of ``url``, without any user-info."""
    return urlsplit(str(url)).netloc.rpartition("@")[2]


def _star_all_but_four(digits: str) -> str:
    return "*" * (len(digits) - 4) + digits[-4:]


def _mask_group(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group())
    return _star_all_but_four(digits) if len(digits) >= 13 else match.group()


def preview(text: str, limit: int = 160) -> str:
    """The start of an answer for an error message: tags dropped, long digit runs masked.

    Long digit runs (card and account numbers an answer might echo) show
    only their last four digits: unbroken runs of 9 or more digits, and groups
    split by single spaces or dashes that add up to 13 or more digits
    (``4111 1111 1111 1111`` shows as ``************1111``).
    """
    flat = " ".join(_TAGS.sub(" ", text).split())
    flat = _DIGIT_GROUPS.sub(_mask_group, flat)
    flat = _LONG_DIGITS.sub(lambda match: _star_all_but_four(match.group()), flat)
    return flat if len(flat) <= limit else flat[:limit] + "..."


def hide_numbers(text: str) -> str:
    """``text`` (an answer paynb cannot read) with the values of secret names replaced by
    ``"***"`` and every run of five or more digits starred out whole."""
    text = _SECRET_VALUE.sub(lambda match: match.group(1) + '"***"', text)
    return _DIGIT_RUN.sub(lambda match: "*" * len(match.group()), text)


def hide_password(text: str) -> str:
    """``text`` with the password of any database address in it shown as :data:`HIDDEN`:
    ``postgresql://jane:s3cret@db/paynb`` becomes ``postgresql://jane:<hidden>@db/paynb``,
    and ``password=s3cret`` (in an address's query or a connection string)
    ``password=<hidden>``."""
    text = _URL_PASSWORD.sub(lambda match: f"{match.group(1)}{HIDDEN}{match.group(2)}", text)
    return _PASSWORD_PARAM.sub(lambda match: f"{match.group(1)}{HIDDEN}", text)


def redact(value: Any) -> Any:
    """A copy of ``value`` that is safe to store: no secret, no full card or account number.

    In mappings (at any depth), keys naming a password, secret, token, one-time password,
    security code or card expiration are dropped (any spelling: ``totPassword``,
    ``tot_password``, ``client_secret``); a card number becomes ``cardLastFour``; an
    account number (any key ending in ``accountNumber``) is masked to ``****6789``. Any
    string that looks like a full card number is masked too. ``Decimal`` becomes its exact
    string, dates their ISO form, pydantic models their wire dict, numpy scalars Python
    ones, missing values (NaN, NaT, NA) ``None``.
    """
    if hasattr(value, "to_wire"):
        value = value.to_wire()
    if isinstance(value, Mapping):
        clean: dict[str, Any] = {}
        for key, item in value.items():
            if is_secret_field(key):
                continue
            if is_card_field(key):
                if item:
                    clean.setdefault("cardLastFour", re.sub(r"\D", "", str(item))[-4:])
                continue
            if is_account_field(key) and item is not None:
                clean[str(key)] = last_four(item)
                continue
            clean[str(key)] = redact(item)
        return clean
    if isinstance(value, list | tuple | set | frozenset):
        return [redact(item) for item in value]
    if type(value).__module__ == "numpy":  # values read from a DataFrame row
        value = value.item()
    if missing(value):
        return None
    if isinstance(value, str):
        return mask_card_numbers(value)
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, bool | int | float):
        return value
    # Unknown objects (SecretStr and friends) are shown by their (safe) str, masked.
    return mask_card_numbers(str(value))


# The parts of a URL that may be secret: user, password, host, path segments, query
# values (apprise puts tokens in any of them: slack://T1/B2/C3, json://user:pw@host).
_URL_PARTS = re.compile(r"[^:/?&=@#]+")


def url_scheme(url: str) -> str:
    """What a notification URL may be called by: its scheme (``mailtos``, ``json``,
    ``slack``), nothing else of it; ``"?"`` for text that is no URL."""
    scheme, found, _ = str(url).partition("://")
    return scheme.strip().lower() if found and scheme.strip().isalnum() else "?"


def hide_urls(text: str, urls: Any) -> str:
    """``text`` with each of ``urls`` (secret URLs, such as notification URLs), and every
    part of them of three characters or more, shown as :data:`HIDDEN`.

    A delivery failure or a library's log line may quote a URL whole or any piece of it
    (the host, the user, a token in the path): none of it shows.
    """
    pieces: set[str] = set()
    for url in [urls] if isinstance(urls, str) else list(urls or ()):
        url = str(url)
        if not url:
            continue
        pieces.add(url)
        rest = url.partition("://")[2] or url
        pieces.update(part for part in _URL_PARTS.findall(rest) if len(part) >= 3)
    for piece in sorted(pieces, key=len, reverse=True):
        text = text.replace(piece, HIDDEN)
    return text
