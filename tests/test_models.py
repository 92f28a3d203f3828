"""The shared request models and rules: the one definition the client, forms and sandbox use."""

from __future__ import annotations

import datetime as dt
import json
from decimal import Decimal

import pytest

from paynb import models, validation
from paynb._json import dumps

ACH = {
    "firstSignerFirstName": "Jane",
    "firstSignerLastName": "Doe",
    "state": "NY",
    "zip": "10001",
    "yourReferenceNumber": "INV-1",
    "bankRoutingNumber": "021000021",
    "bankAccountNumber": "000123456789",
    "achTransactionType": "Debit",
    "amount": "125.10",
}
RCC = {
    "firstSignerFirstName": "Jane",
    "firstSignerLastName": "Doe",
    "address1": "1 Main St",
    "city": "Springfield",
    "state": "IL",
    "zip": "62701 1234",
    "yourReferenceNumber": "RCC-1",
    "bankRoutingNumber": "011000015",
    "bankAccountNumber": "12345678",
    "amount": 19.99,
}


@pytest.mark.parametrize(
    ("routing", "ok"),
    [("021000021", True), ("011000015", True), ("021000022", False), ("12345678", False),
     ("02100002a", False)],
)
def test_aba_checksum(routing: str, ok: bool) -> None:
    assert validation.aba_checksum_ok(routing) is ok


@pytest.mark.parametrize(
    ("number", "ok"),
    [("4111111111111111", True), ("5555555555554444", True), ("4111111111111112", False),
     ("abcd", False)],
)
def test_luhn(number: str, ok: bool) -> None:
    assert validation.luhn_ok(number) is ok


def test_valid_ach_item_goes_on_the_wire_in_camel_case_with_exact_amount() -> None:
    item = models.AchItem.model_validate(ACH)
    body = json.loads(dumps(item.to_wire()), parse_float=Decimal)
    assert body["bankRoutingNumber"] == "021000021"
    assert body["achAccountType"] == "Checking"
    assert body["achEntryClass"] == "PPD"
    assert "achTransactionSubType" not in body
    assert body["amount"] == Decimal("125.10")
    assert '"amount":125.10' in dumps(item.to_wire())


def test_snake_case_input_is_accepted_too() -> None:
    item = models.AchItem(first_signer_first_name="Jane", first_signer_last_name="Doe",
                          state="ny", zip="10001", your_reference_number="R",
                          bank_routing_number="021000021", bank_account_number="1234",
                          ach_transaction_type="Credit", amount=Decimal("1.00"))
    assert item.state == "NY"
    assert item.to_wire()["firstSignerFirstName"] == "Jane"


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"bankRoutingNumber": "021000022"}, "bankRoutingNumber", "checksum"),
        ({"bankRoutingNumber": 21000021}, "bankRoutingNumber", "must be text"),
        ({"bankAccountNumber": "1234'5678"}, "bankAccountNumber", "letters, digits"),
        ({"state": "XX"}, "state", "not a US state"),
        ({"zip": "1234"}, "zip", "5 digits"),
        ({"amount": "0"}, "amount", "greater than 0"),
        ({"amount": "-5"}, "amount", "must not be negative"),
        ({"amount": "1.005"}, "amount", "2 decimal"),
        ({"amount": "ten"}, "amount", "number"),
        ({"amount": True}, "amount", "number"),
        ({"achTransactionType": "Refund"}, "achTransactionType", "Debit"),
        ({"achEntryClass": "P\x01D"}, "achEntryClass", "control characters"),
        ({"countryCode": "USA"}, "countryCode", "two-letter country code"),
        ({"achPaymentTypeCode": "RSX"}, "achPaymentTypeCode", "at most 2 characters"),
        ({"achTransactionDiscretionaryData": "ABC"}, "achTransactionDiscretionaryData",
         "at most 2 characters"),
        ({"achTransactionCode": "twenty"}, "achTransactionCode", "whole number"),
        ({"achCheckNumber": -1}, "achCheckNumber", "greater than or equal to 0"),
        ({"sendDate": "2025-13-40"}, "sendDate", "ISO 8601"),
        ({"yourReferenceNumber": "   "}, "yourReferenceNumber", "blank"),
        ({"unexpected": 1}, "unexpected", "not a field"),
    ],
)
def test_each_bad_ach_field_is_named(change: dict, field: str, message: str) -> None:
    model, errors = models.check(models.AchItem, {**ACH, **change})
    assert model is None
    assert list(errors) == [field]
    assert message in errors[field][0]


def test_prenote_is_a_zero_amount_entry() -> None:
    prenote = {**ACH, "achTransactionSubType": "Prenote", "amount": 0}
    assert models.check(models.AchItem, prenote)[1] == {}
    assert models.check(models.AchItem, {**prenote, "amount": 5})[1] == {
        "amount": ["must be 0 for a prenote (a prenote carries no money)"]}
    # A credit prenote is NACHA's (codes 23, 33): sent, with a warning that the service
    # documents prenotes as debits.
    credit, errors = models.check(models.AchItem, {**prenote, "achTransactionType": "Credit"})
    assert errors == {} and credit is not None
    assert [a.field for a in credit.advisories()] == ["achTransactionType"]


