"""The submission guards: each rule refuses and allows exactly where NACHA says, at its
edges (the sixth banking day, the third reinitiation, the 181st day), in code; and through
``submit``/``submit_many`` against a sandbox of its own, a refused entry never reaches it."""

from __future__ import annotations

import datetime as dt
import itertools
import uuid
import warnings
from collections.abc import Iterator
from typing import Any

import pytest

from paynb import sandbox as paynb_sandbox
from paynb.compliance import (
    NEW_AUTHORIZATION_CODES,
    GuardWarning,
    check_entries,
    service_now,
)
from paynb.errors import SubmissionRefusedError, ValidationError
from paynb.models import AchItem

ROUTING, ACCOUNT = "021000021", "000123456789"
_ids = itertools.count(10_000)


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    """A sandbox of this module's own: its clock moves."""
    with paynb_sandbox.serve(port=0, seed_items=20, seed=5) as served:
        yield served


@pytest.fixture
def client(sb: Any, tmp_path: Any) -> Iterator[Any]:
    with sb.connect(journal=tmp_path / "journal.sqlite") as opened:
        yield opened


def record(received: str, *, status: str = "S", code: str | None = None,
           returned: str | None = None, settle: str | None = None, amount: str = "40.00",
           kind: str = "Debit", account: str = ACCOUNT, **extra: Any) -> dict[str, Any]:
    """An ACH record as the service lists it (a fresh id)."""
    return {"achItemId": next(_ids), "yourReferenceNumber": f"H-{uuid.uuid4().hex[:8]}",
            "firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
            "zip": "10001", "bankRoutingNumber": ROUTING, "bankAccountNumber": account,
            "achAccountType": "Checking", "achEntryClass": "PPD", "achTransactionType": kind,
            "amount": amount, "itemStatus": status, "returnReason": code, "returnDate": returned,
            "receivedDateTime": received, "settleDate": settle, **extra}


def entry(amount: str = "40.00", kind: str = "Debit", **extra: Any) -> dict[str, Any]:
    """A new entry to the same account, as ``submit`` would send it."""
    return {"firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
            "zip": "10001", "yourReferenceNumber": f"N-{uuid.uuid4().hex[:10]}",
            "bankRoutingNumber": ROUTING, "bankAccountNumber": ACCOUNT,
            "achTransactionType": kind, "amount": amount, **extra}


def seen(client: Any, items: list[dict[str, Any]], nocs: list[dict[str, Any]] = ()) -> None:
    """Make ``client`` have seen these records (as a list call would)."""
    client.ach.seen.add(items)
    client.nocs.seen.add(list(nocs))


def verdict(client: Any, body: dict[str, Any], as_of: str, **options: Any) -> Any:
    return check_entries(client, body, as_of=as_of, **options).iloc[0]


# ------------------------------------------------------------------ NOC deadline


def _noc_history(client: Any, code: str = "C01", data: str = "999888777") -> int:
    original = record("2026-06-25T10:00:00Z")
    noc_id = next(_ids)
    seen(client, [original], [{"nocId": noc_id, "achItemId": original["achItemId"],
                               "changeCode": code, "correctedData": data,
                               "nocDate": "2026-06-29T15:00:00Z"}])
    return noc_id


@pytest.mark.parametrize(("as_of", "expected"), [
    ("2026-07-02", "warning"), ("2026-07-03", "warning"),
    ("2026-07-07T23:00:00", "warning"),   # the sixth banking day (Sat 7-4 holiday not moved)
    ("2026-07-08T00:30:00", "refused"),   # the day after
])
def test_an_unapplied_noc_warns_until_its_sixth_banking_day_then_refuses(
        client: Any, as_of: str, expected: str) -> None:
    noc_id = _noc_history(client)
    found = verdict(client, entry(), as_of)
    assert found["verdict"] == expected
    if expected == "refused":
        assert found["rules"] == ["noc-overdue"]
        (reason,) = found["reasons"]
        assert f"NOC {noc_id} (C01" in reason and "received 2026-06-29" in reason
        assert "due 2026-07-07" in reason and "account number to ****8777" in reason
        assert "999888777" not in reason and ACCOUNT not in reason
    else:
        assert "due 2026-07-07" in found["warnings"][0]


def test_an_applied_noc_or_an_entry_with_the_corrected_values_passes(client: Any) -> None:
    noc_id = _noc_history(client, "C05", "32")
    assert verdict(client, entry(), "2026-07-20")["verdict"] == "refused"
    corrected = verdict(client, entry(achAccountType="Savings"), "2026-07-20")
    assert corrected["verdict"] == "ok" and "carries its corrected values" in corrected["notes"][0]
    client.nocs.apply(noc_id, by="ana", note="savings in the CRM")
    assert verdict(client, entry(), "2026-07-20")["verdict"] == "ok"


