"""paynb.plots: the drawn data (bar heights, line points, labels), on data and on empty frames."""

from __future__ import annotations

import re

import matplotlib.dates as mdates
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from matplotlib.colors import to_hex

from paynb import codes, frames, plots

WEEKS = [mdates.date2num(pd.Timestamp(d)) for d in ("2026-11-02", "2026-11-09", "2026-11-16")]


def texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def bar_heights(ax) -> list[float]:
    return [round(p.get_height(), 2) for p in ax.patches]


def legend_labels(ax) -> list[str]:
    return [t.get_text() for t in ax.get_legend().get_texts()]


def assert_empty_chart(ax, message: str = "no items") -> None:
    assert texts(ax) == [message]
    assert not ax.patches and not ax.lines and not ax.images
    assert ax.get_title()


# --------------------------------------------------------------------------- status_summary

def test_status_summary_counts_in_status_order_and_colours(ach):
    ax = plots.status_summary(ach)
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["Waiting (W)", "Sent (S)", "Returned (R)", "Invalid (I)", "Blocked (B)",
                      "Voided (V)"]
    assert bar_heights(ax) == [4, 2, 3, 1, 1, 1]
    assert [to_hex(p.get_facecolor()) for p in ax.patches] == [
        codes.STATUS_COLORS[s].lower() for s in "WSRIBV"]
    # bar labels: the count and its share (small shares keep a decimal)
    assert texts(ax) == ["4 (33 %)", "2 (17 %)", "3 (25 %)", "1 (8.3 %)", "1 (8.3 %)",
                         "1 (8.3 %)"]
    assert ax.get_title() == "Items per status"
    assert ax.get_ylabel() == "Items" and ax.get_xlabel() == "Status"


def test_status_summary_amounts(ach):
    ax = plots.status_summary(ach, value="amount")
    assert bar_heights(ax) == [14.0, 2.0, 107.2, 0.2, 3.0, 2.0]
    assert "107.20 (83 %)" in texts(ax) and "0.20 (0.16 %)" in texts(ax)
    # 0.20 beside 107.20: a linear bar would be invisible, so the axis is logarithmic
    assert ax.get_ylabel() == "Amount (USD) (log scale)" and ax.get_yscale() == "log"


def test_status_summary_only_present_statuses(ach):
    returns = ach[ach["itemStatus"].isin(["R", "B"])]
    ax = plots.status_summary(returns)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Returned (R)", "Blocked (B)"]
    assert bar_heights(ax) == [3, 1]


def test_status_summary_by_column_stacks_statuses(ach):
    ax = plots.status_summary(ach, by="achTransactionType")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Credit", "Debit"]
    heights = {}
    for patch in ax.patches:
        heights.setdefault(to_hex(patch.get_facecolor()), []).append(round(patch.get_height()))
    color = {s: codes.STATUS_COLORS[s].lower() for s in "WSRIBV"}
    assert heights[color["W"]] == [1, 3]
    assert heights[color["S"]] == [1, 1]
    assert heights[color["R"]] == [0, 3]
    assert heights[color["B"]] == [1, 0]
    assert texts(ax) == ["3", "9"]  # totals on top
    assert legend_labels(ax)[0] == "Voided (V)"  # top of the stack listed first


def test_status_summary_instant_statuses():
    df = frames.to_frame([{"uniqueId": str(i), "status": s, "amount": 5}
                          for i, s in enumerate(["Success", "Success", "Failed"])], "instant")
    ax = plots.status_summary(df)
    assert [t.get_text() for t in ax.get_xticklabels()] == ["Success", "Failed"]
    assert bar_heights(ax) == [2, 1]
    assert to_hex(ax.patches[0].get_facecolor()) == plots.INSTANT_COLORS["Success"].lower()


@pytest.mark.parametrize("kind", ["ach", "rcc", "instant", "rtp"])
def test_status_summary_empty(kind):
    assert_empty_chart(plots.status_summary(frames.empty_frame(kind)))


def test_status_summary_draws_on_the_given_axes(ach):
    fig, ax = plt.subplots()
    assert plots.status_summary(ach, ax) is ax
    assert ach.paynb.status_summary(ax=plt.subplots()[1]).patches


