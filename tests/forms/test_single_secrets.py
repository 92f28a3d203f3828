"""Secret inputs of the payment forms (single and instant) are emptied once the payment has
left, whatever its outcome, and kept when a check stops it before anything is sent.

Lost answers and refusals come from the sandbox's scripted faults, so these tests
start a sandbox of their own (the shared one must keep no fault behind).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from paynb.errors import AuthenticationError
from paynb.forms import AchForm, InstantCardForm, RtpForm
from paynb.sandbox import Sandbox, serve

VISA = "4111111111111111"


@pytest.fixture(scope="module")
def sandbox() -> Iterator[Sandbox]:
    """This module's own sandbox (the ``client`` fixture connects to it)."""
    with serve(port=0, seed_items=0) as sb:
        yield sb


@pytest.fixture
def fault(sandbox: Sandbox) -> Iterator[Any]:
    """``fault("drop_after_commit")``: the next write meets that fault; none is left after."""
    try:
        yield lambda name: sandbox.simulate.script_fault(name, on="writes")
    finally:
        sandbox.simulate.clear_faults()


def _stored(client: Any, kind: str, reference: str) -> int:
    listed = getattr(client, kind).list(progress=False)
    return int((listed["yourReferenceNumber"] == reference).sum()) if len(listed) else 0


def test_a_lost_answer_empties_the_secrets_and_locks_the_form(client, fill, ach_values,
                                                              fault) -> None:
    form = AchForm(client)
    fill(form, **ach_values)
    fault("drop_after_commit")  # stored, then the connection drops before the answer
    form.confirm.value = True
    form.submit_button.click()
    assert form.status_text.startswith("No answer from the service")
    assert "client.reconcile()" in form.status_text
    account = form.fields["bankAccountNumber"]
    assert account.input.value == "" and account.value is None
    assert form.fields["bankRoutingNumber"].value == "021000021"  # not a secret: kept
    assert form.submit_button.disabled and form.result is None
    form.confirm.value = True
    form.submit_button.click()  # locked: the payment may exist, it is not sent again
    assert _stored(client, "ach", ach_values["yourReferenceNumber"]) == 1
    assert "000123456789" not in repr(form) and "000123456789" not in form.output.value


def test_a_refusal_after_sending_empties_the_secrets(client, fill, ach_values, fault) -> None:
    form = AchForm(client)
    fill(form, **ach_values)
    fault("503")  # the service answers 503 to the POST (a write is never retried)
    form.confirm.value = True
    form.submit_button.click()
    assert "HTTP 503" in form.status_text
    assert form.fields["bankAccountNumber"].input.value == ""
    assert form.submit_button.disabled  # the account number must be typed again
    form.fields["bankAccountNumber"].value = "000123456789"
    assert not form.confirm.disabled


def test_any_other_failure_once_sent_empties_them_too(client, fill, ach_values,
                                                     monkeypatch) -> None:
    # A 401 that a renewed token did not cure: the sandbox cannot produce it, a stub can.
    def refuse(*_args: Any, **_kwargs: Any) -> Any:
        raise AuthenticationError("the service kept answering 401", status=401,
                                  method="POST", path="/api/v3/AchTransactions")

    monkeypatch.setattr(client.ach, "submit", refuse)
    form = AchForm(client)
    fill(form, **ach_values)
    form.confirm.value = True
    form.submit_button.click()
    assert form.status_text == "the service kept answering 401"
    assert form.fields["bankAccountNumber"].input.value == ""


def test_a_check_that_fails_before_sending_keeps_the_secrets(client, fill, ach_values) -> None:
    form = AchForm(client)
    fill(form, **{**ach_values, "bankRoutingNumber": "021000022"})
    form.confirm.value = True
    form.submit_button.click()  # disabled: a click from code gets nowhere
    assert form.fields["bankAccountNumber"].input.value == "000123456789"
    # A duplicate reference stops in the journal, before sending: kept too.
    first = AchForm(client)
    fill(first, **ach_values)
    first.confirm.value = True
    first.submit_button.click()
    again = AchForm(client)
    fill(again, **ach_values)
    again.confirm.value = True
    again.submit_button.click()
    assert again.status_text.startswith("Duplicate reference")
    assert again.fields["bankAccountNumber"].input.value == "000123456789"


