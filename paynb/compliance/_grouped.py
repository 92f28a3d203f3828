"""The ACH items of a local history grouped in DuckDB by what the figures read of them: the
figures of a History with no frame of its items (docs/compliance.md, "Grouped items").

One grouping query serves every figure of :mod:`paynb.compliance` and the morning run
(:mod:`paynb.monitor`): its rows each stand for ``items`` items, ``amount`` their exact sum.
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import pandas as pd

from paynb._attrs import HISTORY
from paynb._coerce import arrow_frame
from paynb.compliance._items import by_names

if TYPE_CHECKING:
    from deltalake import DeltaTable

    from paynb.history import History

__all__ = ["COUNT", "FIGURE_DAYS", "FIGURE_TEXTS", "as_items", "describe", "grouped_items"]

#: What the compliance figures read of an item (docs/compliance.md): the texts, and the
#: UTC days of the dates. The items are grouped by these and by the sign of the amount
#: (a prenote's is zero), each group's amount its sum.
FIGURE_TEXTS = ("achTransactionType", "achTransactionSubType", "achEntryClass", "itemStatus",
                "returnReason")
FIGURE_DAYS = ("sendDate", "achEffectiveDate", "receivedDateTime", "returnDate", "settleDate")
#: The column of a grouped row that says how many items it stands for.
COUNT = "items"
#: Microseconds in a day.
_DAY = 86_400_000_000
#: The rows a figure can count from a day on (``?``: that day's first instant, UTC): for
#: the rates and daily counts, an entry originated (the first date present, as
#: :func:`paynb.compliance._items.prepare` dates it) or a return dated that day or later;
#: for the exposure, a debit settled that day or later. The others count nothing there.
_FROM = {"rates": ("(coalesce(sendDate, achEffectiveDate, receivedDateTime) >= ? "
                   "OR returnDate >= ?)", 2),
         "exposure": ("settleDate >= ?", 1)}

def _quoted(names: Sequence[str]) -> str:
    return ", ".join(f'"{name}"' for name in names)


def grouped_items(connection: Any, where: str = "TRUE", params: Sequence[Any] = (), *,
                  by: Sequence[str] = (), held: dict[str, Any] | None = None,
                  every: tuple[str, Sequence[Any]] | None = None) -> pd.DataFrame:
    """The rows of the view ``ach`` of ``connection`` (a DuckDB connection) that ``where``
    keeps (its ``?`` bound to ``params``), grouped by what the figures read and by the
    ``by`` columns: :data:`COUNT` says how many items a row stands for, ``amount`` is their
    exact sum. ``held`` (a History's :meth:`~paynb.History.held`) goes into ``attrs``, so
    the figures warn of a window beyond the store as they do for its frames. ``every``:
    a condition and its parameters whose rows' ``by`` groups all get a row (of no items)
    too, so that a group with nothing in ``where`` still shows, as it does for items."""
    # Grouped by each date's UTC day number (floored: DuckDB's // truncates), made a date
    # once grouped: a time's cast to a date goes through the time zone, row by row, and
    # cost a third of the query.
    numbers = ", ".join(f'(epoch_us("{name}") - (epoch_us("{name}") % {_DAY} + {_DAY}) % {_DAY})'
                        f' // {_DAY} AS "{name}"' for name in FIGURE_DAYS)
    dates = ", ".join(f'DATE \'1970-01-01\' + CAST("{name}" AS INTEGER) AS "{name}"'
                      for name in FIGURE_DAYS)
    texts = list(dict.fromkeys([*by, *FIGURE_TEXTS]))
    query = (f"SELECT * REPLACE ({dates}) FROM (SELECT {_quoted(texts)}, {numbers}, "
             f"sign(amount) AS amountSign, sum(amount) AS amount, count(*) AS {COUNT} "
             f"FROM ach WHERE {where} GROUP BY ALL)")
    if by and every is not None:
        query += (f" UNION ALL BY NAME SELECT DISTINCT {_quoted(by)}, 0::BIGINT AS {COUNT} "
                  f"FROM ach WHERE {every[0]}")
        params = [*params, *every[1]]
    grouped = arrow_frame(connection.sql(query, params=list(params)).to_arrow_table())
    if held is not None:
        grouped.attrs[HISTORY] = held
    return grouped


def _check_by(connection: Any, by: list[str]) -> None:
    columns = [row[0] for row in connection.sql("DESCRIBE ach").fetchall()]
    missing = [name for name in by if name not in columns]
    if missing:
        raise ValueError(f"by: the history's ACH table has no column "
                         f"{', '.join(map(repr, missing))}")


def _as_history(items: Any) -> History | None:
    """``items`` when it is a :class:`paynb.History`, else None. A History is made by
    someone who imported paynb.history, so its class is looked up there, not imported:
    compliance does without the history's extra."""
    history = getattr(sys.modules.get("paynb.history"), "History", None)
    return items if history is not None and isinstance(items, history) else None


def _is_delta_table(items: Any) -> bool:
    try:
        from deltalake import DeltaTable
    except ImportError:  # without the history extra, nothing is a Delta table
        return False
    return isinstance(items, DeltaTable)


def as_items(items: pd.DataFrame | History | DeltaTable, by: str | Sequence[str] | None,
             weights: str | None, *, since: tuple[str, int] | None = None
             ) -> tuple[Any, str | None]:
    """``(items, weights)`` for the figures: a frame as given; a :class:`paynb.History`
    (its company's ACH items, when it was made for one) or a ``deltalake.DeltaTable`` of
    ACH items grouped in DuckDB by :func:`grouped_items`, weighed by :data:`COUNT`.
    ``since``: (``"rates"`` or ``"exposure"``, a day number): only the rows that figure
    can count from that day on are grouped (a window's, not the whole history's)."""
    if isinstance(items, pd.DataFrame):
        return items, weights
    history = _as_history(items)
    if history is None and not _is_delta_table(items):
        return items, weights  # what is no items at all is refused by the figures
    if weights is not None:
        raise ValueError("weights: a History (or its table) is grouped by paynb itself; "
                         "weights= goes with a frame of grouped items")
    by_columns = list(by_names(by))
    scope: tuple[str, list[Any]] = ("TRUE", [])
    if history is not None and history.company:
        scope = ("company = ?", [history.company])
    where, params = scope
    if since is not None:
        condition, count = _FROM[since[0]]
        moment = dt.datetime.combine(dt.date(1970, 1, 1) + dt.timedelta(days=since[1]),
                                     dt.time(), dt.UTC)
        where, params = f"{where} AND {condition}", [*params, *[moment] * count]
    every = scope if since is not None else None
    if history is not None:
        with history.connect() as connection:
            _check_by(connection, by_columns)
            return grouped_items(connection, where, params, by=by_columns,
                                 held=history.held("ach"), every=every), COUNT
    import duckdb

    with duckdb.connect() as connection:
        connection.execute("SET TimeZone = 'UTC'")
        connection.register("ach", cast("DeltaTable", items).to_pyarrow_dataset())
        _check_by(connection, by_columns)
        return grouped_items(connection, where, params, by=by_columns, every=every), COUNT


def describe(items: Any) -> str:
    """Where ``items`` came from, for a report's ``source``."""
    if isinstance(items, pd.DataFrame):
        return "a DataFrame of ACH items"
    company = getattr(items, "company", None)
    return f"local history at {items.path}" + (f" (company {company})" if company else "") \
        if hasattr(items, "held") else "a Delta table of ACH items"
