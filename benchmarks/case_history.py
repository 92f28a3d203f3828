"""Case 10: the local history (issue 17) against listing from the sandbox.

With the benchmark company's ACH items (1,000,000 and a few more) synced into a
store: reading them all back, one month of returned items, an incremental sync of
1,000 changes (and, for context, the same with 50 ms added to every request), and the
store's size per item beside the frame's memory per item.
"""

from __future__ import annotations

import datetime as dt
import shutil
import statistics
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import requests

from benchmarks._harness import Config, Row, fmt_bytes, fmt_s, interleave, timed
from benchmarks._paynb import paynb_client, paynb_list
from benchmarks._server import Served
from benchmarks.case_list import _sandbox

__all__ = ["run"]

#: Incremental syncs measured (each against a list of its changes).
SYNC_ROUNDS = 8
#: More syncs, with this latency added to every request: the same comparison with a
#: network in between (context, no target: case 1 uses the same latency).
LATENCY_MS = 50
LATENCY_ROUNDS = 4


def _force_returns(served: Served, item_ids: list[int], day: dt.date) -> None:
    """Put ``item_ids`` into R with return date ``day`` (the sandbox's simulation API)."""
    session = requests.Session()
    url = f"{served.base_url}/sandbox/companycode/{served.company_code}/ach/{{}}/status"

    def force(item_id: int) -> None:
        answer = session.post(url.format(item_id), timeout=60,
                              json={"status": "R", "code": "R01", "date": day.isoformat()})
        answer.raise_for_status()

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(force, item_ids))
    session.close()


def _spread(sync_times: list[float], list_times: list[float]) -> str:
    """Each round's sync time over its list's, in order, and the slowest sync."""
    ratios = ", ".join(f"{s / b:.2f}" for s, b in zip(sync_times, list_times, strict=True))
    return f"{ratios} (slowest sync {fmt_s(max(sync_times))})"


def _store_bytes(path: Path, area: str = "items") -> int:
    return sum(f.stat().st_size for f in (path / area).rglob("*.parquet"))


