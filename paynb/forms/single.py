"""Single ACH and RCC submissions: :class:`AchForm` and :class:`RccForm`.

Both are the same form over a different model: the fields come from
:mod:`paynb.models` through :class:`~paynb.forms.builder.FieldSet`.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from paynb.errors import ApiError, DuplicateSubmissionError, TransportError
from paynb.forms._base import Form, describe_error, record_html
from paynb.forms.builder import FieldSet
from paynb.models import AchItem, RccItem, RequestModel

__all__ = ["AchForm", "RccForm"]


def match_field(fieldset: FieldSet, key: str) -> str | None:
    """The wire name of the field a service error key names (``$.Amount`` -> ``amount``)."""
    name = key.split(".")[-1].lower()
    return next((wire for wire in fieldset.fields if wire.lower() == name), None)


def split_service_errors(fieldset: FieldSet, errors: dict[str, list[str]]
                         ) -> tuple[dict[str, list[str]], list[str]]:
    """The service's errors as messages per field, and the ones no field of the form names."""
    on_fields: dict[str, list[str]] = {}
    elsewhere: list[str] = []
    for key, messages in errors.items():
        wire = match_field(fieldset, key)
        if wire:
            on_fields.setdefault(wire, []).extend(messages)
        else:
            elsewhere.append(f"{key}: {'; '.join(messages)}")
    return on_fields, elsewhere


class _SubmitForm(Form):
    """One item, checked as it is typed, sent once."""

    model: type[RequestModel]
    kind = ""  # the client resource: "ach" or "rcc"
    id_column = ""

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.resource = getattr(client, self.kind)
        self.fields = FieldSet(self.model)
        self.submit_button = self._button("Submit", "paynb-submit", style="primary",
                                          icon="paper-plane")
        self.anyway_button = self._button("Submit anyway", "paynb-submit-anyway",
                                          style="warning", visible=False)
        self.another_button = self._button("Submit another", "paynb-reset", visible=False)
        self.submit_button.on_click(self._guarded(self._submit, "Submitting…"))
        self.anyway_button.on_click(self._guarded(self._submit_anyway, "Submitting…"))
        self.another_button.on_click(lambda _b: self.reset())
        self.fields.observe(self._changed)
        #: The checked item waiting for an explicit "submit anyway" after a duplicate warning.
        self._pending: RequestModel | None = None
        self._service_errors: dict[str, list[str]] = {}
        self._done = False
        self._assemble(widgets.VBox(self.fields.rows()),
                       widgets.HBox([self.submit_button, self.anyway_button,
                                     self.another_button]))
        self._refresh()

    def _changed(self, *_args: Any) -> None:
        # Any edit withdraws a pending duplicate question and the service's old complaints.
        self._pending = None
        self._service_errors = {}
        super()._changed()

    def _refresh(self) -> None:
        item, errors = self.fields.check()
        self.fields.show(errors)
        for wire, messages in self._service_errors.items():
            self.fields[wire].show_error(messages)
        ready = item is not None and not self._service_errors
        self.submit_button.disabled = self.busy or self._done or not ready or bool(self._pending)
        self.anyway_button.disabled = self.busy or self._pending is None
        self._show(self.anyway_button, self._pending is not None)
        self._show(self.another_button, self._done)
        if self.busy:
            return
        if self._notice:
            self._say(*self._notice)
        elif item is None:
            self._say(self.fields.problems(errors), "warn")
        else:
            self._say(f"Ready to submit {self._summary(item)}.", "ok")

    def _summary(self, item: Any) -> str:
        return f"{item.amount}, reference {item.your_reference_number}"

    def _submit(self) -> None:
        item, errors = self.fields.check()
        if item is None or self._done:
            # The button was disabled; a programmatic click must not get further.
            self.fields.show(errors, everywhere=True)
            return
        self._send(item, allow_duplicate=False)

    def _submit_anyway(self) -> None:
        if self._pending is None or self._done:
            return
        self._send(self._pending, allow_duplicate=True)

    def _send(self, item: RequestModel, *, allow_duplicate: bool) -> None:
        try:
            record = self.resource.submit(item.to_wire(), allow_duplicate=allow_duplicate)
        except DuplicateSubmissionError as exc:
            self._pending = item
            self.output.value = (
                "<p><b>This reference number was submitted before:</b></p>"
                + record_html(exc.previous)
                + "<p>Nothing was sent. Click <b>Submit anyway</b> to send a second payment "
                "with the same reference, or change the reference.</p>")
            self._announce(f"Duplicate reference {exc.reference_number}: not sent.", "warn")
            return
        except ApiError as exc:
            on_fields, elsewhere = split_service_errors(self.fields, exc.errors)
            self._service_errors = on_fields
            text = describe_error(exc)
            if elsewhere:
                text += " — " + "; ".join(elsewhere)
            self._announce(text, "error")
            return
        except TransportError as exc:
            # The answer was lost: the payment may exist, so this form will not send it again.
            self._done = True
            self._pending = None
            self._announce(describe_error(exc), "error")
            return
        self._pending = None
        self._done = True
        self.result = record
        self.fields.clear(secrets_only=True)
        item_id = record.get(self.id_column)
        status = record.get("itemStatus")
        name = record.get("itemStatusName") or ""
        self.output.value = record_html(record)
        self._announce(f"Submitted: item {item_id}, status {status} ({name})"
                       + f", reference {record.get('yourReferenceNumber')}.", "ok")

    def reset(self) -> None:
        """Empty the form for another submission."""
        self._done = False
        self._pending = None
        self._service_errors = {}
        self.output.value = ""
        self.fields.clear()
        self._changed()


class AchForm(_SubmitForm):
    """Submit one ACH item: debit, credit, or debit prenote (the amount is then fixed at 0).

    ``AchForm(client)`` displays itself in a cell; fill the fields, click
    Submit. ``form.result`` is the stored item (a Series).
    """

    model = AchItem
    kind = "ach"
    id_column = "achItemId"
    title = "ACH item"
    css_name = "ach"

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.fields["achTransactionSubType"].input.observe(self._prenote, names="value")

    def _prenote(self, change: dict[str, Any]) -> None:
        prenote = change["new"] == "Prenote"
        kind, amount = self.fields["achTransactionType"], self.fields["amount"]
        if prenote:
            kind.value, amount.value = "Debit", "0"
        elif amount.value is not None and amount.value == "0":
            amount.value = ""
        kind.disabled = amount.disabled = prenote

    def _summary(self, item: Any) -> str:
        what = "a debit prenote" if item.ach_transaction_sub_type else (
            f"a {item.ach_transaction_type.lower()} of {item.amount}")
        return f"{what}, reference {item.your_reference_number}"


class RccForm(_SubmitForm):
    """Submit one RCC item. ``form.result`` is the stored item (a Series)."""

    model = RccItem
    kind = "rcc"
    id_column = "rccItemId"
    title = "RCC item"
    css_name = "rcc"

