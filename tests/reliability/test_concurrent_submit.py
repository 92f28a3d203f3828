"""Concurrency: two clients sharing one journal submit the same reference at the same
moment, from two threads or two processes (spawned): exactly one is sent, the other is
refused with DuplicateSubmissionError, and the service holds exactly one item. The same
on a team's PostgreSQL journal: two processes (two analysts' notebooks), 200 rounds.
"""

from __future__ import annotations

import multiprocessing
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from paynb import sandbox
from paynb.config import Credentials

from .faultrun import REPORTS, service_records
from .race import race, race_in_process

pytestmark = pytest.mark.guards_unchecked

ROUNDS = 8
#: Rounds of the race on one PostgreSQL journal (issue 35: two processes, 200 rounds).
POSTGRES_ROUNDS = 200


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    with sandbox.serve(port=0, seed_items=0, seed=51) as running:
        yield running


def _settings(sb: Any) -> dict[str, Any]:
    return {"base_url": sb.base_url, "auth_url": sb.auth_url,
            "company_code": sb.company_code,
            "credentials": Credentials(**sb.credentials.as_dict())}


def _check(sb: Any, references: list[str], first: list[str], second: list[str]) -> None:
    for n, reference in enumerate(references):
        outcomes = Counter([first[n], second[n]])
        assert outcomes == {"sent": 1, "duplicate": 1}, f"{reference}: {outcomes}"
        stored = service_records(sb, reference=reference)
        assert len(stored) == 1, f"{reference} stored {len(stored)} times"


@pytest.mark.parametrize("how", ["submit", "submit_many"])
def test_two_threads_one_journal_same_reference(sb: Any, tmp_path: Path, how: str) -> None:
    journal = str(tmp_path / "shared.sqlite3")
    references = [f"RACE-T-{how}-{n}" for n in range(ROUNDS)]
    barrier = threading.Barrier(2)
    with ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(race, _settings(sb), journal, references, barrier, how)
                for _ in range(2)]
        first, second = (run.result(timeout=120) for run in runs)
    _check(sb, references, first, second)


def _race_two_processes(sb: Any, journal: str, references: list[str]
                        ) -> tuple[list[str], list[str]]:
    """Two spawned processes, each a client of ``sb`` on ``journal``, submit each of
    ``references`` at the same moment; their outcomes."""
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    results = context.Queue()
    processes = [context.Process(target=race_in_process,
                                 args=(_settings(sb), journal, references, barrier, results,
                                       "submit"))
                 for _ in range(2)]
    for process in processes:
        process.start()
    try:
        first, second = results.get(timeout=180), results.get(timeout=180)
    finally:
        for process in processes:
            process.join(timeout=60)
    assert [p.exitcode for p in processes] == [0, 0]
    return first, second


def test_two_processes_one_journal_same_reference(sb: Any, tmp_path: Path) -> None:
    references = [f"RACE-P-{n}" for n in range(ROUNDS)]
    first, second = _race_two_processes(sb, str(tmp_path / "shared.sqlite3"), references)
    _check(sb, references, first, second)


def test_two_processes_one_postgresql_journal_200_rounds(sb: Any, postgres: Any) -> None:
    """Two analysts' notebooks on one team journal send the same reference at the same
    moment, 200 times: exactly one request reaches the service each time."""
    references = [f"RACE-PG-{n:03d}" for n in range(POSTGRES_ROUNDS)]
    first, second = _race_two_processes(sb, postgres.fresh(), references)
    outcomes = Counter(first + second)
    stored = Counter(record["yourReferenceNumber"] for record in service_records(sb)
                     if str(record["yourReferenceNumber"]).startswith("RACE-PG-"))
    line = (f"race on one PostgreSQL journal: 2 processes, {POSTGRES_ROUNDS} rounds, sent "
            f"{outcomes['sent']}, refused as duplicates {outcomes['duplicate']}, other "
            f"{sum(outcomes.values()) - outcomes['sent'] - outcomes['duplicate']}, stored "
            f"{sum(stored.values())}, stored twice {sum(1 for n in stored.values() if n > 1)}")
    REPORTS.append(line)
    print(line)
    for n, reference in enumerate(references):
        assert Counter([first[n], second[n]]) == {"sent": 1, "duplicate": 1}, reference
    assert stored == dict.fromkeys(references, 1)  # each stored once, none twice
