"""Dual control: a payment over the limit waits for another analyst, who sends it exactly
as prepared; the one who prepared it cannot; a rejected or expired one is never sent.
Each test runs on an SQLite journal and on a PostgreSQL one (the team's)."""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from datetime import timedelta
from decimal import Decimal
from typing import Any

import pandas as pd
import pytest

import paynb
from paynb.errors import ApprovalError, DuplicateSubmissionError, PaynbWarning

from .conftest import POLICY

pytestmark = pytest.mark.guards_unchecked


def _ref(label: str) -> str:
    return f"DC-{label}-{uuid.uuid4().hex[:8]}"


def _ach(reference: str, amount: str = "2500.10", **changes: Any) -> dict[str, Any]:
    return {"firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
            "zip": "10001", "yourReferenceNumber": reference, "bankRoutingNumber": "021000021",
            "bankAccountNumber": "000123456789", "achTransactionType": "Debit",
            "amount": Decimal(amount), **changes}


def _stored(sb: Any, reference: str) -> list[dict[str, Any]]:
    from reliability.faultrun import service_records

    return service_records(sb, reference=reference)


def test_a_payment_over_the_limit_waits_and_another_analyst_sends_it_as_prepared(
        sb: Any, team: Any, wire: Any) -> None:
    ana, bob = team("ana"), team("bob")
    reference = _ref("ONE")
    held = ana.ach.submit(_ach(reference))
    assert isinstance(held, paynb.Approval)
    assert (held.state, held.prepared_by, held.kind, held.operation) == (
        "awaiting", "ana", "ach", "submit")
    assert held.total == Decimal("2500.10") and held.items == 1
    assert held.why == "2500.10 over the ach limit 1000.00"
    assert wire.writes() == [] and _stored(sb, reference) == []  # nothing sent
    assert "awaiting approval by another analyst" in repr(held)
    assert "the service does not enforce dual control" in repr(held)
    # The queue, as anyone of the team sees it: who, what, total, masked account, age.
    (queued,) = bob.approvals()
    assert (queued.id, queued.prepared_by, queued.accounts, queued.references) == (
        held.id, "ana", ["****6789"], [reference])
    frame = bob.approvals().to_frame()
    assert frame.loc[0, "total"] == Decimal("2500.10") and frame.loc[0, "age"] >= pd.Timedelta(0)
    # The reference is claimed while it waits: nobody sends it meanwhile.
    with pytest.raises(DuplicateSubmissionError, match="by ana at .* awaiting approval by "
                                                       "another analyst"):
        bob.ach.submit(_ach(reference))
    # The one who prepared it cannot approve it.
    with pytest.raises(ApprovalError, match="prepared by ana: another analyst must approve"):
        ana.approve(held.id)
    assert wire.writes() == []

    row = bob.approve(held.id)

    assert row["itemStatus"] == "W" and row["yourReferenceNumber"] == reference
    ((method, path, body),) = wire.writes()
    assert (method, path) == ("POST", "/api/v3/AchTransactions/companycode/DEMO1")
    assert body["amount"] == Decimal("2500.10")  # exactly as prepared, to the cent
    assert body["bankAccountNumber"] == "000123456789"
    assert len(_stored(sb, reference)) == 1
    (entry,) = [e for e in bob.journal().to_dict("records") if e["reference"] == reference]
    assert (entry["by"], entry["state"]) == ("ana", "sent")
    assert entry["detail"] == f"approved by bob (approval {held.id})"
    (done,) = ana.approvals(state="approved")
    assert (done.decided_by, done.state) == ("bob", "approved")
    # Who decided and when (docs/team.md), as the approval shows itself.
    assert f"approved by bob at {done.decided_at:%Y-%m-%d %H:%M:%S} UTC." in repr(done)
    assert len(ana.approvals()) == 0
    with pytest.raises(ApprovalError, match="was approved by bob"):
        bob.approve(held.id)  # once only
    assert len(wire.writes()) == 1


