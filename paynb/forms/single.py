"""Forms that send one payment: the shared :class:`PaymentForm` (which the instant forms
extend with a route check), :class:`AchForm` and :class:`RccForm`."""

from __future__ import annotations

import warnings
from typing import Any

import ipywidgets as widgets

from paynb._kinds import KINDS
from paynb.errors import (
    ApiError,
    DuplicateSubmissionError,
    ResponseFormatError,
    RouteNotCheckedError,
    RouteUnavailableError,
    SubmissionNotAcceptedWarning,
    SubmissionRefusedError,
    TransportError,
    ValidationError,
)
from paynb.forms._base import (
    Form,
    button,
    describe_error,
    last_four,
    money,
    previous_html,
    record_html,
)
from paynb.forms._guard import guard_text, guard_verdicts, new_authorization_box
from paynb.forms.builder import FieldSet
from paynb.journal import Approval
from paynb.models import AchItem, RccItem, RequestModel

__all__ = ["AchForm", "PaymentForm", "RccForm"]

#: Errors raised before anything is sent (the payment certainly did not leave): the
#: secret inputs are kept, so that only the mistake needs retyping.
_BEFORE_SENDING = (ValidationError, RouteNotCheckedError, RouteUnavailableError,
                   SubmissionRefusedError)


class PaymentForm(Form):
    """One payment, checked as it is typed, sent once.

    Nothing is sent before the confirmation is ticked: its text states the
    amount, the direction, the account (last four digits), the company and the
    environment. Any edit withdraws the tick, and so does each send.

    A duplicate reference number (the client's journal refuses it) shows the earlier submission
    and offers an explicit *submit anyway*; a 400 puts the service's messages beside the
    fields; a lost answer locks the form, since the payment may exist. Secret inputs are
    emptied once the payment has left, whatever the outcome (stored, refused, answer lost); a
    check that fails before sending keeps them, so that only the mistake needs retyping.
    """

    model: type[RequestModel]
    kind = ""  # the client resource: "ach", "rcc", "instant" or "rtp"
    verb = "Submit"
    busy_text = "Submitting…"

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.resource = getattr(client, self.kind)
        self.fields = FieldSet(self.model)
        self.submit_button = button(self.verb, "paynb-submit", style="primary", icon="paper-plane")
        self.anyway_button = button(f"{self.verb} anyway", "paynb-submit-anyway",
                                    style="warning", visible=False)
        self.another_button = button(f"{self.verb} another", "paynb-reset", visible=False)
        self.submit_button.on_click(self._guarded(self._submit, self.busy_text))
        self.anyway_button.on_click(self._guarded(self._submit_anyway, self.busy_text))
        self.another_button.on_click(lambda _b: self.reset())
        # Ticking re-validates only: the duplicate question and the last notice stay.
        self.confirm = self._confirmation(lambda _change: self._refresh())
        """The confirmation tick (CSS class ``paynb-confirm``): Submit waits for it."""
        self.fields.observe(self._changed)
        #: The checked item waiting for an explicit "submit anyway" after a duplicate warning.
        self._pending: RequestModel | None = None
        self._service_errors: dict[str, list[str]] = {}
        self._done = False
        self.buttons = widgets.VBox([self.confirm, widgets.HBox(
            [self.submit_button, self.anyway_button, self.another_button])])

    # -- hooks for subclasses ---------------------------------------------------------

    def _validate(self) -> tuple[RequestModel | None, dict[str, list[str]]]:
        """The item as the inputs stand, or ``None`` and the errors per field."""
        return self.fields.check()

    def _blocked(self) -> str | None:
        """Why the item may not be sent yet although it is valid (``None``: it may)."""
        return None

    def _deliver(self, payload: dict[str, Any], *, allow_duplicate: bool) -> Any:
        return self.resource.submit(payload, allow_duplicate=allow_duplicate)

    def _summary(self, item: Any) -> str:
        return f"{item.amount}, reference {item.your_reference_number}"

    def _movement(self, item: Any) -> str:
        """What sending ``item`` does, for the confirmation: amount, direction, account."""
        return f"{self.verb.lower()} {money(item.amount)}, reference {item.your_reference_number}"

    def _sent(self, record: Any) -> str:
        """Status text after a successful send."""
        return (f"Submitted: item {record.get(KINDS[self.kind].id_field)}, status "
                f"{record.get('itemStatus')} ({record.get('itemStatusName') or ''}), "
                f"reference {record.get('yourReferenceNumber')}.")

    def _changed(self, *_args: Any) -> None:
        # Any edit withdraws a pending duplicate question, the service's old complaints and
        # the confirmation (it was given for what the inputs said before).
        self._pending = None
        self._service_errors = {}
        self.confirm.value = False
        super()._changed()

    def _refresh(self) -> None:
        item, errors = self._validate()
        self.fields.show(errors)
        for wire, messages in self._service_errors.items():
            self.fields[wire].show_error(messages)
        blocked = self._blocked()
        ready = item is not None and not self._service_errors and not blocked
        if item is not None:
            self.confirm.description = self._confirm_text(self._movement(item))
        self._show(self.confirm, ready and not self._done)
        self.confirm.disabled = self.busy or self._done or not ready
        ticked = ready and self.confirm.value
        self.submit_button.disabled = (self.busy or self._done or not ticked or bool(self._pending))
        self.anyway_button.disabled = self.busy or self._pending is None or not ticked
        self._show(self.anyway_button, self._pending is not None)
        self._show(self.another_button, self._done)
        summary = self._summary(item) if item is not None else ""
        advice = self._advice(item)
        self._report(
            (bool(blocked), blocked or "", "warn"),
            (item is None, self.fields.problems(errors), "warn"),
            (not self.confirm.value, f"Ready to {self.verb.lower()} {summary}: tick the "
             f"confirmation to send it.{advice}", "warn" if advice else "info"),
            (True, f"Ready to {self.verb.lower()} {summary}.{advice}",
             "warn" if advice else "ok"))

    def _advice(self, item: RequestModel | None) -> str:
        """The item's advisories (sent anyway, docs/validation.md) as one sentence."""
        if item is None:
            return ""
        said = [f"{self.fields.title(advisory.field)}: {advisory.message}"
                for advisory in item.advisories()]
        return f" Note (sent anyway): {'; '.join(said)}." if said else ""

    def _submit(self) -> None:
        item, errors = self._validate()
        if (item is None or self._done or self._pending or self._blocked()
                or not self.confirm.value):
            # The button was disabled: a programmatic click gets no further.
            self.fields.show(errors, everywhere=True)
            return
        self._send(item, allow_duplicate=False)

    def _submit_anyway(self) -> None:
        if self._pending is None or self._done or self._blocked() or not self.confirm.value:
            return
        self._send(self._pending, allow_duplicate=True)

    def _send(self, item: RequestModel, *, allow_duplicate: bool) -> None:
        try:
            # The advisories are in the status line already; a submission answered I or
            # B becomes the red line below, not a warning printed under the cell.
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                record = self._deliver(item.to_wire(), allow_duplicate=allow_duplicate)
        except DuplicateSubmissionError as exc:
            self._pending = item
            self.output.value = (
                "<p><b>This reference number was used before:</b></p>"
                + previous_html(exc.previous)
                + f"<p>Nothing was sent. Click <b>{self.verb} anyway</b> to send a second "
                "payment with the same reference, or change the reference.</p>")
            self._announce(f"Duplicate reference {exc.reference_number}: not sent.", "warn")
            return
        except ApiError as exc:
            # Sent and refused. Emptied first: the edit it makes withdraws old complaints
            # (and the tick: a second attempt is confirmed again).
            self._forget_secrets()
            on_fields, elsewhere = self.fields.service_errors(exc.errors)
            self._service_errors = on_fields
            text = describe_error(exc)
            if elsewhere:
                text += " — " + "; ".join(elsewhere)
            self._announce(text, "error")
            return
        except (TransportError, ResponseFormatError) as exc:
            if isinstance(exc, TransportError) and not exc.connected:
                # No connection was made: nothing left, the journal records it not sent,
                # and the form keeps it to send once the service can be reached.
                self.confirm.value = False
            else:
                # The answer was lost (or unreadable): the payment may exist, so this form
                # will not send it again, and its secrets are no longer needed.
                self._done = True
                self._pending = None
                self._forget_secrets()
            self._announce(describe_error(exc), "error")
            return
        except Exception as exc:
            # Anything else may have come after the payment left: when in doubt, empty.
            if not isinstance(exc, _BEFORE_SENDING):
                self._forget_secrets()
            raise
        self._pending = None
        self._done = True
        self.result = record
        self._forget_secrets()
        if isinstance(record, Approval):  # held for a second person: nothing sent yet
            self._held(record)
            return
        self.output.value = record_html(record)
        refused = [w.message for w in caught if isinstance(w.message, SubmissionNotAcceptedWarning)]
        if refused:
            self._announce(f"Not accepted: {refused[0]}", "error")
            return
        self._announce(self._sent(record), "ok")

    def _forget_secrets(self) -> None:
        """Empty the secret inputs (in the kernel and in the browser), and untick: the
        payment has left."""
        self.fields.clear(secrets_only=True)
        self.confirm.value = False

    def reset(self) -> None:
        """Empty the form for another payment."""
        self._done = False
        self._pending = None
        self._service_errors = {}
        self.output.value = ""
        self.fields.clear()
        self._changed()


