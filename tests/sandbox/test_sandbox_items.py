"""ACH and RCC over HTTP: submit, list with paging and filters, get, export, bulk, voids."""

from __future__ import annotations

import csv
import io
import json
from decimal import Decimal

import openpyxl
import pytest
from sandbox_helpers import ACH, RCC, ach_item, problem, rcc_item, ref

RCC_BULK_QUIRKY = "/apiv3/RccTransactions/companycode/{company}/many"


def test_submit_ach_answers_the_stored_record(api):
    item = ach_item(amount=Decimal("1234.50"))
    answer = api.post(ACH, item)
    assert answer.status_code == 200
    assert b'"amount":1234.50' in answer.content  # exact, two decimals, a JSON number
    record = answer.json(parse_float=Decimal)["transaction"]
    assert record["amount"] == Decimal("1234.50")
    assert record["itemStatus"] == "W"
    assert record["itemStatusDescription"] == "Waiting"
    assert record["yourReferenceNumber"] == item["yourReferenceNumber"]
    assert record["companyCode"] == "DEMO1"
    assert record["returnDate"] is None
    assert record["receivedDateTime"].endswith("Z") and len(record["receivedDateTime"]) == 24
    fetched = api.get(ACH + f"/{record['achItemId']}").json(parse_float=Decimal)
    assert fetched == {"transaction": record}


def test_submit_prenote(api):
    item = ach_item(amount=0, achTransactionSubType="Prenote")
    record = api.post(ACH, item).json()["transaction"]
    assert record["achTransactionSubType"] == "Prenote"
    assert record["amount"] == 0


@pytest.mark.parametrize(("kind", "account", "code"), [
    ("Debit", "Checking", 28), ("Debit", "Savings", 38),
    ("Credit", "Checking", 23), ("Credit", "Savings", 33)])
def test_a_submitted_prenote_gets_the_transaction_code_of_its_direction(api, kind, account,
                                                                         code):
    """NACHA Appendix Three: 28/38 debit prenote, 23/33 credit prenote (checking/savings)."""
    item = ach_item(amount=0, achTransactionSubType="Prenote", achTransactionType=kind,
                    achAccountType=account)
    record = api.post(ACH, item).json()["transaction"]
    assert (record["achTransactionType"], record["achTransactionCode"]) == (kind, code)


def test_submit_rcc(api):
    item = rcc_item(zip="62701 1234", secondSignerFirstName="Al")
    record = api.post(RCC, item).json(parse_float=Decimal)["transaction"]
    assert record["rccItemId"] > 0
    assert record["zip"] == "62701 1234"
    assert record["amount"] == Decimal("49.99")
    assert record["depositDateTime"] is None  # set when it is deposited (S), as the docs say
    assert api.get(RCC + f"/{record['rccItemId']}").json()["transaction"]["itemStatus"] == "W"


def test_list_envelope_paging_and_order(api):
    first = api.get(ACH).json(parse_float=Decimal)
    assert set(first) == {"total", "creditAmount", "debitAmount", "transactions"}
    assert len(first["transactions"]) == 100  # default page size
    second = api.get(ACH, params={"page": 1}).json()
    ids = [r["achItemId"] for r in first["transactions"] + second["transactions"]]
    assert ids == sorted(ids) and len(set(ids)) == 200
    big = api.get(ACH, params={"pageSize": 1000}).json()
    assert [r["achItemId"] for r in big["transactions"][:200]] == ids
    beyond = api.get(ACH, params={"page": 10_000}).json()
    assert beyond["transactions"] == [] and beyond["total"] == first["total"]


def test_list_totals_are_exact_sums(api):
    everything = []
    page = 0
    while True:
        batch = api.get(ACH, params={"page": page, "pageSize": 1000}).json(
            parse_float=Decimal)
        everything += batch["transactions"]
        if len(batch["transactions"]) < 1000:
            break
        page += 1
    assert batch["total"] == len(everything)
    credit = sum(r["amount"] for r in everything if r["achTransactionType"] == "Credit")
    debit = sum(r["amount"] for r in everything if r["achTransactionType"] == "Debit")
    assert batch["creditAmount"] == credit
    assert batch["debitAmount"] == debit


