"""Charts of frames listed from the shared sandbox, checked against the service's own filters."""

from __future__ import annotations

import matplotlib.dates as mdates
import pandas as pd
import pytest

from paynb import codes, plots


@pytest.fixture(scope="module")
def items(client) -> pd.DataFrame:
    return client.ach.list(progress=False)


def test_status_summary_matches_the_service_filter(client, items):
    ax = plots.status_summary(items)
    drawn = {t.get_text(): p.get_height() for t, p in zip(ax.get_xticklabels(), ax.patches,
                                                            strict=True)}
    assert sum(drawn.values()) == len(items) > 0
    returned = client.ach.list(status="R", progress=False)
    assert drawn["Returned (R)"] == len(returned) > 0


def test_return_trend_counts_every_return_once(client, items):
    ax = plots.return_trend(items, freq="M")
    total = sum(p.get_height() for p in ax.patches)
    changed = client.ach.list(status=["R", "I", "B"], progress=False)
    assert total == changed["returnDate"].notna().sum() > 0
    first_bar = min(p.get_x() for p in ax.patches)
    first_month = changed["returnDate"].min().tz_localize(None).to_period("M").start_time
    assert first_bar == pytest.approx(mdates.date2num(first_month))


def test_return_reasons_match_the_codes(items):
    ax = plots.return_reasons(items, top=3)
    counts = items["returnReason"].value_counts()
    labels = [t.get_text() for t in ax.get_yticklabels()]
    code = counts.index[0]
    assert labels[0] == f"{code}: {codes.RETURN_CODES[code]}"
    assert ax.patches[0].get_width() == counts.iloc[0]
    assert sum(p.get_width() for p in ax.patches) == counts.sum()


def test_return_rate_and_calendar_draw(items):
    rate = plots.return_rate(items, freq="M")
    returned_line = next(line for line in rate.lines if line.get_label() == "Returned (R)")
    assert 0 < max(returned_line.get_ydata()) < 100
    calendar = plots.returns_calendar(items)
    returned = items[items["itemStatus"].isin(["R", "I", "B"]) & items["returnDate"].notna()]
    assert calendar.images[0].get_array().sum() == len(returned)


def test_nocs_chart(client):
    nocs = client.nocs.list(progress=False)
    ax = plots.return_reasons(nocs, top=20)
    assert sum(p.get_width() for p in ax.patches) == nocs["changeCode"].notna().sum() > 0
    assert all(t.get_text()[:3] in codes.NOC_CODES for t in ax.get_yticklabels())
    assert all(t.get_text()[3:5] == ": " for t in ax.get_yticklabels())
