"""The model-driven field builder: widgets, labels and validation come from the models."""

from __future__ import annotations

from decimal import Decimal

import ipywidgets as widgets
import pytest

from paynb.forms import FieldSet
from paynb.models import AchItem, InstantCardTransaction, RccItem


def test_widgets_follow_the_field_types_and_metadata() -> None:
    fields = FieldSet(AchItem)
    # Every field of the model; a nested model's fields under its name, with dots.
    wires = [w for w in AchItem.wire_names().values() if w != "iatAddenda"]
    assert [w for w in fields.fields if "." not in w] == wires
    assert [w for w in fields.fields if "." in w] == [
        "iatAddenda.transactionTypeCode", *(f"iatAddenda.foreignBeneficiaryPayer.{w}" for w in
                                            ("name", "streetAddress", "city", "stateCode",
                                             "postalCode", "countryCode"))]
    assert fields.groups == {"iatAddenda": "IAT addenda",
                             "iatAddenda.foreignBeneficiaryPayer": "Foreign beneficiary or payer"}
    assert "paynb-field-iatAddenda-transactionTypeCode" in \
        fields["iatAddenda.transactionTypeCode"].row._dom_classes
    # Open sets offer the known values and take others; the closed one is a dropdown.
    assert isinstance(fields["achAccountType"].input, widgets.Combobox)
    assert "PersonalChecking" in fields["achAccountType"].input.options
    assert not fields["achAccountType"].input.ensure_option
    assert isinstance(fields["achEntryClass"].input, widgets.Combobox)
    assert isinstance(fields["achEffectiveDate"].input, widgets.DatePicker)
    assert isinstance(fields["sameDayAchRequested"].input, widgets.Checkbox)
    assert isinstance(fields["achTransactionType"].input, widgets.Dropdown)
    assert fields["achTransactionType"].input.options == (("—", None), ("Debit", "Debit"),
                                                          ("Credit", "Credit"))
    assert fields["achAccountType"].input.value == "Checking"  # the model's default
    assert isinstance(fields["amount"].input, widgets.Text)  # not FloatText: exact
    assert isinstance(fields["bankAccountNumber"].input, widgets.Password)  # secret
    assert isinstance(fields["firstSignerFirstName"].input, widgets.Text)
    assert fields["bankRoutingNumber"].input.placeholder == "021000021"
    assert "Routing number" in fields["bankRoutingNumber"].label.value
    assert "Nine-digit ABA routing number" in fields["bankRoutingNumber"].help.value
    assert "paynb-field-bankRoutingNumber" in fields["bankRoutingNumber"].row._dom_classes


def test_optional_fields_are_marked() -> None:
    fields = FieldSet(RccItem)
    assert "(optional)" in fields["address2"].label.value
    assert "(optional)" not in fields["address1"].label.value


def test_amount_stays_an_exact_decimal() -> None:
    fields = FieldSet(AchItem)
    for wire, value in {"firstSignerFirstName": "Jane", "firstSignerLastName": "Doe",
                        "state": "ny", "zip": "10001", "yourReferenceNumber": "R-1",
                        "bankRoutingNumber": "021000021", "bankAccountNumber": "12345678",
                        "achTransactionType": "Debit", "amount": " 0.10 "}.items():
        fields[wire].value = value
    item, errors = fields.check()
    assert errors == {}
    assert item.amount == Decimal("0.10") and str(item.amount) == "0.10"
    assert item.state == "NY"


def test_errors_show_only_on_touched_fields_but_the_summary_names_all() -> None:
    fields = FieldSet(AchItem)
    fields["bankRoutingNumber"].value = "021000022"  # checksum fails
    _, errors = fields.check()
    fields.show(errors)
    assert "checksum" in fields["bankRoutingNumber"].error.value
    assert "paynb-invalid" in fields["bankRoutingNumber"].input._dom_classes
    assert fields["amount"].error.value == ""  # untouched: no shouting yet
    summary = fields.problems(errors)
    assert "Missing: First name" in summary and "Amount" in summary
    assert "To fix: Routing number (is not a valid ABA routing number" in summary
    fields.show(errors, everywhere=True)
    assert "required" in fields["amount"].error.value


def test_a_bad_amount_is_a_message_not_a_crash() -> None:
    fields = FieldSet(AchItem)
    fields["amount"].value = "12,5x"
    _, errors = fields.check()
    assert errors["amount"] == ["must be a number"]


def test_service_error_keys_are_matched_to_fields() -> None:
    fields = FieldSet(AchItem)
    on_fields, rest = fields.service_errors({"$.BankAccountNumber": ["blocked"],
                                             "items[0].amount": ["too big"], "x": ["odd"]})
    assert on_fields == {"bankAccountNumber": ["blocked"], "amount": ["too big"]}
    assert rest == ["x: odd"]


def test_clearing_secrets_leaves_the_rest() -> None:
    fields = FieldSet(InstantCardTransaction)
    fields["cardNumber"].value = "4111111111111111"
    fields["totPassword"].value = "123456"
    fields["amount"].value = "1500"
    fields.clear(secrets_only=True)
    assert fields["cardNumber"].input.value == "" and fields["totPassword"].input.value == ""
    assert fields["amount"].value == "1500"


def test_a_form_can_require_fields_the_model_leaves_optional() -> None:
    fields = FieldSet(InstantCardTransaction)
    assert fields["nameOnCard"].optional and not fields["nameOnCard"].required
    fields.require(["nameOnCard"])
    assert fields["nameOnCard"].required and "(optional)" not in fields["nameOnCard"].label.value
    assert "(optional)" in fields["tokenId"].label.value
    assert fields["amount"].required  # the model's required fields stay required
    assert fields.check()[1]["nameOnCard"] == ["is required"]
    fields["nameOnCard"].visible = False  # a hidden field is never asked for
    assert "nameOnCard" not in fields.check()[1]
    fields.require([])
    assert "(optional)" in fields["nameOnCard"].label.value
    with pytest.raises(ValueError, match="wires names no field of InstantCardTransaction: bogus"):
        fields.require(["bogus"])