@pytest.mark.parametrize("params", [{"pageSize": 0}, {"pageSize": 1001}, {"page": -1},
                                    {"page": "x"}, {"itemStatus": "Q"},
                                    {"returnDateStart": "yesterday"}])
def test_bad_list_parameters_are_400_naming_them(api, params):
    body = problem(api.get(ACH, params=params), 400)
    assert set(body["errors"]) == set(params)


def test_status_filter_is_repeatable(api):
    answer = api.get(ACH, params=[("itemStatus", "R"), ("itemStatus", "B"),
                                  ("pageSize", 1000)]).json()
    statuses = {r["itemStatus"] for r in answer["transactions"]}
    assert statuses == {"R", "B"}
    assert answer["total"] == len(answer["transactions"])
    returned = api.get(ACH, params={"itemStatus": "R", "pageSize": 1000}).json()
    assert {r["itemStatus"] for r in returned["transactions"]} == {"R"}
    assert all(r["returnReason"].startswith("R") for r in returned["transactions"])


def test_return_date_range(api):
    returned = api.get(ACH, params={"itemStatus": ["R", "I", "B"], "pageSize": 1000}).json()
    dates = sorted(r["returnDate"] for r in returned["transactions"])
    middle = dates[len(dates) // 2]
    start = middle[:10] + "T00:00:00.000"
    end = middle[:10] + "T23:59:59.999"
    window = api.get(ACH, params={"returnDateStart": start, "returnDateEnd": end,
                                  "pageSize": 1000}).json()
    expected = [d for d in dates if d[:10] == middle[:10]]
    assert sorted(r["returnDate"] for r in window["transactions"]) == expected
    assert window["total"] == len(expected)
    # returnDate is the day of the event (midnight UTC)
    assert all(d.endswith("T00:00:00.000Z") for d in dates)


def test_reference_filter(api):
    item = ach_item()
    api.post(ACH, item)
    found = api.get(ACH, params={"yourReferenceNumber": item["yourReferenceNumber"]}).json()
    assert found["total"] == 1
    assert found["transactions"][0]["yourReferenceNumber"] == item["yourReferenceNumber"]


@pytest.mark.parametrize("path", [ACH + "/999999999", ACH + "/abc", RCC + "/999999999",
                                  ACH + "/99999999999999999999999"])
def test_unknown_item_is_404(api, path):
    problem(api.get(path), 404)


def test_unknown_path_is_404_problem(api):
    problem(api.get("/api/v3/Nothing/companycode/{company}"), 404)


@pytest.mark.parametrize("path", [ACH, RCC, "/api/v3/AchNocs/companycode/{company}",
                                  "/api/v3/InstantTransactions/companycode/{company}",
                                  "/api/v3/InstantRtpTransactions/companycode/{company}"])
def test_exports(api, path):
    listed = api.get(path, params={"pageSize": 1000}).json()
    csv_answer = api.get(path + "/export/filetype/csv")
    assert csv_answer.status_code == 200
    assert csv_answer.headers["content-type"].startswith("text/csv")
    assert 'filename="' in csv_answer.headers["content-disposition"]
    rows = list(csv.DictReader(io.StringIO(csv_answer.text)))
    assert len(rows) == listed["total"]
    json_answer = api.get(path + "/export/filetype/json")
    assert json_answer.headers["content-type"] == "application/json"
    records = json_answer.json()
    assert len(records) == listed["total"]
    assert records[: len(listed["transactions"])] == listed["transactions"]
    xlsx_answer = api.get(path + "/export/filetype/XLSX")
    assert xlsx_answer.headers["content-disposition"].endswith('.xlsx"')
    sheet = openpyxl.load_workbook(io.BytesIO(xlsx_answer.content)).active
    table = list(sheet.values)
    assert list(table[0]) == list(rows[0]) if rows else True
    assert len(table) == listed["total"] + 1


def test_export_other_filetype_is_400(api):
    body = problem(api.get(ACH + "/export/filetype/pdf"), 400)
    assert "filetype" in body["errors"]


def test_export_takes_the_list_filters(api):
    answer = api.get(ACH + "/export/filetype/json", params={"itemStatus": "R"})
    assert {r["itemStatus"] for r in answer.json()} == {"R"}


# -- bulk ----------------------------------------------------------------------------
# These run on this module's own sandbox: the I entries they store (some with no
# account number or amount) must not surprise the tests that share `sandbox`.


def test_bulk_commit_valid_keeps_the_valid_ones_in_order(own_api):
    items = [ach_item(), ach_item(bankAccountNumber="12'34"), ach_item(),
             ach_item(amount="abc", state="XX")]
    answer = own_api.post(ACH + "/many", {"alwaysCommitValid": True, "items": items})
    assert answer.status_code == 200
    body = answer.json()
    assert (body["total"], body["validCount"], body["invalidCount"]) == (4, 2, 2)
    entries = body["transactions"]
    assert [e["yourReferenceNumber"] for e in entries] == [i["yourReferenceNumber"]
                                                           for i in items]
    assert [e["itemStatus"] for e in entries] == ["W", "I", "W", "I"]
    assert entries[1]["errors"] == {"bankAccountNumber": [
        "may contain only letters, digits and hyphens"]}
    assert set(entries[3]["errors"]) == {"amount", "state"}
    assert "errors" not in entries[0]
    ids = [e["achItemId"] for e in entries]
    assert ids == sorted(ids)
    for entry in entries:  # invalid entries are stored too, as I
        stored = own_api.get(ACH + f"/{entry['achItemId']}").json()["transaction"]
        assert stored["itemStatus"] == entry["itemStatus"]


def test_bulk_all_or_nothing_stores_nothing(own_api):
    items = [ach_item(), ach_item(), ach_item(bankRoutingNumber="123456789")]
    body = problem(own_api.post(ACH + "/many", {"alwaysCommitValid": False, "items": items}), 400)
    assert body["errors"] == {"items[2].bankRoutingNumber": [
        "is not a valid ABA routing number (checksum fails)"]}
    for item in items:
        found = own_api.get(ACH, params={"yourReferenceNumber": item["yourReferenceNumber"]})
        assert found.json()["total"] == 0


def test_bulk_all_or_nothing_commits_a_clean_set(own_api):
    items = [ach_item(), ach_item()]
    body = own_api.post(ACH + "/many", {"alwaysCommitValid": False, "items": items}).json()
    assert body["validCount"] == 2
    assert all(e["itemStatus"] == "W" for e in body["transactions"])


def test_rcc_bulk_on_the_quirky_path(own_api):
    items = [rcc_item(), rcc_item(zip="62701-1234")]
    answer = own_api.post(RCC_BULK_QUIRKY, {"alwaysCommitValid": True, "items": items})
    assert answer.status_code == 200
    entries = answer.json()["transactions"]
    assert [e["itemStatus"] for e in entries] == ["W", "I"]
    assert list(entries[1]["errors"]) == ["zip"]
    body = problem(own_api.post(RCC_BULK_QUIRKY, {"alwaysCommitValid": False, "items": items}),
                   400)
    assert list(body["errors"]) == ["items[1].zip"]


@pytest.mark.parametrize(("body", "field"), [
    ({"alwaysCommitValid": True, "items": []}, "items"),
    ({"alwaysCommitValid": True}, "items"),
    ({"alwaysCommitValid": "maybe", "items": [ach_item()]}, "alwaysCommitValid"),
    ({"items": [ach_item()], "extra": 1}, "extra"),
    ({"items": "nope"}, "items"),
])
def test_bulk_envelope_errors(own_api, body, field):
    assert field in problem(own_api.post(ACH + "/many", body), 400)["errors"]


def test_bulk_default_commits_valid(own_api):
    body = own_api.post(ACH + "/many", {"items": [ach_item(), ach_item(state="ZZ")]}).json()
    assert body["validCount"] == 1 and body["invalidCount"] == 1


def test_bulk_item_that_is_not_an_object(own_api):
    body = own_api.post(ACH + "/many", {"items": [ach_item(), 42]}).json()
    assert body["transactions"][1]["itemStatus"] == "I"
    assert body["transactions"][1]["errors"] == {"item": ["must be an object"]}


# -- voids ---------------------------------------------------------------------------


def test_void_one(api):
    record = api.post(ACH, ach_item()).json()["transaction"]
    answer = api.put(ACH + f"/{record['achItemId']}/void")
    assert answer.status_code == 200
    voided = answer.json()["transaction"]
    assert voided["itemStatus"] == "V" and voided["itemStatusDescription"] == "Voided"
    body = problem(api.put(ACH + f"/{record['achItemId']}/void"), 400)
    assert str(record["achItemId"]) in json.dumps(body["errors"])


def test_void_unknown_is_404(api):
    problem(api.put(ACH + "/999999999/void"), 404)
    problem(api.put(RCC + "/nope/void"), 404)


def test_void_non_waiting_is_400_naming_the_item(api):
    returned = api.get(ACH, params={"itemStatus": "R", "pageSize": 1}).json()["transactions"][0]
    body = problem(api.put(ACH + f"/{returned['achItemId']}/void"), 400)
    (messages,) = body["errors"].values()
    assert f"item {returned['achItemId']} is R" in messages[0]


def test_void_by_ids_is_all_or_nothing(api):
    one, two = (api.post(ACH, ach_item()).json()["transaction"]["achItemId"] for _ in range(2))
    returned = api.get(ACH, params={"itemStatus": "R", "pageSize": 1}).json()[
        "transactions"][0]["achItemId"]
    body = problem(api.put(ACH + "/void/achitemids", {"achItemIds": [one, returned, 999999999]}),
                   400)
    assert set(body["errors"]) == {"achItemIds[1]", "achItemIds[2]"}
    assert api.get(ACH + f"/{one}").json()["transaction"]["itemStatus"] == "W"
    answer = api.put(ACH + "/void/achitemids", {"achItemIds": [one, two]})
    assert [r["itemStatus"] for r in answer.json()["transactions"]] == ["V", "V"]


def test_void_by_reference_numbers(api):
    items = [rcc_item(), rcc_item()]
    for item in items:
        api.post(RCC, item)
    references = [i["yourReferenceNumber"] for i in items]
    answer = api.put(RCC + "/void/referencenumbers", {"referenceNumbers": references})
    assert answer.status_code == 200
    records = answer.json()["transactions"]
    assert [r["yourReferenceNumber"] for r in records] == references
    assert {r["itemStatus"] for r in records} == {"V"}
    body = problem(api.put(RCC + "/void/referencenumbers",
                           {"referenceNumbers": [ref("none")]}), 400)
    assert body["errors"] == {"referenceNumbers[0]": ["no item has this reference number"]}


def test_void_rcc_by_ids(api):
    record = api.post(RCC, rcc_item()).json()["transaction"]
    answer = api.put(RCC + "/void/rccitemids", {"rccItemIds": [record["rccItemId"]]})
    assert answer.json()["transactions"][0]["itemStatus"] == "V"


@pytest.mark.parametrize(("path", "body", "field"), [
    (ACH + "/void/achitemids", {"achItemIds": []}, "achItemIds"),
    (ACH + "/void/achitemids", {"achItemIds": ["1"]}, "achItemIds[0]"),
    (ACH + "/void/achitemids", {"rccItemIds": [1]}, "rccItemIds"),
    (RCC + "/void/referencenumbers", {"referenceNumbers": "A"}, "referenceNumbers"),
])
def test_void_body_errors(api, path, body, field):
    assert field in problem(api.put(path, body), 400)["errors"]


def test_ids_beyond_64_bits_do_not_exist(api, sandbox):
    body = problem(api.put(ACH + "/void/achitemids", {"achItemIds": [2**70]}), 400)
    assert body["errors"] == {"achItemIds[0]": [f"item {2**70} does not exist"]}
    answer = api.session.post(sandbox.base_url + f"/sandbox/companycode/DEMO1/ach/{2**70}/noc",
                              json={}, timeout=30)
    assert answer.status_code == 404


def test_bulk_invalid_entry_with_a_huge_amount(own_api):
    body = own_api.post(ACH + "/many", {"items": [ach_item(amount=Decimal("1e308"))]}).json()
    assert body["transactions"][0]["itemStatus"] == "I"
    assert body["transactions"][0]["amount"] is None
