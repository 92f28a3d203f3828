"""The sandbox's business rules and tables, in one place.

Everything a user needs to predict the sandbox is a constant or a small pure
function here, and ``docs/sandbox.md`` describes the same tables. The field
rules of request bodies are not here: they live in :mod:`paynb.validation`
and :mod:`paynb.models`, shared with the client and the forms.

Draws are uniform numbers in ``[0, 1)``. Items submitted over HTTP take their
draws from a hash of ``(seed, table, item id)`` (:func:`draws`), so the same
requests against the same seed give the same outcomes; the demo generator
takes them from its own seeded random stream.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import struct
from dataclasses import dataclass
from typing import Any

from paynb.codes import RETURN_CODES

__all__ = [
    "ACH_RETURN_DAYS",
    "ACH_RETURN_RATES",
    "CARD_FAILURES",
    "RTP_FAILURES",
    "BLOCKED_ACCOUNT_PREFIX",
    "BLOCKED_MESSAGE",
    "CARD_RANGES",
    "DAY_MS",
    "HOUR_MS",
    "NOC_CODE_WEIGHTS",
    "NOC_RATE",
    "PROCESSING_DELAY_MS",
    "NOC_TABLE",
    "RCC_RETURN_DAYS",
    "RCC_RETURN_RATE",
    "RESTRICTED_MESSAGE",
    "RESTRICTED_STATES",
    "RETURN_TABLE",
    "RETURN_CODE_WEIGHTS",
    "ROUTE_CHECK_VALID_MS",
    "RTP_BANKS",
    "CardRoute",
    "Fate",
    "RtpBank",
    "ach_fate",
    "card_outcome",
    "card_route",
    "day_start",
    "draws",
    "is_blocked_account",
    "noc_corrected_data",
    "noc_for",
    "pick_noc_code",
    "pick_return_code",
    "rcc_fate",
    "return_delay",
    "rtp_outcome",
    "token_route",
]

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS

#: Business processing (state and account checks) runs this long after receipt.
PROCESSING_DELAY_MS = HOUR_MS

#: Items for these state codes pass validation but are invalidated (I) by
#: business processing: territories and military codes the demo companies do
#: not serve (PR and DC are served).
RESTRICTED_STATES: frozenset[str] = frozenset({"AS", "GU", "MP", "VI", "AA", "AE", "AP"})

#: Account numbers starting with this prefix are blocked (B) by business processing.
BLOCKED_ACCOUNT_PREFIX = "999"

#: Share of ACH items returned (R), by kind of item.
ACH_RETURN_RATES: dict[str, float] = {"Debit": 0.04, "Credit": 0.01, "Prenote": 0.02}
#: Share of RCC items returned (R) after they were sent (S).
RCC_RETURN_RATE = 0.10
#: Share of ACH items (not invalidated, blocked or voided) that draw a NOC.
NOC_RATE = 0.005

#: How return codes are drawn: code -> weight (percent). Sums to 100.
RETURN_CODE_WEIGHTS: dict[str, float] = {
    "R01": 40, "R02": 12, "R03": 9, "R04": 5, "R05": 1, "R06": 1, "R07": 4, "R08": 4,
    "R09": 3, "R10": 6, "R11": 2, "R12": 0.5, "R13": 0.5, "R14": 0.5, "R15": 1, "R16": 2,
    "R17": 1, "R18": 0.5, "R19": 0.5, "R20": 2, "R21": 0.5, "R22": 0.5, "R23": 0.5,
    "R24": 0.5, "R25": 0.5, "R26": 0.5, "R27": 0.5, "R28": 0.5, "R29": 0.5,
}
#: How NOC change codes are drawn: code -> weight (percent). Sums to 100.
NOC_CODE_WEIGHTS: dict[str, float] = {
    "C01": 40, "C02": 15, "C03": 10, "C04": 8, "C05": 8, "C06": 5, "C07": 4, "C08": 1,
    "C09": 4, "C10": 2, "C11": 1, "C12": 1, "C13": 1,
}

#: A successful route check allows sends to that card, token or routing number this long.
ROUTE_CHECK_VALID_MS = 15 * 60_000


def _cumulative(weights: dict[str, float]) -> tuple[list[str], list[float]]:
    total = sum(weights.values())
    return list(weights), [c / total for c in itertools.accumulate(weights.values())]


#: ``(codes, cumulative shares)``: a draw ``u`` selects the first code whose share exceeds it.
RETURN_TABLE = _cumulative(RETURN_CODE_WEIGHTS)
NOC_TABLE = _cumulative(NOC_CODE_WEIGHTS)

#: Returns happen this many days after the send date: ``(first day, number of days)``.
ACH_RETURN_DAYS = (1, 4)
RCC_RETURN_DAYS = (2, 6)


def _pick(table: tuple[list[str], list[float]], u: float) -> str:
    codes, edges = table
    return codes[min(bisect.bisect_right(edges, u), len(codes) - 1)]


def pick_return_code(u: float) -> str:
    """The return code a draw ``u`` selects, by :data:`RETURN_CODE_WEIGHTS`."""
    return _pick(RETURN_TABLE, u)


def pick_noc_code(u: float) -> str:
    """The NOC change code a draw ``u`` selects, by :data:`NOC_CODE_WEIGHTS`."""
    return _pick(NOC_TABLE, u)


def return_delay(u: Any, days: tuple[int, int]) -> Any:
    """Milliseconds from the send date to a return, from one draw ``u``: a whole day
    in ``days`` plus up to eight hours. Works on a float or a numpy array alike."""
    first, span = days
    return (first + (u * span) // 1) * DAY_MS + ((u * 1000) % 1 * 8 * HOUR_MS) // 1


def draws(seed: int, table: str, item_id: int, count: int = 4) -> list[float]:
    """``count`` uniform draws for one item, fixed by the seed, the table and the id."""
    digest = hashlib.blake2b(f"{seed}:{table}:{item_id}".encode(), digest_size=8 * count).digest()
    return [n / 2**64 for n in struct.unpack(f">{count}Q", digest)]


def day_start(ms: int) -> int:
    """Midnight UTC of the day holding ``ms`` (epoch milliseconds)."""
    return ms - ms % DAY_MS


def is_blocked_account(account_number: str) -> bool:
    """True when business processing blocks this account (see :data:`BLOCKED_ACCOUNT_PREFIX`)."""
    return account_number.startswith(BLOCKED_ACCOUNT_PREFIX)


@dataclass(frozen=True, slots=True)
class Fate:
    """What business processing will do to an item: its final status, when, and why."""

    status: str
    at: int
    code: str | None
    message: str


RESTRICTED_MESSAGE = "State is restricted for this company"
BLOCKED_MESSAGE = "Account is blocked"


def _invalid_or_blocked(state: str, account: str, received: int) -> Fate | None:
    if state in RESTRICTED_STATES:
        return Fate("I", received + PROCESSING_DELAY_MS, None, RESTRICTED_MESSAGE)
    if is_blocked_account(account):
        return Fate("B", received + PROCESSING_DELAY_MS, None, BLOCKED_MESSAGE)
    return None


def _returned(rate: float, u_rate: float, u_code: float, at: int) -> Fate | None:
    if u_rate >= rate:
        return None
    code = pick_return_code(u_code)
    return Fate("R", at, code, RETURN_CODES[code])


def ach_fate(*, state: str, account: str, kind: str, received: int, send: int,
             u: list[float]) -> Fate | None:
    """The fate of an ACH item; ``kind`` is Debit, Credit or Prenote; ``u`` holds 3 draws.

    Restricted state -> I, blocked account -> B (an hour after receipt); else a
    return with probability :data:`ACH_RETURN_RATES` one to four days after the send date.
    """
    fate = _invalid_or_blocked(state, account, received)
    if fate:
        return fate
    delay = int(return_delay(u[2], ACH_RETURN_DAYS))
    return _returned(ACH_RETURN_RATES[kind], u[0], u[1], send + delay)


def rcc_fate(*, state: str, account: str, received: int, send: int,
             u: list[float]) -> Fate | None:
    """The fate of an RCC item (3 draws): I or B as ACH, else returned (R) from S
    with probability :data:`RCC_RETURN_RATE` two to seven days after it was deposited."""
    fate = _invalid_or_blocked(state, account, received)
    if fate:
        return fate
    delay = int(return_delay(u[2], RCC_RETURN_DAYS))
    return _returned(RCC_RETURN_RATE, u[0], u[1], send + delay)


def noc_for(u_rate: float, u_code: float) -> str | None:
    """The NOC change code an item draws, or None (probability :data:`NOC_RATE`)."""
    return pick_noc_code(u_code) if u_rate < NOC_RATE else None


# -- instant card routes --------------------------------------------------------------


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
    for route in CARD_RANGES:
        if card_number.startswith(route.prefixes):
            return route
    return _UNKNOWN_CARD


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
    if failure:
        return ("Failed", *failure)
    return "Success", "00", "Approved"


# -- instant RTP routes ---------------------------------------------------------------


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

#: RTP amounts whose last two digits are a key fail with that ISO 20022 reason code.
RTP_FAILURES: dict[int, tuple[str, str]] = {
    4: ("AC04", "Closed account number"),
    3: ("AC03", "Invalid creditor account number"),
    51: ("AM04", "Insufficient funds"),
}


def rtp_outcome(amount: int, account_number: str) -> tuple[str, str, str]:
    """``(status, statusCode, statusDescription)`` of an instant RTP payment."""
    if is_blocked_account(account_number):
        return "Failed", "AC06", "Blocked account"
    failure = RTP_FAILURES.get(amount % 100)
    if failure:
        return ("Failed", *failure)
    return "Success", "ACSC", "Accepted, settlement completed"



def noc_corrected_data(code: str, u: float) -> str:
    """The corrected data a NOC of ``code`` carries (synthetic, fixed by the draw ``u``)."""
    account = f"{int(u * 10**10):010d}"
    routing = list(RTP_BANKS)[int(u * len(RTP_BANKS))]
    return {
        "C01": account,
        "C02": routing,
        "C03": f"{routing} {account}",
        "C04": "DOE JANE",
        "C05": "32",
        "C06": f"{account} 32",
        "C07": f"{routing} {account} 27",
        "C09": f"ID{account[:6]}",
        "C10": "ACME PAYROLL",
        "C11": f"1{account[:9]}",
        "C12": f"ACME PAYROLL 1{account[:9]}",
    }.get(code, "")