def test_an_entry_to_the_corrected_account_is_not_held_by_the_old_one(client: Any) -> None:
    _noc_history(client)
    assert verdict(client, entry(bankAccountNumber="999888777"), "2026-07-20")["verdict"] == "ok"


# ------------------------------------------------------ returns needing a new authorization


@pytest.mark.parametrize("code", NEW_AUTHORIZATION_CODES)
def test_a_last_entry_returned_for_want_of_authorization_refuses(client: Any, code: str) -> None:
    seen(client, [record("2026-03-02T10:00:00Z", status="R", code=code,
                         returned="2026-03-05", settle="2026-03-04")])
    refused = verdict(client, entry(kind="Credit"), "2026-03-10")
    assert refused["rules"] == ["returned-account"]
    assert f"returned {code}" in refused["reasons"][0] and "2026-03-05" in refused["reasons"][0]
    passed = verdict(client, entry(kind="Credit"), "2026-03-10", new_authorization=True)
    assert passed["allowed"] and passed["overridden"] == ["returned-account"]


@pytest.mark.parametrize("code", ["R01", "R06", "R11", "R20"])
def test_other_return_codes_do_not_need_a_new_authorization(client: Any, code: str) -> None:
    seen(client, [record("2026-03-02T10:00:00Z", status="R", code=code,
                         returned="2026-03-05", settle="2026-03-04")])
    assert "returned-account" not in verdict(client, entry(amount="7.00"), "2026-03-10")["rules"]


def test_only_the_last_entry_counts(client: Any) -> None:
    seen(client, [record("2026-03-02T10:00:00Z", status="R", code="R02", returned="2026-03-05"),
                  record("2026-03-20T10:00:00Z", status="S", settle="2026-03-23"),
                  record("2026-03-25T10:00:00Z", status="V")])   # voided: never went out
    assert verdict(client, entry(), "2026-04-01")["verdict"] == "ok"


# ------------------------------------------------------------------ reinitiation


def _returned_debit(client: Any, *retries: str) -> None:
    """A debit settled 2026-01-02, returned R01 2026-01-05, and returns of its retries."""
    history = [record("2025-12-30T10:00:00Z", status="R", code="R01", returned="2026-01-05",
                      settle="2026-01-02")]
    for number, day in enumerate(retries):
        history.append(record(f"{day}T10:00:00Z", status="R",
                              code="R09" if number else "R01",
                              returned=(dt.date.fromisoformat(day) + dt.timedelta(days=3))
                              .isoformat(), settle=day,
                              achCompanyEntryDescription="RETRY PYMT"))
    seen(client, history)


def test_a_reinitiation_gets_retry_pymt(client: Any) -> None:
    _returned_debit(client)
    found = verdict(client, entry(), "2026-01-10")
    assert found["verdict"] == "ok"
    assert found["changes"] == {"achCompanyEntryDescription": "RETRY PYMT"}
    assert "reinitiation 1 of 2" in found["notes"][0]
    # Another amount, a credit, or a prenote is not a reinitiation.
    assert verdict(client, entry(amount="40.01"), "2026-01-10")["changes"] == {}
    assert verdict(client, entry(kind="Credit"), "2026-01-10")["changes"] == {}


def test_rows_of_a_frame_are_judged_like_mappings(client: Any) -> None:
    import pandas as pd

    _returned_debit(client)
    rows = pd.DataFrame([entry(), {**entry(), "achTransactionSubType": "Prenote",
                                   "amount": "0"}])   # the first row's sub-type: NaN
    found = check_entries(client, rows, as_of="2026-01-10")
    assert list(found["changes"]) == [{"achCompanyEntryDescription": "RETRY PYMT"}, {}]


def test_an_original_returned_the_day_it_was_received_is_not_its_own_retry(client: Any) -> None:
    # returnDate is a day (its midnight): the original, received later that day, is not a
    # reinitiation of itself.
    seen(client, [record("2026-01-05T15:00:00Z", status="R", code="R01", returned="2026-01-05",
                         settle="2026-01-05")])
    found = verdict(client, entry(), "2026-01-06")
    assert "reinitiation 1 of 2" in found["notes"][0]


def test_a_reinitiation_saying_something_else_is_refused(client: Any) -> None:
    _returned_debit(client)
    found = verdict(client, entry(achCompanyEntryDescription="PAYMENT"), "2026-01-10")
    assert found["rules"] == ["reinitiation-description"]
    assert "'RETRY PYMT'" in found["reasons"][0]
    kept = verdict(client, entry(achCompanyEntryDescription="RETRY PYMT"), "2026-01-10")
    assert kept["verdict"] == "ok" and kept["changes"] == {}


