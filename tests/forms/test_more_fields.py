"""AchForm's documented optional fields: the collapsed "More fields", the IAT addenda box,
and the certain NACHA rules shown as the analyst types (set .value, read the status line)."""

from __future__ import annotations

import datetime as dt

import ipywidgets as widgets

from paynb.forms import AchForm, RccForm


def _rows_of(box: widgets.Widget) -> list[str]:
    """The wire names of the field rows inside ``box`` (read from their CSS classes)."""
    found = []
    for child in getattr(box, "children", ()):
        classes = getattr(child, "_dom_classes", ())
        if "paynb-field" in classes:
            found += [c.removeprefix("paynb-field-") for c in classes
                      if c.startswith("paynb-field-")]
        else:
            found += _rows_of(child)
    return found


def test_more_fields_are_collapsed_and_the_everyday_ones_in_view(client) -> None:
    form = AchForm(client)
    assert "paynb-more-fields" in form.more._dom_classes
    assert form.more.selected_index is None  # collapsed
    assert form.more.titles == ("More fields",)
    assert form.more in form.widget.children
    # Built when opened (a field nobody opens costs its input alone in the saved notebook).
    assert _rows_of(form.more) == []
    form.more.selected_index = 0
    hidden = _rows_of(form.more)
    assert {"address1", "address2", "city", "countryCode", "achTransactionCode",
            "achPaymentTypeCode", "achCheckNumber", "achIdentificationNumber",
            "achCompanyDiscretionaryData", "achTransactionDiscretionaryData",
            "achAddendaText", "sendDate"} == set(hidden)
    shown = set(_rows_of(form.widget)) - set(hidden)
    for wire in ("sameDayAchRequested", "achCompanyEntryDescription", "achEffectiveDate",
                 "amount", "achEntryClass"):
        assert wire in shown and wire not in hidden


def test_rcc_form_has_no_empty_more_section(client) -> None:
    form = RccForm(client)
    assert form.more not in form.widget.children
    assert "(optional)" in form.fields["secondSignerFirstName"].label.value


def test_iat_addenda_show_only_for_entry_class_iat(client, fill, ach_values) -> None:
    form = AchForm(client)
    box = form.groups["iatAddenda"]
    assert "paynb-group-iatAddenda" in box._dom_classes
    assert box.layout.display == "none"
    fill(form, **ach_values)
    assert not form.confirm.disabled
    form.fields["achEntryClass"].value = "IAT"
    assert box.layout.display is None
    # NACHA: an IAT entry carries the IAT addenda; refused until they are given.
    assert form.confirm.disabled
    assert "IAT addenda (is required for an IAT entry" in form.status_text
    fill(form, **{"iatAddenda.transactionTypeCode": "SAL",
                  "iatAddenda.foreignBeneficiaryPayer.name": "Acme GmbH",
                  "iatAddenda.foreignBeneficiaryPayer.countryCode": "de"})
    assert not form.confirm.disabled, form.status_text
    item, _ = form._validate()
    assert item.to_wire()["iatAddenda"] == {
        "transactionTypeCode": "SAL",
        "foreignBeneficiaryPayer": {"name": "Acme GmbH", "countryCode": "DE"}}
    # Back to PPD: the box hides and its values are not sent.
    form.fields["achEntryClass"].value = "PPD"
    assert box.layout.display == "none"
    item, _ = form._validate()
    assert "iatAddenda" not in item.to_wire()


def test_same_day_over_the_limit_is_refused_as_typed(client, fill, ach_values) -> None:
    form = AchForm(client)
    fill(form, **{**ach_values, "amount": "1000000.01"})
    assert not form.confirm.disabled  # a next-day entry may carry it
    form.fields["sameDayAchRequested"].value = True
    assert form.confirm.disabled
    assert "1,000,000.00 for a same-day entry" in form.status_text
    form.fields["amount"].value = "1000000.00"
    assert not form.confirm.disabled
    assert form.status_text.startswith("Ready to submit a same-day debit of 1000000.00")


def test_unticked_same_day_is_not_sent(client, fill, ach_values) -> None:
    form = AchForm(client)
    fill(form, **ach_values)
    item, _ = form._validate()
    assert "sameDayAchRequested" not in item.to_wire()


def test_a_past_effective_date_is_a_note_not_a_refusal(client, fill, ach_values) -> None:
    form = AchForm(client)
    fill(form, **ach_values, achCompanyEntryDescription="PAYROLL")
    form.fields["achEffectiveDate"].value = dt.date(2020, 1, 6)
    assert not form.confirm.disabled
    assert "Note (sent anyway): Effective date: 2020-01-06 is in the past" in form.status_text
    assert "paynb-status-warn" in form.status.value
    assert "(PAYROLL)" in form.status_text
    form.confirm.value = True
    assert not form.submit_button.disabled  # a note, not a refusal


