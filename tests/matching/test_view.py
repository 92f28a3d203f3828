"""The exceptions view, headless: choose with .value, act with .click()."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

import paynb
from paynb.forms import ExceptionsView, VoidForm
from paynb.journal import Journal
from tests.matching.conftest import ach_items

COLUMNS = {"reference": "ref", "account": "acct", "amount": "amount", "date": "date"}


def _result(journal: Journal):
    items = ach_items([{"amount": "20.00", "itemStatus": "R", "returnReason": "R01"},
                       {"amount": "33.00", "bankAccountNumber": "4444", "itemStatus": "W"}])
    expected = pd.DataFrame({"ref": ["REF-1", None], "acct": ["123456789", "5555"],
                             "amount": ["20.00", "33.10"], "date": ["2026-07-06"] * 2})
    return expected, items, paynb.match(expected, items, columns=COLUMNS, journal=journal)


def test_pair_and_resolve_by_hand_are_kept(tmp_path: Path):
    journal = Journal(tmp_path / "j.sqlite3")
    expected, items, result = _result(journal)
    view = ExceptionsView(result)
    assert "paynb-form-match" in view.widget._dom_classes
    assert "paynb-match-pair" in view.pair_button._dom_classes
    assert view.pair_button.disabled and view.resolve_button.disabled
    view.expected_choice.value = 1
    view.item_choice.value = 2
    assert not view.pair_button.disabled
    assert view.void_button.disabled  # no client
    view.pair_button.click()
    assert "paired with item 2" in view.status_text
    assert view.result.unmatched_expected.empty
    assert len(view.exceptions_grid.data) == 2  # returned, and the pair's amount difference
    returned = view.result.exceptions.set_index("reason").loc["returned", "exception_id"]
    view.exception_choice.value = int(returned)
    assert view.resolve_button.disabled and "note" in view.status_text
    view.note.value = "refunded by wire"
    view.resolve_button.click()
    assert "resolved" in view.status_text
    again = paynb.match(expected, items, columns=COLUMNS, journal=Journal(tmp_path / "j.sqlite3"))
    assert again.matched["manual"].sum() == 1
    assert again.exceptions.set_index("reason").loc["returned", "note"] == "refunded by wire"


def test_a_grid_click_chooses_the_row(tmp_path: Path):
    _, _, result = _result(Journal(tmp_path / "j.sqlite3"))
    view = ExceptionsView(result)
    view.items_grid.selections = [{"r1": 0, "r2": 0, "c1": 0, "c2": 3}]
    assert view.item_choice.value == 2


def test_void_opens_the_void_form_for_the_item(tmp_path: Path, client):
    _, _, result = _result(Journal(tmp_path / "j.sqlite3"))
    view = ExceptionsView(result, client)
    view.item_choice.value = 2
    assert not view.void_button.disabled
    view.void_button.click()
    assert isinstance(view.void_form, VoidForm)
    assert view.void_form.entry.value.strip() == "2"
    assert view.void_area.children == (view.void_form.widget,)


def _many_unmatched(journal: Journal, n: int = 2500):
    items = ach_items([{"amount": f"{10 + k}.00", "yourReferenceNumber": f"REF-{k}",
                        "bankAccountNumber": f"{100000 + k}"} for k in range(n)])
    expected = pd.DataFrame({"ref": [f"ref-{k}" for k in range(0, 2 * n, 2)],
                             "acct": ["5555"] * n, "amount": ["1.00"] * n,
                             "date": ["2026-07-06"] * n})
    return paynb.match(expected, items, columns=COLUMNS, journal=journal)


def test_the_view_keeps_one_page_of_rows_in_its_widgets(tmp_path: Path):
    """Issue 32: notebook 09 saved 1.9 MB on the demo data, every unmatched row in its
    grids' state and every unmatched item in a dropdown."""
    from ipywidgets.embed import dependency_state

    result = _many_unmatched(Journal(tmp_path / "j.sqlite3"))
    assert len(result.unmatched_items) == 1250 and len(result.exceptions) == 1250
    view = ExceptionsView(result)
    state = json.dumps(dependency_state(view.widget))
    assert len(state) < 200_000, len(state)
    assert len(view.items_grid.data) == view.items_table.page_rows == 100
    assert len(view.item_choice.options) == 101  # the page's items and the empty choice
    assert "rows 1-100 of 1,250" in view.items_table.position.value


def test_find_and_turn_the_page_then_choose_and_pair(tmp_path: Path):
    result = _many_unmatched(Journal(tmp_path / "j.sqlite3"))
    view = ExceptionsView(result)
    table = view.items_table
    assert table.previous_button.disabled and not table.next_button.disabled
    table.next_button.click()
    assert "rows 101-200 of 1,250" in table.position.value
    assert view.items_grid.data["achItemId"].iloc[0] == table.page["achItemId"].iloc[0]
    table.find.value = "ref-2001"  # any case, any column
    assert table.page["yourReferenceNumber"].tolist() == ["REF-2001"]
    assert "of 1 found among 1,250" in table.position.value
    view.items_grid.selections = [{"r1": 0, "r2": 0, "c1": 0, "c2": 3}]
    assert view.item_choice.value == 2002
    # The chosen item stays chosen while other pages are shown.
    table.find.value = ""
    assert view.item_choice.value == 2002
    view.expected_table.find.value = "ZZZ-nothing"
    assert "no rows found among" in view.expected_table.position.value
    view.expected_table.find.value = ""
    for _ in range(12):
        view.expected_table.next_button.click()
    assert view.expected_table.next_button.disabled  # the last page: rows 1,201-1,250
    assert len(view.expected_table.page) == 50
    expected_row = int(view.expected_table.page.index[-1])
    view.expected_choice.value = expected_row
    view.pair_button.click()
    assert f"Expected row {expected_row} paired with item 2002" in view.status_text
    assert "rows 1-100 of 1,249" in table.position.value
    # An exception of the second page is offered once that page is shown.
    exceptions = view.exceptions_table
    exceptions.next_button.click()
    wanted = int(exceptions.page["exception_id"].iloc[0])
    view.exception_choice.value = wanted
    view.note.value = "known"
    view.resolve_button.click()
    assert f"Exception #{wanted} resolved" in view.status_text
