"""The NACHA guards through the forms, headlessly: an overdue NOC blocks the ACH form, a
correction is offered and applied, the new-authorization checkbox, reinitiations, the
bulk preview's per-row verdicts; refused entries never reach the sandbox (counted)."""

from __future__ import annotations

import datetime as dt
import itertools
import uuid
from typing import Any

import pytest

from paynb.compliance import service_now
from paynb.errors import GuardWarning
from paynb.forms import AchForm, BulkSubmitForm, NocForm

ROUTING = "021000021"
_ids = itertools.count(900_000)


@pytest.fixture
def fill(fill: Any) -> Any:
    """Type the values, then tick the confirmation, so that a disabled button means the
    guards said no (the tick alone would keep it disabled, and the test could not fail)."""

    def typer(form: Any, **values: Any) -> None:
        fill(form, **values)
        form.confirm.value = True

    return typer


@pytest.fixture
def account() -> str:
    """An account no other test sends to."""
    return f"8{uuid.uuid4().int % 10**11:011d}"


@pytest.fixture
def now(client: Any) -> dt.datetime:
    return service_now(client)


def _record(account: str, received: dt.datetime, **extra: Any) -> dict[str, Any]:
    return {"achItemId": next(_ids), "yourReferenceNumber": f"G-{uuid.uuid4().hex[:8]}",
            "firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
            "zip": "10001", "bankRoutingNumber": ROUTING, "bankAccountNumber": account,
            "achAccountType": "Checking", "achEntryClass": "PPD",
            "achTransactionType": "Debit", "amount": "125.10", "itemStatus": "S",
            "receivedDateTime": received.isoformat(), **extra}


def _noc(client: Any, account: str, received: dt.datetime, code: str = "C01",
         data: str = "555444333222") -> int:
    """A NOC on ``account``, received ``received``, as if the client had listed it."""
    original = _record(account, received - dt.timedelta(days=5))
    noc_id = next(_ids)
    # Kept whole, as a list would keep it once the NOC is known (the service has no such
    # item to fetch it from).
    client.ach.seen.keep_whole.add(str(original["achItemId"]))
    client.ach.seen.add([original])
    client.nocs.seen.add([{"nocId": noc_id, "achItemId": original["achItemId"],
                            "changeCode": code, "correctedData": data,
                            "nocDate": received.isoformat()}])
    return noc_id


def _count(client: Any) -> int:
    return len(client.ach.list(progress=False))


def test_an_overdue_noc_blocks_the_ach_form(client, fill, ach_values, account, now) -> None:
    noc_id = _noc(client, account, now - dt.timedelta(days=20))
    before = _count(client)
    form = AchForm(client)
    fill(form, **{**ach_values, "bankAccountNumber": account})
    assert form.submit_button.disabled
    text = form.status_text
    assert text.startswith(f"Refused: NOC {noc_id} (C01")
    assert "account number to ****3222" in text and "was due" in text
    assert account not in text and "555444333222" not in text
    form.submit_button.click()          # a programmatic click gets nowhere
    assert form.result is None and _count(client) == before
    # The new-authorization box does not lift a NOC: the change must be made.
    form.new_authorization.value = True
    form.confirm.value = True
    assert form.submit_button.disabled


def test_the_ach_form_offers_the_nocs_corrected_values_for_the_account_typed(
        client, fill, ach_values, account, now) -> None:
    _noc(client, account, now - dt.timedelta(days=20), code="C06", data="555444333222 37")
    form = AchForm(client)
    assert form.correction_button.layout.display == "none"
    fill(form, **{**ach_values, "bankAccountNumber": account})
    assert form.submit_button.disabled and form.status_text.startswith("Refused: NOC")
    assert form.correction_button.layout.display is None   # offered
    assert "555444333222" not in repr(form._verdict)
    form.correction_button.click()
    # Typed in from the NOC, not re-keyed: the account number and the account type.
    assert form.fields["bankAccountNumber"].value == "555444333222"
    assert form.fields["achAccountType"].value == "Savings"
    form.confirm.value = True
    assert not form.submit_button.disabled
    assert form.correction_button.layout.display == "none"   # the new account has no NOC


