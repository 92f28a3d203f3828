"""Wire records built by the store: field order, status names and exact amounts, every kind."""

from __future__ import annotations

from collections.abc import Iterator
from decimal import Decimal

import pytest

from paynb.codes import STATUS_NAMES
from paynb.sandbox import queries, tables
from paynb.sandbox.queries import ListQuery, Queries
from paynb.sandbox.seed import seed_demo
from paynb.sandbox.store import Store
from paynb.sandbox.tables import KINDS
from paynb.sandbox.wire import dumps, parse_timestamp


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
        assert list(record) == fields == tables.record_names(KINDS[kind])
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


# Text a client may send in a name or reference, and amounts at the edges.
_ODD_TEXT = ['O\'Brien "Jr"', "back\\slash", "tab\tnew\nline\r", "\x01\x1f\x7f", "Zoë 名前 🙂",
             "\u2028\u2029", "</script>", ""]
_ODD_CENTS = [0, 1, 5, 99, 100, 12_500, -5, -12_345, 99_999_999_999, None]


def _python_page(store: Store, kind_name: str, company: str, query: ListQuery) -> bytes:
    """The page as tables.record and wire.dumps render it (the reference rendering)."""
    kind = KINDS[kind_name]
    query = queries.fit(kind, query)
    where, params = queries.where(kind, company, query)
    rows = store._db.execute(f"SELECT {tables.columns(kind)} FROM {where} ORDER BY _seq "
                             "LIMIT ? OFFSET ?",
                             [*params, query.page_size, query.page * query.page_size])
    total, credit, debit = store._totals(kind, company, query)
    return dumps({"total": total, "creditAmount": store._amount_total(kind, credit),
                  "debitAmount": store._amount_total(kind, debit),
                  "transactions": [tables.record(kind, row) for row in rows]})