def test_status_summary_refuses_bad_arguments(ach):
    with pytest.raises(ValueError, match="value must be"):
        plots.status_summary(ach, value="sum")
    with pytest.raises(ValueError, match="no column 'nope'"):
        plots.status_summary(ach, by="nope")
    with pytest.raises(ValueError, match="itemStatus"):
        plots.status_summary(pd.DataFrame({"x": [1]}))


# --------------------------------------------------------------------------- return_trend

def segments(ax) -> dict[str, list[tuple[float, float]]]:
    """(x, height) of the bars of each legend entry."""
    result: dict[str, list[tuple[float, float]]] = {}
    for container in ax.containers:
        result[container.get_label()] = [(round(p.get_x(), 3), p.get_height())
                                         for p in container.patches]
    return result


def test_return_trend_weekly_bars_by_status(ach):
    ax = plots.return_trend(ach)
    bars = segments(ax)
    assert set(bars) == {"Returned (R)", "Invalid (I)", "Blocked (B)"}
    assert [x for x, _ in bars["Returned (R)"]] == [round(w, 3) for w in WEEKS]
    assert [h for _, h in bars["Returned (R)"]] == [2, 0, 1]  # the empty week is a zero
    assert [h for _, h in bars["Invalid (I)"]] == [1, 0, 0]
    assert [h for _, h in bars["Blocked (B)"]] == [0, 0, 1]
    assert ax.get_title() == "Returns per week"
    assert ax.get_xlabel() == "Return date (UTC), per week"
    assert ax.get_ylabel() == "Items"
    assert legend_labels(ax) == ["Blocked (B)", "Invalid (I)", "Returned (R)"]
    ax.figure.canvas.draw()
    ticks = [t.get_text() for t in ax.get_xticklabels() if t.get_text()]
    # One format on every tick: "02 Nov", the year under the first.
    assert re.fullmatch(r"\d\d Nov\n2026", ticks[0]), ticks
    assert all(re.fullmatch(r"\d\d [A-Z][a-z]{2}", t) for t in ticks[1:]), ticks


def test_return_trend_lines(ach):
    ax = plots.return_trend(ach, kind="line", by=None)
    (line,) = ax.lines
    assert line.get_ydata().tolist() == [3, 0, 2]
    assert mdates.date2num(line.get_xdata()).tolist() == WEEKS


def test_return_trend_by_reason_with_meanings(ach):
    ax = plots.return_trend(ach, by="returnReason", kind="line")
    lines = {line.get_label(): line.get_ydata().tolist() for line in ax.lines}
    assert lines == {"R01: Insufficient funds": [2, 0, 0], "R02: Account closed": [0, 0, 1]}


def test_return_trend_sums_an_unknown_code_under_other(ach):
    odd = ach.copy()
    odd["returnReason"] = odd["returnReason"].replace({"R02": "R99"})
    ax = plots.return_trend(odd, by="returnReason", kind="line")
    lines = {line.get_label(): line.get_ydata().tolist() for line in ax.lines}
    assert lines == {"R01: Insufficient funds": [2, 0, 0], "other": [0, 0, 1]}


def test_return_trend_by_column_top_and_other(ach):
    ax = plots.return_trend(ach, by="achItemId", top=2, kind="line")
    assert {line.get_label() for line in ax.lines} == {"1", "2", "other"}


def test_return_trend_monthly_and_daily(ach):
    ax = plots.return_trend(ach, freq="M", by=None)
    assert bar_heights(ax) == [5]
    assert ax.get_title() == "Returns per month"
    ax = plots.return_trend(ach, freq="D", by=None, kind="line")
    assert len(ax.lines[0].get_ydata()) == 17  # 2 to 18 November
    assert ax.lines[0].get_ydata().sum() == 5


def test_return_trend_without_returns(ach):
    assert_empty_chart(plots.return_trend(ach[ach["itemStatus"] == "W"]), "no items returned")
    assert_empty_chart(plots.return_trend(frames.empty_frame("ach")), "no items returned")
    assert_empty_chart(plots.return_trend(frames.empty_frame("rcc"), kind="line"),
                       "no items returned")


