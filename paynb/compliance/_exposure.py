"""Money that can still come back: settled debits whose return windows are open."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from paynb._coerce import parse_decimal
from paynb.calendar import add_banking_days
from paynb.compliance._grouped import as_items
from paynb.compliance._items import (
    NO_DAY,
    as_day,
    day_stamps,
    day_values,
    group_frame,
    prepare,
    text_in,
    warn_beyond_history,
)
from paynb.compliance._rules import (
    CONSUMER_ENTRY_CLASSES,
    EXTENDED_RETURN_DAYS,
    STANDARD_RETURN_BANKING_DAYS,
)

if TYPE_CHECKING:
    from deltalake import DeltaTable

    from paynb.history import History

__all__ = ["return_exposure"]

logger = logging.getLogger("paynb.compliance")


def _amounts(items: pd.DataFrame) -> pa.Array:
    """The amounts as an exact decimal array (decimal128 of the frame, or read from text)."""
    if "amount" not in items.columns:
        raise ValueError("items has no column 'amount'; pass an ACH items frame from the "
                         "paynb client")
    amount = items["amount"]
    if isinstance(amount.dtype, pd.ArrowDtype) and pa.types.is_decimal(
            amount.dtype.pyarrow_dtype):
        return pa.array(amount.array)
    # Floats or Decimals from elsewhere: through their shortest text, never rounded.
    values = [parse_decimal(v) for v in amount.tolist()]
    return pa.array(values, pa.decimal128(38, 2))


def _classes(classes: Iterable[str]) -> frozenset[str]:
    if isinstance(classes, str):
        raise TypeError("consumer_classes must be a collection of entry class codes, "
                        f"not the string {classes!r}")
    return frozenset(str(c).strip().upper() for c in classes)


def return_exposure(items: pd.DataFrame | History | DeltaTable, *, as_of: Any = None,
                    by: str | Sequence[str] | None = None,
                    consumer_classes: Iterable[str] = CONSUMER_ENTRY_CLASSES,
                    weights: str | None = None) -> pd.DataFrame:
    """Settled debits that can still be returned as of ``as_of``, per settlement day.

    A debit entry (see :func:`return_rates`) that settled on or before ``as_of`` and
    was not returned by then can still come back:

    - **standard** window, any return code: through the second banking day after
      its settlement day (NACHA Article Three, Subsection 3.8.3.1; banking days of
      :mod:`paynb.calendar`, where a Saturday holiday is not moved);
    - **unauthorized** window, consumer entry classes only (``consumer_classes``,
      PPD, WEB and TEL by default): through the 60th calendar day after settlement
      (Subsection 3.13, extended return entries R05, R07, R10, R11 ...).

    A window is open on its deadline day itself. The two overlap (a consumer debit
    two days after settlement is in both), so the amounts are not to be added.

    Args:
        items: ACH items from the client, with ``settleDate``, ``amount``,
            ``achEntryClass`` and the columns :func:`return_rates` needs; or a History
            (or its ACH table), as for :func:`return_rates`.
        as_of: the day to measure on (UTC date); None for today.
        by: a column (or columns) to split by, such as ``"companyCode"``.
        consumer_classes: entry classes that get the extended unauthorized window.
        weights: a column of how many items each row stands for, when ``items`` is
            grouped (its ``amount`` then the group's sum; docs/compliance.md, "Grouped
            items"); default one item per row.

    Returns:
        One row per settlement day (and ``by`` group) with at least one window still
        open, oldest first: ``settleDate``, ``standard_deadline``,
        ``unauthorized_deadline``, ``standard_amount`` and ``unauthorized_amount``
        (exact, pyarrow decimals), ``standard_count``, ``unauthorized_count``.
    """
    day = as_day(as_of)
    consumer = _classes(consumer_classes)
    # (The oldest settlement day whose window can be open: see ``candidate`` below.)
    items, weights = as_items(items, by, weights,
                              since=("exposure", day - EXTENDED_RETURN_DAYS - 10))
    if isinstance(items, pd.DataFrame) and "settleDate" not in items.columns:
        raise ValueError("items has no column 'settleDate' (the settlement date of a debit); "
                         "pass an ACH items frame from the paynb client")
    prep = prepare(items, by, weights)  # refuses what is not a DataFrame
    warn_beyond_history(items, day - EXTENDED_RETURN_DAYS, day, "the return exposure")
    amounts = _amounts(items)
    settle = day_values(items["settleDate"], "settleDate")
    if "achEntryClass" in items.columns:
        is_consumer = text_in(items["achEntryClass"], tuple(consumer))
    else:
        logger.warning("items has no achEntryClass column: no debit gets the extended "
                       "unauthorized return window")
        is_consumer = np.zeros(len(items), dtype=bool)
    still_out = ~prep.returned | (prep.return_day > day)
    settled = prep.entry & (settle != NO_DAY) & (settle <= day) & still_out
    # Only settlement days whose extended window can still be open matter; the standard
    # one closes within a week (two banking days, even across a holiday weekend), so 10
    # days beyond the 60 cover both.
    candidate = settled & (settle >= day - EXTENDED_RETURN_DAYS - 10)
    settle_days = np.unique(settle[candidate])
    standard_deadline = add_banking_days(settle_days.astype("datetime64[D]"),
                                         STANDARD_RETURN_BANKING_DAYS)
    standard_deadline = np.asarray(standard_deadline, dtype="datetime64[D]").astype(np.int64)
    extended_deadline = settle_days + EXTENDED_RETURN_DAYS
    position = np.searchsorted(settle_days, settle[candidate])
    rows = np.flatnonzero(candidate)
    standard = standard_deadline[position] >= day
    unauthorized = is_consumer[rows] & (extended_deadline[position] >= day)
    keep = standard | unauthorized
    rows, position, standard, unauthorized = (rows[keep], position[keep], standard[keep],
                                              unauthorized[keep])
    table = pa.table({
        "group": pa.array(prep.groups[rows]),
        "day": pa.array(position),
        "standard": pa.array(np.where(standard, prep.weight[rows], 0)),
        "unauthorized": pa.array(np.where(unauthorized, prep.weight[rows], 0)),
        "standard_amount": pc.if_else(pa.array(standard), amounts.take(rows), None),
        "unauthorized_amount": pc.if_else(pa.array(unauthorized), amounts.take(rows),
                                                  None),
    })
    grouped = table.group_by(["group", "day"]).aggregate([
        ("standard_amount", "sum"), ("standard", "sum"),
        ("unauthorized_amount", "sum"), ("unauthorized", "sum"),
    ]).sort_by([("group", "ascending"), ("day", "ascending")])
    at = grouped["day"].to_numpy()
    decimal = pa.decimal128(38, amounts.type.scale)

    def money(column: str) -> pd.api.extensions.ExtensionArray:
        summed = grouped[column].cast(decimal).fill_null(pa.scalar(0, decimal))
        return pd.arrays.ArrowExtensionArray(summed)

    return group_frame(prep.labels, grouped["group"].to_numpy(), {}, {
        "settleDate": day_stamps(settle_days[at]),
        "standard_deadline": day_stamps(standard_deadline[at]),
        "unauthorized_deadline": day_stamps(extended_deadline[at]),
        "standard_amount": money("standard_amount_sum"),
        "standard_count": grouped["standard_sum"].to_numpy().astype(np.int64),
        "unauthorized_amount": money("unauthorized_amount_sum"),
        "unauthorized_count": grouped["unauthorized_sum"].to_numpy().astype(np.int64),
    })