def test_an_unknown_account_type_is_a_note(client, fill, ach_values) -> None:
    form = AchForm(client)
    fill(form, **ach_values, achAccountType="Brokerage")
    assert not form.confirm.disabled
    assert "Account type: 'Brokerage' is not an account type paynb knows" in form.status_text
    form.fields["achAccountType"].value = "personalchecking"  # known, in any casing
    assert form.status_text.startswith("Ready to submit") and "Note" not in form.status_text


def test_an_answer_of_blocked_is_a_red_line(client, fill, ach_values, monkeypatch) -> None:
    """The sandbox answers a good single item W; a service answering B is stood in for by
    wrapping submit (the warning is the client's own, tested against a stub in
    tests/client/test_submission_status.py)."""
    import warnings

    from paynb.errors import SubmissionNotAcceptedWarning

    submit = client.ach.submit

    def answered_blocked(item, **options):
        row = submit(item, **options).copy()
        row["itemStatus"] = "B"
        warnings.warn(SubmissionNotAcceptedWarning(
            "the ACH item was answered I (invalid) or B (blocked), not W: status B "
            "(Blocked) - itemStatusDescription: Restricted state", status="B"), stacklevel=2)
        return row

    monkeypatch.setattr(client.ach, "submit", answered_blocked)
    form = AchForm(client)
    fill(form, **ach_values)
    form.confirm.value = True
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing printed under the cell: the form says it
        form.submit_button.click()
    assert "paynb-status-error" in form.status.value
    assert form.status_text.startswith("Not accepted: ")
    assert "status B (Blocked)" in form.status_text and "Restricted state" in form.status_text
    assert form.submit_button.disabled  # stored: not sent again from this form


def test_bulk_form_takes_the_documented_columns(client, ref) -> None:
    """A spreadsheet with same-day and entry-description columns: every column is a field
    (none ignored), text cells are read as the model reads them, and the limit holds."""
    import pandas as pd

    from paynb.forms import BulkSubmitForm

    base = {"firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
            "zip": "10001", "bankRoutingNumber": "021000021",
            "bankAccountNumber": "000123456789", "achTransactionType": "Credit",
            "achCompanyEntryDescription": "PAYROLL", "achEffectiveDate": "2030-01-07"}
    batch = pd.DataFrame([{**base, "yourReferenceNumber": ref("sd1"), "amount": "10.00",
                           "sameDayAchRequested": "true"},
                          {**base, "yourReferenceNumber": ref("sd2"), "amount": "1500000.00",
                           "same_day_ach_requested": "TRUE"}], dtype=str)
    form = BulkSubmitForm(client, items=batch)
    assert form._ignored == []
    assert form._rows[0]["sameDayAchRequested"] == "true"
    assert form.preview.value.count("paynb-row-valid") == 1
    assert "same-day entry" in form.preview.value  # the second row breaks the limit


def _saved_state() -> dict:
    """Every widget alive, as a notebook saves their state."""
    return widgets.Widget.get_manager_state()["state"]


def test_a_form_builds_its_rows_when_shown_and_shares_their_looks(client) -> None:
    """Issue 32: every widget's state is saved with the notebook, and an AchForm made some
    760 widgets (800 KB saved): notebook 07, which builds four, saved 3.4 MB."""
    import json

    before = set(_saved_state())
    form = AchForm(client)
    made = {model: state for model, state in _saved_state().items() if model not in before}
    assert len(made) < 250, len(made)
    assert len(json.dumps(made, indent=1)) < 250_000
    # The rows of "More fields" and of the IAT addenda come when they are first shown.
    assert _rows_of(form.more) == [] and _rows_of(form.groups["iatAddenda"]) == []
    form.more.selected_index = 0
    assert "address1" in _rows_of(form.more)
    form.fields["achEntryClass"].value = "IAT"
    assert "iatAddenda-transactionTypeCode" in _rows_of(form.groups["iatAddenda"])
    # The rows' layouts are shared: hiding one gives it its own, the others stay shown.
    city, state = form.fields["city"], form.fields["address2"]
    assert city.row.layout is state.row.layout
    city.visible = False
    assert city.row.layout.display == "none" and state.row.layout.display is None
    city.visible = True
    assert city.row.layout is state.row.layout
