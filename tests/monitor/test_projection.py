"""The projection against days computed by hand (docs/monitor.md, "The projection"): the
window holds a Saturday holiday the Fed does not move (Independence Day 2026, so Friday
2026-07-03 is a banking day) and Juneteenth inside the base."""

from __future__ import annotations

import datetime as dt
from fractions import Fraction

import pandas as pd
import pytest

from paynb import calendar
from paynb.monitor import Projection, project

AS_OF = dt.date(2026, 7, 1)  # a Wednesday


def worked_example() -> tuple[list[pd.Timestamp], list[int], list[int]]:
    """100 debit entries on every banking day of the window before the as-of day (none
    on it: a morning run), 4 unauthorized returns on 2026-06-01 and one on each of the
    base's first ten banking days."""
    days = list(pd.date_range(AS_OF - dt.timedelta(days=59), AS_OF))
    banking = [bool(calendar.is_banking_day(d)) for d in days]
    entries = [100 if open_ and d.date() != AS_OF else 0
               for d, open_ in zip(days, banking, strict=True)]
    base = [d for d, open_ in zip(days, banking, strict=True) if open_ and d.date() < AS_OF][-14:]
    returns = [0] * len(days)
    for day in base[:10]:
        returns[days.index(day)] += 1
    returns[days.index(pd.Timestamp("2026-06-01"))] += 4
    return days, entries, returns


def test_the_hand_computed_example():
    days, entries, returns = worked_example()
    assert sum(entries) == 4000 and sum(returns) == 14  # 40 banking days, 0.35 %: ok
    projection = project(days, entries, returns, as_of=AS_OF, threshold_bp=50)
    # The base: the 14 banking days before 2026-07-01, skipping Juneteenth (Fri 06-19).
    assert (projection.base_start, projection.base_end) == (dt.date(2026, 6, 10),
                                                            dt.date(2026, 6, 30))
    assert (projection.base_entries, projection.base_returns) == (1400, 10)
    assert projection.entries_per_day == 100 and projection.returns_per_day == Fraction(5, 7)
    assert projection.level_now == "ok"
    # By hand (docs/monitor.md): warning once 1,100 k >= 1,400 B - 49,000 (k banking
    # days ahead, B recorded banking days still in the window): Mon 07-06, k = 3
    # (07-02, Fri 07-03, 07-06), B = 36. Over once 600 k > 1,400 B - 39,200: Mon 07-13,
    # k = 8, B = 31 (7 > 7 fails the day before counting 07-03 as closed would give,
    # which moves the breach to 07-14).
    assert projection.warning_day == dt.date(2026, 7, 6)
    assert projection.breach_day == dt.date(2026, 7, 13)
    assert projection.when("warning") == "2026-07-06 (in 5 days)"
    assert projection.when("over") == "2026-07-13 (in 12 days)"
    # The path ends on the breach day; its rates are the scaled windows'.
    assert projection.path[-1][0] == dt.date(2026, 7, 13)
    assert projection.path[0] == (AS_OF, 14 / 4000)
    assert projection.path[-1][1] == pytest.approx((14 * 14 + 10 * 8) / (1400 * (31 + 8)))


def test_friday_before_a_saturday_holiday_counts():
    """Without the Friday (as pandas' federal calendar has it) the breach comes a day
    later: the test above would fail on a calendar that moves Saturday holidays."""
    assert calendar.is_banking_day("2026-07-03")
    days, entries, returns = worked_example()
    # One pace-day less by 07-13 (what a closed 07-03 would mean) is exactly the margin:
    # the same window with one fewer projected banking day is not over.
    k, recorded = 7, 31
    assert not 200 * (14 * 14 + 10 * k) > 1400 * (recorded + k)
    assert 200 * (14 * 14 + 10 * (k + 1)) > 1400 * (recorded + k + 1)


