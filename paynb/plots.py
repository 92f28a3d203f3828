"""Charts that answer an analyst's questions: what changed, how many, is it getting worse?

Every helper takes a DataFrame as the client returns it (see :mod:`paynb.frames`),
an optional matplotlib ``ax`` to draw on, and returns the Axes; none calls
``plt.show()``. Each aggregates first (group counts on the categorical status,
period floors on the dates), so a million rows draw as fast as a hundred.
A frame with no rows, or with nothing to show, gives an empty chart that says so.

Status colours come from :data:`paynb.codes.STATUS_COLORS`, so a status looks the
same in every chart. Dates are UTC, every tick of a date axis in one format
(``15 Oct``, the year under the first tick and wherever it changes). Titles, axes and
legends name columns in words (``transaction type``, not ``achTransactionType``), codes
with their meanings (``R01: Insufficient funds``, from :mod:`paynb.codes`; a code in no
NACHA table is summed under "other"), and ACH and RCC amounts in their currency
(``Amount (USD)``); instant card and RTP amounts are whole numbers in the service's
unstated unit and are never shown with decimals.

The same helpers hang on every DataFrame as ``df.paynb.<name>(...)``::

    returns = client.ach.list(status=["R", "I", "B"])
    returns.paynb.return_trend(freq="W")
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from paynb import models
from paynb._charts import (
    CURRENCY,
    count_axis,
    date_axis,
    legend,
    new_axes,
    no_items,
    thousands,
)
from paynb._time import utc_moment
from paynb.accessor import register
from paynb.codes import (
    EXTENDED_RETURN_DAYS,
    STATUS_COLORS,
    STATUS_NAMES,
    STATUS_ORDER,
    code_label,
    is_known_code,
    normalise_code,
)
from paynb.compliance.charts import return_exposure, return_rate_thresholds

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = [
    "CURRENCY",
    "INSTANT_COLORS",
    "LOG_SCALE_BELOW",
    "RETURN_STATUSES",
    "RETURN_WINDOW_DAYS",
    "return_rate",
    "return_reasons",
    "return_trend",
    "returns_calendar",
    "status_summary",
    "return_rate_thresholds",
    "return_exposure",
]

RETURN_STATUSES: tuple[str, ...] = ("R", "I", "B")
"""Statuses that count as a return in the return charts: returned, invalid, blocked."""
INSTANT_COLORS: dict[str, str] = {"Success": "#55A868", "Failed": "#C44E52"}
"""Colours of instant card and RTP statuses (item statuses: `paynb.codes.STATUS_COLORS`)."""
LOG_SCALE_BELOW = 0.02
"""The status chart turns logarithmic when its smallest bar is under this share of its
largest: below it a linear bar is a sliver no reader sees."""
RETURN_WINDOW_DAYS = EXTENDED_RETURN_DAYS
"""Days after settlement within which a return can still come: the extended return
deadline of unauthorized consumer debits (R05, R07, R10, R11, R37...: NACHA Operating Rules,
Article Three, 60 calendar days after the settlement date; :data:`paynb.codes.EXTENDED_RETURN`);
most returns come within two banking days. The return-rate chart shades the periods
younger than this as immature."""
_IMMATURE_COLOR = "#B0B0B0"
_OTHER_COLOR = "#A0A0A0"
_FREQS = {"D": "day", "W": "week", "M": "month", "Q": "quarter", "Y": "year"}
_SUBMISSION_DATES = ("receivedDateTime", "depositDateTime", "sendDate")
#: Columns holding NACHA codes: labelled with their meanings, unknown codes in "other".
_CODE_COLUMNS = ("returnReason", "changeCode")
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


# --------------------------------------------------------------------------- helpers

def _require(df: pd.DataFrame, *columns: str) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, not {type(df).__name__}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"df has no column {', '.join(map(repr, missing))}; "
                         "pass a DataFrame from the paynb client")


def _status_column(df: pd.DataFrame) -> str:
    _require(df)
    for name in ("itemStatus", "status"):
        if name in df.columns:
            return name
    raise ValueError("df has no column 'itemStatus' or 'status'; "
                     "pass a DataFrame from the paynb client")


def _color(status: Any) -> str:
    return STATUS_COLORS.get(status) or INSTANT_COLORS.get(status) or _OTHER_COLOR


def _status_label(status: Any) -> str:
    name = STATUS_NAMES.get(status)
    return f"{name} ({status})" if name else str(status)


def _check_freq(freq: str) -> str:
    if not isinstance(freq, str) or freq.upper() not in _FREQS:
        raise ValueError(f"freq must be one of {', '.join(_FREQS)}; got {freq!r}")
    return freq.upper()


def _naive_utc(dates: pd.Series) -> pd.Series:
    """UTC times without their zone: how paynb's date columns already are (see frames)."""
    return dates.dt.tz_convert("UTC").dt.tz_localize(None) if dates.dt.tz is not None else dates