def test_under_the_limit_goes_at_once_and_without_dual_control_nothing_waits(
        team: Any, wire: Any) -> None:
    ana = team("ana")
    row = ana.ach.submit(_ach(_ref("LOW"), "999.99"))
    assert row["itemStatus"] == "W"
    plain = team("cy", dual_control=None)
    assert plain.ach.submit(_ach(_ref("FREE"), "99999.00"))["itemStatus"] == "W"
    assert len(wire.writes()) == 2


def test_a_rejected_payment_is_never_sent_and_frees_its_reference(sb: Any, team: Any,
                                                                   wire: Any) -> None:
    ana, bob = team("ana"), team("bob")
    reference = _ref("REJ")
    held = ana.ach.submit(_ach(reference))
    with pytest.raises(paynb.errors.ValidationError, match="reason"):
        bob.reject(held.id, reason=" ")
    rejected = bob.reject(held.id, reason="wrong account")
    assert (rejected.state, rejected.decided_by, rejected.reason) == (
        "rejected", "bob", "wrong account")
    with pytest.raises(ApprovalError, match="was rejected by bob"):
        bob.approve(held.id)
    assert wire.writes() == [] and _stored(sb, reference) == []
    states = {e["reference"]: e["state"] for e in ana.journal().to_dict("records")}
    assert states[reference] == "declined"
    # The reference is free again; the one who prepared a payment may withdraw it too.
    again = ana.ach.submit(_ach(reference))
    assert isinstance(again, paynb.Approval)
    assert ana.reject(again.id, reason="withdrawn").decided_by == "ana"


def test_an_approval_older_than_its_limit_expires_and_is_never_sent(sb: Any, team: Any,
                                                                    wire: Any) -> None:
    quick = paynb.DualControl(limits={"ach": "1000"},
                              expires_after=timedelta(milliseconds=300))
    ana, bob = team("ana", dual_control=quick), team("bob", dual_control=quick)
    reference = _ref("EXP")
    held = ana.ach.submit(_ach(reference))
    time.sleep(0.4)
    with pytest.raises(ApprovalError, match="was expired"):
        bob.approve(held.id)
    assert wire.writes() == [] and _stored(sb, reference) == []
    (expired,) = bob.approvals(state="expired")
    assert expired.id == held.id
    assert len(bob.approvals()) == 0
    states = {e["reference"]: e["state"] for e in ana.journal().to_dict("records")}
    assert states[reference] == "expired"
    assert isinstance(ana.ach.submit(_ach(reference)), paynb.Approval)  # free again


def test_a_bulk_waits_whole_and_is_sent_as_prepared(sb: Any, team: Any, wire: Any) -> None:
    ana, bob = team("ana"), team("bob")
    references = [_ref(f"B{n}") for n in range(3)]
    rows = [_ach(references[0], "10.00"), _ach(references[1], "20.00", zip="1"),
            _ach(references[2], "30.00")]
    with pytest.warns(PaynbWarning, match="1 of 3 rows failed paynb's checks or guards and "
                                          "are not part of approval"):
        held = ana.ach.submit_many(rows)
    assert (held.operation, held.items, held.total) == ("submit_many", 2, Decimal("40.00"))
    assert held.why == "every bulk needs a second person"
    assert held.references == [references[0], references[2]]
    assert wire.writes() == []
    frame = bob.approve(held.id)
    assert list(frame["row"]) == [0, 2]  # the input's rows
    assert list(frame["yourReferenceNumber"]) == [references[0], references[2]]
    assert list(frame["itemStatus"]) == ["W", "W"]
    ((method, path, body),) = wire.writes()
    assert path.endswith("/many") and [i["amount"] for i in body["items"]] == [
        Decimal("10.00"), Decimal("30.00")]
    assert body["alwaysCommitValid"] is True
    assert [len(_stored(sb, r)) for r in references] == [1, 0, 1]


