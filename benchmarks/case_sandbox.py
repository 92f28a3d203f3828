"""Case 7: the sandbox under load, page latency as the store grows, and seeding time.

Load comes from plain ``requests`` sessions on threads of the harness process
(the sandbox is in its own process), so the figures are the server's, not the
client library's. "baseline" for throughput is one client alone: the ratio
says how much eight concurrent clients get out of the server on two cores.
"""

from __future__ import annotations

import statistics
import threading
import time
from collections.abc import Callable
from typing import Any

import requests

from benchmarks._data import ach_submissions
from benchmarks._harness import Config, Row, fmt_s
from benchmarks._paynb import ACH_PATH, token
from benchmarks._server import SandboxProcess, Served

__all__ = ["run"]


def _session(served: Served) -> tuple[requests.Session, str]:
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {token(session, served)}"
    return session, served.base_url + ACH_PATH.format(company=served.company_code)


def _throughput(served: Served, clients: int, seconds: float,
                request: Callable[[requests.Session, str, int, int], requests.Response]) -> float:
    """Requests per second of ``clients`` threads, each with its own session, for ``seconds``."""
    sessions = [_session(served) for _ in range(clients)]
    counts = [0] * clients
    failures: list[str] = []
    start = threading.Barrier(clients + 1)
    stop_at: list[float] = []

    def work(k: int) -> None:
        session, url = sessions[k]
        start.wait()
        i = 0
        while time.perf_counter() < stop_at[0]:
            answer = request(session, url, k, i)
            if answer.status_code != 200:
                failures.append(f"{answer.status_code} {answer.text[:200]}")
                return
            i += 1
        counts[k] = i

    threads = [threading.Thread(target=work, args=(k,)) for k in range(clients)]
    for thread in threads:
        thread.start()
    stop_at.append(time.perf_counter() + seconds)
    began = time.perf_counter()
    start.wait()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - began
    for session, _ in sessions:
        session.close()
    if failures:
        raise RuntimeError(f"load request failed: {failures[0]}")
    return sum(counts) / elapsed


def _list_page(total: int) -> Callable[[requests.Session, str, int, int], requests.Response]:
    pages = max(total // 100, 1)

    def request(session: requests.Session, url: str, k: int, i: int) -> requests.Response:
        page = (k * 7919 + i * 104729) % pages  # spread over the whole list
        return session.get(url, params={"page": page, "pageSize": 100}, timeout=60)
    return request


def _submit(tag: str) -> Callable[[requests.Session, str, int, int], requests.Response]:
    body = ach_submissions(1, invalid_share=0)[0]

    def request(session: requests.Session, url: str, k: int, i: int) -> requests.Response:
        item = dict(body, yourReferenceNumber=f"LOAD-{tag}-{k}-{i}")
        return session.post(url, json=item, timeout=60)
    return request


def _total(served: Served) -> int:
    session, url = _session(served)
    with session:
        answer = session.get(url, params={"page": 0, "pageSize": 1}, timeout=60)
        answer.raise_for_status()
        return int(answer.json()["total"])


_QUERIES: dict[str, Callable[[int], dict[str, Any]]] = {
    "first page": lambda total: {"page": 0, "pageSize": 100},
    "last full page": lambda total: {"page": max(total // 100 - 1, 0), "pageSize": 100},
    # Every return date, so that both stores fill the page: a narrow window would hold a
    # dozen items in the small store and a full page in the big one, which is not the same page.
    "poll B/I/R by returnDate": lambda total: {
        "itemStatus": ["B", "I", "R"], "returnDateStart": "2000-01-01T00:00:00.000",
        "returnDateEnd": "2100-01-01T00:00:00.000", "page": 0, "pageSize": 100},
}


def _latencies(served: Served, repeats: int) -> dict[str, tuple[float, int]]:
    """Median seconds of each query of :data:`_QUERIES`, and the records on its page."""
    total = _total(served)
    session, url = _session(served)
    medians = {}
    with session:
        for name, params in _QUERIES.items():
            query = params(total)
            samples = []
            for _ in range(repeats + 1):
                began = time.perf_counter()
                answer = session.get(url, params=query, timeout=60)
                samples.append(time.perf_counter() - began)
                answer.raise_for_status()
            medians[name] = (statistics.median(samples[1:]), len(answer.json()["transactions"]))
    return medians


def run(cfg: Config) -> list[Row]:
    """Throughput with 8 clients, page latency at 10,000 vs 1,000,000 items, seeding time."""
    small_n, big_n = cfg.size(10_000, 1_000), cfg.size(1_000_000, 5_000)
    seconds = 0.3 if cfg.quick else 5.0
    repeats = 5 if cfg.quick else 30
    rows = []
    small = cfg.sandboxes.get(small_n, latency_ms=0)
    small_latency = _latencies(small, repeats)
    total = _total(small)
    makers: dict[str, Callable[[str], Any]] = {
        "list page of 100": lambda tag: _list_page(total),
        "submit one ACH item": _submit,  # a fresh reference number per run
    }
    for name, make in makers.items():
        one, eight = [], []
        for r in range(1 if cfg.quick else 3):
            one.append(_throughput(small, 1, seconds, make(f"one{r}")))
            eight.append(_throughput(small, 8, seconds, make(f"eight{r}")))
        solo, crowd = statistics.median(one), statistics.median(eight)
        rows.append(Row(f"7 sandbox {name}, 8 clients", f"{crowd:,.0f} req/s",
                        f"{solo:,.0f} req/s (1 client)", crowd / solo, "", "", None,
                        [f"ratio = 8-client over 1-client throughput, {small_n:,} items stored"]
                        if name.startswith("list") else []))
    # The big one is started here and stopped at once: it holds a million items in memory.
    with SandboxProcess(seed_items=big_n) as big:
        big_latency = _latencies(big, repeats)
        seeded = big.ready_s
    for name in _QUERIES:
        (big_s, big_rows), (small_s, small_rows) = big_latency[name], small_latency[name]
        ratio = big_s / small_s
        rows.append(Row(f"7 page latency {name}, {big_n:,} vs {small_n:,} stored",
                        fmt_s(big_s), fmt_s(small_s), ratio, "", "within 2x", ratio <= 2,
                        [] if big_rows == small_rows else
                        [f"pages differ: {big_rows} vs {small_rows} records"]))
    rows.append(Row(f"7 seed {big_n:,} items (serve() to ready)", fmt_s(seeded), "", None, "60 s",
                    "< 60 s", seeded < 60))
    return rows
