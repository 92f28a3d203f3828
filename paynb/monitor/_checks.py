"""The checks of a morning run: from the local history (just synced) and the journal to
findings and the frames behind them, through public APIs.

The history is read in SQL, through one DuckDB connection (``History.connect``), for
what each check needs rather than for the items: the rates, their projection and the
exposure from the items grouped by what those figures read (counted with ``weights=``);
the new returns and the waiting items as rows. The NOCs are judged by the ledger on the
evidence ``client.nocs.obligations()`` judges, so that the two never disagree.
"""

from __future__ import annotations

import datetime as dt
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import pandas as pd

from paynb import calendar, compliance
from paynb._coerce import arrow_frame, records
from paynb._kinds import KINDS as KIND_REGISTRY
from paynb._kinds import RETURN_KINDS
from paynb.codes import UNAUTHORIZED_RETURN_CODES, code_label, code_meaning
from paynb.compliance._grouped import COUNT, grouped_items
from paynb.frames import noc_ledger_frame
from paynb.monitor._findings import Finding
from paynb.monitor._projection import WINDOW_DAYS, Projection, project
from paynb.nacha import applied_marks_of, entries_of, ledger

__all__ = ["ENTRY_DAYS", "READ_DAYS", "UNAUTHORIZED", "WAITING_BANKING_DAYS", "Measured",
           "measure"]

#: The unauthorized return codes (NACHA Article Two, Subsection 2.17.2): the code tables'
#: own set, the one the compliance rates count, so that the two never disagree.
UNAUTHORIZED: frozenset[str] = UNAUTHORIZED_RETURN_CODES

#: An item waits (``W``) until the cut-off of the first banking day after the day it was
#: received, or of a later requested send date (docs/sandbox.md, "Statuses and business
#: processing"); one still waiting after that is late.
WAITING_BANKING_DAYS = 1

#: Calendar days of items counted for the report: 90 days of rolling rates, each over 60
#: days. The checks alone count :data:`ENTRY_DAYS` of items and the returns dated in the
#: window, whenever their items were received.
READ_DAYS = 150
#: Calendar days of items the checks count: the 60-day window's entries, and the debits
#: still returnable (the extended window: 60 days after settlement), with a margin.
ENTRY_DAYS = 75

#: The ACH items the checks count (with the parameters of :func:`_scope`): those received
#: in the last :data:`ENTRY_DAYS` days (:data:`READ_DAYS` for a report), and every item
#: returned in the 60-day window, whenever it was received (its return counts, its entry
#: falls before the window). Both bound ``receivedDateTime``: an item without one (the
#: service always gives it) is in neither.
_SCOPE = "company = ? AND (receivedDateTime >= ? OR (itemStatus = 'R' AND returnDate >= ?))"
#: The columns of the items still waiting.
_WAITING = ["kind", "itemId", "yourReferenceNumber", "amount", "receivedDateTime", "due"]
#: Days of rolling rates drawn in the report.
CHART_DAYS = 90


def _money(value: Any) -> str:
    amount = Decimal(0) if value is None or pd.isna(value) else Decimal(str(value))
    return f"${amount:,.2f}"


def _count(count: int, one: str, many: str) -> str:
    return f"{count:,} {one if count == 1 else many}"


def _iso(day: dt.date | None) -> str | None:
    return None if day is None else day.isoformat()


def _utc_day(stamp: Any) -> dt.date:
    value = pd.Timestamp(stamp)
    if value.tzinfo is not None:
        value = value.tz_convert("UTC")
    day: dt.date = value.date()
    return day


def _answer(connection: Any, query: str, *params: Any) -> pd.DataFrame:
    """A query's rows as a frame, amounts exact."""
    return arrow_frame(connection.sql(query, params=list(params)).to_arrow_table())


def _moment(day: dt.date) -> dt.datetime:
    """The first instant (UTC) of ``day``."""
    return dt.datetime.combine(day, dt.time(), dt.UTC)


def _columns(names: Any) -> str:
    return ", ".join(f'"{name}"' for name in names)


def _scope(company: str, today: dt.date, report: bool) -> list[Any]:
    """The parameters of :data:`_SCOPE`."""
    return [company, _moment(today - dt.timedelta(days=READ_DAYS if report else ENTRY_DAYS)),
            _moment(today - dt.timedelta(days=WINDOW_DAYS))]


