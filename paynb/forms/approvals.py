"""The approvals queue: what waits for a second person, each with its own Approve and
Reject buttons."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import pandas as pd

from paynb.errors import ApprovalError, DuplicateSubmissionError, SubmissionRefusedError
from paynb.forms._base import Form, button, escape, record_html, table_html, tick
from paynb.journal import HONESTY

__all__ = ["ApprovalRow", "ApprovalsForm"]


class ApprovalRow:
    """One waiting approval of an :class:`ApprovalsForm`: its details and its own buttons.

    CSS classes: ``paynb-approvals-row`` (the row), ``paynb-approvals-details``,
    ``paynb-confirm``, ``paynb-approvals-tot`` (only for a card payment prepared with a
    one-time password), ``paynb-approve``, ``paynb-approvals-reason``, ``paynb-reject``,
    and, once a refusal calls for them, ``paynb-approvals-new-authorization`` and
    ``paynb-approvals-allow-duplicate``; the row also carries ``paynb-approval-<id>``.
    """

    def __init__(self, approval: Any, *, confirm_text: str) -> None:
        self.approval = approval
        """The :class:`~paynb.journal.Approval` it shows."""
        self.details = widgets.HTML(approval.to_html(note=False))
        """Who prepared it, what, the total, masked accounts, why (HTML)."""
        self.details.add_class("paynb-approvals-details")
        self.confirm = tick(confirm_text, "paynb-confirm")
        """The tick its *Approve and send* waits for, naming what moves."""
        shown = None if self.needs_tot_password else "none"
        self.tot_password = widgets.Password(
            description="One-time password", placeholder="the card's current one (4 to 10 digits)",
            style={"description_width": "initial"},
            layout=widgets.Layout(width="360px", display=shown)).add_class("paynb-approvals-tot")
        """The card's current one-time password, for a payment prepared with one (paynb
        keeps none while it waits); emptied once used."""
        self.approve_button = button("Approve and send", "paynb-approve", style="danger",
                                     icon="check")
        self.reason = widgets.Text(placeholder="Why it is rejected (required to reject)",
                                   layout=widgets.Layout(width="320px"))
        self.reason.add_class("paynb-approvals-reason")
        self.reject_button = button("Reject", "paynb-reject", style="warning", icon="times")
        self.new_authorization = tick(
            "The receiver authorized again: send it as a new entry (new_authorization, "
            "recorded as my override)", "paynb-approvals-new-authorization", visible=False)
        """Shown once NACHA's guards refused the approval for what a new authorization
        answers (:attr:`paynb.nacha.Verdict.overridable`): approve with
        ``new_authorization=True``."""
        self.allow_duplicate = tick(
            "Send it although its reference was sent meanwhile (allow_duplicate)",
            "paynb-approvals-allow-duplicate", visible=False)
        """Shown once the duplicate guard refused the approval: approve with
        ``allow_duplicate=True``."""
        self.widget = widgets.VBox(
            [self.details, self.new_authorization, self.allow_duplicate, self.confirm,
             widgets.HBox([self.tot_password, self.approve_button]),
             widgets.HBox([self.reason, self.reject_button])],
            layout=widgets.Layout(border="1px solid #ccc", padding="0.3em", margin="0.2em 0"),
        ).add_class("paynb-approvals-row").add_class(f"paynb-approval-{approval.id}")
        """The row's box."""

    @property
    def inputs(self) -> tuple[widgets.Widget, ...]:
        """The widgets whose value the form validates again on every change."""
        return (self.confirm, self.tot_password, self.reason, self.new_authorization,
                self.allow_duplicate)

    @property
    def needs_tot_password(self) -> bool:
        """Whether its approver gives a one-time password (``tot_password``)."""
        return "tot_password" in self.approval.approver_supplies

    def ready(self) -> bool:
        """Ticked, and with the one-time password it needs."""
        return self.confirm.value and (not self.needs_tot_password
                                       or bool(self.tot_password.value.strip()))


