"""The client's record of what it has seen (the guards' history): latest version wins,
whole records only where the guards need them, the oldest forgotten beyond the cap."""

from __future__ import annotations

import pytest

from paynb.nacha import ENTRY_FIELDS
from paynb.resources import _seen
from paynb.resources._seen import SeenRecords


def _item(item_id: int, status: str = "W") -> dict[str, object]:
    return {"achItemId": item_id, "itemStatus": status, "bankRoutingNumber": "021000021",
            "bankAccountNumber": "000123456789", "firstSignerLastName": "Doe", "zip": "10001",
            "address1": "1 Main St"}


def test_latest_version_wins_and_ids_are_needed() -> None:
    seen = SeenRecords("achItemId", ENTRY_FIELDS)
    seen.add([_item(1), _item(2), {"no": "id"}, "not a record"])  # type: ignore[list-item]
    seen.add([_item(1, "R")])
    assert len(seen) == 2 and 1 in seen
    assert [r["achItemId"] for r in seen.records()] == [2, 1]   # re-seen: last
    assert seen.records()[-1]["itemStatus"] == "R"
    seen.add([{"AchItemId": 3, "ItemStatus": "W"}])   # another spelling: found, kept whole
    seen.compact()
    assert seen.whole(3) == {"AchItemId": 3, "ItemStatus": "W"}


def test_compact_keeps_the_guards_fields_and_the_wanted_records_whole() -> None:
    seen = SeenRecords("achItemId", ENTRY_FIELDS)
    seen.add([_item(1), _item(2)])
    assert seen.whole(1) is not None          # as it arrived
    seen.keep_whole.add("2")
    version = seen.version
    seen.compact()
    assert seen.version == version
    assert seen.whole(1) is None and "address1" not in seen.records()[0]
    assert seen.records()[0]["bankAccountNumber"] == "000123456789"
    # The receiver's name stays: a later entry's name shows a C04 change made.
    assert seen.records()[0]["firstSignerLastName"] == "Doe"
    assert seen.whole(2)["address1"] == "1 Main St"
    seen.add([_item(2, "S")])                 # wanted: kept whole as it comes again
    assert seen.whole(2)["itemStatus"] == "S"


def test_the_oldest_are_forgotten_beyond_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_seen, "MAX_RECORDS", 3)
    seen = SeenRecords("nocId")
    seen.add([{"nocId": n} for n in range(5)])
    assert [r["nocId"] for r in seen.records()] == [2, 3, 4]
    seen.clear()
    assert len(seen) == 0
