"""Demo data, deterministic from a seed.

``seed_demo(store, items=N, seed=S)`` stores N ACH items received over the
180 days before today (UTC), N/5 RCC items, N/20 instant card and N/20 instant
RTP payments, split 80/20 between DEMO1 and DEMO2. The same ``(N, S)`` on the
same day gives the same data. Fates follow the tables of
:mod:`paynb.sandbox.rules`, so returns, invalid and blocked items and NOCs
appear at the documented rates; events still in the future happen as the
sandbox clock reaches them. Columns are drawn with numpy, a million items in
seconds.
"""

from __future__ import annotations

import logging
import time
import uuid
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from paynb.codes import RETURN_CODES
from paynb.sandbox import rules
from paynb.sandbox.store import Store

__all__ = ["COMPANIES", "HISTORY_DAYS", "seed_demo"]

logger = logging.getLogger("paynb.sandbox")

HISTORY_DAYS = 180
#: Companies of the demo data and the share of items each gets.
COMPANIES = (("DEMO1", 0.8), ("DEMO2", 0.2))

_FIRST = ("James Mary Robert Patricia John Jennifer Michael Linda David Elizabeth William "
          "Barbara Richard Susan Joseph Jessica Thomas Sarah Carlos Maria Wei Aisha Omar "
          "Priya Hiroshi Olga Kwame Fatima Liam Emma Noah Olivia Mateo Sofia Lucas Ava").split()
_LAST = ("Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Martinez Hernandez "
         "Lopez Gonzalez Wilson Anderson Thomas Taylor Moore Jackson Martin Lee Perez Thompson "
         "White Harris Clark Lewis Robinson Walker Young Allen King Wright Scott Nguyen Patel "
         "Kim Chen Okafor Schmidt").split()
_CITIES = ("Springfield Riverside Franklin Greenville Bristol Clinton Fairview Salem Madison "
           "Georgetown Arlington Ashland Dover Oxford Jackson Burlington Manchester").split()
_STREETS = "Main Oak Pine Maple Cedar Elm Washington Lake Hill Park".split()
# Common states many times over (a rough population weighting), then the rest once;
# restricted codes come from their own small share so I items stay rare.
_STATES = (["CA"] * 12 + ["TX"] * 9 + ["FL"] * 7 + ["NY"] * 6 + ["PA", "IL", "OH"] * 4
           + ["GA", "NC", "MI", "NJ", "VA", "WA", "AZ", "MA", "TN", "IN"] * 2
           + "AL AK AR CO CT DE DC HI ID IA KS KY LA ME MD MN MS MO MT NE NV NH NM ND OK OR "
             "RI SC SD UT VT WV WI WY PR".split())
_RESTRICTED_SHARE = 0.004
_BLOCKED_SHARE = 0.003
_ROUTING = ("021000021 026009593 121000248 011000138 031176110 111000025 122000247 061000052 "
            "071000013 091000019 044000037 053000196 021200339 011401533 256074974 322271627 "
            "031000503 063100277 101000019 021000089").split()
_RTP_ROUTING = [b.routing_number for b in rules.RTP_BANKS.values() if b.reachable]
_ENTRY_CLASSES = ["PPD"] * 16 + ["CCD", "CCD", "WEB", "TEL"]
_MAX_CENTS = 9_999_999_999


