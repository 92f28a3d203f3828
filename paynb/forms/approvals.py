"""The approvals queue: what waits for a second person, approved or rejected from a form."""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets
import pandas as pd

from paynb.errors import ApprovalError
from paynb.forms._base import Form, escape, record_html, table_box, table_html
from paynb.journal import HONESTY

__all__ = ["ApprovalsForm"]

_QUEUE_COLUMNS = ["id", "age", "kind", "operation", "items", "total", "accounts",
                  "references", "prepared_by", "why"]


class ApprovalsForm(Form):
    """The payments waiting for a second person (:meth:`paynb.Client.approvals`), with
    *Approve* and *Reject* buttons.

    Pick one in the list: its details show (who prepared it, what, the total, the
    masked accounts, why it needs a second person). *Approve* sends it exactly as
    prepared, after a confirmation tick naming what moves; it is refused for the person
    who prepared it. *Reject* needs a reason. *Refresh* reads the queue again (others
    decide too). ``form.result`` holds the last outcome: the service's answer of an
    approved payment, or the rejected :class:`~paynb.journal.Approval`.

    CSS classes: ``paynb-form-approvals``, ``paynb-approvals-queue``,
    ``paynb-approvals-choice``, ``paynb-approve``, ``paynb-reject``,
    ``paynb-approvals-reason``, ``paynb-refresh``, ``paynb-approvals-honesty``.
    """

    title = "Payments awaiting approval"
    css_name = "approvals"

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.queue = table_box()
        """The waiting approvals, as a table."""
        self.queue.add_class("paynb-approvals-queue")
        self.choice = widgets.Dropdown(options=[], description="Approval",
                                       layout=widgets.Layout(width="480px"))
        """Which approval the buttons act on."""
        self.choice.add_class("paynb-approvals-choice")
        self.details = widgets.HTML("")
        self.details.add_class("paynb-approvals-details")
        self.confirm = self._confirmation(self._changed)
        self.approve_button = self._button("Approve and send", "paynb-approve",
                                           style="danger", icon="check")
        self.reason = widgets.Text(placeholder="Why it is rejected (required to reject)",
                                   layout=widgets.Layout(width="360px"))
        self.reason.add_class("paynb-approvals-reason")
        self.reject_button = self._button("Reject", "paynb-reject", style="warning",
                                          icon="times")
        self.refresh_button = self._button("Refresh", "paynb-refresh", icon="refresh")
        honesty = widgets.HTML(f"<p><small>{escape(HONESTY)}</small></p>")
        honesty.add_class("paynb-approvals-honesty")
        self.approvals: list[Any] = []
        """The waiting approvals, as last read."""
        self.approve_button.on_click(self._guarded(self._approve, "Approving and sending…"))
        self.reject_button.on_click(self._guarded(self._reject, "Rejecting…"))
        self.refresh_button.on_click(self._guarded(self._load, "Reading the queue…"))
        self.choice.observe(self._chosen, names="value")
        self.reason.observe(self._changed, names="value")
        self._assemble(widgets.HBox([self.refresh_button]), self.queue, self.choice,
                       self.details, self.confirm, self.approve_button,
                       widgets.HBox([self.reason, self.reject_button]), honesty)
        self._load()
        self._refresh()

    # -- reading ------------------------------------------------------------------------

    @property
    def selected(self) -> Any:
        """The approval picked in the list (``None`` when the queue is empty)."""
        return next((a for a in self.approvals if a.id == self.choice.value), None)

    def _load(self) -> None:
        queue = self.client.approvals()
        self.approvals = list(queue)
        if self.approvals:
            frame = queue.to_frame()
            shown = frame[_QUEUE_COLUMNS].copy()
            shown["age"] = [str(pd.Timedelta(age).floor("min")) for age in frame["age"]]
            self.queue.value = table_html(shown, nowrap=True)
        else:
            self.queue.value = "<p>Nothing is waiting for approval.</p>"
        kept = self.choice.value
        self.choice.options = [(f"{a.id}: {a.kind} {a.operation}, "
                                f"{'' if a.total is None else f'{a.total:,} '}"
                                f"prepared by {a.prepared_by}", a.id)
                               for a in self.approvals]
        ids = [a.id for a in self.approvals]
        self.choice.value = kept if kept in ids else (ids[0] if ids else None)
        self._chosen()

    def _chosen(self, *_args: Any) -> None:
        found = self.selected
        # The form says once, below, what dual control protects and what not.
        self.details.value = found.to_html(note=False) if found is not None else ""
        self.confirm.value = False
        self._changed()

    def _mine(self) -> bool:
        found = self.selected
        user = self.client.context.user
        return found is not None and found.prepared_by.strip().casefold() == \
            user.strip().casefold()

    # -- checking ---------------------------------------------------------------------

    def _refresh(self) -> None:
        found = self.selected
        mine = self._mine()
        if found is not None:
            total = "" if found.total is None else f" of {found.total:,}"
            self.confirm.description = self._confirm_text(
                f"approve and send approval {found.id}, {found.kind} {found.operation}"
                f"{total} ({found.items} item{'s' if found.items != 1 else ''}) prepared by "
                f"{found.prepared_by}")
        self._show(self.confirm, found is not None and not mine)
        self.confirm.disabled = self.busy
        self.approve_button.disabled = (self.busy or found is None or mine
                                        or not self.confirm.value)
        self.reject_button.disabled = self.busy or found is None or not self.reason.value.strip()
        self.refresh_button.disabled = self.busy
        self._report(
            (found is None, "Nothing is waiting for approval.", "info"),
            (mine, f"You ({self.client.context.user}) prepared approval {found.id if found else ''}"
                   ": another analyst must approve it. You may reject it (with a reason).",
             "warn"),
            (not self.confirm.value,
             "Check the details, then tick the confirmation to approve and send, or give "
             "a reason to reject.", "info"),
            (True, "Ready to approve and send.", "ok"))

    # -- actions ----------------------------------------------------------------------

    def _approve(self) -> None:
        found = self.selected
        if found is None or self._mine() or not self.confirm.value:
            return  # the button was disabled: a programmatic click gets no further
        self.confirm.value = False
        try:
            answer = self.client.approve(found.id)
        except ApprovalError as exc:
            self._load()
            self._announce(str(exc), "error")
            return
        self.result = answer
        frame = answer.to_frame().T if isinstance(answer, pd.Series) else answer
        self.output.value = (record_html(answer) if isinstance(answer, pd.Series)
                             else table_html(frame))
        self._load()
        self._announce(f"Approved approval {found.id} and sent it: {len(frame)} "
                       f"item{'s' if len(frame) != 1 else ''} answered.", "ok")

    def _reject(self) -> None:
        found = self.selected
        reason = self.reason.value.strip()
        if found is None or not reason:
            return
        try:
            self.result = self.client.reject(found.id, reason=reason)
        except ApprovalError as exc:
            self._load()
            self._announce(str(exc), "error")
            return
        self.reason.value = ""
        self._load()
        self._announce(f"Rejected approval {found.id}: nothing was sent.", "ok")
