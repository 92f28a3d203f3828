"""Instant card and RTP: route checks from the documented tables, check-before-send, outcomes."""

from __future__ import annotations

import pytest
from sandbox_helpers import INSTANT, RTP, problem, ref

ROUTES = "/api/v3/InstantRoutes/companycode/{company}"
MISSPELT = "/api/v3/InstantTransactinos/companycode/{company}/{id}"
VISA = "4111111111111111"


def card_payment(card: str = VISA, **changes):
    body = {"nameOnCard": "JANE DOE", "cardNumber": card, "cardExpiration": "12/2099",
            "amount": 1000, "yourReferenceNumber": ref("IC")}
    body.update(changes)
    return body


def rtp_payment(routing: str = "021000021", **changes):
    body = {"name": "Jane Doe", "firstName": "Jane", "lastName": "Doe",
            "routingNumber": routing, "accountNumber": "000123456789", "amount": 2500,
            "yourReferenceNumber": ref("RTP")}
    body.update(changes)
    return body


@pytest.mark.parametrize(("card", "brand", "supported", "reachable", "limit"), [
    (VISA, "Visa", True, True, 5_000_000),
    ("4000000000000002", "Visa", True, False, 5_000_000),
    ("5555555555554444", "Mastercard", True, True, 2_500_000),
    ("2223003122003222", "Mastercard", True, True, 2_500_000),
    ("6011111111111117", "Discover", True, True, 1_000_000),
    ("378282246310005", "American Express", False, False, None),
    ("3530111333300000", "Unknown", False, False, None),
])
def test_card_route_table(api, card, brand, supported, reachable, limit):
    answer = api.post(ROUTES, {"cardNumber": card})
    assert answer.status_code == 200
    body = answer.json()
    assert (body["cardBrand"], body["supported"], body["reachable"]) == (brand, supported,
                                                                         reachable)
    assert body["cardLastFour"] == card[-4:]
    assert card not in answer.text
    if limit:
        assert body["paymentTypes"] == [{"type": "Push", "maxAmount": limit,
                                         "currency": "USD"}]
    else:
        assert body["paymentTypes"] == []


@pytest.mark.parametrize(("token", "supported", "reachable"), [
    ("tok_abc", True, True), ("tok_unreachable_1", True, False),
    ("tok_unsupported_1", False, False)])
def test_token_route(api, token, supported, reachable):
    body = api.post(ROUTES + "/token", {"tokenId": token, "yourSubClientId": "sub-1"}).json()
    assert (body["supported"], body["reachable"]) == (supported, reachable)
    assert len(body["cardLastFour"]) == 4


def test_route_check_body_errors(api):
    assert list(problem(api.post(ROUTES, {"cardNumber": "4111"}), 400)["errors"]) == [
        "cardNumber"]
    assert list(problem(api.post(ROUTES + "/token", {"tokenId": "t"}), 400)["errors"]) == [
        "yourSubClientId"]


def test_send_without_route_check_is_400(api):
    body = problem(api.post(INSTANT, card_payment("5105105105105100")), 400)
    assert body["title"] == "Route not checked"
    assert list(body["errors"]) == ["cardNumber"]


def test_failed_route_check_does_not_allow_sending(api):
    card = "4000000000000077"  # prefix 400000: supported but not reachable
    assert api.post(ROUTES, {"cardNumber": card}).json()["reachable"] is False
    problem(api.post(INSTANT, card_payment(card)), 400)


def test_send_after_route_check(api):
    api.post(ROUTES, {"cardNumber": VISA})
    payment = card_payment()
    answer = api.post(INSTANT, payment)
    assert answer.status_code == 200
    record = answer.json()["transaction"]
    assert VISA not in answer.text
    assert record["cardLastFour"] == "1111"
    assert record["status"] == "Success" and record["statusCode"] == "00"
    assert record["amount"] == 1000
    assert record["yourReferenceNumber"] == payment["yourReferenceNumber"]
    for path in (MISSPELT, INSTANT + "/{id}"):
        fetched = api.get(path.replace("{id}", record["uniqueId"]))
        assert fetched.json() == {"transaction": record}
    listed = api.get(INSTANT, params={"yourReferenceNumber": payment["yourReferenceNumber"]})
    assert listed.json()["transactions"] == [record]


def test_route_check_is_per_company(api):
    api.post(ROUTES, {"cardNumber": "6011000990139424"}, company="DEMO2")
    problem(api.post(INSTANT, card_payment("6011000990139424")), 400)
    assert api.post(INSTANT, card_payment("6011000990139424"), company="DEMO2").ok


