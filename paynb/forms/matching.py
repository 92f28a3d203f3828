"""The exceptions workflow of :func:`paynb.match`: look at what needs a look, pair by hand,
resolve with a note, void an item that should not exist."""

from __future__ import annotations

import logging
from typing import Any

import ipywidgets as widgets
import numpy as np
import pandas as pd

from paynb._kinds import KINDS
from paynb.forms._base import Form, PagedGrid, button
from paynb.forms.void import VoidForm

__all__ = ["ExceptionsView"]

logger = logging.getLogger("paynb.forms")

#: The items' id columns (instant card and RTP payments share theirs).
_ID_COLUMNS = tuple(dict.fromkeys(kind.id_field for kind in KINDS.values() if kind.payment))
_ITEM_SHOWN = (*_ID_COLUMNS, "yourReferenceNumber", "amount", "itemStatus", "sendDate",
               "depositDateTime", "receivedDateTime", "bankAccountNumber",
               "firstSignerLastName", "tied_with")


class ExceptionsView(Form):
    """The exceptions and unmatched rows of a :class:`paynb.MatchResult`, as tables shown
    a page at a time (:class:`~paynb.forms._base.PagedGrid`: *Find* searches all the
    rows, *Previous* / *Next* turn the page, the grid sorts and filters the page), with
    three actions:

    - **Pair by hand**: choose an unmatched expected line and an unmatched item (click
      their rows, or pick them in ``expected_choice`` and ``item_choice``, which offer
      the rows of the page shown), then ``pair_button``;
    - **Resolve**: choose an exception (``exception_choice``: the open exceptions of the
      page shown), write a ``note`` saying why, then ``resolve_button``;
    - **Void**: for an unmatched item that should not exist, ``void_button`` opens a
      :class:`paynb.forms.VoidForm` for it below (needs a ``client``).

    Only the pages shown are kept in the widgets (their state is saved with the
    notebook): a result of thousands of unmatched rows keeps the notebook small.

    Decisions go to the result's journal (see :meth:`paynb.MatchResult.pair`), so the
    next run of :func:`paynb.match` with that journal keeps them; the tables show the
    result brought up to date. ``form.result`` is the :class:`paynb.MatchResult`.
    """

    title = "Match exceptions"
    css_name = "match"

    def __init__(self, result: Any, client: Any = None) -> None:
        super().__init__(client)
        self.result = result
        self.summary = widgets.HTML("").add_class("paynb-match-summary")
        self.exceptions_table = PagedGrid(result.exceptions, "paynb-match-exceptions")
        self.expected_table = PagedGrid(result.unmatched_expected, "paynb-match-expected")
        self.items_table = PagedGrid(self._items(), "paynb-match-items")
        #: The grids of the tables' pages.
        self.exceptions_grid = self.exceptions_table.grid
        self.expected_grid = self.expected_table.grid
        self.items_grid = self.items_table.grid
        self.exception_choice = widgets.Dropdown(description="Exception")
        self.exception_choice.add_class("paynb-field-exception")
        self.note = widgets.Text(description="Note", placeholder="why it is fine")
        self.note.add_class("paynb-field-note")
        self.resolve_button = button("Resolve", "paynb-match-resolve", icon="check")
        self.expected_choice = widgets.Dropdown(description="Expected")
        self.expected_choice.add_class("paynb-field-expected")
        self.item_choice = widgets.Dropdown(description="Item").add_class("paynb-field-item")
        self.pair_button = button("Pair", "paynb-match-pair", style="primary", icon="link")
        self.void_button = button("Void this item…", "paynb-match-void", style="danger", icon="ban")
        self.void_area = widgets.VBox().add_class("paynb-match-void-form")
        self.void_form: Any = None
        self.resolve_button.on_click(self._guarded(self._resolve, "Recording the resolution…"))
        self.pair_button.on_click(self._guarded(self._pair, "Recording the pair…"))
        self.void_button.on_click(self._guarded(self._open_void, "Opening the void form…"))
        for widget in (self.exception_choice, self.note, self.expected_choice, self.item_choice):
            widget.observe(self._changed, names="value")
        for table in (self.exceptions_table, self.expected_table, self.items_table):
            table.on_page(self._offer)
        self._fill()
        # A click on a grid row chooses it for the action below.
        for grid, column, choice in (
                (self.exceptions_grid, "exception_id", self.exception_choice),
                (self.expected_grid, "expected_row", self.expected_choice),
                (self.items_grid, self._item_column(), self.item_choice)):
            grid.observe(self._picked(grid, column, choice), names="selections")
        self._assemble(
            self.summary,
            widgets.HTML("<b>Exceptions</b>"), self.exceptions_table.widget,
            widgets.HBox([self.exception_choice, self.note, self.resolve_button]),
            widgets.HTML("<b>Unmatched expected lines</b>"), self.expected_table.widget,
            widgets.HTML("<b>Unmatched items</b>"), self.items_table.widget,
            widgets.HBox([self.expected_choice, self.item_choice, self.pair_button,
                          self.void_button]),
            self.void_area)
        self._refresh()

    def _items(self) -> pd.DataFrame:
        frame = self.result.unmatched_items
        return frame[[c for c in _ITEM_SHOWN if c in frame.columns]]

    def _item_column(self) -> str:
        return next(c for c in _ID_COLUMNS if c in self.result.unmatched_items.columns)

    def _fill(self) -> None:
        result = self.result
        self.summary.value = result._repr_html_()
        self.exception_choice.value = self.expected_choice.value = self.item_choice.value = None
        self.exceptions_table.show(result.exceptions)
        self.expected_table.show(result.unmatched_expected)
        self.items_table.show(self._items())
        self.note.value = ""

    def _offer(self) -> None:
        """The choices: the rows of the pages shown (and the one chosen, if it is not)."""
        exceptions = self.exceptions_table.page
        _set_options(self.exception_choice, [
            (f"#{row.exception_id} {row.reason}: items {row.item_ids}", int(row.exception_id))
            for row in exceptions[~exceptions["resolved"]].itertuples()])
        _set_options(self.expected_choice, [
            (f"row {label}", label) for label in self.expected_table.page.index.tolist()])
        _set_options(self.item_choice, [
            (f"item {i}", i) for i in self.items_table.page[self._item_column()].tolist()])
    def _picked(self, grid: Any, column: str, choice: widgets.Dropdown) -> Any:
        """A handler choosing, in ``choice``, the row last clicked in ``grid``."""

        def picked(change: dict[str, Any]) -> None:
            selections = change["new"] or []
            if not selections:
                return
            row = int(selections[-1]["r1"])
            data = grid.data
            if column not in data.columns or row >= len(data):
                return
            wanted = str(data[column].iloc[row])
            for _, value in choice.options:
                if value is not None and str(value) == wanted:
                    choice.value = value

        return picked

    def _refresh(self) -> None:
        exception = self.exception_choice.value
        note = self.note.value.strip()
        expected, item = self.expected_choice.value, self.item_choice.value
        self.resolve_button.disabled = self.busy or exception is None or not note
        self.pair_button.disabled = self.busy or expected is None or item is None
        self.void_button.disabled = self.busy or item is None or self.client is None
        self._report(
            (exception is not None and not note,
             "Write a note saying why the exception is resolved.", "info"),
            (exception is not None, f"Ready to resolve exception #{exception}.", "info"),
            (expected is not None and item is not None,
             f"Ready to pair expected row {expected} with item {item}.", "info"),
            (item is not None and self.client is None,
             "Voiding needs a client: ExceptionsView(result, client).", "info"),
            (True, "Pick an exception to resolve, or an expected line and an item to pair.",
             "info"))

    def _resolve(self) -> None:
        exception = self.exception_choice.value
        self.result.resolve(exception, self.note.value)
        self._fill()
        self._announce(f"Exception #{exception} resolved; kept in the journal.", "ok")

    def _pair(self) -> None:
        expected, item = self.expected_choice.value, self.item_choice.value
        self.result.pair(expected, item)
        self._fill()
        self._announce(f"Expected row {expected} paired with item {item} by hand; kept in the "
                       "journal.", "ok")

    def _open_void(self) -> None:
        item = self.item_choice.value
        kind = "rcc" if self._item_column() == KINDS["rcc"].id_field else "ach"
        self.void_form = VoidForm(self.client, items=[int(np.int64(item))], kind=kind)
        self.void_area.children = (self.void_form.widget,)
        self._announce(f"The void form for item {item} is below: it shows the item first "
                       "and voids only after you confirm.", "ok")


def _set_options(choice: widgets.Dropdown, options: list[tuple[str, Any]]) -> None:
    """Offer ``options`` (after an empty one) in ``choice``, keeping the value chosen."""
    kept = choice.value
    pairs = [("", None), *options]
    if kept is not None and kept not in [value for _, value in options]:
        pairs.append(next(((label, value) for label, value in choice.options
                           if value == kept), (str(kept), kept)))
    choice.options = pairs
    choice.value = kept
