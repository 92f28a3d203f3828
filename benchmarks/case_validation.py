"""Case 5: validating 100,000 ACH rows before a bulk submission, rows per second.

paynb validates the whole bulk body in one call (what ``submit_many`` does
before sending); the baseline validates one ``AchItem`` at a time, as a loop in
a notebook would. Both must find the same invalid rows.
"""

from __future__ import annotations

import re
from typing import Any

from benchmarks._data import ach_submissions
from benchmarks._harness import Config, Row, fmt_rate, interleave

__all__ = ["run"]

_INDEX = re.compile(r"^items\[(\d+)\]")


def _paynb_bulk(rows: list[dict[str, Any]]) -> set[int]:
    from paynb import models

    _, errors = models.check(models.AchBulkRequest, {"alwaysCommitValid": True, "items": rows})
    return {int(m.group(1)) for key in errors if (m := _INDEX.match(key))}


def _one_at_a_time(rows: list[dict[str, Any]]) -> set[int]:
    from paynb import models

    bad = set()
    for index, row in enumerate(rows):
        _, errors = models.check(models.AchItem, row)
        if errors:
            bad.add(index)
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

    med = interleave({"paynb": lambda: _paynb_bulk(rows), "baseline": lambda: _one_at_a_time(rows)},
                     cfg.rounds, warmup=cfg.warmup, check=same_rows)
    return [Row(f"5 validate {n:,} ACH rows", fmt_rate(n / med["paynb"], "rows"),
                fmt_rate(n / med["baseline"], "rows"), med["paynb"] / med["baseline"], "", "",
                None, [f"{len(found['first'])} invalid rows found by both; ratio is time "
                       "(lower is better); baseline = one AchItem model at a time"])]
