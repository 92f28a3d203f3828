"""One cell, the whole picture: rates against thresholds, breaches, exposure, top reasons."""

from __future__ import annotations

import datetime as dt
import html
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from paynb._excel import MONEY_FORMAT, write_excel
from paynb.codes import code_label, code_meaning
from paynb.compliance._exposure import return_exposure
from paynb.compliance._grouped import as_items, describe
from paynb.compliance._items import (
    as_day,
    by_names,
    prepare,
    to_dates,
    warn_beyond_history,
    without_history_mark,
)
from paynb.compliance._rates import return_rates, rolling_return_rates, window_bounds
from paynb.compliance._rules import CATEGORIES, EXTENDED_RETURN_DAYS, SOURCES, WARNING_SHARE

__all__ = ["ComplianceReport", "report"]

_MARKS = {"ok": ("✔ ok", "#2E7D32"), "warning": ("▲ warning", "#B26A00"),
          "over": ("✖ over", "#C62828"), "no entries": ("– no entries", "#707070")}
_TOP = 3


@dataclass
class ComplianceReport:
    """The figures of :func:`report`, as DataFrames, with an HTML view and an Excel export.

    Attributes:
        as_of: the day measured (UTC).
        window: ``"60D"`` or ``"2M"``.
        source: where the items came from (the client's description, or "a DataFrame").
        rates: :func:`return_rates` by group.
        breaches: per group and category, the last day over the threshold in the items'
            history (``last_breach``), ``days_since_last_breach`` (0 while over, missing
            when never) and ``days_over`` (days over in the history measured).
        exposure: :func:`return_exposure` by group, one row per settlement day.
        exposure_total: the exposure summed per group.
        top_reasons: the return codes behind each category's returns in the window.
    """

    as_of: dt.date
    window: str
    source: str
    rates: pd.DataFrame
    breaches: pd.DataFrame
    exposure: pd.DataFrame
    exposure_total: pd.DataFrame
    top_reasons: pd.DataFrame
    by: tuple[str, ...] = field(default=())

    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by the name of its sheet in :meth:`to_excel`."""
        return {"rates": self.rates, "breaches": self.breaches,
                "exposure_total": self.exposure_total, "exposure_by_day": self.exposure,
                "top_reasons": self.top_reasons, "notes": self.notes()}

    def notes(self) -> pd.DataFrame:
        """What was measured, and the rules' sources."""
        rows = [("as of", f"{self.as_of:%Y-%m-%d} (UTC)"), ("window", self.window),
                ("source", self.source),
                ("generated", f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC by paynb")]
        return pd.DataFrame([*rows, *SOURCES], columns=["item", "note"])

    def to_excel(self, path: str | os.PathLike[str], /, *,
                 sheets: Mapping[str, pd.DataFrame] | None = None) -> Path:
        """Write the evidence workbook: one sheet per table, the rules' sources in ``notes``.

        Amounts are written as numbers (exact decimals), rates as percentages, dates as
        dates. ``sheets`` adds tables of the caller's after the report's, written by the
        same rules (the morning run adds its findings). Returns the path written.
        """
        path = Path(path)
        tables = {**self.tables(), **(sheets or {})}
        formats = {str(column): code for table in tables.values() for column in table.columns
                   if (code := _excel_format(str(column))) is not None}
        write_excel(path, tables, formats=formats)
        return path

    def _repr_html_(self) -> str:
        (lo,), (hi,) = window_bounds([as_day(self.as_of)], self.window)
        lo, hi = pd.Timestamp(to_dates(lo)), pd.Timestamp(to_dates(hi))
        parts = [
            "<div class='paynb-compliance'>",
            f"<h3>Return rates as of {self.as_of:%Y-%m-%d}</h3>",
            f"<p>{html.escape(self.source)}; window {self.window}: {lo:%Y-%m-%d} to "
            f"{hi:%Y-%m-%d}. Debit entries only. paynb helps monitor; not legal advice.</p>",
            "<table><thead><tr>", _cells((
                *(self.by or ("",)), "category", "mark", "rate", "threshold", "returns / entries",
                "days since last breach", "top reasons"), "th"), "</tr></thead><tbody>",
        ]
        breaches = self.breaches.set_index([*self.by, "category"]) if len(self.breaches) else None
        for row in self.rates.to_dict("records"):
            key = tuple(row[c] for c in self.by)
            mark, color = _MARKS[str(row["level"])]
            rate = "n/a" if pd.isna(row["rate"]) else f"{row['rate']:.2%}"
            since = ""
            if breaches is not None:
                value = breaches.loc[(*key, row["category"]), "days_since_last_breach"]
                since = "never" if pd.isna(value) else f"{int(value)}"
            reasons = self.top_reasons
            for column, value in zip(self.by, key, strict=True):
                reasons = reasons[reasons[column] == value]
            reasons = reasons[reasons["category"] == row["category"]]
            top = ", ".join(f"{code_label(r) if isinstance(r, str) and r else 'no code'} "
                            f"({n})" for r, n in zip(reasons["returnReason"],
                                                     reasons["returns"], strict=True))
            parts.append(f"<tr>{_cells((*(key or ('',)), row['category']))}<td style='color:"
                         f"{color};font-weight:bold'>{mark}</td>" + _cells((
                             rate, f"{row['threshold']:.1%}",
                             f"{row['returns']:,} / {row['entries']:,}", since, top)) + "</tr>")
        parts += ["</tbody></table><h4>Still returnable today</h4><table><thead><tr>",
                  _cells((*(self.by or ("",)), "standard window",
                          "unauthorized (extended) window"), "th"), "</tr></thead><tbody>"]
        for row in self.exposure_total.to_dict("records"):
            parts.append("<tr>" + _cells((
                *(tuple(row[c] for c in self.by) or ("",)),
                f"{row['standard_amount']:,.2f} ({row['standard_count']:,} debits)",
                f"{row['unauthorized_amount']:,.2f} ({row['unauthorized_count']:,} debits)",
            )) + "</tr>")
        parts.append("</tbody></table></div>")
        return "".join(parts)

    def __repr__(self) -> str:
        lines = [f"ComplianceReport as of {self.as_of:%Y-%m-%d}, window {self.window}, "
                 f"{self.source}"]
        for row in self.rates.to_dict("records"):
            who = ", ".join(str(row[c]) for c in self.by) or "all items"
            rate = "n/a" if pd.isna(row["rate"]) else f"{row['rate']:.2%}"
            lines.append(f"  {who} {row['category']}: {rate} of {row['threshold']:.1%} "
                         f"({row['level']})")
        return "\n".join(lines)


def _cells(values: Iterable[Any], tag: str = "td") -> str:
    """Table cells of ``values``, escaped."""
    return "".join(f"<{tag}>{html.escape(str(v))}</{tag}>" for v in values)


def _excel_format(column: str) -> str | None:
    if column in ("rate", "threshold"):
        return "0.00%"
    if column.startswith("share_of"):
        return "0%"
    if column.endswith("_amount"):
        return MONEY_FORMAT
    return None  # dates, times and exact amounts: the writer's own rules


def _breaches(items: pd.DataFrame, as_of: int, window: str, by: tuple[str, ...],
              warning_share: float, rates: pd.DataFrame, weights: str | None
              ) -> pd.DataFrame:
    history = rolling_return_rates(items, window=window, end=to_dates(as_of), by=list(by) or None,
                                   warning_share=warning_share, weights=weights)
    keys = [*by, "category"]
    over = history[history["level"] == "over"]
    last = over.groupby(keys, observed=True, dropna=False)["date"].max()
    days_over = over.groupby(keys, observed=True, dropna=False).size()
    frame = rates[keys].copy()
    index = pd.MultiIndex.from_frame(frame) if len(keys) > 1 else pd.Index(frame[keys[0]])
    frame["last_breach"] = last.reindex(index).to_numpy()
    since = (pd.Timestamp(to_dates(as_of)) - pd.to_datetime(frame["last_breach"])).dt.days
    frame["days_since_last_breach"] = since.astype("Int64")
    frame["days_over"] = days_over.reindex(index).fillna(0).astype("int64").to_numpy()
    return frame


def _top_reasons(items: pd.DataFrame, as_of: int, window: str, by: tuple[str, ...],
                 weights: str | None) -> pd.DataFrame:
    prep = prepare(items, list(by) or None, weights)
    (lo,), (hi,) = window_bounds([as_of], window)
    returned = prep.returned & (prep.return_day >= lo) & (prep.return_day <= hi)
    codes = items["returnReason"].astype("object").str.strip().str.upper()
    frames = []
    for index, category in enumerate(CATEGORIES):
        picked = np.flatnonzero(returned & prep.in_category(index))
        # The index sets the length: with no ``by`` columns the frame would have none.
        part = pd.DataFrame({c: items[c].to_numpy()[picked] for c in by},
                            index=pd.RangeIndex(len(picked)))
        part["category"] = category.name
        part["returnReason"] = codes.to_numpy()[picked]
        part["returns"] = prep.weight[picked]
        frames.append(part)
    rows = pd.concat(frames, ignore_index=True)
    keys = [*by, "category"]
    counts = rows.groupby([*keys, "returnReason"], dropna=False)["returns"].sum()
    counts = counts.reset_index().sort_values([*keys, "returns", "returnReason"],
                                              ascending=[True] * len(keys) + [False, True])
    totals = counts.groupby(keys, dropna=False)["returns"].transform("sum")
    counts["share_of_category"] = counts["returns"] / totals
    counts["description"] = counts["returnReason"].map(
        lambda code: code_meaning(code) if isinstance(code, str) and code else None)
    top = counts.groupby(keys, dropna=False, sort=False).head(_TOP).reset_index(drop=True)
    order = {c.name: i for i, c in enumerate(CATEGORIES)}
    top = top.sort_values([*by, "category"], key=lambda s: s.map(order) if s.name == "category"
                          else s, kind="stable").reset_index(drop=True)
    return top[[*keys, "returnReason", "description", "returns", "share_of_category"]]


def report(client_or_items: Any, *, as_of: Any = None, window: str = "60D",
           by: str | Sequence[str] | None = "companyCode",
           warning_share: float = WARNING_SHARE, progress: bool | None = None,
           weights: str | None = None) -> ComplianceReport:
    """The compliance picture in one object: show it in a cell, send it with ``to_excel``.

    Args:
        client_or_items: a :class:`paynb.Client` (every ACH item is listed), an ACH
            items DataFrame, or a :class:`paynb.History` (or its ACH table): grouped in
            DuckDB, as for :func:`return_rates`.
        as_of: the day measured (UTC date); None for today.
        window: ``"60D"`` or ``"2M"`` (see :func:`return_rates`).
        by: the column(s) to split by, company code by default; None for all items.
        warning_share: the share of a threshold from which the level is ``"warning"``.
        progress: with a client, show the listing's progress bar (None: the client's
            default).
        weights: a column of how many items each row of a grouped items frame stands
            for (see :func:`return_rates`).

    Returns:
        A :class:`ComplianceReport`: the three rates per group with an ok / warning /
        over mark, the days since the last breach, the exposure today, and the top
        return reasons of each category.
    """
    by_columns = by_names(by)
    items, grouped_by = as_items(client_or_items, list(by_columns), weights)
    if isinstance(items, pd.DataFrame):
        source, weights = describe(client_or_items), grouped_by
    elif hasattr(client_or_items, "ach"):
        items = client_or_items.ach.list(progress=progress)
        source = repr(client_or_items).strip("<>")
    else:
        raise TypeError("client_or_items must be a paynb Client or a DataFrame of ACH items "
                        "(or a History, or its ACH Delta table), not "
                        f"{type(client_or_items).__name__}")
    day = as_day(as_of)
    # Said once for the report (its rates, breaches and exposure all read ``items``).
    marked, items = items, without_history_mark(items)
    by_arg = list(by_columns) or None
    rates = return_rates(items, as_of=to_dates(day), window=window, by=by_arg,
                         warning_share=warning_share, weights=weights)
    first = day - EXTENDED_RETURN_DAYS  # the exposure's oldest settlement day
    if len(rates):
        first = min(first, as_day(rates["window_start"].iloc[0], "window_start"))
    warn_beyond_history(marked, first, day, "the compliance report")
    exposure = return_exposure(items, as_of=to_dates(day), by=by_arg, weights=weights)
    keys = list(by_columns)
    sums = exposure.drop(columns=["settleDate", "standard_deadline", "unauthorized_deadline"])
    if keys:
        groups = rates[keys].drop_duplicates().reset_index(drop=True)
        total = sums.groupby(keys, dropna=False, observed=True).sum().reset_index()
        total = groups.merge(total, on=keys, how="left")
    else:
        total = pd.DataFrame({name: pd.array([sums[name].sum()], dtype=sums[name].dtype)
                              for name in sums.columns})
    for name in ("standard_amount", "unauthorized_amount"):
        total[name] = total[name].fillna(Decimal(0)).astype(exposure[name].dtype)
    for name in ("standard_count", "unauthorized_count"):
        total[name] = total[name].fillna(0).astype("int64")
    return ComplianceReport(
        as_of=to_dates(day).astype(dt.date), window=window, source=source, rates=rates,
        breaches=_breaches(items, day, window, by_columns, warning_share, rates, weights),
        exposure=exposure, exposure_total=total,
        top_reasons=_top_reasons(items, day, window, by_columns, weights), by=by_columns)
