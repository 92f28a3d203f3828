"""Case 12: the morning run (issue 34) against the incremental sync it starts with.

With the benchmark company's ACH items (1,000,000 and a few more) in a history store, a
day goes by before each round, of one of two kinds:

- a **banking day**: the sandbox's clock moves to the next banking day (a weekend or a
  holiday passes with it, as for a run scheduled Monday to Friday: the items received
  since are sent, the scheduled returns and NOCs come in) and a day's new items are
  submitted (the company receives about 5,500 a day: a million over 180 days);
- a **quiet day**: the day's new items only, the clock still (nothing changes status, as
  over a weekend). Its sync is the cheapest a day's sync gets, so the run against it
  says whether the checks cost less than the fetch even then (on a banking day the
  sync's walk of the sent list is most of the run, and the ratio would look good for
  that reason alone).

Then, interleaved, either the incremental sync alone (``client.sync(kinds=("ach", "rcc",
"nocs"))``, what the run syncs) or the whole run without its report (the same sync, then
every check) is timed, each over a day of its own. The target is the issue's, for both
kinds of day: the run at most twice the sync, so that the checks cost less than the fetch.
The report (a kernel started, the notebook run, the page rendered) is timed too, as
context: its cost does not depend on the history's size.
"""

from __future__ import annotations

import math
import shutil
import statistics
import tempfile
from pathlib import Path
from typing import Any

from benchmarks._harness import Config, Row, fmt_s, timed
from benchmarks._paynb import paynb_client
from benchmarks.case_list import _sandbox

__all__ = ["run"]

#: Rounds of each side (each over a day of its own).
ROUNDS = 4
#: Days of history the sandbox's items span (paynb.sandbox.seed).
DEMO_DAYS = 180


def _new_items(count: int, day: int) -> list[dict[str, Any]]:
    """A day's new debits of the benchmark company (valid, distinct references)."""
    return [{"firstSignerFirstName": "Bench", "firstSignerLastName": f"Day{day}",
             "state": "IL", "zip": "62701", "bankRoutingNumber": "021000021",
             "bankAccountNumber": f"{4_000_000 + day * 10_000 + n}",
             "yourReferenceNumber": f"BENCH-MON-{day}-{n}", "amount": "25.00",
             "achTransactionType": "Debit"} for n in range(count)]


#: The kinds of day the case times (see the module's description): whether the clock moves.
DAYS = {"banking day": True, "quiet day": False}


def _day_passes(served: Any, client: Any, day: int, count: int, *, clock: bool) -> None:
    """A day's new items arrive, in bulk submissions of 1,000; with ``clock``, the clock
    moves to the next banking day first (the sandbox's returns and NOCs due come in,
    items are sent)."""
    import requests

    from paynb import calendar

    while clock:
        answer = requests.post(f"{served.base_url}/sandbox/clock/advance", json={"days": 1},
                               timeout=600)
        answer.raise_for_status()
        clock = not bool(calendar.is_banking_day(answer.json()["now"][:10]))
    items = _new_items(count, day)
    for start in range(0, len(items), 1000):
        client.ach.submit_many(items[start:start + 1000])


def run(cfg: Config) -> list[Row]:
    """Case 12 (see the module's description)."""
    from paynb import monitor

    items = cfg.size(1_000_000, 2_000)
    per_day = math.ceil(items / DEMO_DAYS)
    rounds = ROUNDS if not cfg.quick else 1
    served = _sandbox(cfg, items, 0)
    folder = Path(tempfile.mkdtemp(prefix="paynb-bench-monitor-"))
    try:
        client = paynb_client(served, journal=folder / "journal.sqlite3")
        backfill, _ = timed(lambda: client.sync(path=folder / "history",
                                                kinds=monitor.SYNCED_KINDS, progress=False))
        monitor.run(client, report=False, notify=[])  # the first run: a baseline ledger
        stored = len(client.history.ach(columns=["itemStatus"]))
        rows = []
        day = 0
        sync_medians: dict[str, float] = {}
        for kind, clock in DAYS.items():
            times: dict[str, list[float]] = {"sync": [], "run": []}
            checks: list[float] = []
            for _ in range(rounds):
                for side in ("sync", "run"):
                    day += 1
                    _day_passes(served, client, day, per_day, clock=clock)
                    if side == "sync":
                        seconds, _ = timed(lambda: client.sync(kinds=monitor.SYNCED_KINDS,
                                                               progress=False))
                    else:
                        seconds, report = timed(lambda: monitor.run(client, report=False,
                                                                    notify=[]))
                        checks.append(seconds - float(report.sync["seconds"].sum()))
                    times[side].append(seconds)
            sync_s, run_s = statistics.median(times["sync"]), statistics.median(times["run"])
            sync_medians[kind] = sync_s
            ratio = run_s / sync_s
            spread = ", ".join(f"{r / s:.2f}" for r, s in zip(times["run"], times["sync"],
                                                            strict=True))
            what = (f"the clock on to the next banking day, {per_day:,} new items" if clock
                    else f"{per_day:,} new items, the clock still")
            rows.append(Row(
                f"12 morning run (no report) vs its incremental sync alone, {stored:,} "
                f"stored, a {kind} ({what})", fmt_s(run_s), fmt_s(sync_s), ratio,
                target="ratio <= 2", met=ratio <= 2,
                notes=[f"medians of {rounds} round(s) each, interleaved, each over a day "
                       f"of its own; each round's ratio {spread}; the checks alone "
                       f"(the run less its own sync) {fmt_s(statistics.median(checks))}, "
                       f"rounds {', '.join(fmt_s(c) for c in checks)}"]))
        day += 1
        _day_passes(served, client, day, per_day, clock=True)
        with_report, report = timed(lambda: monitor.run(client, reports=folder / "reports",
                                                        notify=[]))
        if report.html is None or not report.html.exists():
            raise AssertionError(f"the report was not written: {report.problems}")
        rows[0].notes.append(f"first sync (backfill) of ACH, RCC and NOCs: {fmt_s(backfill)}")
        banking = sync_medians["banking day"]
        rows.append(Row("12 morning run with its report (kernel, notebook, HTML, workbook), "
                        "a banking day, context", fmt_s(with_report), fmt_s(banking),
                        with_report / banking,
                        notes=["the report's cost is a kernel start and the notebook's "
                               "run: it does not grow with the history"]))
        return rows
    finally:
        shutil.rmtree(folder, ignore_errors=True)