class _Draw:
    """Column draws of one table from its own seeded stream."""

    def __init__(self, seed: int, table: str, count: int, start: int, span: int):
        self.rng = np.random.default_rng([seed, zlib.crc32(table.encode())])
        self.count = count
        self.received = np.sort(start + (self.rng.random(count) * span).astype(np.int64))
        first = self.rng.random(count) < COMPANIES[0][1]
        self.company = np.where(first, COMPANIES[0][0], COMPANIES[1][0]).tolist()
        self.seq = np.where(first, np.cumsum(first), np.cumsum(~first)).tolist()

    def uniform(self) -> np.ndarray:
        return self.rng.random(self.count)

    def pick(self, values: list[str], share: float = 1.0) -> list[Any]:
        """A value from ``values`` per row, or None for all but ``share`` of the rows."""
        chosen = np.array(values, dtype=object)[self.rng.integers(0, len(values), self.count)]
        if share < 1:
            chosen[self.uniform() >= share] = None
        return chosen.tolist()

    def cents(self, mean_log: float, sigma: float) -> np.ndarray:
        amounts = self.rng.lognormal(mean_log, sigma, self.count).astype(np.int64) + 1
        return np.minimum(amounts, _MAX_CENTS)

    def states(self) -> np.ndarray:
        states = np.array(_STATES, dtype=object)[self.rng.integers(0, len(_STATES), self.count)]
        restricted = sorted(rules.RESTRICTED_STATES)
        rare = self.uniform() < _RESTRICTED_SHARE
        states[rare] = np.array(restricted, dtype=object)[
            self.rng.integers(0, len(restricted), int(rare.sum()))]
        return states

    def accounts(self) -> list[str]:
        numbers = self.rng.integers(10**7, 10**12, self.count)
        blocked = self.uniform() < _BLOCKED_SHARE
        numbers[blocked] = numbers[blocked] % 10**9
        return [rules.BLOCKED_ACCOUNT_PREFIX + str(n) if b else str(n)
                for n, b in zip(numbers.tolist(), blocked.tolist(), strict=True)]

    def references(self, label: str) -> list[str]:
        return [f"{c}-{label}-{s:07d}" for c, s in zip(self.company, self.seq, strict=True)]

    def zips(self, extension_share: float, separator: str) -> list[str]:
        five = self.rng.integers(501, 99951, self.count).tolist()
        four = self.rng.integers(0, 10000, self.count).tolist()
        extended = (self.uniform() < extension_share).tolist()
        return [f"{a:05d}{separator}{b:04d}" if e else f"{a:05d}"
                for a, b, e in zip(five, four, extended, strict=True)]

    def unique_ids(self) -> list[str]:
        raw = self.rng.integers(0, 2**63, (self.count, 2), dtype=np.int64)
        return [str(uuid.UUID(int=(a << 64) | b, version=4)) for a, b in raw.tolist()]


_FATE_COLUMNS = ("_fate_status", "_fate_at", "_fate_code", "_fate_message")
Sparse = tuple[tuple[str, ...], list[tuple[Any, ...]]]


def _fates(d: _Draw, first_id: int, states: np.ndarray, accounts: list[str],
           rate: np.ndarray | float, send: np.ndarray, days: tuple[int, int]
           ) -> tuple[np.ndarray, Sparse]:
    """Vectorised :func:`rules.ach_fate` / :func:`rules.rcc_fate`.

    Returns the mask of items that stay eligible for a NOC (no fate, or a
    return), and the fate columns of the few items that have one, by id:
    loading those apart keeps the bulk insert narrow.
    """
    u_rate, u_code, u_delay = d.uniform(), d.uniform(), d.uniform()
    restricted = np.isin(states, list(rules.RESTRICTED_STATES))
    blocked = ~restricted & np.array([rules.is_blocked_account(a) for a in accounts], dtype=bool)
    returned = ~restricted & ~blocked & (u_rate < rate)
    codes, edges = rules.RETURN_TABLE
    code = np.array(codes, dtype=object)[np.minimum(
        np.searchsorted(edges, u_code, side="right"), len(codes) - 1)]
    at = np.where(returned, send + rules.return_delay(u_delay, days).astype(np.int64),
                  d.received + rules.PROCESSING_DELAY_MS)
    fated = np.flatnonzero(restricted | blocked | returned)
    rows = []
    for i, is_i, is_b, when, c in zip(fated.tolist(), restricted[fated].tolist(),
                                      blocked[fated].tolist(), at[fated].tolist(),
                                      code[fated].tolist(), strict=True):
        if is_i:
            rows.append(("I", when, None, rules.RESTRICTED_MESSAGE, first_id + i))
        elif is_b:
            rows.append(("B", when, None, rules.BLOCKED_MESSAGE, first_id + i))
        else:
            rows.append(("R", when, c, RETURN_CODES[c], first_id + i))
    return ~(restricted | blocked), (_FATE_COLUMNS, rows)


