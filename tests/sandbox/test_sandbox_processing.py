"""The sandbox clock, business processing, simulation calls, NOCs and seed determinism."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest
from sandbox_helpers import ACH, NOCS, RCC, Api, ach_item, problem, rcc_item

from paynb.codes import NOC_CODES, RETURN_CODES
from paynb.errors import BadRequestError, NotFoundError
from paynb.sandbox import processing, rules, serve


def _get(api: Api, path: str, item_id: int) -> dict:
    return api.get(path + f"/{item_id}").json()["transaction"]


def test_restricted_state_and_blocked_account(own, own_api):
    restricted = own_api.post(ACH, ach_item(state="GU")).json()["transaction"]
    blocked = own_api.post(ACH, ach_item(bankAccountNumber="9991234567")).json()["transaction"]
    assert restricted["itemStatus"] == blocked["itemStatus"] == "W"
    own.simulate.advance_clock(hours=2)
    invalid = _get(own_api, ACH, restricted["achItemId"])
    assert invalid["itemStatus"] == "I"
    assert invalid["returnMessage"] == processing.RESTRICTED_MESSAGE
    event = dt.datetime.fromisoformat(invalid["receivedDateTime"]) + dt.timedelta(hours=1)
    assert invalid["returnDate"] == f"{event:%Y-%m-%d}T00:00:00.000Z"  # the day of the event
    assert _get(own_api, ACH, blocked["achItemId"])["itemStatus"] == "B"
    problem(own_api.put(ACH + f"/{blocked['achItemId']}/void"), 400)


def _cut_off(record: dict) -> dt.datetime:
    """When the item is sent: the cut-off of the next banking day (processing.schedule)."""
    received = dt.datetime.fromisoformat(record["receivedDateTime"])
    ms = int(received.timestamp() * 1000)
    send = int(processing.schedule(processing.Config(), [ms]).send[0])
    return dt.datetime.fromtimestamp(send / 1000, dt.UTC)


def _advance_to(sb, moment: dt.datetime) -> None:
    now = sb.simulate.now()
    if moment > now:
        sb.simulate.advance_clock(seconds=(moment - now).total_seconds())


def test_rcc_is_sent_before_it_can_return(own, own_api):
    records = [own_api.post(RCC, rcc_item()).json()["transaction"] for _ in range(40)]
    cut_off = max(_cut_off(r) for r in records)
    _advance_to(own, cut_off - dt.timedelta(minutes=1))
    assert {_get(own_api, RCC, r["rccItemId"])["itemStatus"] for r in records} == {"W"}
    _advance_to(own, cut_off + dt.timedelta(minutes=1))
    sent = [_get(own_api, RCC, r["rccItemId"]) for r in records]
    assert {r["itemStatus"] for r in sent} == {"S"}
    assert {r["depositDateTime"] for r in sent} == {f"{cut_off:%Y-%m-%dT%H:%M:%S}.000Z"}
    own.simulate.advance_clock(days=12)
    after = [_get(own_api, RCC, r["rccItemId"]) for r in records]
    assert {r["itemStatus"] for r in after} <= {"S", "R"}
    for record in after:
        if record["itemStatus"] == "R":
            assert record["returnMessage"] == RETURN_CODES[record["returnReason"]]


def test_fates_follow_the_documented_draws(own, own_api):
    items = [own_api.post(ACH, ach_item()).json()["transaction"] for _ in range(60)]
    own.simulate.advance_clock(days=70)  # past the latest unauthorized return
    config = processing.Config()
    for item in items:
        u = np.array(rules.draws(own.store.seed, "ach", item["achItemId"], 8)).reshape(8, 1)
        received = int(dt.datetime.fromisoformat(item["receivedDateTime"]).timestamp() * 1000)
        plan = processing.schedule(config, [received])
        expected = processing.ach_fates(
            config, kinds=np.array(["Debit"]), states=np.array(["NY"]),
            accounts=np.array(["000123456789"]), received=np.array([received]),
            settle=plan.settle, u=u[:5]).status[0]
        record = _get(own_api, ACH, item["achItemId"])
        assert record["itemStatus"] == (expected or "S")
        assert record["settleDate"] > record["sendDate"] > record["receivedDateTime"]


def test_force_status_with_code_and_date(own, own_api):
    item = own_api.post(ACH, ach_item()).json()["transaction"]
    record = own.simulate.force_status(item["achItemId"], "R", code="R03",
                                       date=dt.date(2026, 11, 2))
    assert record["itemStatus"] == "R"
    assert record["returnReason"] == "R03"
    assert record["returnMessage"] == RETURN_CODES["R03"]
    assert record["returnDate"] == "2026-11-02T00:00:00.000Z"
    window = own_api.get(ACH, params={"itemStatus": "R",
                                      "returnDateStart": "2026-11-02T00:00:00.000",
                                      "returnDateEnd": "2026-11-02T00:00:00.000"}).json()
    assert item["achItemId"] in [r["achItemId"] for r in window["transactions"]]


def test_force_status_of_rcc_and_blocked(own, own_api):
    item = own_api.post(RCC, rcc_item()).json()["transaction"]
    record = own.simulate.force_status(item["rccItemId"], "B", kind="rcc",
                                       message="Account frozen")
    assert (record["itemStatus"], record["returnMessage"]) == ("B", "Account frozen")
    assert record["returnDate"] is not None


def test_force_status_errors(own):
    with pytest.raises(NotFoundError):
        own.simulate.force_status(999_999_999, "R")
    with pytest.raises(BadRequestError) as caught:
        own.simulate.force_status(1, "R", code="R1")
    assert "code" in caught.value.errors
    with pytest.raises(BadRequestError):
        own.simulate.force_status(1, "R", code="C01")
    with pytest.raises(BadRequestError):
        own.simulate.force_status(1, "Q")


def test_create_noc_and_list_nocs(own, own_api):
    item = own_api.post(ACH, ach_item()).json()["transaction"]
    noc = own.simulate.create_noc(item["achItemId"], change_code="C02",
                                  corrected_data="026009593", date="2026-11-03")
    assert noc["changeCode"] == "C02" and noc["changeReason"] == NOC_CODES["C02"]
    assert noc["achItemId"] == item["achItemId"]
    assert noc["nocDate"] == "2026-11-03T00:00:00.000Z"
    listed = own_api.get(NOCS, params={"yourReferenceNumber": item["yourReferenceNumber"]})
    assert listed.json()["transactions"] == [noc]
    with pytest.raises(BadRequestError):
        own.simulate.create_noc(item["achItemId"], change_code="R01")
    # A well-formed code in no NACHA table is taken, as the real service might send one.
    odd = own.simulate.create_noc(item["achItemId"], change_code="C99")
    assert (odd["changeCode"], odd["changeReason"], odd["correctedData"]) == ("C99", None, "")
    with pytest.raises(NotFoundError):
        own.simulate.create_noc(999_999_999)


@pytest.mark.parametrize(("account", "direction", "sent", "corrected"), [
    ("Checking", "Debit", "27", "37"), ("Savings", "Debit", "37", "27"),
    ("Checking", "Credit", "22", "32"), ("Savings", "Credit", "32", "22")])
def test_a_c05_corrects_the_code_to_the_other_account_in_the_same_direction(
        own, own_api, account, direction, sent, corrected):
    """NACHA's C05 (incorrect transaction code) carries the code the entry should have
    had: a credit stays a credit (22 -> 32), a debit a debit (27 -> 37)."""
    item = own_api.post(ACH, ach_item(achAccountType=account,
                                      achTransactionType=direction)).json()["transaction"]
    assert str(item["achTransactionCode"]) == sent
    noc = own.simulate.create_noc(item["achItemId"], change_code="C05")
    assert noc["correctedData"] == corrected


def test_clock(own):
    before = own.simulate.now()
    after = own.simulate.advance_clock(minutes=30)
    assert after - before >= dt.timedelta(minutes=30)
    with pytest.raises(BadRequestError):
        own.simulate.advance_clock(days=-1)


def test_route_check_expires_with_the_clock(own, own_api):
    own_api.post("/api/v3/InstantRoutes/companycode/{company}", {"cardNumber": "4111111111111111"})
    own.simulate.advance_clock(minutes=16)
    body = {"nameOnCard": "J D", "cardNumber": "4111111111111111", "cardExpiration": "12/2099",
            "amount": 10, "yourReferenceNumber": "late"}
    problem(own_api.post("/api/v3/InstantTransactions/companycode/{company}", body), 400)


def test_simulation_body_errors(own):
    import requests

    for path, body in (("/sandbox/clock/advance", {"weeks": 1}),
                       ("/sandbox/clock/advance", [1]),
                       ("/sandbox/companycode/DEMO1/ach/1/status", {"status": "R", "x": 1}),
                       ("/sandbox/faults/script", {"fault": "explode"})):
        answer = requests.post(own.base_url + path, json=body, timeout=30)
        assert answer.status_code == 400, (path, answer.text)
    assert requests.post(own.base_url + "/sandbox/companycode/DEMO1/wire/1/status",
                         json={"status": "R"}, timeout=30).status_code == 404


def test_demo_data_rates(sandbox, api):
    totals = {}
    for status in ("S", "R", "I", "B", "W", "V"):
        totals[status] = sum(api.get(ACH, company=c, params={"itemStatus": status,
                                                             "pageSize": 1}).json()["total"]
                             for c in ("DEMO1", "DEMO2"))
    everything = sum(totals.values())
    assert everything >= 2000
    assert 0.01 < totals["R"] / everything < 0.06
    nocs = sum(api.get(NOCS, company=c).json()["total"] for c in ("DEMO1", "DEMO2"))
    assert 0 < nocs < 0.02 * everything
    rcc = api.get(RCC, params={"itemStatus": "R", "pageSize": 1}).json()["total"]
    rcc_all = api.get(RCC, params={"pageSize": 1}).json()["total"]
    assert rcc / rcc_all > totals["R"] / everything  # RCC returns more often than ACH


def test_seed_is_deterministic():
    def snapshot(seed: int) -> list:
        with serve(port=0, seed_items=300, seed=seed) as sb:
            api = Api(sb)
            return [api.get(path, params={"pageSize": 1000}).json()["transactions"]
                    for path in (ACH, RCC, NOCS)]

    first, again, other = snapshot(3), snapshot(3), snapshot(4)
    assert first == again
    assert first[0] != other[0]
