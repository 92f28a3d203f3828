"""StatusExplorer against the sandbox's seeded items."""

from __future__ import annotations

import datetime as dt

import pytest

from paynb.codes import NOC_CODES
from paynb.forms import StatusExplorer


def test_loads_ach_items_with_counts_and_plots(client) -> None:
    explorer = StatusExplorer(client)
    frame = explorer.result
    assert len(frame) > 0
    assert explorer.status_text.startswith(f"{len(frame):,} ACH items loaded")
    assert "<td>W</td><td>Waiting</td>" in explorer.counts.value
    assert bytes(explorer.plot.value).startswith(b"\x89PNG")
    assert explorer.plot.layout.display is None
    assert "achItemId" in explorer.grid.data.columns
    assert [b.layout.display for b in explorer.save_buttons.values()] == [None, None]


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
    assert "<th>change code</th>" in explorer.counts.value and len(explorer.result) > 0
    assert "<th>NOCs</th>" in explorer.counts.value  # it counts NOCs, not items
    explorer.kind.value = "instant"
    explorer.refresh_button.click()
    assert "uniqueId" in explorer.grid.data.columns
    assert "Success" in explorer.counts.value


def _bars(ax) -> dict[str, float]:
    return {t.get_text(): p.get_height()
            for t, p in zip(ax.get_xticklabels(), ax.patches, strict=True)}


def test_ach_plots_are_the_status_counts_and_the_return_trend(client) -> None:
    explorer = StatusExplorer(client)
    frame = explorer.result
    summary, trend = explorer.figure.axes[:2]
    drawn = _bars(summary)
    assert drawn["Returned (R)"] == (frame["itemStatus"] == "R").sum() > 0
    assert sum(drawn.values()) == len(frame)
    returned = frame["itemStatus"].isin(["R", "I", "B"]) & frame["returnDate"].notna()
    assert sum(p.get_height() for p in trend.patches) == returned.sum()


@pytest.mark.parametrize("kind", ["instant", "rtp"])
def test_instant_and_rtp_plot_the_count_and_amount_per_status(client, kind) -> None:
    explorer = StatusExplorer(client, kind=kind)
    frame = explorer.result
    assert len(frame) > 0
    assert bytes(explorer.plot.value).startswith(b"\x89PNG")
    assert explorer.plot.layout.display is None
    counts, amounts = explorer.figure.axes[:2]
    expected = frame["status"].astype(str).value_counts()
    assert _bars(counts) == {status: float(n) for status, n in expected.items()}
    sums = frame["amount"].astype("float64").groupby(frame["status"].astype(str)).sum()
    assert _bars(amounts) == pytest.approx({status: sums[status] for status in expected.index})
    # the wire integers of an unstated unit, not dollars (a log axis when lopsided)
    assert amounts.get_ylabel().startswith("Amount (wire integer, unit not stated)")


def test_nocs_plot_their_change_codes(client) -> None:
    explorer = StatusExplorer(client, kind="noc")
    frame = explorer.result
    assert explorer.plot.layout.display is None
    (reasons,) = explorer.figure.axes
    counts = frame["changeCode"].value_counts()
    drawn = {t.get_text(): p.get_width()
             for t, p in zip(reasons.get_yticklabels(), reasons.patches, strict=True)}
    codes = [label for label in drawn if not label.startswith("other")]
    assert codes and drawn[codes[0]] == counts.max()  # the most frequent on top
    for label in codes:
        full = f"{label[:3]}: {NOC_CODES[label[:3]]}"
        # plots cut a label above 60 characters to 57 and "..." (C03's reason is longer)
        assert drawn[label] == counts[label[:3]]
        assert label == (full if len(full) <= 60 else full[:57] + "...")
    assert sum(drawn.values()) == counts.sum() == len(frame)


