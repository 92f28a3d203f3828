"""NACHA return rates of debit entries against their thresholds, now and over time."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from paynb.compliance._grouped import as_items
from paynb.compliance._items import (
    Prepared,
    as_day,
    day_stamps,
    group_frame,
    prepare,
    to_dates,
    today,
    warn_beyond_history,
)
from paynb.compliance._rules import CATEGORIES, WARNING_SHARE, WINDOWS

if TYPE_CHECKING:
    from deltalake import DeltaTable

    from paynb.history import History

__all__ = ["LEVELS", "counted_returns", "daily_counts", "return_rates", "rolling_return_rates"]

#: Levels of a rate, mildest first (an ordered categorical in every result).
LEVELS: tuple[str, ...] = ("no entries", "ok", "warning", "over")
_LEVEL_DTYPE = pd.CategoricalDtype(list(LEVELS), ordered=True)
_CATEGORY_DTYPE = pd.CategoricalDtype([c.name for c in CATEGORIES], ordered=True)
_FREQS = {"D": "D", "W": "W-SUN", "M": "ME"}


def _categories(groups: int) -> pd.Categorical:
    """The categories in order, once for each of ``groups`` groups."""
    return pd.Categorical.from_codes(np.tile(np.arange(len(CATEGORIES)), groups),
                                     dtype=_CATEGORY_DTYPE)


def _check_window(window: str) -> str:
    if window not in WINDOWS:
        raise ValueError(f"window must be one of {', '.join(map(repr, WINDOWS))}; got {window!r}")
    return window


def _share(warning_share: float) -> Fraction:
    if isinstance(warning_share, bool) or not isinstance(warning_share, int | float) or not (
            0 < warning_share <= 1):
        raise ValueError(f"warning_share must be a number in (0, 1]; got {warning_share!r}")
    # From its text: 0.8 is exactly 4/5, not the float nearest it.
    return Fraction(str(warning_share))


def window_bounds(days: Any, window: str) -> tuple[np.ndarray, np.ndarray]:
    """First and last day (inclusive) of the window of each as-of day.

    ``"60D"``: the 60 calendar days ending on the as-of day, both included.
    ``"2M"``: the two calendar months before the as-of day's month (1 Sep - 31 Oct
    for any day of November).
    """
    days = np.asarray(days, dtype=np.int64)
    if window == "60D":
        return days - 59, days
    month = days.astype("datetime64[D]").astype("datetime64[M]")
    first = (month - 2).astype("datetime64[D]").astype(np.int64)
    last = month.astype("datetime64[D]").astype(np.int64) - 1
    return first, last


def _levels(returns: np.ndarray, entries: np.ndarray, bp: np.ndarray, share: Fraction
            ) -> pd.Categorical:
    """Exact integer comparisons: over when returns/entries > bp/10000 ("exceeds"),
    warning from ``share`` of the threshold on."""
    returns = returns.astype(np.int64)
    entries = entries.astype(np.int64)
    scaled = returns * 10_000 * share.denominator
    over = returns * 10_000 > bp * entries
    warning = scaled >= share.numerator * bp * entries
    codes = np.where(entries == 0, 0, np.where(over, 3, np.where(warning, 2, 1)))
    return pd.Categorical.from_codes(codes, dtype=_LEVEL_DTYPE)


def _table(labels: pd.DataFrame, groups: np.ndarray, returns: np.ndarray, entries: np.ndarray,
           share: Fraction | None, extra: dict[str, Any]) -> pd.DataFrame:
    """Rows of (group, category) from flat arrays whose category runs fastest: the counts,
    then (given the warning ``share``) the rates against their thresholds."""
    k = len(CATEGORIES)
    frame = group_frame(labels, groups, extra, {"category": _categories(len(groups) // k),
                                                "returns": returns.astype(np.int64),
                                                "entries": entries.astype(np.int64)})
    if share is None:
        return frame
    bp = np.tile([c.threshold_bp for c in CATEGORIES], len(groups) // k)
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = np.where(entries > 0, returns / np.where(entries > 0, entries, 1), np.nan)
    frame["rate"] = rate
    frame["threshold"] = thresholds = bp / 10_000
    frame["share_of_threshold"] = rate / thresholds
    frame["level"] = _levels(returns, entries, bp, share)
    return frame


def _per_day(prep: Prepared, first: int, last: int) -> tuple[np.ndarray, np.ndarray]:
    """Each day's counts from ``first`` to ``last``: entries (days, groups) by origination
    day, returns (days, groups, categories) by return day."""
    size, span = len(prep.labels), last - first + 1

    def count(mask: np.ndarray, when: np.ndarray) -> np.ndarray:
        inside = mask & (when >= first) & (when <= last)
        flat = (when - first) * size + prep.groups
        return tally(prep, flat, inside, span * size).reshape(span, size)

    return count(prep.entry, prep.origination), np.stack(
        [count(prep.in_category(i), prep.return_day) for i in range(len(CATEGORIES))], axis=-1)


def _daily_table(prep: Prepared, days: np.ndarray, entries: np.ndarray, returns: np.ndarray,
                 share: Fraction | None) -> pd.DataFrame:
    """Rows of (day, group, category) from counts shaped as :func:`_per_day` gives them."""
    size, k = len(prep.labels), len(CATEGORIES)
    groups = np.tile(np.repeat(np.arange(size), k), len(days))
    return _table(prep.labels, groups, returns.ravel(), np.repeat(entries.ravel(), k), share,
                  {"date": np.repeat(day_stamps(days), size * k)})


def tally(prep: Prepared, keys: np.ndarray, mask: np.ndarray, size: int) -> np.ndarray:
    """The items of the rows in ``mask`` counted by ``keys`` (0 to ``size`` - 1): one per
    row, or the row's weight; exact (whole numbers under 2**53 as floats)."""
    counted = np.bincount(keys[mask], weights=prep.weight[mask], minlength=size)
    return counted.astype(np.int64)


