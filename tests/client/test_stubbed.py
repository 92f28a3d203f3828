"""What the sandbox cannot produce, with ``responses`` stubs: odd envelopes and casings,
broken answers, lost answers, Retry-After, 401s, and the exact bytes on the wire."""

from __future__ import annotations

import json
from decimal import Decimal
from urllib.parse import parse_qsl, urlsplit

import pandas as pd
import pytest
import requests
import responses

from paynb.config import Credentials
from paynb.errors import (
    AuthenticationError,
    BadRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    ResponseFormatError,
    ServerError,
    TransportError,
)

pytestmark = pytest.mark.guards_unchecked

BASE = "https://svc.test"
AUTH = "https://auth.test"
ACH = f"{BASE}/api/v3/AchTransactions/companycode/DEMO1"
SECRET_WORDS = ("stub-client-secret", "stub-password", "tok-1", "tok-2")


def ach_record(item_id: int, **extra):
    record = {"achItemId": item_id, "yourReferenceNumber": f"R{item_id}", "amount": 1.5,
              "itemStatus": "W", "bankAccountNumber": "000123456789"}
    record.update(extra)
    return record


def requests_to(stub, method, url_prefix):
    return [call.request for call in stub.calls
            if call.request.method == method and call.request.url.startswith(url_prefix)]


def assert_no_secret(text: str) -> None:
    for word in SECRET_WORDS:
        assert word not in text


# ------------------------------------------------------------------------ auth

def test_token_request_is_the_password_grant_with_exactly_five_form_fields(stub, stub_client):
    stub.get(ACH + "/7", json={"transaction": ach_record(7)})
    stub_client.ach.get(7)
    (token_call,) = requests_to(stub, "POST", f"{AUTH}/connect/token")
    assert token_call.headers["Content-Type"] == "application/x-www-form-urlencoded"
    form = dict(parse_qsl(token_call.body))
    assert form == {"client_id": "stub-client", "client_secret": "stub-client-secret",
                    "username": "stub-user", "password": "stub-password",
                    "grant_type": "password"}
    (get,) = requests_to(stub, "GET", ACH)
    assert get.headers["Authorization"] == "Bearer tok-1"


def test_a_401_renews_the_token_once_and_resends(stub, stub_client):
    stub.get(ACH + "/7", status=401)
    stub.get(ACH + "/7", json={"transaction": ach_record(7)})
    row = stub_client.ach.get(7)
    assert row["achItemId"] == 7
    gets = requests_to(stub, "GET", ACH)
    assert [g.headers["Authorization"] for g in gets] == ["Bearer tok-1", "Bearer tok-2"]


def test_a_post_answered_401_is_sent_once_more_with_a_renewed_token(stub, stub_client,
                                                                      make_ach):
    # A 401 is answered before the service processes anything, so one resend cannot pay
    # twice; the journal reservation (one entry) still guards the reference.
    stub.post(ACH, status=401, json={"title": "Unauthorized"})
    stub.post(ACH, json={"transaction": ach_record(9, yourReferenceNumber="AUTH-1")})
    stub_client.ach.submit(make_ach("AUTH-1"))
    posts = requests_to(stub, "POST", ACH)
    assert [p.headers["Authorization"] for p in posts] == ["Bearer tok-1", "Bearer tok-2"]
    assert posts[0].body == posts[1].body
    journal = stub_client.journal()
    assert journal[["reference", "state"]].values.tolist() == [["AUTH-1", "sent"]]


def test_docs_say_a_post_or_put_is_resent_once_after_a_401():
    from pathlib import Path

    docs = Path(__file__).resolve().parents[2] / "docs"
    for name in ("client.md", "safety.md"):
        text = " ".join((docs / name).read_text().split())
        assert "A POST or PUT is sent once." not in text
        assert "a POST or PUT answered 401 is sent once more" in text, name


def test_a_second_401_is_an_authentication_error(stub, stub_client):
    stub.get(ACH + "/7", status=401, json={"title": "Unauthorized"})
    with pytest.raises(AuthenticationError) as caught:
        stub_client.ach.get(7)
    exc = caught.value
    assert (exc.status, exc.method, exc.path) == (401, "GET",
                                                  "/api/v3/AchTransactions/companycode/DEMO1/7")
    assert (exc.title, exc.detail, exc.body) == ("Unauthorized", None, {"title": "Unauthorized"})
    assert len(requests_to(stub, "GET", ACH)) == 2
    assert len(requests_to(stub, "POST", AUTH)) == 2
    assert_no_secret(str(caught.value))