def test_an_empty_list_draws_no_plot(client) -> None:
    explorer = StatusExplorer(client, load=False)
    explorer.returned_from.value = dt.date(2099, 1, 1)
    explorer.refresh_button.click()
    assert len(explorer.result) == 0 and explorer.figure is None
    assert explorer.plot.layout.display == "none"


def test_the_table_reads_well_at_notebook_width(client) -> None:
    explorer = StatusExplorer(client, load=False)
    explorer.statuses.value = ("R",)
    explorer.refresh_button.click()
    grid = explorer.grid
    # A data grid as wide as the form (it scrolls inside itself), with stable classes.
    assert grid.layout.width == "100%" and "paynb-explorer-grid" in grid._dom_classes
    assert grid.layout.display is None
    assert explorer.plot.layout.max_width == "100%"
    assert explorer.filters.layout.flex_flow == "row wrap"  # pickers under the statuses if narrow
    # returnDate is a date: shown without a time; timestamps without the zone suffix.
    first, shown = explorer.result.iloc[0], grid.data.iloc[0]
    assert shown["returnDate"] == f"{first['returnDate']:%Y-%m-%d}"
    assert shown["receivedDateTime"] == f"{first['receivedDateTime']:%Y-%m-%d %H:%M:%S}"
    assert not grid.data["receivedDateTime"].str.contains(r"\+00:00").any()
    # amounts are numbers (sorting by size), drawn with two decimals
    assert shown["amount"] == float(first["amount"])
    assert grid.renderers["amount"].format == ",.2f"
    assert "Times in UTC" in explorer.output.value
    # form.result keeps the real types: every time a UTC instant (paynb.frames).
    assert str(explorer.result["returnDate"].dtype) == "datetime64[ns, UTC]"
    assert str(explorer.result["receivedDateTime"].dtype) == "datetime64[ns, UTC]"


def test_the_grid_holds_the_filtered_rows_masked_as_the_frame(client) -> None:
    explorer = StatusExplorer(client, load=False)
    explorer.statuses.value = ("R", "B")
    explorer.refresh_button.click()
    frame, data = explorer.result, explorer.grid.data
    assert 0 < len(frame) <= 1000 and len(data) == len(frame)
    assert data["achItemId"].tolist() == frame["achItemId"].tolist()
    assert set(data["itemStatus"]) == set(frame["itemStatus"].astype(str)) <= {"R", "B"}
    assert data["yourReferenceNumber"].tolist() == frame["yourReferenceNumber"].tolist()
    # no column the table does not show (account numbers stay in form.result, masked there)
    assert "bankAccountNumber" not in data.columns
    explorer.kind.value = "instant"
    explorer.refresh_button.click()
    data = explorer.grid.data
    assert data["uniqueId"].tolist() == explorer.result["uniqueId"].tolist()
    assert data["cardLastFour"].str.len().le(4).all()  # never a full card number
    assert "amount" not in explorer.grid.renderers  # the wire integer is not a decimal


def test_the_date_pickers_show_their_whole_label(client) -> None:
    explorer = StatusExplorer(client, load=False)
    for picker in (explorer.returned_from, explorer.returned_to):
        assert picker.style.description_width == "100px"


def test_display_frame_formats_dates_and_timestamps() -> None:
    import pandas as pd

    from paynb.forms.explorer import display_frame

    frame = pd.DataFrame({
        "returnDate": pd.to_datetime(["2026-07-05", None], utc=True),
        "receivedDateTime": pd.to_datetime(["2026-07-05T06:44:13.661Z", None], utc=True),
        "empty": pd.to_datetime([None, None], utc=True),
        "amount": ["1.00", "2.00"],
    })
    shown = display_frame(frame)
    assert shown["returnDate"].tolist() == ["2026-07-05", ""]
    assert shown["receivedDateTime"].tolist() == ["2026-07-05 06:44:13", ""]
    assert shown["empty"].tolist() == ["", ""]
    assert shown["amount"].tolist() == ["1.00", "2.00"]
    assert isinstance(frame["returnDate"].dtype, pd.DatetimeTZDtype)  # the input is left alone