def _periods(dates: pd.Series, freq: str) -> pd.Series:
    """Each UTC date's period (a naive UTC PeriodIndex-backed Series)."""
    return _naive_utc(dates).dt.to_period(freq)


#: The docs' words for the columns a chart may group by that no request form names.
_COLUMN_WORDS = {"itemStatus": "status", "status": "status", "returnReason": "return reason",
                 "changeCode": "change code", "companyCode": "company", "kind": "kind",
                 "cardBrand": "card brand", "itemSource": "source",
                 "reportStatus": "report status", "requestReturnStatus": "return request status"}


def _words(column: str) -> str:
    """A column in words, as the docs and forms name it: ``achTransactionType`` ->
    ``transaction type`` (the label of the request field), ``companyCode`` -> ``company``;
    a column paynb does not know stays as it is."""
    if column in _COLUMN_WORDS:
        return _COLUMN_WORDS[column]
    for model in (models.AchItem, models.RccItem, models.InstantCardTransaction,
                  models.RtpTransaction):
        for name, info in model.model_fields.items():
            if (info.alias or name) == column and info.title:
                title = info.title
                # "Transaction type" -> "transaction type"; "IAT type" keeps its capitals.
                return title if title[1:2].isupper() else title[:1].lower() + title[1:]
    return column


def _heading(column: str) -> str:
    """A column in words as an axis or legend heading: ``Transaction type``."""
    words = _words(column)
    return words[:1].upper() + words[1:]


def _integer_amounts(df: pd.DataFrame) -> bool:
    """Whether the amounts are whole numbers in the service's unit (instant card, RTP)."""
    amount = df["amount"].dtype if "amount" in df.columns else None
    return bool(df.attrs.get("amountUnit")) or (
        amount is not None and pd.api.types.is_integer_dtype(amount))


def _amount_label(df: pd.DataFrame) -> str:
    """The amount axis: ``Amount (USD)``, or the instant kinds' unstated unit."""
    if _integer_amounts(df):
        return "Amount (wire integer, unit not stated)"
    return f"Amount ({CURRENCY})"


def _money(number: float, whole: bool) -> str:
    """An amount for a label: ``1,234.50``, or ``1,234`` for whole-number units."""
    return f"{number:,.0f}" if whole else f"{number:,.2f}"


def _code_groups(codes: pd.Series) -> pd.Series:
    """Return or change codes for grouping: trimmed and upper-cased, a code in no NACHA
    table "other" (it is summed there; its frame warned of it)."""
    keys = {value: normalise_code(value) for value in codes.dropna().unique()}
    keys = {value: (key if is_known_code(key) else "other") if key else None
            for value, key in keys.items()}
    return codes.map(keys)


def _amounts(df: pd.DataFrame) -> pd.Series:
    """Amounts as floats for drawing (exact decimals stay in the frame)."""
    _require(df, "amount")
    amount = df["amount"]
    if isinstance(amount.dtype, pd.ArrowDtype):
        import pyarrow as pa

        # pyarrow casts decimals in compiled code; pandas' astype goes through
        # Decimal objects, about 100 times slower on a million rows.
        floats = pa.chunked_array(pa.array(amount.array)).cast(pa.float64())
        return pd.Series(floats.to_numpy(), index=amount.index, name="amount")
    return amount.astype("float64")


