"""Bulk submission of ACH or RCC items from a DataFrame or an uploaded CSV/XLSX file."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pandas as pd

from paynb._checks import check_rows
from paynb._excel import read_excel
from paynb._kinds import KINDS
from paynb.errors import BulkRejectedError, DuplicateSubmissionError, TransportError
from paynb.forms._base import (
    Form,
    button,
    describe_error,
    escape,
    money,
    previous_html,
    table_box,
    table_html,
)
from paynb.forms._guard import guard_text, guard_verdicts, new_authorization_box
from paynb.journal import Approval
from paynb.models import AchItem, RccItem, RequestModel
from paynb.resources import frame_rows
from paynb.validation import to_decimal

__all__ = ["BulkSubmitForm"]

_MODELS: dict[str, type[RequestModel]] = {"ach": AchItem, "rcc": RccItem}
#: Rows the preview lists at most (a larger set shows its invalid rows and the first valid).
_PREVIEW_ROWS = 1000
_COMMIT_VALID = "Commit the valid rows, report the invalid ones"
_ALL_OR_NOTHING = "All or nothing"
_CHOICE_HELP = (
    "<b>Commit the valid rows</b> (<code>alwaysCommitValid = true</code>): every valid row "
    "is stored and will be paid; each invalid row comes back marked invalid (status I) "
    "and is not paid.<br><b>All or nothing</b> (<code>alwaysCommitValid = false</code>): "
    "if even one row is invalid the service stores none of them; fix every row first.")


def normalise_rows(frame: pd.DataFrame, model: type[RequestModel]
                   ) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows as wire-named dicts (blank cells left out), and the columns no field matches.

    A column matches a field by its wire name or python name, ignoring case, spaces and
    underscores, so ``bank_routing_number`` and ``BankRoutingNumber`` both work; the rows
    are read by :func:`paynb.resources._base.frame_rows`, with blank text absent.
    """
    names = {key: wire for python, wire in model.wire_names().items()
             for key in (python.replace("_", "").lower(), wire.lower())}
    columns = {col: names.get(str(col).replace("_", "").replace(" ", "").lower())
               for col in frame.columns}
    ignored = [str(col) for col, wire in columns.items() if wire is None]
    return frame_rows(frame, columns, blank_text=True), ignored


def read_upload(name: str, content: bytes) -> pd.DataFrame:
    """A CSV or XLSX file as a DataFrame of text cells (routing and account numbers keep
    their leading zeros; amounts stay exact text until the model reads them)."""
    lower = name.lower()
    if lower.endswith((".xlsx", ".xlsm")):
        return read_excel(content)
    if lower.endswith((".csv", ".txt")):
        return pd.read_csv(io.BytesIO(content), dtype=str, keep_default_na=False,
                           encoding="utf-8-sig")
    raise ValueError(f"{name}: only .csv and .xlsx files can be read")


