"""The exceptions view, headless: choose with .value, act with .click()."""

from __future__ import annotations

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
