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

pytestmark = pytest.mark.guards_unchecked


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


def test_the_approvals_form_approves_and_sends_from_the_row(team: Any, wire: Any) -> None:
    ana, bob = team("ana"), team("bob")
    first, held = _prepare(ana).result, _prepare(ana, "3000.00").result
    form = ApprovalsForm(bob)
    assert "paynb-form-approvals" in form.widget._dom_classes
    assert [row.approval.id for row in form.rows] == [first.id, held.id]  # oldest first
    row = form.row(held.id)
    assert row.widget in form.queue.children
    assert {"paynb-approvals-row", f"paynb-approval-{held.id}"} <= set(row.widget._dom_classes)
    assert held.references[0] in row.details.value and "****6789" in row.details.value
    assert "prepared by</th>" in row.details.value and ">ana, " in row.details.value
    assert "paynb-approve" in row.approve_button._dom_classes
    assert "paynb-reject" in row.reject_button._dom_classes
    assert "paynb-confirm" in row.confirm._dom_classes
    assert row.tot_password.layout.display == "none"  # an ACH payment needs none
    assert all(r.approve_button.disabled for r in form.rows)
    assert row.confirm.description.startswith(
        f"I confirm: approve and send approval {held.id}, ach submit of 3,000.00 (1 item) "
        "prepared by ana, for company DEMO1 on the sandbox")
    row.approve_button.click()  # not before the tick
    assert wire.writes() == []
    row.confirm.value = True
    assert not row.approve_button.disabled
    assert form.row(first.id).approve_button.disabled  # each row its own tick
    assert form.status_text == f"Ready to approve and send approval {held.id}."
    row.approve_button.click()
    assert form.status_text == f"Approved approval {held.id} and sent it: 1 item answered."
    assert isinstance(form.result, pd.Series) and form.result["itemStatus"] == "W"
    assert form.result["amount"] == Decimal("3000.00")
    ((_, _, body),) = wire.writes()
    assert body["yourReferenceNumber"] == held.references[0]  # the row's, not the first
    assert form.approvals == [first]  # the other still waits
    assert form.status_text.startswith("Approved")  # the notice stays after the refresh


def test_the_one_who_prepared_it_cannot_approve_but_may_reject(team: Any, wire: Any) -> None:
    ana = team("ana")
    held = _prepare(ana).result
    form = ApprovalsForm(ana)
    row = form.row(held.id)
    assert row.approve_button.disabled and row.confirm.layout.display == "none"
    assert form.status_text.startswith("You (ana) prepared it: another analyst must approve")
    row.confirm.value = True  # a tick from code does not open the door either
    row.approve_button.click()
    assert wire.writes() == []
    assert row.reject_button.disabled  # a reason first
    row.reason.value = "typed the wrong amount"
    assert not row.reject_button.disabled
    row.reject_button.click()
    assert form.status_text == f"Rejected approval {held.id}: nothing was sent."
    assert form.result.state == "rejected" and form.result.reason == "typed the wrong amount"
    assert form.approvals == [] and form.rows == []


def test_the_queue_refreshes_and_says_when_someone_else_decided(team: Any) -> None:
    ana, bob, cy = team("ana"), team("bob"), team("cy")
    form = ApprovalsForm(bob)
    assert form.status_text == "Nothing is waiting for approval."
    assert "Nothing is waiting" in form.queue.children[0].value
    held = _prepare(ana).result
    form.refresh_button.click()
    row = form.row(held.id)
    row.reason.value = "half typed"
    form.refresh_button.click()
    assert form.row(held.id) is row and row.reason.value == "half typed"  # kept
    cy.reject(held.id, reason="not ours")
    row.confirm.value = True
    row.approve_button.click()
    assert form.status_text.startswith(f"approval {held.id} was rejected by cy")
    assert form.approvals == []