def test_return_trend_takes_ax_fourth_as_the_design_says(ach):
    # DESIGN section 2: return_trend(df, freq="W", by=..., ax=None); a positional Axes
    # once landed in `kind`.
    _, ax = plt.subplots()
    drawn = plots.return_trend(ach, "W", None, ax)
    assert drawn is ax
    assert [p.get_height() for p in ax.patches] == [3, 0, 2]
    _, ax = plt.subplots()
    assert ach.paynb.return_trend("W", None, ax) is ax
    assert [p.get_height() for p in ax.patches] == [3, 0, 2]


@pytest.mark.parametrize(("chart", "positional"), [
    (plots.status_summary, ["df", "ax"]),
    (plots.return_trend, ["df", "freq", "by", "ax"]),
    (plots.return_rate, ["df", "freq", "ax"]),
    (plots.return_reasons, ["df", "top", "ax"]),
    (plots.returns_calendar, ["df", "ax"]),
])
def test_every_chart_takes_ax_last_of_the_positional_arguments(chart, positional):
    import inspect

    parameters = inspect.signature(chart).parameters.values()
    assert [p.name for p in parameters if p.kind is p.POSITIONAL_OR_KEYWORD] == positional
    assert all(p.kind is p.KEYWORD_ONLY for p in parameters if p.name not in positional)


def test_return_trend_refuses_bad_arguments(ach):
    with pytest.raises(ValueError, match="freq must be one of"):
        plots.return_trend(ach, freq="fortnight")
    with pytest.raises(ValueError, match="kind must be"):
        plots.return_trend(ach, kind="pie")


# --------------------------------------------------------------------------- return_rate

def test_return_rate_per_submission_week(ach):
    ax = plots.return_rate(ach)
    lines = {line.get_label(): line.get_ydata().tolist() for line in ax.lines}
    assert lines["Returned (R)"] == [50.0, 50.0, 0.0]
    assert lines["Invalid (I)"] == [25.0, 0.0, 0.0]
    assert lines["Blocked (B)"] == pytest.approx([0.0, 0.0, 100 / 6])
    for line in ax.lines:
        assert mdates.date2num(line.get_xdata()).tolist() == WEEKS
    assert to_hex(ax.lines[0].get_color()) == codes.STATUS_COLORS["R"].lower()
    assert ax.get_ylabel() == "Share of submitted items"
    assert "receivedDateTime" in ax.get_xlabel()


def test_return_rate_empty_and_undated(ach):
    assert_empty_chart(plots.return_rate(frames.empty_frame("ach")))
    undated = ach.assign(receivedDateTime=pd.NaT, sendDate=pd.NaT, settleDate=pd.NaT)
    assert_empty_chart(plots.return_rate(undated), "no submission dates")


def test_return_rate_without_returns_draws_zero(ach):
    ax = plots.return_rate(ach[ach["itemStatus"] == "W"])
    assert [line.get_ydata().tolist() for line in ax.lines] == [[0.0, 0.0, 0.0]]


def test_return_rate_uses_deposit_dates_for_rcc():
    df = frames.to_frame([{"rccItemId": 1, "itemStatus": "R", "depositDateTime": "2026-11-02"},
                          {"rccItemId": 2, "itemStatus": "S", "depositDateTime": "2026-11-03"}],
                         "rcc")
    ax = plots.return_rate(df)
    assert ax.lines[0].get_ydata().tolist() == [50.0]
    assert "depositDateTime" in ax.get_xlabel()


# --------------------------------------------------------------------------- return_reasons

def test_return_reasons_with_meanings(ach):
    ax = plots.return_reasons(ach)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    widths = [p.get_width() for p in ax.patches]
    # barh: the most frequent at the top, i.e. the highest y position.
    order = np.argsort([-p.get_y() for p in ax.patches])
    assert [widths[i] for i in order] == [2, 1]
    assert sorted(labels) == ["R01: Insufficient funds", "R02: Account closed"]
    assert ax.get_yticks().tolist() == [1, 0]
    assert labels[0] == "R01: Insufficient funds"
    assert ax.get_title() == "Most frequent return reasons"
    assert ax.get_xlabel() == "Returns"


