"""What is judged again when a held payment is approved: NACHA's guards (a NOC or a return
that came in since it was prepared), the duplicate guard (its reference sent meanwhile by
someone else), and what the approver gives (an instant card payment's one-time password,
which paynb does not keep). Each test runs on an SQLite journal and on a PostgreSQL one."""

from __future__ import annotations

import json
import uuid
from decimal import Decimal
from typing import Any

import pytest

import paynb
from paynb.errors import DuplicateSubmissionError, SubmissionRefusedError, ValidationError

pytestmark = pytest.mark.guards_unchecked

ROUTING = "021000021"


def _ref(label: str) -> str:
    return f"AC-{label}-{uuid.uuid4().hex[:8]}"


def _account() -> str:
    """An account no other test sends to."""
    return f"7{uuid.uuid4().int % 10**11:011d}"


def _ach(reference: str, account: str, amount: str = "2500.10") -> dict[str, Any]:
    return {"firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
            "zip": "10001", "yourReferenceNumber": reference, "bankRoutingNumber": ROUTING,
            "bankAccountNumber": account, "achTransactionType": "Debit",
            "amount": Decimal(amount)}


def _waiting(client: Any) -> list[int]:
    return [approval.id for approval in client.approvals()]


def _overrides(client: Any) -> list[dict[str, Any]]:
    return client.context.require_journal().overrides.list(client.company_code)


def _an_account_with_history(team: Any) -> tuple[Any, Any, Any, str, Any]:
    """cy (no dual control), ana and bob (dual control), a fresh account and cy's entry to
    it, sent at once."""
    cy, ana, bob = team("cy", dual_control=None), team("ana"), team("bob")
    account = _account()
    return cy, ana, bob, account, cy.ach.submit(_ach(_ref("OLD"), account, "40.00"))


def _refusal(error: BaseException) -> str:
    """A guard refusal's text without the moment it was judged at."""
    return str(error).split(" (checked: ")[0]


def test_a_noc_that_arrives_between_prepare_and_approve_refuses_the_approval(
        sb: Any, team: Any, wire: Any) -> None:
    cy, ana, bob, account, earlier = _an_account_with_history(team)
    held = ana.ach.submit(_ach(_ref("NOC"), account))
    assert isinstance(held, paynb.Approval)
    # Meanwhile the bank sends a NOC on the account, and six banking days go by.
    noc = sb.simulate.create_noc(int(earlier["achItemId"]), change_code="C01",
                                 corrected_data="999888777")
    sb.simulate.advance_clock(days=12)
    bob.nocs.list(progress=False)  # what bob's client knows, as for a direct submit
    before = len(wire.writes())

    with pytest.raises(SubmissionRefusedError, match=f"NOC {noc['nocId']} .* is not "
                                                     "applied") as refused:
        bob.approve(held.id)

    assert refused.value.verdicts[0].refusals[0][0] == "noc-overdue"
    assert len(wire.writes()) == before  # nothing sent
    assert _waiting(bob) == [held.id]    # it still waits: reject it, or apply the NOC
    # The same words as bob's direct submit of the same entry.
    with pytest.raises(SubmissionRefusedError) as direct:
        bob.ach.submit(_ach(_ref("DIRECT"), account), new_authorization=False)
    assert _refusal(refused.value) == _refusal(direct.value)
    # new_authorization does not override a NOC (as for a direct submit); applying it does.
    with pytest.raises(SubmissionRefusedError, match="noc-overdue|is not applied"):
        bob.approve(held.id, new_authorization=True)
    bob.nocs.apply(noc["nocId"], note="account corrected in the CRM")
    row = bob.approve(held.id)
    assert row["yourReferenceNumber"] == held.references[0]
    assert len(wire.writes()) == before + 1


def test_a_return_that_arrives_meanwhile_refuses_until_the_approver_overrides(
        sb: Any, team: Any, wire: Any) -> None:
    cy, ana, bob, account, earlier = _an_account_with_history(team)
    held = ana.ach.submit(_ach(_ref("RET"), account))
    sb.simulate.force_status(int(earlier["achItemId"]), "R", code="R03")
    bob.ach.list(progress=False)
    before = len(wire.writes())
    with pytest.raises(SubmissionRefusedError, match="returned R03 .* pass "
                                                     "new_authorization=True"):
        bob.approve(held.id)
    assert len(wire.writes()) == before and _waiting(bob) == [held.id]

    row = bob.approve(held.id, new_authorization=True)

    assert row["itemStatus"] == "W" and len(wire.writes()) == before + 1
    (override,) = [o for o in _overrides(bob) if o["reference"] == held.references[0]]
    assert (override["rule"], override["by"]) == ("returned-account", "bob")


