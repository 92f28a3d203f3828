"""Wire records built by the store: field order, status names and exact amounts, every kind."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest

from paynb.codes import STATUS_NAMES
from paynb.sandbox.seed import seed_demo
from paynb.sandbox.store import KINDS, ListQuery, Store


@pytest.fixture(scope="module")
def store() -> Iterator[Store]:
    store = Store(None, seed=3)
    seed_demo(store, items=300, seed=3)
    yield store
    store.close()


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_records_have_the_wire_fields_in_order(store: Store, kind: str) -> None:
    page = store.list(kind, "DEMO1", ListQuery(page=0, page_size=50))["transactions"]
    assert page
    fields = list(KINDS[kind].fields)
    if "itemStatus" in fields:
        fields.insert(fields.index("itemStatus") + 1, "itemStatusDescription")
    for record in page:
        assert list(record) == fields == Store._record_names(KINDS[kind])
        if "itemStatus" in record:
            assert record["itemStatusDescription"] == STATUS_NAMES[record["itemStatus"]]
        if KINDS[kind].amount == "cents":
            assert isinstance(record["amount"], Decimal)
            assert record["amount"].as_tuple().exponent == -2


def test_filtered_pages_are_the_matches_in_id_order(store: Store) -> None:
    everything = store.list("ach", "DEMO1", ListQuery(page=0, page_size=1000))["transactions"]
    wanted = [r["achItemId"] for r in everything if r["itemStatus"] in ("B", "I", "R", "W")
              and r["returnDate"] is not None]
    wanted_all = [r["achItemId"] for r in everything if r["itemStatus"] in ("W", "R")]
    for statuses, expected, returned_only in ((("B", "I", "R", "W"), wanted, True),
                                              (("W", "R"), wanted_all, False)):
        got: list[int] = []
        for page in range(100):
            query = ListQuery(page=page, page_size=7, statuses=statuses,
                              return_from=0 if returned_only else None)
            records = store.list("ach", "DEMO1", query)["transactions"]
            got += [r["achItemId"] for r in records]
            if len(records) < 7:
                break
        assert got == expected and expected