class _ItemForm(PaymentForm):
    """An ACH or RCC item: the main fields, each nested model's (the IAT addenda) in its own
    box, the collapsed "More fields", then the buttons. The rows of a box and of "More
    fields" are built when first shown, which keeps a form's saved state small."""

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        #: One box per nested model of the request, by its wire name (``iatAddenda``).
        self.groups: dict[str, widgets.VBox] = {}
        for wire, title in self.fields.groups.items():
            if "." in wire:
                continue  # a model inside a nested model shares its parent's box
            box = widgets.VBox([widgets.HTML(f"<b>{title}</b>")])
            self.groups[wire] = box.add_class("paynb-group").add_class(f"paynb-group-{wire}")
        self._more_rows = widgets.VBox()
        self.more = widgets.Accordion(children=[self._more_rows], titles=("More fields",),
                                      selected_index=None).add_class("paynb-more-fields")
        """The collapsed section of the optional fields an analyst rarely needs."""
        self.more.observe(self._open_more, names="selected_index")
        self._assemble(widgets.VBox(self.fields.rows(self.fields.main())), *self.groups.values(),
                       *([self.more] if self.fields.more() else []), self.buttons)
        self._refresh()

    def _open_more(self, change: Any) -> None:
        if change["new"] is not None and not self._more_rows.children:
            self._more_rows.children = tuple(self.fields.rows(self.fields.more()))

    def _show_group(self, wire: str, visible: bool) -> None:
        """Show or hide a nested model's box; hidden fields are not sent."""
        box = self.groups[wire]
        if visible and len(box.children) == 1:  # its title alone: the rows, now
            box.children = (*box.children, *self.fields.rows(self.fields.in_group(wire)))
        self._show(box, visible)
        for name in self.fields.in_group(wire):
            self.fields[name].visible = visible