def test_the_preparers_new_authorization_holds_at_approval_and_is_recorded_once(
        sb: Any, team: Any) -> None:
    cy, ana, bob, account, earlier = _an_account_with_history(team)
    sb.simulate.force_status(int(earlier["achItemId"]), "R", code="R02")
    ana.ach.list(progress=False)
    bob.ach.list(progress=False)
    held = ana.ach.submit(_ach(_ref("AUTH"), account), new_authorization=True)
    assert bob.approve(held.id)["itemStatus"] == "W"
    overrides = [o for o in _overrides(bob) if o["reference"] == held.references[0]]
    assert [(o["rule"], o["by"]) for o in overrides] == [("returned-account", "ana")]


def test_a_reference_sent_meanwhile_by_someone_else_refuses_the_approval(
        sb: Any, team: Any, wire: Any) -> None:
    cy, ana, bob = team("cy", dual_control=None), team("ana"), team("bob")
    reference = _ref("DUP")
    held = ana.ach.submit(_ach(reference, _account()))
    # cy sends the same reference, knowingly, while it waits.
    sent = cy.ach.submit(_ach(reference, _account(), "12.00"), allow_duplicate=True)
    before = len(wire.writes())
    with pytest.raises(DuplicateSubmissionError, match=(
            f"ach reference '{reference}' of company DEMO1 is already in the journal: submit "
            f"by cy at .* UTC, sent, item {sent['achItemId']}. Nothing was sent; pass "
            "allow_duplicate=True to send it again.")) as refused:
        bob.approve(held.id)
    assert refused.value.previous["by"] == "cy"
    assert len(wire.writes()) == before and _waiting(bob) == [held.id]

    row = bob.approve(held.id, allow_duplicate=True)

    assert row["yourReferenceNumber"] == reference and len(wire.writes()) == before + 1
    entries = bob.journal()
    mine = entries[(entries["reference"] == reference) & (entries["by"] == "ana")]
    assert list(mine["detail"]) == [f"approved by bob (approval {held.id}), "
                                    "allow_duplicate=True"]
    big = cy.ach.submit(_ach(_ref("BIG"), _account(), "600.00"))
    void = ana.ach.void(int(big["achItemId"]))  # over the void limit: held
    with pytest.raises(ValidationError, match="allow_duplicate does not apply"):
        bob.approve(void.id, allow_duplicate=True)


CARD = "4111111111111111"


def _card_payment(client: Any, reference: str, tot: str | None = "7319264058") -> Any:
    client.instant.check_route(CARD)
    body = {"nameOnCard": "JANE DOE", "cardNumber": CARD, "cardExpiration": "12/2035",
            "amount": 1500, "yourReferenceNumber": reference}
    if tot is not None:
        body["totPassword"] = tot
    return client.instant.send(body)


def test_a_held_card_payment_keeps_no_one_time_password_and_its_approver_gives_one(
        team: Any, wire: Any) -> None:
    ana, bob = team("ana"), team("bob")
    held = _card_payment(ana, _ref("TOT"))
    assert isinstance(held, paynb.Approval)
    assert held.approver_supplies == ("tot_password",)
    assert "approver gives" in held.to_html() and "tot_password" in held.to_html()
    _, request = bob.context.require_journal().approvals.peek(held.id)
    stored = json.dumps(request)
    assert "7319264058" not in stored and "totPassword" not in stored
    assert request["bodies"][0]["cardNumber"] == CARD  # needed to send it as prepared
    # Without one, with a bad one: refused naming the argument, the value never quoted.
    with pytest.raises(ValidationError, match=r"tot_password is needed: approval "
                                              rf"{held.id} \(instant send\) was prepared with "
                                              r"one, which paynb does not keep") as missing:
        bob.approve(held.id)
    assert missing.value.errors == {"tot_password": [missing.value.errors["tot_password"][0]]}
    with pytest.raises(ValidationError, match="tot_password must be 4 to 10 digits") as bad:
        bob.approve(held.id, tot_password="12x")
    assert "12x" not in str(bad.value)
    assert wire.writes() == [] and _waiting(bob) == [held.id]

    sent = bob.approve(held.id, tot_password="8642097531")

    assert sent["status"] == "Success"
    ((_, path, body),) = wire.writes()
    assert path.endswith("/InstantTransactions/companycode/DEMO1")
    assert (body["totPassword"], body["cardNumber"], body["amount"]) == (
        "8642097531", CARD, 1500)


def test_tot_password_is_refused_where_nothing_asks_for_it(team: Any, wire: Any) -> None:
    ana, bob = team("ana"), team("bob")
    without = _card_payment(ana, _ref("NOTOT"), tot=None)
    assert without.approver_supplies == ()
    with pytest.raises(ValidationError, match=r"tot_password does not apply: approval "
                                              rf"{without.id} \(instant send\) was not "
                                              "prepared with one"):
        bob.approve(without.id, tot_password="1234")
    ach = ana.ach.submit(_ach(_ref("ACH"), _account()))
    with pytest.raises(ValidationError, match="tot_password does not apply"):
        bob.approve(ach.id, tot_password="1234")
    with pytest.raises(ValidationError, match="new_authorization does not apply"):
        bob.approve(without.id, new_authorization=True)
    assert wire.writes() == []
    assert bob.approve(without.id)["status"] == "Success"