@pytest.mark.parametrize(("amount", "status", "code"), [(1051, "Failed", "51"),
                                                        (1005, "Failed", "05"),
                                                        (1014, "Failed", "14"),
                                                        (1099, "Success", "00")])
def test_card_outcomes_follow_the_amount(api, amount, status, code):
    api.post(ROUTES, {"cardNumber": VISA})
    record = api.post(INSTANT, card_payment(amount=amount)).json()["transaction"]
    assert (record["status"], record["statusCode"]) == (status, code)


def test_amount_above_the_route_limit_is_400(api):
    api.post(ROUTES, {"cardNumber": "6011111111111117"})
    body = problem(api.post(INSTANT, card_payment("6011111111111117", amount=1_000_001)), 400)
    assert list(body["errors"]) == ["amount"]


def test_send_by_token(api):
    problem(api.post(INSTANT, {"tokenId": "tok_zz", "yourSubClientId": "s", "amount": 500,
                               "yourReferenceNumber": ref("IC")}), 400)
    api.post(ROUTES + "/token", {"tokenId": "tok_zz", "yourSubClientId": "s"})
    answer = api.post(INSTANT, {"tokenId": "tok_zz", "yourSubClientId": "s", "amount": 500,
                                "yourReferenceNumber": ref("IC")})
    assert answer.status_code == 200
    assert answer.json()["transaction"]["cardBrand"] == "Visa"


def test_unknown_unique_id_is_404(api):
    problem(api.get(MISSPELT.replace("{id}", "nope")), 404)
    problem(api.get(RTP + "/nope"), 404)


# -- RTP -------------------------------------------------------------------------------


@pytest.mark.parametrize(("routing", "supported", "reachable", "limit"), [
    ("021000021", True, True, 100_000_000), ("031176110", True, True, 2_500_000),
    ("011000138", True, False, 100_000_000), ("061000052", False, False, None)])
def test_rtp_route_table(api, routing, supported, reachable, limit):
    body = api.get(f"/api/v3/InstantRtpRoutes/{routing}").json()
    assert (body["routingNumber"], body["supported"], body["reachable"]) == (
        routing, supported, reachable)
    assert (body["paymentTypes"][0]["maxAmount"] if limit else None) == limit
    assert (body["bankName"] is None) is (not supported)


def test_rtp_route_of_a_bad_routing_number(api):
    body = problem(api.get("/api/v3/InstantRtpRoutes/123456789"), 400)
    assert list(body["errors"]) == ["routingNumber"]


def test_rtp_send_needs_a_route_inquiry(api):
    problem(api.post(RTP, rtp_payment("121000248")), 400)
    api.get("/api/v3/InstantRtpRoutes/121000248")
    answer = api.post(RTP, rtp_payment("121000248"))
    assert answer.status_code == 200
    record = answer.json()["transaction"]
    assert (record["status"], record["statusCode"]) == ("Success", "ACSC")
    assert api.get(RTP + f"/{record['uniqueId']}").json() == {"transaction": record}


def test_rtp_unreachable_bank_does_not_allow_sending(api):
    api.get("/api/v3/InstantRtpRoutes/011000138")
    problem(api.post(RTP, rtp_payment("011000138")), 400)


@pytest.mark.parametrize(("changes", "code"), [({"amount": 1004}, "AC04"),
                                               ({"amount": 1003}, "AC03"),
                                               ({"amount": 1051}, "AM04"),
                                               ({"accountNumber": "999123456"}, "AC06")])
def test_rtp_failures(api, changes, code):
    api.get("/api/v3/InstantRtpRoutes/026009593")
    record = api.post(RTP, rtp_payment("026009593", **changes)).json()["transaction"]
    assert (record["status"], record["statusCode"]) == ("Failed", code)


def test_rtp_amount_over_the_bank_limit(api):
    api.get("/api/v3/InstantRtpRoutes/111000025")
    problem(api.post(RTP, rtp_payment("111000025", amount=500_001)), 400)


def test_instant_and_rtp_lists(api):
    for path, key in ((INSTANT, "creditAmount"), (RTP, "creditAmount")):
        body = api.get(path, params={"pageSize": 5}).json()
        assert body["total"] >= 5 and len(body["transactions"]) == 5
        assert isinstance(body[key], int) and body[key] > 0
        # ACH filters mean nothing here and are ignored
        assert api.get(path, params={"itemStatus": "R"}).json()["total"] == body["total"]
