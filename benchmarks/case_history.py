"""Case 10: the local history (Delta tables, issue 31) against listing from the sandbox.

With the benchmark company's ACH items (1,000,000 and a few more): the first sync
(backfill) against listing them; reading them all back; one month of returns; an
incremental sync of 1,000 changes against its floor (listing those changes, plus writing
the same rows and events by hand with deltalake into an identical table), and against the
list alone with 50 ms of latency; the rows such a write rewrites with paynb's layout and
with deltalake's default one; the store's size per item beside the frame's memory.
"""

from __future__ import annotations

import datetime as dt
import os
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
from benchmarks.case_list import _bucket, _sandbox

__all__ = ["run"]

#: Incremental syncs measured, and more with 50 ms added to every request (context).
SYNC_ROUNDS = 8
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


def _files(table_path: Path) -> dict[str, int]:
    """The files of a Delta table's current version: path -> rows."""
    import pyarrow as pa
    from deltalake import DeltaTable

    actions = pa.table(DeltaTable(str(table_path)).get_add_actions(flatten=True))
    return dict(zip(actions.column("path").to_pylist(),
                    actions.column("num_records").to_pylist(), strict=True))


def _rewritten(before: dict[str, int], after: dict[str, int]) -> int:
    """Rows of the files a write removed (and wrote again, less what it replaced)."""
    return sum(rows for path, rows in before.items() if path not in after)


def _by_hand(table_path: Path, events_path: Path, rows: Any, events: Any,
             merge: bool) -> None:
    """The floor's write: ``rows`` upserted by id into the table, ``events`` appended."""
    from deltalake import DeltaTable, write_deltalake

    table = DeltaTable(str(table_path))
    ids = ", ".join(str(i) for i in rows.column("achItemId").to_pylist())
    months = ", ".join(f"'{m}'" for m in sorted(set(rows.column("month").to_pylist())))
    if merge:
        table.merge(rows, 't.company = s.company AND t.month = s.month AND '
                    't."achItemId" = s."achItemId"', source_alias="s", target_alias="t",
                    streamed_exec=False).when_matched_update_all() \
            .when_not_matched_insert_all().execute()
    else:
        write_deltalake(table, rows, mode="overwrite", partition_by=["company", "month"],
                        predicate=f"company = 'DEMO1' AND month IN ({months}) AND "
                                  f'"achItemId" IN ({ids})')
    write_deltalake(str(events_path), events, mode="append", partition_by=["kind", "company"])


def _profile_sync(served: Served, client: Any, chosen: list[int], day: dt.date) -> str:
    """One more incremental sync of ``chosen`` returns, under cProfile: its wall time, the
    main thread's self time by library, and paynb's functions by cumulative time (the
    pages are fetched on other threads, which cProfile does not see: their time shows as
    waits on futures, ``builtins``)."""
    import cProfile
    import pstats

    _force_returns(served, chosen, day)
    profiler = cProfile.Profile()
    profiler.enable()
    wall, _ = timed(lambda: client.sync(kinds="ach", progress=False))
    profiler.disable()
    stats = pstats.Stats(profiler)
    buckets: dict[str, float] = {}
    paynb: list[tuple[float, str]] = []
    for (filename, _, function), (_, _, tottime, cumtime, _) in \
            stats.stats.items():  # type: ignore[attr-defined]
        buckets[_bucket(filename)] = buckets.get(_bucket(filename), 0.0) + tottime
        if "/paynb/history/" in filename.replace("\\", "/"):
            paynb.append((cumtime, f"{Path(filename).stem}.{function}"))
    top = sorted(buckets.items(), key=lambda kv: -kv[1])[:6]
    calls = sorted(paynb, reverse=True)[1:9]  # the first is sync() itself
    return (f"cProfile of one more incremental sync ({fmt_s(wall)} wall): main thread's self "
            f"time by library {', '.join(f'{n} {fmt_s(t)}' for n, t in top)}; paynb.history "
            f"by cumulative time {', '.join(f'{n} {fmt_s(t)}' for t, n in calls)}")


def _spread(times: list[float], floors: list[float]) -> str:
    ratios = ", ".join(f"{s / b:.2f}" for s, b in zip(times, floors, strict=True))
    return f"{ratios} (slowest sync {fmt_s(max(times))})"


