"""Named demo items: NOCs with corrected data for each common change code, and returned
accounts that the demo tries again, so NOC ledgers and submission guards have
something to act on.

They are DEMO1 ACH items with fixed reference numbers (``SCN-...``), receiving
accounts and amounts, dated in banking days before the demo's day; the table
:data:`SCENARIOS` (also in docs/sandbox.md, and from ``sb.simulate.scenarios()``)
says what each demonstrates.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np

from paynb.calendar import BUSDAY_CALENDAR
from paynb.codes import NOC_CODES, RETURN_CODES
from paynb.sandbox import items, processing
from paynb.sandbox.queries import ListQuery
from paynb.sandbox.store import Store
from paynb.sandbox.tables import RETURN_ITEM_BASE

__all__ = ["COMPANY", "SCENARIOS", "Attempt", "Scenario", "add", "describe"]

COMPANY = "DEMO1"


@dataclass(frozen=True)
class Attempt:
    """One entry to the scenario's account: sent ``sent`` banking days before the demo's
    banking day (see :func:`add`), returned with ``code`` ``returned`` banking days after
    settlement."""

    sent: int
    code: str | None = None
    returned: int = 2
    description: str = "PAYMENT"


@dataclass(frozen=True)
class Scenario:
    """A receiving account and what happened to the entries sent to it."""

    reference: str
    demonstrates: str
    routing: str
    account: str
    amount: Decimal
    attempts: tuple[Attempt, ...]
    noc: tuple[str, str, int] | None = None  # change code, corrected data, banking days ago


_PAYMENT = "PAYMENT"
_RETRY = "RETRY PYMT"

SCENARIOS: tuple[Scenario, ...] = (
    Scenario("SCN-NOC-C01", "NOC C01, overdue: correct the account number",
             "021000021", "5550001001", Decimal("120.00"), (Attempt(14),),
             ("C01", "5550001091", 10)),
    Scenario("SCN-NOC-C02", "NOC C02, overdue: correct the routing number",
             "026009593", "5550001002", Decimal("75.50"), (Attempt(12),),
             ("C02", "121000248", 8)),
    Scenario("SCN-NOC-C03", "NOC C03, due in a banking day: routing and account",
             "121000248", "5550001003", Decimal("210.00"), (Attempt(9),),
             ("C03", "031176110 5550001093", 5)),
    Scenario("SCN-NOC-C05", "NOC C05, open: transaction code (a savings account: 37)",
             "031176110", "5550001005", Decimal("64.99"), (Attempt(7),), ("C05", "37", 3)),
    Scenario("SCN-NOC-C06", "NOC C06, open: account number and transaction code",
             "111000025", "5550001006", Decimal("33.00"), (Attempt(5),),
             ("C06", "5550001096 37", 1)),
    Scenario("SCN-NOC-C07", "NOC C07, overdue: routing, account and transaction code",
             "021000021", "5550001007", Decimal("500.00"), (Attempt(11),),
             ("C07", "026009593 5550001097 37", 7)),
    Scenario("SCN-NOC-C09", "NOC C09, open: individual identification number",
             "026009593", "5550001009", Decimal("18.25"), (Attempt(6),),
             ("C09", "CUST000777", 2)),
    Scenario("SCN-R01-MAX", "R01 three times (original and two RETRY PYMT): a third "
             "reinitiation must be refused", "021000021", "5550002001", Decimal("150.00"),
             (Attempt(40, "R01"), Attempt(30, "R01", description=_RETRY),
              Attempt(20, "R01", description=_RETRY))),
    Scenario("SCN-R09-RETRY", "R09, then one RETRY PYMT that settled: collected, so "
             "the next debit is a new entry, not a reinitiation", "121000248", "5550002002",
             Decimal("89.99"),
             (Attempt(25, "R09"), Attempt(15, description=_RETRY))),
    Scenario("SCN-R01-ONCE", "R01 once, not retried: a retry with RETRY PYMT is allowed",
             "031176110", "5550002006", Decimal("42.00"), (Attempt(8, "R01"),)),
    Scenario("SCN-R02-AGAIN", "R02 (account closed), then debited again without a new "
             "authorization", "026009593", "5550002003", Decimal("45.00"),
             (Attempt(16, "R02"), Attempt(6))),
    Scenario("SCN-R03-AGAIN", "R03 (no account), then debited again", "111000025",
             "5550002004", Decimal("60.00"), (Attempt(13, "R03"), Attempt(4))),
    Scenario("SCN-R10-AGAIN", "R10 (unauthorized), then debited again", "021000021",
             "5550002005", Decimal("99.00"), (Attempt(30, "R10", returned=20), Attempt(3))),
)


def _banking_day(anchor: np.datetime64, back: int) -> int:
    day = np.busday_offset(anchor, -back, roll="forward", busdaycal=BUSDAY_CALENDAR)
    return int(day.astype(np.int64)) * processing.DAY_MS


def _forward(day_ms: int, n: int) -> int:
    day = np.datetime64(day_ms // processing.DAY_MS, "D")
    moved = np.busday_offset(day, n, roll="forward", busdaycal=BUSDAY_CALENDAR)
    return int(moved.astype(np.int64)) * processing.DAY_MS


def add(store: Store, today: int) -> None:
    """Store the scenario items and their NOCs (sent before ``today``, midnight UTC).

    Every date counts back in banking days from the demo's banking day: ``today`` when it
    is one, else the next (a Saturday's demo counts from Monday). So ``n`` banking days
    ago is ``n`` banking days before the day the ledger counts forward from, and each
    scenario is in its documented state on any day of the week (a NOC "1 banking day
    ago" is never also "0 banking days" away on a Saturday)."""
    config = store.config
    anchor = np.busday_offset(np.datetime64(today // processing.DAY_MS, "D"), 0,
                            roll="forward", busdaycal=BUSDAY_CALENDAR)
    builds, nocs = [], []
    for scenario in SCENARIOS:
        for number, attempt in enumerate(scenario.attempts):
            builds.append(_build(scenario, number, attempt, _banking_day(anchor, attempt.sent),
                                 config))
        if scenario.noc:
            nocs.append((len(builds) - 1, scenario, _banking_day(anchor, scenario.noc[2])))
    records = store.insert("ach", COMPANY, builds)
    store.insert("noc", COMPANY, [_noc(records[i], scenario, day, config)
                                  for i, scenario, day in nocs])


def describe(store: Store) -> list[dict[str, Any]]:
    """Each scenario as stored: what it demonstrates, its account, its items and its NOC
    (``/sandbox/scenarios``, ``sb.simulate.scenarios()``). A sandbox without demo data
    answers an empty list."""
    out = []
    for scenario in SCENARIOS:
        found = []
        for number in range(len(scenario.attempts)):
            reference = scenario.reference if number == 0 else f"{scenario.reference}-{number}"
            found += store.list("ach", COMPANY, ListQuery(reference=reference))["transactions"]
        if not found:
            continue
        nocs = [n for n in store.list("noc", COMPANY, ListQuery(
            reference=scenario.reference, page_size=10))["transactions"]
            if n["achItemId"] == found[0]["achItemId"]]
        out.append({
            "reference": scenario.reference, "demonstrates": scenario.demonstrates,
            "companyCode": COMPANY, "bankRoutingNumber": scenario.routing,
            "bankAccountNumber": scenario.account, "amount": scenario.amount,
            "items": [{k: r[k] for k in ("achItemId", "yourReferenceNumber", "itemStatus",
                                         "returnReason", "returnDate", "sendDate",
                                         "settleDate", "achCompanyEntryDescription")}
                      for r in found],
            "noc": nocs[0] if nocs else None,
        })
    return out


def _build(scenario: Scenario, number: int, attempt: Attempt, send_day: int,
           config: processing.Config) -> items.Build:
    send = send_day + config.cutoff_ms
    settle = _forward(send_day, 1)
    reference = scenario.reference if number == 0 else f"{scenario.reference}-{number}"

    def build(item_id: int, seq: int) -> dict[str, Any]:
        row = {
            "achItemId": item_id, "flexBatchId": str(uuid.uuid5(uuid.NAMESPACE_URL, reference)),
            "itemStatus": "S", "firstSignerFirstName": "Scenario",
            "firstSignerLastName": scenario.reference.split("-", 1)[1].replace("-", " ").title(),
            "address1": "1 Main St", "city": "Springfield", "state": "IL", "zip": "62701",
            "countryCode": "US", "yourReferenceNumber": reference,
            "amount": int(scenario.amount * 100), "bankRoutingNumber": scenario.routing,
            "bankAccountNumber": scenario.account, "itemSource": "API",
            "reportStatus": "Sent", "receivedDateTime": send_day - 6 * processing.HOUR_MS,
            "settleDate": settle, "achEffectiveDate": settle, "depositDateTime": send,
            "apiReportDateTime": send + config.report_delay_ms, "sendDate": send,
            "achTransactionCode": 27, "achAccountType": "Checking",
            "achTransactionType": "Debit", "achEntryClass": "PPD",
            "achCompanyEntryDescription": attempt.description, "sameDayAchRequested": 0,
            "settlementReportFileName": f"SETTLE_{COMPANY}_{_stamp(settle)}.csv",
        }
        if attempt.code:
            returned = _forward(settle, attempt.returned)
            row.update(itemStatus="R", returnReason=attempt.code,
                       returnMessage=RETURN_CODES[attempt.code], returnDate=returned,
                       returnItemId=item_id + RETURN_ITEM_BASE, reportStatus="Returned",
                       returnFileName=f"RET_{COMPANY}_{_stamp(returned)}.ach",
                       returnReportFileName=f"RETRPT_{COMPANY}_{_stamp(returned)}.csv")
        return row

    return build


def _noc(record: dict[str, Any], scenario: Scenario, day: int,
         config: processing.Config) -> items.Build:
    code, corrected, _ = scenario.noc  # type: ignore[misc]

    def build(noc_id: int, seq: int) -> dict[str, Any]:
        return {"nocId": noc_id, "achItemId": record["achItemId"],
                "yourReferenceNumber": record["yourReferenceNumber"], "changeCode": code,
                "changeReason": NOC_CODES[code], "correctedData": corrected,
                "nocDate": day + config.event_hour_ms}

    return build


def _stamp(ms: int) -> str:
    return str(np.datetime64(ms // processing.DAY_MS, "D")).replace("-", "")
