"""Items frame -> the few numpy arrays every compliance figure is computed from.

One pass over the columns (each value converted once, in compiled code), so a
million items cost the same whichever figure is asked for. Days are int64
counts of UTC calendar days since 1970-01-01; a missing date is :data:`NO_DAY`.
"""

from __future__ import annotations

import datetime as dt
import logging
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from paynb._attrs import HISTORY
from paynb._time import utc_day
from paynb._warn import user_stacklevel
from paynb.compliance._rules import CATEGORIES, NOT_ENTRY_STATUSES
from paynb.errors import PaynbWarning

__all__ = ["NO_DAY", "Prepared", "as_day", "by_names", "day_stamps", "day_values", "encoded",
           "group_frame", "prepare", "text_in", "to_dates", "today", "warn_beyond_history",
           "without_history_mark"]

logger = logging.getLogger("paynb.compliance")

#: The day number of a missing date (numpy's NaT as int64): below every real day.
NO_DAY = np.iinfo(np.int64).min
#: Where an entry's origination date comes from, first present wins.
ORIGINATION_COLUMNS = ("sendDate", "achEffectiveDate", "receivedDateTime")


def today() -> int:
    """Today's UTC day number."""
    return int(np.datetime64(dt.datetime.now(dt.UTC).date(), "D").astype("int64"))


def as_day(value: Any, name: str = "as_of") -> int:
    """A day number from a date, datetime, Timestamp, numpy datetime64 or ISO text
    (None: today, UTC). A time of day is dropped after converting to UTC."""
    if value is None:
        return today()
    return int(np.datetime64(utc_day(value, name), "D").astype("int64"))


def warn_beyond_history(items: Any, first: int, last: int, measured: str) -> None:
    """Warn when ``items`` were read from a local history (:data:`paynb._attrs.HISTORY`)
    that cannot hold the days ``first`` to ``last`` (day numbers) ``measured`` covers:
    days before the store's ``since``, or after its last sync. The figures would pass
    for the company's while they are the store's."""
    held = items.attrs.get(HISTORY) if isinstance(items, pd.DataFrame) else None
    if not isinstance(held, dict):
        return
    gaps = []
    since, synced = held.get("since"), held.get("syncedAt")
    if since is not None and first < as_day(since, "since"):
        gaps.append(f"it keeps the items received from {str(since)[:10]} on (synced with "
                    "since=), so the earlier ones are not counted")
    if synced is not None and last > as_day(synced, "syncedAt"):
        gaps.append(f"it was last synced on {str(synced)[:10]}, so the returns and entries "
                    "since then are not counted (client.sync() brings it up to date)")
    if gaps:
        warnings.warn(f"{measured} ({to_dates(first)} to {to_dates(last)}) is measured on the "
                      f"local history at {held.get('path')} ({held.get('kind')}): "
                      + "; and ".join(gaps), PaynbWarning, stacklevel=user_stacklevel())


def without_history_mark(items: Any) -> Any:
    """``items`` without the mark :func:`warn_beyond_history` reads (a shallow copy), for
    a figure whose caller has already said what the history lacks, or that measures
    the history as it was on purpose."""
    if isinstance(items, pd.DataFrame) and HISTORY in items.attrs:
        items = items.copy(deep=False)
        items.attrs = {key: value for key, value in items.attrs.items() if key != HISTORY}
    return items


def to_dates(days: Any) -> Any:
    """Day numbers -> numpy datetime64[D] (scalar or array)."""
    return np.asarray(days, dtype="int64").astype("datetime64[D]") if np.ndim(days) else \
        np.datetime64(int(days), "D")


def day_stamps(days: np.ndarray) -> np.ndarray:
    """Day numbers -> numpy datetime64[ns] (naive, UTC): a frame's date column."""
    return days.astype("datetime64[D]").astype("datetime64[ns]")


def group_frame(labels: pd.DataFrame, groups: np.ndarray, before: dict[str, Any],
                after: dict[str, Any]) -> pd.DataFrame:
    """The columns ``before``, the ``by`` columns of each row's group (codes ``groups`` into
    ``labels``, their dtypes kept: categoricals, str), then the columns ``after``."""
    frame = pd.DataFrame({**before, **{name: labels[name].to_numpy()[groups]
                                       for name in labels.columns}, **after})
    for name in labels.columns:
        frame[name] = frame[name].astype(labels[name].dtype)
    return frame


