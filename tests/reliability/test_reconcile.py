"""What ``reconcile()`` promises about lost answers: an item not found is not made
re-submittable before its grace period is over (the service may still store it), and a
lost bulk is looked up with a bounded number of requests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from paynb import sandbox
from paynb.errors import DuplicateSubmissionError, TransportError

from .conftest import spied_client
from .faultrun import ach_item, service_records

pytestmark = pytest.mark.guards_unchecked


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    with sandbox.serve(port=0, seed_items=400, seed=63) as running:
        yield running


def test_a_lost_submission_not_found_yet_stays_unknown_within_settle_after(
        sb: Any, tmp_path: Path) -> None:
    """Not finding a just-lost item proves nothing yet (a real service may store a timed-out
    request a moment later): it stays unknown and blocks a re-send until settle_after."""
    reference = "GRACE-1"
    with spied_client(sb, journal=tmp_path / "j.sqlite3") as (client, spy):
        sb.simulate.script_fault("drop", on="writes")
        with pytest.raises(TransportError):
            client.ach.submit(ach_item(reference, 5))
        (row,) = client.reconcile().itertuples()
        assert (row.reference, row.was, row.state) == (reference, "unknown", "unknown")
        assert "not found in the service yet" in row.detail
        with pytest.raises(DuplicateSubmissionError):
            client.ach.submit(ach_item(reference, 5))
        assert len(spy.select("POST", token=False)) == 1
        (row,) = client.reconcile(settle_after=0).itertuples()
        assert row.state == "failed"
        assert client.ach.submit(ach_item(reference, 5))["itemStatus"] == "W"
    assert len(service_records(sb, reference=reference)) == 1


@pytest.mark.parametrize("fault", ["drop_after_commit", "drop"])
def test_a_lost_bulk_of_300_is_reconciled_with_a_few_list_pages(sb: Any, tmp_path: Path,
                                                                 fault: str) -> None:
    """One lookup per row would cost 300 GETs; the kind's list is fetched once instead."""
    stored = fault == "drop_after_commit"
    rows = [ach_item(f"BULK300-{fault}-{n}", n) for n in range(300)]
    with spied_client(sb, journal=tmp_path / "j.sqlite3") as (client, spy):
        sb.simulate.script_fault(fault, on="writes")
        with pytest.raises(TransportError):
            client.ach.submit_many(rows)
        spy.reset()
        settled = client.reconcile(settle_after=0)
        gets = spy.select("GET", token=False)
        pages = -(-len(service_records(sb)) // client.page_size)
        print(f"reconcile of a lost bulk of 300 ({fault}): {len(gets)} GETs, "
              f"{pages} list pages")
        assert len(gets) == pages <= 10
        assert list(settled["reference"]) == [row["yourReferenceNumber"] for row in rows]
        assert set(settled["state"]) == {"sent" if stored else "failed"}
        assert bool(settled["item_id"].notna().all()) is stored
        journal = client.journal()
        assert set(journal["state"]) == {"sent" if stored else "failed"}
        if stored:
            by_reference = {r["yourReferenceNumber"]: str(r["achItemId"])
                            for r in service_records(sb)}
            assert settled["item_id"].tolist() == [by_reference[row["yourReferenceNumber"]]
                                                   for row in rows]


def test_a_lost_void_of_many_ids_is_reconciled_from_one_list(sb: Any, tmp_path: Path) -> None:
    with spied_client(sb, journal=tmp_path / "j.sqlite3") as (client, spy):
        items = client.ach.submit_many([ach_item(f"VOID30-{n}", n) for n in range(30)])
        ids = [int(i) for i in items["achItemId"]]
        sb.simulate.script_fault("drop_after_commit", on="writes")
        with pytest.raises(TransportError):
            client.ach.void_many(ids)
        spy.reset()
        settled = client.reconcile()
        assert len(spy.select("GET", token=False)) <= 10
        assert list(settled["state"]) == ["sent"] * 30
        assert [int(i) for i in settled["item_id"]] == ids
        assert set(settled["item_status"]) == {"V"}


def test_a_few_lost_entries_are_looked_up_one_by_one(sb: Any, tmp_path: Path) -> None:
    with spied_client(sb, journal=tmp_path / "j.sqlite3") as (client, spy):
        references = [f"FEW-{n}" for n in range(3)]
        for reference in references:
            sb.simulate.script_fault("drop_after_commit", on="writes")
            with pytest.raises(TransportError):
                client.ach.submit(ach_item(reference, 4))
        spy.reset()
        settled = client.reconcile()
        gets = spy.select("GET", token=False)
        assert len(gets) == 3
        assert list(settled["state"]) == ["sent"] * 3


def test_lost_items_the_service_made_invalid_or_blocked_are_settled_so(tmp_path: Path) -> None:
    """An item found with status I (a restricted state) or B (a blocked account: the
    sandbox's 999 prefix) is settled invalid or blocked, as its answer would have been
    recorded, not sent (a B kept as sent refused the corrected item as a duplicate)."""
    restricted = {**ach_item("IB-I", 1), "state": "GU"}
    blocked = {**ach_item("IB-B", 2), "bankAccountNumber": "9991234567"}
    with sandbox.serve(port=0, seed_items=5, seed=7) as own, \
            spied_client(own, journal=tmp_path / "j.sqlite3") as (client, _):
        for item in (restricted, blocked, ach_item("IB-W", 3)):
            own.simulate.script_fault("drop_after_commit", on="writes")
            with pytest.raises(TransportError):
                client.ach.submit(item)
        own.simulate.advance_clock(hours=2)  # business processing: W -> I and B
        settled = client.reconcile()
        assert settled[["reference", "was", "state"]].values.tolist() == [
            ["IB-I", "unknown", "invalid"], ["IB-B", "unknown", "blocked"],
            ["IB-W", "unknown", "sent"]]
        assert settled["item_status"].tolist()[:2] == ["I", "B"]
        journal = client.journal().set_index("reference")
        assert journal.loc["IB-I", "item_status"] == "I"
        assert journal.loc[["IB-I", "IB-B", "IB-W"], "state"].astype(str).tolist() == [
            "invalid", "blocked", "sent"]
        corrected = client.ach.submit({**blocked, "bankAccountNumber": "1234567"})
        assert corrected["itemStatus"] == "W"