def test_already_over_and_never():
    days, entries, returns = worked_example()
    over = project(days, entries, [r * 3 for r in returns], as_of=AS_OF, threshold_bp=50)
    assert over.level_now == "over" and over.warning_day == over.breach_day == AS_OF
    assert over.when("over") == "now"
    calm = project(days, entries, [0] * len(days), as_of=AS_OF, threshold_bp=50)
    assert calm.level_now == "ok" and calm.warning_day is calm.breach_day is None
    assert calm.when("warning") == "not within 60 days"
    empty = project([], [], [], as_of=AS_OF, threshold_bp=50)
    assert empty.level_now == "no entries" and empty.breach_day is None


def test_counts_after_the_as_of_day_are_ignored():
    days, entries, returns = worked_example()
    later = [*days, pd.Timestamp("2026-07-02")]
    moved = project(later, [*entries, 0], [*returns, 500], as_of=AS_OF, threshold_bp=50)
    assert moved.level_now == "ok" and moved.breach_day == dt.date(2026, 7, 13)


@pytest.mark.parametrize(("argument", "value"), [("threshold_bp", 0), ("base_days", 0),
                                                  ("horizon", -1), ("threshold_bp", 0.5)])
def test_bad_arguments_are_named(argument, value):
    options = {"as_of": AS_OF, "threshold_bp": 50, argument: value}
    with pytest.raises(ValueError, match=argument):
        project([], [], [], **options)
    with pytest.raises(ValueError, match="as_of"):
        project([], [], [], as_of="not a day", threshold_bp=50)


def test_a_projection_is_a_value():
    days, entries, returns = worked_example()
    first = project(days, entries, returns, as_of=AS_OF, threshold_bp=50)
    assert isinstance(first, Projection)
    assert first == project(days, entries, returns, as_of=AS_OF, threshold_bp=50)


def test_a_rate_over_its_threshold_already_is_projected_over_the_whole_horizon():
    """Where a breached rate heads (back under or not) is what the chart must show: its
    path does not stop on the day measured."""
    days, entries, returns = worked_example()
    projection = project(days, entries, returns, as_of=AS_OF, threshold_bp=30)  # 0.35 %
    assert projection.level_now == "over" and projection.breach_day == AS_OF
    assert [day for day, _ in projection.path] == [
        AS_OF + dt.timedelta(days=n) for n in range(61)]
    assert projection.path[0] == (AS_OF, 14 / 4000)
    # The window drops 2026-06-01's four returns on 07-31: the rate falls from there.
    by_day = dict(projection.path)
    assert by_day[dt.date(2026, 7, 31)] < by_day[dt.date(2026, 7, 30)]


def test_the_chart_draws_each_rates_path_the_breached_one_first():
    """DEMO2's unauthorized rate is over its threshold (docs/sandbox.md), the others not."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from paynb import monitor, sandbox
    from paynb.journal import Journal

    with sandbox.serve(port=0, seed_items=1500, seed=3) as sb, \
            sb.connect(company_code="DEMO2", journal=Journal(":memory:")) as client:
        report = monitor.run(client, report=False, notify=[], send=False)
    levels = report.measured.rates.set_index("category")["level"]
    assert levels.to_dict() == {"unauthorized": "over", "administrative": "ok",
                                "overall": "ok"}
    ax = report.plot_rates()
    try:
        solid = [line for line in ax.lines if line.get_linestyle() == "-"
                 and not line.get_label().startswith("_")]
        dashed = [line for line in ax.lines if line.get_linestyle() == "--"
                  and line.get_label().startswith("_child")]
        assert [line.get_label().split(" ")[0] for line in solid][0] == "unauthorized"
        assert ax.lines[0] is solid[0] and ax.lines[1] is dashed[0]
        assert len(dashed) == 3  # each rate's path, the threshold's line aside
        for line, path in zip(solid, dashed, strict=True):
            assert path.get_color() == line.get_color()
            assert len(path.get_xdata()) > 1
        assert len(dashed[0].get_xdata()) == monitor.HORIZON_DAYS + 1
    finally:
        plt.close(ax.figure)