def day_values(series: pd.Series, name: str) -> np.ndarray:
    """UTC day numbers of a date column: tz-aware timestamps (converted to UTC), naive
    timestamps or dates (taken as UTC), pyarrow dates or timestamps, ISO texts."""
    dtype = series.dtype
    if isinstance(dtype, pd.DatetimeTZDtype):
        naive = series.dt.tz_convert("UTC").dt.tz_localize(None)
        return np.asarray(naive).astype("datetime64[D]").view("int64")
    if pd.api.types.is_datetime64_dtype(dtype):
        return np.asarray(series).astype("datetime64[D]").view("int64")
    if isinstance(dtype, pd.ArrowDtype) and (pa.types.is_date(dtype.pyarrow_dtype)
                                             or pa.types.is_timestamp(dtype.pyarrow_dtype)):
        array = pa.chunked_array([pa.array(series.array)])
        if pa.types.is_timestamp(array.type) and array.type.tz is not None:
            array = array.cast(pa.timestamp(array.type.unit))  # the UTC wall clock
        days = array.cast(pa.date32()).cast(pa.int32()).to_numpy(zero_copy_only=False)
        return np.where(np.isnan(days), NO_DAY, days).astype("int64") if days.dtype.kind == "f" \
            else days.astype("int64")
    # Dates as objects (datetime.date, Timestamps) or texts: parse them as UTC.
    parsed = pd.to_datetime(series, utc=True, errors="coerce", format="mixed")
    lost = int(series.notna().sum() - parsed.notna().sum())
    if lost:
        logger.warning("column %s: %d values are not dates; treated as missing", name, lost)
    return day_values(parsed, name)


