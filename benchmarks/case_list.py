"""Cases 1 and 2: listing every ACH item, latency-bound (50 ms added) and CPU-bound (none)."""

from __future__ import annotations

import json
import math
import time
from typing import Any

from benchmarks._harness import Config, Row, fmt_s, interleave
from benchmarks._paynb import baseline_list, build_frame, fetch_pages, paynb_client, paynb_list
from benchmarks._server import Served

__all__ = ["run_cpu_bound", "run_frames", "run_latency_bound"]


def _client_settings(served: Served) -> tuple[int, int]:
    """(page_size, max_workers) of a default client: the baseline pages the same way."""
    client = paynb_client(served)
    page_size = int(getattr(client, "page_size", 200))
    workers = int(getattr(client, "max_workers", 8))
    close = getattr(client, "close", None)
    if close:
        close()
    return page_size, workers


def _same_rows(expected: dict[str, int]) -> Any:
    def check(name: str, frame: Any) -> None:
        if name == "floor":  # raw page bodies, not a frame
            return
        rows = len(frame)
        expected.setdefault("rows", rows)
        if rows != expected["rows"]:
            raise AssertionError(f"{name} returned {rows} rows, expected {expected['rows']}")
    return check


def _compare(served: Served, items: int, rounds: int, warmup: bool, *, floor: bool = False
             ) -> tuple[dict[str, float], int, int, int]:
    """Medians of paynb and the baseline listing ``items`` ACH items (and, with ``floor``,
    of a raw concurrent fetch of the same pages)."""
    page_size, workers = _client_settings(served)
    pages = math.ceil(items / page_size)
    expected: dict[str, int] = {}
    contenders = {"paynb": lambda: paynb_list(served, max_items=items),
                  "baseline": lambda: baseline_list(served, page_size, max_items=items)}
    if floor:
        # What any client could do against this server with as many threads: the page
        # bodies fetched concurrently, nothing parsed or built.
        contenders["floor"] = lambda: fetch_pages(served, page_size, pages, workers)
    medians = interleave(contenders, rounds, warmup=warmup, check=_same_rows(expected))
    return medians, expected["rows"], page_size, workers


def _sandbox(cfg: Config, items: int, latency_ms: float) -> Served:
    """A sandbox whose benchmark company holds at least ``items`` ACH items.

    The demo data splits items between two companies (paynb.sandbox.seed.COMPANIES), so
    a little more than ``items`` over the benchmark company's share is seeded; both sides
    then list exactly ``items``, the number the issue names."""
    from paynb.sandbox.seed import COMPANIES

    share = dict(COMPANIES)["DEMO1"]
    served = cfg.sandboxes.get(math.ceil(items / share * 1.03), latency_ms=latency_ms)
    held = int(json.loads(fetch_pages(served, 1, 1)[0])["total"])
    if held < items:
        raise RuntimeError(f"the benchmark sandbox holds {held:,} items, fewer than {items:,}")
    return served


def run_latency_bound(cfg: Config) -> list[Row]:
    """Case 1: with 50 ms added latency paynb should overlap pages and approach the limit."""
    latency_ms = 50
    sizes = [1_000] if cfg.quick else [20_000, 100_000]
    rows = []
    for n in sizes:
        served = _sandbox(cfg, n, latency_ms)
        medians, got, page_size, workers = _compare(served, n, cfg.rounds, cfg.warmup,
                                                    floor=True)
        pages = math.ceil(got / page_size)
        limit = pages / workers * latency_ms / 1000
        ratio = medians["paynb"] / medians["baseline"]
        to_limit = medians["paynb"] / limit
        rows.append(Row(
            f"1 list {got:,} items, +{latency_ms} ms", fmt_s(medians["paynb"]),
            fmt_s(medians["baseline"]), ratio, fmt_s(limit), "ratio <= 0.2, <= 1.5x limit",
            ratio <= 0.2 and to_limit <= 1.5,
            [f"{pages} pages of {page_size}, {workers} workers; paynb is {to_limit:.2f}x the "
             f"limit (pages / workers x latency); a raw {workers}-thread fetch of the same pages "
             f"(bytes only, nothing parsed) takes {fmt_s(medians['floor'])}, the floor this "
             f"sandbox allows on this machine"]))
    return rows


def run_cpu_bound(cfg: Config) -> list[Row]:
    """Case 2: no added latency; paynb must be no slower, and we say where the time goes."""
    sizes = [1_000] if cfg.quick else [20_000, 100_000]
    rows = []
    for n in sizes:
        served = _sandbox(cfg, n, 0)
        medians, got, page_size, workers = _compare(served, n, cfg.rounds, cfg.warmup)
        ratio = medians["paynb"] / medians["baseline"]
        row = Row(f"2 list {got:,} items, no latency", fmt_s(medians["paynb"]),
                  fmt_s(medians["baseline"]), ratio, "", "ratio <= 1", ratio <= 1)
        rows.append(row)
        if n == sizes[-1]:
            rows += _breakdown(served, got, page_size, workers, cfg, row)
    return rows


