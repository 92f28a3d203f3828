"""Threshold alerts for a scheduled notebook: what a poll's result (with history) triggers."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from paynb._kinds import KINDS, RETURN_KINDS
from paynb.compliance._items import without_history_mark
from paynb.compliance._rates import LEVELS, return_rates
from paynb.compliance._rules import WARNING_SHARE
from paynb.errors import ThresholdExceeded

__all__ = ["ReturnRateAlert", "check"]

logger = logging.getLogger("paynb.compliance")

_ID_COLUMNS = tuple(KINDS[kind].id_field for kind in RETURN_KINDS)
_RAISE_ON = ("warning", "over")


@dataclass(frozen=True)
class ReturnRateAlert:
    """One return rate at the warning level or over its threshold.

    ``group`` maps the ``by`` columns to this alert's values (``{"companyCode":
    "DEMO2"}``); ``previous_level`` is the level of the history alone (None when no
    history was given), so ``worsened`` tells a new alert from a standing one.
    """

    group: dict[str, Any]
    category: str
    level: str
    rate: float
    threshold: float
    returns: int
    entries: int
    window_start: pd.Timestamp
    window_end: pd.Timestamp
    previous_level: str | None = None

    @property
    def worsened(self) -> bool:
        """True when the level is worse than the history's (always, without history)."""
        if self.previous_level is None:
            return True
        return LEVELS.index(self.level) > LEVELS.index(self.previous_level)

    @property
    def message(self) -> str:
        """One sentence an analyst can forward."""
        who = ", ".join(f"{v}" for v in self.group.values()) or "all items"
        where = "over" if self.level == "over" else "at the warning level of"
        since = "" if self.previous_level in (None, self.level) else \
            f" (was {self.previous_level})"
        return (f"{who}: {self.category} return rate {self.rate:.2%} {where} the "
                f"{self.threshold:.1%} threshold{since}: {self.returns:,} "
                f"return{'' if self.returns == 1 else 's'} of "
                f"{self.entries:,} debit entries, {self.window_start:%Y-%m-%d} to "
                f"{self.window_end:%Y-%m-%d}")

    def __str__(self) -> str:
        return self.message


def _merged(items: pd.DataFrame, history: pd.DataFrame | None) -> pd.DataFrame:
    if history is None:
        return items
    if not isinstance(history, pd.DataFrame):
        raise TypeError(f"history must be a pandas DataFrame or None, not "
                        f"{type(history).__name__}")
    merged = pd.concat([history, items], ignore_index=True)
    key = next((c for c in _ID_COLUMNS if c in items.columns and c in history.columns), None)
    if key is None:
        logger.warning("items and history share no id column (%s): an item in both counts "
                       "twice", ", ".join(_ID_COLUMNS))
        return merged
    # The poll's copy of an item is the newer one.
    return merged.drop_duplicates(subset=key, keep="last")


def check(items: pd.DataFrame, *, as_of: Any = None, history: pd.DataFrame | None = None,
          window: str = "60D", by: str | Sequence[str] | None = "companyCode",
          warning_share: float = WARNING_SHARE, raise_on: str | None = None
          ) -> list[ReturnRateAlert]:
    """The return-rate alerts that ``items`` (a poll's result), merged with ``history``, trigger.

    Typical use in a scheduled notebook::

        changed = client.ach.changes()
        history = pd.concat([history, changed])   # or the analyst's stored history
        for alert in compliance.check(changed, history=history):
            print(alert)

    Args:
        items: the newest items (``client.ach.changes()``, ``client.ach.list()``).
        as_of: the day measured (UTC date); None for today.
        history: earlier items; merged with ``items`` by ``achItemId`` (the copy in
            ``items`` wins), and measured alone for each alert's ``previous_level``.
        window, by, warning_share: as for :func:`return_rates` (by company code by
            default).
        raise_on: ``"over"`` raises :class:`ThresholdExceeded` when any rate is over its
            threshold, ``"warning"`` also at the warning level; None never raises.

    Returns:
        One alert per group and category at the warning level or over, worst first. Each
        is also logged (logger ``paynb.compliance``, level INFO) for unattended runs.
    """
    if raise_on is not None and raise_on not in _RAISE_ON:
        raise ValueError(f"raise_on must be 'warning', 'over' or None; got {raise_on!r}")
    merged = _merged(items, history)
    rates = return_rates(merged, as_of=as_of, window=window, by=by, warning_share=warning_share)
    by_columns = list(rates.columns[:rates.columns.get_loc("category")])
    previous: dict[tuple[Any, ...], str] = {}
    if history is not None:
        # The history as it stood before ``items``: a stale one is what is asked for here.
        before = return_rates(without_history_mark(history), as_of=as_of, window=window,
                              by=by, warning_share=warning_share)
        previous = {tuple(row[:-1]): row[-1] for row in before[
            [*by_columns, "category", "level"]].astype(object).itertuples(index=False)}
    flagged = rates[rates["level"].isin(["warning", "over"])]
    flagged = flagged.sort_values(["level", "share_of_threshold"], ascending=False,
                                  kind="stable")
    alerts = []
    for row in flagged.to_dict("records"):
        key = (*(row[c] for c in by_columns), row["category"])
        level_before = previous.get(key, "no entries") if history is not None else None
        alerts.append(ReturnRateAlert(
            group={c: row[c] for c in by_columns}, category=str(row["category"]),
            level=str(row["level"]), rate=float(row["rate"]), threshold=float(row["threshold"]),
            returns=int(row["returns"]), entries=int(row["entries"]),
            window_start=row["window_start"], window_end=row["window_end"],
            previous_level=level_before))
    for alert in alerts:
        logger.info("%s", alert.message)
    if raise_on is not None:
        floor = LEVELS.index(raise_on)
        if any(LEVELS.index(a.level) >= floor for a in alerts):
            raise ThresholdExceeded(alerts)
    return alerts
