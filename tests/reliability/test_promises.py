"""The promises of docs/safety.md that the larger runs do not isolate: a submission or
void is sent once whatever happens to it, reads retry and honour Retry-After, amounts go
on the wire exactly, card and account numbers are masked.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from paynb import sandbox
from paynb.errors import (
    DuplicateSubmissionError,
    RateLimitError,
    ServerError,
    TransportError,
    ValidationError,
)

from .conftest import WireSpy, make_client, spied_client
from .faultrun import ach_item, service_records

pytestmark = pytest.mark.guards_unchecked


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    with sandbox.serve(port=0, seed_items=400, seed=61) as running:
        yield running


# fault scripted for the next write -> (error raised, journal state, stored in the service)
WRITE_FAULTS = {
    "503": (ServerError, "unknown", False),
    "429": (RateLimitError, "rejected", False),
    "drop": (TransportError, "unknown", False),
    "drop_after_commit": (TransportError, "unknown", True),
}


@pytest.mark.parametrize("fault", list(WRITE_FAULTS))
def test_a_submission_is_sent_once_whatever_happens_to_it(sb: Any, tmp_path: Path,
                                                          fault: str) -> None:
    error, state, stored = WRITE_FAULTS[fault]
    reference = f"ONCE-{fault}"
    with spied_client(sb, journal=tmp_path / "j.sqlite3") as (client, spy):
        client.ach.list(max_items=1, progress=False)
        spy.reset()
        sb.simulate.script_fault(fault, on="writes")
        with pytest.raises(error):
            client.ach.submit(ach_item(reference, 7))
        assert len(spy.select("POST", token=False)) == 1, "a POST is never re-sent"
        journal = client.journal()
        assert list(journal.loc[journal["reference"] == reference, "state"]) == [state]
        assert len(service_records(sb, reference=reference)) == int(stored)
        if state == "unknown":
            # Re-running the cell is refused while the outcome is unknown...
            with pytest.raises(DuplicateSubmissionError):
                client.ach.submit(ach_item(reference, 7))
            # ...until reconcile() looks the item up and settles the entry (at once: the
            # sandbox stores a request before answering or never).
            settled = client.reconcile(settle_after=0)
            assert list(settled["state"]) == ["sent" if stored else "failed"]
        if stored:
            with pytest.raises(DuplicateSubmissionError):
                client.ach.submit(ach_item(reference, 7))
        else:
            assert client.ach.submit(ach_item(reference, 7))["itemStatus"] == "W"
        assert len(service_records(sb, reference=reference)) == 1


@pytest.mark.parametrize("fault", ["503", "drop"])
def test_a_void_is_sent_once(sb: Any, fault: str) -> None:
    with spied_client(sb) as (client, spy):
        item = client.ach.submit(ach_item(f"VOID-ONCE-{fault}", 8))
        spy.reset()
        sb.simulate.script_fault(fault, on="writes")
        with pytest.raises((ServerError, TransportError)):
            client.ach.void(int(item["achItemId"]))
        assert len(spy.select("PUT", token=False)) == 1


@pytest.mark.parametrize("fault", ["503", "429", "drop"])
def test_reads_are_retried_and_honour_retry_after(sb: Any, fault: str) -> None:
    with spied_client(sb, max_retries=3) as (client, spy):
        sleeps: list[float] = []
        client.transport.sleep = sleeps.append
        expected = client.ach.list(page=0, page_size=50, progress=False)
        spy.reset()
        sb.simulate.script_fault(fault, count=2, on="reads")
        again = client.ach.list(page=0, page_size=50, progress=False)
        assert list(again["achItemId"]) == list(expected["achItemId"])
        assert len(spy.select("GET", token=False)) == 3
        assert len(sleeps) == 2
        if fault == "429":
            assert sleeps == [1.0, 1.0], "the sandbox asks for Retry-After: 1"


def test_reads_give_up_after_max_retries(sb: Any) -> None:
    with spied_client(sb, max_retries=2) as (client, spy):
        client.transport.sleep = lambda seconds: None
        client.ach.list(max_items=1, progress=False)
        spy.reset()
        sb.simulate.script_fault("503", count=3, on="reads")
        with pytest.raises(ServerError):
            client.ach.get(1)
        assert len(spy.select("GET", token=False)) == 3


def test_amounts_go_on_the_wire_exactly_and_come_back_exactly(sb: Any) -> None:
    amounts = [Decimal("0.01"), Decimal("10.10"), Decimal("99999999.99"), Decimal("1234.5"),
               "0.30", 19.99, 7]
    with spied_client(sb) as (client, _):
        bodies: list[bytes] = []
        session = client.transport.session
        original = session.send

        def send(request: Any, **kwargs: Any) -> Any:
            if request.method == "POST" and "/api/" in request.url:
                bodies.append(request.body)
            return original(request, **kwargs)

        session.send = send
        rows = [dict(ach_item(f"EXACT-{n}", n), amount=amount)
                for n, amount in enumerate(amounts)]
        result = client.ach.submit_many(rows)
        (body,) = bodies
        sent = json.loads(body, parse_float=Decimal)["items"]
        assert [item["amount"] for item in sent] == [Decimal(str(a)) for a in amounts]
        assert b"0.30000000000000004" not in body and b"e-" not in body.lower()
        assert [Decimal(str(a)) for a in result["amount"]] == [Decimal(str(a))
                                                               for a in amounts]
        # A float artefact is refused before it reaches the wire.
        bodies.clear()
        with pytest.raises(ValidationError) as caught:
            client.ach.submit(dict(ach_item("EXACT-FLOAT", 1), amount=0.1 + 0.2))
        assert "amount" in caught.value.errors and bodies == []


def test_card_and_account_numbers_are_masked(sb: Any) -> None:
    card = "5555555555554444"
    with spied_client(sb) as (client, _):
        client.instant.check_route(card)
        sent = client.instant.send({"nameOnCard": "JANE DOE", "cardNumber": card,
                                    "cardExpiration": "12/2035", "amount": 100,
                                    "yourReferenceNumber": "MASK-1"})
        assert sent["cardLastFour"] == "4444" and card not in sent.to_string()
        listed = client.instant.list(progress=False)
        assert card not in listed.to_csv()
        accounts = client.ach.list(progress=False)["bankAccountNumber"].dropna()
        assert len(accounts) and all(a.startswith("****") and len(a) == 8 for a in accounts)
    unmasked = make_client(sb, mask=False)
    try:
        spy = WireSpy(unmasked.transport.session)
        raw = unmasked.ach.list(progress=False)["bankAccountNumber"].dropna()
        assert any(not a.startswith("*") for a in raw)
        assert spy.token_requests == 1
    finally:
        unmasked.close()


@pytest.mark.parametrize("fault", ["drop", "drop_after_commit"])
def test_lost_answers_of_instant_and_rtp_payments_are_reconciled(sb: Any, tmp_path: Path,
                                                                 fault: str) -> None:
    stored = fault == "drop_after_commit"
    card = "4111111111111111"
    with spied_client(sb, journal=tmp_path / "j.sqlite3") as (client, spy):
        client.instant.check_route(card)
        client.rtp.check_route("021000021")
        sends = {
            "instant": lambda: client.instant.send({
                "nameOnCard": "JANE DOE", "cardNumber": card, "cardExpiration": "12/2035",
                "amount": 100, "yourReferenceNumber": f"LOST-IC-{fault}"}),
            "rtp": lambda: client.rtp.send({
                "firstName": "Jane", "lastName": "Doe", "routingNumber": "021000021",
                "accountNumber": "12345678", "amount": 100,
                "yourReferenceNumber": f"LOST-RTP-{fault}"}),
        }
        for kind, send in sends.items():
            spy.reset()
            sb.simulate.script_fault(fault, on="writes")
            with pytest.raises(TransportError):
                send()
            assert len(spy.select("POST", token=False)) == 1
            with pytest.raises(DuplicateSubmissionError):
                send()  # re-running the cell is refused while the outcome is unknown
            (row,) = client.reconcile(settle_after=0).itertuples()
            assert (row.kind, row.state) == (kind, "sent" if stored else "failed")
            assert (row.item_id is not pd.NA) is stored
            if stored:
                with pytest.raises(DuplicateSubmissionError):
                    send()
            else:
                assert send()["uniqueId"]
        listed = client.instant.list(progress=False)
        assert (listed["yourReferenceNumber"] == f"LOST-IC-{fault}").sum() == 1
        listed = client.rtp.list(progress=False)
        assert (listed["yourReferenceNumber"] == f"LOST-RTP-{fault}").sum() == 1


@pytest.mark.parametrize("fault", ["drop", "drop_after_commit"])
def test_lost_answers_of_voids_are_reconciled(sb: Any, tmp_path: Path, fault: str) -> None:
    done = fault == "drop_after_commit"
    with spied_client(sb, journal=tmp_path / "j.sqlite3") as (client, _):
        items = client.ach.submit_many([ach_item(f"LOST-V{n}-{fault}", n) for n in range(3)])
        ids = [int(i) for i in items["achItemId"]]
        voids = [lambda: client.ach.void(ids[0]), lambda: client.ach.void_many([ids[1]]),
                 lambda: client.ach.void_references([f"LOST-V2-{fault}"])]
        for void in voids:
            sb.simulate.script_fault(fault, on="writes")
            with pytest.raises(TransportError):
                void()
        settled = client.reconcile()
        assert list(settled["operation"]) == ["void", "void_many", "void_references"]
        assert set(settled["state"]) == {"sent" if done else "failed"}
        statuses = [client.ach.get(i)["itemStatus"] for i in ids]
        assert statuses == ["V" if done else "W"] * 3
        if not done:
            assert list(client.ach.void_many(ids)["itemStatus"]) == ["V"] * 3


def test_a_lost_all_or_nothing_bulk_is_reconciled_item_by_item(sb: Any, tmp_path: Path) -> None:
    with spied_client(sb, journal=tmp_path / "j.sqlite3") as (client, spy):
        rows = [ach_item(f"LOST-BULK-{n}", n) for n in range(5)]
        client.ach.list(max_items=1, progress=False)
        spy.reset()
        sb.simulate.script_fault("drop_after_commit", on="writes")
        with pytest.raises(TransportError):
            client.ach.submit_many(rows, commit_valid=False)
        assert len(spy.select("POST", token=False)) == 1
        settled = client.reconcile()
        assert sorted(settled["reference"]) == [r["yourReferenceNumber"] for r in rows]
        assert set(settled["state"]) == {"sent"} and settled["item_id"].notna().all()
        for row in rows:
            assert len(service_records(sb, reference=row["yourReferenceNumber"])) == 1


def test_polling_for_changes_through_faults_misses_nothing_and_repeats_nothing(
        tmp_path: Path) -> None:
    """changes() polled while the clock moves and reads fail: every B/I/R item is reported
    once; a poll that fails for good leaves the watermark where it was."""
    with sandbox.serve(port=0, seed_items=500, seed=62) as sb, \
            spied_client(sb, journal=tmp_path / "j.sqlite3", max_retries=2) as (client, _):
        client.transport.sleep = lambda seconds: None
        reported: list[int] = [int(i) for i in client.ach.changes()["achItemId"]]
        first = len(reported)
        failed_polls = 0
        for step in range(6):
            # New items that business processing will invalidate (restricted state GU)
            # or block (accounts starting 999), and one returned by hand. Accounts differ
            # per step: the same debit to an account returned R01 would be a reinitiation,
            # which paynb's guards limit to two.
            fresh = client.ach.submit_many([
                dict(ach_item(f"POLL-{step}-{n}", n), state="GU" if n % 2 else "NY",
                     bankAccountNumber=f"999{n:05d}" if n % 3 == 0 else f"1{step}{n:06d}")
                for n in range(12)])
            sb.simulate.force_status(int(fresh["achItemId"].iloc[4]), "R", code="R01")
            sb.simulate.advance_clock(days=4)
            if step == 2:
                sb.simulate.script_fault("503", count=3, on="reads")
                with pytest.raises(ServerError):
                    client.ach.changes()
                failed_polls += 1
            with sb.simulate.faults(reads={"error_rate": 0.2, "drop_rate": 0.05}, seed=step):
                frame = client.ach.changes()
            reported += [int(i) for i in frame["achItemId"]]
        truth = {r["achItemId"] for r in service_records(sb)
                 if r["itemStatus"] in ("B", "I", "R")}
        assert failed_polls == 1 and len(truth) > 20
        assert len(reported) > first, "the clock moved: later polls found new changes"
        assert len(reported) == len(set(reported)), "an item was reported twice"
        assert set(reported) == truth, f"missed: {sorted(truth - set(reported))[:10]}"


@pytest.mark.parametrize("how", ["submit", "submit_many", "send"])
def test_an_interrupted_cell_leaves_the_payment_unknown_until_reconciled(
        sb: Any, tmp_path: Path, how: str) -> None:
    """The analyst presses Stop while the answer is on its way: the item is stored, the
    journal says unknown (not failed, which would invite a second payment)."""
    reference = f"STOP-{how}"
    card = "4111111111111111"
    with spied_client(sb, journal=tmp_path / "j.sqlite3") as (client, _):
        client.instant.check_route(card)
        session = client.transport.session
        answered = session.send

        def stop_after_answer(request: Any, **kwargs: Any) -> Any:
            response = answered(request, **kwargs)
            if request.method == "POST" and "/api/" in request.url:
                raise KeyboardInterrupt
            return response

        session.send = stop_after_answer
        calls = {
            "submit": lambda: client.ach.submit(ach_item(reference, 3)),
            "submit_many": lambda: client.ach.submit_many([ach_item(reference, 3)]),
            "send": lambda: client.instant.send({
                "nameOnCard": "JANE DOE", "cardNumber": card, "cardExpiration": "12/2035",
                "amount": 100, "yourReferenceNumber": reference}),
        }
        with pytest.raises(KeyboardInterrupt):
            calls[how]()
        session.send = answered
        journal = client.journal()
        assert list(journal.loc[journal["reference"] == reference, "state"]) == ["unknown"]
        with pytest.raises(DuplicateSubmissionError):
            calls[how]()
        (row,) = client.reconcile().itertuples()
        assert row.state == "sent"
        with pytest.raises(DuplicateSubmissionError):
            calls[how]()


def test_a_submission_that_times_out_is_unknown_and_never_resent(tmp_path: Path) -> None:
    """Every call has a timeout; a POST that meets it is reported, not repeated."""
    from paynb.sandbox import FaultSettings

    with sandbox.serve(port=0, seed_items=0, writes=FaultSettings(latency_ms=1500)) as slow, \
            spied_client(slow, journal=tmp_path / "j.sqlite3", timeout=0.5) as (client, spy):
        with pytest.raises(TransportError) as caught:
            client.ach.submit(ach_item("TIMEOUT-1", 1))
        assert "timed out" in str(caught.value)
        assert len(spy.select("POST", token=False)) == 1
        journal = client.journal()
        assert list(journal["state"]) == ["unknown"]
        with pytest.raises(DuplicateSubmissionError):
            client.ach.submit(ach_item("TIMEOUT-1", 1))
        assert len(spy.select("POST", token=False)) == 1


# ---------------------------------------------------------------- never sent is not unknown

def _unused_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.mark.parametrize("where", ["refused", "no such host"])
def test_a_submission_that_never_reached_the_service_is_not_sent_not_unknown(
        sb: Any, tmp_path: Path, where: str) -> None:
    """Connection refused, or a host name that does not resolve: the request never left.
    The journal says ``failed`` (not sent), not ``unknown``, and the reference may be sent
    again at once, without a reconcile()."""
    from paynb.client import Client
    from paynb.config import Credentials

    address = (f"http://127.0.0.1:{_unused_port()}" if where == "refused"
               else "http://paynb-no-such-host.invalid")
    with Client(base_url=address, auth_url=sb.auth_url, company_code=sb.company_code,
                credentials=Credentials(**sb.credentials.as_dict()),
                journal=tmp_path / "j.sqlite3", max_retries=0, timeout=5) as client:
        for attempt in (1, 2):  # the second attempt is not refused as a duplicate
            with pytest.raises(TransportError) as caught:
                client.ach.submit(ach_item("NEVER-1", 3))
            error = caught.value
            assert error.connected is False
            assert "never reached the service: nothing was sent" in str(error)
            assert "may or may not have processed it" not in str(error)
            journal = client.journal()
            assert list(journal["state"]) == ["failed"] * attempt
            assert "nothing was sent" in journal["detail"].iloc[-1]
        assert client.reconcile().empty  # nothing to settle


def test_a_bulk_and_an_instant_payment_that_never_left_are_not_sent(sb: Any,
                                                                    tmp_path: Path) -> None:
    with spied_client(sb, journal=tmp_path / "j.sqlite3", max_retries=0) as (client, _):
        client.rtp.check_route("021000021")  # the token in hand, the route checked
        client.transport.base_url = f"http://127.0.0.1:{_unused_port()}"
        with pytest.raises(TransportError):
            client.ach.submit_many([ach_item("NEVER-B1", 1), ach_item("NEVER-B2", 2)])
        with pytest.raises(TransportError):
            client.rtp.send({"yourReferenceNumber": "NEVER-R1", "amount": 100,
                             "routingNumber": "021000021", "accountNumber": "12345678",
                             "firstName": "Jane", "lastName": "Roe"})
        journal = client.journal()
        assert dict(zip(journal["reference"], journal["state"], strict=True)) == {
            "NEVER-B1": "failed", "NEVER-B2": "failed", "NEVER-R1": "failed"}


def test_an_answer_lost_after_the_request_left_stays_unknown(sb: Any, tmp_path: Path) -> None:
    """The other side of the line: a connection made and dropped is not 'never sent'."""
    with spied_client(sb, journal=tmp_path / "j.sqlite3") as (client, spy):
        client.ach.list(max_items=1, progress=False)
        sb.simulate.script_fault("drop", on="writes")
        with pytest.raises(TransportError) as caught:
            client.ach.submit(ach_item("DROPPED-1", 7))
        assert caught.value.connected is True
        assert "may or may not have processed it" in str(caught.value)
        assert list(client.journal()["state"]) == ["unknown"]


def test_a_journal_lost_after_sending_warns_and_keeps_the_entry_guarding(
        sb: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A team's database gone away between the reservation and the answer: the payment
    left, so the caller gets its answer and a warning, not an error that hides it; the
    entry stays pending (still guarding the reference) until reconcile()."""
    from paynb.errors import JournalError, PaynbWarning

    with spied_client(sb, journal=tmp_path / "j.sqlite3") as (client, _):
        journal = client._journal

        def gone(*args: Any, **kwargs: Any) -> None:
            raise JournalError("cannot use the journal postgresql://ana:<hidden>@db/paynb: "
                               "server closed the connection unexpectedly")

        monkeypatch.setattr(journal, "settle_many", gone)
        with pytest.warns(PaynbWarning, match="could not record the outcome of 1 ach entry"):
            row = client.ach.submit(ach_item("GONE-1", 5))
        assert row["itemStatus"] == "W"
        monkeypatch.undo()
        assert list(client.journal()["state"]) == ["pending"]
        with pytest.raises(DuplicateSubmissionError):
            client.ach.submit(ach_item("GONE-1", 5))
        # Another process (client) cannot tell this entry from one still being sent: it
        # waits the ten minutes. This client kept the answer: reconcile() records it now.
        with make_client(sb, journal=tmp_path / "j.sqlite3") as other:
            assert other.reconcile().empty
        settled = client.reconcile()
        assert [tuple(row) for row in settled[["reference", "was", "state", "item_id"]]
                .itertuples(index=False)] == [("GONE-1", "pending", "sent",
                                               str(row["achItemId"]))]
        assert list(client.journal()["state"]) == ["sent"]
        assert client.reconcile().empty