@pytest.mark.parametrize("kind_name", sorted(KINDS))
def test_sql_rendered_pages_are_byte_for_byte_the_python_rendering(kind_name: str) -> None:
    kind = KINDS[kind_name]
    store = Store(None, seed=5)
    seed_demo(store, items=4000, seed=5)
    text_fields = [name for name in kind.fields
                   if name not in kind.timestamps | kind.booleans | kind.objects
                   and name not in {kind.pk, "amount", "companyCode", "itemStatus"}]
    ids = [row[0] for row in store._db.execute(
        f"SELECT {kind.pk} FROM {kind.table} WHERE companyCode = 'DEMO1' ORDER BY _seq")]
    assert len(ids) >= 13

    def at(n: int) -> int:  # the n-th item (NOCs are few: edits then share rows)
        return ids[n % len(ids)]

    for n, text in enumerate(_ODD_TEXT):
        store._db.execute(f"UPDATE {kind.table} SET {text_fields[n % len(text_fields)]} = ? "
                          f"WHERE {kind.pk} = ?", (text, at(n)))
    if "amount" in kind.fields:
        for n, cents in enumerate(_ODD_CENTS):
            store._db.execute(f"UPDATE {kind.table} SET amount = ? WHERE {kind.pk} = ?",
                              (cents, at(20 + n)))
    if "itemStatus" in kind.fields:
        store._db.execute(f"UPDATE {kind.table} SET itemStatus = 'Q' WHERE {kind.pk} = ?",
                          (at(40),))  # a code the sandbox does not know has no name
    for name in kind.timestamps:  # epoch, a millisecond on each side of a second, null
        for n, ms in enumerate([0, 1_700_000_000_001, 1_700_000_000_999, None]):
            store._db.execute(f"UPDATE {kind.table} SET {name} = ? WHERE {kind.pk} = ?",
                              (ms, at(50 + n)))
    for name in kind.booleans:  # stored 0/1, sent as false/true
        for n, flag in enumerate([1, 0, None]):
            store._db.execute(f"UPDATE {kind.table} SET {name} = ? WHERE {kind.pk} = ?",
                              (flag, at(60 + n)))
    for name in kind.objects:  # stored as dumps wrote them, odd text and decimals inside
        for n, value in enumerate([{"a": _ODD_TEXT[0], "b": {"c": _ODD_TEXT[4], "n": 1}},
                                   {"x": _ODD_TEXT[2], "amount": Decimal("10.50")},
                                   {"empty": {}, "list": [1, "two", None]}, None]):
            stored = None if value is None else dumps(value).decode()
            store._db.execute(f"UPDATE {kind.table} SET {name} = ? WHERE {kind.pk} = ?",
                              (stored, at(70 + n)))
    store._queries.changed(kind_name)  # the edits above bypass the store: drop cached totals
    asked = [ListQuery(page=page, page_size=100) for page in range(len(ids) // 100 + 2)]
    if "itemStatus" in kind.fields:
        asked += [ListQuery(page=0, page_size=500, statuses=("W", "R", "Q")),
                    ListQuery(page=1, page_size=3, statuses=("B", "I", "R"), return_from=0)]
    for query in asked:
        assert store.list_json(kind_name, "DEMO1", query) == \
            _python_page(store, kind_name, "DEMO1", query), query
    store.close()


def test_filtered_pages_match_a_plain_filter_whichever_way_the_store_picks_them(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    everything = store.list("ach", "DEMO1", ListQuery(page=0, page_size=1000))["transactions"]
    stamps = sorted(r["returnDate"] for r in everything if r["returnDate"])
    ways: list[str] = []
    pick = Queries.page_rowids

    def spy(self: Queries, *args: object) -> tuple[str, list[object]]:
        chosen = pick(self, *args)
        ways.append("merge" if "UNION ALL" in chosen[0] else "sort")
        return chosen

    monkeypatch.setattr(Queries, "page_rowids", spy)
    ms = {stamp: parse_timestamp(stamp) for stamp in stamps}
    ranges = [(None, None), (ms[stamps[0]], ms[stamps[-1]]),  # every return date
              (ms[stamps[len(stamps) // 2]], ms[stamps[len(stamps) // 2 + 2]])]  # narrow
    for statuses in (("R",), ("B", "I", "R"), ("W", "R", "V"), ("I", "B")):
        for low, high in ranges:
            def matches(record: dict, low: int | None = low, high: int | None = high,
                        statuses: tuple[str, ...] = statuses) -> bool:
                when = parse_timestamp(record["returnDate"]) if record["returnDate"] else None
                if record["itemStatus"] not in statuses:
                    return False
                if low is None and high is None:
                    return True
                return when is not None and low <= when <= high
            expected = [r["achItemId"] for r in everything if matches(r)]
            for size in (1, 4, 50):
                got: list[int] = []
                for page in range(len(expected) // size + 2):
                    query = ListQuery(page=page, page_size=size, statuses=statuses,
                                      return_from=low, return_to=high)
                    got += [r["achItemId"] for r in
                            store.list("ach", "DEMO1", query)["transactions"]]
                assert got == expected, (statuses, low, high, size)
    assert {"merge", "sort"} <= set(ways)


@pytest.mark.parametrize("kind_name", ["ach", "rcc"])
def test_the_totals_of_statuses_are_the_sums_of_their_items(store: Store, kind_name: str
                                                            ) -> None:
    kind = KINDS[kind_name]
    records = store.list(kind_name, "DEMO1", ListQuery(page=0, page_size=1000))["transactions"]
    assert len({r["itemStatus"] for r in records}) >= 3
    for statuses in (("W",), ("S",), ("R", "B", "I"), ("V",), ("W", "S", "R")):
        for dated in (False, True):
            query = ListQuery(page=0, page_size=1, statuses=statuses,
                              return_from=0 if dated else None)
            chosen = [r for r in records if r["itemStatus"] in statuses
                      and (not dated or r["returnDate"] is not None)]
            credit = sum((r["amount"] for r in chosen
                          if kind.totals != "ach" or r["achTransactionType"] == "Credit"),
                         Decimal(0))
            debit = sum((r["amount"] for r in chosen
                         if kind.totals != "ach" or r["achTransactionType"] == "Debit"),
                        Decimal(0))
            page = store.list(kind_name, "DEMO1", query)
            assert page["total"] == len(chosen), (statuses, dated)
            if kind.totals == "ach":
                assert (page["creditAmount"], page["debitAmount"]) == (credit, debit)
            else:  # RCC items are debits
                assert (page["creditAmount"], page["debitAmount"]) == (0, debit)
    # The totals of statuses alone are read from the status index, not from the rows.
    where, params = queries.where(kind, "DEMO1", ListQuery(statuses=("W",)), totals=True)
    plan = " ".join(str(row) for row in store._db.execute(
        f"EXPLAIN QUERY PLAN SELECT COUNT(*), {', '.join(queries.total_expressions(kind))} "
        f"FROM {where}", params))
    assert f"COVERING INDEX {kind.table}_company_status_seq" in plan, plan