def test_return_reasons_sum_unknown_codes_under_other_and_name_them(ach):
    odd = ach.copy()
    odd["returnReason"] = odd["returnReason"].replace({"R02": " r99"})
    ax = plots.return_reasons(odd)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == ["R01: Insufficient funds",
                      "other (1 code)\nR99: not a NACHA code paynb knows"]
    assert [p.get_width() for p in ax.patches] == [2, 1]
    assert to_hex(ax.patches[1].get_facecolor()) == "#a0a0a0"


def test_noc_change_codes_top_and_other(nocs):
    ax = plots.return_reasons(nocs, top=2)
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels == [f"C01: {codes.NOC_CODES['C01']}", f"C05: {codes.NOC_CODES['C05']}",
                      "other (1 code)"]
    assert [p.get_width() for p in ax.patches] == [3, 2, 1]
    assert ax.get_title() == "Most frequent NOC change codes"
    assert ax.get_xlabel() == "NOCs"  # it counts NOCs, not items


def test_return_reasons_empty(ach):
    assert_empty_chart(plots.return_reasons(frames.empty_frame("ach")))
    assert_empty_chart(plots.return_reasons(frames.empty_frame("noc")))
    assert_empty_chart(plots.return_reasons(ach[ach["itemStatus"] == "W"]))
    with pytest.raises(ValueError, match="top must be"):
        plots.return_reasons(ach, top=0)


# --------------------------------------------------------------------------- returns_calendar

def test_returns_calendar_grid(ach):
    ax = plots.returns_calendar(ach)
    grid = ax.images[0].get_array()
    assert grid.shape == (7, 3)
    expected = np.zeros((7, 3))
    expected[0, 0] = 1  # Mon 2 Nov
    expected[2, 0] = 1  # Wed 4 Nov
    expected[3, 0] = 1  # Thu 5 Nov
    expected[2, 2] = 2  # Wed 18 Nov
    assert np.array_equal(grid, expected)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["Mon", "Tue", "Wed", "Thu", "Fri",
                                                           "Sat", "Sun"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["02 Nov\n2026", "09 Nov", "16 Nov"]
    assert sorted(texts(ax)) == ["1", "1", "1", "2"]  # counts written in the cells
    assert ax.get_xlabel() == "Week starting (UTC)"


def test_returns_calendar_empty():
    assert_empty_chart(plots.returns_calendar(frames.empty_frame("ach")), "no items returned")


# --------------------------------------------------------------------------- accessor, scale

def test_accessor_gives_every_chart(ach, nocs):
    assert bar_heights(ach.paynb.status_summary()) == [4, 2, 3, 1, 1, 1]
    assert ach.paynb.return_trend(by=None, kind="line").lines[0].get_ydata().tolist() == [3, 0, 2]
    assert len(ach.paynb.return_rate().lines) == 3
    assert [p.get_width() for p in nocs.paynb.return_reasons(top=1).patches] == [3, 3]
    assert ach.paynb.returns_calendar().images


def test_many_rows_are_aggregated_before_drawing(ach):
    big = pd.concat([ach] * 2000, ignore_index=True)  # 24,000 rows
    ax = plots.return_trend(big)
    assert len(ax.patches) == 9  # 3 statuses x 3 weeks, not one artist per row
    assert segments(ax)["Returned (R)"][0][1] == 4000
    assert bar_heights(plots.status_summary(big)) == [8000, 4000, 6000, 2000, 2000, 2000]


def test_import_paynb_does_not_import_matplotlib():
    import subprocess
    import sys

    code = ("import sys, paynb; assert 'matplotlib' not in sys.modules; "
            "import paynb.frames; assert 'matplotlib' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("chart", [plots.status_summary, plots.return_trend, plots.return_rate,
                                   plots.returns_calendar, plots.return_reasons])
def test_not_a_dataframe_is_refused(chart):
    with pytest.raises(TypeError, match="df must be a pandas DataFrame"):
        chart([{"itemStatus": "R"}])


