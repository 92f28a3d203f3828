"""The compliance charts: paynb.plots and the df.paynb accessor."""

from __future__ import annotations

import re

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from paynb import plots

from .conftest import debit, filler, frame


def items() -> pd.DataFrame:
    # 200 entries on 11-02; one R10 return on 11-10 puts unauthorized at 0.5 % (warning),
    # a second on 11-12 at 1 % (over) until the window passes them.
    records = filler(198, "2026-11-02", settle="2026-11-03")
    records += [debit("2026-11-02", "R", returned="2026-11-10", reason="R10"),
                debit("2026-11-02", "R", returned="2026-11-12", reason="R10")]
    return frame(records)


def test_thresholds_share_of_threshold():
    ax = plots.return_rate_thresholds(items(), start="2026-11-01", end="2026-11-20")
    lines = [line for line in ax.get_lines() if line.get_label().endswith("%)")]
    assert [line.get_label() for line in lines] == [
        "unauthorized (threshold 0.5%)", "administrative (threshold 3.0%)",
        "overall (threshold 15.0%)"]
    unauthorized = lines[0].get_ydata()
    # Day by day from 11-01: no entries, then 0 %, 100 % of threshold on 11-10, 200 % from 11-12.
    assert np.isnan(unauthorized[0])
    assert list(unauthorized[[1, 9, 11, 19]]) == [0.0, 100.0, 200.0, 200.0]
    crosses = ax.collections[0].get_offsets()
    assert len(crosses) == 9  # 11-12 .. 11-20 over
    assert any(line.get_label() == "threshold" and line.get_ydata()[0] == 100
               for line in ax.get_lines())


def test_thresholds_one_category_in_percent():
    fig, ax = plt.subplots()
    got = items().paynb.return_rate_thresholds(ax, category="unauthorized",
                                               start="2026-11-01", end="2026-11-20")
    assert got is ax
    values = ax.get_lines()[0].get_ydata()
    assert values[11] == pytest.approx(1.0)  # 1 %
    assert any(line.get_label() == "threshold" and line.get_ydata()[0] == 0.5
               for line in ax.get_lines())


def test_thresholds_without_entries_says_so():
    ax = plots.return_rate_thresholds(frame([]), start="2026-11-01", end="2026-11-02")
    assert ax.texts[0].get_text() == "no debit entries"
    with pytest.raises(ValueError, match="category must be one of"):
        plots.return_rate_thresholds(items(), category="fraud")


def test_exposure_stacks_the_windows():
    records = [debit("2026-10-01", settle="2026-10-02", amount=4.0),               # extended
               debit("2026-10-01", settle="2026-10-02", amount=8.0, entry_class="CCD"),
               debit("2026-11-19", settle="2026-11-20", amount=2.5)]              # standard
    ax = frame(records).paynb.return_exposure(as_of="2026-11-23")
    standard, extended = ax.containers
    assert [bar.get_height() for bar in standard] == [0.0, 2.5]
    assert [bar.get_height() for bar in extended] == [4.0, 0.0]
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert labels == ["any return, standard window: 2.50 USD",
                      "unauthorized only, extended window: 4.00 USD"]
    assert ax.get_ylabel() == "Amount (USD)"
    ax.figure.canvas.draw()
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    # One format: "01 Oct" on every tick, the year under the first (no "Oct", "15", "2026-Nov").
    assert re.fullmatch(r"\d\d [A-Z][a-z]{2}\n2026", ticks[0]), ticks
    assert all(re.fullmatch(r"\d\d [A-Z][a-z]{2}", t) for t in ticks[1:]), ticks


def test_exposure_of_nothing():
    ax = plots.return_exposure(frame([debit("2026-10-01")]), as_of="2026-11-23")
    assert ax.texts[0].get_text() == "nothing returnable"


def test_the_compliance_charts_register_on_the_accessor_themselves() -> None:
    """``df.paynb.return_exposure`` is the compliance chart once paynb.compliance.charts
    is imported, without paynb.plots (which only shows it with its own charts)."""
    import subprocess
    import sys

    code = ("import sys, pandas as pd, paynb.frames\n"
            "from paynb.compliance import charts\n"
            "helper = pd.DataFrame().paynb.return_exposure\n"
            "assert helper.func is charts.return_exposure, helper\n"
            "assert pd.DataFrame().paynb.return_rate_thresholds.func "
            "is charts.return_rate_thresholds\n"
            "assert 'paynb.plots' not in sys.modules, 'the accessor imported paynb.plots'\n")
    subprocess.run([sys.executable, "-c", code], check=True)
