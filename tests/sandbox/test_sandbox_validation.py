"""Every field rule (from paynb.models) answers 400 naming the field; bad bodies never 500."""

from __future__ import annotations

from decimal import Decimal

import pytest
import requests
from sandbox_helpers import ACH, INSTANT, RCC, RTP, ach_item, problem, rcc_item, ref

from paynb.models import AchItem, RccItem, check

ACH_CASES = [
    ({"bankRoutingNumber": "021000022"}, "bankRoutingNumber"),  # checksum
    ({"bankRoutingNumber": "02100002"}, "bankRoutingNumber"),  # eight digits
    ({"bankRoutingNumber": 21000021}, "bankRoutingNumber"),  # a number, not text
    ({"bankAccountNumber": "12'345"}, "bankAccountNumber"),  # the spec's apostrophe
    ({"bankAccountNumber": "12"}, "bankAccountNumber"),
    ({"state": "XX"}, "state"),
    ({"state": "New York"}, "state"),
    ({"zip": "1000"}, "zip"),
    ({"zip": "10001-12"}, "zip"),
    ({"amount": 0}, "amount"),
    ({"amount": -5}, "amount"),
    ({"amount": Decimal("1.005")}, "amount"),
    ({"amount": "lots"}, "amount"),
    ({"amount": [1]}, "amount"),
    ({"amount": True}, "amount"),
    ({"achTransactionType": "Refund"}, "achTransactionType"),
    # Entry class, account type and sub-type are open sets: unknown values are accepted
    # (docs/validation.md), as is a credit prenote (NACHA codes 23, 33).
    ({"achEntryClass": "P\x01D"}, "achEntryClass"),
    ({"achTransactionSubType": "Prenote", "amount": 5}, "amount"),
    ({"achEntryClass": "IAT"}, "iatAddenda"),
    ({"sameDayAchRequested": True, "amount": Decimal("1000000.01")}, "amount"),
    ({"achEffectiveDate": "2025-02-30"}, "achEffectiveDate"),
    ({"countryCode": "USA"}, "countryCode"),
    ({"firstSignerFirstName": "   "}, "firstSignerFirstName"),
    ({"yourReferenceNumber": "A'B"}, "yourReferenceNumber"),
    ({"unknownField": 1}, "unknownField"),
    ({"firstSignerLastName": None}, "firstSignerLastName"),
]


@pytest.mark.parametrize(("change", "field"), ACH_CASES)
def test_ach_rule_names_the_field(api, change, field):
    item = ach_item(**change)
    if not check(AchItem, item)[1]:
        # An open set (entry class, account type, sub-type...) whose unknown values the
        # models let through with a warning (docs/validation.md): the sandbox stores the
        # item as given, never stricter than the models.
        answer = api.post(ACH, item)
        assert answer.status_code == 200, answer.text
        assert answer.json()["transaction"][field] == item[field]
        return
    body = problem(api.post(ACH, item), 400)
    assert body["title"] == "One or more validation errors occurred."
    assert list(body["errors"]) == [field]
    assert all(isinstance(m, str) and m for m in body["errors"][field])


def test_missing_field_is_named(api):
    item = ach_item()
    del item["bankRoutingNumber"]
    assert problem(api.post(ACH, item), 400)["errors"] == {"bankRoutingNumber": ["is required"]}


def test_error_messages_do_not_quote_values(api):
    body = problem(api.post(ACH, ach_item(bankAccountNumber="98'7654321")), 400)
    assert "987654321" not in str(body) and "98'7" not in str(body)


def test_sandbox_and_models_agree(api):
    """The sandbox answers exactly the errors paynb.models finds (one source of rules)."""
    for change, _ in ACH_CASES[:12]:
        item = ach_item(**change)
        _, expected = check(AchItem, item)
        assert problem(api.post(ACH, item), 400)["errors"] == expected


@pytest.mark.parametrize(("change", "field"), [
    ({"zip": "62701-1234"}, "zip"),  # RCC wants a space before the extension
    ({"city": ""}, "city"),
    ({"amount": 0}, "amount"),
    ({"address1": "x" * 51}, "address1"),
])
def test_rcc_rules(api, change, field):
    item = rcc_item(**change)
    body = problem(api.post(RCC, item), 400)
    assert list(body["errors"]) == [field]
    assert body["errors"] == check(RccItem, item)[1]


def test_snake_case_names_are_accepted(api):
    item = AchItem.model_validate(ach_item()).model_dump(mode="json")
    assert "bank_routing_number" in item
    assert api.post(ACH, item).status_code == 200