class ApprovalsForm(Form):
    """The payments waiting for a second person (:meth:`paynb.Client.approvals`), each
    in a row of its own (:class:`ApprovalRow`) with *Approve and send* and *Reject*.

    Each row shows its details (who prepared it, what, the total, the masked accounts, why it
    needs a second person). Its *Approve and send* sends it exactly as prepared, after the
    row's confirmation tick naming what moves (and, for a card payment prepared with a one-time
    password, the card's current one, which paynb does not keep); it is disabled for the person
    who prepared it. Its *Reject* needs a reason. *Refresh* reads the queue again (others
    decide too). ``form.result`` holds the last outcome: the service's answer of an approved
    payment, or the rejected :class:`~paynb.journal.Approval`. What a direct submission would
    be refused for (NACHA's guards, the duplicate guard) is judged again and said in the status
    line; the approval keeps waiting, and the row offers the override a direct submission has,
    where there is one (``new_authorization``, ``allow_duplicate``).

    CSS classes: ``paynb-form-approvals``, ``paynb-approvals-queue`` (the rows),
    ``paynb-refresh``, ``paynb-approvals-honesty``, and the rows' (:class:`ApprovalRow`).
    """

    title = "Payments awaiting approval"
    css_name = "approvals"

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.queue = widgets.VBox().add_class("paynb-approvals-queue")
        """The waiting approvals, a row each (or a line saying nothing waits)."""
        self.refresh_button = button("Refresh", "paynb-refresh", icon="refresh")
        honesty = widgets.HTML(f"<p><small>{escape(HONESTY)}</small></p>")
        honesty.add_class("paynb-approvals-honesty")
        self.rows: list[ApprovalRow] = []
        """The rows of the waiting approvals, oldest first, as last read."""
        self.refresh_button.on_click(self._guarded(self._load, "Reading the queue…"))
        self._assemble(widgets.HBox([self.refresh_button]), self.queue, honesty)
        self._load()
        self._refresh()

    @property
    def approvals(self) -> list[Any]:
        """The waiting approvals, as last read."""
        return [row.approval for row in self.rows]

    def row(self, approval_id: int) -> ApprovalRow:
        """The row of approval ``approval_id`` (``KeyError`` when it is not waiting)."""
        for row in self.rows:
            if row.approval.id == approval_id:
                return row
        raise KeyError(f"approval {approval_id} is not in the queue")

    def _load(self) -> None:
        """Read the queue again; rows still waiting keep what was typed in them."""
        kept = {row.approval.id: row for row in self.rows}
        self.rows = [kept.get(approval.id) or self._row_of(approval)
                     for approval in self.client.approvals()]
        self.queue.children = (tuple(row.widget for row in self.rows)
                               or (widgets.HTML("<p>Nothing is waiting for approval.</p>"),))

    def _row_of(self, approval: Any) -> ApprovalRow:
        """A new row for ``approval``, wired to this form's validation and actions."""
        total = "" if approval.total is None else f" of {approval.total:,}"
        row = ApprovalRow(approval, confirm_text=self._confirm_text(
            f"approve and send approval {approval.id}, {approval.kind} {approval.operation}"
            f"{total} ({approval.items} item{'s' if approval.items != 1 else ''}) prepared "
            f"by {approval.prepared_by}"))
        for widget in row.inputs:
            widget.observe(self._changed, names="value")
        row.approve_button.on_click(self._guarded(
            lambda: self._approve(row), f"Approving and sending approval {approval.id}…"))
        row.reject_button.on_click(self._guarded(
            lambda: self._reject(row), f"Rejecting approval {approval.id}…"))
        return row

    def _mine(self, row: ApprovalRow) -> bool:
        return row.approval.prepared_by.strip().casefold() == \
            self.client.context.user.strip().casefold()

    def _refresh(self) -> None:
        ticked = [row for row in self.rows if row.confirm.value and not self._mine(row)]
        for row in self.rows:
            mine = self._mine(row)
            self._show(row.confirm, not mine)
            row.confirm.disabled = self.busy
            row.approve_button.disabled = self.busy or mine or not row.ready()
            row.reject_button.disabled = self.busy or not row.reason.value.strip()
        self.refresh_button.disabled = self.busy
        needs = next((row for row in ticked if not row.ready()), None)
        ready = next((row for row in ticked if row.ready()), None)
        user = self.client.context.user
        self._report(
            (not self.rows, "Nothing is waiting for approval.", "info"),
            (needs is not None,
             f"Approval {needs.approval.id if needs else ''} is a card payment prepared with a "
             "one-time password, which paynb does not keep: type the card's current one.",
             "warn"),
            (ready is not None,
             f"Ready to approve and send approval {ready.approval.id if ready else ''}.", "ok"),
            (all(self._mine(row) for row in self.rows),
             f"You ({user}) prepared {'it' if len(self.rows) == 1 else 'them'}: another "
             "analyst must approve. You may reject (with a reason).", "warn"),
            (True, "Check the details, then tick an approval's confirmation to approve and "
                   "send it, or give a reason to reject it.", "info"))

    def _approve(self, row: ApprovalRow) -> None:
        found = row.approval
        if self._mine(row) or not row.ready():
            return  # the button was disabled: a programmatic click gets no further
        # A one-time value: used once, and not kept in the form either way.
        secret = row.tot_password.value.strip() if row.needs_tot_password else None
        row.tot_password.value = ""
        row.confirm.value = False
        try:
            answer = self.client.approve(found.id, tot_password=secret,
                                         new_authorization=row.new_authorization.value,
                                         allow_duplicate=row.allow_duplicate.value)
        except ApprovalError as exc:
            self._load()
            self._announce(str(exc), "error")
            return
        except SubmissionRefusedError as exc:
            overridable = all(verdict.overridable for verdict in exc.verdicts)
            self._show(row.new_authorization, overridable)
            hint = (" It still waits: tick 'The receiver authorized again' if you hold a new "
                    "authorization, or reject it." if overridable else
                    " It still waits: mend the cause, or reject it.")
            self._announce(f"{exc}{hint}", "error")
            return
        except DuplicateSubmissionError as exc:
            self._show(row.allow_duplicate, True)
            self._announce(f"{exc} It still waits: tick 'Send it although its reference was "
                           "sent meanwhile' to send it anyway, or reject it.", "error")
            return
        self.result = answer
        frame = answer.to_frame().T if isinstance(answer, pd.Series) else answer
        self.output.value = (record_html(answer) if isinstance(answer, pd.Series)
                             else table_html(frame))
        self._load()
        self._announce(f"Approved approval {found.id} and sent it: {len(frame)} "
                       f"item{'s' if len(frame) != 1 else ''} answered.", "ok")

    def _reject(self, row: ApprovalRow) -> None:
        found = row.approval
        reason = row.reason.value.strip()
        if not reason:
            return
        try:
            self.result = self.client.reject(found.id, reason=reason)
            said = f"Rejected approval {found.id}: nothing was sent.", "ok"
        except ApprovalError as exc:
            said = str(exc), "error"
        self._load()
        self._announce(*said)
