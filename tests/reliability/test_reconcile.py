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
