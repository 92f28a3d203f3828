"""The client against the sandbox over loopback: every endpoint and flow of spec section 4."""

from __future__ import annotations

import datetime as dt
import logging
import uuid
import warnings
from decimal import Decimal
from urllib.parse import urlsplit

import pandas as pd
import pytest

import paynb
from paynb.errors import (
    AuthenticationError,
    BadRequestError,
    BulkRejectedError,
    DuplicateSubmissionError,
    NotFoundError,
    PermissionDeniedError,
    RouteNotCheckedError,
    RouteUnavailableError,
    ServerError,
    SubmissionNotAcceptedWarning,
    TransportError,
    ValidationError,
)
from paynb.results import ExportFile, RouteCheck

pytestmark = pytest.mark.guards_unchecked

CARD = "4111111111111111"  # Visa range: supported and reachable, limit 5,000,000
UNREACHABLE_CARD = "4000000000000002"
AMEX = "378282246310005"  # not supported
RTP_ROUTING = "021000021"  # RTP-enabled
RTP_SMALL = "111000025"  # RTP-enabled, limit 500,000
NO_RTP = "011000015"  # a valid routing number without RTP


def ref(tag: str = "T") -> str:
    return f"{tag}-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def client(sandbox, journal_path):
    with sandbox.connect(journal=journal_path, page_size=200) as client:
        client.transport.sleep = lambda seconds: None
        yield client


@pytest.fixture
def wire(client):
    """Every request the client sends to the service (not the token endpoint), as
    (method, path, query, body) tuples."""
    sent = []
    session = client.transport.session
    send = session.send

    def capture(request, **kwargs):
        parts = urlsplit(request.url)
        if not parts.path.endswith("/connect/token"):
            sent.append((request.method, parts.path, parts.query, request.body))
        return send(request, **kwargs)

    session.send = capture
    return sent


def card_payment(reference, amount=1500, card=CARD):
    return {"nameOnCard": "JANE DOE", "cardNumber": card,
            "cardExpiration": f"12/{dt.date.today().year + 2}", "totPassword": "123456",
            "amount": amount, "yourReferenceNumber": reference}


def rtp_payment(reference, amount=2500, routing=RTP_ROUTING):
    return {"name": "Jane Doe", "firstName": "Jane", "lastName": "Doe",
            "routingNumber": routing, "accountNumber": "000123456789", "amount": amount,
            "yourReferenceNumber": reference}


# ------------------------------------------------------------------------ lists and reads

