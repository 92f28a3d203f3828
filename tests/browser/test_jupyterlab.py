"""The notebooks as a person sees them: JupyterLab in headless Chromium.

A form that passes the headless widget tests can still show "Error displaying
widget" in JupyterLab (the widget extension missing, versions mismatched). Here a
real JupyterLab runs ``03_submit_and_void`` and ``04_instant_payments`` against a
sandbox of its own, and the forms are filled in through the page: typed into,
clicked, confirmed. What the page says is checked against what the sandbox holds.

Every wait is on a selector or a page condition, never a sleep. The module skips,
loudly, only when Chromium or playwright cannot run on this machine
(``scripts/ensure_browser.sh`` installs Debian's Chromium where it can).
"""

from __future__ import annotations

import re
import time
import uuid
import warnings
from collections.abc import Iterator
from decimal import Decimal

import labdriver
import pytest

from paynb.errors import GuardWarning

pytestmark = pytest.mark.browser

playwright_api = pytest.importorskip(
    "playwright.sync_api",
    reason="BROWSER TESTS SKIPPED: the playwright package is not installed")
expect = playwright_api.expect

NOTEBOOKS = ["03_submit_and_void.ipynb", "04_instant_payments.ipynb"]
WIDGET_ERRORS = ("Error displaying widget", "Failed to load model class",
                 "Loading widget...")


@pytest.fixture(scope="module")
def lab() -> Iterator[labdriver.Lab]:
    try:
        with labdriver.running_lab(NOTEBOOKS, seed_items=500) as running:
            yield running
    except labdriver.BrowserUnavailable as exc:
        message = f"BROWSER TESTS SKIPPED: {exc}"
        warnings.warn(message, stacklevel=1)
        pytest.skip(message)


@pytest.fixture(scope="module")
def notebook03(lab: labdriver.Lab) -> labdriver.Lab:
    """``03_submit_and_void`` opened and run top to bottom."""
    lab.open("03_submit_and_void.ipynb")
    lab.run_all_rendering("03_submit_and_void.ipynb", ".paynb-form-ach")
    return lab


@pytest.fixture(scope="module")
def notebook04(lab: labdriver.Lab) -> labdriver.Lab:
    """``04_instant_payments`` opened (in a second tab) and run top to bottom."""
    lab.open("04_instant_payments.ipynb")
    lab.run_all_rendering("04_instant_payments.ipynb", ".paynb-form-instant")
    return lab


def _settled(locator, pattern: re.Pattern, timeout: float = 15.0) -> re.Match:
    """The locator's text matched by ``pattern``, read until a read matches (a queued click
    can rewrite the text between the wait and the read)."""
    deadline = time.monotonic() + timeout
    while True:
        found = pattern.search(locator.inner_text())
        if found or time.monotonic() > deadline:
            assert found, f"{locator.inner_text()!r} never matched {pattern.pattern!r}"
            return found
        time.sleep(0.1)