class BulkSubmitForm(Form):
    """Submit many ACH or RCC items at once, with a preview and an explicit confirmation.

    ``items`` is a DataFrame (or a list of mappings) with one row per item and
    the service's field names as columns; or upload a CSV/XLSX file. Each row is
    checked with the shared rules before anything is sent. A set larger than one
    request (1,000 items) goes out in several, and the status line counts them as
    they are answered ("chunk 2 of 3"). ``form.result`` is the service's answer,
    one row per input row, in input order; *Save CSV* / *Save XLSX* write it to a new
    file in ``folder`` (default: the kernel's working folder) and show its path.
    """

    title = "Bulk submission"
    css_name = "bulk"

    def __init__(self, client: Any, items: pd.DataFrame | Sequence[Mapping[str, Any]] | None = None,
                 *, kind: str | None = None, folder: str | Path | None = None) -> None:
        super().__init__(client)
        self.kind = widgets.ToggleButtons(options=[("ACH", "ach"), ("RCC", "rcc")],
                                          value=kind or "ach", description="Kind")
        self.kind.add_class("paynb-field-kind")
        # The default width cuts the text to "Upload CSV/XL...".
        self.upload = widgets.FileUpload(accept=".csv,.xlsx", multiple=False,
                                         description="Upload CSV/XLSX",
                                         layout=widgets.Layout(width="auto", min_width="170px"))
        self.upload.add_class("paynb-upload")
        self.commit = widgets.RadioButtons(options=[_COMMIT_VALID, _ALL_OR_NOTHING],
                                           value=_COMMIT_VALID, layout=widgets.Layout(width="auto"))
        self.commit.add_class("paynb-field-alwaysCommitValid")
        self.preview = table_box().add_class("paynb-preview")
        self.confirm = self._confirmation(self._changed)
        self.submit_button = button("Submit", "paynb-submit", style="primary", icon="paper-plane")
        self.anyway_button = button("Submit anyway", "paynb-submit-anyway",
                                    style="warning", visible=False)
        self.submit_button.on_click(self._guarded(self._submit, self._busy_text))
        self.anyway_button.on_click(self._guarded(
            lambda: self._submit(allow_duplicate=True), self._busy_text))
        self.kind.observe(self._recheck, names="value")
        self.commit.observe(self._recheck, names="value")
        self.upload.observe(self._on_upload, names="value")
        self.new_authorization = new_authorization_box()
        self.new_authorization.observe(self._recheck, names="value")
        #: Per row: the NACHA guards' warnings and notes (refusals are in the row's errors).
        self._guard_notes: dict[int, str] = {}
        self._frame: pd.DataFrame | None = None
        self._rows: list[dict[str, Any]] = []
        self._errors: list[dict[str, list[str]]] = []
        self._amounts: list[Decimal | None] = []
        self._ignored: list[str] = []
        self._done = False
        self._duplicate = False
        self._result_kind = self.kind.value  # of form.result, whatever the toggle says since
        self._assemble(
            widgets.HBox([self.kind, self.upload]),
            widgets.HTML("<b>If some rows are invalid:</b>"), self.commit,
            widgets.HTML(f"<div style='color:#555;font-size:90%'>{_CHOICE_HELP}</div>"),
            self.preview, self.confirm, widgets.HBox([self.new_authorization,
                                                      self.submit_button, self.anyway_button]))
        self.widget.children = (*self.widget.children,
                                self._downloads(lambda: f"bulk-{self._result_kind}-result", folder))
        if items is not None:
            self.set_items(items, kind=kind)
        else:
            self._recheck()

    @property
    def commit_valid(self) -> bool:
        """The ``alwaysCommitValid`` choice."""
        return bool(self.commit.value == _COMMIT_VALID)

    def set_items(self, items: pd.DataFrame | Sequence[Mapping[str, Any]], *,
                  kind: str | None = None) -> None:
        """Load the rows to submit (a DataFrame or a list of mappings) and check them."""
        frame = items if isinstance(items, pd.DataFrame) else pd.DataFrame(list(items))
        self._frame = frame.reset_index(drop=True)
        rcc_only = {"address1", "address2", "city", "rccitemid"}
        guessed = "rcc" if rcc_only & {str(c).lower() for c in frame.columns} else "ach"
        self._done = False
        self.output.value = ""
        self._offer_save(False)
        if self.kind.value != (kind or guessed):
            self.kind.value = kind or guessed  # observer re-checks the rows
        else:
            self._recheck()

    def load_file(self, name: str, content: bytes) -> None:
        """Read an uploaded CSV or XLSX file (what the upload button does)."""
        try:
            frame = read_upload(name, content)
        except (ValueError, KeyError) as exc:
            self._announce(f"Could not read {name}: {exc}", "error")
            return
        self.set_items(frame)

    def _on_upload(self, change: Mapping[str, Any]) -> None:
        for upload in change["new"] or ():
            self.load_file(upload["name"], bytes(upload["content"]))

    def _recheck(self, *_args: Any) -> None:
        """Check every row against the chosen kind's model; withdraw the confirmation."""
        model = _MODELS[self.kind.value]
        self._rows, self._ignored = ([], []) if self._frame is None else normalise_rows(
            self._frame, model)
        # Column by column, the models only for the rows the columns cannot vouch for:
        # the same verdicts and messages as one model per row, in a fraction of the time.
        # The guards judge ACH wire bodies: built here too, for the rows the columns vouch for.
        checked = check_rows(model, self._rows, bodies=self.kind.value == "ach")
        self._errors = [checked.errors.get(n, {}) for n in range(len(self._rows))]
        # A valid row's amount is what the model reads (rules.to_decimal), exactly.
        self._amounts = [None if n in checked.errors else to_decimal(row.get("amount"))
                         for n, row in enumerate(self._rows)]
        seen: dict[str, int] = {}
        for number, row in enumerate(self._rows, start=1):
            ref = row.get("yourReferenceNumber")
            if ref is not None and seen.setdefault(str(ref), number) != number:
                errors = self._errors[number - 1] = dict(self._errors[number - 1])
                errors.setdefault("yourReferenceNumber", []).append(
                    f"repeats row {seen[str(ref)]}: each payment needs its own reference")
                self._amounts[number - 1] = None
        self._guard_rows(checked.bodies)
        self._done = False
        self._duplicate = False
        self.confirm.value = False
        self._render_preview()
        self._changed()

    def _guard_rows(self, checked: Mapping[int, dict[str, Any]]) -> None:
        """Ask the NACHA guards about the valid ACH rows (``checked``: their wire bodies):
        a refused row becomes invalid (its reasons in the preview), the others keep their
        warnings and notes."""
        self._guard_notes = {}
        if self.kind.value != "ach":
            return
        bodies = {n: checked[n] for n in range(len(self._rows)) if self._amounts[n] is not None}
        if not bodies:
            return
        verdicts, problem = guard_verdicts(self.client, bodies,
                                           new_authorization=self.new_authorization.value)
        for n in bodies:
            verdict: Any = None if problem else verdicts[n]  # judge() gives every body one
            if problem or not verdict.allowed:
                self._errors[n]["guard"] = [problem] if problem else verdict.reasons
                self._amounts[n] = None
            elif guard_text(verdict):
                self._guard_notes[n] = guard_text(verdict)

    def _render_preview(self, service_rows: Mapping[int, Mapping[str, list[str]]] | None = None
                        ) -> None:
        if not self._rows:
            self.preview.value = ""
            return
        lines = []
        shown = self._shown_rows(service_rows or {})
        for index in shown:
            row = self._rows[index]
            errors = {**self._errors[index], **((service_rows or {}).get(index) or {})}
            problem = "; ".join(f"{key}: {', '.join(msgs)}" for key, msgs in errors.items())
            css = "paynb-row-invalid" if problem else "paynb-row-valid"
            color = "#b00020" if problem else "#a15c00" if index in self._guard_notes else "#1b7f3b"
            name = " ".join(str(row.get(k, "")) for k in ("firstSignerFirstName",
                                                          "firstSignerLastName")).strip()
            lines.append(
                f"<tr class='{css}'><td>{index + 1}</td>"
                f"<td>{escape(row.get('yourReferenceNumber'))}</td><td>{escape(name)}</td>"
                f"<td style='text-align:right'>"
                f"{escape(row.get('amount'))}</td><td style='color:{color}'>"
                f"{escape(problem or self._guard_notes.get(index) or 'valid')}</td></tr>")
        if len(shown) < len(self._rows):
            lines.append(f"<tr class='paynb-rows-not-shown'><td colspan='5'>{len(self._rows):,} "
                         f"rows: the {len(shown):,} shown are every invalid one (up to "
                         f"{_PREVIEW_ROWS:,}) and the first valid ones; the others are valid"
                         "</td></tr>")
        note = (f"<p style='color:#a15c00'>Columns ignored (not fields of a "
                f"{self.kind.value.upper()} item): {escape(', '.join(self._ignored))}</p>"
                if self._ignored else "")
        self.preview.value = (
            "<table class='paynb-table paynb-preview-table'><tr><th>row</th><th>reference</th>"
            "<th>name</th><th>amount</th><th>check</th></tr>" + "".join(lines) + "</table>" + note)

    def _shown_rows(self, service_rows: Mapping[int, Any]) -> list[int]:
        """The rows the preview lists: all of a small set; of a large one (a payroll file),
        the invalid rows and then the first valid ones, so the browser gets a table it can
        draw and nothing wrong is hidden."""
        if len(self._rows) <= _PREVIEW_ROWS:
            return list(range(len(self._rows)))
        bad = sorted({n for n, errors in enumerate(self._errors) if errors} | set(service_rows))
        bad = bad[:_PREVIEW_ROWS]
        room = _PREVIEW_ROWS - len(bad)
        taken = set(bad)
        good = [n for n in range(min(len(self._rows), room + len(bad))) if n not in taken]
        return sorted(bad + good[:room])

    def _counts(self) -> tuple[int, int, Decimal, bool]:
        valid = [a for a in self._amounts if a is not None]
        repeats = any("yourReferenceNumber" in e and any("repeats row" in m for m in
                                                          e["yourReferenceNumber"])
                      for e in self._errors)
        return len(valid), len(self._rows) - len(valid), sum(valid, Decimal(0)), repeats

    def _blocked(self) -> str | None:
        """Why the set cannot be submitted as it stands (``None``: it can)."""
        valid, invalid, _total, repeats = self._counts()
        if not self._rows:
            return "Pass items=DataFrame or upload a CSV/XLSX file with one row per item."
        if repeats:
            return "Some reference numbers repeat within the set: fix them (marked below)."
        if invalid and not self.commit_valid:
            return (f"All or nothing: {invalid} invalid row(s) would make the service reject "
                    "the whole set. Fix them, or choose to commit the valid rows.")
        if not valid:
            return "No valid row to submit."
        return None

    def _refresh(self) -> None:
        valid, invalid, total, _repeats = self._counts()
        kind = self.kind.value.upper()
        what = f"{valid} {kind} item{'s' if valid != 1 else ''} totalling {money(total)}"
        if invalid and self.commit_valid:
            what += f" ({invalid} invalid row{'s' if invalid != 1 else ''} reported, not paid)"
        blocked = self._blocked()
        self.confirm.description = self._confirm_text(f"submit {what}")
        self.confirm.disabled = bool(blocked) or self._done or self.busy
        self._show(self.confirm, not blocked)
        ready = not blocked and self.confirm.value and not self._done
        self.submit_button.disabled = self.busy or not ready or self._duplicate
        self.anyway_button.disabled = self.busy or not (ready and self._duplicate)
        self._show(self.anyway_button, self._duplicate)
        self._report(
            (bool(blocked), blocked or "", "warn"),
            (not self.confirm.value,
             f"Check the preview, then tick the confirmation to submit {what}.", "info"),
            (True, f"Ready to submit {what}.", "ok"))

    def _busy_text(self) -> str:
        return f"Submitting {len(self._rows)} rows…"

    def _chunk_answered(self, answered: int, requests: int) -> None:
        """Progress of a set the client sends in several requests (its chunks)."""
        if requests < 2:
            return  # one request: the busy text says it all
        if answered < requests:
            self._say(f"Submitting {len(self._rows)} rows: chunk {answered + 1} of {requests} "
                      f"on its way ({answered} answered)…", "info")
        else:
            self._say(f"Submitting {len(self._rows)} rows: all {requests} chunks answered, "
                      "reading the results…", "info")

    def _submit(self, *, allow_duplicate: bool = False) -> None:
        if (self._done or self._blocked() or not self.confirm.value
                or allow_duplicate != self._duplicate):
            return  # the button was disabled: a programmatic click gets no further
        resource = getattr(self.client, self.kind.value)
        try:
            result = resource.submit_many(list(self._rows), commit_valid=self.commit_valid,
                                          allow_duplicate=allow_duplicate,
                                          on_chunk=self._chunk_answered,
                                          new_authorization=self.new_authorization.value)
        except BulkRejectedError as exc:
            self._render_preview(exc.rows)
            who = ("paynb's checks refused the whole set before sending" if exc.status is None
                   else "The service rejected the whole set")
            self._announce(f"{who} (all or nothing): nothing was stored. The reasons are "
                           "marked in the preview.", "error")
            return
        except DuplicateSubmissionError as exc:
            self._duplicate = True
            self.output.value = (
                f"<p><b>Reference {escape(exc.reference_number)} was submitted before:</b></p>"
                + previous_html(exc.previous) + "<p>Nothing was sent. Change the repeated "
                "references, or click <b>Submit anyway</b> to send them a second time.</p>")
            self._announce(str(exc), "warn")
            return
        except TransportError as exc:
            self._done = True  # the set may be stored: never send it again blindly
            self._announce(describe_error(exc), "error")
            return
        self._done = True
        self._duplicate = False
        self.confirm.value = False
        if isinstance(result, Approval):  # held for a second person: nothing sent yet
            self._held(result)
            return
        result = result.reset_index(drop=True)
        if len(result) == len(self._rows):
            result.insert(0, "row", range(1, len(result) + 1))
        self.result = result
        self._result_kind = self.kind.value
        id_column = KINDS[self.kind.value].id_field
        shown = [c for c in ("row", "yourReferenceNumber", id_column, "itemStatus",
                             "itemStatusName", "amount", "errors", "guard")
                 if c in result.columns]
        self.output.value = table_html(result[shown])
        self._offer_save(bool(len(result)))
        statuses = result.get("itemStatus", pd.Series(dtype="string")).astype("string")
        # I (invalid, here or at the service) and B (blocked) items are stored at most,
        # never processed: only the others are accepted (SubmissionNotAcceptedWarning).
        invalid, blocked = (int((statuses.str.upper() == code).sum()) for code in "IB")
        accepted = len(result) - invalid - blocked
        refused = " and ".join(f"{n} {word} (status {code})" for n, word, code in
                               ((invalid, "invalid", "I"), (blocked, "blocked", "B")) if n)
        self._announce(f"Done: {accepted} of {len(result)} items accepted"
                       + (f", {refused}: not paid." if refused else "."),
                       "ok" if not refused else "warn")