class AchForm(_ItemForm):
    """Submit one ACH item: debit, credit, or debit prenote (the amount is then fixed at 0).

    ``AchForm(client)`` displays itself in a cell; fill the fields, click
    Submit. ``form.result`` is the stored item (a Series).
    """

    model = AchItem
    kind = "ach"
    title = "ACH item"
    css_name = "ach"

    def __init__(self, client: Any) -> None:
        #: The NACHA guards' verdict on the entry as typed (see paynb.forms._guard).
        self._verdict: Any = None
        self.new_authorization = new_authorization_box()
        #: Fills in what a NOC on the typed account asks to change; shown only then.
        self.correction_button = button("Use the NOC's corrected values", "paynb-use-correction",
                                        icon="wrench", visible=False)
        self._correction: dict[str, str] | None = None
        super().__init__(client)
        self.fields["achTransactionSubType"].input.observe(self._prenote, names="value")
        self.new_authorization.observe(self._changed, names="value")
        self.correction_button.on_click(self._use_correction)
        self.buttons.children = (self.new_authorization, *self.buttons.children,
                                 self.correction_button)
        self.fields["achEntryClass"].input.observe(self._entry_class, names="value")
        self._entry_class()

    def _entry_class(self, *_change: Any) -> None:
        # The IAT addenda belong to IAT entries only (NACHA): shown, and sent, for those.
        entry_class = (self.fields["achEntryClass"].value or "").upper()
        self._show_group("iatAddenda", entry_class == "IAT")
        self._refresh()

    def prefill(self, record: Any) -> None:
        """Fill the fields from ``record``: a :class:`paynb.compliance.Correction` (a NOC's
        corrected account record) or a mapping of wire names; fields this form lacks are
        left out, the others are typed in as if by hand."""
        values = record.to_dict() if hasattr(record, "to_dict") else dict(record)
        for wire, value in values.items():
            if wire in self.fields.fields and value is not None:
                self.fields[wire].value = value

    def _blocked(self) -> str | None:
        self._verdict = None
        self._correction = None
        try:
            item, _errors = self.fields.check()
            if item is None:
                return None
            verdicts, problem = guard_verdicts(self.client, {0: item.to_wire()},
                                               new_authorization=self.new_authorization.value)
            if problem:
                return problem
            self._verdict = verdicts[0]
            self._correction = next(iter(self._verdict.corrections), None)
            return "Refused: " + "; ".join(self._verdict.reasons) if self._verdict.reasons else None
        finally:
            self._show(self.correction_button, self._correction is not None)

    def _use_correction(self, _button: Any = None) -> None:
        """Type in the corrected values of the NOC on the typed account (never re-keyed)."""
        if self._correction is not None:
            self.prefill(self._correction)

    def _deliver(self, payload: dict[str, Any], *, allow_duplicate: bool) -> Any:
        return self.resource.submit(payload, allow_duplicate=allow_duplicate,
                                    new_authorization=self.new_authorization.value)

    def _prenote(self, change: dict[str, Any]) -> None:
        prenote = str(change["new"] or "").strip().lower() == "prenote"
        kind, amount = self.fields["achTransactionType"], self.fields["amount"]
        if prenote:
            kind.value, amount.value = "Debit", "0"
        elif amount.value == "0":
            amount.value = ""
        kind.disabled = amount.disabled = prenote

    def _summary(self, item: Any) -> str:
        what = f"a {item.ach_transaction_type.lower()} prenote" \
            if item.ach_transaction_sub_type == "Prenote" else \
            f"a {'same-day ' if item.same_day_ach_requested else ''}" \
            f"{item.ach_transaction_type.lower()} of {item.amount}"
        described = f" ({item.ach_company_entry_description})" \
            if item.ach_company_entry_description else ""
        summary = f"{what}{described}, reference {item.your_reference_number}"
        checks = guard_text(self._verdict) if self._verdict is not None else ""
        # The form ends the line with a full stop; the checks end with their own.
        return f"{summary}. {checks.removesuffix('.')}" if checks else summary

    def _movement(self, item: Any) -> str:
        account = (f"account {last_four(item.bank_account_number)} at routing "
                   f"{item.bank_routing_number}")
        if item.ach_transaction_sub_type:
            return (f"send a debit prenote (amount 0, no money moves) for {account}, "
                    f"reference {item.your_reference_number}")
        direction = (f"credit {money(item.amount)} (pay out) to"
                     if item.ach_transaction_type == "Credit"
                     else f"debit {money(item.amount)} (collect) from")
        return f"{direction} {account}, reference {item.your_reference_number}"


class RccForm(_ItemForm):
    """Submit one RCC item. ``form.result`` is the stored item (a Series)."""

    model = RccItem
    kind = "rcc"
    title = "RCC item"
    css_name = "rcc"

    def _movement(self, item: Any) -> str:
        return (f"debit {money(item.amount)} (collect, by remotely created check) from "
                f"account {last_four(item.bank_account_number)} at routing "
                f"{item.bank_routing_number}, reference {item.your_reference_number}")