def test_a_long_load_says_how_many_pages_are_in(client) -> None:
    explorer = StatusExplorer(client, load=False)
    said: list[str] = []
    explorer.status.observe(lambda _change: said.append(explorer.status_text), names="value")
    explorer.refresh_button.click()
    pages = -(-len(explorer.result) // client.page_size)
    assert pages > 1
    assert said[0] == "Loading…"
    assert [text for text in said if "page" in text] == [
        f"Loading ACH items… page {n} of {pages}" for n in range(1, pages + 1)]
    assert explorer.status_text.startswith(f"{len(explorer.result):,} ACH items loaded")


def test_pages_said_without_a_total() -> None:
    from paynb.forms._base import pages_said

    said: list[tuple[str, str]] = []
    report = pages_said(lambda text, level: said.append((text, level)), "Loading RTP items")
    report(1, None)
    report(3, None)
    assert said == [("Loading RTP items… 1 page", "info"), ("Loading RTP items… 3 pages", "info")]


# ------------------------------------------------------------------------ saving (issue 13)

def test_no_item_data_is_embedded_in_the_widgets(client) -> None:
    from paynb.forms.explorer import GRID_ROWS

    explorer = StatusExplorer(client)
    assert len(explorer.result) > GRID_ROWS
    html = explorer.output.value
    # No download link carrying the rows; the table holds the first GRID_ROWS rows only.
    assert "data:" not in html and "base64" not in html
    assert len(explorer.grid.data) == GRID_ROWS
    last = explorer.result["yourReferenceNumber"].iloc[-1]
    assert last not in explorer.grid.data["yourReferenceNumber"].tolist()
    assert f"the first {GRID_ROWS:,} of {len(explorer.result):,} rows" in html


@pytest.mark.parametrize("filetype", ["csv", "xlsx"])
def test_save_writes_a_file_in_the_folder_and_shows_its_path(client, tmp_path, filetype):
    import pandas as pd

    explorer = StatusExplorer(client, folder=tmp_path)
    explorer.save_buttons[filetype].click()
    path = explorer.saved
    assert path is not None and path.parent == tmp_path and path.suffix == f".{filetype}"
    assert path.name.startswith("ach-items-")
    assert str(path) in explorer.saved_path.value and str(path) in explorer.status_text
    read = pd.read_csv(path, dtype=str) if filetype == "csv" else pd.read_excel(path, dtype=str)
    frame = explorer.result
    assert len(read) == len(frame)
    assert read["achItemId"].astype(int).tolist() == frame["achItemId"].tolist()
    assert read["bankAccountNumber"].str.startswith("****").all()  # as masked as the frame
    assert read["amount"].iloc[0] == str(frame["amount"].iloc[0])  # exact, not a float
    # a second save never overwrites the first
    explorer.save_buttons[filetype].click()
    assert explorer.saved != path and path.exists() and explorer.saved.exists()


def test_save_defaults_to_the_working_folder_and_names_the_kind_loaded(client, tmp_path,
                                                                        monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    explorer = StatusExplorer(client, kind="noc")
    explorer.kind.value = "rtp"  # changed, not loaded: the saved file is still the NOCs
    explorer.save_buttons["csv"].click()
    assert explorer.saved.parent == tmp_path and explorer.saved.name.startswith("noc-items-")


def test_save_buttons_hide_when_nothing_is_loaded(client, tmp_path) -> None:
    explorer = StatusExplorer(client, load=False, folder=tmp_path)
    explorer.returned_from.value = dt.date(2099, 1, 1)
    explorer.refresh_button.click()
    assert all(b.layout.display == "none" for b in explorer.save_buttons.values())


def test_a_folder_that_cannot_be_written_is_said(client, tmp_path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    explorer = StatusExplorer(client, folder=blocker / "sub")
    explorer.save_buttons["csv"].click()
    assert explorer.saved is None and "Could not save" in explorer.status_text
