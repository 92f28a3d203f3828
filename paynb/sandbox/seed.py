"""Demo data, deterministic from a seed (docs/sandbox.md, "Demo data").

``seed_demo(store, items=N, seed=S)`` stores N ACH items received over the 180 days before
today (UTC) and today until the last full hour, N/5 RCC items, N/20 instant card and N/20
instant RTP payments, split 80/20 between DEMO1 and DEMO2; the same ``(N, S)`` within the
same hour gives the same data. Fates follow :mod:`paynb.sandbox.rules` and
:mod:`paynb.sandbox.processing`; columns are drawn with numpy, a million items in seconds.
After the NOCs already due come the entries the originator sent next (:data:`NOC_OUTCOMES`).
"""

from __future__ import annotations

import logging
import time
import uuid
import zlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from paynb.calendar import BUSDAY_CALENDAR
from paynb.codes import NOC_CODE_TABLE
from paynb.sandbox import items as items_
from paynb.sandbox import processing, rules, scenarios
from paynb.sandbox.queries import ListQuery
from paynb.sandbox.store import Store
from paynb.sandbox.wire import parse_timestamp

__all__ = ["COMPANIES", "HISTORY_DAYS", "NOC_OUTCOMES", "seed_demo"]

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
_ROUTING = list(rules.BANKS)
_RTP_ROUTING = [b.routing_number for b in rules.RTP_BANKS.values() if b.reachable]
_ENTRY_CLASSES = ["PPD"] * 16 + ["CCD", "CCD", "WEB", "TEL"]
_MAX_CENTS = 9_999_999_999
_COMPANY_FIELDS = {company: rules.company_fields(company) for company, _ in COMPANIES}