def _counts(prep: Prepared, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
    """(returns per group and category, entries per group) in one window."""
    size = len(prep.labels)
    inside = prep.entry & (prep.origination >= lo) & (prep.origination <= hi)
    entries = tally(prep, prep.groups, inside, size)
    returned = prep.returned & (prep.return_day >= lo) & (prep.return_day <= hi)
    returns = np.empty((size, len(CATEGORIES)), dtype=np.int64)
    for index in range(len(CATEGORIES)):
        returns[:, index] = tally(prep, prep.groups, returned & prep.in_category(index), size)
    return returns, entries


def counted_returns(items: pd.DataFrame) -> pd.DataFrame:
    """How the return rates count each item of ``items``, by the rule
    :func:`return_rates` counts by (docs/compliance.md, "What counts").

    Returns a frame on ``items``' index with boolean columns ``prenote`` (a
    prenotification: amount 0 or sub-type ``Prenote``; a non-monetary entry that tests
    the account, NACHA Operating Rules Article Two, Subsection 2.6, never counted),
    ``counted`` (a returned debit entry: counted in the overall rate; a returned credit
    or prenote is not) and one per category of :data:`CATEGORIES` with codes of its own
    (``unauthorized``, ``administrative``): counted in that rate too.

    Args:
        items: ACH items as for :func:`return_rates` (the returns alone will do).
    """
    prep = prepare(items)
    columns = {"prenote": prep.prenote, "counted": prep.returned}
    for index, category in enumerate(CATEGORIES):
        if category.codes is not None:
            columns[category.name] = prep.in_category(index)
    return pd.DataFrame(columns, index=items.index)


def return_rates(items: pd.DataFrame | History | DeltaTable, *, as_of: Any = None,
                 window: str = "60D", by: str | Sequence[str] | None = None,
                 warning_share: float = WARNING_SHARE,
                 weights: str | None = None) -> pd.DataFrame:
    """The three NACHA return rates of the debit entries in ``items``, against their thresholds.

    Args:
        items: ACH items as the client returns them (``client.ach.list()``, an export, a
            concatenation of several): ``itemStatus``, ``achTransactionType``,
            ``returnDate``, ``returnReason``, and the origination dates ``sendDate``
            (else ``achEffectiveDate``, else ``receivedDateTime``). Or a
            :class:`paynb.History` (its company's items, when made for one) or its ACH
            ``deltalake.DeltaTable``: grouped in DuckDB by what the figures read, the
            same figures with no frame of the items (docs/compliance.md, "At scale").
        as_of: the last day measured (a date, datetime or ISO text, read in UTC);
            None for today (UTC).
        window: ``"60D"``: the 60 calendar days ending on ``as_of``, both ends
            included; ``"2M"``: the two calendar months before the month of ``as_of``.
        by: a column (or list of columns) to split by, such as ``"companyCode"`` or
            ``"achEntryClass"``: one set of rows per value the items hold.
        warning_share: the share of a threshold from which the level is ``"warning"``.
        weights: a column of how many items each row stands for, when ``items`` is
            grouped (docs/compliance.md, "Grouped items"); default one item per row;
            none with a History, which paynb groups itself.

    Returns:
        One row per category (``unauthorized``, ``administrative``, ``overall``) and
        ``by`` group: ``returns`` (debit returns whose return date is in the window),
        ``entries`` (debit entries originated in the window), ``rate`` (NaN without
        entries), ``threshold``, ``share_of_threshold``, ``level`` (``no entries``,
        ``ok``, ``warning`` from ``warning_share`` of the threshold, ``over`` when the
        rate exceeds the threshold), then ``window_start`` and ``window_end``.

    Raises:
        ValueError: an unknown window, a warning share outside (0, 1], an as-of that
            is no date, or a frame without the columns above.
    """
    window = _check_window(window)
    share = _share(warning_share)
    day = as_day(as_of)
    (lo,), (hi,) = window_bounds([day], window)
    items, weights = as_items(items, by, weights, since=("rates", int(lo)))
    prep = prepare(items, by, weights)
    warn_beyond_history(items, int(lo), int(hi), "the return rates' window")
    returns, entries = _counts(prep, int(lo), int(hi))
    size, k = len(prep.labels), len(CATEGORIES)
    groups = np.repeat(np.arange(size), k)
    return _table(prep.labels, groups, returns.ravel(), np.repeat(entries, k), share, {}).assign(
        window_start=pd.Timestamp(to_dates(lo)), window_end=pd.Timestamp(to_dates(hi)))


def _evaluation_days(prep: Prepared, freq: str, start: Any, end: Any) -> np.ndarray:
    if not isinstance(freq, str) or freq.upper() not in _FREQS:
        raise ValueError(f"freq must be one of {', '.join(_FREQS)}; got {freq!r}")
    last = today() if end is None else as_day(end, "end")
    if start is None:
        known = prep.origination[prep.entry]
        first = int(known.min()) if known.size else last
        first = min(first, last)
    else:
        first = as_day(start, "start")
    if first > last:
        raise ValueError(f"start ({to_dates(first)}) is after end ({to_dates(last)})")
    dates = pd.date_range(pd.Timestamp(to_dates(first)), pd.Timestamp(to_dates(last)),
                          freq=_FREQS[freq.upper()])
    return dates.to_numpy().astype("datetime64[D]").astype(np.int64)


def rolling_return_rates(items: pd.DataFrame | History | DeltaTable, freq: str = "D", *,
                         window: str = "60D", start: Any = None, end: Any = None,
                         by: str | Sequence[str] | None = None,
                         warning_share: float = WARNING_SHARE,
                         weights: str | None = None) -> pd.DataFrame:
    """:func:`return_rates` as a time series: each day's figures over its trailing window.

    Computed from daily counts and their cumulative sums (one ``bincount`` per
    category, then two look-ups per day), so a year of days costs about one
    :func:`return_rates` call.

    Args:
        items: ACH items, as for :func:`return_rates`.
        freq: ``"D"`` every day, ``"W"`` every Sunday, ``"M"`` every month's last day.
        window: ``"60D"`` or ``"2M"``, as for :func:`return_rates`.
        start, end: the first and last as-of day (UTC dates); by default the first
            origination day in the items and today.
        by: a column (or columns) to split by.
        warning_share: the share of a threshold from which the level is ``"warning"``.
        weights: a column of how many items each row stands for, as for
            :func:`return_rates`.

    Returns:
        The columns of :func:`return_rates` (without the window bounds) after a
        ``date`` column (the as-of day, naive, UTC): one row per date, ``by`` group and
        category.

    Raises:
        ValueError: ``start`` after ``end``, an unknown ``freq`` or ``window``.
    """
    window = _check_window(window)
    share = _share(warning_share)
    items, weights = as_items(items, by, weights)
    prep = prepare(items, by, weights)
    days = _evaluation_days(prep, freq, start, end)
    if not days.size:
        none = np.zeros(0, np.int64)
        return _table(prep.labels, none, none, none, share, {"date": pd.DatetimeIndex([])})
    lo, hi = window_bounds(days, window)
    base, top = int(lo.min()), int(hi.max())
    warn_beyond_history(items, base, top, "the rolling return rates' windows")
    # Counts up to each day (a day of zeros first): a window's are two look-ups.
    totals = [np.concatenate([np.zeros_like(counts[:1]), counts.cumsum(axis=0)])
              for counts in _per_day(prep, base, top)]
    entries, returns = (total[hi - base + 1] - total[lo - base] for total in totals)
    return _daily_table(prep, days, entries, returns, share)


def daily_counts(items: pd.DataFrame | History | DeltaTable, *, start: Any, end: Any,
                 by: str | Sequence[str] | None = None,
                 weights: str | None = None) -> pd.DataFrame:
    """Each day's debit entries (by origination day) and debit returns (by return day, per
    category): what the return rates' windows add up, day by day.

    The same entries and returns as :func:`return_rates` counts (one definition), so a
    window's figures are the sum of its days' here. A projection of the rates (what
    :mod:`paynb.monitor` does) starts from these counts.

    Args:
        items: ACH items, as for :func:`return_rates`.
        start, end: the first and last day (UTC dates), both included.
        by: a column (or columns) to split by.
        weights: a column of how many items each row stands for, as for
            :func:`return_rates`.

    Returns:
        One row per day, ``by`` group and category: ``date`` (naive, UTC), the ``by``
        columns, ``category``, ``returns`` (returned that day, in the category),
        ``entries`` (debit entries originated that day; the same on each category's row).

    Raises:
        ValueError: ``start`` after ``end``, a bound that is no date.
    """
    first, last = as_day(start, "start"), as_day(end, "end")
    if first > last:
        raise ValueError(f"start ({to_dates(first)}) is after end ({to_dates(last)})")
    items, weights = as_items(items, by, weights, since=("rates", first))
    prep = prepare(items, by, weights)
    entries, returns = _per_day(prep, first, last)
    return _daily_table(prep, np.arange(first, last + 1, dtype=np.int64), entries, returns, None)
