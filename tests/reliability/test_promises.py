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
            # ...until reconcile() looks the item up and settles the entry.
            settled = client.reconcile()
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
        client._transport.sleep = sleeps.append
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
        client._transport.sleep = lambda seconds: None
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
        session = client._transport.session
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
        spy = WireSpy(unmasked._transport.session)
        raw = unmasked.ach.list(progress=False)["bankAccountNumber"].dropna()
        assert any(not a.startswith("*") for a in raw)
        assert spy.token_requests == 1
    finally:
        unmasked.close()