@dataclass
class Measured:
    """What :func:`measure` found: the findings and every frame behind them."""

    findings: list[Finding]
    rates: pd.DataFrame
    rolling: pd.DataFrame
    projections: dict[str, Projection]
    nocs: pd.DataFrame
    new_returns: pd.DataFrame
    returns_by_reason: pd.DataFrame
    waiting: pd.DataFrame
    unknown: pd.DataFrame
    exposure: pd.DataFrame
    exposure_total: dict[str, Any]
    compliance: Any  # the ComplianceReport of the workbook; None when no report is written
    returns_since: dt.datetime


def _rates(grouped: pd.DataFrame, company: str, today: dt.date, rates: pd.DataFrame,
           chart: bool) -> tuple[list[Finding], pd.DataFrame, pd.DataFrame,
                                 dict[str, Projection]]:
    """Each rate's level and its projection (from the last 60 days' daily counts)."""
    daily = compliance.daily_counts(grouped, start=today - dt.timedelta(days=WINDOW_DAYS - 1),
                                    end=today, weights=COUNT)
    rates = rates.copy()
    projections: dict[str, Projection] = {}
    findings = []
    for category in compliance.CATEGORIES:
        days = daily[daily["category"] == category.name]
        projection = project(days["date"].tolist(), days["entries"].to_numpy(),
                             days["returns"].to_numpy(), as_of=today,
                             threshold_bp=category.threshold_bp,
                             warning_share=compliance.WARNING_SHARE)
        projections[category.name] = projection
        row = rates[rates["category"] == category.name].iloc[0]
        level = {"over": "breach", "warning": "warning"}.get(str(row["level"]), "ok")
        # Three decimals: 0.499 % must not read as the 0.50 % of a threshold it is under.
        rate = "n/a" if pd.isna(row["rate"]) else f"{row['rate']:.3%}"
        where = {"breach": "over its", "warning": "at the warning level of its"}.get(
            level, "under its")
        ahead = {"ok": f"; at this pace warning {projection.when('warning')}, over "
                       f"{projection.when('over')}",
                 "warning": f"; at this pace over {projection.when('over')}"}.get(level, "")
        returns, entries = int(row["returns"]), int(row["entries"])
        title = (f"{category.name} return rate {rate} {where} {category.threshold:.1%} "
                 f"threshold ({_count(returns, 'return', 'returns')} of "
                 f"{_count(entries, 'debit entry', 'debit entries')}){ahead}")
        findings.append(Finding(company, "rate", f"rate:{category.name}", level, title, {
            "category": category.name,
            "rate": None if pd.isna(row["rate"]) else float(row["rate"]),
            "threshold": category.threshold, "returns": returns, "entries": entries,
            "projected_warning": _iso(projection.warning_day),
            "projected_over": _iso(projection.breach_day)}))
    rates["warning_level"] = rates["threshold"] * compliance.WARNING_SHARE
    rates["projected_warning"] = [projections[c].when("warning") for c in rates["category"]]
    rates["projected_over"] = [projections[c].when("over") for c in rates["category"]]
    rolling = compliance.rolling_return_rates(
        grouped, start=today - dt.timedelta(days=CHART_DAYS if chart else 0), end=today,
        weights=COUNT)
    return findings, rates, rolling, projections


def _meaning(code: Any) -> str | None:
    """A return code's meaning (paynb.codes), "not a NACHA code paynb knows" for one in no
    table; None for no code."""
    return code_meaning(code) if isinstance(code, str) and code.strip() else None


def _reason_label(code: Any) -> str:
    """A return code as the messages name it: ``R01: Insufficient funds`` ("no code" for
    a return the service gave none)."""
    return code_label(code) if isinstance(code, str) and code.strip() else "no code"