def _ordered(values: Sequence[Any]) -> list[Any]:
    """Statuses in lifecycle order, then any others alphabetically."""
    rank = {s: i for i, s in enumerate((*STATUS_ORDER, *INSTANT_COLORS))}
    return sorted(values, key=lambda s: (rank.get(s, len(rank)), str(s)))


def _returns(df: pd.DataFrame) -> pd.DataFrame:
    """Rows that were returned, invalidated or blocked, with a return date."""
    status = _status_column(df)
    _require(df, "returnDate")
    picked = df["returnDate"].notna() & df[status].isin(RETURN_STATUSES)
    return df.loc[picked, [status, "returnDate", *(
        c for c in ("returnReason",) if c in df.columns)]]


def _as_of(as_of: Any) -> pd.Timestamp:
    """The moment the data describes, as a zone-less UTC Timestamp (default: now)."""
    if as_of is None:
        return pd.Timestamp.now(tz="UTC").tz_localize(None)
    return pd.Timestamp(utc_moment(as_of, "as_of")).tz_localize(None)


def _shade_immature(ax: Axes, periods: pd.PeriodIndex, open_until: pd.DatetimeIndex,
                    as_of: pd.Timestamp, xlabel: str, why: str) -> int:
    """Shade the periods whose counts can still grow (``open_until`` after ``as_of``) and
    add a note under the chart; returns how many periods are shaded."""
    immature = np.asarray(open_until > as_of)
    if not immature.any():
        ax.set_xlabel(xlabel)
        return 0
    first = int(np.argmax(immature))
    start = periods[first].start_time
    end = periods[-1].end_time
    # A collection, not a patch: ax.patches stay the bars, one per count.
    shade = ax.fill_between([start, end], 0, 1, transform=ax.get_xaxis_transform(),
                            color=_IMMATURE_COLOR, alpha=0.25, zorder=0, linewidth=0)
    shade.set_gid("paynb-immature")
    # Upright along the shade: it fits a single narrow period and never runs into the legend.
    ax.text(start + (end - start) / 2, 0.97, "immature", transform=ax.get_xaxis_transform(),
            ha="center", va="top", rotation=90, fontsize="small", color="#555555",
            gid="paynb-immature-label")
    days = int(np.ceil((open_until[-1] - as_of) / pd.Timedelta(days=1)))
    # Short lines: the note sits under the chart, centred like the axis label.
    ax.set_xlabel(f"{xlabel}\nShaded: immature, returns can still come for "
                  f"{days} more day{'s' if days != 1 else ''}\n({why}): these values will rise.")
    return int(immature.sum())


def _top(series: pd.Series, top: int) -> pd.Series:
    """Values beyond the ``top`` most frequent become "other" (as "other" itself is)."""
    counts = series[series != "other"].value_counts()
    if len(counts) <= top:
        return series
    keep = set(counts.index[:top])
    return series.where(series.isin(keep) | series.isna(), "other")


# --------------------------------------------------------------------------- charts

