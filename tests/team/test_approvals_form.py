"""The forms under dual control, headless: a payment over the limit says it awaits another
analyst's approval, and ApprovalsForm shows the queue with its Approve and Reject buttons."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

import pandas as pd
import pytest

import paynb
from paynb.forms import AchForm, ApprovalsForm, BulkSubmitForm

pytestmark = pytest.mark.filterwarnings("ignore:cannot check NOCs")  # nothing listed to judge by


def _values(reference: str, amount: str) -> dict[str, str]:
    return {"firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
            "zip": "10001", "yourReferenceNumber": reference, "bankRoutingNumber": "021000021",
            "bankAccountNumber": "000123456789", "achTransactionType": "Debit",
            "amount": amount}


def _prepare(client: Any, amount: str = "2500.00") -> Any:
    """ana's AchForm: filled, ticked, submitted; the form."""
    form = AchForm(client)
    for wire, value in _values(f"FORM-{uuid.uuid4().hex[:8]}", amount).items():
        form.fields[wire].value = value
    form.confirm.value = True
    form.submit_button.click()
    return form


def test_a_form_says_the_payment_awaits_another_analyst(team: Any, wire: Any) -> None:
    ana = team("ana")
    form = _prepare(ana)
    held = form.result
    assert isinstance(held, paynb.Approval)
    assert form.status_text.startswith(
        f"Awaiting approval by another analyst (approval {held.id}: 2500.00 over the ach "
        "limit 1000.00). Nothing was sent yet")
    assert "paynb-awaiting-approval" in form.output.value
    assert "the service does not enforce dual control" in form.output.value
    assert form.submit_button.disabled  # held: this form does not send it again
    assert form.fields["bankAccountNumber"].input.value == ""  # the secret is not kept here
    assert wire.writes() == []


def test_the_approvals_form_approves_and_sends(team: Any, wire: Any) -> None:
    ana, bob = team("ana"), team("bob")
    held = _prepare(ana).result
    form = ApprovalsForm(bob)
    assert "paynb-form-approvals" in form.widget._dom_classes
    assert held.references[0] in form.queue.value and "****6789" in form.queue.value
    assert form.choice.value == held.id
    assert "prepared by</th>" in form.details.value and ">ana, " in form.details.value
    assert form.approve_button.disabled and "paynb-approve" in form.approve_button._dom_classes
    assert form.confirm.description.startswith(
        f"I confirm: approve and send approval {held.id}, ach submit of 2,500.00 (1 item) "
        "prepared by ana, for company DEMO1 on the sandbox")
    form.approve_button.click()  # not before the tick
    assert wire.writes() == []
    form.confirm.value = True
    assert not form.approve_button.disabled
    form.approve_button.click()
    assert form.status_text == f"Approved approval {held.id} and sent it: 1 item answered."
    assert isinstance(form.result, pd.Series) and form.result["itemStatus"] == "W"
    assert form.result["amount"] == Decimal("2500.00")
    assert len(wire.writes()) == 1
    assert form.approvals == [] and form.choice.value is None
    assert form.status_text.startswith("Approved")  # the notice stays after the refresh


def test_the_one_who_prepared_it_cannot_approve_but_may_reject(team: Any, wire: Any) -> None:
    ana = team("ana")
    held = _prepare(ana).result
    form = ApprovalsForm(ana)
    assert form.choice.value == held.id
    assert form.approve_button.disabled
    assert form.status_text.startswith(f"You (ana) prepared approval {held.id}: another "
                                       "analyst must approve it")
    form.confirm.value = True  # a tick from code does not open the door either
    form.approve_button.click()
    assert wire.writes() == []
    assert form.reject_button.disabled  # a reason first
    form.reason.value = "typed the wrong amount"
    assert not form.reject_button.disabled
    form.reject_button.click()
    assert form.status_text == f"Rejected approval {held.id}: nothing was sent."
    assert form.result.state == "rejected" and form.result.reason == "typed the wrong amount"
    assert form.approvals == []


def test_the_queue_refreshes_and_says_when_someone_else_decided(team: Any) -> None:
    ana, bob, cy = team("ana"), team("bob"), team("cy")
    form = ApprovalsForm(bob)
    assert form.status_text == "Nothing is waiting for approval."
    held = _prepare(ana).result
    form.refresh_button.click()
    assert form.choice.value == held.id
    cy.reject(held.id, reason="not ours")
    form.confirm.value = True
    form.approve_button.click()
    assert form.status_text.startswith(f"approval {held.id} was rejected by cy")
    assert form.approvals == []


def test_a_bulk_form_says_the_set_awaits_approval(team: Any, wire: Any) -> None:
    ana = team("ana")
    rows = pd.DataFrame([_values(f"FB-{uuid.uuid4().hex[:8]}", "5.00") for _ in range(2)])
    form = BulkSubmitForm(ana, rows)
    form.confirm.value = True
    form.submit_button.click()
    assert isinstance(form.result, paynb.Approval)
    assert form.status_text.startswith("Awaiting approval by another analyst")
    assert "every bulk needs a second person" in form.status_text
    assert wire.writes() == []
