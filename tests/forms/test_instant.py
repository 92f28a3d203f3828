"""InstantCardForm and RtpForm against the sandbox: no payment without a route check."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from paynb.forms import InstantCardForm, RtpForm

VISA = "4111111111111111"
VISA_UNREACHABLE = "4000000000000002"
DISCOVER = "6011111111111117"  # limit 1,000,000 in the sandbox's card table


@pytest.fixture
def card_values(ref: Any) -> dict[str, str]:
    return {"nameOnCard": "JANE DOE", "cardExpiration": "12/2099", "totPassword": "123456",
            "amount": "1500", "yourReferenceNumber": ref("ic")}


def test_sending_before_a_route_check_is_impossible(client, fill, card_values) -> None:
    form = InstantCardForm(client)
    fill(form, cardNumber=VISA, **card_values)
    assert form.route is None
    assert all(form.fields[w].disabled for w in card_values)  # step 2 is locked
    assert form.submit_button.disabled
    assert form.status_text.startswith("Step 1: check the route first")
    form.confirm.value = True
    form.submit_button.click()
    assert form.result is None and client.journal().empty


def test_check_then_send_a_card_payment(client, fill, card_values) -> None:
    form = InstantCardForm(client)
    fill(form, cardNumber=VISA)
    form.check_button.click()
    assert form.route.ok and form.route.max_amount == Decimal(5_000_000)
    assert "route available" in form.route_info.value and "Visa" in form.route_info.value
    assert VISA not in form.route_info.value
    assert form.status_text.startswith("Route available up to 5000000")
    assert not form.fields["amount"].disabled
    fill(form, **card_values)
    assert not form.confirm.disabled and form.submit_button.disabled  # ready to tick
    form.confirm.value = True
    form.submit_button.click()
    form.submit_button.click()  # a double click sends once

    sent = client.instant.get(str(form.result["uniqueId"]))
    assert sent["yourReferenceNumber"] == card_values["yourReferenceNumber"]
    assert str(sent["cardLastFour"]) == "1111"
    assert len(client.journal()) == 1
    assert form.status_text == (f"Sent: uniqueId {form.result['uniqueId']}, status Success "
                                "(Approved).")
    # Secrets are emptied once sent, and the next payment needs a new route check.
    assert form.fields["cardNumber"].input.value == ""
    assert form.fields["totPassword"].input.value == ""
    assert form.route is None and form.submit_button.disabled
    assert VISA not in form.output.value and "123456" not in form.output.value


def test_a_failed_payment_says_why(client, fill, card_values) -> None:
    form = InstantCardForm(client)
    fill(form, cardNumber=VISA)
    form.check_button.click()
    fill(form, **{**card_values, "amount": "1551"})  # ...51: insufficient funds
    form.confirm.value = True
    form.submit_button.click()
    assert form.result["status"] == "Failed"
    assert "status Failed (Insufficient funds)" in form.status_text


def test_the_amount_is_checked_against_the_rails_limit(client, fill, card_values) -> None:
    form = InstantCardForm(client)
    fill(form, cardNumber=DISCOVER)
    form.check_button.click()
    fill(form, **{**card_values, "amount": "1000001"})
    assert form.submit_button.disabled
    assert "must be at most 1000000 (the rail's limit)" in form.status_text
    assert "must be at most 1000000" in form.fields["amount"].error.value
    form.fields["amount"].value = "1000000"
    assert not form.confirm.disabled


def test_an_unreachable_route_keeps_step_two_locked(client, fill, card_values) -> None:
    form = InstantCardForm(client)
    fill(form, cardNumber=VISA_UNREACHABLE)
    form.check_button.click()
    assert not form.route.ok
    assert "route not available" in form.route_info.value
    assert "the destination is not reachable" in form.status_text
    assert form.fields["amount"].disabled and form.submit_button.disabled


def test_a_new_card_number_withdraws_the_check(client, fill) -> None:
    form = InstantCardForm(client)
    fill(form, cardNumber=VISA)
    form.check_button.click()
    form.fields["cardNumber"].value = DISCOVER
    assert form.route is None and form.fields["amount"].disabled
    assert form.route_info.value == ""


def test_route_check_by_token(client, fill, ref) -> None:
    form = InstantCardForm(client)
    form.route_by.value = "token"
    assert not form.fields["cardNumber"].visible and form.fields["tokenId"].visible
    form.fields["tokenId"].value = "tok_123"
    assert form.check_button.disabled  # the sub-client id is still missing
    form.fields["yourSubClientId"].value = "sub-1"
    form.check_button.click()
    assert form.route.ok
    fill(form, amount="2000", yourReferenceNumber=ref("tok"))
    form.confirm.value = True
    form.submit_button.click()
    assert form.result["status"] == "Success"


def test_rtp_check_then_send(client, fill, ref) -> None:
    form = RtpForm(client)
    fill(form, routingNumber="021000021")
    form.check_button.click()
    assert "JPMorgan Chase Bank" in form.route_info.value
    reference = ref("rtp")
    fill(form, name="Jane Doe", firstName="Jane", lastName="Doe",
         accountNumber="000123456789", amount="2500", yourReferenceNumber=reference)
    form.confirm.value = True
    form.submit_button.click()
    sent = client.rtp.get(str(form.result["uniqueId"]))
    assert sent["yourReferenceNumber"] == reference and sent["status"] == "Success"
    assert form.fields["accountNumber"].input.value == ""  # a secret input
    assert form.route is None


def test_rtp_to_a_bank_without_rtp(client, fill) -> None:
    form = RtpForm(client)
    fill(form, routingNumber="011000015")  # a valid routing number not on the RTP table
    form.check_button.click()
    assert not form.route.supported
    assert "the rail is not supported" in form.status_text
    assert form.fields["amount"].disabled and form.submit_button.disabled


def test_a_card_number_typed_in_groups(client, fill, card_values) -> None:
    form = InstantCardForm(client)
    fill(form, cardNumber="4111 1111 1111 1111")
    form.check_button.click()
    fill(form, **card_values)
    form.confirm.value = True
    form.submit_button.click()
    assert form.result["status"] == "Success"


def test_when_the_clients_check_has_expired_the_form_asks_for_a_new_one(
        client, sandbox, fill, card_values, tmp_path) -> None:
    form = InstantCardForm(client)
    fill(form, cardNumber=VISA)
    form.check_button.click()
    fill(form, **card_values)
    # Another client has no record of that check, as this one after its checks expire.
    with sandbox.connect(journal=None) as fresh:
        form.resource = fresh.instant
        form.confirm.value = True
        form.submit_button.click()
    assert form.result is None
    assert "call check_route first" in form.status_text
    assert form.route is None and form.submit_button.disabled
    # Stopped before sending: the secrets stay for the next attempt.
    assert form.fields["totPassword"].input.value == card_values["totPassword"]
    assert form.fields["cardNumber"].input.value == VISA


def _optional(form: Any) -> set[str]:
    """The visible fields whose label says "(optional)"."""
    return {f.wire for f in form.fields if f.visible and "(optional)" in f.label.value}


def test_the_fields_of_the_chosen_mode_read_as_required(client) -> None:
    form = InstantCardForm(client)
    # Card mode: the card fields are required; only the one-time password stays optional
    # (the service takes a payment without it).
    assert _optional(form) == {"totPassword"}
    assert all(form.fields[w].required for w in ("cardNumber", "nameOnCard", "cardExpiration"))
    form.route_by.value = "token"
    assert _optional(form) == {"totPassword"}
    assert form.fields["tokenId"].required and form.fields["yourSubClientId"].required
    assert not form.fields["cardNumber"].required  # hidden, and no longer required
    form.route_by.value = "card"
    assert _optional(form) == {"totPassword"}
    assert not form.fields["tokenId"].required


def test_the_status_line_names_the_modes_missing_fields(client, fill, ref) -> None:
    form = InstantCardForm(client)
    fill(form, cardNumber=VISA)
    form.check_button.click()
    fill(form, amount="1500", yourReferenceNumber=ref("ic"))
    # Name and expiration are missing: said at once, not only after every other field passes.
    assert form.status_text == "Missing: Name on card, Expiration"
    assert form.submit_button.disabled
    fill(form, nameOnCard="JANE DOE", cardExpiration="12/2099")
    assert not form.confirm.disabled  # no one-time password needed: ready to tick
    assert form.status_text.startswith("Ready to send 1500")
