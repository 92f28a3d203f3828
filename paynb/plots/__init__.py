"""Charts that answer an analyst's questions: what changed, how many, is it getting worse?

Every helper takes a DataFrame as the client returns it, an optional matplotlib ``ax``,
and returns the Axes without calling ``plt.show()``; the rules they share (aggregated
first, empty charts that say so, status colours, UTC dates, columns and codes in words,
amounts in their currency) are in docs/plots.md. :func:`match_outcomes` draws a
:class:`paynb.MatchResult`. The item charts hang on every DataFrame::

    returns = client.ach.list(status=["R", "I", "B"])
    returns.paynb.return_trend(freq="W")
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from paynb._charts import count_axis, date_axis, legend, new_axes, no_items, thousands, year_labels
from paynb.accessor import register
from paynb.codes import STATUS_COLORS, code_label, is_known_code, normalise_code
from paynb.compliance.charts import return_exposure, return_rate_thresholds
from paynb.plots import _base as base
from paynb.plots._base import (
    CURRENCY,
    INSTANT_COLORS,
    LOG_SCALE_BELOW,
    RETURN_STATUSES,
    RETURN_WINDOW_DAYS,
)
from paynb.plots._match import match_outcomes

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "CURRENCY", "INSTANT_COLORS", "LOG_SCALE_BELOW", "RETURN_STATUSES", "RETURN_WINDOW_DAYS",
    "match_outcomes", "return_exposure", "return_rate", "return_rate_thresholds",
    "return_reasons", "return_trend", "returns_calendar", "status_summary",
]


def status_summary(df: pd.DataFrame, ax: Axes | None = None, *, by: str | None = None,
                   value: Literal["count", "amount"] = "count", title: str | None = None) -> Axes:
    """Items per status, as bars in the status colours.

    Args:
        df: items from the client (``itemStatus``, or ``status`` for instant and RTP).
        ax: the Axes to draw on; a new figure when None.
        by: a column to split by (``achTransactionType``, ``companyCode``, or a
            ``kind`` column of a concatenated frame): one bar per value, stacked by
            status. Title and axis name it in words (``transaction type``).
        value: ``"count"`` for the number of items, ``"amount"`` for the sum of
            their amounts: US dollars for ACH and RCC (the axis reads ``Amount
            (USD)``), whole numbers in the service's unit for instant and RTP (see
            ``df.attrs["amountUnit"]``), labelled without decimals.
        title: overrides the default title.

    Returns:
        The Axes. Each bar is labelled with its total and its share of all. When the
        smallest status is under :data:`LOG_SCALE_BELOW` of the largest (3 Invalid
        beside 38,000 Waiting), the axis is logarithmic, so that every status stays
        visible, and its label says so.
    """
    if value not in ("count", "amount"):
        raise ValueError(f"value must be 'count' or 'amount'; got {value!r}")
    status = base.status_column(df)
    if by is not None:
        base.require(df, by)
    what = "Items" if value == "count" else "Amount"
    title = title or f"{what} per status" + (f" by {base.words(by)}" if by else "")
    integers = value == "count" or base.integer_amounts(df)
    ax = new_axes(ax)
    if df.empty:
        return no_items(ax, title)
    keys = [status] if by is None else [by, status]
    if value == "count":
        table = df.groupby(keys, observed=True, dropna=True).size()
    else:
        table = base.float_amounts(df).groupby([df[k] for k in keys], observed=True,
                                               dropna=True).sum()
    table = table[table != 0] if value == "count" else table
    if table.empty:
        return no_items(ax, title)

    log = False
    if by is None:
        statuses = base.ordered(list(table.index))
        heights = [float(table[s]) for s in statuses]
        bars = ax.bar([base.status_label(s) for s in statuses], heights,
                      color=[base.status_color(s) for s in statuses])
        whole = sum(heights)
        shares = [f" ({100 * h / whole:.{_share_decimals(h / whole)}f} %)" if whole > 0 else ""
                  for h in heights]
        ax.bar_label(bars, labels=[base.money(h, integers) + share for h, share in zip(
            heights, shares, strict=True)], padding=2, fontsize="small")
        positive = [h for h in heights if h > 0]
        log = len(positive) == len(heights) and min(positive) < LOG_SCALE_BELOW * max(positive)
        if log:
            # A log axis from just under the smallest bar: 3 items stay a visible bar
            # beside 38,000 (on a linear axis they were a sliver of a pixel).
            ax.set_yscale("log")
            ax.set_ylim(min(positive) / 2, max(positive) * 4)
        ax.set_xlabel("Status")
    else:
        wide = table.unstack(status, fill_value=0)
        statuses = base.ordered(list(wide.columns))
        groups = [str(g) for g in wide.index]
        bottom = np.zeros(len(groups))
        for s in statuses:
            heights = wide[s].to_numpy(dtype="float64")
            ax.bar(groups, heights, bottom=bottom, color=base.status_color(s),
                   label=base.status_label(s))
            bottom += heights
        for position, total in enumerate(bottom):
            ax.annotate(base.money(total, integers), (position, total), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom")
        legend(ax, "Stacked by status", stacked=True)
        ax.set_xlabel(base.heading(by))
    label = "Items" if value == "count" else base.amount_label(df)
    ax.set_ylabel(label + (" (log scale)" if log else ""))
    if log:
        thousands(ax)
    else:
        (count_axis if value == "count" else thousands)(ax)
        ax.margins(y=0.12)
    ax.set_title(title)
    return ax


def _share_decimals(share: float) -> int:
    """Decimals that keep a small share from reading 0 %: 95 %, 4.2 %, 0.01 %."""
    return 0 if share >= 0.1 or share == 0 else 1 if share >= 0.01 else 2


def return_trend(df: pd.DataFrame, freq: str = "W", by: str | None = "status",
                 ax: Axes | None = None, *, kind: Literal["bar", "line"] = "bar",
                 top: int = 8, title: str | None = None, as_of: Any = None) -> Axes:
    """Returned, invalid and blocked items per period of their return date.

    Args:
        df: items from the client (``itemStatus`` and ``returnDate``); rows in R, I
            or B with a return date are counted.
        freq: ``"D"``, ``"W"`` (weeks starting Monday), ``"M"``, ``"Q"`` or ``"Y"``.
        by: ``"status"`` splits by status (in the status colours); any other column
            (``"returnReason"``, ``"achTransactionType"`` ...) splits by its ``top`` most
            frequent values, leaving out rows without a value there; None draws the total only.
        ax: the Axes to draw on; a new figure when None.
        kind: ``"bar"`` for stacked bars, ``"line"`` for one line per group.
        top: with a ``by`` column other than status, how many values to show
            before the rest is summed as "other".
        title: overrides the default title.
        as_of: when the data was listed (default: now, UTC). A period not over by
            then is shaded as immature (its returns are still arriving) and a note
            under the chart says for how many more days.

    Returns:
        The Axes; periods without returns are drawn as zero. The legend is titled
        with what the bars are grouped by.
    """
    freq = base.check_freq(freq)
    if kind not in ("bar", "line"):
        raise ValueError(f"kind must be 'bar' or 'line'; got {kind!r}")
    status = base.status_column(df)
    title = title or f"Returns per {base.FREQS[freq]}"
    ax = new_axes(ax)
    returns = base.returned_rows(df)
    if by is not None and by != "status":
        base.require(df, by)
        returns = returns.assign(**{by: df.loc[returns.index, by]})
    if returns.empty:
        return no_items(ax, title, "no items returned")
    periods = base.periods_of(returns["returnDate"], freq)
    if by is None:
        groups = pd.Series("all returns", index=returns.index)
    elif by == "status":
        groups = returns[status].astype("object")
    elif by in base.CODE_COLUMNS:
        groups = base.top_values(base.code_groups(returns[by].astype("object")), top)
    else:
        groups = base.top_values(returns[by].astype("object"), top)
    table = groups.groupby([periods, groups], dropna=True).size().unstack(fill_value=0)
    if table.empty:
        return no_items(ax, title, f"no returned items with a {base.words(str(by))}")
    full = pd.period_range(table.index.min(), table.index.max(), freq=freq)
    table = table.reindex(full, fill_value=0)
    if by == "status":
        names = base.ordered(list(table.columns))
    else:  # most frequent first, "other" last
        names = [n for n in table.sum().sort_values(ascending=False).index if n != "other"]
        names += ["other"] if "other" in table.columns else []
    starts = table.index.start_time
    colors = _group_colors(names, by == "status")
    if kind == "bar":
        width = (table.index.end_time - starts).total_seconds().to_numpy() / 86400 * 0.8
        bottom = np.zeros(len(table))
        for name in names:
            heights = table[name].to_numpy(dtype="float64")
            ax.bar(starts, heights, width=width, bottom=bottom, align="edge",
                   color=colors[name], label=_group_label(name, by))
            bottom += heights
    else:
        for name in names:
            ax.plot(starts, table[name].to_numpy(dtype="float64"), marker="o", markersize=3,
                    color=colors[name], label=_group_label(name, by))
        ax.set_ylim(bottom=0)
    date_axis(ax)
    base.shade_immature(ax, table.index, table.index.end_time, base.as_of_moment(as_of),
                        f"Return date (UTC), per {base.FREQS[freq]}",
                        f"this {base.FREQS[freq]} is not over")
    ax.set_ylabel("Items")
    count_axis(ax)
    if by is not None:
        legend(ax, f"Grouped by {base.words(by)}", stacked=kind == "bar")
    ax.set_title(title)
    return ax


def _group_colors(names: Sequence[Any], statuses: bool) -> dict[Any, str]:
    if statuses:
        return {name: base.status_color(name) for name in names}
    from matplotlib import colormaps

    palette = colormaps["tab10"].colors  # type: ignore[attr-defined]  # tab10 is a ListedColormap
    return {name: (base.OTHER_COLOR if name == "other" else palette[i % len(palette)])
            for i, name in enumerate(names)}


def _group_label(name: Any, by: str | None) -> str:
    if by == "status":
        return base.status_label(name)
    label = code_label(name) if by in base.CODE_COLUMNS and name != "other" else str(name)
    return label if len(label) <= 48 else label[:45] + "..."


def return_rate(df: pd.DataFrame, freq: str = "W", ax: Axes | None = None, *,
                title: str | None = None, as_of: Any = None,
                window_days: int = RETURN_WINDOW_DAYS) -> Axes:
    """Share of the items submitted in each period that ended returned, invalid or blocked.

    Items are grouped by their submission date (``receivedDateTime``, else ``depositDateTime``,
    else ``sendDate``); the line of each of R, I and B is the percentage of that period's items
    now in that status. Voided items count as submitted.

    Args:
        df: items from the client, all statuses (not only the returns).
        freq: ``"D"``, ``"W"``, ``"M"``, ``"Q"`` or ``"Y"``.
        ax: the Axes to draw on; a new figure when None.
        title: overrides the default title.
        as_of: when the data was listed (default: now, UTC).
        window_days: how long after submission a return can still come (default
            :data:`RETURN_WINDOW_DAYS`). Periods whose last day plus this is after
            ``as_of`` are shaded as immature: their rates are still rising, which is
            why the last periods of a return-rate chart always dip. A note under the
            chart says for how many more days.

    Returns:
        The Axes; the y axis is in percent. The legend is titled with what the lines
        are grouped by: the status the items of each period are in now.
    """
    if not isinstance(window_days, int) or isinstance(window_days, bool) or window_days < 0:
        raise ValueError(f"window_days must be a whole number of days >= 0; got {window_days!r}")
    freq = base.check_freq(freq)
    status = base.status_column(df)
    title = title or f"Return rate per {base.FREQS[freq]} of submission"
    ax = new_axes(ax)
    dates_column = next((c for c in base.SUBMISSION_DATES
                         if c in df.columns and df[c].notna().any()), None)
    if df.empty:
        return no_items(ax, title)
    if dates_column is None:
        return no_items(ax, title, "no submission dates")
    dated = df[df[dates_column].notna()]
    periods = base.periods_of(dated[dates_column], freq)
    submitted = periods.value_counts().sort_index()
    codes = dated[status].astype("object")
    returned = codes.where(codes.isin(RETURN_STATUSES))
    counts = returned.groupby([periods, returned]).size().unstack(fill_value=0)
    full = pd.period_range(submitted.index.min(), submitted.index.max(), freq=freq)
    submitted = submitted.reindex(full, fill_value=0)
    counts = counts.reindex(index=full, columns=list(RETURN_STATUSES), fill_value=0)
    starts = full.start_time
    with np.errstate(divide="ignore", invalid="ignore"):
        for code in RETURN_STATUSES:
            if not counts[code].any():
                continue
            rate = 100 * counts[code].to_numpy(dtype="float64") / submitted.to_numpy()
            ax.plot(starts, np.where(submitted.to_numpy() > 0, rate, np.nan), marker="o",
                    markersize=3, color=base.status_color(code), label=base.status_label(code))
    if not ax.lines:
        ax.plot(starts, np.zeros(len(full)), color=base.status_color("R"),
                label=base.status_label("R"))
    from matplotlib.ticker import PercentFormatter

    ax.yaxis.set_major_formatter(PercentFormatter(decimals=1 if ax.get_ylim()[1] < 5 else 0))
    ax.set_ylim(bottom=0)
    date_axis(ax)
    base.shade_immature(ax, full, full.end_time + pd.Timedelta(days=window_days),
                        base.as_of_moment(as_of),
                        f"Submission date (UTC, {dates_column}), per {base.FREQS[freq]}",
                        f"returns come up to {window_days} days after settlement")
    ax.set_ylabel("Share of submitted items")
    legend(ax, "Grouped by current status")
    ax.set_title(title)
    return ax


def return_reasons(df: pd.DataFrame, top: int = 10, ax: Axes | None = None, *,
                   title: str | None = None) -> Axes:
    """The most frequent return reasons (R01...) or NOC change codes (C01...), with meanings.

    An item frame counts its returns by ``returnReason``; a NOC frame (it has
    ``changeCode``) counts its NOCs by ``changeCode``. Each bar is labelled with the
    code and its meaning (:func:`paynb.codes.code_label`). Codes beyond ``top`` are
    summed as "other", and so is a code in none of NACHA's tables, which the "other"
    label names (``R99: not a NACHA code paynb knows``).

    Returns:
        The Axes: horizontal bars, the most frequent on top, labelled with counts.
    """
    if not isinstance(top, int) or isinstance(top, bool) or top < 1:
        raise ValueError(f"top must be a positive integer; got {top!r}")
    if isinstance(df, pd.DataFrame) and "changeCode" in df.columns:
        column, what, color = "changeCode", "NOCs", STATUS_COLORS["W"]
        title = title or "Most frequent NOC change codes"
    else:
        base.require(df, "returnReason")
        column, what, color = "returnReason", "Returns", STATUS_COLORS["R"]
        title = title or "Most frequent return reasons"
    ax = new_axes(ax, (8, 0.9 + 0.4 * min(top + 1, 12)))
    # Count the raw values first: the clean-up then touches each distinct code once.
    raw = df[column].value_counts(dropna=True)
    codes = pd.Index([normalise_code(code) for code in raw.index])
    counts = raw.groupby(codes).sum()
    counts = counts[counts.index != ""].sort_values(ascending=False, kind="stable")
    if counts.empty:
        return no_items(ax, title)
    known = np.array([is_known_code(code) for code in counts.index], dtype=bool)
    unknown = sorted(counts.index[~known])
    shown = counts[known].iloc[:top]
    rest = counts[known].iloc[top:]
    labels = [label if len(label) <= 60 else label[:57] + "..."
              for label in map(code_label, shown.index)]
    heights = shown.to_list()
    if len(rest) or unknown:
        others = len(rest) + len(unknown)
        label = f"other ({others} code{'s' if others > 1 else ''})"
        if unknown:
            one = len(unknown) == 1
            label += (f"\n{', '.join(unknown[:3])}{', ...' if len(unknown) > 3 else ''}: not "
                      f"{'a ' if one else ''}NACHA code{'' if one else 's'} paynb knows")
        labels.append(label)
        heights.append(int(rest.sum()) + int(counts[~known].sum()))
    positions = np.arange(len(labels))[::-1]
    colors = [color] * len(shown) + [base.OTHER_COLOR] * (len(labels) - len(shown))
    bars = ax.barh(positions, heights, color=colors)
    ax.set_yticks(positions, labels)
    ax.bar_label(bars, labels=[f"{h:,}" for h in heights], padding=2)
    ax.set_xlabel(what)
    count_axis(ax, "x")
    ax.margins(x=0.1)
    ax.set_title(title)
    return ax


def returns_calendar(df: pd.DataFrame, ax: Axes | None = None, *, title: str | None = None) -> Axes:
    """Returns per weekday and week (of the return date): weekly rhythm and busy weeks.

    Rows are Monday to Sunday, columns the weeks (by their Monday), each cell the
    number of items returned, invalidated or blocked that day; a colour bar gives
    the scale and small calendars show the numbers in the cells.

    Returns:
        The heatmap's Axes.
    """
    title = title or "Returns by weekday and week"
    ax = new_axes(ax, (10, 3.8))
    returns = base.returned_rows(df)
    if returns.empty:
        return no_items(ax, title, "no items returned")
    # returnDate is UTC (paynb.frames); a frame built elsewhere may hold zone-less times.
    days = base.naive_utc(returns["returnDate"]).dt.normalize()
    per_day = days.value_counts()
    first_monday = per_day.index.min() - pd.Timedelta(days=per_day.index.min().day_of_week)
    column = ((per_day.index - first_monday).days // 7).to_numpy()
    mondays = pd.date_range(first_monday, periods=int(column.max()) + 1, freq="7D")
    grid = np.zeros((7, len(mondays)))
    grid[per_day.index.day_of_week.to_numpy(), column] = per_day.to_numpy()
    from matplotlib.colors import LinearSegmentedColormap

    cmap = LinearSegmentedColormap.from_list("paynb_returns", ["#FFFFFF", STATUS_COLORS["R"]])
    image = ax.imshow(grid, aspect="auto", cmap=cmap, vmin=0, interpolation="nearest")
    bar = ax.figure.colorbar(image, ax=ax, label="Items", fraction=0.04, pad=0.02)
    count_axis(bar.ax)
    ax.set_yticks(range(7), base.WEEKDAYS)
    ticks = list(range(0, len(mondays), -(-len(mondays) // 8)))
    ax.set_xticks(ticks, year_labels([mondays[i] for i in ticks], "%d %b"))
    if len(mondays) <= 16:
        peak = grid.max()
        for (row, col), count in np.ndenumerate(grid):
            if count:
                ax.text(col, row, f"{count:,.0f}", ha="center", va="center", fontsize=8,
                        color="white" if count > 0.6 * peak else "#333333")
    ax.set_xlabel("Week starting (UTC)")
    ax.set_ylabel("Weekday")
    ax.set_title(title)
    return ax


# df.paynb.<chart>(...) for each chart (paynb.accessor; the compliance charts register
# themselves).
for _chart in (status_summary, return_trend, return_rate, return_reasons, returns_calendar):
    register(_chart)
