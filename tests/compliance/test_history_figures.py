"""The figures of a History (grouped in DuckDB, no frame of its items) equal those of its
items, to the item and the cent, for the History's company only."""

from __future__ import annotations

import datetime as dt
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings

from paynb import compliance, frames
from paynb.history import History

from . import test_grouped
from .test_grouped import records

#: The first day test_grouped's drawn day offsets count from, and the day judged: the
#: last day any drawn record falls on (offset 80).
BASE = dt.date(2026, 9, 1)
AS_OF = BASE + dt.timedelta(days=80)
_DAYS = ("send", "received", "settle", "returned")


def _items(rows: list[dict]) -> pd.DataFrame:
    """Items of ``rows``: test_grouped's records (days as offsets from :data:`BASE`) or
    rows whose days are dates, at noon UTC unless a row gives its time."""
    def offset(value: Any) -> Any:
        return (value - BASE).days if isinstance(value, dt.date) else value

    return test_grouped._items([{"time": "12:00:00", **row,
                                 **{name: offset(row[name]) for name in _DAYS}}
                                for row in rows], BASE)

pytest.importorskip("deltalake")
pytest.importorskip("duckdb")


def write_store(path: Path, items: pd.DataFrame) -> None:
    """``items`` stored as a sync stores them: one ACH table partitioned by company and
    month, with paynb's columns."""
    from deltalake import write_deltalake

    from paynb.history import _store as st

    for company, part in items.groupby("companyCode", observed=True):
        rows = st.item_rows(frames.as_stored(part.reset_index(drop=True)), "ach", str(company),
                            np.arange(len(part)), np.zeros(len(part), np.int64),
                            [dt.datetime(2026, 11, 21, tzinfo=dt.UTC)] * len(part))
        write_deltalake(str(path / "ach"), rows, mode="append",
                        partition_by=list(st.PARTITIONS))


def _same(left: pd.DataFrame, right: pd.DataFrame) -> None:
    pd.testing.assert_frame_equal(left, right, check_dtype=False, check_categorical=False)


def figures_agree(history: History, by: str | None) -> None:
    items = history.ach()
    _same(compliance.return_rates(history, as_of=AS_OF, by=by),
          compliance.return_rates(items, as_of=AS_OF, by=by))
    _same(compliance.rolling_return_rates(history, start=BASE, end=AS_OF, by=by),
          compliance.rolling_return_rates(items, start=BASE, end=AS_OF, by=by))
    _same(compliance.daily_counts(history, start=BASE, end=AS_OF, by=by),
          compliance.daily_counts(items, start=BASE, end=AS_OF, by=by))
    _same(compliance.return_exposure(history, as_of=AS_OF, by=by),
          compliance.return_exposure(items, as_of=AS_OF, by=by))
    grouped, alone = (compliance.report(history, as_of=AS_OF, by=by),
                      compliance.report(items, as_of=AS_OF, by=by))
    for part in ("rates", "breaches", "exposure", "exposure_total", "top_reasons"):
        _same(getattr(grouped, part), getattr(alone, part))


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records)
def test_a_historys_figures_are_its_items_figures(rows: list[dict]) -> None:
    items = _items(rows)
    with tempfile.TemporaryDirectory() as folder, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a store no sync wrote says so
        write_store(Path(folder), items)
        figures_agree(History(folder, company="B"), None)
        figures_agree(History(folder), "companyCode")


def test_a_companys_history_counts_that_company_alone(tmp_path: Path) -> None:
    # Company B returns one of its two entries unauthorized (50 %); A never returns.
    sent, back = dt.date(2026, 11, 2), dt.date(2026, 11, 5)
    rows = [{"status": "S", "kind": "Debit", "amount": 5, "send": sent, "received": sent,
             "settle": None, "returned": None, "reason": None, "entry_class": "PPD",
             "company": company} for company in ["A"] * 6 + ["B"]]
    items = _items([*rows, {**rows[-1], "status": "R", "returned": back, "reason": "R10"}])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_store(tmp_path, items)
        rates = compliance.return_rates(History(tmp_path, company="B"), as_of=AS_OF)
    unauthorized = rates[rates["category"] == "unauthorized"].iloc[0]
    assert (unauthorized["returns"], unauthorized["entries"]) == (1, 2)
    assert unauthorized["level"] == "over"


def test_a_delta_table_is_grouped_too(tmp_path: Path) -> None:
    from deltalake import DeltaTable

    items = _items([{"status": "R", "kind": "Debit", "amount": 5, "send": BASE,
                     "received": BASE, "settle": None, "returned": BASE,
                     "reason": "R03", "entry_class": "PPD", "company": "A"}] * 3)
    write_store(tmp_path, items)
    _same(compliance.return_rates(DeltaTable(str(tmp_path / "ach")), as_of=AS_OF),
          compliance.return_rates(items, as_of=AS_OF))


def test_a_history_takes_no_weights_and_no_unknown_column(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_store(tmp_path, _items([{"status": "S", "kind": "Debit", "amount": 5,
                                       "send": BASE, "received": BASE, "settle": None,
                                       "returned": None, "reason": None,
                                       "entry_class": "PPD", "company": "A"}]))
        history = History(tmp_path)
        with pytest.raises(ValueError, match="weights= goes with a frame of grouped items"):
            compliance.return_rates(history, as_of=AS_OF, weights="items")
        with pytest.raises(ValueError, match="no column 'nope'"):
            compliance.return_rates(history, as_of=AS_OF, by="nope")


def test_a_company_with_nothing_in_the_window_still_has_its_rows(tmp_path: Path) -> None:
    # A's one item is from before the window: only the window's rows are grouped, yet A
    # shows ("no entries"), as it does on the items.
    early, late = dt.date(2026, 8, 1), dt.date(2026, 11, 2)
    rows = [{"status": "S", "kind": "Debit", "amount": 5, "send": day, "received": day,
             "settle": day, "returned": None, "reason": None, "entry_class": "PPD",
             "company": company} for company, day in (("A", early), ("B", late))]
    items = _items(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        write_store(tmp_path, items)
        history = History(tmp_path)
        rates = compliance.return_rates(history, as_of=AS_OF, by="companyCode")
        assert rates["companyCode"].tolist() == ["A"] * 3 + ["B"] * 3
        figures_agree(history, "companyCode")