def test_a_card_payment_row_asks_for_the_one_time_password(team: Any, wire: Any) -> None:
    ana, bob = team("ana"), team("bob")
    card = "4111111111111111"
    ana.instant.check_route(card)
    held = ana.instant.send({"nameOnCard": "JANE DOE", "cardNumber": card,
                             "cardExpiration": "12/2035", "totPassword": "7319264058",
                             "amount": 1500, "yourReferenceNumber": f"FT-{uuid.uuid4().hex[:8]}"})
    form = ApprovalsForm(bob)
    row = form.row(held.id)
    assert row.tot_password.layout.display is None  # shown
    assert "paynb-approvals-tot" in row.tot_password._dom_classes
    assert "approver gives" in row.details.value
    row.confirm.value = True
    assert row.approve_button.disabled
    assert form.status_text.startswith(f"Approval {held.id} is a card payment prepared with a "
                                       "one-time password, which paynb does not keep")
    row.tot_password.value = "12x"
    row.approve_button.click()
    assert form.status_text == "tot_password must be 4 to 10 digits"
    assert row.tot_password.value == ""  # not kept, even when refused
    assert wire.writes() == [] and form.approvals == [held]
    row.confirm.value = True
    row.tot_password.value = "8642097531"
    row.approve_button.click()
    assert form.status_text == f"Approved approval {held.id} and sent it: 1 item answered."
    ((_, _, body),) = wire.writes()
    assert body["totPassword"] == "8642097531" and row.tot_password.value == ""


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


def test_a_refused_approval_offers_the_override_a_direct_submit_has(sb: Any, team: Any,
                                                                     wire: Any) -> None:
    cy, ana, bob = team("cy", dual_control=None), team("ana"), team("bob")
    account = f"7{uuid.uuid4().int % 10**11:011d}"
    earlier = cy.ach.submit({**_values(f"FO-{uuid.uuid4().hex[:8]}", "40.00"),
                             "bankAccountNumber": account})
    held = ana.ach.submit({**_values(f"FO-{uuid.uuid4().hex[:8]}", "2500.00"),
                           "bankAccountNumber": account})
    sb.simulate.force_status(int(earlier["achItemId"]), "R", code="R03")  # meanwhile
    bob.ach.list(progress=False)
    form = ApprovalsForm(bob)
    row = form.row(held.id)
    assert row.new_authorization.layout.display == "none"
    assert row.allow_duplicate.layout.display == "none"
    before = len(wire.writes())
    row.confirm.value = True
    row.approve_button.click()
    assert "returned R03" in form.status_text
    assert form.status_text.endswith("It still waits: tick 'The receiver authorized again' "
                                     "if you hold a new authorization, or reject it.")
    assert row.new_authorization.layout.display is None  # offered now
    assert "paynb-approvals-new-authorization" in row.new_authorization._dom_classes
    assert len(wire.writes()) == before and form.approvals == [held]
    row.new_authorization.value = True
    row.confirm.value = True
    row.approve_button.click()
    assert form.status_text == f"Approved approval {held.id} and sent it: 1 item answered."
    assert len(wire.writes()) == before + 1
    overrides = bob.context.require_journal().overrides.list(bob.company_code)
    assert [(o["rule"], o["by"]) for o in overrides
            if o["reference"] == held.references[0]] == [("returned-account", "bob")]


def test_a_reference_sent_meanwhile_is_said_and_can_be_sent_anyway(team: Any,
                                                                   wire: Any) -> None:
    cy, ana, bob = team("cy", dual_control=None), team("ana"), team("bob")
    held = _prepare(ana).result
    cy.ach.submit(_values(held.references[0], "12.00"), allow_duplicate=True)
    form = ApprovalsForm(bob)
    row = form.row(held.id)
    row.confirm.value = True
    row.approve_button.click()
    assert form.status_text.startswith(f"ach reference '{held.references[0]}' of company "
                                       "DEMO1 is already in the journal: submit by cy")
    assert row.allow_duplicate.layout.display is None
    assert row.new_authorization.layout.display == "none"
    row.allow_duplicate.value = True
    row.confirm.value = True
    row.approve_button.click()
    assert form.status_text == f"Approved approval {held.id} and sent it: 1 item answered."
    assert len(wire.writes()) == 2  # cy's, then the approved one
