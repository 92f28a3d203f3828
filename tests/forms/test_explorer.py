"""StatusExplorer against the sandbox's seeded items."""

from __future__ import annotations

import datetime as dt

from paynb.forms import StatusExplorer


def test_loads_ach_items_with_counts_and_plots(client) -> None:
    explorer = StatusExplorer(client)
    frame = explorer.result
    assert len(frame) > 0
    assert explorer.status_text.startswith(f"{len(frame):,} ACH items loaded")
    assert "<td>W</td><td>Waiting</td>" in explorer.counts.value
    assert bytes(explorer.plot.value).startswith(b"\x89PNG")
    assert explorer.plot.layout.display is None
    assert "achItemId" in explorer.output.value and "Download as CSV" in explorer.output.value


def test_status_and_return_date_filters(client) -> None:
    explorer = StatusExplorer(client, load=False)
    assert explorer.result is None
    explorer.statuses.value = ("R",)
    explorer.refresh_button.click()
    returned = explorer.result
    assert len(returned) > 0 and set(returned["itemStatus"].astype(str)) == {"R"}
    day = returned["returnDate"].min().date()
    explorer.returned_from.value = day
    explorer.returned_to.value = day
    explorer.refresh_button.click()
    days = {d.date() for d in explorer.result["returnDate"]}
    assert days == {day}  # "returned to" includes the whole day


def test_a_backwards_date_range_cannot_be_loaded(client) -> None:
    explorer = StatusExplorer(client, load=False)
    explorer.returned_from.value = dt.date(2026, 11, 2)
    explorer.returned_to.value = dt.date(2026, 11, 1)
    assert explorer.refresh_button.disabled
    assert "after" in explorer.status_text


def test_other_kinds(client) -> None:
    explorer = StatusExplorer(client, kind="noc")
    assert explorer.filters.layout.display == "none"  # NOC lists take no status filter
    assert "changeCode" in explorer.counts.value and len(explorer.result) > 0
    assert explorer.plot.layout.display == "none"
    explorer.kind.value = "instant"
    explorer.refresh_button.click()
    assert "uniqueId" in explorer.output.value
    assert "Success" in explorer.counts.value
