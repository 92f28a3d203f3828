"""AchForm and RccForm against the sandbox: set values, click, check the service's state."""

from __future__ import annotations

import threading
from decimal import Decimal
from typing import Any

import pandas as pd
import pytest

from paynb.errors import BadRequestError
from paynb.forms import AchForm, RccForm


def _journal_rows(client: Any) -> pd.DataFrame:
    return client.journal()


def test_a_valid_ach_item_is_submitted_and_shown(client, fill, ach_values) -> None:
    form = AchForm(client)
    assert form.submit_button.disabled
    fill(form, **ach_values)
    # Nothing leaves before the tick, whose text says what moves, from where, for whom.
    assert form.submit_button.disabled
    assert form.status_text.startswith("Ready to submit a debit of 125.10")
    assert form.status_text.endswith(": tick the confirmation to send it.")
    assert form.confirm.description == (
        "I confirm: debit 125.10 (collect) from account ****6789 at routing 021000021, "
        f"reference {ach_values['yourReferenceNumber']}, for company DEMO1 on the sandbox "
        "(simulated, nothing is paid)")
    form.submit_button.click()  # a click from code goes past the browser's disabled state
    assert form.result is None and _journal_rows(client).empty
    form.confirm.value = True
    assert not form.submit_button.disabled
    assert form.status_text.startswith("Ready to submit a debit of 125.10")
    form.submit_button.click()
    assert form.confirm.value is False  # each send needs its own tick

    stored = client.ach.get(int(form.result["achItemId"]))
    assert stored["yourReferenceNumber"] == ach_values["yourReferenceNumber"]
    assert stored["itemStatus"] == "W"
    assert Decimal(str(stored["amount"])) == Decimal("125.10")
    assert f"item {stored['achItemId']}, status W (Waiting)" in form.status_text
    assert str(stored["achItemId"]) in form.output.value
    # The account number is a secret input: emptied once sent, never shown in full.
    assert form.fields["bankAccountNumber"].input.value == ""
    assert "000123456789" not in form.output.value
    assert "000123456789" not in repr(form)
    assert form.submit_button.disabled  # until "Submit another"


def test_invalid_input_keeps_the_button_disabled_and_sends_nothing(client, fill,
                                                                   ach_values) -> None:
    form = AchForm(client)
    fill(form, **{**ach_values, "bankRoutingNumber": "021000022"})
    assert form.submit_button.disabled
    assert "Routing number (is not a valid ABA routing number" in form.status_text
    assert "checksum" in form.fields["bankRoutingNumber"].error.value
    form.confirm.value = True
    form.submit_button.click()  # a click from code goes past the browser's disabled state
    assert form.result is None
    assert _journal_rows(client).empty
    assert client.ach.list(progress=False).query(
        "yourReferenceNumber == @ach_values['yourReferenceNumber']").empty


def test_a_double_click_sends_once(client, fill, ach_values) -> None:
    form = AchForm(client)
    fill(form, **ach_values)
    form.confirm.value = True
    form.submit_button.click()
    form.submit_button.click()
    assert len(_journal_rows(client)) == 1
    listed = client.ach.list(progress=False)
    assert (listed["yourReferenceNumber"] == ach_values["yourReferenceNumber"]).sum() == 1


