"""The chart of a ledger matched against the service's items (:func:`paynb.match`)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from paynb._charts import CURRENCY, new_axes, no_items, thousands

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["match_outcomes"]

#: The outcomes, what needs a look first: their colours (paynb's palette) and labels.
_OUTCOMES = {"unmatched": ("#C44E52", "Unmatched"),
             "tied": ("#8172B3", "Tied (for you to decide)"),
             "exceptions open": ("#DD8452", "Matched, open exception"),
             "matched": ("#55A868", "Matched, nothing open")}


def match_outcomes(outcomes: pd.DataFrame, ax: Axes | None = None) -> Axes:
    """Where the money stands, your ledger beside the service (``MatchResult.plot()``).

    For each outcome (unmatched, tied, open exceptions, matched) a bar for the ledger lines
    (solid) and one for the service's items (hatched) whose length is their amount, labelled
    with their count and amount. What needs a look comes first. When the matched amount dwarfs
    the rest, the matched bars are cut (marked with a break, their figures in their labels) so
    that the axis is scaled for the rest: an unmatched line is never a sliver.

    Args:
        outcomes: ``MatchResult.outcomes``: per outcome (none overlapping another) the
            ledger lines and the service's items, and their amounts without sign.
        ax: the Axes to draw on; a new figure when None.

    Returns:
        The Axes.
    """
    ax = new_axes(ax)
    rows = {name: ((int(outcomes.loc[name, "expected_lines"]),
                    float(outcomes.loc[name, "expected_amount"])),
                   (int(outcomes.loc[name, "items"]), float(outcomes.loc[name, "item_amount"])))
            for name in _OUTCOMES}
    total_e, total_i = int(outcomes["expected_lines"].sum()), int(outcomes["items"].sum())
    matched_e = rows["exceptions open"][0][0] + rows["matched"][0][0]
    # Rounded down: 5 lines of 37,990 unmatched is 99.9 %, never 100.0 %.
    share = f" ({math.floor(matched_e / total_e * 1000) / 10:.1f}%)" if total_e else ""
    unmatched_e = rows["unmatched"][0][0]
    title = (f"{matched_e:,} of {total_e:,} ledger lines matched{share}"
             + (f", {unmatched_e:,} unmatched" if unmatched_e else ""))
    if not total_e and not total_i:
        return no_items(ax, "Ledger against the service", "nothing to match")
    rest = max([side[1] for name, pair in rows.items() if name != "matched" for side in pair],
               default=0.0)
    top = max(side[1] for side in rows["matched"])
    cut = rest * 1.6 if rest > 0 and top > 3 * rest else None
    limit = cut if cut is not None else max(top, rest) * 1.35 or 1.0
    height = 0.38
    for position, (name, (e, i)) in enumerate(rows.items()):
        color = _OUTCOMES[name][0]
        for offset, (count, value), hatch, (one, many) in (
                (-height / 2, e, None, ("ledger line", "ledger lines")),
                (height / 2, i, "///", ("service item", "service items"))):
            ax.barh(position + offset, min(value, limit), height=height * 0.95, color=color,
                    alpha=1.0 if hatch is None else 0.6, hatch=hatch, edgecolor="white",
                    linewidth=0)
            label = f"{count:,} {one if count == 1 else many} · {value:,.2f}"
            if cut is not None and value > limit:
                # Cut: a break near the end, the figures inside the bar.
                for dx in (0.93, 0.95):
                    ax.plot([limit * dx, limit * (dx + 0.01)],
                            [position + offset - height * 0.45,
                             position + offset + height * 0.45],
                            color="white", linewidth=2.5, solid_capstyle="butt")
                ax.text(limit * 0.91, position + offset, label, va="center", ha="right",
                        color="white", fontsize="small", fontweight="bold")
            elif name == "unmatched" and hatch is None and count:
                # Ledger lines with no item: what matters most, however small.
                ax.text(value + limit * 0.01, position + offset, label, va="center",
                        ha="left", fontsize="small", fontweight="bold", color=color)
            else:
                ax.text(min(value, limit) + limit * 0.01, position + offset, label,
                        va="center", ha="left", fontsize="small", color="#333333")
    ax.set_yticks(range(len(rows)), [label for _, label in _OUTCOMES.values()])
    ax.invert_yaxis()  # what needs a look on top
    ax.set_xlim(0, limit)
    ax.set_xlabel(f"Amount ({CURRENCY}){', matched bars cut' if cut is not None else ''}")
    thousands(ax, "x")
    ax.grid(axis="x", color="#E5E5E5")
    ax.set_axisbelow(True)
    for spine in ("top", "right"):
        ax.spines[spine].set_visible(False)
    ax.set_title(title)
    return ax