_ACH_COLUMNS = (
    "achItemId", "companyCode", "_seq", "yourReferenceNumber", "firstSignerFirstName",
    "firstSignerLastName", "state", "zip", "bankRoutingNumber", "bankAccountNumber", "amount",
    "achAccountType", "achTransactionType", "achTransactionSubType", "achEntryClass",
    "receivedDateTime", "sendDate", "settleDate")


def _ach_rows(d: _Draw, first_id: int) -> tuple[Iterator[tuple[Any, ...]], list[Sparse]]:
    u = d.uniform()
    kind = np.where(u < 0.60, 0, np.where(u < 0.95, 1, 2))  # Debit, Credit, Prenote
    amount = np.where(kind == 2, 0, d.cents(10.3, 1.1))
    states, accounts = d.states(), d.accounts()
    send = d.received - d.received % rules.DAY_MS + rules.DAY_MS
    rates = np.array([rules.ACH_RETURN_RATES[k] for k in ("Debit", "Credit", "Prenote")])
    eligible, fates = _fates(d, first_id, states, accounts, rates[kind], send,
                             rules.ACH_RETURN_DAYS)
    with_noc = np.flatnonzero(eligible & (d.uniform() < rules.NOC_RATE))
    noc_codes, noc_edges = rules.NOC_TABLE
    picks = np.searchsorted(noc_edges, d.uniform()[with_noc], side="right").tolist()
    nocs = [(int(send[i]) + 2 * rules.DAY_MS, noc_codes[min(p, len(noc_codes) - 1)],
             first_id + i) for i, p in zip(with_noc.tolist(), picks, strict=True)]
    rows = zip(
        range(first_id, first_id + d.count), d.company, d.seq, d.references("ACH"),
        d.pick(_FIRST), d.pick(_LAST), states.tolist(), d.zips(0.1, "-"), d.pick(_ROUTING),
        accounts, amount.tolist(), np.where(d.uniform() < 0.85, "Checking", "Savings").tolist(),
        np.array(["Debit", "Credit", "Debit"], dtype=object)[kind].tolist(),
        np.where(kind == 2, "Prenote", None).tolist(), d.pick(_ENTRY_CLASSES),
        d.received.tolist(), send.tolist(), (send + rules.DAY_MS).tolist(), strict=True)
    return rows, [fates, (("_noc_at", "_noc_code"), nocs)]


_RCC_COLUMNS = (
    "rccItemId", "companyCode", "_seq", "yourReferenceNumber", "firstSignerFirstName",
    "firstSignerLastName", "secondSignerFirstName", "secondSignerLastName", "address1",
    "address2", "city", "state", "zip", "bankRoutingNumber", "bankAccountNumber", "amount",
    "receivedDateTime", "depositDateTime")


def _rcc_rows(d: _Draw, first_id: int) -> tuple[Iterator[tuple[Any, ...]], list[Sparse]]:
    states, accounts = d.states(), d.accounts()
    deposit = d.received - d.received % rules.DAY_MS + rules.DAY_MS
    _, fates = _fates(d, first_id, states, accounts, rules.RCC_RETURN_RATE, deposit,
                      rules.RCC_RETURN_DAYS)
    numbers = d.rng.integers(1, 9999, d.count).tolist()
    streets = d.pick(_STREETS)
    apartments = d.rng.integers(1, 400, d.count).tolist()
    has_apartment = (d.uniform() < 0.2).tolist()
    second = d.uniform() < 0.3
    rows = zip(
        range(first_id, first_id + d.count), d.company, d.seq, d.references("RCC"),
        d.pick(_FIRST), d.pick(_LAST), d.pick(_FIRST, 0.3),
        np.where(second, np.array(d.pick(_LAST), dtype=object), None).tolist(),
        [f"{n} {s} St" for n, s in zip(numbers, streets, strict=True)],
        [f"Apt {a}" if h else None for a, h in zip(apartments, has_apartment, strict=True)],
        d.pick(_CITIES), states.tolist(), d.zips(0.3, " "), d.pick(_ROUTING), accounts,
        d.cents(10.0, 1.0).tolist(), d.received.tolist(), deposit.tolist(), strict=True)
    return rows, [fates]


