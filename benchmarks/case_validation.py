"""Case 5: validating 100,000 ACH rows before a bulk submission, rows per second.

Three ways over the same rows, interleaved: ``client.ach.check_many`` (the verdicts,
column by column, the models only for rows the columns cannot vouch for), the
pre-check ``submit_many`` runs before the first request leaves (``check_rows``: the
same, plus the wire bodies of the valid rows), and the baseline, one ``AchItem`` at a
time then ``to_wire()``, as a loop in a notebook would. Measured on valid rows (the
issue's target: check_many at least 10x the baseline's rows/s) and on rows of which
1 % are bad; every way must find the same invalid rows. Then ``client.rcc.check_many``
against one ``RccItem`` at a time on 100,000 valid RCC rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from benchmarks._data import ach_submissions, rcc_submissions
from benchmarks._harness import Config, Row, fmt_rate, interleave
from paynb._checks import check_rows

__all__ = ["run"]


def _one_at_a_time(rows: list[dict[str, Any]], kind: str = "ach") -> set[int]:
    from paynb import models

    model = models.RccItem if kind == "rcc" else models.AchItem
    bad = set()
    bodies = []
    for index, row in enumerate(rows):
        item, errors = models.check(model, row)
        if errors:
            bad.add(index)
        else:
            bodies.append(item.to_wire())  # type: ignore[union-attr]
    return bad


def _client() -> Any:
    """A client that never connects: checking happens before any request."""
    import paynb

    return paynb.Client(base_url="http://127.0.0.1:9", auth_url="http://127.0.0.1:9",
                        company_code="DEMO1",
                        credentials=paynb.Credentials("id", "secret", "user", "password"),
                        journal=None)


def run(cfg: Config) -> list[Row]:
    """Rows per second of the three ways on the same rows."""
    n = cfg.size(100_000, 2_000)
    client = _client()
    result = []
    for share, label in ((0.0, "valid"), (0.01, "1 % invalid")):
        rows = ach_submissions(n, invalid_share=share)
        found: dict[str, set[int]] = {}

        def same_rows(name: str, bad: set[int], found: dict[str, set[int]] = found) -> None:
            found.setdefault("first", bad)
            if bad != found["first"]:
                raise AssertionError(f"{name} found other invalid rows")

        def check_many(rows: list[dict[str, Any]] = rows) -> set[int]:
            verdicts = client.ach.check_many(rows)
            return set(verdicts.index[~verdicts["valid"]])

        med = interleave({"check_many": check_many,
                          "submit_many pre-check": lambda rows=rows: set(
                              check_rows(client.ach.model, rows).errors),
                          "baseline": lambda rows=rows: _one_at_a_time(rows)},
                         cfg.rounds, warmup=cfg.warmup, check=same_rows)
        base = med["baseline"]
        for name in ("check_many", "submit_many pre-check"):
            target = "rows/s >= 10x baseline" if name == "check_many" and share == 0 else ""
            ratio = med[name] / base
            result.append(Row(
                f"5 {name}, {n:,} ACH rows, {label}", fmt_rate(n / med[name], "rows"),
                fmt_rate(n / base, "rows"), ratio, "", target,
                ratio <= 0.1 if target else None))
    result[-1].notes.append(
        f"{len(found['first'])} invalid rows found by all three; ratio is time (lower is "
        "better; 0.1 = 10x the rows/s); baseline = one AchItem model at a time, then to_wire()")
    rcc = rcc_submissions(n)

    def no_invalid_rows(name: str, bad: set[int]) -> None:
        if bad:
            raise AssertionError(f"{name} found invalid rows among valid RCC rows")

    med = interleave({"check_many": lambda: set(np.flatnonzero(
                          ~client.rcc.check_many(rcc)["valid"].to_numpy()).tolist()),
                      "baseline": lambda: _one_at_a_time(rcc, "rcc")},
                     cfg.rounds, warmup=cfg.warmup, check=no_invalid_rows)
    ratio = med["check_many"] / med["baseline"]
    result.append(Row(f"5 check_many, {n:,} RCC rows, valid",
                      fmt_rate(n / med["check_many"], "rows"),
                      fmt_rate(n / med["baseline"], "rows"), ratio, "",
                      "rows/s >= 10x baseline", ratio <= 0.1))
    result[-1].notes.append("baseline = one RccItem model at a time, then to_wire()")
    return result