def test_an_open_noc_warns_in_the_ready_line(client, fill, ach_values, account, now) -> None:
    noc_id = _noc(client, account, now)
    form = AchForm(client)
    fill(form, **{**ach_values, "bankAccountNumber": account})
    assert not form.submit_button.disabled
    assert f"Warning: NOC {noc_id} (C01" in form.status_text
    assert form.status_text.startswith("Ready to submit a debit of 125.10")


def test_the_noc_form_offers_the_correction_and_records_it_applied(
        client, fill, ach_values, account, now) -> None:
    noc_id = _noc(client, account, now - dt.timedelta(days=20))
    nocs = NocForm(client)
    assert "overdue" in nocs.status_text
    assert account not in nocs.table.value and "555444333222" not in nocs.table.value
    nocs.select(noc_id)
    assert "account number to ****3222" in nocs.status_text
    nocs.correct_button.click()
    corrected = nocs.correction_form
    assert isinstance(corrected, AchForm)
    # Pre-filled, not retyped: the corrected account and the entry's other account fields.
    assert corrected.fields["bankAccountNumber"].value == "555444333222"
    assert corrected.fields["bankRoutingNumber"].value == ROUTING
    assert corrected.fields["firstSignerLastName"].value == "Doe"
    fill(corrected, yourReferenceNumber=ach_values["yourReferenceNumber"],
         achTransactionType="Debit", amount="125.10")
    assert not corrected.submit_button.disabled   # the new account has no NOC

    nocs.by.value, nocs.note.value = "ana", "CRM updated"
    nocs.apply_button.click()
    assert f"NOC {noc_id} marked applied by ana" in nocs.status_text
    row = nocs.result[nocs.result["nocId"].astype(str) == str(noc_id)].iloc[0]
    # Marked after its due date (the NOC came 20 days ago): applied, late.
    assert row["state"] == "applied late" and row["appliedBy"] == "ana"
    # Applied: the old account is no longer held by this NOC.
    form = AchForm(client)
    fill(form, **{**ach_values, "bankAccountNumber": account})
    assert not form.submit_button.disabled


def test_a_return_needing_authorization_and_the_checkbox(client, fill, ach_values, account,
                                                         now) -> None:
    client.ach.seen.add([_record(account, now - dt.timedelta(days=9), itemStatus="R",
                                  returnReason="R07",
                                  returnDate=(now - dt.timedelta(days=7)).date().isoformat())])
    before = _count(client)
    form = AchForm(client)
    fill(form, **{**ach_values, "bankAccountNumber": account})
    assert form.submit_button.disabled
    assert "returned R07" in form.status_text and "new_authorization" in form.status_text
    form.new_authorization.value = True
    form.confirm.value = True
    assert not form.submit_button.disabled
    form.submit_button.click()
    assert form.result["itemStatus"] == "W" and _count(client) == before + 1
    (override,) = client._journal.overrides.list(client.company_code)
    assert override["rule"] == "returned-account"
    assert override["reference"] == ach_values["yourReferenceNumber"]


def _returned_debits(client: Any, account: str, now: dt.datetime, retries: int) -> None:
    settled = now - dt.timedelta(days=30)
    history = [_record(account, settled - dt.timedelta(days=2), itemStatus="R",
                       returnReason="R01", settleDate=settled.isoformat(),
                       returnDate=(settled + dt.timedelta(days=2)).isoformat())]
    for n in range(retries):
        at = settled + dt.timedelta(days=5 + 5 * n)
        history.append(_record(account, at, itemStatus="R", returnReason="R09",
                               settleDate=(at + dt.timedelta(days=1)).isoformat(),
                               returnDate=(at + dt.timedelta(days=3)).isoformat(),
                               achCompanyEntryDescription="RETRY PYMT"))
    client.ach.seen.add(history)