def test_list_fetches_every_page_in_order_without_duplicates(client, wire):
    frame = client.ach.list(progress=False)
    total = client.ach.list(page=0, page_size=1)  # one record, to read the size another way
    assert len(total) == 1
    ids = frame["achItemId"].tolist()
    assert ids == sorted(ids) and len(set(ids)) == len(ids) and len(ids) > 1000
    pages = [q for m, p, q, b in wire if m == "GET" and "page=" in q]
    assert len(pages) == -(-len(ids) // 200) + 1  # every page once, plus the one-record call
    assert str(frame["achItemId"].dtype) == "Int64"
    assert str(frame["amount"].dtype).startswith("decimal128")
    assert isinstance(frame["itemStatus"].dtype, pd.CategoricalDtype)
    assert "itemStatusName" in frame.columns


def test_one_page_and_max_items(client):
    page = client.ach.list(page=1, page_size=50)
    assert len(page) == 50
    first = client.ach.list(max_items=120, page_size=50, progress=False)
    assert len(first) == 120
    assert first["achItemId"].tolist()[50:100] == page["achItemId"].tolist()


def test_status_and_return_date_filters(client, wire):
    every = client.ach.list(progress=False)
    wire.clear()
    # A month of the sandbox's returns, whatever day the sandbox was seeded on: from a date,
    # to an aware datetime.
    middle = every["returnDate"].dropna().quantile(0.5).normalize()
    start, end = (middle - pd.Timedelta(days=15)).date(), middle + pd.Timedelta(days=15)
    frame = client.ach.list(status=["R", "B"], returned_from=start,
                            returned_to=end.to_pydatetime(), progress=False)
    # The service's filter gives exactly the items that pass it among all of them.
    wanted = every[every["itemStatus"].astype(str).isin(["R", "B"])
                   & (every["returnDate"] >= pd.Timestamp(start, tz="UTC"))
                   & (every["returnDate"] <= end)]
    assert len(wanted) > 0
    assert sorted(frame["achItemId"]) == sorted(wanted["achItemId"])
    assert set(frame["itemStatus"].astype(str)) <= {"R", "B"}
    assert frame["returnDate"].min() >= pd.Timestamp(start, tz="UTC")
    assert (frame["returnDate"] <= end.strftime("%Y-%m-%d")).all()  # text compares as UTC
    assert wire[0][2].startswith(f"itemStatus=R&itemStatus=B&returnDateStart={start}T00:00:00"
                                 f".000&returnDateEnd={end.date()}T00:00:00.000&page=0")


def test_bad_list_arguments_fail_before_sending(client, wire):
    with pytest.raises(ValidationError, match="status"):
        client.ach.list(status="X")
    with pytest.raises(ValidationError, match="returned_from"):
        client.ach.list(returned_from="last tuesday")
    with pytest.raises(ValidationError, match="page_size"):
        client.ach.list(page_size=0)
    assert wire == []


def test_get_one_item_and_an_unknown_id(client):
    first = client.ach.list(page=0, page_size=1).iloc[0]
    row = client.ach.get(int(first["achItemId"]))
    assert row["achItemId"] == first["achItemId"]
    assert row["yourReferenceNumber"] == first["yourReferenceNumber"]
    with pytest.raises(NotFoundError) as caught:
        client.ach.get(99_999_999)
    assert caught.value.status == 404
    with pytest.raises(ValidationError, match="item_id"):
        client.ach.get(-1)


def test_account_numbers_are_masked_unless_asked(sandbox, journal_path):
    with sandbox.connect(journal=journal_path) as masked, \
            sandbox.connect(journal=journal_path, mask=False) as plain:
        a = masked.ach.list(page=0, page_size=5)["bankAccountNumber"].tolist()
        b = plain.ach.list(page=0, page_size=5)["bankAccountNumber"].tolist()
    assert all(x.startswith("****") and x[-4:] == y[-4:] for x, y in zip(a, b, strict=True))
    assert not any(y.startswith("****") for y in b)


# ------------------------------------------------------------------------ submissions

@pytest.mark.parametrize(("option", "value", "remedy"), [
    ("mask", False, "paynb.connect(mask=False)"),
    ("page_size", 10, "client.ach.list(page_size=...)"),
    ("max_workers", 2, "max_workers=..."),
    ("company_code", "OTHER", "company_code='...'"),
])
def test_setting_a_fixed_option_says_how_to_get_it(client, option, value, remedy):
    before = getattr(client, option)
    with pytest.raises(AttributeError, match=f"client.{option} is set when the client is made"
                       ) as raised:
        setattr(client, option, value)
    assert remedy in str(raised.value)
    assert getattr(client, option) == before


def test_submit_one_item_sends_the_model_body_and_journals_it(client, wire, make_ach):
    reference = ref("ONE")
    row = client.ach.submit(make_ach(reference, amount=Decimal("125.10")))
    assert (row["yourReferenceNumber"], str(row["itemStatus"])) == (reference, "W")
    assert row["amount"] == Decimal("125.10")
    method, path, _, body = wire[-1]
    assert (method, path) == ("POST", "/api/v3/AchTransactions/companycode/DEMO1")
    assert b'"amount":125.10' in body and b'"yourReferenceNumber":"' + reference.encode() in body
    (entry,) = client._journal.entries("DEMO1", reference=reference)
    assert (entry["state"], entry["item_status"]) == ("sent", "W")
    assert entry["item_id"] == int(row["achItemId"])
    assert "000123456789" not in str(entry["summary"])


def test_a_prenote(client, make_ach):
    row = client.ach.submit(make_ach(ref("PRE"), achTransactionSubType="Prenote",
                                     amount=Decimal("0")))
    assert row["achTransactionSubType"] == "Prenote" and row["amount"] == Decimal("0")


def test_validation_names_every_bad_field_and_sends_nothing(client, wire, make_ach):
    with pytest.raises(ValidationError) as caught:
        client.ach.submit(make_ach(ref("BAD"), bankRoutingNumber="021000022",
                                   amount=Decimal("-5"), state="XX"))
    assert set(caught.value.errors) == {"bankRoutingNumber", "amount", "state"}
    assert wire == [] and client._journal.entries("DEMO1") == []


def test_validate_false_lets_the_service_judge(client, make_ach):
    reference = ref("SRV")
    with pytest.raises(BadRequestError) as caught:
        client.ach.submit(make_ach(reference, bankAccountNumber="12'34"), validate=False)
    assert "bankAccountNumber" in caught.value.errors
    (entry,) = client._journal.entries("DEMO1", reference=reference)
    assert entry["state"] == "rejected"


def test_duplicate_guard_across_two_clients_sharing_a_journal(sandbox, journal_path, make_ach):
    reference = ref("DUP")
    with sandbox.connect(journal=journal_path) as one, \
            sandbox.connect(journal=journal_path) as two:
        first = one.ach.submit(make_ach(reference))
        with pytest.raises(DuplicateSubmissionError) as caught:
            two.ach.submit(make_ach(reference))
        assert caught.value.reference_number == reference
        assert caught.value.previous["item_id"] == int(first["achItemId"])
        # Only one item exists in the service.
        found = two.ach.list(progress=False)
        assert (found["yourReferenceNumber"] == reference).sum() == 1
        again = two.ach.submit(make_ach(reference), allow_duplicate=True)
        assert again["achItemId"] != first["achItemId"]


def test_submit_many_answers_one_row_per_input_in_order(client, make_ach):
    refs = [ref("BULK") for _ in range(4)]
    items = pd.DataFrame([make_ach(refs[0]), make_ach(refs[1], bankAccountNumber="7777'8888"),
                          make_ach(refs[2], amount=Decimal("20.50")), make_ach(refs[3])])
    frame = client.ach.submit_many(items, commit_valid=True)
    assert frame["yourReferenceNumber"].tolist() == refs
    assert frame["itemStatus"].astype(str).tolist() == ["W", "I", "W", "W"]
    assert frame["achItemId"].isna().tolist() == [False, True, False, False]
    assert "bankAccountNumber" in frame["errors"][1]
    assert frame["amount"][2] == Decimal("20.50")
    states = {e["reference"]: e["state"] for e in client._journal.entries("DEMO1")}
    assert states == {refs[0]: "sent", refs[2]: "sent", refs[3]: "sent"}


def test_submit_many_service_side_invalid_rows_are_i_entries(client, make_ach):
    refs = [ref("SRVB") for _ in range(3)]
    with pytest.warns(SubmissionNotAcceptedWarning, match="1 of 3 items") as caught:
        frame = client.ach.submit_many(
            [make_ach(refs[0]), make_ach(refs[1], bankAccountNumber="12'34"), make_ach(refs[2])],
            validate=False)
    assert frame["itemStatus"].astype(str).tolist() == ["W", "I", "W"]
    assert frame["achItemId"].notna().all()  # the service keeps an entry for the invalid one
    assert frame["errors"][1]
    # The warning names the status and the service's reasons; the account is not quoted.
    (warning,) = [w.message for w in caught if isinstance(w.message, SubmissionNotAcceptedWarning)]
    assert warning.status == "I" and warning.reference_number == refs[1]
    assert "bankAccountNumber" in str(warning) and "12'34" not in str(warning)
    # Stored but never processed: journaled as invalid, not as sent.
    states = {e["reference"]: e["state"] for e in client._journal.entries("DEMO1")
              if e["reference"] in refs}
    assert states == {refs[0]: "sent", refs[1]: "invalid", refs[2]: "sent"}


def test_all_or_nothing_rejects_locally_with_the_bad_rows(client, wire, make_ach):
    items = [make_ach(ref("AON")), make_ach(ref("AON"), zip="1"), make_ach(ref("AON"))]
    with pytest.raises(BulkRejectedError) as caught:
        client.ach.submit_many(items, commit_valid=False)
    assert caught.value.rows == {1: {"zip": caught.value.rows[1]["zip"]}}
    assert wire == []
    # paynb refused it: not worded as if the service had answered 400.
    assert caught.value.status is None
    assert str(caught.value).startswith("refused before sending POST /api/v3/AchTransactions/")


def test_all_or_nothing_rejected_by_the_service(client, make_ach):
    refs = [ref("AONS") for _ in range(3)]
    items = [make_ach(refs[0]), make_ach(refs[1]), make_ach(refs[2], bankAccountNumber="1'2345")]
    with pytest.raises(BulkRejectedError) as caught:
        client.ach.submit_many(items, commit_valid=False, validate=False)
    assert str(caught.value).startswith("400 POST /api/v3/AchTransactions/")
    assert list(caught.value.rows) == [2]
    assert "bankAccountNumber" in caught.value.rows[2]
    found = client.ach.list(progress=False)
    assert not found["yourReferenceNumber"].isin(refs).any()
    assert {e["state"] for e in client._journal.entries("DEMO1")} == {"rejected"}


def test_large_inputs_are_sent_in_chunks_in_order(client, wire, make_ach, monkeypatch):
    import paynb.resources._bulk as items_module

    monkeypatch.setattr(items_module, "BULK_CHUNK", 2)
    refs = [ref("CH") for _ in range(5)]
    frame = client.ach.submit_many([make_ach(r) for r in refs])
    assert frame["yourReferenceNumber"].tolist() == refs
    assert (frame["itemStatus"].astype(str) == "W").all()
    posts = [w for w in wire if w[0] == "POST"]
    assert len(posts) == 3 and all(p[1].endswith("/many") for p in posts)


def test_submit_many_refuses_references_already_sent(client, make_ach):
    reference = ref("BD")
    client.ach.submit(make_ach(reference))
    with pytest.raises(DuplicateSubmissionError):
        client.ach.submit_many([make_ach(ref("BD")), make_ach(reference)])


def test_rcc_submit_bulk_get_void(client, wire, make_rcc):
    one = client.rcc.submit(make_rcc(ref("RCC")))
    assert str(one["itemStatus"]) == "W"
    assert client.rcc.get(int(one["rccItemId"]))["rccItemId"] == one["rccItemId"]
    bulk = client.rcc.submit_many([make_rcc(ref("RCCB")), make_rcc(ref("RCCB"))])
    assert (bulk["itemStatus"].astype(str) == "W").all()
    assert any(p == "/apiv3/RccTransactions/companycode/DEMO1/many" for _, p, _, _ in wire)
    voided = client.rcc.void_many([int(i) for i in bulk["rccItemId"]])
    assert voided["itemStatus"].astype(str).tolist() == ["V", "V"]
    assert str(client.rcc.void(int(one["rccItemId"]))["itemStatus"]) == "V"
    listed = client.rcc.list(progress=False).set_index("rccItemId")
    for item_id in [*bulk["rccItemId"], one["rccItemId"]]:
        assert str(listed.loc[item_id, "itemStatus"]) == "V"


# ------------------------------------------------------------------------ voids

def test_void_one_many_and_by_reference(client, wire, make_ach):
    refs = [ref("V") for _ in range(4)]
    made = client.ach.submit_many([make_ach(r) for r in refs])
    ids = [int(i) for i in made["achItemId"]]
    assert str(client.ach.void(ids[0])["itemStatus"]) == "V"
    many = client.ach.void_many(ids[1:3])
    assert many["achItemId"].tolist() == ids[1:3]
    by_ref = client.ach.void_references([refs[3]])
    assert by_ref["yourReferenceNumber"].tolist() == [refs[3]]
    assert (by_ref["itemStatus"].astype(str) == "V").all()
    puts = [(p, b) for m, p, _, b in wire if m == "PUT"]
    assert puts[0] == (f"/api/v3/AchTransactions/companycode/DEMO1/{ids[0]}/void", None)
    assert puts[1] == ("/api/v3/AchTransactions/companycode/DEMO1/void/achitemids",
                       f'{{"achItemIds":[{ids[1]},{ids[2]}]}}'.encode())
    assert puts[2] == ("/api/v3/AchTransactions/companycode/DEMO1/void/referencenumbers",
                       f'{{"referenceNumbers":["{refs[3]}"]}}'.encode())
    voids = client._journal.entries("DEMO1", state="sent", operation="void_many")
    assert len(voids) == 2


def test_rcc_void_by_reference(client, wire, make_rcc):
    refs = [ref("RV") for _ in range(3)]
    made = client.rcc.submit_many([make_rcc(r) for r in refs])
    ids = dict(zip(made["yourReferenceNumber"], made["rccItemId"].astype(int), strict=True))
    voided = client.rcc.void_references(refs[:2])
    assert sorted(voided["yourReferenceNumber"]) == sorted(refs[:2])
    assert sorted(voided["rccItemId"].astype(int)) == sorted(ids[r] for r in refs[:2])
    assert voided["itemStatus"].astype(str).tolist() == ["V", "V"]
    (put,) = [(p, b) for m, p, _, b in wire if m == "PUT"]
    assert put == ("/api/v3/RccTransactions/companycode/DEMO1/void/referencenumbers",
                   f'{{"referenceNumbers":["{refs[0]}","{refs[1]}"]}}'.encode())
    # The service agrees: the two are voided, the third is still waiting.
    assert {r: str(client.rcc.get(ids[r])["itemStatus"]) for r in refs} == {
        refs[0]: "V", refs[1]: "V", refs[2]: "W"}
    entries = client._journal.entries("DEMO1", "rcc", operation="void_references")
    assert [(e["reference"], e["state"]) for e in entries] == [(refs[0], "sent"),
                                                               (refs[1], "sent")]


def test_voiding_a_voided_item_is_a_bad_request_naming_it(client, make_ach):
    item = client.ach.submit(make_ach(ref("VV")))
    client.ach.void(int(item["achItemId"]))
    with pytest.raises(BadRequestError) as caught:
        client.ach.void(int(item["achItemId"]))
    assert str(int(item["achItemId"])) in str(caught.value)


# ------------------------------------------------------------------------ exports

@pytest.mark.parametrize("filetype", ["csv", "json", "xlsx"])
def test_exports_are_frames_typed_like_lists(client, filetype):
    exported = client.ach.export(filetype)
    listed = client.ach.list(progress=False)
    assert isinstance(exported, pd.DataFrame)
    assert list(exported.columns[:len(listed.columns)]) == list(listed.columns)
    assert str(exported["amount"].dtype) == str(listed["amount"].dtype)
    assert set(exported["achItemId"]) <= set(listed["achItemId"])
    assert exported["bankAccountNumber"].str.startswith("****").all()


def test_exports_of_every_kind(client):
    for resource, id_column in ((client.rcc, "rccItemId"), (client.instant, "uniqueId"),
                                (client.rtp, "uniqueId"), (client.nocs, "nocId")):
        frame = resource.export("csv")
        listed = resource.list(progress=False)
        assert len(frame) > 0
        assert sorted(frame[id_column].astype(str)) == sorted(listed[id_column].astype(str))


def test_an_unknown_filetype_is_refused_by_the_service(client):
    with pytest.raises(BadRequestError):
        client.ach.export("pdf")
    with pytest.raises(ValidationError, match="filetype"):
        client.ach.export("../x")


def test_a_document_paynb_cannot_read_is_an_export_file(client, tmp_path, monkeypatch):
    import requests

    original = client.transport.request

    def as_pdf(*args, **kwargs):
        response = original(*args, **kwargs)
        patched = requests.Response()
        patched.status_code, patched._content = 200, b"%PDF-1.7 fake"
        patched.headers.update({"Content-Type": "application/pdf",
                                "Content-Disposition": 'attachment; filename="ach.pdf"'})
        response.close()
        return patched

    monkeypatch.setattr(client.transport, "request", as_pdf)
    exported = client.ach.export("csv")
    assert isinstance(exported, ExportFile)
    assert (exported.name, exported.content_type) == ("ach.pdf", "application/pdf")
    saved = exported.save(tmp_path)
    assert saved == tmp_path / "ach.pdf" and saved.read_bytes() == b"%PDF-1.7 fake"


# ------------------------------------------------------------------------ polling

def test_changes_sends_the_spec_query_and_reports_each_change_once(client, wire, sandbox,
                                                                   make_ach):
    first = client.ach.changes(since=dt.date(2026, 11, 1))
    assert wire[0][2].startswith(
        "itemStatus=B&itemStatus=I&itemStatus=R&returnDateStart=2026-11-01T00:00:00.000&page=0")
    assert set(first["itemStatus"].astype(str)) <= {"B", "I", "R"}
    assert client.ach.changes().empty  # nothing new since the last poll
    item = client.ach.submit(make_ach(ref("RET")))
    sandbox.simulate.force_status(int(item["achItemId"]), "R", code="R01")
    new = client.ach.changes()
    assert new["achItemId"].tolist() == [item["achItemId"]]
    assert new["returnReason"].tolist() == ["R01"]
    assert client.ach.changes().empty
    mark = client._journal.polling.watermark("DEMO1", "ach")
    # returnDate is a UTC instant, as the watermark is
    assert mark is not None and pd.Timestamp(mark) == new["returnDate"].max()


def test_changes_without_a_journal_remembers_in_the_client(sandbox, make_ach):
    with sandbox.connect(journal=None) as client:
        client.rcc.changes()
        assert client.rcc.changes().empty
        with pytest.raises(paynb.errors.PaynbError, match="journal=None"):
            client.journal()


def test_changes_shows_its_progress_bar_unless_turned_off(sandbox, capsys):
    with sandbox.connect(journal=None, page_size=20) as client:
        shown = client.ach.changes(since=None)
        assert len(shown) > 40  # three pages or more: a bar, as a list of them shows
        assert "ach pages" in capsys.readouterr().err
        hidden = client.ach.changes(since=None, progress=False)
        assert capsys.readouterr().err == ""
        pd.testing.assert_frame_equal(hidden, shown)
        with pytest.raises(ValidationError, match="progress must be True, False or None"):
            client.ach.changes(progress="no")


# ------------------------------------------------------------------------ instant card

def test_instant_route_check_then_send(client, wire):
    check = client.instant.check_route(CARD)
    assert isinstance(check, RouteCheck) and check.supported and check.reachable
    assert check.max_amount == Decimal(5_000_000) and check.currency == "USD"
    assert CARD not in repr(check) and CARD not in str(check.raw)
    reference = ref("IC")
    row = client.instant.send(card_payment(reference))
    assert row["yourReferenceNumber"] == reference and row["cardLastFour"] == "1111"
    assert row["status"] == "Success"
    got = client.instant.get(row["uniqueId"])
    assert got["uniqueId"] == row["uniqueId"]
    posts = [(p, b) for m, p, _, b in wire if m == "POST"]
    assert posts[0] == ("/api/v3/InstantRoutes/companycode/DEMO1",
                        b'{"cardNumber":"4111111111111111"}')
    expiry = card_payment(reference)["cardExpiration"]
    assert posts[1] == ("/api/v3/InstantTransactions/companycode/DEMO1", (
        '{"nameOnCard":"JANE DOE","cardNumber":"4111111111111111","cardExpiration":"'
        + expiry + '","totPassword":"123456","amount":1500,"yourReferenceNumber":"'
        + reference + '"}').encode())
    paths = [p for _, p, _, _ in wire]
    assert f"/api/v3/InstantTransactinos/companycode/DEMO1/{row['uniqueId']}" in paths
    assert CARD not in str(client.journal()["summary"].tolist())
    listed = client.instant.list(progress=False)
    assert row["uniqueId"] in set(listed["uniqueId"])


def test_instant_send_refuses_without_a_route_check(client, wire):
    with pytest.raises(RouteNotCheckedError):
        client.instant.send(card_payment(ref("NC"), card="5555555555554444"))
    assert wire == []


def test_instant_send_refuses_unsupported_unreachable_and_too_large(client):
    assert not client.instant.check_route(AMEX).supported
    with pytest.raises(RouteUnavailableError):
        client.instant.send(card_payment(ref("AX"), card=AMEX))
    assert not client.instant.check_route(UNREACHABLE_CARD).reachable
    with pytest.raises(RouteUnavailableError):
        client.instant.send(card_payment(ref("UR"), card=UNREACHABLE_CARD))
    client.instant.check_route(CARD)
    with pytest.raises(RouteUnavailableError, match="limit"):
        client.instant.send(card_payment(ref("BIG"), amount=5_000_001))
    assert client._journal.entries("DEMO1") == []


def test_instant_by_token(client):
    check = client.instant.check_route(token_id="tok_visa_1", sub_client_id="sub-1")
    assert check.ok
    row = client.instant.send({"tokenId": "tok_visa_1", "yourSubClientId": "sub-1",
                               "amount": 700, "yourReferenceNumber": ref("TK")})
    assert row["status"] == "Success"
    with pytest.raises(RouteNotCheckedError):
        client.instant.send({"tokenId": "tok_visa_1", "yourSubClientId": "sub-2",
                             "amount": 700, "yourReferenceNumber": ref("TK")})
    with pytest.raises(ValidationError, match="card_number"):
        client.instant.check_route(CARD, token_id="tok")


# ------------------------------------------------------------------------ instant RTP

def test_rtp_route_check_then_send(client, wire):
    check = client.rtp.check_route(RTP_ROUTING)
    assert check.ok and wire[-1][:2] == ("GET", f"/api/v3/InstantRtpRoutes/{RTP_ROUTING}")
    row = client.rtp.send(rtp_payment(ref("RTP")))
    assert row["status"] == "Success" and row["accountNumber"].startswith("****")
    assert client.rtp.get(row["uniqueId"])["uniqueId"] == row["uniqueId"]
    listed = client.rtp.list(progress=False).set_index("uniqueId")
    assert listed.loc[row["uniqueId"], "status"] == "Success"


def test_rtp_refusals(client):
    with pytest.raises(RouteNotCheckedError):
        client.rtp.send(rtp_payment(ref("RN"), routing=RTP_SMALL))
    client.rtp.check_route(RTP_SMALL)
    with pytest.raises(RouteUnavailableError, match="limit"):
        client.rtp.send(rtp_payment(ref("RB"), routing=RTP_SMALL, amount=500_001))
    assert not client.rtp.check_route(NO_RTP).supported
    with pytest.raises(RouteUnavailableError):
        client.rtp.send(rtp_payment(ref("RU"), routing=NO_RTP))
    with pytest.raises(ValidationError, match="routing_number"):
        client.rtp.check_route("123")


# ------------------------------------------------------------------------ NOCs

def test_nocs_list_and_a_new_noc(client, sandbox, make_ach):
    before = client.nocs.list(progress=False)
    item = client.ach.submit(make_ach(ref("NOC")))
    noc = sandbox.simulate.create_noc(int(item["achItemId"]), change_code="C01",
                                      corrected_data="000987654321")
    after = client.nocs.list(progress=False)
    assert len(after) == len(before) + 1
    row = after[after["nocId"] == noc["nocId"]].iloc[0]
    assert (row["changeCode"], row["achItemId"]) == ("C01", item["achItemId"])
    assert row["correctedData"] == "****4321"
    assert row["changeReason"]


# ------------------------------------------------------------------------ auth and faults

def test_token_renewed_before_expiry_with_a_short_ttl(journal_path, monkeypatch):
    import time

    from paynb.auth import PasswordAuth
    from paynb.sandbox import serve

    renewals_after_401 = []
    original = PasswordAuth.renew
    monkeypatch.setattr(PasswordAuth, "renew",
                        lambda self, stale: renewals_after_401.append(1) or original(self, stale))
    with serve(port=0, seed_items=10, token_ttl=1.0) as sb, sb.connect(journal=journal_path) as c:
        items = len(c.ach.list(page=0))
        first = c.transport.auth._token
        time.sleep(1.2)  # past the lifetime: the next call must fetch a new token first
        assert len(c.ach.list(page=0)) == items
        assert c.transport.auth._token != first
    assert renewals_after_401 == []


def test_wrong_credentials_name_the_oauth_error(sandbox, journal_path):
    client = paynb.Client(base_url=sandbox.base_url, auth_url=sandbox.auth_url,
                          company_code="DEMO1",
                          credentials=paynb.Credentials("paynb-sandbox", "sandbox-secret",
                                                        "analyst", "wrong-password"),
                          journal=journal_path)
    with pytest.raises(AuthenticationError) as caught:
        client.ach.list(page=0)
    assert caught.value.error == "invalid_grant" and "wrong-password" not in str(caught.value)
    assert (caught.value.status, caught.value.method, caught.value.path) == (
        400, "POST", "/connect/token")


def test_a_company_the_user_does_not_hold(sandbox, journal_path):
    client = paynb.Client(base_url=sandbox.base_url, auth_url=sandbox.auth_url,
                          company_code="DEMO1",
                          credentials=paynb.Credentials("paynb-sandbox", "sandbox-secret",
                                                        "other", "other-password"),
                          journal=journal_path)
    with pytest.raises(PermissionDeniedError) as caught:
        client.ach.list(page=0)
    assert caught.value.status == 403


def test_reads_retry_through_scripted_faults(client, sandbox):
    sandbox.simulate.script_fault("503", on="reads")
    sandbox.simulate.script_fault("429", on="reads")
    sandbox.simulate.script_fault("drop", on="reads")
    assert len(client.ach.list(page=0, page_size=3)) == 3


def test_a_post_whose_answer_is_lost_is_unknown_then_reconciled(client, sandbox, wire, make_ach):
    reference = ref("LOST")
    sandbox.simulate.script_fault("drop_after_commit", on="writes")
    with pytest.raises(TransportError):
        client.ach.submit(make_ach(reference))
    assert [w[0] for w in wire].count("POST") == 1
    (entry,) = client._journal.entries("DEMO1", reference=reference)
    assert entry["state"] == "unknown"
    with pytest.raises(DuplicateSubmissionError):
        client.ach.submit(make_ach(reference))
    settled = client.reconcile()
    assert settled[["reference", "state", "item_status"]].values.tolist() == [
        [reference, "sent", "W"]]
    (entry,) = client._journal.entries("DEMO1", reference=reference)
    assert entry["state"] == "sent" and entry["item_id"] is not None


def test_a_post_answered_503_is_not_resent(client, sandbox, wire, make_ach):
    reference = ref("503")
    sandbox.simulate.script_fault("503", on="writes")
    with pytest.raises(ServerError):
        client.ach.submit(make_ach(reference))
    assert [w[0] for w in wire].count("POST") == 1
    settled = client.reconcile(settle_after=0)  # the 503 handled nothing: failed at once
    assert settled["state"].tolist() == ["failed"]
    assert client.ach.submit(make_ach(reference))["yourReferenceNumber"] == reference


def test_connect_without_configuration_uses_the_sandbox_and_says_so(sandbox, monkeypatch,
                                                                     caplog):
    monkeypatch.setattr(paynb.sandbox, "ensure_running", lambda: sandbox)
    with caplog.at_level(logging.WARNING, logger="paynb"):
        client = paynb.connect(journal=None)
    assert client.environment == "sandbox" and "sandbox" in repr(client)
    assert "SANDBOX" in caplog.text and sandbox.base_url in caplog.text
    assert "Sandbox" in client._repr_html_()
    assert len(client.ach.list(page=0, page_size=2)) == 2


def test_an_instant_payment_whose_answer_is_lost_is_reconciled(client, sandbox):
    reference = ref("ICLOST")
    client.instant.check_route(CARD)
    sandbox.simulate.script_fault("drop_after_commit", on="writes")
    with pytest.raises(TransportError):
        client.instant.send(card_payment(reference))
    settled = client.reconcile()
    assert settled[["kind", "reference", "state", "item_status"]].values.tolist() == [
        ["instant", reference, "sent", "Success"]]


def test_blank_fields_of_an_iat_addenda_reach_the_service_as_given(client):
    # Issue 32.2: the blank transactionTypeCode (and a blank street) used to be dropped.
    from tests.client.conftest import ach_item

    addenda = {"transactionTypeCode": "", "foreignBeneficiaryPayer": {
        "name": "Acme GmbH", "streetAddress": " ", "city": "Berlin", "countryCode": "DE"}}
    with warnings.catch_warnings():  # the guards' notice when nothing was listed yet
        warnings.simplefilter("ignore", paynb.errors.PaynbWarning)
        sent = client.ach.submit(ach_item(ref("IAT"), achEntryClass="IAT",
                                          iatAddenda=addenda))
    assert sent["iatAddenda"] == addenda
    assert client.ach.get(int(sent["achItemId"]))["iatAddenda"] == addenda
