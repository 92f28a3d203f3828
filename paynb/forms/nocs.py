"""Acting on NOCs in a notebook: :class:`NocForm` shows the correction ledger, marks a
NOC applied (in the journal, with who and when) and opens an :class:`~paynb.forms.AchForm`
pre-filled with the corrected account record.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from paynb.forms._base import Form, button, escape, table_box, table_html
from paynb.forms.single import AchForm
from paynb.nacha import SETTLED_STATES

__all__ = ["NocForm"]

#: Ledger columns the form's table shows.
_SHOWN = ("nocId", "achItemId", "changeCode", "changeReason", "bankAccountNumber",
          "mustChange", "received", "dueDate", "state", "appliedBy", "appliedAt")


class NocForm(Form):
    """The NOC correction ledger with its actions.

    ``NocForm(client)`` lists the NOCs (``client.nocs.obligations()``, judged at the service's
    clock) in a table; pick one to mark it applied (recorded in the journal with ``by`` and a
    note), or to open an :class:`~paynb.forms.AchForm` pre-filled with its corrected account
    record (:attr:`correction_form`). ``form.result`` is the ledger as last loaded.
    """

    title = "NOC corrections"
    css_name = "nocs"

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.noc = widgets.Dropdown(options=[], description="NOC",
                                    layout=widgets.Layout(width="480px"))
        self.noc.add_class("paynb-field-noc")
        self.by = widgets.Text(value="", placeholder="you (the OS user)", description="By")
        self.by.add_class("paynb-field-by")
        self.note = widgets.Text(value="", placeholder="what was changed, where",
                                 description="Note").add_class("paynb-field-note")
        self.table = table_box().add_class("paynb-ledger")
        self.apply_button = button("Mark applied", "paynb-apply", style="primary", icon="check")
        self.correct_button = button("Correct in an ACH form", "paynb-correct", icon="pencil")
        self.refresh_button = button("Refresh", "paynb-refresh", icon="refresh")
        self.apply_button.on_click(self._guarded(self._apply, "Recording…"))
        self.correct_button.on_click(self._guarded(self._correct, "Opening…"))
        self.refresh_button.on_click(self._guarded(self.refresh, "Loading the NOCs…"))
        self.noc.observe(self._changed, names="value")
        #: The ACH form opened by *Correct in an ACH form* (``None`` until then).
        self.correction_form: Any = None
        self._correction_box = widgets.VBox()
        self._assemble(self.table, self.noc, widgets.HBox([self.by, self.note]),
                       widgets.HBox([self.apply_button, self.correct_button,
                                     self.refresh_button]), self._correction_box)
        self._guarded(self.refresh, "Loading the NOCs…")()

    def refresh(self) -> None:
        """Load the ledger again (NOCs, applied marks, the service's clock)."""
        ledger = self.client.nocs.obligations(progress=False)
        self.result = ledger
        shown = ledger[[c for c in _SHOWN if c in ledger.columns]].copy()
        for column in ("received", "dueDate", "appliedAt"):
            shown[column] = shown[column].dt.strftime("%Y-%m-%d").fillna("")
        self.table.value = table_html(shown, nowrap=True)
        keep = self.noc.value
        pending = ledger[~ledger["state"].isin(list(SETTLED_STATES))]
        self.noc.options = [
            (f"NOC {row.nocId} · {row.changeCode} {row.changeReason} · " + (
                f"{row.bankAccountNumber or '?'} · {row.state}, due {row.dueDate:%Y-%m-%d}"
                if row.dueDate is not None and row.dueDate == row.dueDate else f"{row.state}"),
             row.nocId) for row in pending.itertuples()]
        if keep in [value for _label, value in self.noc.options]:
            self.noc.value = keep
        counts = ledger["state"].value_counts()
        self._announce(", ".join(f"{counts.get(s, 0)} {s}" for s in (
            "overdue", "due soon", "open", "applied", "applied late"))
                       + f" (of {len(ledger)} NOCs).", "info")

    def select(self, noc_id: Any) -> None:
        """Pick NOC ``noc_id`` (what choosing it in the dropdown does)."""
        matches = [value for _label, value in self.noc.options if str(value) == str(noc_id)]
        if not matches:
            raise ValueError(f"NOC {noc_id} is not among the NOCs still to apply")
        self.noc.value = matches[0]

    def _row(self) -> Any:
        if self.result is None or self.noc.value is None:
            return None
        rows = self.result[self.result["nocId"].astype(str) == str(self.noc.value)]
        return None if rows.empty else rows.iloc[0]

    def _refresh(self) -> None:
        row = self._row()
        self.apply_button.disabled = self.busy or row is None
        self.correct_button.disabled = self.busy or row is None or row["correction"] is None
        self.refresh_button.disabled = self.busy
        self._report(
            (row is None, "No NOC chosen (none left to apply?).", "info"),
            (row is not None, f"NOC {row['nocId'] if row is not None else ''}: change "
             f"{row['mustChange'] if row is not None else ''}.", "info"))

    def _apply(self) -> None:
        row = self._row()
        if row is None:
            return
        mark = self.client.nocs.apply(row["nocId"], by=self.by.value.strip() or None,
                                      note=self.note.value.strip() or None)
        self.note.value = ""
        self.refresh()
        again = " (it was marked before)" if mark["already"] else ""
        self.output.value = (f"<p>NOC {escape(mark['noc_id'])} marked applied by "
                             f"{escape(mark['by'])} at {mark['when']:%Y-%m-%d %H:%M} UTC"
                             f"{escape(again)}.</p>")
        self._announce(f"NOC {mark['noc_id']} marked applied by {mark['by']}{again}.", "ok")

    def _correct(self) -> None:
        row = self._row()
        if row is None or row["correction"] is None:
            return
        self.correction_form = form = AchForm(self.client)
        form.prefill(row["correction"])
        self._correction_box.children = (form.widget,)
        self._announce(f"An ACH form below holds NOC {row['nocId']}'s corrected account; "
                       "fill in the rest and submit.", "ok")
