"""Demo data, deterministic from a seed.

``seed_demo(store, items=N, seed=S)`` stores N ACH items received over the
180 days before today (UTC), N/5 RCC items, N/20 instant card and N/20 instant
RTP payments, split 80/20 between DEMO1 and DEMO2. The same ``(N, S)`` on the
same day gives the same data. Fates follow :mod:`paynb.sandbox.rules`, so
returns, invalid and blocked items and NOCs appear at the documented rates;
events still in the future happen as the sandbox clock reaches them.
"""

from __future__ import annotations

import logging
import random
import time
import uuid
from typing import Any

from paynb.sandbox import rules
from paynb.sandbox.store import Store

__all__ = ["HISTORY_DAYS", "seed_demo"]

logger = logging.getLogger("paynb.sandbox")

HISTORY_DAYS = 180
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
_RESTRICTED = sorted(rules.RESTRICTED_STATES)
_RESTRICTED_SHARE = 0.004
_BLOCKED_SHARE = 0.003
_ROUTING = ("021000021 026009593 121000248 011000138 031176110 111000025 122000247 061000052 "
            "071000013 091000019 044000037 053000196 021200339 011401533 256074974 322271627 "
            "031000503 063100277 101000019 021000089").split()
_RTP_ROUTING = [b.routing_number for b in rules.RTP_BANKS.values() if b.reachable]
_ENTRY_CLASSES = ["PPD"] * 16 + ["CCD", "CCD", "WEB", "TEL"]


def _account(r: random.Random) -> str:
    if r.random() < _BLOCKED_SHARE:
        return rules.BLOCKED_ACCOUNT_PREFIX + str(r.randrange(10**6, 10**9))
    return str(r.randrange(10**7, 10**12))


def _state(r: random.Random) -> str:
    if r.random() < _RESTRICTED_SHARE:
        return r.choice(_RESTRICTED)
    return r.choice(_STATES)


def _times(r: random.Random, count: int, start: int, span: int) -> list[int]:
    return sorted(start + int(r.random() * span) for _ in range(count))


def _company_seqs(r: random.Random, count: int) -> list[tuple[str, int]]:
    seqs = dict.fromkeys((c for c, _ in COMPANIES), 0)
    out = []
    for _ in range(count):
        company = COMPANIES[0][0] if r.random() < COMPANIES[0][1] else COMPANIES[1][0]
        seqs[company] += 1
        out.append((company, seqs[company]))
    return out


def _fate_values(fate: rules.Fate | None) -> tuple[Any, ...]:
    return (fate.status, fate.at, fate.code, fate.message) if fate else (None,) * 4


_ACH_COLUMNS = (
    "achItemId", "companyCode", "_seq", "yourReferenceNumber", "firstSignerFirstName",
    "firstSignerLastName", "state", "zip", "bankRoutingNumber", "bankAccountNumber", "amount",
    "achAccountType", "achTransactionType", "achTransactionSubType", "achEntryClass",
    "itemStatus", "receivedDateTime", "sendDate", "settleDate", "_fate_status", "_fate_at",
    "_fate_code", "_fate_message", "_noc_at", "_noc_code")


def _ach_rows(r: random.Random, count: int, start: int, span: int, first_id: int):
    rnd = r.random
    for offset, (received, (company, seq)) in enumerate(
            zip(_times(r, count, start, span), _company_seqs(r, count), strict=True)):
        u = rnd()
        if u < 0.60:
            kind, txn, sub = "Debit", "Debit", None
        elif u < 0.95:
            kind, txn, sub = "Credit", "Credit", None
        else:
            kind, txn, sub = "Prenote", "Debit", "Prenote"
        amount = 0 if sub else min(int(r.lognormvariate(10.3, 1.1)) + 1, 9_999_999_999)
        state, account = _state(r), _account(r)
        send = received - received % rules.DAY_MS + rules.DAY_MS
        fate = rules.ach_fate(state=state, account=account, kind=kind, received=received,
                              send=send, u=[rnd(), rnd(), rnd()])
        noc = rules.noc_for(rnd(), rnd()) if fate is None or fate.status == "R" else None
        yield (first_id + offset, company, seq, f"{company}-ACH-{seq:07d}", r.choice(_FIRST),
               r.choice(_LAST), state, f"{r.randrange(501, 99951):05d}", r.choice(_ROUTING),
               account, amount, "Checking" if rnd() < 0.85 else "Savings", txn, sub,
               r.choice(_ENTRY_CLASSES), "W", received, send, send + rules.DAY_MS,
               *_fate_values(fate), send + 2 * rules.DAY_MS if noc else None, noc)


