"""Where a form acts, and the tick before money moves (issue 13.1, 13.2).

Every form shows the environment and the company code in a header (the real
service in red); every form that moves money waits for a confirmation that
states the amount, the direction, the masked account, the company and the
environment, and each send takes the tick away again.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from paynb.forms import AchForm, BulkSubmitForm, InstantCardForm, RccForm, RtpForm, VoidForm

SANDBOX_WHERE = "for company DEMO1 on the sandbox (simulated, nothing is paid)"


@pytest.fixture
def real(sandbox: Any, tmp_path: Any) -> Iterator[Any]:
    """A client labelled as the real service (profile "prod"), talking to the sandbox."""
    with sandbox.connect(journal=tmp_path / "real.sqlite", environment="prod") as opened:
        yield opened


def _header(form: Any) -> Any:
    (header,) = [w for w in form.widget.children if "paynb-env-header" in w._dom_classes]
    return header


@pytest.mark.parametrize("make", [AchForm, RccForm, InstantCardForm, RtpForm, BulkSubmitForm,
                                  lambda client: VoidForm(client)])
def test_every_form_names_the_environment_and_company(make, client, real, sandbox) -> None:
    sandbox_header = _header(make(client))
    assert "paynb-env-sandbox" in sandbox_header._dom_classes
    assert "sandbox (simulated, nothing is paid)" in sandbox_header.value
    assert "company <b>DEMO1</b>" in sandbox_header.value
    assert "background:#e8f1fb" in sandbox_header.value

    real_header = _header(make(real))
    host = sandbox.base_url.removeprefix("http://")
    assert "paynb-env-real" in real_header._dom_classes
    assert f"REAL SERVICE {host} (profile prod)" in real_header.value
    assert "background:#fde8e8" in real_header.value  # not the sandbox's colour


def test_the_confirmation_on_the_real_service_says_so(real, fill, ach_values,
                                                      sandbox) -> None:
    form = AchForm(real)
    fill(form, **{**ach_values, "achTransactionType": "Credit"})
    host = sandbox.base_url.removeprefix("http://")
    assert form.confirm.description == (
        "I confirm: credit 125.10 (pay out) to account ****6789 at routing 021000021, "
        f"reference {ach_values['yourReferenceNumber']}, for company DEMO1 on the "
        f"REAL SERVICE {host} (profile prod)")


def test_a_prenote_confirmation_says_no_money_moves(client, fill, ach_values) -> None:
    form = AchForm(client)
    fill(form, **ach_values)
    form.fields["achTransactionSubType"].value = "Prenote"
    assert form.confirm.description.startswith(
        "I confirm: send a debit prenote (amount 0, no money moves) for account ****6789 at "
        "routing 021000021, reference ")


def test_rcc_waits_for_the_tick_and_the_tick_resets_after_the_send(client, fill,
                                                                   ref) -> None:
    form = RccForm(client)
    reference = ref("rcc-confirm")
    fill(form, firstSignerFirstName="Sam", firstSignerLastName="Lee", address1="1 Main St",
         city="Springfield", state="IL", zip="62701", yourReferenceNumber=reference,
         bankRoutingNumber="021000021", bankAccountNumber="000987654321", amount="1249.99")
    assert form.confirm.description == (
        "I confirm: debit 1,249.99 (collect, by remotely created check) from account "
        f"****4321 at routing 021000021, reference {reference}, {SANDBOX_WHERE}")
    assert "000987654321" not in form.confirm.description
    assert form.submit_button.disabled
    form.submit_button.click()
    assert form.result is None and client.journal().empty
    form.confirm.value = True
    form.submit_button.click()
    assert form.result["yourReferenceNumber"] == reference
    assert form.confirm.value is False and form.confirm.layout.display == "none"
    form.another_button.click()
    assert form.confirm.value is False


def test_a_card_payment_confirms_amount_and_card(client, fill, ref) -> None:
    form = InstantCardForm(client)
    fill(form, cardNumber="4111 1111 1111 1111")
    form.check_button.click()
    reference = ref("ic-confirm")
    fill(form, nameOnCard="JANE DOE", cardExpiration="12/2099", amount="1500",
         yourReferenceNumber=reference)
    assert form.confirm.description == (
        "I confirm: send 1500 (amount in the service's unit), paid out to card ****1111, "
        f"reference {reference}, {SANDBOX_WHERE}")
    assert form.submit_button.disabled
    form.confirm.value = True
    form.fields["amount"].value = "1600"  # a change withdraws the tick
    assert form.confirm.value is False and form.submit_button.disabled
    assert "send 1600 (amount" in form.confirm.description
    form.confirm.value = True
    form.submit_button.click()
    assert form.result["status"] == "Success" and form.confirm.value is False


def test_an_rtp_payment_confirms_amount_account_and_receiver(client, fill, ref) -> None:
    form = RtpForm(client)
    fill(form, routingNumber="021000021")
    form.check_button.click()
    reference = ref("rtp-confirm")
    fill(form, firstName="Jane", lastName="Doe", accountNumber="000123456789", amount="2500",
         yourReferenceNumber=reference)
    assert form.confirm.description == (
        "I confirm: send 2500 (amount in the service's unit), paid out to account ****6789 "
        f"at routing 021000021 (Jane Doe), reference {reference}, {SANDBOX_WHERE}")
    form.submit_button.click()
    assert form.result is None
    form.confirm.value = True
    form.submit_button.click()
    assert form.result["status"] == "Success" and form.confirm.value is False