def _reads(cfg: Config, served: Served, client: Any, store: Path, stored: int,
           backfill: float, rounds: int) -> list[Row]:
    """The backfill, reading everything back and one month of returns, each against
    listing every item."""
    import paynb

    rows: list[Row] = []

    def check(name: str, frame: Any) -> None:
        if name in ("history", "baseline") and len(frame) != stored:
            raise AssertionError(f"{name} returned {len(frame):,} rows, not {stored:,}")


    medians = interleave({"history": lambda: paynb.History(store).ach(),
                          "baseline": lambda: paynb_list(served)},
                         rounds, warmup=cfg.warmup, check=check)
    listing = medians["baseline"]
    rows.append(Row(f"10 history backfill of {stored:,} items vs list", fmt_s(backfill),
                    fmt_s(listing), backfill / listing, target="ratio <= 1.1",
                    met=backfill / listing <= 1.1,
                    notes=["one transaction: the pages framed batch by batch as they "
                           "come, then written by deltalake; the list's time is the "
                           f"median of {rounds} round(s) below"]))
    ratio = medians["history"] / listing
    rows.append(Row(f"10 history.ach() of {stored:,} stored items vs list, no latency",
                    fmt_s(medians["history"]), fmt_s(listing), ratio,
                    target="ratio <= 0.1", met=ratio <= 0.1))

    frame = paynb.History(store).ach(columns=["returnDate", "itemStatus"])
    months = frame.loc[frame["itemStatus"] == "R", "returnDate"].dt.strftime("%Y-%m")
    month = months.value_counts().idxmax()
    first = dt.date.fromisoformat(f"{month}-01")
    last = (first + dt.timedelta(days=32)).replace(day=1) - dt.timedelta(days=1)
    one_month = {
        "received": lambda: paynb.History(store).ach(start=first, end=last, status="R"),
        "returned": lambda: paynb.History(store).ach(
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
        rows.append(Row(f"10 history: {label} ({got[name]:,}) vs list all",
                        fmt_s(month_medians[name]), fmt_s(listing), ratio,
                        target="ratio <= 0.02", met=ratio <= 0.02))
    return rows


def run(cfg: Config) -> list[Row]:
    """Case 10 (see the module's description)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    from deltalake import DeltaTable, write_deltalake

    import paynb

    items = cfg.size(1_000_000, 2_000)
    changes = cfg.size(1_000, 50)
    rounds = max(1, min(cfg.rounds, 3)) if not cfg.quick else 1
    sync_rounds = SYNC_ROUNDS if not cfg.quick else 1
    latency_rounds = LATENCY_ROUNDS if not cfg.quick else 0
    served = _sandbox(cfg, items, 0)
    folder = Path(tempfile.mkdtemp(prefix="paynb-bench-history-"))
    store = folder / "store"
    rows: list[Row] = []
    try:
        client = paynb_client(served)
        backfill, summary = timed(lambda: client.sync(path=store, kinds="ach",
                                                      progress=False))
        stored = int(summary["written"].iloc[0])
        if os.environ.get("BENCH_HISTORY_SYNC_ONLY") != "1":
            rows += _reads(cfg, served, client, store, stored, backfill, rounds)

        # Copies of the ACH table and of the events for the floor's writes by hand:
        # paynb's layout (two copies: the write paynb makes, and a MERGE), and the same
        # rows laid out by deltalake's defaults (one file per month, as written at once).
        copies = {name: folder / name for name in ("floor", "merge", "default")}
        for name in ("floor", "merge"):
            shutil.copytree(store, copies[name])
        whole = DeltaTable(str(store / "ach")).to_pyarrow_table()
        whole = whole.take(pc.sort_indices(whole, [("_order", "ascending")]))
        write_deltalake(str(copies["default"] / "ach"), whole,
                        partition_by=["company", "month"])
        shutil.copytree(store / "events", copies["default"] / "events")
        del whole

        # Returns come back days to weeks after an item is sent: the changes fall on the
        # most recent items sent or still waiting (a random sample of the last 50,000).
        recent = paynb.History(store).ach(status=["S", "W"], columns=["itemStatus"])
        recent = recent.sort_values("achItemId")["achItemId"]
        pool = recent.iloc[-50 * changes:].sample(
            n=changes * (sync_rounds + latency_rounds + 1), random_state=8).tolist()
        lister = paynb_client(served)
        lister.ach.list(max_items=1, progress=False)

        def measure(numbers: range, latency_ms: float) -> dict[str, list[float]]:
            seen: dict[str, list[float]] = {key: [] for key in (
                "sync", "list", "floor", "merge", "default", "sync rows", "floor rows",
                "default rows")}
            for number in numbers:
                day = dt.date(2030, 1, 1) + dt.timedelta(days=3 * number)
                chosen = [int(i) for i in pool[number * changes:(number + 1) * changes]]
                _force_returns(served, chosen, day)
                served.set_latency(latency_ms)
                before = _files(store / "ach")
                try:
                    seconds, result = timed(lambda: client.sync(kinds="ach", progress=False))
                    listed, changed = timed(lambda day=day: lister.ach.list(
                        status="R", returned_from=day, progress=False))
                finally:
                    served.set_latency(0)
                if int(result["events"].iloc[0]) < changes or len(changed) != changes:
                    raise AssertionError(f"the sync recorded {result['events'].iloc[0]} "
                                         f"changes, the list {len(changed)}, of {changes}")
                seen["sync rows"].append(_rewritten(before, _files(store / "ach")))
                # The same rows and events as the sync wrote, written by hand.
                table = DeltaTable(str(store / "ach"))
                written = table.to_pyarrow_dataset().to_table(
                    filter=pc.field("_seenAt") == pc.max(
                        table.to_pyarrow_dataset().to_table(columns=["_seenAt"])
                        .column("_seenAt")))
                events = DeltaTable(str(store / "events")).to_pyarrow_dataset().to_table(
                    filter=pc.field("seenAt") == written.column("_seenAt")[0])
                for name in ("floor", "merge", "default"):
                    old = _files(copies[name] / "ach")
                    took, _ = timed(lambda name=name, rows=written, events=events: _by_hand(
                        copies[name] / "ach", copies[name] / "events", rows, events,
                        merge=name == "merge"))
                    seen[name].append(took)
                    if name != "merge":
                        seen[f"{name} rows"].append(_rewritten(old, _files(
                            copies[name] / "ach")))
                seen["sync"].append(seconds)
                seen["list"].append(listed)
            return seen

        seen = measure(range(sync_rounds), 0)
        median = {key: statistics.median(values) for key, values in seen.items()}
        sync_s = median["sync"]
        for name, label, target in (
                ("merge", "its floor (list + MERGE by hand)", "ratio <= 1.3"),
                ("floor", "list + rows replaced by id by hand", "")):
            floors = [a + b for a, b in zip(seen["list"], seen[name], strict=True)]
            floor_s = statistics.median(floors)
            ratio = sync_s / floor_s
            rows.append(Row(
                f"10 incremental sync of {changes:,} changes over {stored:,} stored vs {label}",
                fmt_s(sync_s), fmt_s(floor_s), ratio, target=target,
                met=ratio <= 1.3 if target else None,
                notes=[f"medians of {len(floors)} round(s); each round's ratio "
                       f"{_spread(seen['sync'], floors)}",
                       f"the list of the changes ({fmt_s(median['list'])}, status R, their "
                       "return date, a client with its token), then the same rows and "
                       "events written by hand with deltalake into a copy of the tables "
                       f"({fmt_s(median[name])}: "
                       + ("a MERGE on the id, the events appended" if name == "merge" else
                          "an overwrite whose predicate lists the ids (as fast as "
                          "deltalake writes this change), the events appended") + ")"]))
        rows.append(Row(f"10 rows a sync of {changes:,} changes rewrites, paynb's layout vs "
                        "deltalake's default", f"{median['sync rows']:,.0f} rows",
                        f"{median['default rows']:,.0f} rows",
                        median["sync rows"] / max(1.0, median["default rows"]),
                        notes=["rows of the files the write removed (and wrote again); "
                               "paynb: files of about 2 MiB, ids in order; default: the "
                               "same rows written at once by deltalake (one file per "
                               f"month). The same write by hand takes {fmt_s(median['floor'])}"
                               f" with paynb's layout, {fmt_s(median['default'])} with the "
                               "default one",
                               "rows rewritten round by round: the sync "
                               f"{', '.join(f'{n:,}' for n in seen['sync rows'])}; by hand, "
                               "the rows replaced by id (which leaves the rest of their files "
                               "unsorted) "
                               f"{', '.join(f'{n:,}' for n in seen['floor rows'])}"]))
        if latency_rounds:
            late = measure(range(sync_rounds, sync_rounds + latency_rounds), LATENCY_MS)
            sync_s, list_s = statistics.median(late["sync"]), statistics.median(late["list"])
            rows.append(Row(f"10 incremental sync as above, {LATENCY_MS} ms added latency, "
                            "vs the list alone", fmt_s(sync_s), fmt_s(list_s),
                            sync_s / list_s,
                            notes=[f"context, no target: {len(late['sync'])} more round(s) "
                                   f"with {LATENCY_MS} ms added to every request of both "
                                   f"sides; each round's ratio "
                                   f"{_spread(late['sync'], late['list'])}"]))

        # Profiled once, after the rounds measured (its returns dated after theirs).
        floor_row = next(row for row in rows if "its floor" in row.case)
        floor_row.notes.append(_profile_sync(
            served, client, [int(i) for i in pool[-changes:]],
            dt.date(2030, 1, 1) + dt.timedelta(days=3 * (sync_rounds + latency_rounds))))

        everything = paynb.History(store).ach()
        memory = everything.memory_usage(deep=True).sum() / len(everything)
        table = pa.table(DeltaTable(str(store / "ach")).get_add_actions(flatten=True))
        on_disk = sum(table.column("size_bytes").to_pylist())
        size = on_disk / stored
        rows.append(Row(f"10 store bytes/item vs frame bytes/item, {stored:,} items",
                        fmt_bytes(size), fmt_bytes(memory), size / memory,
                        target="ratio <= 0.2", met=size / memory <= 0.2,
                        notes=[f"the ACH table's current files {fmt_bytes(on_disk)} "
                               f"({table.num_rows} files); frame memory by "
                               "memory_usage(deep=True)"]))
        client.close()
        lister.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return rows