@pytest.mark.parametrize("error", ["invalid_grant", "invalid_client", "unsupported_grant_type"])
def test_a_refused_token_names_the_oauth_error(error, journal_path):
    from paynb.client import Client

    with responses.RequestsMock() as stub:
        stub.post(f"{AUTH}/connect/token", status=400,
                  json={"error": error, "error_description": "nope"})
        client = Client(base_url=BASE, auth_url=AUTH, company_code="DEMO1",
                        credentials=Credentials("c", "stub-client-secret", "u", "stub-password"),
                        journal=journal_path)
        with pytest.raises(AuthenticationError) as caught:
            client.ach.get(1)
    assert caught.value.error == error
    assert error in str(caught.value)
    assert_no_secret(str(caught.value))


def test_the_token_is_renewed_before_it_expires(stub, stub_client, monkeypatch):
    import paynb.auth

    clock = {"now": 1000.0}
    monkeypatch.setattr(paynb.auth.time, "monotonic", lambda: clock["now"])
    stub.get(ACH + "/7", json={"transaction": ach_record(7)})
    stub_client.ach.get(7)
    clock["now"] += 3600 - 61  # more than a minute left: the same token
    stub_client.ach.get(7)
    clock["now"] += 30  # less than a minute left: renewed before sending
    stub_client.ach.get(7)
    tokens = [g.headers["Authorization"] for g in requests_to(stub, "GET", ACH)]
    assert tokens == ["Bearer tok-1", "Bearer tok-1", "Bearer tok-2"]


# ------------------------------------------------------------------------ retries

def test_get_honours_retry_after_and_retries(stub, stub_client):
    waits = []
    stub_client.transport.sleep = waits.append
    stub.get(ACH + "/7", status=429, headers={"Retry-After": "2"})
    stub.get(ACH + "/7", status=503)
    stub.get(ACH + "/7", json={"transaction": ach_record(7)})
    assert stub_client.ach.get(7)["achItemId"] == 7
    assert waits[0] == 2.0
    assert 0 < waits[1] <= 0.5  # exponential backoff with jitter: 0.5 s * [0.5, 1]


def test_retry_after_is_capped(stub, stub_client):
    waits = []
    stub_client.transport.sleep = waits.append
    stub.get(ACH + "/7", status=503, headers={"Retry-After": "86400"})
    stub.get(ACH + "/7", json={"transaction": ach_record(7)})
    stub_client.ach.get(7)
    assert waits == [stub_client.transport.max_retry_wait]


def test_get_gives_up_after_max_retries(stub, stub_client):
    stub.get(ACH + "/7", status=502, json={"title": "Bad Gateway", "detail": "upstream down"})
    with pytest.raises(ServerError) as caught:
        stub_client.ach.get(7)
    assert len(requests_to(stub, "GET", ACH)) == 4
    assert caught.value.status == 502 and caught.value.detail == "upstream down"


def test_reads_are_retried_five_times_by_default(stub, journal_path):
    from paynb.client import Client

    client = Client(base_url=BASE, auth_url=AUTH, company_code="DEMO1",
                    credentials=Credentials("stub-client", "stub-client-secret", "stub-user",
                                            "stub-password"), journal=journal_path)
    waits: list[float] = []
    client.transport.sleep = waits.append
    stub.get(ACH + "/7", status=503)
    with pytest.raises(ServerError):
        client.ach.get(7)
    client.close()
    assert len(requests_to(stub, "GET", ACH)) == 6
    # Backoff doubles from 0.25 s (with jitter: between half and all of it), capped at 8 s.
    assert len(waits) == 5
    assert all(min(8.0, 0.25 * 2 ** n) / 2 <= w <= min(8.0, 0.25 * 2 ** n)
               for n, w in enumerate(waits))


def test_connection_errors_on_get_are_retried(stub, stub_client):
    stub.get(ACH + "/7", body=requests.ConnectionError("reset"))
    stub.get(ACH + "/7", json={"transaction": ach_record(7)})
    assert stub_client.ach.get(7)["achItemId"] == 7


def test_a_post_is_not_resent_after_a_503_and_is_journaled_unknown(stub, stub_client, make_ach):
    stub.post(ACH, status=503, headers={"Retry-After": "1"})
    with pytest.raises(ServerError):
        stub_client.ach.submit(make_ach("LOST-1"))
    assert len(requests_to(stub, "POST", ACH)) == 1
    journal = stub_client.journal()
    assert journal["state"].tolist() == ["unknown"]