def test_an_instant_payment_waits_and_the_approver_checks_the_route(sb: Any, team: Any,
                                                                    wire: Any) -> None:
    ana, bob = team("ana"), team("bob")
    reference = _ref("RTP")
    ana.rtp.check_route("021000021")
    held = ana.rtp.send({"firstName": "Jane", "lastName": "Roe", "routingNumber": "021000021",
                         "accountNumber": "12345678", "amount": 100,
                         "yourReferenceNumber": reference})
    assert isinstance(held, paynb.Approval)
    assert held.why == "every instant payment needs a second person"
    assert wire.writes() == []
    sent = bob.approve(held.id)  # bob never checked the route: his client does it first
    assert sent["yourReferenceNumber"] == reference and sent["status"] == "Success"
    assert [path for _, path, _ in wire.writes()] == [
        "/api/v3/InstantRtpTransactions/companycode/DEMO1"]


def test_a_void_over_the_limit_waits_and_one_under_goes(sb: Any, team: Any) -> None:
    plain = team("cy", dual_control=None)
    big = plain.ach.submit(_ach(_ref("VBIG"), "600.00"))
    small = plain.ach.submit(_ach(_ref("VSMALL"), "100.00"))
    ana, bob = team("ana"), team("bob")
    assert ana.ach.void(int(small["achItemId"]))["itemStatus"] == "V"
    held = ana.ach.void(int(big["achItemId"]))
    assert isinstance(held, paynb.Approval)
    assert held.references == [str(big["achItemId"])]  # a void by id names the item
    assert held.why == "a void of 600.00 in all, over the limit 500"
    assert plain.ach.get(int(big["achItemId"]))["itemStatus"] == "W"
    assert bob.approve(held.id)["itemStatus"] == "V"
    # By reference (its amount looked up by it).
    other = plain.ach.submit(_ach(_ref("VREF"), "700.00"))
    by_reference = ana.ach.void_references([other["yourReferenceNumber"]])
    assert isinstance(by_reference, paynb.Approval)
    assert by_reference.why == "a void of 700.00 in all, over the limit 500"
    assert list(bob.approve(by_reference.id)["itemStatus"]) == ["V"]
    # A void of an item whose amount cannot be found waits too.
    unknown = ana.ach.void_many([int(small["achItemId"]) + 10_000])
    assert isinstance(unknown, paynb.Approval)
    assert unknown.why == "a void of an item whose amount could not be looked up"


def test_two_approvers_at_the_same_moment_send_it_once(sb: Any, team: Any, wire: Any) -> None:
    ana, bob, cy = team("ana"), team("bob"), team("cy")
    reference = _ref("RACE")
    held = ana.ach.submit(_ach(reference))
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def approve(client: Any) -> None:
        barrier.wait()
        try:
            client.approve(held.id)
            outcomes.append("sent")
        except ApprovalError:
            outcomes.append("refused")

    threads = [threading.Thread(target=approve, args=(client,)) for client in (bob, cy)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert Counter(outcomes) == {"sent": 1, "refused": 1}
    assert len(wire.writes()) == 1 and len(_stored(sb, reference)) == 1


def test_dual_control_needs_a_journal_and_names_bad_settings(sb: Any) -> None:
    with pytest.raises(paynb.errors.ValidationError, match="dual_control.*needs a journal"):
        sb.connect(journal=None, dual_control=POLICY)
    with pytest.raises(paynb.errors.ValidationError, match="dual_control.wire_over"):
        sb.connect(journal=None, dual_control={"wire_over": "5"})
    with pytest.raises(paynb.errors.ValidationError, match="limits"):
        paynb.DualControl(limits={"ach": "-1"})
    with pytest.raises(paynb.errors.ValidationError, match="expires_after"):
        paynb.DualControl(expires_after=timedelta(0))