def encoded(series: pd.Series) -> tuple[np.ndarray, list[Any]]:
    """``series`` as codes into its distinct values (-1: missing), in compiled code: a
    categorical's own codes; Arrow text dictionary-encoded by Arrow (half the time of
    pandas' factorize of it under pandas 3.1); anything else factorized."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return series.cat.codes.to_numpy(), list(dtype.categories)
    arrow_text = (isinstance(dtype, pd.StringDtype) and dtype.storage == "pyarrow") or (
        isinstance(dtype, pd.ArrowDtype) and (pa.types.is_string(dtype.pyarrow_dtype)
                                             or pa.types.is_large_string(dtype.pyarrow_dtype)))
    if arrow_text:
        values = pa.array(series.array)
        if isinstance(values, pa.ChunkedArray):  # (a history's frame: a chunk per file)
            values = values.combine_chunks()
        found = values.dictionary_encode()
        codes = found.indices.fill_null(-1).to_numpy(zero_copy_only=False)
        return codes, found.dictionary.to_pylist()
    codes, uniques = pd.factorize(series)
    return codes, list(uniques)


def text_in(series: pd.Series, wanted: Sequence[str],
            coded: tuple[np.ndarray, list[Any]] | None = None) -> np.ndarray:
    """Rows whose value, stripped and upper-cased, is one of ``wanted`` (via the
    distinct values only: fast on a million rows). ``coded``: the series'
    :func:`encoded`, when several questions are asked of it."""
    codes, uniques = coded if coded is not None else encoded(series)
    # The last place answers the missing values' code, -1.
    keep = np.array([str(u).strip().upper() in wanted for u in uniques] + [False], dtype=bool)
    return keep[codes]


def _is_zero(series: pd.Series) -> np.ndarray:
    """Amounts that are exactly zero (prenotes); a missing amount is not zero."""
    if isinstance(series.dtype, pd.ArrowDtype):
        array = pa.array(series.array)
        if pa.types.is_decimal(array.type):
            zero = pc.equal(array, pa.scalar(Decimal(0), array.type))
        else:
            zero = pc.equal(array, 0)
        return zero.fill_null(False).to_numpy(zero_copy_only=False)
    numbers = pd.to_numeric(series, errors="coerce")
    return (numbers == 0).to_numpy(dtype=bool, na_value=False)


def _column(items: pd.DataFrame, names: Sequence[str], what: str) -> pd.Series:
    for name in names:
        if name in items.columns:
            return items[name]
    raise ValueError(f"items has no column {names[0]!r} ({what}); pass an ACH items frame "
                     "from the paynb client (client.ach.list(), .changes(), an export)")


@dataclass(frozen=True)
class Prepared:
    """What the figures need from an items frame, one value per row.

    ``prenote``: a prenotification (amount 0 or sub-type ``Prenote``: no entry, whatever
    its status); ``entry``: a debit entry (a debit sent to the network, not a prenote);
    ``origination``: its origination day; ``returned``: a debit entry returned (status R), on day
    ``return_day``, with ``category`` bits (1 unauthorized, 2 administrative) from its
    return code; ``groups``/``labels``: the ``by`` groups (codes into ``labels``);
    ``weight``: how many items the row stands for (1 each, unless ``weights=``).
    """

    n: int
    weight: np.ndarray
    prenote: np.ndarray
    entry: np.ndarray
    origination: np.ndarray
    returned: np.ndarray
    return_day: np.ndarray
    category: np.ndarray
    groups: np.ndarray
    labels: pd.DataFrame

    def in_category(self, index: int) -> np.ndarray:
        """Returned entries of category ``index`` (0, 1, 2 as in :data:`CATEGORIES`)."""
        if CATEGORIES[index].codes is None:
            return self.returned
        return self.returned & ((self.category & (1 << index)) != 0)


def by_names(by: str | Sequence[str] | None) -> tuple[str, ...]:
    """The columns ``by`` names (a figure's split): a name, a list of them, or None."""
    if by is None:
        return ()
    if isinstance(by, str):
        return (by,)
    if isinstance(by, Sequence) and all(isinstance(b, str) for b in by):
        return tuple(by)
    raise TypeError(f"by must be a column name, a list of them, or None; got {by!r}")


def _groups(items: pd.DataFrame, by: tuple[str, ...]) -> tuple[np.ndarray, pd.DataFrame]:
    if not by:
        return np.zeros(len(items), dtype=np.int64), pd.DataFrame(index=pd.RangeIndex(1))
    missing = [b for b in by if b not in items.columns]
    if missing:
        raise ValueError(f"by: items has no column {', '.join(map(repr, missing))}")
    # Every group the items hold, sorted, a missing value as a group of its own (an
    # item without a company code still counts in the totals). Factorizing each column
    # and then the combined codes keeps this fast on a million rows.
    codes = np.zeros(len(items), dtype=np.int64)
    uniques: list[Any] = []
    for name in by:
        column_codes, column_uniques = pd.factorize(items[name], sort=True,
                                                    use_na_sentinel=False)
        codes = codes * len(column_uniques) + column_codes
        uniques.append(column_uniques)
    groups, combined = pd.factorize(codes, sort=True)
    labels = {}
    for name, column_uniques in reversed(list(zip(by, uniques, strict=True))):
        labels[name] = pd.Series(column_uniques.take(combined % len(column_uniques)),
                                 dtype=items[name].dtype)
        combined = combined // len(column_uniques)
    return groups.astype(np.int64), pd.DataFrame({name: labels[name] for name in by})


def _weights(items: pd.DataFrame, weights: str | None) -> np.ndarray:
    if weights is None:
        return np.ones(len(items), dtype=np.int64)
    if not isinstance(weights, str) or weights not in items.columns:
        raise ValueError(f"weights must name a column of items (how many items each row "
                         f"stands for); got {weights!r}")
    counts = pd.to_numeric(items[weights], errors="coerce")
    whole = counts.notna() & (counts >= 0) & (counts == counts.round())
    if not bool(whole.all()):
        raise ValueError(f"weights: column {weights!r} must hold whole numbers, 0 or more "
                         f"(row {int(np.flatnonzero(~whole.to_numpy())[0])} does not)")
    return counts.to_numpy(dtype=np.int64)


def prepare(items: pd.DataFrame, by: str | Sequence[str] | None = None,
            weights: str | None = None) -> Prepared:
    """The arrays of :class:`Prepared` from an ACH items frame (see the package docs for
    what counts as an entry and as a return). ``weights``: a column of how many items
    each row stands for, in a frame of items grouped by the columns read here (the
    package docs, "Grouped items")."""
    if not isinstance(items, pd.DataFrame):
        raise TypeError(f"items must be a pandas DataFrame, not {type(items).__name__}")
    by_columns = by_names(by)
    weight = _weights(items, weights)
    status = _column(items, ("itemStatus", "status"), "the item status")
    kind = _column(items, ("achTransactionType",), "Debit or Credit")
    return_date = _column(items, ("returnDate",), "the return date")
    reason = _column(items, ("returnReason",), "the return code")
    n = len(items)

    debit = text_in(kind, ("DEBIT",))
    prenote = np.zeros(n, dtype=bool)
    if "amount" in items.columns:
        prenote |= _is_zero(items["amount"])
    if "achTransactionSubType" in items.columns:
        prenote |= text_in(items["achTransactionSubType"], ("PRENOTE",))
    if "amount" not in items.columns and "achTransactionSubType" not in items.columns:
        logger.warning("items has no amount or achTransactionSubType column: prenotes "
                       "cannot be told apart and count as entries")
    statuses = encoded(status)
    status_s_r = text_in(status, ("S", "R"), statuses)
    never_sent = text_in(status, tuple(NOT_ENTRY_STATUSES - {"W"}), statuses)

    origination = np.full(n, NO_DAY, dtype=np.int64)
    present = [c for c in ORIGINATION_COLUMNS if c in items.columns]
    if not present:
        raise ValueError("items has none of the columns " + ", ".join(ORIGINATION_COLUMNS)
                         + " (the origination date of an entry)")
    if "sendDate" not in present:
        logger.warning("items has no sendDate column: entries are dated by %s instead",
                       " or ".join(present))
    sent = np.zeros(n, dtype=bool)
    for name in present:
        days = day_values(items[name], name)
        if name == "sendDate":
            sent = days != NO_DAY
        origination = np.where(origination == NO_DAY, days, origination)

    # A W item with a send date went to the network (the service may show W until the
    # item settles): it is an entry. V, I, B and an unsent W are not.
    entry = debit & ~prenote & (status_s_r | (sent & ~never_sent)) & (origination != NO_DAY)

    return_day = day_values(return_date, "returnDate")
    returned = debit & ~prenote & text_in(status, ("R",), statuses) & (return_day != NO_DAY)
    category = np.zeros(n, dtype=np.int8)
    reasons = encoded(reason)
    for index, cat in enumerate(CATEGORIES):
        if cat.codes is not None:
            category |= np.where(text_in(reason, tuple(cat.codes), reasons), 1 << index,
                                 0).astype(np.int8)
    groups, labels = _groups(items, by_columns)
    return Prepared(n, weight, prenote, entry, origination, returned, return_day, category,
                    groups, labels)
