"""Named demo items, so NOC ledgers and submission guards have something to act on: NOCs
with corrected data for each common change code, and returned accounts the demo tries
again. DEMO1 ACH items with fixed reference numbers (``SCN-...``), accounts and amounts,
dated in banking days before the demo's day; :data:`SCENARIOS` (also in docs/sandbox.md
and ``sb.simulate.scenarios()``) says what each demonstrates.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np

from paynb.calendar import BUSDAY_CALENDAR
from paynb.codes import RETURN_CODES
from paynb.sandbox import items, processing
from paynb.sandbox.queries import ListQuery
from paynb.sandbox.store import Store
from paynb.sandbox.tables import RETURN_ITEM_BASE

__all__ = ["COMPANY", "SCENARIOS", "Attempt", "Scenario", "add", "describe"]

COMPANY = "DEMO1"


@dataclass(frozen=True)
class Attempt:
    """One entry to the scenario's account: sent ``sent`` banking days before the demo's
    banking day (:func:`add`), returned with ``code`` ``returned`` banking days after."""

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


_RETRY = "RETRY PYMT"

SCENARIOS: tuple[Scenario, ...] = (
    *(Scenario(f"SCN-NOC-{code}", f"NOC {code}, {what}", routing, account, Decimal(amount),
               (Attempt(sent),), (code, corrected, ago))
      for code, what, routing, account, amount, sent, corrected, ago in (
          ("C01", "overdue: correct the account number", "021000021", "5550001001",
           "120.00", 14, "5550001091", 10),
          ("C02", "overdue: correct the routing number", "026009593", "5550001002",
           "75.50", 12, "121000248", 8),
          ("C03", "due in a banking day: routing and account", "121000248", "5550001003",
           "210.00", 9, "031176110 5550001093", 5),
          ("C05", "open: transaction code (a savings account: 37)", "031176110",
           "5550001005", "64.99", 7, "37", 3),
          ("C06", "open: account number and transaction code", "111000025", "5550001006",
           "33.00", 5, "5550001096 37", 1),
          ("C07", "overdue: routing, account and transaction code", "021000021",
           "5550001007", "500.00", 11, "026009593 5550001097 37", 7),
          ("C09", "open: individual identification number", "026009593", "5550001009",
           "18.25", 6, "CUST000777", 2))),
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


def _busday(day_ms: int, n: int) -> int:
    """Midnight of the ``n``-th banking day from ``day_ms`` (rolled forward to one first)."""
    day = np.datetime64(day_ms // processing.DAY_MS, "D")
    moved = np.busday_offset(day, n, roll="forward", busdaycal=BUSDAY_CALENDAR)
    return int(moved.astype(np.int64)) * processing.DAY_MS


def add(store: Store, today: int) -> None:
    """Store the scenario items and their NOCs (sent before ``today``, midnight UTC).

    Every date counts back in banking days from ``today``, or from the next banking day
    when it is none (a Saturday's demo counts from Monday, the day the ledger counts
    forward from), so each scenario is in its documented state on any day of the week."""
    config = store.config
    anchor = _busday(today, 0)
    builds, nocs = [], []
    for scenario in SCENARIOS:
        for number, attempt in enumerate(scenario.attempts):
            builds.append(_build(scenario, number, attempt, _busday(anchor, -attempt.sent),
                                 config))
        if scenario.noc:
            nocs.append((len(builds) - 1, *scenario.noc))
    records = store.insert("ach", COMPANY, builds)
    for i, code, corrected, ago in nocs:
        store.create_noc(COMPANY, records[i]["achItemId"], code, corrected_data=corrected,
                         at=_busday(anchor, -ago) + config.event_hour_ms)


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
    settle = _busday(send_day, 1)
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
            returned = _busday(settle, attempt.returned)
            row.update(itemStatus="R", returnReason=attempt.code,
                       returnMessage=RETURN_CODES[attempt.code], returnDate=returned,
                       returnItemId=item_id + RETURN_ITEM_BASE, reportStatus="Returned",
                       returnFileName=f"RET_{COMPANY}_{_stamp(returned)}.ach",
                       returnReportFileName=f"RETRPT_{COMPANY}_{_stamp(returned)}.csv")
        return row

    return build


def _stamp(ms: int) -> str:
    return str(np.datetime64(ms // processing.DAY_MS, "D")).replace("-", "")