def test_reinitiations_in_the_form(client, fill, ach_values, account, now) -> None:
    _returned_debits(client, account, now, retries=1)
    form = AchForm(client)
    fill(form, **{**ach_values, "bankAccountNumber": account})
    assert not form.submit_button.disabled
    assert "reinitiation 2 of 2" in form.status_text
    assert "company entry description set to RETRY PYMT" in form.status_text

    client.ach.seen.clear()
    _returned_debits(client, account, now, retries=2)
    before = _count(client)
    third = AchForm(client)
    fill(third, **{**ach_values, "bankAccountNumber": account,
                   "yourReferenceNumber": ach_values["yourReferenceNumber"] + "x"})
    assert third.submit_button.disabled
    assert "reinitiated 2 times" in third.status_text
    third.submit_button.click()
    assert third.result is None and _count(client) == before


def test_the_bulk_preview_gives_each_row_its_verdict(client, ref, account, now) -> None:
    client.ach.seen.add([_record(account, now - dt.timedelta(days=9), itemStatus="R",
                                  returnReason="R02",
                                  returnDate=(now - dt.timedelta(days=7)).date().isoformat())])
    noc_account = f"9{uuid.uuid4().int % 10**11:011d}"
    _noc(client, noc_account, now)
    base = {"firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
            "zip": "10001", "bankRoutingNumber": ROUTING, "achTransactionType": "Credit",
            "amount": "10.00"}
    rows = [{**base, "yourReferenceNumber": ref("g0"), "bankAccountNumber": account},
            {**base, "yourReferenceNumber": ref("g1"), "bankAccountNumber": noc_account},
            {**base, "yourReferenceNumber": ref("g2"), "bankAccountNumber": "000111222333"}]
    before = _count(client)
    form = BulkSubmitForm(client, items=rows)
    preview = form.preview.value
    assert preview.count("paynb-row-invalid") == 1 and "returned R02" in preview
    assert "Warning: NOC" in preview and account not in preview
    assert form.confirm.description.startswith("I confirm: submit 2 ACH items totalling 20.00")
    form.confirm.value = True
    with pytest.warns(GuardWarning, match=r"NOC .* due .*: change account number") as told:
        form.submit_button.click()
    assert len(told) == 1  # the NOC row's warning, once; the refused row is not sent
    assert list(form.result["itemStatus"].astype(str)) == ["I", "W", "W"]
    assert form.result["guard"].iloc[0].startswith("refused: the last entry")
    assert _count(client) == before + 2
    # All or nothing: the refused row blocks the whole set in the form.
    again = BulkSubmitForm(client, items=[{**rows[0], "yourReferenceNumber": ref("h0")}])
    again.commit.value = "All or nothing"
    assert again.submit_button.disabled and "All or nothing" in again.status_text
    again.new_authorization.value = True
    assert "paynb-row-invalid" not in again.preview.value


def _receipts_around_the_deadline(today: dt.date) -> tuple[dt.date, dt.date]:
    """The latest NOC receipt whose sixth banking day is today or later (still allowed), and
    the latest whose sixth banking day is before today (refused): the two sides of the edge."""
    from paynb import calendar

    def sixth(day: dt.date) -> dt.date:
        return calendar.add_banking_days(calendar.next_banking_day(day), 6).date()

    days = [today - dt.timedelta(days=n) for n in range(30)]
    allowed = max(day for day in days if sixth(day) >= today)
    refused = max(day for day in days if sixth(day) < today)
    return allowed, refused