def test_a_dropped_answer_after_a_post_is_unknown_and_never_resent(stub, stub_client, make_ach):
    stub.post(ACH, body=requests.ConnectionError("connection reset by peer"))
    with pytest.raises(TransportError) as caught:
        stub_client.ach.submit(make_ach("LOST-2"))
    assert caught.value.method == "POST"
    assert len(requests_to(stub, "POST", ACH)) == 1
    (entry,) = stub_client._journal.entries("DEMO1")
    assert (entry["state"], entry["reference"]) == ("unknown", "LOST-2")
    # Re-running the cell does not pay twice: the unknown entry blocks it.
    from paynb.errors import DuplicateSubmissionError

    with pytest.raises(DuplicateSubmissionError):
        stub_client.ach.submit(make_ach("LOST-2"))
    assert len(requests_to(stub, "POST", ACH)) == 1
    # reconcile finds the item in the service and settles the entry.
    stub.get(ACH, json={"total": 1, "transactions": [ach_record(42, yourReferenceNumber="LOST-2")]})
    settled = stub_client.reconcile()
    assert settled[["reference", "was", "state", "item_id", "item_status"]].values.tolist() == [
        ["LOST-2", "unknown", "sent", "42", "W"]]
    (lookup,) = requests_to(stub, "GET", ACH)
    assert "yourReferenceNumber=LOST-2" in lookup.url


def test_reconcile_marks_an_item_never_received_as_failed(stub, stub_client, make_ach):
    stub.post(ACH, body=requests.ConnectionError("reset"))
    with pytest.raises(TransportError):
        stub_client.ach.submit(make_ach("LOST-3"))
    stub.get(ACH, json={"total": 0, "transactions": []})
    # settle_after=0: this stub certainly never stored it (no grace to wait for).
    settled = stub_client.reconcile(settle_after=0)
    assert settled["state"].tolist() == ["failed"]
    # Nothing arrived, so it may be sent again.
    stub.post(ACH, json={"transaction": ach_record(43, yourReferenceNumber="LOST-3")})
    assert stub_client.ach.submit(make_ach("LOST-3"))["achItemId"] == 43


def test_a_just_lost_submission_not_found_stays_unknown_until_settle_after(stub, stub_client,
                                                                          make_ach):
    """A timed-out request may still be stored by the service a little later: not finding
    it right away must not make it re-submittable (that could pay twice)."""
    stub.post(ACH, body=requests.Timeout("read timed out"))
    with pytest.raises(TransportError):
        stub_client.ach.submit(make_ach("LOST-4"))
    stub.get(ACH, json={"total": 0, "transactions": []})
    (row,) = stub_client.reconcile().itertuples()  # default: wait 300 s after the loss
    assert (row.reference, row.was, row.state) == ("LOST-4", "unknown", "unknown")
    assert "not found in the service yet" in row.detail and "may be settled failed" in row.detail
    (entry,) = stub_client._journal.entries("DEMO1", reference="LOST-4")
    assert entry["state"] == "unknown" and "timed out" in entry["detail"]
    from paynb.errors import DuplicateSubmissionError

    with pytest.raises(DuplicateSubmissionError):
        stub_client.ach.submit(make_ach("LOST-4"))
    assert len(requests_to(stub, "POST", ACH)) == 1
    # Still within an hour's grace: kept again; once the grace is over: failed.
    assert stub_client.reconcile(settle_after=3600)["state"].tolist() == ["unknown"]
    settled = stub_client.reconcile(settle_after=0.001)
    assert settled["state"].tolist() == ["failed"]
    assert settled["detail"].tolist() == ["reconcile: not found in the service; it never arrived"]
    stub.post(ACH, json={"transaction": ach_record(44, yourReferenceNumber="LOST-4")})
    assert stub_client.ach.submit(make_ach("LOST-4"))["achItemId"] == 44


def test_reconcile_against_a_service_that_ignores_the_reference_filter(stub, stub_client,
                                                                      make_ach):
    """The whole list the first lookup brings back serves every later lookup: one GET."""
    stub.post(ACH, body=requests.ConnectionError("reset"))
    for reference in ("LOST-5", "LOST-6", "LOST-7"):
        with pytest.raises(TransportError):
            stub_client.ach.submit(make_ach(reference))
    everything = [ach_record(50, yourReferenceNumber="OTHER"),
                  ach_record(51, yourReferenceNumber="LOST-5"),
                  ach_record(52, yourReferenceNumber="LOST-7", itemStatus="I"),
                  ach_record(53, yourReferenceNumber="LOST-5", itemStatus="V")]
    stub.get(ACH, json={"total": 4, "transactions": everything})
    settled = stub_client.reconcile(settle_after=0)
    assert settled[["reference", "state", "item_id", "item_status"]].values.tolist() == [
        ["LOST-5", "sent", "53", "V"], ["LOST-6", "failed", pd.NA, None],
        ["LOST-7", "invalid", "52", "I"]]  # stored, never processed: the journal's word
    assert len(requests_to(stub, "GET", ACH)) == 1