def run(cfg: Config) -> list[Row]:
    """Case 10 (see the module's description)."""
    import paynb

    items = cfg.size(1_000_000, 2_000)
    changes = cfg.size(1_000, 50)
    rounds = max(1, min(cfg.rounds, 3)) if not cfg.quick else 1
    # The syncs are cheap to repeat and noisy (a round's ratio swung from 1.8 to 2.7 within
    # one run): eight, so that the median is steady, and so that the last is a sync that
    # merges the small files the syncs before it wrote (seven, with its own the eighth, see
    # history._sync._to_merge) in the items, the returns and the events. A backfill's files
    # are big and are not merged, save a fragment of a few rows.
    sync_rounds = SYNC_ROUNDS if not cfg.quick else 1
    served = _sandbox(cfg, items, 0)
    folder = Path(tempfile.mkdtemp(prefix="paynb-bench-history-"))
    rows: list[Row] = []
    try:
        client = paynb_client(served)
        backfill, summary = timed(lambda: client.sync(path=folder, kinds="ach",
                                                      progress=False))
        stored = int(summary["written"].iloc[0])

        def check(name: str, frame: Any) -> None:
            if name in ("history", "baseline") and len(frame) != stored:
                raise AssertionError(f"{name} returned {len(frame):,} rows, not {stored:,}")

        medians = interleave({"history": lambda: paynb.History(folder).ach(),
                              "baseline": lambda: paynb_list(served)},
                             rounds, warmup=cfg.warmup, check=check)
        listing = medians["baseline"]
        ratio = medians["history"] / listing
        rows.append(Row(f"10 history.ach() of {stored:,} stored items vs list, no latency",
                        fmt_s(medians["history"]), fmt_s(listing), ratio,
                        target="ratio <= 0.1", met=ratio <= 0.1,
                        notes=[f"first sync (backfill) of the {stored:,} items: "
                               f"{fmt_s(backfill)} ({backfill / listing:.2f}x the list)"]))

        frame = paynb.History(folder).ach(columns=["returnDate", "itemStatus"])
        months = frame.loc[frame["itemStatus"] == "R", "returnDate"].dt.strftime("%Y-%m")
        month = months.value_counts().idxmax()
        first = dt.date.fromisoformat(f"{month}-01")
        last = (first + dt.timedelta(days=32)).replace(day=1) - dt.timedelta(days=1)
        one_month = {
            # The returns of the items received in one month: one partition is read.
            "received": lambda: paynb.History(folder).ach(start=first, end=last, status="R"),
            # The returns dated in one month: items received over several months.
            "returned": lambda: paynb.History(folder).ach(
                status="R", returned_from=first, returned_to=last),
            "service filter": lambda: client.ach.list(
                status="R", returned_from=first,
                returned_to=dt.datetime.combine(last, dt.time(23, 59, 59)), progress=False)}
        got: dict[str, int] = {}
        month_medians = interleave(one_month, rounds, warmup=cfg.warmup,
                                   check=lambda name, f: got.setdefault(name, len(f)))
        if got["returned"] != got["service filter"]:
            raise AssertionError(f"one month of returns: history {got['returned']} rows, "
                                 f"the service's filtered list {got['service filter']}")
        for name, label in (("received", f"returns of the items received in {month}"),
                            ("returned", f"returns dated in {month}")):
            ratio = month_medians[name] / listing
            notes = [] if name == "received" else [
                f"the service's own filtered list of the same {got[name]:,} returns (status "
                f"R, returnDate range): {fmt_s(month_medians['service filter'])}"]
            rows.append(Row(f"10 history: {label} ({got[name]:,}) vs list all",
                            fmt_s(month_medians[name]), fmt_s(listing), ratio,
                            target="ratio <= 0.02", met=ratio <= 0.02, notes=notes))

        # Returns come back days to weeks after an item is sent: the changes fall on the
        # most recent items sent or still waiting (a random sample of the last 50,000).
        latency_rounds = LATENCY_ROUNDS if not cfg.quick else 0
        recent = paynb.History(folder).ach(status=["S", "W"], columns=["itemStatus"])
        recent = recent.sort_values("achItemId")["achItemId"]
        pool = recent.iloc[-50 * changes:].sample(n=changes * (sync_rounds + latency_rounds),
                                                  random_state=8).tolist()
        # The lists' own client, its token already fetched, as the sync's is: both sides
        # are timed from their first request, not from opening a client.
        lister = paynb_client(served)
        lister.ach.list(max_items=1, progress=False)

        def measure(numbers: range, latency_ms: float) -> tuple[list[float], list[float]]:
            sync_times, list_times = [], []
            for number in numbers:
                day = dt.date(2030, 1, 1) + dt.timedelta(days=3 * number)
                chosen = [int(i) for i in pool[number * changes:(number + 1) * changes]]
                _force_returns(served, chosen, day)
                served.set_latency(latency_ms)
                try:
                    seconds, result = timed(lambda: client.sync(kinds="ach", progress=False))
                    listed, frame = timed(lambda day=day: lister.ach.list(
                        status="R", returned_from=day, progress=False))
                finally:
                    served.set_latency(0)
                # At least the 1,000: the sandbox's own life may send a few waiting items
                # (W -> S at their cut-off) meanwhile, which the sync rightly records too.
                if int(result["events"].iloc[0]) < changes:
                    raise AssertionError(f"the sync recorded {result['events'].iloc[0]} "
                                         f"changes, fewer than {changes}")
                returned = paynb.History(folder).ach(status="R", returned_from=day,
                                                     returned_to=day, columns=["itemStatus"])
                if sorted(returned["achItemId"].tolist()) != sorted(chosen):
                    raise AssertionError("the store does not hold exactly the items returned")
                if len(frame) != changes:
                    raise AssertionError(f"the list of the changes gave {len(frame)} rows")
                sync_times.append(seconds)
                list_times.append(listed)
            return sync_times, list_times

        sync_times, list_times = measure(range(sync_rounds), 0)
        sync_s, list_s = statistics.median(sync_times), statistics.median(list_times)
        ratio = sync_s / list_s
        rows.append(Row(f"10 incremental sync of {changes:,} changes over {stored:,} stored",
                        fmt_s(sync_s), fmt_s(list_s), ratio, target="ratio <= 2",
                        met=ratio <= 2,
                        notes=[f"medians of {len(sync_times)} round(s); each round's ratio "
                               f"{_spread(sync_times, list_times)}",
                               "baseline: a client (its token already fetched, as the "
                               "sync's is) listing exactly the changed items "
                               "(status R, their return date). The sync asks its requests "
                               "one group after another: the returns poll after the "
                               "watermark (as many pages at once as its last poll had), "
                               "then the list's last page (its total says it is the last) "
                               "while it frames the poll's items, then the count of the "
                               "returns of the day before the watermark (the previous "
                               "round's, counted instead of read again) and the W and V "
                               "counts while it fingerprints and writes them (files on "
                               "threads); it looks up the stored rows of the changed ids "
                               "in the items files' indexes (index/, a binary "
                               "search, no Parquet read)"]))
        if latency_rounds:
            sync_times, list_times = measure(
                range(sync_rounds, sync_rounds + latency_rounds), LATENCY_MS)
            sync_s, list_s = statistics.median(sync_times), statistics.median(list_times)
            rows.append(Row(f"10 incremental sync as above, {LATENCY_MS} ms added latency",
                            fmt_s(sync_s), fmt_s(list_s), sync_s / list_s,
                            notes=[f"context, no target: {len(sync_times)} more round(s) "
                                   f"with {LATENCY_MS} ms added to every request of both "
                                   "sides (case 1's latency); each round's ratio "
                                   f"{_spread(sync_times, list_times)}"]))

        everything = paynb.History(folder).ach()
        memory = everything.memory_usage(deep=True).sum() / len(everything)
        on_disk = _store_bytes(folder) + _store_bytes(folder, "returns")
        indexes = sum(f.stat().st_size for f in (folder / "index").rglob("*.arrow"))
        size = on_disk / stored
        rows.append(Row(f"10 store bytes/item vs frame bytes/item, {stored:,} items",
                        fmt_bytes(size), fmt_bytes(memory), size / memory,
                        notes=[f"store {fmt_bytes(on_disk)} on disk (Parquet, snappy; of it "
                               f"{fmt_bytes(_store_bytes(folder, 'returns'))} the returns "
                               "copied by return month), frame memory by "
                               "memory_usage(deep=True); besides, the sync's indexes "
                               f"(index/, Arrow IPC) {fmt_bytes(indexes)}"]))
        client.close()
        lister.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rows
