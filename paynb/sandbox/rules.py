"""The sandbox's tables: instant card ranges, RTP banks, the demo companies, and the
seeded draws every outcome comes from (``docs/sandbox.md`` describes them all).

Items submitted over HTTP draw from a hash of ``(seed, table, item id)`` (:func:`draws`),
so the same requests against the same seed give the same outcomes; the demo generator
draws from its own seeded stream. Business processing over time is
:mod:`paynb.sandbox.processing`; the field rules of requests, :mod:`paynb.validation`.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from dataclasses import dataclass
from typing import Any

from paynb.sandbox.processing import DAY_MS, HOUR_MS

__all__ = ["CARD_FAILURES", "CARD_RANGES", "DAY_MS", "HOUR_MS", "RTP_BANKS", "RTP_FAILURES",
           "BANKS", "BLOCKED_ACCOUNT_PREFIX", "MERCHANT_IDS", "ODFI_BANK_ID", "PAYEES", "CardRoute",
           "RtpBank", "card_outcome", "card_route", "company_fields", "day_start", "draws",
           "rtp_outcome", "token_route"]


def draws(seed: int, table: str, item_id: int, count: int = 4) -> list[float]:
    """``count`` uniform draws for one item, fixed by the seed, the table and the id."""
    digest = hashlib.blake2b(f"{seed}:{table}:{item_id}".encode(), digest_size=8 * count).digest()
    return [n / 2**64 for n in struct.unpack(f">{count}Q", digest)]


def day_start(ms: int) -> int:
    """Midnight UTC of the day holding ``ms`` (epoch milliseconds)."""
    return ms - ms % DAY_MS


#: The demo companies' merchant ids at the service, and the id of their bank (ODFI).
MERCHANT_IDS = {"DEMO1": 310_001, "DEMO2": 310_002}
ODFI_BANK_ID = 42
#: Who the demo companies' checks (RCC) are payable to: name and phone.
PAYEES = {"DEMO1": ("Demo One Utilities", "8005550101"),
          "DEMO2": ("Demo Two Lending", "8005550102")}


def company_fields(company: str) -> dict[str, Any]:
    """What the service fills in from the company: ``merchantId``, ``bankId`` (ACH and
    RCC), ``payeeName`` and ``payeePhone`` (RCC)."""
    merchant = MERCHANT_IDS.get(company, 310_000 + zlib.crc32(company.encode()) % 1000)
    payee, phone = PAYEES.get(company, (company, None))
    return {"merchantId": merchant, "bankId": ODFI_BANK_ID, "payeeName": payee,
            "payeePhone": phone}


#: Banks of the demo's routing numbers: routing number -> (name, city, state, zip), as
#: the service fills them into RCC records.
BANKS = {
    "021000021": ("JPMorgan Chase Bank", "New York", "NY", "10017"),
    "026009593": ("Bank of America", "Charlotte", "NC", "28255"),
    "121000248": ("Wells Fargo Bank", "San Francisco", "CA", "94104"),
    "011000138": ("Bank of America", "Boston", "MA", "02110"),
    "031176110": ("Capital One", "McLean", "VA", "22102"),
    "111000025": ("Federal Reserve Bank", "Dallas", "TX", "75201"),
    "122000247": ("Wells Fargo Bank", "Los Angeles", "CA", "90017"),
    "061000052": ("Bank of America", "Atlanta", "GA", "30303"),
    "071000013": ("JPMorgan Chase Bank", "Chicago", "IL", "60603"),
    "091000019": ("Wells Fargo Bank", "Minneapolis", "MN", "55479"),
    "044000037": ("JPMorgan Chase Bank", "Columbus", "OH", "43215"),
    "053000196": ("Bank of America", "Charlotte", "NC", "28255"),
    "021200339": ("Bank of America", "Newark", "NJ", "07102"),
    "011401533": ("Citizens Bank", "Providence", "RI", "02903"),
    "256074974": ("Navy Federal Credit Union", "Vienna", "VA", "22180"),
    "322271627": ("JPMorgan Chase Bank", "Tampa", "FL", "33602"),
    "031000503": ("Wells Fargo Bank", "Philadelphia", "PA", "19106"),
    "063100277": ("Bank of America", "Tampa", "FL", "33602"),
    "101000019": ("Commerce Bank", "Kansas City", "MO", "64106"),
    "021000089": ("Citibank", "New York", "NY", "10043"),
}


@dataclass(frozen=True, slots=True)
class CardRoute:
    """A row of the card range table: the answer to a route check for these cards."""

    prefixes: tuple[str, ...]
    brand: str
    supported: bool
    reachable: bool
    max_amount: int


#: Card ranges, most specific first: the first row with a prefix of the card number answers.
CARD_RANGES: tuple[CardRoute, ...] = (
    CardRoute(("400000",), "Visa", True, False, 5_000_000),
    CardRoute(("4",), "Visa", True, True, 5_000_000),
    CardRoute(tuple(str(p) for p in range(51, 56))
              + tuple(str(p) for p in range(2221, 2721)), "Mastercard", True, True, 2_500_000),
    CardRoute(("6011", "65"), "Discover", True, True, 1_000_000),
    CardRoute(("34", "37"), "American Express", False, False, 0),
)
_UNKNOWN_CARD = CardRoute((), "Unknown", False, False, 0)


def card_route(card_number: str) -> CardRoute:
    """The route-check answer for a (valid) card number."""
    return next((r for r in CARD_RANGES if card_number.startswith(r.prefixes)), _UNKNOWN_CARD)


def token_route(token_id: str) -> CardRoute:
    """The route-check answer for a token: ids starting ``tok_unsupported`` are not
    supported, ``tok_unreachable`` not reachable; any other token is a Visa card."""
    if token_id.startswith("tok_unsupported"):
        return _UNKNOWN_CARD
    if token_id.startswith("tok_unreachable"):
        return CARD_RANGES[0]
    return CARD_RANGES[1]


#: Instant amounts whose last two digits are a key fail with that card response code.
CARD_FAILURES: dict[int, tuple[str, str]] = {
    51: ("51", "Insufficient funds"),
    5: ("05", "Do not honor"),
    14: ("14", "Invalid card number"),
}


def card_outcome(amount: int) -> tuple[str, str, str]:
    """``(status, statusCode, statusDescription)`` of an instant card payment."""
    failure = CARD_FAILURES.get(amount % 100)
    return ("Failed", *failure) if failure else ("Success", "00", "Approved")


@dataclass(frozen=True, slots=True)
class RtpBank:
    """A row of the RTP table: a routing number that answers a route inquiry."""

    routing_number: str
    bank_name: str
    reachable: bool
    max_amount: int


#: RTP-enabled routing numbers. Any other valid routing number is not supported.
RTP_BANKS: dict[str, RtpBank] = {b.routing_number: b for b in (
    RtpBank("021000021", "JPMorgan Chase Bank", True, 100_000_000),
    RtpBank("026009593", "Bank of America", True, 100_000_000),
    RtpBank("121000248", "Wells Fargo Bank", True, 100_000_000),
    RtpBank("011000138", "Bank of America (New England)", False, 100_000_000),
    RtpBank("031176110", "Capital One", True, 2_500_000),
    RtpBank("111000025", "Federal Reserve Bank (test)", True, 500_000),
)}

#: RTP payments to accounts starting with this prefix fail as blocked (as ACH items to
#: them are blocked, :attr:`paynb.sandbox.processing.Config.blocked_account_prefix`).
BLOCKED_ACCOUNT_PREFIX = "999"

#: RTP amounts whose last two digits are a key fail with that ISO 20022 reason code.
RTP_FAILURES: dict[int, tuple[str, str]] = {
    4: ("AC04", "Closed account number"),
    3: ("AC03", "Invalid creditor account number"),
    51: ("AM04", "Insufficient funds"),
}


def rtp_outcome(amount: int, account_number: str) -> tuple[str, str, str]:
    """``(status, statusCode, statusDescription)`` of an instant RTP payment."""
    if account_number.startswith(BLOCKED_ACCOUNT_PREFIX):
        return "Failed", "AC06", "Blocked account"
    failure = RTP_FAILURES.get(amount % 100)
    return ("Failed", *failure) if failure else ("Success", "ACSC",
                                                 "Accepted, settlement completed")