def status_summary(df: pd.DataFrame, ax: Axes | None = None, *, by: str | None = None,
                   value: Literal["count", "amount"] = "count",
                   title: str | None = None) -> Axes:
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
    status = _status_column(df)
    if by is not None:
        _require(df, by)
    what = "Items" if value == "count" else "Amount"
    title = title or f"{what} per status" + (f" by {_words(by)}" if by else "")
    integers = value == "count" or _integer_amounts(df)
    ax = new_axes(ax)
    if df.empty:
        return no_items(ax, title)
    keys = [status] if by is None else [by, status]
    if value == "count":
        table = df.groupby(keys, observed=True, dropna=True).size()
    else:
        table = _amounts(df).groupby([df[k] for k in keys], observed=True, dropna=True).sum()
    table = table[table != 0] if value == "count" else table
    if table.empty:
        return no_items(ax, title)

    log = False
    if by is None:
        statuses = _ordered(list(table.index))
        heights = [float(table[s]) for s in statuses]
        bars = ax.bar([_status_label(s) for s in statuses], heights,
                      color=[_color(s) for s in statuses])
        whole = sum(heights)
        shares = [f" ({100 * h / whole:.{_share_decimals(h / whole)}f} %)" if whole > 0 else ""
                  for h in heights]
        ax.bar_label(bars, labels=[_money(h, integers) + share for h, share in zip(
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
        statuses = _ordered(list(wide.columns))
        groups = [str(g) for g in wide.index]
        bottom = np.zeros(len(groups))
        for s in statuses:
            heights = wide[s].to_numpy(dtype="float64")
            ax.bar(groups, heights, bottom=bottom, color=_color(s), label=_status_label(s))
            bottom += heights
        for position, total in enumerate(bottom):
            ax.annotate(_money(total, integers), (position, total), xytext=(0, 2),
                        textcoords="offset points", ha="center", va="bottom")
        legend(ax, "Stacked by status", stacked=True)
        ax.set_xlabel(_heading(by))
    label = "Items" if value == "count" else _amount_label(df)
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
    if share >= 0.1 or share == 0:
        return 0
    return 1 if share >= 0.01 else 2


def return_trend(df: pd.DataFrame, freq: str = "W", by: str | None = "status",
                 ax: Axes | None = None, *, kind: Literal["bar", "line"] = "bar",
                 top: int = 8, title: str | None = None, as_of: Any = None) -> Axes:
    """Returned, invalid and blocked items per period of their return date.

    Args:
        df: items from the client (``itemStatus`` and ``returnDate``); rows in R, I
            or B with a return date are counted.
        freq: ``"D"``, ``"W"`` (weeks starting Monday), ``"M"``, ``"Q"`` or ``"Y"``.
        by: ``"status"`` splits by status (in the status colours); any other
            column (``"returnReason"``, ``"achTransactionType"`` ...) splits by its
            ``top`` most frequent values, leaving out rows without a value there;
            None draws the total only.
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
    freq = _check_freq(freq)
    if kind not in ("bar", "line"):
        raise ValueError(f"kind must be 'bar' or 'line'; got {kind!r}")
    status = _status_column(df)
    title = title or f"Returns per {_FREQS[freq]}"
    ax = new_axes(ax)
    returns = _returns(df)
    if by is not None and by != "status":
        _require(df, by)
        returns = returns.assign(**{by: df.loc[returns.index, by]})
    if returns.empty:
        return no_items(ax, title, "no items returned")
    periods = _periods(returns["returnDate"], freq)
    if by is None:
        groups = pd.Series("all returns", index=returns.index)
    elif by == "status":
        groups = returns[status].astype("object")
    elif by in _CODE_COLUMNS:
        groups = _top(_code_groups(returns[by].astype("object")), top)
    else:
        groups = _top(returns[by].astype("object"), top)
    table = groups.groupby([periods, groups], dropna=True).size().unstack(fill_value=0)
    if table.empty:
        return no_items(ax, title, f"no returned items with a {_words(by)}")
    full = pd.period_range(table.index.min(), table.index.max(), freq=freq)
    table = table.reindex(full, fill_value=0)
    if by == "status":
        names = _ordered(list(table.columns))
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
    _shade_immature(ax, table.index, table.index.end_time, _as_of(as_of),
                    f"Return date (UTC), per {_FREQS[freq]}", f"this {_FREQS[freq]} is not over")
    ax.set_ylabel("Items")
    count_axis(ax)
    if by is not None:
        legend(ax, f"Grouped by {_words(by)}", stacked=kind == "bar")
    ax.set_title(title)
    return ax


def _group_colors(names: Sequence[Any], statuses: bool) -> dict[Any, str]:
    if statuses:
        return {name: _color(name) for name in names}
    from matplotlib import colormaps

    palette = colormaps["tab10"].colors
    return {name: (_OTHER_COLOR if name == "other" else palette[i % len(palette)])
            for i, name in enumerate(names)}


def _group_label(name: Any, by: str | None) -> str:
    if by == "status":
        return _status_label(name)
    label = code_label(name) if by in _CODE_COLUMNS and name != "other" else str(name)
    return label if len(label) <= 48 else label[:45] + "..."


def return_rate(df: pd.DataFrame, freq: str = "W", ax: Axes | None = None, *,
                title: str | None = None, as_of: Any = None,
                window_days: int = RETURN_WINDOW_DAYS) -> Axes:
    """Share of the items submitted in each period that ended returned, invalid or blocked.

    Items are grouped by their submission date (``receivedDateTime``, else
    ``depositDateTime``, else ``sendDate``); the line of each of R, I and B is the
    percentage of that period's items now in that status. Voided items count as
    submitted.

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
    freq = _check_freq(freq)
    status = _status_column(df)
    title = title or f"Return rate per {_FREQS[freq]} of submission"
    ax = new_axes(ax)
    dates_column = next((c for c in _SUBMISSION_DATES
                         if c in df.columns and df[c].notna().any()), None)
    if df.empty:
        return no_items(ax, title)
    if dates_column is None:
        return no_items(ax, title, "no submission dates")
    dated = df[df[dates_column].notna()]
    periods = _periods(dated[dates_column], freq)
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
                    markersize=3, color=_color(code), label=_status_label(code))
    if not ax.lines:
        ax.plot(starts, np.zeros(len(full)), color=_color("R"), label=_status_label("R"))
    from matplotlib.ticker import PercentFormatter

    ax.yaxis.set_major_formatter(PercentFormatter(decimals=1 if ax.get_ylim()[1] < 5 else 0))
    ax.set_ylim(bottom=0)
    date_axis(ax)
    _shade_immature(ax, full, full.end_time + pd.Timedelta(days=window_days), _as_of(as_of),
                    f"Submission date (UTC, {dates_column}), per {_FREQS[freq]}",
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
        _require(df, "returnReason")
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
    labels = [code_label(code) for code in shown.index]
    labels = [label if len(label) <= 60 else label[:57] + "..." for label in labels]
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
    colors = [color] * len(shown) + [_OTHER_COLOR] * (len(labels) - len(shown))
    bars = ax.barh(positions, heights, color=colors)
    ax.set_yticks(positions, labels)
    ax.bar_label(bars, labels=[f"{h:,}" for h in heights], padding=2)
    ax.set_xlabel(what)
    count_axis(ax, "x")
    ax.margins(x=0.1)
    ax.set_title(title)
    return ax


def returns_calendar(df: pd.DataFrame, ax: Axes | None = None, *, title: str | None = None
                     ) -> Axes:
    """Returns per weekday and week (of the return date): weekly rhythm and busy weeks.

    Rows are Monday to Sunday, columns the weeks (by their Monday), each cell the
    number of items returned, invalidated or blocked that day; a colour bar gives
    the scale and small calendars show the numbers in the cells.

    Returns:
        The heatmap's Axes.
    """
    title = title or "Returns by weekday and week"
    ax = new_axes(ax, (10, 3.8))
    returns = _returns(df)
    if returns.empty:
        return no_items(ax, title, "no items returned")
    # returnDate is UTC (paynb.frames); a frame built elsewhere may hold zone-less times.
    days = _naive_utc(returns["returnDate"]).dt.normalize()
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
    ax.set_yticks(range(7), _WEEKDAYS)
    ticks = list(range(0, len(mondays), -(-len(mondays) // 8)))
    labels = []
    for i in ticks:
        # The year under the first label and wherever it changes.
        new_year = not labels or mondays[i].year != mondays[ticks[len(labels) - 1]].year
        labels.append(mondays[i].strftime("%d %b\n%Y" if new_year else "%d %b"))
    ax.set_xticks(ticks, labels)
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