def test_every_error_is_reported_at_once_and_values_are_never_quoted() -> None:
    bad = {**ACH, "bankAccountNumber": "9999'8888", "state": "XX", "amount": "1.001"}
    _, errors = models.check(models.AchItem, bad)
    assert set(errors) == {"bankAccountNumber", "state", "amount"}
    assert "9999" not in json.dumps(errors)


def test_rcc_zip_needs_a_space_before_the_extension() -> None:
    assert models.check(models.RccItem, RCC)[1] == {}
    assert "zip" in models.check(models.RccItem, {**RCC, "zip": "62701-1234"})[1]


def test_bulk_errors_name_the_row() -> None:
    body = {"alwaysCommitValid": False, "items": [ACH, {**ACH, "amount": -1}]}
    _, errors = models.check(models.AchBulkRequest, body)
    assert errors == {"items[1].amount": [
        "must not be negative (the transaction type says debit or credit)"]}
    assert models.check(models.AchBulkRequest, {"items": []})[1] == {"items": ["must not be empty"]}


def test_instant_card_needs_card_data_or_a_token() -> None:
    card = {"nameOnCard": "JANE DOE", "cardNumber": "4111 1111 1111 1111",
            "cardExpiration": "12/2099", "amount": 1000, "yourReferenceNumber": "IC-1",
            "totPassword": "123456"}
    model, errors = models.check(models.InstantCardTransaction, card)
    assert errors == {}
    assert model.card_number == "4111111111111111"
    assert "4111" not in repr(model) and "123456" not in repr(model)
    expired = {**card, "cardExpiration": "01/2001"}
    assert models.check(models.InstantCardTransaction, expired)[1] == {
        "cardExpiration": ["card has expired"]}
    assert models.check(models.InstantCardTransaction, {**card, "amount": 10.5})[1] == {
        "amount": ["must be a whole number"]}
    token = {"tokenId": "tok_1", "yourSubClientId": "sub-1", "amount": 5,
             "yourReferenceNumber": "IC-2"}
    assert models.check(models.InstantCardTransaction, token)[1] == {}
    assert models.check(models.InstantCardTransaction,
                        {k: v for k, v in token.items() if k != "yourSubClientId"})[1] == {
        "yourSubClientId": ["is required with a token id"]}


def test_card_expiration_is_judged_against_the_given_day() -> None:
    assert validation.check_card_expiration("11/2026", today=dt.date(2026, 11, 21)) is None
    assert validation.check_card_expiration("10/2026", today=dt.date(2026, 11, 21))
    assert validation.check_card_expiration("13/2030")


def test_card_expiration_is_judged_on_the_utc_day_not_this_machines() -> None:
    """At 05:00 on 1 November in Tokyo it is 20:00 on 31 October UTC: a card of 10/2026
    is still good for the service (UTC), so paynb does not refuse it."""
    from zoneinfo import ZoneInfo

    import time_machine

    tokyo = ZoneInfo("Asia/Tokyo")
    with time_machine.travel(dt.datetime(2026, 11, 1, 5, 0, tzinfo=tokyo), tick=False):
        assert dt.date.today() == dt.date(2026, 11, 1)  # the local day has moved on
        assert validation.check_card_expiration("10/2026") is None
    with time_machine.travel(dt.datetime(2026, 11, 1, 9, 0, tzinfo=tokyo), tick=False):
        assert validation.check_card_expiration("10/2026") == "card has expired"


@pytest.mark.parametrize("text", ["٠٢١٠٠٠٠٢١", "²²²²²²²²²", "０２１００００２１"])
def test_digits_of_other_scripts_are_not_a_routing_number(text) -> None:
    """Python's str.isdigit() takes Arabic-Indic, superscript and full-width digits; the
    service's fields are ASCII: refused with the rule, never a raw int() error."""
    assert validation.check_routing_number(text) == "must be exactly 9 digits"
    assert validation.aba_checksum_ok(text) is False


def test_digits_of_other_scripts_are_not_a_card_number_or_expiry() -> None:
    assert validation.check_card_number("٤١١١١١١١١١١١١١١١") == "must be 13 to 19 digits"
    assert validation.check_card_expiration("١٢/٢٠٢٩") == "must have the shape MM/YYYY"


def test_void_ids_must_be_positive_integers() -> None:
    assert models.check(models.AchVoidByIds, {"achItemIds": [1, 2]})[1] == {}
    assert set(models.check(models.AchVoidByIds, {"achItemIds": [1, "2", 0]})[1]) == {
        "achItemIds[1]", "achItemIds[2]"}


def test_decimal_json_keeps_every_digit() -> None:
    text = dumps({"amounts": [Decimal("0.10"), Decimal("1E+2"), Decimal("12345678.99")]})
    assert text == '{"amounts":[0.10,100,12345678.99]}'
    with pytest.raises(ValueError, match="finite"):
        dumps({"amount": Decimal("NaN")})
