"""Timing, rows and the table: the parts every case shares."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks._server import Sandboxes

__all__ = ["Config", "Row", "fmt_bytes", "fmt_rate", "fmt_s", "interleave", "render", "timed"]


@dataclass
class Config:
    """Sizes and repetitions of one run (``quick`` shrinks everything for a smoke test)."""

    quick: bool = False
    rounds: int = 5
    huge: bool = False  # also the 50,000,000-item sizes (``--at-50m``; minutes, GBs of disk)
    #: Case 13's other engines run beside paynb and its baselines (``--engines``; None:
    #: all of them). The baselines, deltalake for the reads and DuckDB's query for the
    #: figures, always run: the targets are against them.
    engines: frozenset[str] | None = None
    sandboxes: Sandboxes = field(default_factory=Sandboxes)

    @property
    def warmup(self) -> bool:
        """One untimed run of each contender first (skipped in quick mode)."""
        return not self.quick

    def size(self, full: int, quick: int) -> int:
        """``full`` normally, ``quick`` in quick mode."""
        return quick if self.quick else full


@dataclass
class Row:
    """One line of the results table.

    ``paynb`` and ``baseline`` are already formatted; ``ratio`` is paynb over
    baseline (lower is better unless the row says otherwise); ``met`` is None
    where the row has no target.
    """

    case: str
    paynb: str
    baseline: str = ""
    ratio: float | None = None
    limit: str = ""
    target: str = ""
    met: bool | None = None
    notes: list[str] = field(default_factory=list)


def fmt_s(seconds: float | None) -> str:
    """Seconds as a short human figure (ms below one second)."""
    if seconds is None:
        return "n/a"
    if seconds < 1:
        return f"{seconds * 1000:.3g} ms"
    return f"{seconds:.3g} s"


def fmt_bytes(n: float) -> str:
    """Bytes as B, KiB, MiB or GiB."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.3g} {unit}" if unit != "B" else f"{n:.0f} B"
        n /= 1024
    raise AssertionError("unreachable")


def fmt_rate(per_second: float, unit: str) -> str:
    """A rate such as ``12,300 rows/s``."""
    return f"{per_second:,.0f} {unit}/s"


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Run ``fn`` once after a collection, with the collector off: (seconds, result).

    The collector is paused so that a collection triggered by the previous
    run's garbage is not billed to this one.
    """
    gc.collect()
    gc.disable()
    try:
        start = time.perf_counter()
        result = fn()
        return time.perf_counter() - start, result
    finally:
        gc.enable()


def interleave(
    contenders: dict[str, Callable[[], Any]],
    rounds: int,
    *,
    warmup: bool = True,
    check: Callable[[str, Any], None] | None = None,
) -> dict[str, float]:
    """Median seconds of each contender, run A, B, A, B ... for ``rounds`` rounds.

    Interleaving spreads any drift of the machine (another process, a warm
    cache, thermal limits) evenly over the contenders instead of billing it to
    whichever ran second. ``check(name, result)`` sees each result (e.g. the row
    count) so a contender cannot win by doing less.
    """
    if warmup:
        for name, fn in contenders.items():
            result = fn()
            if check:
                check(name, result)
            del result
    samples: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, fn in contenders.items():
            seconds, result = timed(fn)
            if check:
                check(name, result)
            del result
            samples[name].append(seconds)
    return {name: statistics.median(values) for name, values in samples.items()}


_COLUMNS = ("case", "paynb", "baseline", "ratio", "limit", "target", "met?")


def _cells(row: Row) -> tuple[str, ...]:
    ratio = "" if row.ratio is None else f"{row.ratio:.3g}"
    met = "" if row.met is None else ("yes" if row.met else "NO")
    return (row.case, row.paynb, row.baseline, ratio, row.limit, row.target, met)


def render(rows: list[Row], *, markdown: bool = False) -> str:
    """The table (plain text aligned in columns, or Markdown), then the notes of each row."""
    cells = [_cells(row) for row in rows]
    lines: list[str] = []
    if markdown:
        lines.append("| " + " | ".join(_COLUMNS) + " |")
        lines.append("|" + "|".join("---" for _ in _COLUMNS) + "|")
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in cells]
    else:
        widths = [max(len(c[i]) for c in [_COLUMNS, *cells]) for i in range(len(_COLUMNS))]
        lines.append("  ".join(h.ljust(w) for h, w in zip(_COLUMNS, widths, strict=True)))
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
                  for row in cells]
    notes = [(row.case, note) for row in rows for note in row.notes]
    if notes:
        lines.append("")
        lines.append("Notes:")
        lines += [f"- {case}: {note}" for case, note in notes]
    return "\n".join(lines)