@pytest.mark.parametrize("settle_after", [-1, float("nan"), float("inf"), "300", True, None])
def test_reconcile_refuses_a_bad_settle_after(stub_client, settle_after):
    from paynb.errors import ValidationError

    with pytest.raises(ValidationError) as caught:
        stub_client.reconcile(settle_after=settle_after)
    assert "settle_after" in caught.value.errors


BAD_REFERENCES = {"None": None, "NaN": float("nan"), "numpy NaN": "np.nan", "pandas NA": "pd.NA",
                  "empty": "", "blank": "   ", "float": 12.0, "bool": True, "bytes": b"R1",
                  "list": ["R1"]}


@pytest.mark.parametrize("bad", list(BAD_REFERENCES))
@pytest.mark.parametrize("kind", ["ach", "rcc"])
def test_void_references_refuses_bad_reference_values_before_sending(stub, stub_client, bad,
                                                                     kind):
    import numpy as np

    from paynb.errors import ValidationError

    value = {"np.nan": np.nan, "pd.NA": pd.NA}.get(BAD_REFERENCES[bad], BAD_REFERENCES[bad]) \
        if isinstance(BAD_REFERENCES[bad], str) else BAD_REFERENCES[bad]
    with pytest.raises(ValidationError) as caught:
        getattr(stub_client, kind).void_references(["GOOD-1", value])
    assert list(caught.value.errors) == ["reference_numbers[1]"]
    assert "None" not in str(caught.value) and "nan" not in str(caught.value)
    assert len(stub.calls) == 0 and stub_client.journal().empty


def test_void_references_sends_text_and_whole_numbers_as_text(stub, stub_client):
    import numpy as np

    stub.put(ACH + "/void/referencenumbers",
             json={"transactions": [ach_record(n, yourReferenceNumber=ref, itemStatus="V")
                                    for n, ref in ((1, "R-1"), (2, "77"), (3, "78"))]})
    stub_client.ach.void_references(["R-1", 77, np.int64(78)])
    (put,) = requests_to(stub, "PUT", ACH)
    assert json.loads(put.body) == {"referenceNumbers": ["R-1", "77", "78"]}


@pytest.mark.parametrize("bad", [None, float("nan"), -3, 0, True, 1.5, "x", "pd.NA"])
def test_void_many_refuses_bad_ids_before_sending(stub, stub_client, bad):
    from paynb.errors import ValidationError

    value = pd.NA if bad == "pd.NA" else bad
    with pytest.raises(ValidationError) as caught:
        stub_client.ach.void_many([5, value])
    assert list(caught.value.errors) == ["item_ids[1]"]
    assert len(stub.calls) == 0 and stub_client.journal().empty


@pytest.mark.parametrize("bad", [[], "R-1", None])
def test_void_calls_refuse_a_bad_list(stub, stub_client, bad):
    from paynb.errors import ValidationError

    with pytest.raises(ValidationError) as caught:
        stub_client.ach.void_references(bad)
    assert list(caught.value.errors)[0].startswith("reference_numbers")
    assert len(stub.calls) == 0


def test_a_put_is_not_resent(stub, stub_client):
    stub.put(ACH + "/7/void", status=500)
    with pytest.raises(ServerError):
        stub_client.ach.void(7)
    assert len(requests_to(stub, "PUT", ACH)) == 1


# ------------------------------------------------------------------------ error mapping

@pytest.mark.parametrize(("status", "error"), [(400, BadRequestError), (403, PermissionDeniedError),
                                               (404, NotFoundError), (429, RateLimitError)])
def test_problem_details_map_to_the_error_tree(stub, stub_client, status, error):
    stub_client.transport.max_retries = 0
    stub.get(ACH + "/7", status=status, content_type="application/problem+json",
             json={"type": "about:blank", "title": "Nope", "status": status,
                   "detail": "item 7 says no", "errors": {"itemId": ["is wrong"]}})
    with pytest.raises(error) as caught:
        stub_client.ach.get(7)
    exc = caught.value
    assert (exc.status, exc.method, exc.path) == (status, "GET",
                                                  "/api/v3/AchTransactions/companycode/DEMO1/7")
    assert (exc.title, exc.detail, exc.errors) == ("Nope", "item 7 says no",
                                                   {"itemId": ["is wrong"]})
    assert str(exc).startswith(f"{status} GET {ACH}/7: ")  # the whole URL asked
    assert_no_secret(str(exc))


