"""Case 5: validating 100,000 ACH rows before a bulk submission, rows per second.

paynb runs exactly what ``client.ach.submit_many`` runs before the first request
leaves (``_check_rows``: every row checked, wire bodies of the valid ones, errors
per bad row; nothing is sent); the baseline validates one ``AchItem`` at a time
and serialises it, as a loop in a notebook would. Both must find the same
invalid rows.
"""

from __future__ import annotations

from typing import Any

import paynb
from benchmarks._data import ach_submissions
from benchmarks._harness import Config, Row, fmt_rate, interleave

__all__ = ["run"]


def _one_at_a_time(rows: list[dict[str, Any]]) -> set[int]:
    from paynb import models

    bad = set()
    bodies = []
    for index, row in enumerate(rows):
        item, errors = models.check(models.AchItem, row)
        if errors:
            bad.add(index)
        else:
            bodies.append(item.to_wire())  # type: ignore[union-attr]
    return bad


def run(cfg: Config) -> list[Row]:
    """Rows per second of both ways on the same rows (about 1 % invalid)."""
    n = cfg.size(100_000, 2_000)
    rows = ach_submissions(n)
    found: dict[str, set[int]] = {}

    def same_rows(name: str, bad: set[int]) -> None:
        found.setdefault("first", bad)
        if bad != found["first"]:
            raise AssertionError(f"{name} found other invalid rows")

    # A client that never connects: validation happens before any request.
    client = paynb.Client(base_url="http://127.0.0.1:9", auth_url="http://127.0.0.1:9",
                          company_code="DEMO1",
                          credentials=paynb.Credentials("id", "secret", "user", "password"),
                          journal=None)
    med = interleave({"paynb": lambda: set(client.ach._check_rows(rows)[1]),
                      "baseline": lambda: _one_at_a_time(rows)},
                     cfg.rounds, warmup=cfg.warmup, check=same_rows)
    return [Row(f"5 validate {n:,} ACH rows", fmt_rate(n / med["paynb"], "rows"),
                fmt_rate(n / med["baseline"], "rows"), med["paynb"] / med["baseline"], "", "",
                None, [f"{len(found['first'])} invalid rows found by both; ratio is time "
                       "(lower is better); baseline = one AchItem model at a time, then "
                       "to_wire()"])]
