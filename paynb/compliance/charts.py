"""The compliance charts: the rolling return rates against NACHA's thresholds, and the
debits still returnable. They register themselves on the ``df.paynb`` accessor
(:data:`paynb.accessor.PROVIDERS` names this module); :mod:`paynb.plots` shows them with
its other charts (``paynb.plots.return_rate_thresholds``, ``paynb.plots.return_exposure``).
They draw with :mod:`paynb._charts`, as every chart does."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from paynb._charts import CURRENCY, date_axis, legend, new_axes, no_items, thousands
from paynb.accessor import register
from paynb.codes import STATUS_COLORS
from paynb.compliance._exposure import return_exposure as exposure_table
from paynb.compliance._rates import rolling_return_rates
from paynb.compliance._rules import CATEGORIES, CONSUMER_ENTRY_CLASSES, WARNING_SHARE

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["CATEGORY_COLORS", "return_exposure", "return_rate_thresholds"]

#: One colour per return-rate category, from the shared status colours.
CATEGORY_COLORS: dict[str, str] = {"unauthorized": STATUS_COLORS["I"],
                                   "administrative": STATUS_COLORS["B"],
                                   "overall": STATUS_COLORS["R"]}
_WARNING_COLOR = "#F2C14E"
_OVER_COLOR = "#C62828"


@register
def return_rate_thresholds(df: pd.DataFrame, ax: Axes | None = None, *,
                           window: str = "60D", category: str | None = None,
                           start: Any = None, end: Any = None,
                           warning_share: float = WARNING_SHARE,
                           title: str | None = None) -> Axes:
    """The rolling NACHA return rates against their thresholds, breach days marked.

    Args:
        df: ACH items from the client (see :func:`paynb.compliance.return_rates`).
        ax: the Axes to draw on; a new figure when None.
        window: ``"60D"`` or ``"2M"``: each day's trailing window.
        category: None draws the three categories on one scale, as a percentage of
            their own threshold (100 % is the threshold, the band below it the warning
            level); ``"unauthorized"``, ``"administrative"`` or ``"overall"`` draws that
            rate in percent against its threshold line.
        start, end: the first and last day drawn (UTC dates); by default the first
            origination day in the items and today.
        warning_share: where the warning band starts, as a share of the threshold.
        title: overrides the default title.

    Returns:
        The Axes; days over a threshold carry a cross.
    """
    thresholds = {c.name: c.threshold for c in CATEGORIES}
    if category is not None and category not in thresholds:
        raise ValueError(f"category must be one of {', '.join(thresholds)} or None; "
                         f"got {category!r}")
    rolling = rolling_return_rates(df, window=window, start=start, end=end,
                                   warning_share=warning_share)
    title = title or ("Return rates against NACHA thresholds" if category is None else
                      f"{category.capitalize()} return rate against its threshold") + \
        f" ({window} window)"
    ax = new_axes(ax, (10, 4.5))
    measured = rolling[rolling["entries"] > 0]
    if measured.empty:
        return no_items(ax, title, "no debit entries")
    shown = [category] if category else list(thresholds)
    top = 0.0
    marked = False
    for name in shown:
        rows = rolling[rolling["category"] == name]
        scale = 100 / rows["threshold"] if category is None else pd.Series(100, rows.index)
        values = (rows["rate"] * scale).to_numpy(dtype="float64")
        ax.plot(rows["date"], values, color=CATEGORY_COLORS[name], lw=1.6,
                label=f"{name} (threshold {thresholds[name]:.1%})")
        over = (rows["level"] == "over").to_numpy()
        if over.any():
            ax.scatter(rows["date"].to_numpy()[over], values[over], marker="x", s=18,
                       color=_OVER_COLOR, zorder=3,
                       label=None if marked else "day over the threshold")
            marked = True
        top = max(top, np.nanmax(values, initial=0))
    limit = 100.0 if category is None else 100 * thresholds[category]
    ax.axhspan(warning_share * limit, limit, color=_WARNING_COLOR, alpha=0.25,
               label=f"warning ({warning_share:.0%} of threshold)")
    ax.axhline(limit, color=_OVER_COLOR, lw=1.2, ls="--", label="threshold")
    ax.set_ylim(0, max(top, limit) * 1.15)
    from matplotlib.ticker import PercentFormatter

    ax.yaxis.set_major_formatter(PercentFormatter(decimals=0 if category is None or limit >= 3
                                                  else 2))
    ax.set_ylabel("Share of threshold" if category is None else "Return rate")
    ax.set_xlabel(f"As-of day (UTC), trailing {window} window")
    date_axis(ax)
    legend(ax, "Category")
    ax.set_title(title)
    return ax


@register
def return_exposure(df: pd.DataFrame, ax: Axes | None = None, *, as_of: Any = None,
                    consumer_classes: Iterable[str] | None = None,
                    title: str | None = None) -> Axes:
    """Amounts still returnable as of ``as_of``, per settlement day, stacked by window.

    The lower bars are debits still inside the standard window (any return code,
    two banking days after settlement); the upper ones consumer debits past it but
    still inside the extended window for unauthorized returns (60 calendar days).
    A debit is drawn once: in the standard window while that is open, else in the
    extended one. The figures are those of :func:`paynb.compliance.return_exposure`;
    ``consumer_classes`` None means :data:`paynb.compliance.CONSUMER_ENTRY_CLASSES`.

    Returns:
        The Axes; amounts in US dollars (the axis reads ``Amount (USD)``), the totals
        in the legend.
    """
    title = title or "Debits still returnable, by settlement day"
    ax = new_axes(ax, (10, 4.5))
    table = exposure_table(df, as_of=as_of, consumer_classes=CONSUMER_ENTRY_CLASSES
                           if consumer_classes is None else consumer_classes)
    if table.empty:
        return no_items(ax, title, "nothing returnable")
    standard = table["standard_amount"].astype("float64").to_numpy()
    extended = np.where(table["standard_count"].to_numpy() == 0,
                        table["unauthorized_amount"].astype("float64").to_numpy(), 0.0)
    days = table["settleDate"]
    ax.bar(days, standard, width=0.8, color=STATUS_COLORS["S"],
           label=f"any return, standard window: {standard.sum():,.2f} {CURRENCY}")
    ax.bar(days, extended, width=0.8, bottom=standard, color=CATEGORY_COLORS["unauthorized"],
           label=f"unauthorized only, extended window: {extended.sum():,.2f} {CURRENCY}")
    date_axis(ax)
    thousands(ax)
    ax.set_xlabel("Settlement day (UTC)")
    ax.set_ylabel(f"Amount ({CURRENCY})")
    legend(ax, "Still returnable")
    ax.set_title(title)
    return ax