def _nocs(nocs: list[dict[str, Any]], related: list[dict[str, Any]], applied: dict[str, Any],
          company: str, as_of: dt.datetime) -> tuple[list[Finding], pd.DataFrame]:
    """NOC obligations overdue or due soon (two banking days or fewer), judged on the
    history's evidence by the ledger (:func:`paynb.nacha.ledger`), of whose rows only
    those due make a frame (thousands of NOCs a run). Pure: it runs beside the queries."""
    rows = [row for row in ledger(nocs, entries_of(related), as_of=as_of,
                                  applied=applied_marks_of(applied), as_it_stood=True)
            if row["state"] in ("overdue", "due soon")]
    findings = []
    for row in rows:
        overdue = row["state"] == "overdue"
        when = f"{row['dueDate']:%Y-%m-%d}" if row["dueDate"] is not None else "unknown"
        reference = row["yourReferenceNumber"]
        title = (f"NOC {row['nocId']} ({row['changeCode']} {row['changeReason']}"
                 + (f", reference {reference}" if isinstance(reference, str) else "")
                 + (f") overdue since {when}" if overdue else f") due {when}"))
        findings.append(Finding(company, "noc", f"noc:{row['nocId']}",
                                "breach" if overdue else "warning", title,
                                {"nocId": str(row["nocId"]), "state": str(row["state"]),
                                 "dueDate": when}))
    return findings, noc_ledger_frame(rows)


def _judged_nocs(history: Any, applied: dict[str, Any], company: str, as_of: dt.datetime
                 ) -> tuple[list[Finding], pd.DataFrame]:
    """:func:`_nocs` on the evidence of ``history`` (read here, beside the queries: its
    reading is DuckDB's and Arrow's, the judging Python), with the warning that the
    store cannot tell the NOCs' accounts apart when it cannot."""
    evidence = history.noc_evidence()
    findings, due = _nocs(evidence.nocs, evidence.items, applied, company, as_of)
    if evidence.nocs and not evidence.matches:
        findings.append(_unmatched_accounts(company))
    return findings, due


def _unmatched_accounts(company: str) -> Finding:
    """The store cannot tell the NOCs' accounts apart (masked numbers without their keyed
    hashes: synced masked by a paynb before the keys, or its key is not on this machine),
    so a NOC applied by a later entry may be judged overdue: say so, and how to mend it."""
    return Finding(company, "noc", "noc:accounts", "warning",
                   "The history cannot tell the NOCs' accounts apart (masked numbers without "
                   "their keys): a NOC applied by a later entry may show as overdue. Rebuild "
                   "the store once: client.sync(rebuild=True)", {"state": "accounts unknown"})


def _new_returns(connection: Any, company: str, since: dt.datetime | None, today: dt.date
                 ) -> tuple[list[Finding], pd.DataFrame, pd.DataFrame, dt.datetime]:
    """The returns that came in since the previous run (first seen by a sync after it);
    on a first run, those dated on the banking day before the as-of day or later."""
    columns = ["achItemId", "yourReferenceNumber", "amount", "achEntryClass", "returnReason",
               "returnDate", "settleDate"]
    # And what the compliance rule reads to tell a returned debit entry from a returned
    # credit or prenote (compliance.counted_returns): only the first is in the rates.
    judged = ["achTransactionType", "achTransactionSubType", "itemStatus", "sendDate",
              "receivedDateTime"]
    returned = (f"SELECT {_columns(columns + judged)} FROM ach WHERE company = ? "
                "AND itemStatus = 'R'")
    if since is not None:
        new = _answer(connection, f"{returned} AND CAST(achItemId AS VARCHAR) IN (SELECT "
                                  "itemId FROM events "
                                  "WHERE kind = 'ach' AND company = ? AND itemStatus = 'R' "
                                  "AND seenAt > ?)", company, company, since)
        start = since
    else:
        start = _moment(calendar.add_banking_days(today, -1).date())
        new = _answer(connection, f"{returned} AND returnDate >= ?", company, start)
    new = new.sort_values(["returnDate", "achItemId"]).reset_index(drop=True)
    counted = compliance.counted_returns(new)
    new = new[columns].assign(returnReasonDescription=new["returnReason"].map(_meaning),
                              unauthorized=counted["unauthorized"],
                              prenote=counted["prenote"])
    amounts = new["amount"].map(lambda v: Decimal(str(v)) if not pd.isna(v) else Decimal(0))
    by_reason = (pd.DataFrame({"returnReason": new["returnReason"].astype("string"),
                               "amount": amounts})
                 .groupby("returnReason", dropna=False)
                 .agg(returns=("amount", "size"), amount=("amount", "sum"))
                 .reset_index().sort_values(["returns", "returnReason"],
                                            ascending=[False, True]).reset_index(drop=True))
    by_reason["description"] = by_reason["returnReason"].map(_meaning)
    findings = [Finding(
        company, "unauthorized", f"unauthorized:{row['achItemId']}", "warning",
        f"unauthorized return {row['returnReason']} ({_meaning(row['returnReason'])}) of item "
        f"{row['achItemId']}" + (f" ({row['yourReferenceNumber']})"
                                 if isinstance(row["yourReferenceNumber"], str) else "")
        + f", {_money(row['amount'])}, returned {row['returnDate']:%Y-%m-%d}",
        {"achItemId": str(row["achItemId"]), "returnReason": row["returnReason"],
         "amount": str(row["amount"])}) for row in records(new[new["unauthorized"]])]
    total = sum(amounts, Decimal(0))
    # Each code with its meaning (issue 36: paynb shows no bare code), then its count.
    reasons = ", ".join(f"{_reason_label(r['returnReason'])} {r['returns']}" for r in
                        records(by_reason)[:6])
    more = ", ..." if len(by_reason) > 6 else ""
    prenotes = int(new["prenote"].sum())
    title = (f"Returns since {'the last run' if since is not None else 'the last banking day'}"
             f": {len(new):,}, {_money(total)}" + (f" ({reasons}{more})" if len(new) else "")
             + (f"; {_count(prenotes, 'returned prenote', 'returned prenotes')} (no entry, "
                "not in the rates)" if prenotes else ""))
    findings.append(Finding(company, "returns", "returns", "info", title,
                            {"count": len(new), "amount": str(total), "prenotes": prenotes,
                             "since": start.isoformat()}))
    return findings, new, by_reason, start


