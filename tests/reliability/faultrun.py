"""The fault runs of ``test_fault_runs.py``: list or submit through a failing sandbox, and count.

Kept apart from the tests so the short (CI) and long (``make test-long``) variants run
the very same code with other sizes.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import requests

from paynb.errors import RateLimitError, ServerError, TransportError
from paynb.sandbox.faults import FaultSettings

#: The issue's fault mix: 10% 503s, 5% dropped connections, 2% 429s with Retry-After.
FAULT_MIX = {"error_rate": 0.10, "drop_rate": 0.05, "rate_limit_rate": 0.02, "retry_after": 1}
#: Settled journal states: nothing is left pending or unknown.
SETTLED = frozenset({"sent", "rejected", "failed"})

#: Counts of every run, printed in the terminal summary (see conftest).
REPORTS: list[str] = []


def faults() -> FaultSettings:
    """The fault mix as sandbox settings."""
    return FaultSettings(**FAULT_MIX)


def ach_item(reference: str, n: int) -> dict[str, Any]:
    """A valid ACH item whose amount is exact cents derived from ``n``."""
    return {
        "firstSignerFirstName": "Fault", "firstSignerLastName": f"Run{n}", "state": "NY",
        "zip": "10001", "yourReferenceNumber": reference, "bankRoutingNumber": "021000021",
        "bankAccountNumber": f"{1000000 + n}", "achTransactionType": "Debit",
        "amount": Decimal(n % 99_999 + 1) / 100,
    }


def service_token(sb: Any, username: str | None = None, password: str | None = None) -> str:
    """A bearer token fetched with plain requests (no paynb code involved)."""
    creds = sb.credentials
    form = {"grant_type": "password", "client_id": creds.client_id,
            "client_secret": creds.client_secret, "username": username or creds.username,
            "password": password or creds.password}
    answer = requests.post(sb.auth_url.rstrip("/") + "/connect/token", data=form, timeout=30)
    answer.raise_for_status()
    return answer.json()["access_token"]


def service_records(sb: Any, kind_path: str = "AchTransactions", *,
                    company: str | None = None, reference: str | None = None
                    ) -> list[dict[str, Any]]:
    """Every record of a list endpoint, read with plain requests and no faults set."""
    token = service_token(sb)
    url = f"{sb.base_url}/api/v3/{kind_path}/companycode/{company or sb.company_code}"
    records: list[dict[str, Any]] = []
    page = 0
    while True:
        params: dict[str, Any] = {"page": page, "pageSize": 1000}
        if reference is not None:
            params["yourReferenceNumber"] = reference
        answer = requests.get(url, params=params, headers={"Authorization": f"Bearer {token}"},
                              timeout=60)
        answer.raise_for_status()
        batch = answer.json()["transactions"]
        records.extend(batch)
        if len(batch) < 1000:
            return records
        page += 1


def list_under_faults(sb: Any, client: Any, spy: Any) -> dict[str, Any]:
    """List every ACH item of the company with read faults on; compare ids with the truth."""
    truth = [r["achItemId"] for r in service_records(sb)]
    spy.reset()
    with sb.simulate.faults(reads=faults(), seed=7):
        frame = client.ach.list(progress=False)
    got = [int(i) for i in frame["achItemId"]]
    outcomes = spy.outcomes("GET")
    counts = {
        "items": len(truth), "listed": len(got),
        "requests": sum(outcomes.values()), "answered": sum(
            n for o, n in outcomes.items() if o != "lost"),
        "lost answers": outcomes.get("lost", 0), "503": outcomes.get(503, 0),
        "429": outcomes.get(429, 0),
    }
    return {"truth": truth, "got": got, "counts": counts}


def _latest_states(client: Any, references: Sequence[str]) -> dict[str, str]:
    """The journal state of the latest submission entry of each reference."""
    journal = client.journal()
    journal = journal[journal["operation"].isin(["submit", "submit_many"])]
    latest = journal.sort_values("id").groupby("reference")["state"].last()
    return {ref: str(latest.get(ref, "none")) for ref in references}


#: Journal states after which a reference may (and should) be submitted again.
RESENDABLE = frozenset({"failed", "rejected", "none"})


def submit_under_faults(sb: Any, client: Any, spy: Any, *, prefix: str, bulk: int,
                        single: int, chunk: int = 250, max_rounds: int = 30,
                        read_faults: bool = False, seed: int = 11) -> dict[str, Any]:
    """Submit ``bulk`` items in chunks and ``single`` one by one with write faults on
    (and read faults too when ``read_faults``: reconcile's lookups then fail at times).

    The analyst's loop: send what the journal says never arrived, reconcile what was
    lost, repeat. Nothing is re-sent while its journal entry is unknown.
    """
    items = [ach_item(f"{prefix}-{n:06d}", n) for n in range(bulk + single)]
    references = [item["yourReferenceNumber"] for item in items]
    by_reference = dict(zip(references, items, strict=True))
    stats: Counter[str] = Counter()
    spy.reset()
    pending_bulk = references[:bulk]
    pending_single = references[bulk:]
    rounds = 0
    states = dict.fromkeys(references, "none")
    with sb.simulate.faults(writes=faults(), reads=faults() if read_faults else None,
                            seed=seed):
        while any(state != "sent" for state in states.values()) and rounds < max_rounds:
            rounds += 1
            for start in range(0, len(pending_bulk), chunk):
                rows = [by_reference[r] for r in pending_bulk[start:start + chunk]]
                try:
                    client.ach.submit_many(rows)
                except (TransportError, ServerError):
                    stats["bulk calls without a usable answer"] += 1
                except RateLimitError as exc:
                    stats["bulk calls rate limited"] += 1
                    time.sleep(exc.retry_after or 1)
            for reference in pending_single:
                try:
                    client.ach.submit(by_reference[reference])
                except (TransportError, ServerError):
                    stats["single calls without a usable answer"] += 1
                except RateLimitError as exc:
                    stats["single calls rate limited"] += 1
                    time.sleep(exc.retry_after or 1)
            try:
                # settle_after=0: the sandbox stores a request before answering or never.
                settled = client.reconcile(settle_after=0)
            except (TransportError, ServerError, RateLimitError):
                # A lookup failed for good: what was settled stays settled, the rest
                # is reconciled next round.
                stats["reconcile calls interrupted"] += 1
            else:
                stats["reconciled"] += len(settled)
                stats["reconciled as stored"] += int((settled["state"] == "sent").sum())
                stats["reconciled as never arrived"] += int(
                    (settled["state"] == "failed").sum())
            states = _latest_states(client, references)
            pending_bulk = [r for r in references[:bulk] if states[r] in RESENDABLE]
            pending_single = [r for r in references[bulk:] if states[r] in RESENDABLE]
    outcomes = spy.outcomes("POST")
    stored = Counter(r["yourReferenceNumber"] for r in service_records(sb)
                     if str(r["yourReferenceNumber"]).startswith(prefix + "-"))
    states = _latest_states(client, references)
    journal = client.journal()
    journal = journal[journal["reference"].isin(references)]
    counts = {
        "items": len(items), "rounds": rounds,
        "POSTs sent": sum(outcomes.values()),
        "answered": sum(n for o, n in outcomes.items() if o != "lost"),
        "answered 2xx": sum(n for o, n in outcomes.items() if isinstance(o, int) and o < 300),
        "answered 503": outcomes.get(503, 0), "answered 429": outcomes.get(429, 0),
        "lost answers": outcomes.get("lost", 0),
        **stats,
        "stored": sum(stored.values()),
        "duplicates": sum(n - 1 for n in stored.values() if n > 1),
        "journal entries": len(journal),
        "unsettled entries": int((~journal["state"].isin(SETTLED)).sum()),
    }
    return {"references": references, "stored": stored, "states": states, "counts": counts,
            "journal": journal}


def report(title: str, counts: dict[str, Any]) -> str:
    """One line of counts, remembered for the terminal summary and printed (``-s``)."""
    line = f"{title}: " + ", ".join(f"{k} {v}" for k, v in counts.items())
    REPORTS.append(line)
    print(line)
    return line