def test_an_html_error_page_is_quoted_without_tags(stub, stub_client):
    stub_client.transport.max_retries = 0
    stub.get(ACH + "/7", status=502, content_type="text/html",
             body="<html><body><h1>502 Bad Gateway</h1><p>nginx</p></body></html>")
    with pytest.raises(ServerError) as caught:
        stub_client.ach.get(7)
    assert "502 Bad Gateway nginx" in str(caught.value)
    assert "<h1>" not in str(caught.value)


def test_broken_json_is_a_response_format_error_quoting_the_start(stub, stub_client):
    stub.get(ACH + "/7", body='{"transaction": {"achItemId": 7,', content_type="application/json")
    with pytest.raises(ResponseFormatError) as caught:
        stub_client.ach.get(7)
    assert '{"transaction": {"achItemId": 7,' in str(caught.value)


def test_an_echoed_card_number_is_masked_in_errors(stub, stub_client):
    stub.post(f"{BASE}/api/v3/InstantRoutes/companycode/DEMO1", status=400,
              json={"title": "Bad", "detail": "card 4111111111111111 refused"})
    with pytest.raises(BadRequestError) as caught:
        stub_client.instant.check_route("4111111111111111")
    assert "4111111111111111" not in str(caught.value)
    assert "1111" in str(caught.value)


# ------------------------------------------------------------------------ tolerant reading

@pytest.mark.parametrize("answer", [
    [ach_record(1), ach_record(2)],
    {"Total": 2, "Transactions": [ach_record(1), ach_record(2)]},
    {"data": [ach_record(1), ach_record(2)]},
    {"value": [ach_record(1), ach_record(2)], "count": 2},
    {"results": [{"AchItemId": 1, "ItemStatus": "w", "ReturnDate": None},
                 {"AchItemId": 2, "ItemStatus": "W", "ReturnDate": "2026-11-01T00:00:00.000"}]},
])
def test_lists_accept_any_usual_envelope_and_casing(stub, stub_client, answer):
    stub.get(ACH, json=answer)
    frame = stub_client.ach.list(page=0)
    assert frame["achItemId"].tolist() == [1, 2]
    assert frame["itemStatus"].astype(str).tolist() == ["W", "W"]
    assert str(frame["returnDate"].dtype) == "datetime64[ns, UTC]"  # an instant (issue 32.1)


def test_an_unknown_shape_is_a_clear_error(stub, stub_client):
    stub.get(ACH, json={"weird": 1, "shape": "yes"})
    with pytest.raises(ResponseFormatError) as caught:
        stub_client.ach.list(page=0)
    assert "weird" in str(caught.value)


def test_single_records_bare_or_wrapped(stub, stub_client):
    stub.get(ACH + "/1", json=ach_record(1))
    stub.get(ACH + "/2", json={"Transaction": {"AchItemId": 2, "ItemStatus": "R",
                                               "ReturnReason": "R01"}})
    assert stub_client.ach.get(1)["achItemId"] == 1
    row = stub_client.ach.get(2)
    assert (row["itemStatus"], row["returnReasonDescription"]) == ("R", "Insufficient funds")


# ------------------------------------------------------------------------ paging

def _paged(stub, records, *, with_total):
    def answer(request):
        query = dict(parse_qsl(urlsplit(request.url).query))
        page, size = int(query["page"]), int(query["pageSize"])
        chunk = records[page * size:(page + 1) * size]
        body = {"transactions": chunk}
        if with_total:
            body["total"] = len(records)
        return 200, {}, json.dumps(body)

    stub.add_callback(responses.GET, ACH, callback=answer)


@pytest.mark.parametrize("with_total", [True, False])
def test_every_page_in_order_without_duplicates(stub, stub_client, with_total):
    records = [ach_record(n) for n in range(1, 1002)]
    _paged(stub, records, with_total=with_total)
    frame = stub_client.ach.list(page_size=100, progress=False)
    assert frame["achItemId"].tolist() == list(range(1, 1002))
    pages = sorted(int(dict(parse_qsl(urlsplit(r.url).query))["page"])
                   for r in requests_to(stub, "GET", ACH))
    if with_total:
        assert pages == list(range(11))  # exactly the pages the total asks for
    else:
        assert pages[:11] == list(range(11)) and len(set(pages)) == len(pages)


