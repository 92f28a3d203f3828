"""The ACH items of a local history grouped in DuckDB by what the figures read of them: the
figures of a History with no frame of its items (docs/compliance.md, "Grouped items").

One grouping query serves every figure of :mod:`paynb.compliance` and the morning run
(:mod:`paynb.monitor`): its rows each stand for ``items`` items, ``amount`` their exact sum.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from paynb._attrs import HISTORY
from paynb._coerce import arrow_frame

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

def _quoted(names: Sequence[str]) -> str:
    return ", ".join(f'"{name}"' for name in names)


def grouped_items(connection: Any, where: str = "TRUE", params: Sequence[Any] = (), *,
                  by: Sequence[str] = (), held: dict[str, Any] | None = None) -> pd.DataFrame:
    """The rows of the view ``ach`` of ``connection`` (a DuckDB connection) that ``where``
    keeps (its ``?`` bound to ``params``), grouped by what the figures read and by the
    ``by`` columns: :data:`COUNT` says how many items a row stands for, ``amount`` is their
    exact sum. ``held`` (a History's :meth:`~paynb.History.held`) goes into ``attrs``, so
    the figures warn of a window beyond the store as they do for its frames."""
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
    grouped = arrow_frame(connection.sql(query, params=list(params)).to_arrow_table())
    if held is not None:
        grouped.attrs[HISTORY] = held
    return grouped


def _columns(connection: Any) -> list[str]:
    return [row[0] for row in connection.sql("DESCRIBE ach").fetchall()]


def _by(by: str | Sequence[str] | None) -> list[str]:
    return [by] if isinstance(by, str) else list(by or ())


def _check_by(connection: Any, by: list[str]) -> None:
    missing = [name for name in by if name not in _columns(connection)]
    if missing:
        raise ValueError(f"by: the history's ACH table has no column "
                         f"{', '.join(map(repr, missing))}")


def _is_delta_table(items: Any) -> bool:
    try:
        from deltalake import DeltaTable
    except ImportError:  # without the history extra, nothing is a Delta table
        return False
    return isinstance(items, DeltaTable)


def as_items(items: pd.DataFrame | History | DeltaTable, by: str | Sequence[str] | None,
             weights: str | None) -> tuple[Any, str | None]:
    """``(items, weights)`` for the figures: a frame as given; a :class:`paynb.History`
    (its company's ACH items, when it was made for one) or a ``deltalake.DeltaTable`` of
    ACH items grouped in DuckDB by :func:`grouped_items`, weighed by :data:`COUNT`."""
    if isinstance(items, pd.DataFrame):
        return items, weights
    from paynb.history import History

    if not isinstance(items, History) and not _is_delta_table(items):
        return items, weights  # what is no items at all is refused by the figures
    if weights is not None:
        raise ValueError("weights: a History (or its table) is grouped by paynb itself; "
                         "weights= goes with a frame of grouped items")
    by_columns = _by(by)
    if isinstance(items, History):
        history = items
        where, params = ("company = ?", [history.company]) if history.company else ("TRUE", [])
        with history.connect() as connection:
            _check_by(connection, by_columns)
            return grouped_items(connection, where, params, by=by_columns,
                                 held=history.held("ach")), COUNT
    import duckdb

    with duckdb.connect() as connection:
        connection.execute("SET TimeZone = 'UTC'")
        connection.register("ach", items.to_pyarrow_dataset())
        _check_by(connection, by_columns)
        return grouped_items(connection, by=by_columns), COUNT


def describe(items: Any) -> str:
    """Where ``items`` came from, for a report's ``source``."""
    if isinstance(items, pd.DataFrame):
        return "a DataFrame of ACH items"
    company = getattr(items, "company", None)
    return f"local history at {items.path}" + (f" (company {company})" if company else "") \
        if hasattr(items, "held") else "a Delta table of ACH items"