def _instant(**changes):
    body = {"nameOnCard": "JANE DOE", "cardNumber": "4111111111111111",
            "cardExpiration": "12/2099", "amount": 1000, "yourReferenceNumber": ref("IC")}
    body.update(changes)
    return body


@pytest.mark.parametrize(("change", "field"), [
    ({"cardNumber": "4111111111111112"}, "cardNumber"),  # Luhn
    ({"cardExpiration": "01/2020"}, "cardExpiration"),  # past
    ({"cardExpiration": "13/2030"}, "cardExpiration"),
    ({"cardExpiration": "2030-01"}, "cardExpiration"),
    ({"amount": Decimal("10.5")}, "amount"),
    ({"amount": 0}, "amount"),
    ({"totPassword": "12ab"}, "totPassword"),
    ({"cardExpiration": None}, "cardExpiration"),
    ({"tokenId": "tok_1"}, "tokenId"),  # card and token
])
def test_instant_rules(api, change, field):
    body = _instant(**change)
    errors = problem(api.post(INSTANT, {k: v for k, v in body.items() if v is not None}),
                     400)["errors"]
    assert list(errors) == [field]
    assert "4111111111111112" not in str(errors)


@pytest.mark.parametrize(("change", "field"), [
    ({"routingNumber": "123456789"}, "routingNumber"),
    ({"amount": Decimal("1.5")}, "amount"),
    ({"accountNumber": "1 2 3 4"}, "accountNumber"),
])
def test_rtp_rules(api, change, field):
    body = {"firstName": "Jane", "lastName": "Doe", "routingNumber": "021000021",
            "accountNumber": "000123456789", "amount": 1000, "yourReferenceNumber": ref("RTP")}
    body.update(change)
    assert list(problem(api.post(RTP, body), 400)["errors"]) == [field]


# -- bad bodies ------------------------------------------------------------------------


def _raw(api, path, data, content_type="application/json"):
    return api.session.post(api.url(path), data=data, timeout=60,
                            headers={"Content-Type": content_type})


@pytest.mark.parametrize("data", [b"{", b"not json", b'{"amount": NaN}x', b"\xff\xfe",
                                  b'{"a": ' * 5000 + b"1" + b"}" * 5000])
def test_malformed_json_is_400(api, data):
    body = problem(_raw(api, ACH, data), 400)
    assert body["errors"] == {"body": ["is not valid JSON"]}


@pytest.mark.parametrize("data", [b"", b"   "])
def test_empty_body_is_400(api, data):
    assert "body" in problem(_raw(api, ACH, data), 400)["errors"]


@pytest.mark.parametrize("data", [b"[]", b"42", b'"text"', b"null"])
def test_body_that_is_not_an_object_is_400(api, data):
    problem(_raw(api, ACH, data), 400)


def test_huge_body_is_413(api):
    huge = b'{"firstSignerFirstName": "' + b"x" * (6 * 1024 * 1024) + b'"}'
    answer = _raw(api, ACH, huge)
    body = problem(answer, 413)
    assert body["title"] == "Payload Too Large"


def test_huge_chunked_body_is_413(api):
    def chunks():
        yield b'{"items": ['
        for _ in range(6 * 1024):
            yield b'"' + b"y" * 1024 + b'",'
        yield b"1]}"

    answer = api.session.post(api.url(ACH + "/many"), data=chunks(), timeout=60,
                              headers={"Content-Type": "application/json"})
    problem(answer, 413)


def test_wrong_method_is_405_problem(api):
    problem(api.call("DELETE", ACH), 405)


def test_bulk_over_the_item_limit(api):
    body = {"alwaysCommitValid": True, "items": [{}] * 10_001}
    assert problem(api.post(ACH + "/many", body), 400)["errors"] == {
        "items": ["must hold at most 10000 items"]}


def test_form_body_on_json_endpoint(api):
    answer = api.session.post(api.url(ACH), data={"a": "b"}, timeout=60)
    problem(answer, 400)


def test_no_500_for_odd_paths(sandbox):
    for path in ("/api/v3/AchTransactions/companycode/", "/apiv3/", "/api/v3/InstantRtpRoutes/",
                 "/api/v3/AchTransactions/companycode/DEMO1/%00"):
        answer = requests.get(sandbox.base_url + path, timeout=30)
        assert answer.status_code in (401, 404), (path, answer.status_code)