def _reference(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def _assert_widgets_rendered(lab: labdriver.Lab, forms: dict[str, int]) -> None:
    page = lab.page
    for css, count in forms.items():
        expect(page.locator(f".paynb-form-{css}")).to_have_count(count)
        expect(page.locator(f".paynb-form-{css} .paynb-status").first).to_be_visible()
    text = lab.notebook_text()
    for problem in WIDGET_ERRORS:
        assert problem not in text, f"{problem!r} in the notebook:\n{lab.log_tail()}"
    assert "Traceback (most recent call last)" not in text
    # connect() found the fresh sandbox, and said so.
    assert "SANDBOX" in text


def test_03_runs_and_its_widgets_render(notebook03: labdriver.Lab):
    _assert_widgets_rendered(notebook03, {"ach": 1, "bulk": 1, "void": 1})
    # The VoidForm got the rows that the cell above had already voided: its preview,
    # fetched as the form was built, says so.
    preview = notebook03.page.locator(".paynb-form-void .paynb-preview")
    expect(preview).to_contain_text("cannot be voided: status V")


def test_ach_form_submits_through_the_page(notebook03: labdriver.Lab):
    page = notebook03.page
    form = page.locator(".paynb-form-ach")
    reference = _reference("BR-ACH")
    submit = form.locator("button.paynb-submit")
    expect(submit).to_be_disabled()
    typed = {"firstSignerFirstName": "Ada", "firstSignerLastName": "Lovelace",
             "state": "NY", "zip": "10001", "yourReferenceNumber": reference,
             "bankRoutingNumber": "021000021", "bankAccountNumber": "000123456789",
             "amount": "123.45"}
    for wire, text in typed.items():
        form.locator(f".paynb-field-{wire} input").fill(text)
    # Account type and entry class are open sets: a text box offering the known values.
    for wire, text in {"achAccountType": "Checking", "achEntryClass": "PPD"}.items():
        form.locator(f".paynb-field-{wire} input").fill(text)
    form.locator(".paynb-field-achTransactionType select").select_option(label="Credit")

    status = form.locator(".paynb-status")
    expect(form.locator(".paynb-env-header.paynb-env-sandbox")).to_contain_text(
        "sandbox (simulated, nothing is paid) · company DEMO1")
    expect(status).to_contain_text(f"Ready to submit a credit of 123.45, reference {reference}")
    expect(submit).to_be_disabled()  # not before the confirmation
    confirm = form.locator(".paynb-confirm")
    expect(confirm).to_contain_text("I confirm: credit 123.45 (pay out) to account ****6789")
    confirm.locator("input[type=checkbox]").check()
    expect(submit).to_be_enabled()
    # A double click, as impatient people do: both clicks reach the kernel, one pays.
    submit.dblclick()
    # The second click is handled after the first: for a moment it shows "Submitting…",
    # finds the form done, and the line returns to the first answer. Read it once settled.
    sent = re.compile(rf"Submitted: item (\d+), status W \(.*\), reference {reference}\.")
    expect(status).to_have_text(sent)
    item_id = int(_settled(status, sent).group(1))
    expect(form.locator("button.paynb-reset")).to_be_visible()
    expect(submit).to_be_disabled()  # a second click cannot pay twice

    client = notebook03.client()
    listed = client.ach.list(status=["W"], progress=False)
    assert (listed["yourReferenceNumber"] == reference).sum() == 1
    stored = client.ach.get(item_id)
    assert stored["yourReferenceNumber"] == reference
    assert stored["itemStatus"] == "W"
    assert Decimal(str(stored["amount"])) == Decimal("123.45")
    assert stored["achTransactionType"] == "Credit"
    assert stored["firstSignerLastName"] == "Lovelace"


def test_void_form_voids_through_the_page(notebook03: labdriver.Lab):
    client = notebook03.client()
    reference = _reference("BR-VOID")
    # A client that has listed nothing cannot judge NOCs: the guards say so, once.
    with pytest.warns(GuardWarning, match="cannot check NOCs"):
        item = client.ach.submit({
            "firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
            "zip": "10001", "yourReferenceNumber": reference,
            "bankRoutingNumber": "021000021", "bankAccountNumber": "000123456789",
            "achAccountType": "Checking", "achTransactionType": "Debit",
            "achEntryClass": "PPD", "amount": Decimal("10.00")})
    item_id = int(item["achItemId"])

    page = notebook03.page
    form = page.locator(".paynb-form-void")
    form.locator(".paynb-field-kind button", has_text="ACH").click()
    form.locator(".paynb-field-by button", has_text="Item ids").click()
    form.locator(".paynb-field-items textarea").fill(str(item_id))
    status = form.locator(".paynb-status")
    expect(status).to_contain_text("1 item ids entered")
    form.locator("button.paynb-fetch").click()
    preview = form.locator(".paynb-preview")
    expect(preview).to_contain_text(reference)
    expect(preview).to_contain_text("can be voided")
    void = form.locator("button.paynb-submit")
    expect(void).to_be_disabled()  # not before the confirmation
    confirm = form.locator(".paynb-confirm")
    expect(confirm).to_contain_text("I confirm: void 1 ACH item")
    confirm.locator("input[type=checkbox]").check()
    expect(void).to_be_enabled()
    void.click()
    expect(status).to_contain_text("Voided 1 of 1 items.")
    expect(form.locator(".paynb-result")).to_contain_text("voided")

    assert client.ach.get(item_id)["itemStatus"] == "V"


def test_instant_card_form_checks_the_route_and_sends(notebook04: labdriver.Lab):
    _assert_widgets_rendered(notebook04, {"instant": 1, "rtp": 1})
    page = notebook04.page
    form = page.locator(".paynb-form-instant")
    status = form.locator(".paynb-status")
    send = form.locator("button.paynb-submit")
    card = "5105105105105100"  # not in the notebook's source, so the page check means something
    reference = _reference("BR-CARD")

    # Step 2 stays closed until the route is checked.
    expect(form.locator(".paynb-field-amount input")).to_be_disabled()
    expect(send).to_be_disabled()
    card_input = form.locator(".paynb-field-cardNumber input")
    expect(card_input).to_have_attribute("type", "password")
    card_input.fill(card)
    form.locator("button.paynb-check-route").click()
    expect(status).to_contain_text("Route available up to 2500000")
    expect(form.locator(".paynb-route")).to_contain_text("Mastercard")

    for wire, text in {"nameOnCard": "ADA LOVELACE", "cardExpiration": "12/2031",
                       "totPassword": "123456", "amount": "2000",
                       "yourReferenceNumber": reference}.items():
        field = form.locator(f".paynb-field-{wire} input")
        expect(field).to_be_enabled()
        field.fill(text)
    expect(status).to_contain_text(f"Ready to send 2000, reference {reference}")
    expect(send).to_be_disabled()  # not before the confirmation
    confirm = form.locator(".paynb-confirm")
    expect(confirm).to_contain_text("paid out to card ****5100")
    confirm.locator("input[type=checkbox]").check()
    send.click()
    expect(status).to_contain_text("Sent: uniqueId")
    expect(status).to_contain_text("status Success")
    unique_id = re.search(r"uniqueId (\S+), status", status.inner_text()).group(1)
    # The secrets were emptied once sent, and the full card number is nowhere on the page.
    expect(card_input).to_have_value("")
    expect(form.locator(".paynb-field-totPassword input")).to_have_value("")
    assert card not in page.content()

    stored = notebook04.client().instant.get(unique_id)
    assert stored["yourReferenceNumber"] == reference
    assert stored["status"] == "Success"
    assert str(stored["cardLastFour"]) == card[-4:]
    assert int(stored["amount"]) == 2000


def _approvals_cells(reference: str) -> list[str]:
    """Two analysts of one team in one notebook: ana prepares a payment over the limit,
    bob's ApprovalsForm shows it (both clients share the kernels' journal)."""
    return [
        "import warnings\nfrom decimal import Decimal\nimport paynb\n"
        "warnings.simplefilter('ignore', paynb.PaynbWarning)\n"
        "policy = {'ach_over': '1000'}\n"
        "ana = paynb.connect(user='ana', dual_control=policy)\n"
        "bob = paynb.connect(user='bob', dual_control=policy)",
        "held = ana.ach.submit({'firstSignerFirstName': 'Ada', 'firstSignerLastName': 'Byron',"
        " 'state': 'NY', 'zip': '10001', 'yourReferenceNumber': " + repr(reference) + ","
        " 'bankRoutingNumber': '021000021', 'bankAccountNumber': '000123456789',"
        " 'achTransactionType': 'Credit', 'amount': Decimal('2500.00')})\nheld",
        "paynb.forms.ApprovalsForm(bob)",
    ]


@pytest.fixture(scope="module")
def approvals(lab: labdriver.Lab) -> tuple[labdriver.Lab, str]:
    """A notebook of the test's own: a held payment and bob's approvals form, run."""
    reference = _reference("BR-DUAL")
    name = lab.write_notebook("dual_control.ipynb", _approvals_cells(reference))
    lab.open(name)
    lab.run_all_rendering(name, ".paynb-form-approvals")
    return lab, reference


def test_approvals_form_approves_through_the_page(approvals: tuple[labdriver.Lab, str]):
    lab, reference = approvals
    page = lab.page
    assert reference in lab.notebook_text()
    assert "awaiting approval by another analyst" in lab.notebook_text()
    form = page.locator(".paynb-form-approvals")
    expect(form.locator(".paynb-approvals-queue")).to_contain_text(reference)
    expect(form.locator(".paynb-approvals-queue")).to_contain_text("****6789")
    expect(form.locator(".paynb-approvals-honesty")).to_contain_text(
        "the service does not enforce dual control")
    approve = form.locator("button.paynb-approve")
    expect(approve).to_be_disabled()  # not before the confirmation
    assert lab.client().ach.list(progress=False).query(
        "yourReferenceNumber == @reference").empty  # nothing sent yet
    confirm = form.locator(".paynb-confirm")
    expect(confirm).to_contain_text("approve and send approval")
    expect(confirm).to_contain_text("prepared by ana")
    confirm.locator("input[type=checkbox]").check()
    expect(approve).to_be_enabled()
    approve.click()
    status = form.locator(".paynb-status")
    expect(status).to_contain_text("and sent it: 1 item answered.")
    expect(form.locator(".paynb-result")).to_contain_text(reference)
    expect(form.locator(".paynb-approvals-queue")).to_contain_text("Nothing is waiting")

    listed = lab.client().ach.list(progress=False)
    stored = listed[listed["yourReferenceNumber"] == reference]
    assert len(stored) == 1
    assert Decimal(str(stored["amount"].iloc[0])) == Decimal("2500.00")
