"""Voids of ACH and RCC items: see what will be voided, confirm, void, see each new state."""

from __future__ import annotations

import re
from typing import Any

import ipywidgets as widgets
import pandas as pd

from paynb._kinds import KINDS
from paynb.codes import STATUS_NAMES
from paynb.errors import ApiError, NotFoundError
from paynb.forms._base import (
    Form,
    button,
    describe_error,
    pages_said,
    table_box,
    table_html,
)
from paynb.journal import Approval
from paynb.paging import page_progress

__all__ = ["VoidForm"]

_ID_COLUMNS = {kind: KINDS[kind].id_field for kind in ("ach", "rcc")}  # the voidable kinds
_BY_IDS, _BY_REFS = "ids", "refs"
_SEPARATORS = re.compile(r"[\s,;]+")
#: Up to this many ids are fetched one by one; more are matched in one read of the list.
_GET_EACH_UP_TO = 20


def _status(value: Any) -> str:
    return "" if value is None or pd.isna(value) else str(value)


class VoidForm(Form):
    """Void ACH or RCC items by item id(s) or by your reference numbers.

    Type or paste ids or references (separated by commas, spaces or new lines), or pass
    ``items``: a DataFrame such as a filtered list (its item ids are used, else its
    ``yourReferenceNumber`` column), one id, or a list of ids or references. The form first
    fetches and shows what will be voided, marks the items that cannot be (only status W,
    Waiting, can be voided), and voids only after a confirmation naming the count.
    ``form.result`` has one row per requested item with its state before and after.
    """

    title = "Void items"
    css_name = "void"

    def __init__(self, client: Any, items: Any = None, *, kind: str | None = None) -> None:
        super().__init__(client)
        self.kind = widgets.ToggleButtons(options=[("ACH", "ach"), ("RCC", "rcc")],
                                          value=kind or "ach", description="Kind")
        self.kind.add_class("paynb-field-kind")
        self.by = widgets.ToggleButtons(options=[("Item ids", _BY_IDS),
                                                 ("Reference numbers", _BY_REFS)],
                                        value=_BY_IDS, description="By").add_class("paynb-field-by")
        self.entry = widgets.Textarea(
            placeholder="Ids or reference numbers, separated by commas, spaces or new lines",
            layout=widgets.Layout(width="480px", height="80px")).add_class("paynb-field-items")
        self.fetch_button = button("Show what will be voided", "paynb-fetch", icon="search")
        self.preview = table_box().add_class("paynb-preview")
        self.confirm = self._confirmation(self._changed)
        self.void_button = button("Void", "paynb-submit", style="danger", icon="ban")
        self.fetch_button.on_click(self._guarded(self._fetch, "Fetching the items…"))
        self.void_button.on_click(self._guarded(
            self._void, lambda: f"Voiding {len(self._voidable())} items…"))
        for widget in (self.kind, self.by, self.entry):
            widget.observe(self._invalidate, names="value")
        #: One row per requested item, as fetched; ``None`` until fetched.
        self.targets: pd.DataFrame | None = None
        self._done = False
        self._assemble(widgets.HBox([self.kind, self.by]), self.entry, self.fetch_button,
                       self.preview, self.confirm, self.void_button)
        if items is not None:
            self.set_items(items, kind=kind)
            self.fetch_button.click()
        else:
            self._refresh()

    def set_items(self, items: Any, *, kind: str | None = None) -> None:
        """Fill the form from a DataFrame, one id, or a list of ids or references."""
        if isinstance(items, pd.DataFrame):
            ids = [c for c in _ID_COLUMNS.values() if c in items.columns]
            if ids:
                kind = kind or next(k for k, c in _ID_COLUMNS.items() if c == ids[0])
                values, by = items[ids[0]].dropna().astype("int64").tolist(), _BY_IDS
            else:
                values, by = items["yourReferenceNumber"].dropna().astype(str).tolist(), _BY_REFS
        else:
            values = [items] if isinstance(items, int | str) else list(items)
            by = _BY_IDS if all(isinstance(v, int) for v in values) else _BY_REFS
        if kind:
            self.kind.value = kind
        self.by.value = by
        self.entry.value = "\n".join(str(v) for v in values)

    def _tokens(self) -> tuple[list[Any], list[str]]:
        """The entered ids or references, de-duplicated in order, and the bad tokens."""
        tokens = list(dict.fromkeys(t for t in _SEPARATORS.split(self.entry.value) if t))
        if self.by.value == _BY_REFS:
            return tokens, []
        bad = [t for t in tokens if not t.isdigit() or int(t) == 0]
        return [int(t) for t in tokens if t not in bad], bad

    def _invalidate(self, *_args: Any) -> None:
        self.targets = None
        self._done = False
        self.preview.value = ""
        self.confirm.value = False
        self._changed()

    def _voidable(self) -> pd.DataFrame:
        if self.targets is None:
            return pd.DataFrame()
        return self.targets[self.targets["canVoid"]]

    def _refresh(self) -> None:
        values, bad = self._tokens()
        count = len(self._voidable())
        skipped = 0 if self.targets is None else len(self.targets) - count
        noun = f"{count} {self.kind.value.upper()} item{'s' if count != 1 else ''}"
        self.confirm.description = self._confirm_text(f"void {noun}" + (
            f" ({skipped} cannot be voided and will be left alone)" if skipped else ""))
        self._show(self.confirm, count > 0 and not self._done)
        self.confirm.disabled = self.busy
        self.fetch_button.disabled = self.busy or not values or bool(bad)
        self.void_button.disabled = (self.busy or self._done or not count or not self.confirm.value)
        what = "item ids" if self.by.value == _BY_IDS else "reference numbers"
        self._report(
            (bool(bad), f"Not item ids: {', '.join(bad[:5])}. Item ids are whole numbers; "
             "choose 'Reference numbers' to void by your references.", "warn"),
            (not values, f"Enter the {what} to void.", "info"),
            (self.targets is None,
             f"{len(values)} {what} entered: click 'Show what will be voided'.", "info"),
            (not count, "None of these items can be voided (see the preview).", "warn"),
            (not self.confirm.value,
             f"Check the preview, then tick the confirmation to void {noun}.", "info"),
            (True, f"Ready to void {noun}.", "ok"))

    def _fetch(self) -> None:
        values, bad = self._tokens()
        if not values or bad:
            return
        resource = getattr(self.client, self.kind.value)
        id_column = _ID_COLUMNS[self.kind.value]
        by_ids = self.by.value == _BY_IDS
        rows = []
        if by_ids and len(values) <= _GET_EACH_UP_TO:
            for item_id in values:
                try:
                    rows.append(resource.get(item_id).to_dict())
                except NotFoundError:
                    rows.append({id_column: item_id, "yourReferenceNumber": None})
        else:
            # The spec has no look-up by reference (nor by many ids): read the list once
            # (its pages are fetched concurrently) and match.
            label = self.kind.value.upper()
            with page_progress(pages_said(self._say, f"Reading the {label} list")):
                listing = resource.list(progress=False)
            column = id_column if by_ids else "yourReferenceNumber"
            keys = listing[column].astype("string")
            for value in values:
                matches = listing[keys == str(value)]
                rows.extend(matches.to_dict("records") or [
                    {id_column: value if by_ids else None,
                     "yourReferenceNumber": None if by_ids else value}])
        self._set_targets(pd.DataFrame(rows), id_column)

    def _set_targets(self, found: pd.DataFrame, id_column: str) -> None:
        for column in (id_column, "yourReferenceNumber", "itemStatus", "itemStatusName", "amount"):
            if column not in found.columns:
                found[column] = None
        statuses = found["itemStatus"].map(_status)
        found["canVoid"] = statuses == "W"
        found["check"] = [
            "can be voided" if status == "W"
            else "not found" if not status
            else f"cannot be voided: status {status} ({STATUS_NAMES.get(status, status)}); "
                 "only Waiting (W) items can be voided"
            for status in statuses]
        self.targets = found.reset_index(drop=True)
        shown = self.targets[[id_column, "yourReferenceNumber", "itemStatus", "itemStatusName",
                              "amount", "check"]]
        self.preview.value = table_html(shown)
        self._notice = None

    def _void(self) -> None:
        voidable = self._voidable()
        if self._done or not self.confirm.value or voidable.empty:
            return  # the button was disabled: a programmatic click gets no further
        resource = getattr(self.client, self.kind.value)
        id_column = _ID_COLUMNS[self.kind.value]
        try:
            if self.by.value == _BY_REFS:
                answer = resource.void_references(voidable["yourReferenceNumber"].tolist())
            elif len(voidable) == 1:
                answer = resource.void(int(voidable[id_column].iloc[0]))
            else:
                answer = resource.void_many([int(i) for i in voidable[id_column]])
        except ApiError as exc:
            self._announce(describe_error(exc) + " Nothing may have been voided: click 'Show "
                           "what will be voided' to see the current state.", "error")
            return
        self._done = True
        self.confirm.value = False
        if isinstance(answer, Approval):  # held for a second person: nothing sent yet
            self._held(answer)
            return
        if isinstance(answer, pd.Series):
            answer = answer.to_frame().T
        after = {str(r.get(id_column)): r for r in answer.to_dict("records")}
        rows = []
        for target in self.targets.to_dict("records"):
            new = after.get(str(target[id_column])) if target["canVoid"] else None
            rows.append({
                id_column: target[id_column],
                "yourReferenceNumber": target["yourReferenceNumber"],
                "statusBefore": _status(target["itemStatus"]),
                "itemStatus": _status(new["itemStatus"]) if new else _status(target["itemStatus"]),
                "itemStatusName": (new or target).get("itemStatusName"),
                "outcome": "voided" if new else (
                    "no answer for this item" if target["canVoid"] else "not voided: "
                    + target["check"]),
            })
        self.result = pd.DataFrame(rows)
        self.output.value = table_html(self.result)
        voided = int((self.result["outcome"] == "voided").sum())
        self._announce(f"Voided {voided} of {len(self.result)} items.",
                       "ok" if voided == len(voidable) else "warn")