def test_a_click_while_the_first_is_running_is_ignored(client, fill, ach_values,
                                                       monkeypatch) -> None:
    form = AchForm(client)
    fill(form, **ach_values)
    inside, release = threading.Event(), threading.Event()
    real_submit, calls = client.ach.submit, []

    def slow_submit(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        inside.set()
        release.wait()
        return real_submit(*args, **kwargs)

    monkeypatch.setattr(client.ach, "submit", slow_submit)
    form.confirm.value = True
    first = threading.Thread(target=form.submit_button.click)
    first.start()
    inside.wait()
    assert form.busy and form.submit_button.disabled and form.confirm.disabled
    form.submit_button.click()  # the second click of a double click
    release.set()
    first.join()
    assert len(calls) == 1
    assert form.result["itemStatus"] == "W"


def _submitted_twice(client, fill, values) -> tuple[AchForm, AchForm]:
    """Two forms that submitted the same values: the first sent, the second asking."""
    forms = []
    for _ in range(2):
        form = AchForm(client)
        fill(form, **values)
        form.confirm.value = True
        form.submit_button.click()
        forms.append(form)
    return forms[0], forms[1]


def test_a_duplicate_reference_shows_the_earlier_one_and_asks(client, fill,
                                                             ach_values) -> None:
    first, again = _submitted_twice(client, fill, ach_values)
    assert "Duplicate reference" in again.status_text
    assert "used before" in again.output.value
    assert str(first.result["achItemId"]) in again.output.value  # the earlier item
    assert again.result is None and len(_journal_rows(client)) == 1
    assert again.submit_button.disabled and not again.anyway_button.disabled
    again.anyway_button.click()
    assert again.result["achItemId"] != first.result["achItemId"]
    listed = client.ach.list(progress=False)
    assert (listed["yourReferenceNumber"] == ach_values["yourReferenceNumber"]).sum() == 2


def test_an_edit_withdraws_the_duplicate_question(client, fill, ach_values, ref) -> None:
    _, again = _submitted_twice(client, fill, ach_values)
    again.fields["yourReferenceNumber"].value = ref("new")
    assert again.anyway_button.layout.display == "none"
    assert again.confirm.value is False and again.submit_button.disabled  # a new tick
    again.confirm.value = True
    assert not again.submit_button.disabled


def test_prenote_fixes_the_amount_at_zero(client, fill, ach_values) -> None:
    form = AchForm(client)
    fill(form, **{**ach_values, "achTransactionType": "Credit"})
    form.fields["achTransactionSubType"].value = "Prenote"
    assert form.fields["amount"].value == "0" and form.fields["amount"].disabled
    assert form.fields["achTransactionType"].value == "Debit"
    assert "a debit prenote" in form.status_text
    form.confirm.value = True
    form.submit_button.click()
    stored = client.ach.get(int(form.result["achItemId"]))
    assert Decimal(str(stored["amount"])) == 0
    form.reset()
    assert form.fields["amount"].value is None and not form.fields["amount"].disabled


def test_the_services_field_messages_land_on_the_fields(client, fill, ach_values,
                                                        monkeypatch) -> None:
    # The sandbox shares paynb's rules, so only a stub can make it refuse valid input.
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise BadRequestError("One or more validation errors occurred.", status=400,
                              method="POST", path="/api/v3/AchTransactions/companycode/DEMO1",
                              title="One or more validation errors occurred.",
                              errors={"BankAccountNumber": ["account is closed"]})

    monkeypatch.setattr(client.ach, "submit", refuse)
    form = AchForm(client)
    fill(form, **ach_values)
    form.confirm.value = True
    form.submit_button.click()
    assert "account is closed" in form.fields["bankAccountNumber"].error.value
    assert "HTTP 400" in form.status_text
    assert form.submit_button.disabled  # until the field is changed
    form.fields["bankAccountNumber"].value = "99887766"
    assert form.fields["bankAccountNumber"].error.value == ""
    assert form.submit_button.disabled and not form.confirm.value  # confirmed again
    assert "account ****7766 at routing" in form.confirm.description
    form.confirm.value = True
    assert not form.submit_button.disabled


def test_submit_another_resets_the_form(client, fill, ach_values) -> None:
    form = AchForm(client)
    fill(form, **ach_values)
    form.confirm.value = True
    form.submit_button.click()
    assert form.another_button.layout.display is None
    form.another_button.click()
    assert form.fields["firstSignerFirstName"].value is None
    assert form.submit_button.disabled and form.output.value == ""
    assert form.status_text.startswith("Missing:")


def test_rcc_form(client, fill, ref) -> None:
    form = RccForm(client)
    reference = ref("rcc")
    fill(form, firstSignerFirstName="Sam", firstSignerLastName="Lee", address1="1 Main St",
         city="Springfield", state="IL", zip="62701 1234", yourReferenceNumber=reference,
         bankRoutingNumber="021000021", bankAccountNumber="000987654321", amount="49.99")
    form.fields["zip"].value = "62701-1234"  # RCC wants a space before the extension
    assert form.submit_button.disabled
    form.fields["zip"].value = "62701 1234"
    form.confirm.value = True
    form.submit_button.click()
    stored = client.rcc.get(int(form.result["rccItemId"]))
    assert stored["yourReferenceNumber"] == reference
    assert Decimal(str(stored["amount"])) == Decimal("49.99")


def test_the_form_displays_as_its_widget(client) -> None:
    form = AchForm(client)
    bundle = form._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == form.widget.model_id
    assert "paynb-form" in form.widget._dom_classes
    assert "paynb-submit" in form.submit_button._dom_classes
    assert "paynb-status" in form.status._dom_classes


@pytest.mark.parametrize("amount", ["0.1", "1234567.89", "0.30"])
def test_amounts_reach_the_service_exactly(client, fill, ach_values, amount) -> None:
    form = AchForm(client)
    fill(form, **{**ach_values, "amount": amount})
    form.confirm.value = True
    form.submit_button.click()
    stored = client.ach.get(int(form.result["achItemId"]))
    assert Decimal(str(stored["amount"])) == Decimal(amount)