def test_an_instant_card_payment_whose_answer_is_lost(client, fill, ref, fault) -> None:
    form = InstantCardForm(client)
    fill(form, cardNumber=VISA)
    form.check_button.click()
    fill(form, nameOnCard="JANE DOE", cardExpiration="12/2099", totPassword="123456",
         amount="15", yourReferenceNumber=ref("ic-lost"))
    fault("drop")  # the connection drops before the service handles the payment
    form.confirm.value = True
    form.submit_button.click()
    assert form.status_text.startswith("No answer from the service")
    for wire in ("cardNumber", "totPassword"):
        assert form.fields[wire].input.value == "", wire
    assert form.route is None and form.submit_button.disabled and form.check_button.disabled


def test_an_rtp_payment_refused_after_sending(client, fill, ref, fault) -> None:
    form = RtpForm(client)
    fill(form, routingNumber="021000021")
    form.check_button.click()
    fill(form, firstName="Jane", lastName="Doe", accountNumber="12345678", amount="10",
         yourReferenceNumber=ref("rtp-refused"))
    fault("503")
    form.confirm.value = True
    form.submit_button.click()
    assert "HTTP 503" in form.status_text
    assert form.fields["accountNumber"].input.value == ""
    assert form.fields["firstName"].value == "Jane"


def test_after_a_503_a_second_click_is_held_by_the_journal_not_sent_blind(
        client, fill, ach_values, fault) -> None:
    # A 503 may come from a gateway after the service stored the item: the journal keeps
    # the submission unknown, so the form's second click asks before anything is sent.
    form = AchForm(client)
    fill(form, **ach_values)
    fault("503")
    form.confirm.value = True
    form.submit_button.click()
    reference = ach_values["yourReferenceNumber"]
    (entry,) = client.journal().query("reference == @reference").to_dict("records")
    assert entry["state"] == "unknown" and "503" in entry["detail"]
    form.fields["bankAccountNumber"].value = "000123456789"
    form.confirm.value = True
    form.submit_button.click()
    assert form.status_text == f"Duplicate reference {reference}: not sent."
    assert not form.anyway_button.disabled and form.anyway_button.layout.display != "none"
    assert _stored(client, "ach", reference) == 0  # the 503 stored nothing; nor did the click
    form.anyway_button.click()  # the analyst decides: now it is sent, once
    assert _stored(client, "ach", reference) == 1
    assert form.result is not None and form.result["itemStatus"] == "W"


def test_a_service_that_cannot_be_reached_keeps_the_payment_to_send_again(
        client, fill, ach_values) -> None:
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        nobody = f"http://127.0.0.1:{probe.getsockname()[1]}"
    form = AchForm(client)
    fill(form, **ach_values)
    # The token still comes from the sandbox (auth_url); the service's address is wrong.
    served, client.transport.base_url = client.transport.base_url, nobody
    form.confirm.value = True
    form.submit_button.click()
    assert form.status_text.startswith("The service could not be reached")
    assert "nothing was sent" in form.status_text
    assert "reconcile" not in form.status_text
    # Nothing left: the form keeps the payment, secrets included, for another try.
    assert form.fields["bankAccountNumber"].value == "000123456789"
    assert list(client.journal()["state"]) == ["failed"]
    client.transport.base_url = served
    form.confirm.value = True
    form.submit_button.click()
    assert form.result is not None and form.result["itemStatus"] == "W"
    assert _stored(client, "ach", ach_values["yourReferenceNumber"]) == 1