def test_the_second_reinitiation_passes_and_the_third_is_refused(client: Any) -> None:
    _returned_debit(client, "2026-01-12")
    second = verdict(client, entry(), "2026-01-20")
    assert second["allowed"] and "reinitiation 2 of 2" in second["notes"][0]
    client.ach.seen.clear()
    _returned_debit(client, "2026-01-12", "2026-01-22")
    third = verdict(client, entry(), "2026-01-30")
    assert third["rules"] == ["reinitiation-limit"]
    assert "reinitiated 2 times" in third["reasons"][0]
    # The original's return code comes with its meaning (issue 36: no bare code).
    assert "was returned R01 (Insufficient funds) on 2026-01-05" in third["reasons"][0]
    assert verdict(client, entry(), "2026-01-30", new_authorization=True)["allowed"]


def test_once_a_reinitiation_settles_the_next_debit_is_a_new_entry(client: Any) -> None:
    _returned_debit(client)
    seen(client, [record("2026-01-12T10:00:00Z", status="S", settle="2026-01-14",
                         achCompanyEntryDescription="RETRY PYMT")])
    assert verdict(client, entry(), "2026-01-14")["changes"] != {}   # settles today: pending
    paid = verdict(client, entry(), "2026-02-12")
    assert paid["verdict"] == "ok" and paid["changes"] == {} and paid["notes"] == []


@pytest.mark.parametrize(("as_of", "allowed"), [
    ("2026-07-01", True),    # settled 2026-01-02 + 180 days
    ("2026-07-02", False),   # the 181st day
])
def test_the_180_days_run_from_the_original_settlement(client: Any, as_of: str,
                                                       allowed: bool) -> None:
    assert (dt.date.fromisoformat(as_of) - dt.date(2026, 1, 2)).days == (180 if allowed else 181)
    _returned_debit(client)
    found = verdict(client, entry(), as_of)
    assert bool(found["allowed"]) is allowed
    if not allowed:
        assert found["rules"] == ["reinitiation-window"]
        assert "settled 2026-01-02, 181 days ago" in found["reasons"][0]


# ------------------------------------------------------------------ history and clock


