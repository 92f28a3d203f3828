"""Chart helpers every paynb chart shares: a new Axes, the empty chart, one date format,
the legend beside the plot, thousands on an axis, the currency of amounts; below the
modules that draw (docs/reference/internals.md). matplotlib loads with the first chart."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["CURRENCY", "count_axis", "date_axis", "legend", "new_axes", "no_items",
           "thousands", "year_labels"]

CURRENCY = "USD"
"""The currency of ACH and RCC amounts (the ACH network and checks are in US dollars),
as the amount axes name it."""


def new_axes(ax: Axes | None, size: tuple[float, float] = (8, 4.5)) -> Axes:
    """``ax``, or the Axes of a new figure of ``size`` inches (constrained layout)."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    _, ax = plt.subplots(figsize=size, layout="constrained")
    return ax


def no_items(ax: Axes, title: str, message: str = "no items") -> Axes:
    """The empty chart: ``title``, and ``message`` where the data would be; no ticks."""
    ax.set_title(title)
    ax.text(0.5, 0.5, message, transform=ax.transAxes, ha="center", va="center",
            fontsize=14, color="#707070")
    ax.set_xticks([])
    ax.set_yticks([])
    return ax


def date_axis(ax: Axes) -> None:
    """Dates on the x axis, every tick in one format: ``15 Oct`` (``Oct`` when the ticks
    are months apart), the year under the first tick and wherever it changes."""
    import matplotlib.dates as mdates
    from matplotlib.ticker import Formatter

    class OneFormat(Formatter):  # type: ignore[misc]
        def __call__(self, x: float, pos: int | None = None) -> str:
            return self.format_ticks([x])[0]

        def format_ticks(self, values: Sequence[float]) -> list[str]:
            days = [mdates.num2date(v) for v in values]
            gaps = np.diff(values)
            monthly = len(gaps) > 0 and float(np.min(gaps)) >= 28
            return year_labels(days, "%b" if monthly else "%d %b")

    ax.xaxis.set_major_locator(mdates.AutoDateLocator(minticks=3, maxticks=10))
    ax.xaxis.set_major_formatter(OneFormat())


def year_labels(days: Sequence[Any], fmt: str) -> list[str]:
    """Each day in ``fmt``, the year under the first and wherever it changes."""
    return [day.strftime(fmt) + (f"\n{day.year}" if i == 0 or day.year != days[i - 1].year
                                 else "") for i, day in enumerate(days)]


def legend(ax: Axes, title: str, *, stacked: bool = False) -> None:
    """A legend beside the plot (never over the data); stacked: top segment listed first."""
    handles, labels = ax.get_legend_handles_labels()
    if stacked:
        handles, labels = handles[::-1], labels[::-1]
    ax.legend(handles, labels, title=title, frameon=False, fontsize="small",
              loc="upper left", bbox_to_anchor=(1.01, 1.0))


def thousands(ax: Axes, axis: str = "y") -> None:
    """Tick labels with thousands separators (``12,500``; below 100 up to two decimals)."""
    from matplotlib.ticker import FuncFormatter

    formatter = FuncFormatter(lambda v, _: f"{v:,.0f}" if abs(v) >= 100 else f"{v:,.2f}".rstrip(
        "0").rstrip("."))
    (ax.yaxis if axis == "y" else ax.xaxis).set_major_formatter(formatter)


def count_axis(ax: Axes, axis: str = "y") -> None:
    """Whole-number ticks with thousands separators: an item count has no 1.25."""
    from matplotlib.ticker import MaxNLocator

    (ax.yaxis if axis == "y" else ax.xaxis).set_major_locator(MaxNLocator(integer=True))
    thousands(ax, axis)