def _tick_values(axis) -> list[float]:
    """The tick positions matplotlib labels inside the axis' view (after a draw)."""
    axis.figure.canvas.draw()
    low, high = sorted(axis.get_view_interval())
    return [t for t in axis.get_majorticklocs() if low - 1e-9 <= t <= high + 1e-9]


@pytest.mark.parametrize("chart, axis", [
    (lambda df: plots.return_trend(df), "y"),
    (lambda df: plots.return_trend(df, kind="line", by=None), "y"),
    (lambda df: plots.status_summary(df), "y"),
    (lambda df: plots.status_summary(df, by="achTransactionType"), "y"),
    (lambda df: plots.return_reasons(df), "x"),
    (lambda df: plots.returns_calendar(df).images[0].colorbar.ax, "y"),
])
def test_count_axes_have_whole_number_ticks(ach, chart, axis):
    # Two returns at most in a week: a default locator would tick 0.25, 0.5 ... 1.75.
    ax = chart(ach)
    ticks = _tick_values(ax.yaxis if axis == "y" else ax.xaxis)
    assert len(ticks) >= 2
    assert all(float(t).is_integer() for t in ticks), ticks
    labels = [t.get_text() for t in (ax.get_yticklabels() if axis == "y"
                                     else ax.get_xticklabels()) if t.get_text()]
    assert labels and all(label.replace(",", "").isdigit() for label in labels), labels



# --------------------------------------------------------------------------- issue 13 item 8

def test_small_statuses_stay_visible_beside_38000_waiting():
    records = ([{"achItemId": i, "itemStatus": "W"} for i in range(38_000)]
               + [{"achItemId": 40_000 + i, "itemStatus": "I"} for i in range(5)]
               + [{"achItemId": 50_000 + i, "itemStatus": "B"} for i in range(3)])
    ax = plots.status_summary(frames.to_frame(records, "ach"))
    ax.figure.canvas.draw()
    heights = {label.get_text(): bar.get_window_extent().height
               for label, bar in zip(ax.get_xticklabels(), ax.patches, strict=True)}
    # Blocked, 3 items, is a bar a reader sees (on a linear axis it was 0.03 px tall)
    assert heights["Blocked (B)"] >= 10 and heights["Invalid (I)"] > heights["Blocked (B)"]
    assert ax.get_yscale() == "log" and ax.get_ylabel() == "Items (log scale)"
    assert texts(ax) == ["38,000 (100 %)", "5 (0.01 %)", "3 (0.01 %)"]


def test_a_balanced_status_chart_stays_linear(ach):
    assert plots.status_summary(ach).get_yscale() == "linear"


def test_instant_amounts_say_their_unit_is_not_stated():
    df = frames.to_frame([{"uniqueId": "a", "status": "Success", "amount": 1500},
                          {"uniqueId": "b", "status": "Failed", "amount": 2051}], "instant")
    ax = plots.status_summary(df, value="amount")
    assert ax.get_ylabel() == "Amount (wire integer, unit not stated)"
    assert bar_heights(ax) == [1500, 2051]
    # Whole numbers in the service's unit: never shown with cents.
    assert texts(ax) == ["1,500 (42 %)", "2,051 (58 %)"]
    stacked = plots.status_summary(df.assign(companyCode="DEMO1"), by="companyCode",
                                   value="amount")
    assert texts(stacked) == ["3,551"]


def test_ach_amounts_say_their_currency(ach):
    ax = plots.status_summary(ach, value="amount", by="achTransactionType")
    assert ax.get_ylabel() == "Amount (USD)"
    assert ax.get_title() == "Amount per status by transaction type"
    assert all(re.fullmatch(r"[\d,]+\.\d\d", t) for t in texts(ax)), texts(ax)