def _waiting(connection: Any, company: str, today: dt.date, days: int
             ) -> tuple[list[Finding], pd.DataFrame]:
    """ACH and RCC items still ``W`` more than ``days`` banking days after the day they
    were received (or their requested send day, when later)."""
    frames = []
    # Only an item that started before ``days`` days ago can be late (``days`` banking days
    # are as many calendar days or more): the query keeps those, which the banking days
    # below then judge; the items received since (a day's thousands) are not read.
    before = _moment(today - dt.timedelta(days=days))
    for kind in RETURN_KINDS:
        id_field = KIND_REGISTRY[kind].id_field
        columns = [id_field, "yourReferenceNumber", "amount", "receivedDateTime", "sendDate",
                   *(["requestedSendDate"] if kind == "ach" else [])]
        requested = " AND (requestedSendDate IS NULL OR requestedSendDate < ?)" \
            if kind == "ach" else ""
        found = _answer(connection, f"SELECT {_columns(columns)} FROM {kind} WHERE company = ? "
                                    f"AND itemStatus = 'W' AND receivedDateTime < ?{requested}",
                        company, before, *([before] if requested else []))
        if found.empty:
            continue
        received = pd.to_datetime(found["receivedDateTime"], utc=True).dt.tz_localize(None) \
            .dt.normalize()
        start = received
        if "requestedSendDate" in found:
            requested = pd.to_datetime(found["requestedSendDate"], utc=True) \
                .dt.tz_localize(None).dt.normalize()
            start = received.where(~(requested > received), requested)
        due = calendar.add_banking_days(start, days)
        late = found[(due < pd.Timestamp(today)).to_numpy()].copy()
        late.insert(0, "kind", kind)
        late = late.rename(columns={id_field: "itemId"})
        late["due"] = due[late.index]
        frames.append(late[_WAITING])
    waiting = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=_WAITING)
    findings = [Finding(company, "waiting", f"waiting:{row['kind']}:{row['itemId']}", "warning",
                        f"{row['kind'].upper()} item {row['itemId']}"
                        + (f" ({row['yourReferenceNumber']})"
                           if isinstance(row["yourReferenceNumber"], str) else "")
                        + f" still waiting (W): it was due to be sent by "
                        f"{row['due']:%Y-%m-%d}", {"kind": row["kind"],
                                                   "itemId": str(row["itemId"])})
                for row in records(waiting)]
    return findings, waiting