def test_the_noc_deadline_edge_through_the_form(client, fill, ach_values, now) -> None:
    allowed, refused = _receipts_around_the_deadline(now.date())
    for receipt, blocked in ((allowed, False), (refused, True)):
        account = f"6{uuid.uuid4().int % 10**11:011d}"
        _noc(client, account, dt.datetime.combine(receipt, dt.time(12), dt.UTC))
        form = AchForm(client)
        fill(form, **{**ach_values, "bankAccountNumber": account})
        assert form.submit_button.disabled is blocked, (receipt, form.status_text)
        assert ("Refused: NOC" if blocked else "Warning: NOC") in form.status_text


@pytest.mark.parametrize(("days", "blocked"), [(180, False), (181, True)])
def test_the_180_days_edge_through_the_form(client, fill, ach_values, account, now, days,
                                            blocked) -> None:
    settled = dt.datetime.combine(now.date() - dt.timedelta(days=days), dt.time(), dt.UTC)
    client.ach.seen.add([_record(account, settled - dt.timedelta(days=1), itemStatus="R",
                                  returnReason="R01", settleDate=settled.isoformat(),
                                  returnDate=(settled + dt.timedelta(days=2)).isoformat())])
    form = AchForm(client)
    fill(form, **{**ach_values, "bankAccountNumber": account})
    assert form.submit_button.disabled is blocked
    if blocked:
        assert f"{days} days ago" in form.status_text and "within 180 days" in form.status_text
    else:
        assert "reinitiation 1 of 2" in form.status_text and "RETRY PYMT" in form.status_text


@pytest.mark.parametrize(("at", "blocked"), [("2027-12-28T23:00:00+00:00", False),
                                             ("2027-12-29T00:30:00+00:00", True)])
def test_the_sixth_banking_day_across_a_saturday_holiday_through_the_form(
        fill, ach_values, tmp_path, at, blocked) -> None:
    """Christmas 2027 is a Saturday, and the Federal Reserve does not close the Friday
    before: a NOC received Monday 2027-12-20 is due on Tue 28 (21, 22, 23, Fri 24, 27, 28),
    by the sandbox's own clock, moved there."""
    from paynb.sandbox import serve

    with serve(port=0, seed_items=10, seed=2) as sb:
        start = dt.datetime(2027, 12, 20, 12, tzinfo=dt.UTC)
        sb.simulate.advance_clock(seconds=(start - sb.simulate.now()).total_seconds())
        with sb.connect(journal=tmp_path / "journal.sqlite") as client:
            account = f"6{uuid.uuid4().int % 10**11:011d}"
            client.ach.list(progress=False)
            sent = client.ach.submit({**ach_values, "bankAccountNumber": account})
            sb.simulate.force_status(int(sent["achItemId"]), "S")
            noc = sb.simulate.create_noc(int(sent["achItemId"]), change_code="C01",
                                         corrected_data="555444333222")
            assert noc["nocDate"].startswith("2027-12-20")
            client.nocs.list(progress=False)
            moment = dt.datetime.fromisoformat(at)
            sb.simulate.advance_clock(seconds=(moment - sb.simulate.now()).total_seconds())
            before = _count(client)
            form = AchForm(client)
            fill(form, **{**ach_values, "bankAccountNumber": account,
                          "yourReferenceNumber": ach_values["yourReferenceNumber"] + "b"})
            assert form.submit_button.disabled is blocked, form.status_text
            text = form.status_text
            if blocked:
                assert text.startswith(f"Refused: NOC {noc['nocId']} (C01")
                assert "was due 2027-12-28" in text
                form.submit_button.click()
                assert form.result is None and _count(client) == before
            else:
                assert f"Warning: NOC {noc['nocId']} (C01" in text and "due 2027-12-28" in text


def test_with_no_history_the_form_says_it_cannot_check(client, fill, ach_values) -> None:
    form = AchForm(client)   # this client has listed nothing and there is no history store
    fill(form, **ach_values)
    assert not form.submit_button.disabled
    assert "Not checked against NOCs and returns: list ACH items and NOCs or sync the " \
        "history first" in form.status_text