def test_legends_say_what_they_group_by(ach):
    assert plots.return_rate(ach).get_legend().get_title().get_text() == \
        "Grouped by current status"
    assert plots.return_trend(ach).get_legend().get_title().get_text() == "Grouped by status"
    reasons = plots.return_trend(ach, by="returnReason")
    assert reasons.get_legend().get_title().get_text() == "Grouped by return reason"
    stacked = plots.status_summary(ach, by="achTransactionType")
    assert stacked.get_legend().get_title().get_text() == "Stacked by status"
    # Titles and axes in the docs' words, not field names.
    assert stacked.get_title() == "Items per status by transaction type"
    assert stacked.get_xlabel() == "Transaction type"
    by_company = plots.status_summary(ach.assign(companyCode="DEMO1"), by="companyCode")
    assert (by_company.get_title(), by_company.get_xlabel()) == (
        "Items per status by company", "Company")
    assert plots.status_summary(ach.assign(achEntryClass="PPD"),
                                by="achEntryClass").get_xlabel() == "Entry class"
    assert plots.status_summary(ach.assign(extra=1), by="extra").get_xlabel() == "Extra"


def _immature(ax):
    return [c for c in ax.collections if c.get_gid() == "paynb-immature"]


def _weekly(last_received: str) -> pd.DataFrame:
    """Items submitted every day from Monday 2026-06-01 to ``last_received``, 1 in 10 returned."""
    days = pd.date_range("2026-06-01", last_received, freq="D")
    return frames.to_frame([
        {"achItemId": i, "itemStatus": "R" if i % 10 == 0 else "S",
         "receivedDateTime": f"{day:%Y-%m-%d}T12:00:00Z",
         "returnDate": f"{day + pd.Timedelta(days=2):%Y-%m-%d}" if i % 10 == 0 else None}
        for i, day in enumerate(days)], "ach")


@pytest.mark.parametrize(("as_of", "days", "first_shaded"), [
    # The last week (Mon 21 - Sun 27 Sep) may see returns until 60 days after its last day,
    # Thu 26 Nov: it is immature on the 26th (1 more day), mature from the 27th.
    ("2026-11-25", 2, "2026-09-21"),
    ("2026-11-26", 1, "2026-09-21"),
    ("2026-11-27", None, None),
    # On 1 Nov the weeks from Mon 31 Aug on (last day Sun 6 Sep + 60 = 5 Nov) are immature.
    ("2026-11-01", 26, "2026-08-31"),
])
def test_return_rate_shades_the_periods_whose_returns_are_still_arriving(as_of, days,
                                                                         first_shaded):
    ax = plots.return_rate(_weekly("2026-09-27"), as_of=as_of)
    shaded = _immature(ax)
    if days is None:
        assert not shaded and "immature" not in ax.get_xlabel()
        return
    (shade,) = shaded
    corners = shade.get_paths()[0].vertices[:, 0]
    left, right = corners.min(), corners.max()
    assert mdates.num2date(left).strftime("%Y-%m-%d") == first_shaded
    assert mdates.num2date(right).strftime("%Y-%m-%d") in ("2026-09-27", "2026-09-28")
    note = ax.get_xlabel().splitlines()[1:]
    assert note == [f"Shaded: immature, returns can still come for {days} more "
                    f"day{'s' if days != 1 else ''}",
                    "(returns come up to 60 days after settlement): these values will rise."]
    assert "immature" in texts(ax)[0]


def test_return_rate_window_is_adjustable_and_checked():
    ax = plots.return_rate(_weekly("2026-09-27"), as_of="2026-09-28", window_days=2)
    assert "for 2 more days" in ax.get_xlabel()  # until Sun 27 Sep 23:59 + 2 days
    assert not _immature(plots.return_rate(_weekly("2026-09-27"), as_of="2026-09-30",
                                           window_days=2))
    with pytest.raises(ValueError, match="window_days"):
        plots.return_rate(_weekly("2026-09-27"), window_days=-1)


def test_return_trend_shades_the_period_not_over():
    df = _weekly("2026-09-23")  # returns until Fri 25 Sep, in the week of Mon 21 Sep
    ax = plots.return_trend(df, as_of="2026-09-25T10:00:00Z")
    (shade,) = _immature(ax)
    left = shade.get_paths()[0].vertices[:, 0].min()
    assert mdates.num2date(left).strftime("%Y-%m-%d") == "2026-09-21"
    assert "for 3 more days\n(this week is not over)" in ax.get_xlabel()
    assert not _immature(plots.return_trend(df, as_of="2026-09-28"))