def _unknown(client: Any, company: str) -> tuple[list[Finding], pd.DataFrame]:
    """Submissions whose answer was lost: what ``client.reconcile()`` settles."""
    journal = client.context.journal
    entries = journal.unknown_entries(company) if journal is not None else []
    columns = ["id", "when", "kind", "operation", "reference", "state", "detail"]
    frame = pd.DataFrame([{c: e.get(c) for c in columns} for e in entries], columns=columns)
    findings = [Finding(company, "unknown", f"unknown:{e['id']}", "warning",
                        f"{e['kind'].upper()} {e['operation']} of reference {e['reference']} "
                        f"({e['state']} since {e['when']:%Y-%m-%d %H:%M} UTC): its answer was "
                        "lost; client.reconcile() settles it", {"entry": e["id"]})
                for e in entries]
    return findings, frame


def _exposure(exposure: pd.DataFrame, company: str) -> tuple[list[Finding], dict[str, Any]]:
    """The money still returnable, summed over the settlement days of ``exposure``."""
    total = {name: exposure[name].sum() if len(exposure) else 0 for name in (
        "standard_amount", "standard_count", "unauthorized_amount", "unauthorized_count")}
    shown: dict[str, Any] = {name: Decimal(str(value)) if name.endswith("amount") else int(value)
                             for name, value in total.items()}
    title = (f"Still returnable: {_money(shown['standard_amount'])} in the standard window "
             f"({_count(shown['standard_count'], 'debit', 'debits')}), "
             f"{_money(shown['unauthorized_amount'])} in the extended unauthorized window "
             f"({_count(shown['unauthorized_count'], 'debit', 'debits')})")
    return [Finding(company, "exposure", "exposure", "info", title,
                    {k: str(v) for k, v in shown.items()})], shown


def measure(client: Any, history: Any, *, as_of: dt.datetime, since: dt.datetime | None,
            waiting_days: int = WAITING_BANKING_DAYS, report: bool = True) -> Measured:
    """Every check of a run, on the client's history as last synced.

    Args:
        client: a :class:`paynb.Client` whose history is synced.
        history: its history (``client.history``), opened once for the run.
        as_of: the service's time the run measures (the last sync's).
        since: the previous successful run's ``as_of`` (None: a first run).
        waiting_days: banking days after receipt from which a ``W`` item is late.
        report: also the figures of the report and its workbook (the compliance report,
            90 days of rolling rates); the findings are the same without.
    """
    company = client.company_code
    today = _utc_day(as_of)
    with history.connect() as connection, ThreadPoolExecutor(max_workers=1) as beside:
        scope = _scope(company, today, report)
        # The NOC ledger is Python, the other checks mostly DuckDB's queries (which let
        # Python run meanwhile): read and judged beside them, the run uses both cores.
        journal = client.context.journal
        applied = journal.nocs.applied(company) if journal is not None else {}
        judged = beside.submit(_judged_nocs, history, applied, company, as_of)
        # The items grouped by what the figures read of them (``COUNT``: how many a row
        # stands for), carrying what the history holds, so the figures warn of a window
        # beyond the store as they do for items.
        grouped = grouped_items(connection, _SCOPE, scope, held=history.held("ach"))
        evidence = None
        if report:  # the workbook's figures: the rates, breaches, exposure and top reasons
            evidence = compliance.report(grouped, as_of=today, by=None, weights=COUNT)
            evidence.source = f"local history of {company}"
            rates, exposure = evidence.rates, evidence.exposure
        else:
            rates = compliance.return_rates(grouped, as_of=today, weights=COUNT)
            exposure = compliance.return_exposure(grouped, as_of=today, weights=COUNT)
        rate_findings, rates, rolling, projections = _rates(grouped, company, today, rates,
                                                            report)
        return_findings, new, by_reason, start = _new_returns(connection, company, since,
                                                              today)
        waiting_findings, waiting = _waiting(connection, company, today, waiting_days)
        noc_findings, nocs = judged.result()
    unknown_findings, unknown = _unknown(client, company)
    exposure_findings, exposure_total = _exposure(exposure, company)
    findings = [*rate_findings, *noc_findings, *return_findings, *waiting_findings,
                *unknown_findings, *exposure_findings]
    return Measured(findings=findings, rates=rates, rolling=rolling, projections=projections,
                    nocs=nocs, new_returns=new, returns_by_reason=by_reason, waiting=waiting,
                    unknown=unknown, exposure=exposure, exposure_total=exposure_total,
                    compliance=evidence, returns_since=start)