def test_with_no_history_it_warns_once_that_it_cannot_check(client: Any) -> None:
    found = check_entries(client, [entry(), entry()])
    assert list(found["verdict"]) == ["warning", "warning"]
    assert "cannot check" in found.loc[0, "warnings"][0]
    assert "nothing" in found.loc[0, "checked"]
    with pytest.warns(GuardWarning, match="cannot check"):
        client.ach.submit(entry(amount="1.11"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", GuardWarning)
        client.ach.submit(entry(amount="1.12"))   # history now: what it submitted


def test_ignoring_paynb_warnings_covers_the_guards(client: Any) -> None:
    import paynb

    assert issubclass(GuardWarning, paynb.PaynbWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.filterwarnings("ignore", category=paynb.PaynbWarning)
        sent = client.ach.submit(entry(amount="1.13"))   # the "cannot check" notice: ignored
    assert sent["itemStatus"] == "W"


def test_the_guards_use_the_sandbox_clock(sb: Any, client: Any) -> None:
    assert abs((service_now(client) - sb.simulate.now()).total_seconds()) < 5


# ------------------------------------------------------------------ through submit and submit_many


def _count(client: Any) -> int:
    return len(client.ach.list(progress=False))


def _fresh_account() -> str:
    """An account no other test of the shared-clock sandbox sends to."""
    return f"7{uuid.uuid4().int % 10**11:011d}"


def test_a_refused_entry_never_reaches_the_sandbox(sb: Any, client: Any) -> None:
    now = service_now(client)
    account = _fresh_account()
    before = _count(client)
    seen(client, [record((now - dt.timedelta(days=10)).isoformat(), status="R", code="R03",
                         returned=(now - dt.timedelta(days=8)).date().isoformat(),
                         account=account)])
    with pytest.raises(SubmissionRefusedError, match="returned R03") as refused:
        client.ach.submit(entry(bankAccountNumber=account))
    assert refused.value.verdicts[0].refusals[0][0] == "returned-account"
    assert _count(client) == before
    assert client.journal().empty   # nothing reserved either
    sent = client.ach.submit(entry(bankAccountNumber=account), new_authorization=True)
    assert sent["itemStatus"] == "W" and _count(client) == before + 1
    (override,) = client._journal.overrides.list(client.company_code)
    assert override["rule"] == "returned-account" and override["by"]
    assert account not in override["detail"]


def test_submit_many_judges_each_row(sb: Any, client: Any) -> None:
    now = service_now(client)
    account = _fresh_account()
    before = _count(client)
    seen(client, [record((now - dt.timedelta(days=10)).isoformat(), status="R", code="R02",
                         returned=(now - dt.timedelta(days=8)).date().isoformat(),
                         account=account)])
    mine, other = {"bankAccountNumber": account}, {"bankAccountNumber": _fresh_account()}
    rows = [entry(**mine), entry(**other), entry(kind="Credit", **mine)]
    with pytest.raises(SubmissionRefusedError, match="row 0"):
        client.ach.submit_many(rows, commit_valid=False)
    assert _count(client) == before
    result = client.ach.submit_many(rows, commit_valid=True)
    assert list(result["itemStatus"].astype(str)) == ["I", "W", "I"]
    assert result.loc[0, "errors"]["guard"][0].startswith("the last entry to this account")
    assert result.loc[0, "guard"].startswith("refused: the last entry")
    assert result.loc[1, "guard"] == "ok"
    assert _count(client) == before + 1


@pytest.mark.skipif("achCompanyEntryDescription" not in
                    {info.alias for info in AchItem.model_fields.values()},
                    reason="the ACH request model has no achCompanyEntryDescription yet "
                           "(added on the fidelity branch)")
def test_a_reinitiation_reaches_the_sandbox_with_retry_pymt(sb: Any, client: Any) -> None:
    now = service_now(client)
    account = _fresh_account()
    seen(client, [record((now - dt.timedelta(days=10)).isoformat(), status="R", code="R01",
                         returned=(now - dt.timedelta(days=6)).date().isoformat(),
                         settle=(now - dt.timedelta(days=8)).date().isoformat(),
                         account=account)])
    sent = client.ach.submit(entry(bankAccountNumber=account))
    stored = client.ach.get(int(sent["achItemId"]))
    assert stored["achCompanyEntryDescription"] == "RETRY PYMT"


def test_the_ledger_fetches_the_entries_of_nocs_it_has_not_seen(sb: Any, tmp_path: Any) -> None:
    account = _fresh_account()
    with sb.connect(journal=None) as other, \
            pytest.warns(GuardWarning, match="cannot check NOCs"):  # a client that listed nothing
        sent = other.ach.submit(entry(bankAccountNumber=account))
    noc = sb.simulate.create_noc(int(sent["achItemId"]), change_code="C05",
                                 corrected_data="37")
    with sb.connect(journal=tmp_path / "j.sqlite") as fresh:
        ledger = fresh.nocs.obligations(progress=False)
        row = ledger[ledger["nocId"] == noc["nocId"]].iloc[0]
        assert row["bankAccountNumber"] == f"****{account[-4:]}"
        assert row["mustChange"] == "transaction code to 37 (savings debit)"
        assert row["state"] == "open"
        record = row["correction"].to_dict()
        assert record["achAccountType"] == "Savings"
        assert record["bankAccountNumber"] == account and record["firstSignerLastName"] == "Doe"
    with sb.connect(journal=tmp_path / "j.sqlite") as listed:
        listed.ach.list(progress=False)   # the guards keep a dozen fields of each item...
        ledger = listed.nocs.obligations(progress=False)
        row = ledger[ledger["nocId"] == noc["nocId"]].iloc[0]
        # ...and the ledger fetches the whole entry of a NOC for its corrected record.
        assert row["correction"].to_dict()["firstSignerLastName"] == "Doe"
        listed.nocs.apply(noc["nocId"])
        again = listed.nocs.obligations(progress=False)
        applied = again[again["nocId"] == noc["nocId"]].iloc[0]
        assert applied["state"] == "applied" and applied["appliedBy"]


def test_a_noc_id_the_client_has_not_seen_is_looked_up_and_a_wrong_one_refused(
        sb: Any, tmp_path: Any) -> None:
    with sb.connect(journal=None) as sender, warnings.catch_warnings():
        warnings.simplefilter("ignore", GuardWarning)   # no history: "cannot check"
        sent = sender.ach.submit(entry(bankAccountNumber=_fresh_account()))
    noc = sb.simulate.create_noc(int(sent["achItemId"]), change_code="C01",
                                 corrected_data="55511122")
    with sb.connect(journal=tmp_path / "j.sqlite") as fresh:
        # Not seen by this client: the service's list is asked, and it holds the NOC.
        assert fresh.nocs.apply(str(noc["nocId"]))["noc_id"] == str(noc["nocId"])
        listed = len(fresh.nocs.list(progress=False))
        for wrong in (-1, f"{noc['nocId']}0"):
            with pytest.raises(ValidationError, match="noc_id") as refused:
                fresh.nocs.apply(wrong)
            assert refused.value.errors == {"noc_id": [refused.value.errors["noc_id"][0]]}
            assert f"'{wrong}' is not the id of a NOC: the service lists {listed:,} NOCs of " \
                   f"company {fresh.company_code}" in str(refused.value)
        # Nothing was recorded for the wrong ids.
        assert set(fresh.context.journal.nocs.applied(fresh.company_code)) == \
            {str(noc["nocId"])}


# ------------------------------------------------------------------ the sandbox's scenarios

#: What the guards say of a new debit of the same amount to each scenario's account, as
#: the scenario's description says (paynb.sandbox.scenarios.SCENARIOS).
SCENARIO_VERDICTS = {
    "SCN-NOC-C01": ("refused", "noc-overdue"), "SCN-NOC-C02": ("refused", "noc-overdue"),
    "SCN-NOC-C07": ("refused", "noc-overdue"), "SCN-NOC-C03": ("warning", None),
    "SCN-NOC-C05": ("warning", None), "SCN-NOC-C06": ("warning", None),
    "SCN-NOC-C09": ("warning", None), "SCN-R01-MAX": ("refused", "reinitiation-limit"),
    "SCN-R01-ONCE": ("ok", None),
}


def test_the_sandbox_scenarios_make_the_guards_fire(client: Any) -> None:
    from paynb.sandbox.scenarios import SCENARIOS

    client.ach.list(progress=False)
    client.nocs.list(progress=False)
    chosen = [s for s in SCENARIOS if s.reference in SCENARIO_VERDICTS]
    bodies = [entry(str(s.amount), bankRoutingNumber=s.routing, bankAccountNumber=s.account)
              for s in chosen]
    found = check_entries(client, bodies)
    for scenario, (_, row) in zip(chosen, found.iterrows(), strict=True):
        verdict_, rule = SCENARIO_VERDICTS[scenario.reference]
        assert row["verdict"] == verdict_, (scenario.reference, row["reasons"], row["warnings"])
        assert row["rules"] == ([rule] if rule else []), scenario.reference
        if scenario.reference.startswith("SCN-NOC"):
            said = (row["reasons"] or row["warnings"])[0]
            assert f"({scenario.noc[0]} " in said and scenario.account not in said
    once = found.iloc[[s.reference for s in chosen].index("SCN-R01-ONCE")]
    assert once["changes"] == {"achCompanyEntryDescription": "RETRY PYMT"}


def test_a_mark_made_by_another_process_shows_in_this_ledger(sb: Any, tmp_path: Any) -> None:
    # The "shared by processes using the same journal": a second Python process
    # marks the NOC applied while this client's journal is open; the first mark stands.
    import subprocess
    import sys

    account = _fresh_account()
    journal = tmp_path / "shared.sqlite"
    with sb.connect(journal=journal) as here, pytest.warns(GuardWarning, match="cannot check"):
        sent = here.ach.submit(entry(bankAccountNumber=account))
        noc = sb.simulate.create_noc(int(sent["achItemId"]), change_code="C05",
                                     corrected_data="37")
        before = here.nocs.obligations(progress=False)
        assert before.loc[before["nocId"] == noc["nocId"], "state"].item() == "open"
        # The other process at this one's time: under ``--moment`` its own clock would be
        # today's, and a mark made after this process's now is not applied yet.
        child = (
            "import sys, time_machine\n"
            "time_machine.travel(sys.argv[4], tick=True).start()\n"
            "from paynb.sandbox.server import Sandbox\n"
            "handle = Sandbox(sys.argv[1])\n"
            "with handle.connect(journal=sys.argv[2]) as other:\n"
            "    mark = other.nocs.apply(sys.argv[3], by='bo', note='from the other process')\n"
            "    print(mark['already'])\n")
        for expected in ("False", "True"):
            done = subprocess.run([sys.executable, "-c", child, sb.base_url, str(journal),
                                   str(noc["nocId"]), dt.datetime.now(dt.UTC).isoformat()],
                                  capture_output=True, text=True,
                                  timeout=120, check=True)
            assert done.stdout.strip() == expected
        mine = here.nocs.apply(noc["nocId"], by="ana")
        assert mine["already"] is True and mine["by"] == "bo"
        after = here.nocs.obligations(progress=False)
        row = after[after["nocId"] == noc["nocId"]].iloc[0]
        assert row["state"] == "applied" and row["appliedBy"] == "bo"