def _breakdown(served: Served, n: int, page_size: int, workers: int, cfg: Config,
               total_row: Row) -> list[Row]:
    """Where the time of a full list goes: HTTP, JSON parsing, frame building."""
    import orjson
    import pandas as pd

    pages = math.ceil(n / page_size)
    http = interleave({
        "concurrent": lambda: fetch_pages(served, page_size, pages, workers),
        "sequential": lambda: fetch_pages(served, page_size, pages, 1),
    }, cfg.rounds, warmup=cfg.warmup)
    bodies = fetch_pages(served, page_size, pages, 1)
    parse = interleave({
        "orjson": lambda: [orjson.loads(b)["transactions"] for b in bodies],
        "json": lambda: [json.loads(b)["transactions"] for b in bodies],
    }, cfg.rounds, warmup=cfg.warmup)
    records = [r for b in bodies for r in orjson.loads(b)["transactions"]]
    frame = interleave({
        "paynb": lambda: build_frame(records),
        "baseline": lambda: pd.DataFrame(records),
    }, cfg.rounds, warmup=cfg.warmup)
    total_row.notes.append(
        f"time of {n:,} items: baseline = HTTP {fmt_s(http['sequential'])} (sequential) + "
        f"json {fmt_s(parse['json'])} + pd.DataFrame {fmt_s(frame['baseline'])}; "
        f"paynb = HTTP {fmt_s(http['concurrent'])} ({workers} threads) + "
        f"JSON (orjson {fmt_s(parse['orjson'])}) + typed frame {fmt_s(frame['paynb'])}")
    profile = _profile_list(served, n)
    if profile:
        total_row.notes.append(profile)
    return [
        Row("2 HTTP only, all pages", fmt_s(http["concurrent"]), fmt_s(http["sequential"]),
            http["concurrent"] / http["sequential"], "", "",
            notes=[f"{workers} threads vs one after another, bodies not parsed"]),
        Row("2 JSON parse, all pages", fmt_s(parse["orjson"]), fmt_s(parse["json"]),
            parse["orjson"] / parse["json"], "", "", notes=["orjson vs json"]),
        Row("2 frame from records", fmt_s(frame["paynb"]), fmt_s(frame["baseline"]),
            frame["paynb"] / frame["baseline"], "", "",
            notes=["typed, masked, categorical paynb frame vs plain pd.DataFrame"]),
    ]


def run_frames(cfg: Config) -> list[Row]:
    """Case 2, frames alone (issue 19): paynb's typed frame against ``pd.DataFrame`` of the
    same wire records at 200,000 and 1,000,000 rows, side by side (synthetic ACH records
    of ``benchmarks/_data.py``: fetching a million over HTTP would measure the sandbox)."""
    import pandas as pd

    from benchmarks._data import ach_records

    rows = []
    for n in [2_000, 10_000] if cfg.quick else [200_000, 1_000_000]:
        records = ach_records(n)

        def same_rows(name: str, frame: Any, n: int = n) -> None:
            if len(frame) != n:
                raise AssertionError(f"{name} built {len(frame)} rows of {n}")

        medians = interleave({"paynb": lambda records=records: build_frame(records),
                              "baseline": lambda records=records: pd.DataFrame(records)},
                             cfg.rounds, warmup=cfg.warmup, check=same_rows)
        ratio = medians["paynb"] / medians["baseline"]
        rows.append(Row(
            f"2 frame from {n:,} records", fmt_s(medians["paynb"]),
            fmt_s(medians["baseline"]), ratio, "", "ratio <= 1", ratio <= 1,
            [f"typed, masked, categorical paynb frame (frames.to_frame) vs plain "
             f"pd.DataFrame of the same {n:,} synthetic wire records"]))
        del records
    return rows


def _profile_list(served: Served, items: int) -> str:
    """The top of a cProfile of one single-threaded ``client.ach.list()`` (threads are invisible
    to cProfile, so one worker), summed by library."""
    import cProfile
    import pstats

    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    paynb_list(served, max_items=items, max_workers=1)
    profiler.disable()
    wall = time.perf_counter() - start
    stats = pstats.Stats(profiler)
    buckets: dict[str, float] = {}
    for (filename, _, _), (_, _, tottime, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        buckets[_bucket(filename)] = buckets.get(_bucket(filename), 0.0) + tottime
    top = sorted(buckets.items(), key=lambda kv: -kv[1])[:6]
    parts = ", ".join(f"{name} {fmt_s(sec)}" for name, sec in top)
    return f"cProfile of list() with 1 worker ({fmt_s(wall)} wall, self time by library): {parts}"


def _bucket(filename: str) -> str:
    path = filename.replace("\\", "/")
    for key, name in (("/paynb/frames", "paynb.frames"), ("/paynb/", "paynb other"),
                      ("/pandas/", "pandas"), ("/pyarrow/", "pyarrow"), ("/numpy/", "numpy"),
                      ("/requests/", "requests"), ("/urllib3/", "urllib3"),
                      ("/http/", "http.client"), ("/json/", "json"), ("socket", "socket I/O")):
        if key in path:
            return name
    if path.startswith("~"):
        return "builtins (sockets, parsing)"
    return "other"