_RCC_COLUMNS = (
    "rccItemId", "companyCode", "_seq", "yourReferenceNumber", "firstSignerFirstName",
    "firstSignerLastName", "secondSignerFirstName", "secondSignerLastName", "address1",
    "address2", "city", "state", "zip", "bankRoutingNumber", "bankAccountNumber", "amount",
    "itemStatus", "receivedDateTime", "depositDateTime", "_fate_status", "_fate_at",
    "_fate_code", "_fate_message")


def _rcc_rows(r: random.Random, count: int, start: int, span: int, first_id: int):
    rnd = r.random
    for offset, (received, (company, seq)) in enumerate(
            zip(_times(r, count, start, span), _company_seqs(r, count), strict=True)):
        state, account = _state(r), _account(r)
        deposit = received - received % rules.DAY_MS + rules.DAY_MS
        fate = rules.rcc_fate(state=state, account=account, received=received, send=deposit,
                              u=[rnd(), rnd(), rnd()])
        second = rnd() < 0.3
        yield (first_id + offset, company, seq, f"{company}-RCC-{seq:07d}", r.choice(_FIRST),
               r.choice(_LAST), r.choice(_FIRST) if second else None,
               r.choice(_LAST) if second else None,
               f"{r.randrange(1, 9999)} {r.choice(_STREETS)} St",
               f"Apt {r.randrange(1, 400)}" if rnd() < 0.2 else None, r.choice(_CITIES), state,
               f"{r.randrange(501, 99951):05d}" + (f" {r.randrange(10000):04d}"
                                                   if rnd() < 0.3 else ""),
               r.choice(_ROUTING), account, min(int(r.lognormvariate(10.0, 1.0)) + 1,
                                                9_999_999_999),
               "W", received, deposit, *_fate_values(fate))


_INSTANT_COLUMNS = (
    "_id", "uniqueId", "companyCode", "_seq", "yourReferenceNumber", "nameOnCard", "cardBrand",
    "cardLastFour", "amount", "status", "statusCode", "statusDescription", "receivedDateTime",
    "completedDateTime")


def _instant_rows(r: random.Random, count: int, start: int, span: int, first_id: int):
    brands = ["Visa"] * 6 + ["Mastercard"] * 3 + ["Discover"]
    for offset, (received, (company, seq)) in enumerate(
            zip(_times(r, count, start, span), _company_seqs(r, count), strict=True)):
        amount = r.randrange(100, 500_000)
        outcome = rules.card_outcome(amount)
        yield (first_id + offset, str(uuid.UUID(int=r.getrandbits(128), version=4)), company,
               seq, f"{company}-IC-{seq:07d}",
               f"{r.choice(_FIRST)} {r.choice(_LAST)}".upper(), r.choice(brands),
               f"{r.randrange(10000):04d}", amount, *outcome, received,
               received + r.randrange(300, 4000))


_RTP_COLUMNS = (
    "_id", "uniqueId", "companyCode", "_seq", "yourReferenceNumber", "name", "firstName",
    "lastName", "routingNumber", "accountNumber", "amount", "status", "statusCode",
    "statusDescription", "receivedDateTime", "completedDateTime")


def _rtp_rows(r: random.Random, count: int, start: int, span: int, first_id: int):
    for offset, (received, (company, seq)) in enumerate(
            zip(_times(r, count, start, span), _company_seqs(r, count), strict=True)):
        first, last = r.choice(_FIRST), r.choice(_LAST)
        account = _account(r)
        amount = r.randrange(100, 2_000_000)
        yield (first_id + offset, str(uuid.UUID(int=r.getrandbits(128), version=4)), company,
               seq, f"{company}-RTP-{seq:07d}", f"{first} {last}", first, last,
               r.choice(_RTP_ROUTING), account, amount, *rules.rtp_outcome(amount, account),
               received, received + r.randrange(200, 2000))


def seed_demo(store: Store, *, items: int, seed: int | None = None) -> None:
    """Store the demo data set (see the module docstring); an empty store is expected."""
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
                r = random.Random(f"{seed}:{kind}")
                store.load(kind, columns, rows(r, count, start, span, 1))
    store.process()
    logger.info("seeded %d ACH items (seed %d) in %.1f s", items, seed,
                time.perf_counter() - began)