def test_max_items_caps_the_pages_fetched(stub, stub_client):
    _paged(stub, [ach_record(n) for n in range(1, 1002)], with_total=True)
    frame = stub_client.ach.list(page_size=100, max_items=250, progress=False)
    assert frame["achItemId"].tolist() == list(range(1, 251))
    assert len(requests_to(stub, "GET", ACH)) == 3


def test_a_record_that_moved_pages_is_not_repeated(stub, stub_client):
    stub.get(ACH, json={"total": 4, "transactions": [ach_record(1), ach_record(2)]})
    stub.get(ACH, json={"total": 4, "transactions": [ach_record(2), ach_record(3)]})
    frame = stub_client.ach.list(page_size=2, progress=False)
    assert frame["achItemId"].tolist() == [1, 2, 3]


# ------------------------------------------------------------------------ the wire

def test_list_query_is_exactly_the_spec_form(stub, stub_client):
    import datetime as dt

    stub.get(ACH, json={"total": 0, "transactions": []})
    stub_client.ach.list(status=["B", "I", "R"], returned_from=dt.date(2026, 11, 1),
                         returned_to="2026-11-30T12:30:00.5+00:00", page=0)
    (call,) = requests_to(stub, "GET", ACH)
    assert urlsplit(call.url).query == (
        "itemStatus=B&itemStatus=I&itemStatus=R&returnDateStart=2026-11-01T00:00:00.000"
        "&returnDateEnd=2026-11-30T12:30:00.500&page=0&pageSize=200")


def test_submission_body_is_exact_json_with_decimal_amounts(stub, stub_client, make_ach):
    stub.post(ACH, json={"transaction": ach_record(9, yourReferenceNumber="EXACT-1")})
    stub_client.ach.submit(make_ach("EXACT-1", amount=Decimal("0.10") + Decimal("0.20"),
                                    ach_account_type="Checking"))
    (post,) = requests_to(stub, "POST", ACH)
    assert post.headers["Content-Type"] == "application/json"
    assert post.body == (
        b'{"firstSignerFirstName":"Jane","firstSignerLastName":"Doe","state":"NY",'
        b'"zip":"10001","yourReferenceNumber":"EXACT-1","bankRoutingNumber":"021000021",'
        b'"bankAccountNumber":"000123456789","achAccountType":"Checking",'
        b'"achEntryClass":"PPD","achTransactionType":"Debit","amount":0.30}')


def test_rcc_bulk_goes_to_the_apiv3_path(stub, stub_client, make_rcc):
    url = f"{BASE}/apiv3/RccTransactions/companycode/DEMO1/many"
    stub.post(url, json={"total": 1, "validCount": 1, "invalidCount": 0,
                         "transactions": [{"rccItemId": 5, "yourReferenceNumber": "RB-1",
                                           "itemStatus": "W"}]})
    frame = stub_client.rcc.submit_many([make_rcc("RB-1")])
    assert frame["rccItemId"].tolist() == [5]
    (post,) = requests_to(stub, "POST", url)
    body = json.loads(post.body)
    assert body["alwaysCommitValid"] is True and len(body["items"]) == 1


def test_instant_get_uses_the_spec_spelling(stub, stub_client):
    url = f"{BASE}/api/v3/InstantTransactinos/companycode/DEMO1/abc-1"
    stub.get(url, json={"transaction": {"uniqueId": "abc-1", "status": "Success",
                                        "cardNumber": "4111111111111111"}})
    row = stub_client.instant.get("abc-1")
    assert row["uniqueId"] == "abc-1" and row["cardLastFour"] == "1111"
    assert "4111111111111111" not in row.to_string()


def test_repr_and_html_hold_no_secret(stub, stub_client):
    stub.get(ACH + "/7", json={"transaction": ach_record(7)})
    stub_client.ach.get(7)  # a token is held now
    for text in (repr(stub_client), stub_client._repr_html_(), repr(stub_client.transport.auth),
                 repr(stub_client.ach)):
        assert_no_secret(text)
    assert "DEMO1" in repr(stub_client) and BASE in repr(stub_client)


def test_frames_built_in_batches_equal_one_frame_of_all_records(stub, stub_client, monkeypatch):
    import paynb.resources._listing as base
    from paynb import frames

    monkeypatch.setattr(base, "FRAME_BATCH", 150)
    records = [ach_record(n) for n in range(1, 501)]
    records[420]["itemStatus"] = "Z"  # a code paynb does not know, in one batch only
    records[430]["newField"] = "only here"
    _paged(stub, records, with_total=True)
    frame = stub_client.ach.list(page_size=100, progress=False)
    expected = frames.to_frame(records, "ach")
    pd.testing.assert_frame_equal(frame, expected)
    assert "Z" in frame["itemStatus"].cat.categories


