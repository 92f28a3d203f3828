"""The texts docs/forms.md quotes are the forms' real texts: each is produced here and looked
up in the page (line breaks ignored), so a change of wording fails until the page follows."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pandas as pd

from paynb.forms import AchForm, BulkSubmitForm, InstantCardForm

PAGE = Path(__file__).resolve().parents[2] / "docs" / "forms.md"


def _quoted(text: str) -> None:
    page = re.sub(r"\s+", " ", PAGE.read_text(encoding="utf-8"))
    assert f'"{text}"' in page, f"docs/forms.md does not quote the form's text: {text!r}"


def test_the_status_line_of_missing_and_wrong_fields(client, fill, ach_values) -> None:
    form = AchForm(client)
    del ach_values["zip"], ach_values["amount"]
    fill(form, **{**ach_values, "bankRoutingNumber": "021000022"})
    _quoted(form.status_text)


def test_the_single_confirmation_and_header(client, fill, ach_values) -> None:
    form = AchForm(client)
    fill(form, **ach_values)
    _quoted(form.confirm.description.replace(ach_values["yourReferenceNumber"],
                                             "INV-2026-0001"))
    _quoted(form.status_text.replace(ach_values["yourReferenceNumber"], "INV-2026-0001"))
    _quoted(form.environment.label)
    _quoted(form.where)


def test_the_status_line_after_a_submission(client, fill, ach_values) -> None:
    form = AchForm(client)
    fill(form, **ach_values)
    form.confirm.value = True
    form.submit_button.click()
    shown = (form.status_text
             .replace(f"item {form.result['achItemId']},", "item 2001,")
             .replace(ach_values["yourReferenceNumber"], "INV-2026-0001"))
    _quoted(shown)


def test_the_bulk_confirmation_and_progress(client, ref, ach_values) -> None:
    base = {k: v for k, v in ach_values.items() if k != "yourReferenceNumber"}
    rows = pd.DataFrame([{**base, "yourReferenceNumber": ref(f"d{n}"), "amount": Decimal(a),
                          "bankAccountNumber": account}
                         for n, (a, account) in enumerate([("10.00", "111122223333"),
                                                           ("20.55", "444455556666"),
                                                           ("30.25", "7777'8888")])])
    form = BulkSubmitForm(client, items=rows)
    _quoted(form.confirm.description)
    # The page's example is a set of 2500 rows in 3 requests (test_bulk.py sends a set in
    # several requests and checks the whole sequence of these lines).
    form._chunk_answered(1, 3)
    _quoted(form.status_text.replace("3 rows", "2500 rows"))


def test_the_status_line_after_an_instant_payment(client, fill, ref) -> None:
    form = InstantCardForm(client)
    fill(form, cardNumber="4111111111111111")
    form.check_button.click()
    fill(form, nameOnCard="JANE DOE", cardExpiration="12/2099", totPassword="123456",
         amount="1500", yourReferenceNumber=ref("doc"))
    form.confirm.value = True
    form.submit_button.click()
    _quoted(form.status_text.replace(str(form.result["uniqueId"]), "IC-…"))