_INSTANT_COLUMNS = (
    "_id", "uniqueId", "companyCode", "_seq", "yourReferenceNumber", "nameOnCard", "cardBrand",
    "cardLastFour", "amount", "status", "statusCode", "statusDescription", "receivedDateTime",
    "completedDateTime")


def _instant_rows(d: _Draw, first_id: int) -> tuple[Iterator[tuple[Any, ...]], list[Sparse]]:
    amounts = d.rng.integers(100, 500_000, d.count).tolist()
    outcomes = [rules.card_outcome(a) for a in amounts]
    names = [f"{f} {last}".upper() for f, last in zip(d.pick(_FIRST), d.pick(_LAST),
                                                        strict=True)]
    return zip(
        range(first_id, first_id + d.count), d.unique_ids(), d.company, d.seq,
        d.references("IC"), names, d.pick(["Visa"] * 6 + ["Mastercard"] * 3 + ["Discover"]),
        [f"{n:04d}" for n in d.rng.integers(0, 10000, d.count).tolist()], amounts,
        *zip(*outcomes, strict=True), d.received.tolist(),
        (d.received + d.rng.integers(300, 4000, d.count)).tolist(), strict=True), []


_RTP_COLUMNS = (
    "_id", "uniqueId", "companyCode", "_seq", "yourReferenceNumber", "name", "firstName",
    "lastName", "routingNumber", "accountNumber", "amount", "status", "statusCode",
    "statusDescription", "receivedDateTime", "completedDateTime")


def _rtp_rows(d: _Draw, first_id: int) -> tuple[Iterator[tuple[Any, ...]], list[Sparse]]:
    first, last, accounts = d.pick(_FIRST), d.pick(_LAST), d.accounts()
    amounts = d.rng.integers(100, 2_000_000, d.count).tolist()
    outcomes = [rules.rtp_outcome(a, n) for a, n in zip(amounts, accounts, strict=True)]
    return zip(
        range(first_id, first_id + d.count), d.unique_ids(), d.company, d.seq,
        d.references("RTP"), [f"{f} {n}" for f, n in zip(first, last, strict=True)], first,
        last, d.pick(_RTP_ROUTING), accounts, amounts, *zip(*outcomes, strict=True),
        d.received.tolist(), (d.received + d.rng.integers(200, 2000, d.count)).tolist(),
        strict=True), []


def seed_demo(store: Store, *, items: int, seed: int | None = None) -> None:
    """Store the demo data set (see the module docstring) in an empty store."""
    if items <= 0:
        return
    began = time.perf_counter()
    seed = store.seed if seed is None else seed
    today = rules.day_start(store.now())
    start, span = today - HISTORY_DAYS * rules.DAY_MS, HISTORY_DAYS * rules.DAY_MS
    plan = (("ach", _ACH_COLUMNS, _ach_rows, items),
            ("rcc", _RCC_COLUMNS, _rcc_rows, items // 5),
            ("instant", _INSTANT_COLUMNS, _instant_rows, items // 20),
            ("rtp", _RTP_COLUMNS, _rtp_rows, items // 20))
    with store.bulk_mode():
        for kind, columns, rows, count in plan:
            if count:
                base, sparse = rows(_Draw(seed, kind, count, start, span), 1)
                store.load(kind, columns, base)
                for names, values in sparse:
                    store.update_many(kind, names, values)
    store.process()
    logger.info("seeded %d ACH items (seed %d) in %.1f s", items, seed,
                time.perf_counter() - began)