def test_a_progress_bar_shows_for_several_pages_unless_turned_off(stub, stub_client, capsys):
    _paged(stub, [ach_record(n) for n in range(1, 301)], with_total=True)
    stub_client.ach.list(page_size=100)
    assert "ach pages" in capsys.readouterr().err
    stub_client.ach.list(page_size=100, progress=False)
    stub_client.ach.list(page_size=1000)  # one page: no bar
    assert capsys.readouterr().err == ""


def test_a_route_check_echoing_the_card_number_keeps_only_the_last_four(stub, stub_client):
    stub.post(f"{BASE}/api/v3/InstantRoutes/companycode/DEMO1",
              json={"Supported": "true", "Reachable": True, "cardNumber": "4111111111111111",
                    "PaymentTypes": [{"Type": "Push", "MaxAmount": "2500.50", "Currency": "USD"}]})
    check = stub_client.instant.check_route("4111111111111111")
    assert (check.supported, check.reachable, check.max_amount) == (True, True, Decimal("2500.50"))
    assert "4111111111111111" not in str(check.raw) and check.raw["cardLastFour"] == "1111"
    assert "4111111111111111" not in check._repr_html_() + repr(check)


def test_a_card_number_echoed_in_an_error_answer_is_scrubbed_from_the_exception(stub,
                                                                               stub_client):
    stub.post(f"{BASE}/api/v3/InstantRoutes/companycode/DEMO1", status=400,
              json={"title": "Bad", "detail": "card 4111 1111 1111 1111 refused",
                    "cardNumber": "4111111111111111", "clientSecret": "echoed-secret",
                    "bankAccountNumber": "000123456789",
                    "errors": {"cardNumber": ["4111-1111-1111-1111 is not allowed"]}})
    with pytest.raises(BadRequestError) as caught:
        stub_client.instant.check_route("4111111111111111")
    exc = caught.value
    # The body as the journal would store it: the secret dropped, the card cut to its last
    # four (also as an error key), the account masked.
    assert exc.body == {"title": "Bad", "detail": "card ****1111 refused",
                        "cardLastFour": "1111", "bankAccountNumber": "****6789",
                        "errors": {"cardLastFour": "1111"}}
    assert exc.detail == "card ************1111 refused"
    assert exc.errors == {"cardNumber": ["************1111 is not allowed"]}
    for text in (str(exc), repr(exc.body), repr(exc.args)):
        for number in ("4111111111111111", "4111 1111 1111 1111", "4111-1111-1111-1111"):
            assert number not in text


@pytest.mark.parametrize(("text", "shown"), [
    ("card 4111 1111 1111 1111 refused", "card ************1111 refused"),
    ("card 4111-1111-1111-1111 refused", "card ************1111 refused"),
    ("amex 3782-822463-10005.", "amex ***********0005."),
    ("account 000123456789", "account ********6789"),
    ("on 2026-11-22 at 10 01", "on 2026-11-22 at 10 01"),  # short groups are not card numbers
])
def test_preview_masks_card_numbers_written_in_groups(text, shown):
    from paynb.transport import preview

    assert preview(text) == shown


# ------------------------------------------------------------------------ exact money in

BIG = '{"achItemId": 1, "yourReferenceNumber": "BIG-1", "itemStatus": "W", "amount": %s}'


@pytest.mark.parametrize("envelope", [
    '{"total": 2, "creditAmount": 99999999999999.99, "debitAmount": 12345678901234.56, '
    '"transactions": [%s, %s]}',
    '[%s,%s]',
])
def test_amounts_of_more_than_15_digits_reach_the_frame_exactly(stub, stub_client, envelope):
    body = envelope % (BIG % "99999999999999.99", BIG.replace("1,", "2,", 1) % "0.1")
    stub.get(ACH, body=body, content_type="application/json")
    frame = stub_client.ach.list(page=0)
    assert frame["amount"].tolist() == [Decimal("99999999999999.99"), Decimal("0.10")]


