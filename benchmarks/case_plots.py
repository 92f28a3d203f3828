"""Case 6: the plot helpers on a million rows, against plotting the raw rows.

Every timing includes drawing the figure on the Agg canvas, because matplotlib
defers the real work to the draw. Baselines are what a notebook does without
helpers: a scatter of every returned row by return date for the trend, and a
histogram of the million status strings for the summary.
"""

from __future__ import annotations

from typing import Any

from benchmarks._data import ach_records
from benchmarks._harness import Config, Row, fmt_s, interleave
from benchmarks._paynb import build_frame

__all__ = ["run"]


def _draw(make: Any) -> None:
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    try:
        make(ax)
        fig.canvas.draw()
    finally:
        plt.close(fig)


def run(cfg: Config) -> list[Row]:
    """``return_trend`` and ``status_summary`` time on 1,000,000 rows."""
    import matplotlib

    matplotlib.use("Agg")
    from paynb import plots

    n = cfg.size(1_000_000, 20_000)
    frame = build_frame(ach_records(n))

    def raw_trend(ax: Any) -> None:
        returned = frame[frame["returnDate"].notna()]
        ax.scatter(returned["returnDate"], returned["amount"].astype("float64"), s=1)

    def raw_status(ax: Any) -> None:
        ax.hist(frame["itemStatus"].astype(str))

    trend = interleave({"paynb": lambda: _draw(lambda ax: plots.return_trend(frame, ax=ax)),
                        "baseline": lambda: _draw(raw_trend)}, cfg.rounds,
                       warmup=cfg.warmup)
    status = interleave({"paynb": lambda: _draw(lambda ax: plots.status_summary(frame, ax=ax)),
                         "baseline": lambda: _draw(raw_status)}, cfg.rounds,
                        warmup=cfg.warmup)
    return [
        Row(f"6 return_trend, {n:,} rows", fmt_s(trend["paynb"]), fmt_s(trend["baseline"]),
            trend["paynb"] / trend["baseline"], "", "", None,
            ["baseline: scatter of every returned row (returnDate, amount); both drawn on Agg"]),
        Row(f"6 status_summary, {n:,} rows", fmt_s(status["paynb"]), fmt_s(status["baseline"]),
            status["paynb"] / status["baseline"], "", "", None,
            ["baseline: ax.hist of the raw itemStatus strings; both drawn on Agg"]),
    ]