class _Draw:
    """Column draws of one table from its own seeded stream."""

    def __init__(self, seed: int, table: str, count: int, start: int, span: int,
                 config: processing.Config):
        self.config = config
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
        restricted = sorted(self.config.restricted_states)
        rare = self.uniform() < _RESTRICTED_SHARE
        states[rare] = np.array(restricted, dtype=object)[
            self.rng.integers(0, len(restricted), int(rare.sum()))]
        return states

    def accounts(self) -> list[str]:
        numbers = self.rng.integers(10**7, 10**12, self.count)
        blocked = self.uniform() < _BLOCKED_SHARE
        numbers[blocked] = numbers[blocked] % 10**9
        prefix = self.config.blocked_account_prefix
        return [prefix + str(n) if b else str(n)
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

#: The compliance scenario: DEMO2's debits are also returned unauthorized (R05, R07,
#: R10, R11, R29) with this probability, rising over the demo period as
#: ``(share of the period, probability)`` points, so DEMO2's unauthorized return rate
#: crosses NACHA's 0.4 % warning level and then its 0.5 % threshold (docs/sandbox.md).
UNAUTHORIZED_RAMP = ((0.0, 0.0), (0.15, 0.0), (0.25, 0.0025), (0.5, 0.0025), (0.6, 0.006),
                     (1.0, 0.006))
RAMP_COMPANY = "DEMO2"

_SOURCES = ["API"] * 17 + ["Portal", "Portal", "File"]
_DESCRIPTIONS = {"Debit": "PAYMENT", "Credit": "PAYROLL", "Prenote": "PRENOTE"}


def _batches(seed: int, companies: list[str], days: np.ndarray) -> list[str]:
    """One batch (flexBatchId) per company and day of receipt."""
    keys = list(zip(companies, days.tolist(), strict=True))
    batch = {(company, day): str(uuid.uuid5(uuid.NAMESPACE_URL,
                                             f"paynb-demo:{seed}:{company}:{day}"))
             for company, day in set(keys)}
    return [batch[key] for key in keys]


def _addresses(d: _Draw) -> tuple[list[str], list[str | None], list[str]]:
    numbers = d.rng.integers(1, 9999, d.count).tolist()
    streets = d.pick(_STREETS)
    apartments = d.rng.integers(1, 400, d.count).tolist()
    has_apartment = (d.uniform() < 0.2).tolist()
    return ([f"{n} {s} St" for n, s in zip(numbers, streets, strict=True)],
            [f"Apt {a}" if h else None for a, h in zip(apartments, has_apartment, strict=True)],
            d.pick(_CITIES))


_ACH_COLUMNS = (
    "achItemId", "companyCode", "_seq", "flexBatchId", "merchantId", "bankId",
    "yourReferenceNumber", "firstSignerFirstName", "firstSignerLastName", "address1",
    "address2", "city", "state", "zip", "countryCode", "bankRoutingNumber",
    "bankAccountNumber", "amount", "itemSource", "achTransactionCode", "achAccountType",
    "achTransactionType", "achTransactionSubType", "achEntryClass", "achIdentificationNumber",
    "achCompanyEntryDescription", "achAddendaText", "sameDayAchRequested", "receivedDateTime",
    "_send_at", "_settle_at", "_effective_at")


def _ach_rows(d: _Draw, first_id: int, config: processing.Config, seed: int, start: int,
              span: int) -> tuple[Iterator[tuple[Any, ...]], list[Sparse]]:
    u = d.uniform()
    kind = np.where(u < 0.75, 0, np.where(u < 0.95, 1, 2))  # Debit, Credit, Prenote
    kinds = np.array(["Debit", "Credit", "Prenote"], dtype=object)[kind]
    amount = np.where(kind == 2, 0, d.cents(10.3, 1.1))
    states, accounts = d.states(), d.accounts()
    savings = d.uniform() >= 0.85
    same_day = (d.uniform() < 0.03) & (kind != 2)
    plan = processing.schedule(config, d.received, same_day=same_day)
    companies = np.array(d.company, dtype=object)
    u_fates = np.stack([d.uniform() for _ in range(5)])
    rate = np.where((companies == RAMP_COMPANY) & (kind == 0),
                    np.interp((d.received - start) / span, *zip(*UNAUTHORIZED_RAMP, strict=True)),
                    0.0)
    # Quota, not chance: the n-th unauthorized return comes when the ramp's running sum
    # passes n, so every 60-day window holds the ramp's share whatever the seed (a few
    # returns more or less would decide whether DEMO2 crosses the threshold).
    running = np.cumsum(rate)
    u_fates[4] = np.where(np.floor(running) > np.floor(running - rate), 0.0, 1.0)
    fates = processing.ach_fates(
        config, kinds=kinds, states=states, accounts=np.array(accounts, dtype=object),
        received=d.received, settle=plan.settle, u=u_fates, unauthorized_rate=rate)
    ids = np.arange(first_id, first_id + d.count)
    noc_at, noc_code = processing.noc_events(
        config, eligible=np.isin(fates.status, ["", "R"]), settle=plan.settle,
        u=np.stack([d.uniform() for _ in range(3)]))
    with_noc = np.flatnonzero(noc_at >= 0)
    nocs = list(zip(noc_at[with_noc].tolist(), noc_code[with_noc].tolist(),
                    ids[with_noc].tolist(), strict=True))
    # The demo's prenotes are debit prenotes (the service documents prenotes as debits):
    # their code is the debit prenote's, 28 or 38 (NACHA Appendix Three), not 23/33.
    types = np.array(["Debit", "Credit", "Debit"], dtype=object)[kind]
    codes = [items_.transaction_code(t, "Savings" if s else "Checking", k == 2)
             for t, s, k in zip(types.tolist(), savings.tolist(), kind.tolist(), strict=True)]
    address1, address2, cities = _addresses(d)
    identification = [f"CUST{n:06d}" if n % 5 else None
                      for n in d.rng.integers(0, 10**6, d.count).tolist()]
    addenda = [f"INV {n}" if n < 5000 else None
               for n in d.rng.integers(0, 100_000, d.count).tolist()]
    rows = zip(
        ids.tolist(), d.company, d.seq,
        _batches(seed, d.company, d.received // processing.DAY_MS),
        [_COMPANY_FIELDS[c]["merchantId"] for c in d.company],
        [_COMPANY_FIELDS[c]["bankId"] for c in d.company], d.references("ACH"),
        d.pick(_FIRST), d.pick(_LAST), address1, address2, cities, states.tolist(),
        d.zips(0.1, "-"), ["US"] * d.count, d.pick(_ROUTING), accounts, amount.tolist(),
        d.pick(_SOURCES), codes, np.where(savings, "Savings", "Checking").tolist(),
        types.tolist(),
        np.where(kind == 2, "Prenote", np.full(d.count, None, dtype=object)).tolist(),
        d.pick(_ENTRY_CLASSES), identification,
        [_DESCRIPTIONS[k] for k in kinds.tolist()], addenda, same_day.astype(int).tolist(),
        d.received.tolist(), plan.send.tolist(), plan.settle.tolist(),
        plan.effective.tolist(), strict=True)
    return rows, [(_FATE_COLUMNS, fates.rows(ids)), (("_noc_at", "_noc_code"), nocs)]


_RCC_COLUMNS = (
    "rccItemId", "companyCode", "_seq", "flexBatchId", "bankId", "yourReferenceNumber",
    "firstSignerFirstName", "firstSignerLastName", "secondSignerFirstName",
    "secondSignerLastName", "address1", "address2", "city", "state", "zip", "bankName",
    "bankRoutingNumber", "bankAccountNumber", "bankCity", "bankState", "bankZip",
    "checkNumber", "payeeName", "payeeAccountNumber", "payeePhone", "itemSource", "amount",
    "checkDate", "receivedDateTime", "_send_at", "_settle_at")


def _rcc_rows(d: _Draw, first_id: int, config: processing.Config, seed: int, start: int,
              span: int) -> tuple[Iterator[tuple[Any, ...]], list[Sparse]]:
    states, accounts = d.states(), d.accounts()
    plan = processing.schedule(config, d.received)
    fates = processing.rcc_fates(
        config, states=states, accounts=np.array(accounts, dtype=object),
        received=d.received, deposit=plan.send, u=np.stack([d.uniform() for _ in range(4)]))
    ids = np.arange(first_id, first_id + d.count)
    second = d.uniform() < 0.3
    address1, address2, cities = _addresses(d)
    routing = d.pick(_ROUTING)
    banks = [rules.BANKS[r] for r in routing]
    rows = zip(
        ids.tolist(), d.company, d.seq,
        _batches(seed, d.company, d.received // processing.DAY_MS),
        [_COMPANY_FIELDS[c]["bankId"] for c in d.company], d.references("RCC"),
        d.pick(_FIRST), d.pick(_LAST), d.pick(_FIRST, 0.3),
        np.where(second, np.array(d.pick(_LAST), dtype=object),
                 np.full(d.count, None, dtype=object)).tolist(),
        address1, address2, cities, states.tolist(), d.zips(0.3, " "),
        [b[0] for b in banks], routing, accounts, [b[1] for b in banks],
        [b[2] for b in banks], [b[3] for b in banks],
        d.rng.integers(1001, 9999, d.count).tolist(),
        [_COMPANY_FIELDS[c]["payeeName"] for c in d.company],
        [f"ACCT-{n:07d}" for n in d.rng.integers(0, 10**7, d.count).tolist()],
        [_COMPANY_FIELDS[c]["payeePhone"] for c in d.company], d.pick(_SOURCES),
        d.cents(10.0, 1.0).tolist(),
        (d.received - d.received % processing.DAY_MS).tolist(), d.received.tolist(),
        plan.send.tolist(), plan.settle.tolist(), strict=True)
    return rows, [(_FATE_COLUMNS, fates.rows(ids))]


_INSTANT_COLUMNS = (
    "_id", "uniqueId", "companyCode", "_seq", "yourReferenceNumber", "nameOnCard", "cardBrand",
    "cardLastFour", "amount", "status", "statusCode", "statusDescription", "receivedDateTime",
    "completedDateTime")


def _instant_rows(d: _Draw, first_id: int, *_: Any
                  ) -> tuple[Iterator[tuple[Any, ...]], list[Sparse]]:
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
    "statusDescription", "receivedDateTime", "completedDateTime",
    "requestReturnReceivedDateTime", "requestReturnCompletedDateTime", "requestReturnStatus",
    "requestReturnStatusCode", "requestReturnStatusDescription")
#: Share of successful RTP payments whose sender later asked for the money back, and the
#: receiving bank's answers (ISO 20022 resolution of investigation): a documented RTP
#: status (``Success``/``Failed``, as the real service answers ``"Failed"``/``"RJCT"``)
#: with the ISO reason as its code.
RTP_RETURN_REQUEST_SHARE = 0.02
_RETURN_ANSWERS = (("Success", "ACCP", "Return of funds accepted"),
                   ("Failed", "RJCT", "Customer refused the return"),
                   ("Failed", "NOAS", "No answer from customer"))


def _rtp_rows(d: _Draw, first_id: int, config: processing.Config, seed: int, start: int,
              span: int) -> tuple[Iterator[tuple[Any, ...]], list[Sparse]]:
    first, last, accounts = d.pick(_FIRST), d.pick(_LAST), d.accounts()
    amounts = d.rng.integers(100, 2_000_000, d.count).tolist()
    outcomes = [rules.rtp_outcome(a, n) for a, n in zip(amounts, accounts, strict=True)]
    completed = d.received + d.rng.integers(200, 2000, d.count)
    asked_at = completed + (d.uniform() * 10 * processing.DAY_MS).astype(np.int64)
    answered_at = asked_at + (d.uniform() * 3 * processing.DAY_MS).astype(np.int64)
    asked = ((d.uniform() < RTP_RETURN_REQUEST_SHARE)
             & (np.array([o[0] for o in outcomes]) == "Success")
             & (answered_at < start + span))  # only requests already answered
    answers = [_RETURN_ANSWERS[i] for i in d.rng.integers(0, 3, d.count).tolist()]
    request = [(a, b, *answer) if flag else (None,) * 5 for a, b, answer, flag in zip(
        asked_at.tolist(), answered_at.tolist(), answers, asked.tolist(), strict=True)]
    return zip(
        range(first_id, first_id + d.count), d.unique_ids(), d.company, d.seq,
        d.references("RTP"), [f"{f} {n}" for f, n in zip(first, last, strict=True)], first,
        last, d.pick(_RTP_ROUTING), accounts, amounts, *zip(*outcomes, strict=True),
        d.received.tolist(), completed.tolist(), *zip(*request, strict=True),
        strict=True), []


#: What became of the seeded NOCs, as the entries the originator sent the receiver next
#: show: applied on time (the next entry, 1 to 5 banking days after the NOC, carries the
#: corrected data: NACHA 2.12.1 gives six), late (one more entry to the old data 7 to 10
#: banking days after, the corrected one 2 to 5 later) or never (no later entry). An
#: entry that would come after the seeding's end has not come yet.
NOC_OUTCOMES = (("on time", 0.90), ("late", 0.06), ("never", 0.04))

#: Fields a later entry to the same receiver takes from the entry the NOC was about.
_RECEIVER_FIELDS = (
    "firstSignerFirstName", "firstSignerLastName", "address1", "address2", "city", "state",
    "zip", "countryCode", "bankRoutingNumber", "bankAccountNumber", "achAccountType",
    "achTransactionType", "achTransactionSubType", "achEntryClass", "achIdentificationNumber",
    "achCompanyEntryDescription", "itemSource")


def _corrections(noc: dict[str, Any]) -> dict[str, str]:
    """The request fields a seeded NOC's corrected data sets (the sandbox writes the values
    of the code's fields in order, separated by blanks: processing.noc_corrected_data), as
    an entry carries them: a transaction code as the account type it stands for, a name as
    first and last name. Empty for data no entry field carries (an addenda error)."""
    known = NOC_CODE_TABLE.get(noc["changeCode"])
    text = (noc.get("correctedData") or "").strip()
    if known is None or not text:
        return {}
    values = [text] if len(known.fields) == 1 else text.split()
    fields = dict(zip(known.fields, values, strict=False))
    out = {name: value for name, value in fields.items() if name in (
        "bankAccountNumber", "bankRoutingNumber", "achIdentificationNumber", "achEntryClass")}
    if "achTransactionCode" in fields:
        out["achAccountType"] = "Savings" if fields["achTransactionCode"][:1] == "3" \
            else "Checking"
    if "individualName" in fields:
        last, _, first = fields["individualName"].title().partition(" ")
        out |= {"firstSignerLastName": last, "firstSignerFirstName": first or last}
    return out


def _later_entry(original: dict[str, Any], changes: dict[str, str], received: int,
                 number: int, seed: int, config: processing.Config) -> items_.Build:
    """An entry to the receiver of ``original``, received at ``received`` (epoch ms), with
    ``changes`` made; it goes out at its cut-off like any other."""
    plan = processing.schedule(config, [received])
    fields = {name: original[name] for name in _RECEIVER_FIELDS
              if original.get(name) is not None}
    fields |= changes
    prenote = fields.get("achTransactionSubType") == "Prenote"
    code = items_.transaction_code(fields.get("achTransactionType"),
                                   fields.get("achAccountType"), prenote)
    company = original["companyCode"]
    batch = _batches(seed, [company], np.array([received // processing.DAY_MS]))[0]

    def build(item_id: int, seq: int) -> dict[str, Any]:
        return {**fields, "achItemId": item_id, "itemStatus": "W", "flexBatchId": batch,
                "yourReferenceNumber": f"{original['yourReferenceNumber']}-{number}",
                "amount": int(original["amount"] * 100), "achTransactionCode": code,
                "sameDayAchRequested": 0, "receivedDateTime": received,
                "_send_at": int(plan.send[0]), "_settle_at": int(plan.settle[0]),
                "_effective_at": int(plan.effective[0])}

    return build


def _after_the_nocs(store: Store, seed: int, end: int) -> None:
    """Store the entries the originator sent after each NOC already received (see
    :data:`NOC_OUTCOMES`), before ``end``."""
    rng = np.random.default_rng([seed, zlib.crc32(b"after the NOCs")])
    edges = np.cumsum([share for _, share in NOC_OUTCOMES])
    for company, _ in COMPANIES:
        nocs = store.list("noc", company, ListQuery(page_size=10**9))["transactions"]
        builds = []
        for noc in nocs:
            # Four draws for every NOC, whatever becomes of it: the same data every time.
            fate, old_day, new_day, hour = rng.random(4).tolist()
            outcome = NOC_OUTCOMES[min(int(np.searchsorted(edges, fate, side="right")),
                                       len(NOC_OUTCOMES) - 1)][0]
            changes = _corrections(noc)
            original = store.get("ach", company, noc["achItemId"])
            if outcome == "never" or not changes or original is None:
                continue
            late = 7 + int(old_day * 4)
            plan = [(1 + int(new_day * 5), changes)] if outcome == "on time" else \
                [(late, {}), (late + 2 + int(new_day * 4), changes)]
            noc_day = np.datetime64(parse_timestamp(noc["nocDate"]) // processing.DAY_MS, "D")
            for number, (days, made) in enumerate(plan, 2):
                day = np.busday_offset(noc_day, days, roll="forward", busdaycal=BUSDAY_CALENDAR)
                received = (int(day.astype(np.int64)) * processing.DAY_MS
                            + 13 * processing.HOUR_MS + int(hour * 6 * processing.HOUR_MS))
                if received >= end:
                    break
                builds.append(_later_entry(original, made, received, number, seed,
                                           store.config))
        if builds:
            store.insert("ach", company, builds)
    store.process()


def seed_demo(store: Store, *, items: int, seed: int | None = None) -> None:
    """Store the demo data set (see the module docstring) in an empty store."""
    if items <= 0:
        return
    began = time.perf_counter()
    seed = store.seed if seed is None else seed
    now = store.now()
    today = rules.day_start(now)
    # Received up to the last full hour, so that the items received since the last cut-off
    # wait (W) at any time, as an originator's always do (up to midnight alone, every item
    # was sent from the day's cut-off on); whole hours keep the data the same in an hour.
    end = max(today, now - now % processing.HOUR_MS)
    start = today - HISTORY_DAYS * processing.DAY_MS
    span = end - start
    plan = (("ach", _ACH_COLUMNS, _ach_rows, items),
            ("rcc", _RCC_COLUMNS, _rcc_rows, items // 5),
            ("instant", _INSTANT_COLUMNS, _instant_rows, items // 20),
            ("rtp", _RTP_COLUMNS, _rtp_rows, items // 20))
    with store.bulk_mode():
        for kind, columns, rows, count in plan:
            if count:
                base, sparse = rows(_Draw(seed, kind, count, start, span, store.config), 1,
                                    store.config, seed, start, span)
                store.load(kind, columns, base)
                for names, values in sparse:
                    store.update_many(kind, names, values)
        # Everything already due happens now, before the indexes are built.
        store.process()
    _after_the_nocs(store, seed, end)
    scenarios.add(store, today)
    logger.info("seeded %d ACH items (seed %d) in %.1f s", items, seed,
                time.perf_counter() - began)