def test_list_totals_of_more_than_15_digits_are_exact_decimals(stub, stub_client):
    from paynb import frames

    stub.get(ACH, body='{"total": 1, "creditAmount": 99999999999999.99, "debitAmount": 0.3, '
                       '"transactions": [%s]}' % (BIG % "1.5"),
             content_type="application/json")
    answer = stub_client.transport.json("GET", "/api/v3/AchTransactions/companycode/DEMO1")
    meta = frames.list_metadata(answer)
    assert meta == {"total": 1, "creditAmount": Decimal("99999999999999.99"),
                    "debitAmount": Decimal("0.3")}
    assert type(meta["creditAmount"]) is Decimal


@pytest.mark.parametrize(("text", "exact"), [
    (b'{"a": 99999999999999.99}', True),
    (b'{"a":[1,-1234567.890123456]}', True),
    (b'[12345678901234567]', True),
    (b'{"a": 125.5, "b": "4111111111111111", "c": "2025-06-11T20:50:04.032Z"}', False),
    (b'{"a": 99999999999.999}', False),  # 14 digits: a float holds them exactly
    (b'{"a": 999999999999.999}', True),  # 15 digits and a point: a harmless false alarm
])
def test_only_numbers_of_more_than_15_digits_take_the_exact_parser(text, exact):
    from paynb import _json

    assert _json.needs_exact(text) is exact
    parsed = _json.loads(text)
    assert parsed == json.loads(text, parse_float=Decimal if exact else float)
    if not exact:  # the float's shortest repr gives the JSON digits back
        assert repr(parsed["a"]) == text.split(b'"a": ')[1].split(b",")[0].rstrip(b"}").decode()


@pytest.mark.parametrize(("text", "exact"), [
    (b'{"account": "12345678901234567", "a": 1.5}', False),  # a long number in a string
    (b'{"a": "x", "b":\n  -1234567890123456}', True),
    (b'12345678901234567', True),
])
def test_long_digit_runs_are_numbers_only_where_a_value_starts(text, exact):
    from paynb import _json

    assert _json.needs_exact(text) is exact


# ------------------------------------------------------------------------ exact money out

def test_unvalidated_float_amounts_go_out_as_their_short_decimal(stub, stub_client, make_ach):
    stub.post(ACH, json={"transaction": ach_record(9, yourReferenceNumber="FLOAT-1")})
    stub_client.ach.submit(make_ach("FLOAT-1", amount=125.1), validate=False)
    (post,) = requests_to(stub, "POST", ACH)
    assert json.loads(post.body, parse_float=Decimal)["amount"] == Decimal("125.1")
    assert b'"amount":125.1}' in post.body


@pytest.mark.parametrize("amount", [0.1 + 0.2, 10.001, float("inf")])  # NaN: an empty cell
def test_an_unvalidated_float_amount_that_is_not_whole_cents_is_refused(stub, stub_client,
                                                                       make_ach, amount):
    with pytest.raises(ValueError, match="^amount ") as caught:
        stub_client.ach.submit(make_ach("FLOAT-2", amount=amount), validate=False)
    assert list(caught.value.errors) == ["amount"]
    assert requests_to(stub, "POST", ACH) == []
    assert stub_client.journal().empty


def test_an_unvalidated_bulk_names_the_row_of_a_float_artefact(stub, stub_client, make_rcc):
    url = f"{BASE}/apiv3/RccTransactions/companycode/DEMO1/many"
    rows = [make_rcc("FB-1", amount=12.5), make_rcc("FB-2", amount=0.1 + 0.2)]
    with pytest.raises(ValueError) as caught:
        stub_client.rcc.submit_many(rows, validate=False)
    assert list(caught.value.errors) == ["items[1].amount"]
    assert requests_to(stub, "POST", url) == []


def test_client_md_quotes_the_sandbox_notice_and_no_speed_figures():
    import inspect
    import re
    from pathlib import Path

    from paynb import client as client_module

    text = (Path(__file__).resolve().parents[2] / "docs" / "client.md").read_text()
    assert "(docs: client, Connecting)" not in text
    assert "docs/real-service.md" in inspect.getsource(client_module.connect)
    assert "a profile (docs/real-service.md)." in text
    assert "paynb.Client.from_env()" in text and "<paynb.Client env: " in text
    # Speed is measured by the benchmarks; the doc points to their results instead of
    # quoting figures that go stale.
    section = text[text.index("## Retries, timeouts and speed"):]
    section = section[:section.index("\n## ", 5)] if "\n## " in section[5:] else section
    assert "benchmarks/RESULTS.md" in section
    # The only times left are settings (backoff, its cap, the Retry-After cap).
    assert re.findall(r"\d[\d.,]* (?:s|ms)\b", section) == ["0.25 s", "8 s", "30 s"]
