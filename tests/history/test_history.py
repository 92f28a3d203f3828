"""The local history against the sandbox: frames equal to the lists, incremental syncs,
events, SQL, offline opening, masking and argument checks."""

from __future__ import annotations

import datetime as dt
import warnings
from decimal import Decimal
from pathlib import Path

import duckdb
import pandas as pd
import pyarrow.parquet as pq
import pytest
from deltalake import DeltaTable

import paynb
from paynb._attrs import HISTORY
from paynb.errors import ValidationError
from paynb.history import History, HistoryError
from paynb.sandbox import serve

KINDS = ("ach", "rcc", "instant", "rtp", "nocs")


def resource(client, name):
    return getattr(client, name)


def assert_same_as_lists(client, history: History, kinds: tuple[str, ...] = KINDS) -> None:
    for name in kinds:
        live = resource(client, name).list(progress=False)
        stored = getattr(history, name)()
        pd.testing.assert_frame_equal(stored, live, obj=name)
        # Printed alike too (a column of midnights as dates: the frames' own arrays).
        assert [type(stored[c].array) for c in stored] == [type(live[c].array) for c in live]


@pytest.fixture(scope="module")
def synced(client, tmp_path_factory) -> History:
    """The shared sandbox synced once (reads only: the sandbox is not changed)."""
    path = tmp_path_factory.mktemp("history")
    summary = client.sync(path=path, progress=False)
    assert list(summary["kind"]) == ["ach", "rcc", "instant", "rtp", "nocs"]
    return client.history


def ach_item(reference: str, n: int) -> dict:
    return {"firstSignerFirstName": "Hist", "firstSignerLastName": f"Ory{n}", "state": "NY",
            "zip": "10001", "yourReferenceNumber": reference, "bankRoutingNumber": "021000021",
            "bankAccountNumber": f"{987650000 + n}", "achTransactionType": "Debit",
            "amount": Decimal("12.34")}


# --------------------------------------------------------------------------- equal frames

def test_every_kind_reads_back_as_the_list_frame(client, synced):
    assert synced.path == client.history.path
    assert_same_as_lists(client, synced)


def test_filtered_reads_equal_the_filtered_lists(client, synced):
    returned = client.ach.list(status=["R", "B", "I"], progress=False)
    pd.testing.assert_frame_equal(synced.ach(status=["R", "Blocked", "i"]), returned)
    day = returned["returnDate"].dropna().sort_values().iloc[len(returned) // 2]
    since = client.ach.list(returned_from=day, progress=False)
    pd.testing.assert_frame_equal(synced.ach(returned_from=day), since)
    rcc = client.rcc.list(status="R", progress=False)
    pd.testing.assert_frame_equal(synced.rcc(status="R"), rcc)


def test_a_received_range_reads_only_its_months_and_bounds_whole_days(client, synced):
    every = client.ach.list(progress=False)
    received = every["receivedDateTime"]
    first_day = received.min().date()
    expected = every[received.dt.date == first_day].reset_index(drop=True)
    got = synced.ach(start=first_day, end=first_day)
    pd.testing.assert_frame_equal(got, expected)
    # Day before: nothing; the day itself, as a date, holds the items of its last hour too.
    assert synced.ach(end=first_day - dt.timedelta(days=1)).empty
    assert len(synced.ach(start=first_day)) == len(every)


def test_columns_keeps_the_id_and_the_columns_asked(synced):
    frame = synced.ach(columns=["amount", "itemStatus"])
    assert list(frame.columns) == ["achItemId", "amount", "itemStatus"]
    assert str(frame["amount"].dtype) == "decimal128(18, 2)[pyarrow]"
    returned = synced.ach(status="R", returned_from="2020-01-01", columns=["itemStatus"])
    assert list(returned.columns) == ["achItemId", "itemStatus"]
    assert len(returned) == (synced.ach()["itemStatus"] == "R").sum()


def _drawn(ax) -> list:
    """What a chart shows: its lines' points, its bars, its texts, of it and its twins."""
    shown = []
    for axes in ax.figure.axes:
        shown.append([line.get_xydata().tolist() for line in axes.get_lines()])
        # Corners, not get_x(): before matplotlib 3.9 a band (axhspan) is a Polygon.
        shown.append([p.get_verts().tolist() for p in axes.patches])
        shown.append([c.get_offsets().tolist() for c in axes.collections
                      if hasattr(c, "get_offsets")])
        shown.append([t.get_text() for t in axes.texts] + [axes.get_title()])
    return shown


@pytest.mark.parametrize("plot", ["status_summary", "return_trend", "return_rate",
                                  "return_reasons", "returns_calendar",
                                  "return_rate_thresholds", "return_exposure"])
def test_plots_take_history_frames(client, synced, plot):
    import matplotlib.pyplot as plt

    try:
        live = _drawn(getattr(paynb.plots, plot)(client.ach.list(progress=False)))
        stored = _drawn(getattr(paynb.plots, plot)(synced.ach()))
    finally:
        plt.close("all")
    assert any(live) and stored == live


def test_compliance_takes_history_frames(client, synced):
    from paynb import compliance

    live, stored = client.ach.list(progress=False), synced.ach()
    for function in (compliance.return_rates, compliance.rolling_return_rates,
                     compliance.return_exposure):
        pd.testing.assert_frame_equal(function(stored, by="companyCode"),
                                      function(live, by="companyCode"), obj=function.__name__)
    as_of = live["receivedDateTime"].max()
    expected = compliance.report(live, as_of=as_of).tables()
    for name, table in compliance.report(stored, as_of=as_of).tables().items():
        pd.testing.assert_frame_equal(table, expected[name], obj=name)


def test_grouped_items_in_sql_give_the_figures_of_the_frames(synced):
    from paynb import compliance

    # docs/compliance.md, "Grouped items", as written there.
    grouped = synced.sql("""
        select achTransactionType, achTransactionSubType, achEntryClass, itemStatus,
               returnReason, sendDate::date as sendDate,
               achEffectiveDate::date as achEffectiveDate,
               receivedDateTime::date as receivedDateTime, returnDate::date as returnDate,
               settleDate::date as settleDate,
               sign(amount) as sign, sum(amount) as amount, count(*) as items
        from ach group by all""")
    grouped.attrs[HISTORY] = synced.held("ach")
    items = synced.ach()
    assert len(grouped) < len(items) and grouped["items"].sum() == len(items)
    as_of = items["receivedDateTime"].max()
    pd.testing.assert_frame_equal(
        compliance.return_rates(grouped, as_of=as_of, weights="items"),
        compliance.return_rates(items, as_of=as_of))
    pd.testing.assert_frame_equal(
        compliance.return_exposure(grouped, as_of=as_of, weights="items"),
        compliance.return_exposure(items, as_of=as_of))
    with pytest.warns(paynb.PaynbWarning, match="last synced"):  # the mark is read
        compliance.return_rates(grouped, as_of=as_of + pd.Timedelta(days=30),
                                weights="items")


def test_sql_views_hold_the_latest_version_of_each_item(client, synced):
    counts = synced.sql("select itemStatus, count(*) as n from ach group by 1 order by 1")
    live = client.ach.list(progress=False)["itemStatus"].astype(str).value_counts()
    assert dict(zip(counts["itemStatus"], counts["n"], strict=True)) == live.to_dict()
    months = synced.sql("select distinct month from rcc order by 1")["month"].tolist()
    assert months == sorted(months) and months
    nocs = synced.sql("select count(*) as n from nocs")["n"].iloc[0]
    assert nocs == len(client.nocs.list(progress=False))
    events = synced.sql("select count(*) as n from events where kind = 'ach'")["n"].iloc[0]
    assert events == live.sum()


def test_sql_sums_amounts_exactly(synced):
    # DuckDB's own frames make floats of decimals; the history's keep the cents.
    sums = synced.sql("select itemStatus, sum(amount) as total from ach group by 1")
    items = synced.ach()
    expected = {str(s): sum(g.astype(object), Decimal(0))
                for s, g in items.groupby("itemStatus", observed=True)["amount"]}
    assert dict(zip(sums["itemStatus"], sums["total"], strict=True)) == expected
    assert all(isinstance(v, Decimal) for v in sums["total"])


def test_connect_reads_the_committed_files_as_deltalake_does(synced):
    ach = DeltaTable(str(Path(synced.path) / "ach"))
    # DuckDB's own reader over the files of the table's version, not the Arrow dataset.
    assert synced._store.parquet_files("ach", ach) is not None
    query = ("select itemStatus, count(*) as n, sum(amount) as total, "
             "count(distinct achItemId) as ids, max(month) as month from ach group by 1 "
             "order by 1")
    with synced.connect() as connection:
        native = connection.sql(query).to_arrow_table()
        views = {row[0] for row in connection.sql("show tables").fetchall()}
    baseline = duckdb.connect()
    baseline.register("ach", ach.to_pyarrow_dataset())
    assert native.equals(baseline.sql(query).to_arrow_table())
    assert views == {"ach", "rcc", "instant", "rtp", "nocs", "events"}
    with pytest.raises(duckdb.ConnectionException):  # closed by the with block
        connection.sql("select 1")


def test_held_says_what_the_store_holds_of_a_kind(synced):
    held = synced.held("ach")
    assert held == synced.ach(columns=["itemStatus"]).attrs[HISTORY]
    assert held["kind"] == "ach" and held["syncedAt"]
    with pytest.raises(ValidationError, match="kind"):
        synced.held("wires")


def test_history_opens_offline_with_no_client(synced):
    offline = paynb.History(synced.path)
    pd.testing.assert_frame_equal(offline.ach(), synced.ach())
    assert offline.masked is True
    assert "DEMO" in repr(offline) or str(synced.path) in repr(offline)


def test_a_big_read_gives_arrow_back_the_memory_it_no_longer_uses(synced, monkeypatch):
    import pyarrow

    from paynb.history import _reader

    released: list[str] = []

    class Pool:
        def release_unused(self) -> None:
            released.append("released")

    monkeypatch.setattr(pyarrow, "default_memory_pool", lambda: Pool())
    expected = synced.ach()  # a few hundred items: kept, as Arrow would reuse it anyway
    assert released == []
    monkeypatch.setattr(_reader, "RELEASE_BYTES", 1)
    # Given back once the frame is made: the frame is whole (its text is Arrow's memory).
    pd.testing.assert_frame_equal(synced.ach(), expected)
    assert released == ["released"]
    assert len(synced.rcc(columns=["itemStatus"])) > 0 and released == ["released"] * 2


def test_the_files_hold_masked_account_numbers(synced):
    accounts = set()
    for file in (synced.path / "ach").rglob("*.parquet"):  # every file, of any version
        accounts.update(pq.ParquetFile(file).read(columns=["bankAccountNumber"])
                        .column(0).to_pylist())
    assert accounts and all(a is None or a.startswith("****") for a in accounts)
    assert synced.info()["masked"] is True


# --------------------------------------------------------------------------- argument checks

@pytest.mark.parametrize(("call", "argument"), [
    (lambda h: h.ach(start="2026-02-01", end="2026-01-01"), "end"),
    (lambda h: h.ach(returned_from="2026-02-01", returned_to="2026-01-31"), "returned_to"),
    (lambda h: h.ach(status="Z"), "status"),
    (lambda h: h.instant(status="R"), "status"),
    (lambda h: h.ach(start="soon"), "start"),
    (lambda h: h.events("wire"), "kind"),
    (lambda h: h.sql(""), "query"),
])
def test_bad_arguments_are_named(synced, call, argument):
    with pytest.raises(ValidationError) as caught:
        call(synced)
    assert argument in caught.value.errors


def test_a_backwards_range_is_told_as_the_lists_tell_it(client, synced):
    with pytest.raises(ValidationError) as listed:
        client.ach.list(received_from="2026-02-01", received_to="2026-01-01", progress=False)
    with pytest.raises(ValidationError) as read:
        synced.ach(start="2026-02-01", end="2026-01-01")
    assert str(read.value) == str(listed.value).replace("received_from", "start") \
        .replace("received_to", "end")
    assert "selects nothing; swap them" in str(read.value)
    with pytest.raises(ValidationError, match=r"returned_from \(2026-02-01 10:00:00 UTC\) is "
                                              r"after returned_to \(2026-01-31\)"):
        synced.ach(returned_from="2026-02-01T10:00:00Z", returned_to="2026-01-31")


def test_an_unknown_kind_or_column_is_named_with_the_known_ones(synced):
    with pytest.raises(ValidationError, match="kind 'achh' is not one of ach, rcc, instant"):
        synced.events("achh")
    with pytest.raises(ValueError, match=r"columns holds 'nope', 'nada', not a column of the "
                                         r"ach frames; use some of achItemId, .*amount"):
        synced.ach(columns=["amount", "nope", "nada"])


def test_a_company_the_store_does_not_hold_is_told_with_the_ones_it_does(synced):
    other = History(synced.path, company="NOPE")
    with pytest.warns(paynb.history.HistoryCompanyWarning,
                      match="holds no items of company 'NOPE': it holds 'DEMO1'"):
        assert other.ach().empty
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert other.events().empty   # told once per History
        assert len(History(synced.path, company="DEMO1").ach()) == len(synced.ach())


def test_bad_sync_arguments_are_named(client, tmp_path):
    for options, argument in (({"kinds": ["ach", "wire"]}, "kinds"), ({"since": "later"}, "since"),
                              ({"rebuild": "yes"}, "rebuild"), ({"mask": "no"}, "mask"),
                              ({"storage_options": {"region": 1}}, "storage_options")):
        with pytest.raises(ValidationError) as caught:
            client.sync(path=tmp_path, progress=False, **options)
        assert argument in caught.value.errors
    assert not list(tmp_path.iterdir())


# --------------------------------------------------------------------------- incremental

def test_incremental_sync_catches_new_items_returns_settlements_and_voids(private, tmp_path):
    client = private.connect(journal=None, page_size=25)
    first = client.sync(path=tmp_path, progress=False)
    ach = first.set_index("kind").loc["ach"]
    assert ach["written"] == ach["events"] == len(client.ach.list(progress=False))

    # Nothing changed: the list's last page (its answer's total says it is the last), the
    # returns poll, the W and V counts.
    again = client.sync(progress=False).set_index("kind")
    assert again["written"].sum() == 0 and again["events"].sum() == 0
    assert again.loc["ach", "requests"] == 4
    assert again.loc["nocs", "requests"] == 1

    waiting = client.ach.list(status="W", progress=False)["achItemId"].tolist()
    oldest, returned, voided = waiting[0], waiting[-1], waiting[len(waiting) // 2]
    private.simulate.force_status(oldest, "S")                 # quiet: W count, S list
    client.ach.void(voided)                                    # quiet: the V count
    private.simulate.force_status(returned, "R", code="R01")   # the returns poll
    new = client.ach.submit(ach_item("HIST-NEW-1", 1))         # the tail
    private.simulate.create_noc(waiting[1])
    result = client.sync(progress=False).set_index("kind")
    assert result.loc["ach", "written"] == 4 and result.loc["ach", "events"] == 4
    assert result.loc["nocs", "written"] == 1
    assert_same_as_lists(client, client.history)
    counts = client.history.info()["kinds"]["ach"][private.company_code]["counts"]
    live = client.ach.list(progress=False)["itemStatus"].astype(str).value_counts()
    assert {k: v for k, v in counts.items() if v} == live.to_dict()
    # Filters see only the latest version: the returned item is no longer waiting.
    for status in ("W", "R", "S", "V"):
        pd.testing.assert_frame_equal(client.history.ach(status=status),
                                      client.ach.list(status=status, progress=False))
    day = client.ach.list(status="R", progress=False)["returnDate"].max()
    pd.testing.assert_frame_equal(client.history.ach(returned_from=day),
                                  client.ach.list(returned_from=day, progress=False))

    events = client.history.events("ach", item_id=oldest)
    assert events["itemStatus"].tolist() == ["W", "S"]
    assert list(events.columns) == ["kind", "itemId", "itemStatus", "seenAt"]
    assert events["seenAt"].is_monotonic_increasing and events["kind"].eq("ach").all()
    assert client.history.events("ach", item_id=int(new["achItemId"]))["itemStatus"] \
        .tolist() == ["W"]
    both = client.history.events("ach", item_id=[returned, voided])
    assert sorted(both["itemId"].unique()) == sorted([str(returned), str(voided)])
    assert both[both["itemId"] == str(returned)]["itemStatus"].tolist() == ["W", "R"]
    assert both[both["itemId"] == str(voided)]["itemStatus"].tolist() == ["W", "V"]
    later = client.history.events("ach", start=events["seenAt"].iloc[-1])
    assert set(later["itemId"]) == {str(i) for i in (oldest, returned, voided,
                                                      new["achItemId"])}


def test_rcc_deposits_are_synced(private, tmp_path):
    client = private.connect(journal=None, page_size=10)
    for n in range(3):
        client.rcc.submit({
            "firstSignerFirstName": "Sam", "firstSignerLastName": "Lee", "address1": "1 Main",
            "city": "Springfield", "state": "IL", "zip": "62701",
            "yourReferenceNumber": f"HIST-RCC-{n}", "bankRoutingNumber": "021000021",
            "bankAccountNumber": "000987654321", "amount": Decimal("49.99")})
    client.sync(path=tmp_path, kinds="rcc", progress=False)
    assert (client.history.rcc()["itemStatus"] == "W").sum() == 3
    # The waiting RCC items are deposited (W -> S) at the next banking day's cut-off, a
    # weekend or a holiday away on some days (two days from a Friday is a Sunday).
    for _ in range(7):
        private.simulate.advance_clock(days=1)
        if not (client.rcc.list(status="W", progress=False)["itemStatus"] == "W").any():
            break
    moved = client.sync(kinds="rcc", progress=False)
    assert moved["events"].iloc[0] == 3
    pd.testing.assert_frame_equal(client.history.rcc(), client.rcc.list(progress=False))
    assert client.sync(kinds="rcc", progress=False)["written"].iloc[0] == 0


def files_per_partition(path: Path, columns: tuple[str, ...]) -> dict[tuple, int]:
    import pyarrow as pa
    from deltalake import DeltaTable

    actions = pa.table(DeltaTable(str(path)).get_add_actions(flatten=True))
    keys = zip(*(actions.column(f"partition.{c}").to_pylist() for c in columns), strict=True)
    return pd.Series(list(keys)).value_counts().to_dict()


def test_many_syncs_compact_partitions_and_stay_equal(private, tmp_path, monkeypatch):
    from paynb.history import _store

    monkeypatch.setattr(_store, "SMALL_FILES", 4)
    client = private.connect(journal=None)
    client.sync(path=tmp_path, kinds="ach", progress=False)
    ids = client.ach.list(status="W", progress=False)["achItemId"].tolist()
    seen = []
    for n in range(10):
        private.simulate.force_status(ids[n], "R", code="R02")
        client.sync(kinds=["ach"], progress=False)
        seen.append(client.history.events("ach"))
        # Each sync appends a small file of events: four are compacted into one.
        assert max(files_per_partition(tmp_path / "events", ("kind", "company")).values()) < 4
        if n:  # every event kept, in its order (by time, then by id)
            pd.testing.assert_frame_equal(seen[-1].iloc[:-1], seen[-2])
    assert max(files_per_partition(tmp_path / "ach", ("company", "month")).values()) < 4
    pd.testing.assert_frame_equal(client.history.ach(), client.ach.list(progress=False))
    events = client.history.events("ach")
    counts = events.groupby("itemId").size()
    assert counts.max() == 2 and (counts == 2).sum() == 10
    # Every event once, in the order the syncs saw them.
    assert events.iloc[-10:]["itemId"].tolist() == [str(i) for i in ids[:10]]


def test_a_sync_rewrites_only_the_files_that_hold_the_items_it_changes(private, tmp_path,
                                                                       monkeypatch):
    import pyarrow as pa
    from deltalake import DeltaTable

    from paynb.history import _store

    monkeypatch.setattr(_store, "SMALL_FILES", 10**6)  # never compacted
    client = private.connect(journal=None)
    client.sync(path=tmp_path, kinds="ach", progress=False)
    # Each sync of new items only appends them, a file of their own: this month becomes
    # several runs of ids, one file each.
    mine = []
    for n in range(3):
        mine.append(int(client.ach.submit(ach_item(f"HIST-RUN-{n}", n))["achItemId"]))
        client.sync(kinds="ach", progress=False)

    def files() -> dict[str, tuple]:
        actions = pa.table(DeltaTable(str(tmp_path / "ach")).get_add_actions(flatten=True))
        return {row["path"]: (row["partition.month"], row["min.achItemId"],
                              row["max.achItemId"]) for row in actions.to_pylist()}

    before = files()
    month = next(m for m, low, high in before.values() if low <= mine[-1] <= high)
    held = sorted((low, high, path) for path, (m, low, high) in before.items() if m == month)
    assert len(held) >= 3 and held[-1][0] == mine[-1], held
    # An item of the month's first file and the last one; the files between hold none.
    ends = [held[0][0], mine[-1]]
    for item in ends:
        private.simulate.force_status(item, "R", code="R02")
    assert client.sync(kinds="ach", progress=False)["written"].iloc[0] == 2
    after = files()
    kept = {path for _, _, path in held[1:-1]}
    assert kept <= after.keys()  # not rewritten
    assert held[0][2] not in after and held[-1][2] not in after
    pd.testing.assert_frame_equal(client.history.ach(), client.ach.list(progress=False))
    assert client.history.ach()["achItemId"].is_unique


def test_a_column_of_many_distinct_values_keeps_a_small_dictionary(tmp_path):
    """Every file a sync writes, by a backfill or by an incremental sync's rewrite, keeps
    its columns' dictionaries under paynb's limit: a column of many distinct values (ids,
    references, batch ids) goes plain instead of filling deltalake's default 1 MiB
    dictionary first (a quarter of the write's time; benchmarks/RESULTS.md, case 10)."""
    from deltalake import DeltaTable

    from paynb.history import _store

    def largest_dictionary() -> int:
        largest = 0
        for uri in DeltaTable(str(tmp_path / "ach")).file_uris():
            group = pq.read_metadata(uri).row_group(0)
            for i in range(group.num_columns):
                chunk = group.column(i)
                if chunk.has_dictionary_page:
                    largest = max(largest, chunk.data_page_offset - chunk.dictionary_page_offset)
        # (a page's header, and what snappy adds to text it cannot compress, on top)
        return largest - 64

    # Enough items for files of several thousand rows, whose unique texts would fill
    # dictionaries of 100 KiB and more.
    with serve(port=0, seed_items=60_000, seed=7) as sb, sb.connect(journal=None) as client:
        client.sync(path=tmp_path, kinds="ach", progress=False)
        assert 0 < largest_dictionary() <= _store.DICTIONARY_BYTES
        waiting = client.ach.list(status="W", progress=False)["achItemId"].tolist()
        for item in waiting[:3]:
            sb.simulate.force_status(item, "R", code="R01")
        assert client.sync(kinds="ach", progress=False)["written"].iloc[0] == 3
        assert 0 < largest_dictionary() <= _store.DICTIONARY_BYTES


def test_items_that_left_waiting_quietly_are_read_pages_at_a_time(private, tmp_path,
                                                                    store_reads):
    client = private.connect(journal=None, page_size=5)
    client.sync(path=tmp_path, kinds="ach", progress=False)
    # The fixture's own waiting items (the demo's leave W with the sandbox's time of day,
    # which would change the pages the walk needs).
    waiting = client.ach.list(status="W", progress=False)
    waiting = waiting.loc[waiting["yourReferenceNumber"].str.startswith("HIST-W-"),
                          "achItemId"].tolist()
    assert len(waiting) >= 12
    for item in waiting[:12]:  # sent: no filter of the service shows them by date
        private.simulate.force_status(item, "S")
    store_reads.clear()
    assert client.sync(kinds="ach", progress=False)["events"].iloc[0] == 12
    # The S list's pages that can hold the last 12 (three or four of five: how many demo
    # items are sent, and so where the list's last page ends, depends on the sandbox's
    # time of day) are asked at once, and their items looked up in the store by one read,
    # not one read a page: one read for the poll, one for the list's end, one for those
    # pages.
    lookups = [c for c in store_reads if c is not None and "_hash" in c]
    assert len(lookups) <= 3, store_reads
    pd.testing.assert_frame_equal(client.history.ach(), client.ach.list(progress=False))


def test_events_of_an_item_no_sync_has_seen_say_so(synced):
    from paynb.errors import PaynbWarning

    known = synced.events("ach")["itemId"].iloc[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(synced.events("ach", item_id=int(known))) >= 1  # seen: no warning
    with pytest.warns(PaynbWarning, match=r"has seen ach item\(s\) 987654321: they have no"
                      ) as caught:
        assert synced.events("ach", item_id=[int(known), 987654321])["itemId"].eq(known).all()
    assert caught[0].filename == __file__
    many = [str(n) for n in range(900_000_001, 900_000_008)]
    with pytest.warns(PaynbWarning, match=r"item\(s\) 900000001, .*, 900000005 and 2 more"):
        assert synced.events("rcc", item_id=many).empty


def test_history_frames_say_what_the_store_held_and_the_rates_use_it(synced):
    from paynb import compliance
    from paynb._attrs import HISTORY

    items = synced.ach(status=["S", "R"])
    held = items.attrs[HISTORY]
    state = synced.info()["kinds"]["ach"]["DEMO1"]
    assert (held["path"], held["kind"], held["since"]) == (str(synced.path), "ach", None)
    assert pd.Timestamp(held["syncedAt"]) == pd.Timestamp(state["syncedAt"])
    assert synced.nocs().attrs[HISTORY]["kind"] == "nocs"
    day = pd.Timestamp(held["syncedAt"]).date()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compliance.return_rates(items, as_of=day)  # the day of the sync: all there
    with pytest.warns(paynb.PaynbWarning, match=rf"last synced on {day}"):
        compliance.return_rates(items, as_of=day + dt.timedelta(days=1))


def test_since_keeps_later_items_and_refuses_an_earlier_start(private, tmp_path):
    client = private.connect(journal=None)
    every = client.ach.list(progress=False)
    cut = every["receivedDateTime"].sort_values().iloc[len(every) // 2]
    client.sync(path=tmp_path / "cut", kinds="ach", since=cut, progress=False)
    expected = every[every["receivedDateTime"] >= cut].reset_index(drop=True)
    pd.testing.assert_frame_equal(client.history.ach(), expected)
    history = client.history
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(history.ach(start=cut)) == len(expected)  # from the store's start: quiet
    earlier = cut - pd.Timedelta(days=10)
    with pytest.warns(paynb.PaynbWarning, match=rf"keeps ach items from {cut:%Y-%m-%d %H:%M} "
                      rf"UTC on .* though start is {earlier:%Y-%m-%d}; .*rebuild=True") as caught:
        assert len(history.ach(start=earlier)) == len(expected)
    assert caught[0].filename == __file__
    assert client.sync(kinds="ach", progress=False)["written"].sum() == 0
    with pytest.raises(ValidationError, match="rebuild=True"):
        client.sync(kinds="ach", since=cut - pd.Timedelta(days=30), progress=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        client.sync(kinds="ach", since=cut, progress=False)  # the store's own start: quiet
    later = cut + pd.Timedelta(days=1)
    with pytest.warns(paynb.PaynbWarning, match=rf"since={later:%Y-%m-%d %H:%M} UTC is "
                      rf"ignored: .* \(ach keeps the items from {cut:%Y-%m-%d %H:%M} UTC on\)"
                      ) as caught:
        client.sync(kinds="ach", since=later, progress=False)
    assert caught[0].filename == __file__
    pd.testing.assert_frame_equal(client.history.ach(), expected)  # nothing dropped
    whole = tmp_path / "whole"
    client.sync(path=whole, kinds="ach", progress=False)
    client.sync(path=whole, kinds="noc", progress=False)
    with pytest.warns(paynb.PaynbWarning, match=r"ignored: .* \(ach keeps every item; nocs "
                      r"keeps every item\)") as caught:
        client.sync(path=whole, kinds=["ach", "nocs"], since=cut, progress=False)
    assert len(caught) == 1  # one warning for the kinds together


def test_since_applies_to_every_kind_by_its_own_date(private, tmp_path):
    """``since`` bounds the NOCs' ``nocDate`` (a UTC time) as it bounds the other
    kinds' ``receivedDateTime`` (UTC): the NOCs of the cut's day are kept, those of the
    day before are not; the sync of every kind, and the one after it, go through."""
    client = private.connect(journal=None)
    nocs = client.nocs.list(progress=False)
    days = nocs["nocDate"].dt.normalize().drop_duplicates().sort_values()
    assert len(days) >= 3, "the seeded sandbox should date its NOCs on several days"
    cut = days.iloc[len(days) // 2]
    kept = nocs[nocs["nocDate"] >= cut]
    assert 0 < len(kept) < len(nocs)
    assert (nocs["nocDate"] < cut).any()
    summary = client.sync(path=tmp_path, since=cut.date(), progress=False)
    assert list(summary["kind"]) == ["ach", "rcc", "instant", "rtp", "nocs"]
    stored = client.history.nocs()
    assert sorted(stored["nocDate"].dt.normalize().unique()) == sorted(kept["nocDate"].dt
                                                                    .normalize().unique())
    assert len(stored) == len(kept)
    assert stored["nocDate"].dt.normalize().min() == cut  # the cut's own day is in
    start = cut  # a UTC midnight, as every time of the frames is UTC
    for name in ("ach", "rcc", "instant", "rtp"):
        live = resource(client, name).list(progress=False)
        expected = live[live["receivedDateTime"] >= start].reset_index(drop=True)
        pd.testing.assert_frame_equal(getattr(client.history, name)(), expected, obj=name)
    again = client.sync(progress=False)
    assert again["written"].sum() == 0


def test_since_after_the_services_time_is_refused(private, tmp_path):
    client = private.connect(journal=None)
    now = pd.Timestamp(client.context.clock.now())
    with pytest.raises(ValidationError, match=r"since \(.*\) is after the service's time now"):
        client.sync(path=tmp_path / "later", since=now + pd.Timedelta(minutes=5),
                    progress=False)
    assert not (tmp_path / "later").exists()  # refused before anything is written
    # The service's own day is in the past at its midnight: accepted, and kept as the start.
    summary = client.sync(path=tmp_path / "today", kinds="ach", since=now.date(),
                          progress=False)
    assert summary["kind"].tolist() == ["ach"]
    assert client.history.info()["kinds"]["ach"][client.company_code]["since"].startswith(
        now.strftime("%Y-%m-%d"))


def test_an_unmasked_store_is_masked_on_reading_unless_asked(private, tmp_path):
    open_client = private.connect(journal=None, mask=False)
    open_client.sync(path=tmp_path, kinds=["ach", "nocs"], progress=False)
    whole = History(tmp_path, mask=False)
    assert whole.masked is False
    pd.testing.assert_frame_equal(whole.ach(), open_client.ach.list(progress=False))
    masked_client = private.connect(journal=None)
    pd.testing.assert_frame_equal(History(tmp_path).ach(), masked_client.ach.list(progress=False))
    pd.testing.assert_frame_equal(History(tmp_path).nocs(),
                                  masked_client.nocs.list(progress=False))
    with pytest.raises(HistoryError, match="mask=False"):
        History(tmp_path).sql("select * from ach")
    with pytest.raises(ValidationError, match="rebuild=True"):
        masked_client.sync(path=tmp_path, kinds="ach", mask=True, progress=False)


def test_a_masked_store_cannot_be_read_whole(synced):
    with pytest.raises(HistoryError, match="masked"):
        History(synced.path, mask=False).ach()


def test_each_sandbox_has_a_default_store_of_its_own_kept_across_restarts(sandbox, monkeypatch,
                                                                          tmp_path):
    import platformdirs

    monkeypatch.setattr(platformdirs, "user_data_dir", lambda *a, **k: str(tmp_path))
    assert paynb.history.default_path("x") == Path(tmp_path) / "history" / "x"
    with sandbox.connect(journal=None) as shared:
        info = sandbox.simulate.info()
        assert shared.history.path == Path(tmp_path) / "history" / f"sandbox-{info['databaseId']}"
    db = tmp_path / "demo.sqlite3"
    with serve(port=0, seed_items=20, seed=3, db=db) as first, \
            first.connect(journal=None) as client:
        assert client.history.path.parent == Path(tmp_path) / "history"
        assert client.history.path != shared.history.path   # another sandbox: another store
        client.sync(kinds="ach", progress=False)
        # The store's sync time is the service's clock, moved 40 days on here.
        now = first.simulate.advance_clock(days=40)
        client.sync(kinds="ach", progress=False)
        synced_at = dt.datetime.fromisoformat(client.history.info()["syncedAt"])
        assert abs(synced_at - now) < dt.timedelta(minutes=5)
        path, items = client.history.path, len(client.history.ach())
        assert items == len(client.ach.list(progress=False)) > 0
    # The same database served again (the demo sandbox restarted): the same store.
    with serve(port=0, seed=3, db=db) as again, again.connect(journal=None) as client:
        assert client.history.path == path
        assert len(client.history.ach()) == items


def test_a_store_of_another_service_is_refused_naming_both(synced, tmp_path):
    recorded = synced.info()["service"]
    with serve(port=0, seed_items=5, seed=4) as other, other.connect(journal=None) as client:
        mine = f"sandbox {other.simulate.info()['databaseId']}"
        client.history_folder = synced.path   # as sync(path=...) would remember it
        with pytest.raises(HistoryError, match=f"synced from {recorded}, not from this "
                                               f"client's {mine}"):
            client.history.ach()
        with pytest.raises(HistoryError, match=f"synced from {recorded}"):
            client.sync(path=synced.path, progress=False)
        # Offline, with no client, it opens: the folder is what was asked for.
        assert len(History(synced.path).ach()) == len(synced.ach())


def test_a_rebuild_builds_a_folder_of_another_service_again_from_this_one(tmp_path):
    """The refusal's third way out, ``sync(rebuild=True)``, works: no table of the other
    service is kept (its items and events would mix with this one's)."""
    with serve(port=0, seed_items=20, seed=3) as first, first.connect(journal=None) as client:
        client.sync(path=tmp_path, kinds=["ach", "rcc"], progress=False)
        recorded = client.history.info()["service"]
    with serve(port=0, seed_items=5, seed=4) as other, other.connect(journal=None) as client:
        with pytest.raises(HistoryError, match=f"synced from {recorded}"):
            client.sync(path=tmp_path, kinds="ach", progress=False)
        client.sync(path=tmp_path, kinds="ach", rebuild=True, progress=False)
        history = client.history
        assert history.info()["service"] == f"sandbox {other.simulate.info()['databaseId']}"
        assert set(history.tables()) == {"ach", "events"}
        items = client.ach.list(progress=False)["achItemId"]
        assert sorted(history.ach()["achItemId"]) == sorted(items)
        assert sorted(history.events("ach")["itemId"]) == sorted(map(str, items))


def _synced_with_returns_on(private, tmp_path, day):
    """A client (pages of 5) whose ACH items are synced into ``tmp_path``, then 12 of its
    waiting items (more than two pages) returned on ``day``; and its waiting items."""
    client = private.connect(journal=None, page_size=5)
    client.sync(path=tmp_path, kinds="ach", progress=False)
    waiting = client.ach.list(status="W", progress=False)["achItemId"].tolist()
    for item in waiting[:12]:
        private.simulate.force_status(item, "R", code="R01", date=day)
    return client, waiting


def test_the_returns_window_is_counted_and_read_again_only_when_it_changed(private, tmp_path):
    """Returns of the day before the watermark: read again only when the service counts
    another number of them than the table holds (a late return dated back), else the
    poll starts after the watermark. One count of B, I and R together: B and I are
    locked and R is final, so returns only come into the day."""
    client, waiting = _synced_with_returns_on(private, tmp_path, day := dt.date(2030, 1, 10))
    first = client.sync(progress=False).set_index("kind").loc["ach"]
    assert first["events"] == 12
    state = client.history.info()["kinds"]["ach"][private.company_code]
    assert state["watermark"].startswith("2030-01-10") and state["pollPages"] == 3

    # Nothing new: the poll after the watermark (three pages asked at once, as many as
    # the last poll had), the list's last page, the window's count, the W and V counts;
    # the 12 returns are not read again.
    quiet = client.sync(progress=False).set_index("kind").loc["ach"]
    assert (quiet["written"], quiet["events"], quiet["requests"]) == (0, 0, 7)
    assert client.history.info()["kinds"]["ach"][private.company_code]["pollPages"] == 1

    # A late return dated inside the window: counted, so the window is read again (and
    # with it a change the simulation makes to a return there, which the service does
    # not: the window's total alone did not change for it).
    private.simulate.force_status(waiting[20], "R", code="R02", date=day)
    private.simulate.force_status(waiting[0], "I", date=day)
    late = client.sync(progress=False).set_index("kind").loc["ach"]
    assert late["events"] == 2
    assert_same_as_lists(client, client.history, ("ach",))
    # A new return after the watermark: the poll alone finds it.
    private.simulate.force_status(waiting[21], "B", date=day + dt.timedelta(days=2))
    assert client.sync(progress=False).set_index("kind").loc["ach", "events"] == 1
    assert_same_as_lists(client, client.history, ("ach",))
    assert client.history.events("ach", item_id=waiting[0])["itemStatus"].tolist() \
        == ["W", "R", "I"]


def test_the_files_read_to_count_the_day_before_the_watermark_serve_the_look_ups(
        private, tmp_path, store_reads):
    """The files whose return dates reach the day before the watermark are the recent
    items': read whole (their look-up columns) to count that day, they also answer the
    look-up of the poll's items and the list's end. A sync of new returns reads the store
    twice: that read, and the files its write replaces."""
    client, waiting = _synced_with_returns_on(private, tmp_path, day := dt.date(2030, 1, 10))
    client.sync(kinds="ach", progress=False)
    for item in waiting[12:15]:                # new returns, after the watermark
        private.simulate.force_status(item, "R", code="R01", date=day + dt.timedelta(days=1))
    store_reads.clear()
    result = client.sync(kinds="ach", progress=False).set_index("kind").loc["ach"]
    assert (result["written"], result["events"]) == (3, 3)
    assert len(store_reads) == 2 and "returnDate" in store_reads[0] \
        and store_reads[1] is None, store_reads
    assert_same_as_lists(client, client.history, ("ach",))


def test_after_a_backfill_the_day_before_the_watermark_is_counted(private, tmp_path):
    """The first sync after a backfill does not read the day before the watermark again:
    the table holds that day's returns, and the service counts as many."""
    client = private.connect(journal=None, page_size=5)
    waiting = client.ach.list(status="W", progress=False)["achItemId"].tolist()
    day = dt.date(2030, 1, 10)
    for item in waiting[:7]:                   # more than a page of returns on one day
        private.simulate.force_status(item, "R", code="R01", date=day)
    client.sync(path=tmp_path, kinds="ach", progress=False)
    # The poll after the watermark, the list's last page, the window's count, W and V.
    quiet = client.sync(kinds="ach", progress=False).set_index("kind").loc["ach"]
    assert (quiet["written"], quiet["events"], quiet["requests"]) == (0, 0, 5)
    private.simulate.force_status(waiting[8], "B", date=day)  # dated back into the window
    late = client.sync(kinds="ach", progress=False).set_index("kind").loc["ach"]
    assert late["events"] == 1
    assert_same_as_lists(client, client.history, ("ach",))


def test_items_on_the_lists_end_and_in_the_poll_are_stored_once_as_the_poll_saw_them(
        private, tmp_path):
    """A stored item returned among the newest is on the list's last page and in the
    returns poll: stored once, the poll's record, at its old list position. A new item
    already returned takes its place at the end of the list."""
    from deltalake import DeltaTable

    client = private.connect(journal=None, page_size=25)
    client.sync(path=tmp_path, kinds="ach", progress=False)
    stored = DeltaTable(str(tmp_path / "ach")).to_pandas(columns=["achItemId", "_order"])
    order = dict(zip(stored["achItemId"], stored["_order"], strict=True))
    newest = client.ach.list(status="W", progress=False)["achItemId"].tolist()[-2:]
    for item in newest:
        private.simulate.force_status(item, "R", code="R01")
    new = int(client.ach.submit(ach_item("HIST-BOTH-1", 1))["achItemId"])
    private.simulate.force_status(new, "R", code="R02")
    result = client.sync(kinds="ach", progress=False).set_index("kind").loc["ach"]
    assert result["written"] == 3 and result["events"] == 3
    rows = DeltaTable(str(tmp_path / "ach")).to_pandas(
        columns=["achItemId", "_order", "itemStatus"])
    assert not rows["achItemId"].duplicated().any()  # one row per item
    latest = rows.set_index("achItemId")
    for item in newest:
        assert latest.loc[item, "_order"] == order[item]
        assert str(latest.loc[item, "itemStatus"]) == "R"
    assert latest.loc[new, "_order"] == max(order.values()) + 1
    assert str(latest.loc[new, "itemStatus"]) == "R"
    assert_same_as_lists(client, client.history, ("ach",))


def test_returns_by_date_read_only_the_latest_versions(private, tmp_path):
    client = private.connect(journal=None, page_size=50)
    client.sync(path=tmp_path, kinds="ach", progress=False)
    # The newest waiting items: on the list's last page, which every sync reads, so the
    # return undone below (R -> S, no transition of the service, whose returns are final)
    # is seen there; the counts look for W leaving, not for S arriving.
    waiting = client.ach.list(status="W", progress=False)["achItemId"].tolist()[-4:]
    march, april = dt.date(2030, 3, 31), dt.date(2030, 4, 1)
    for item in waiting[:4]:
        private.simulate.force_status(item, "R", code="R01", date=march)
    client.sync(progress=False)
    # Stored again: one moved to April, one returned no more, one now Invalid.
    private.simulate.force_status(waiting[0], "R", code="R03", date=april)
    private.simulate.force_status(waiting[1], "S")
    private.simulate.force_status(waiting[2], "I", date=march)
    client.sync(progress=False)
    for status, start, end in (("R", march, march), (None, march, march), ("R", march, april),
                               (("R", "I"), march, None), (None, None, april)):
        got = client.history.ach(status=status, returned_from=start, returned_to=end)
        live = client.ach.list(status=status, returned_from=start, progress=False,
                               returned_to=None if end is None else
                               dt.datetime.combine(end, dt.time(23, 59, 59, 999000)))
        pd.testing.assert_frame_equal(got, live)
    got = client.history.ach(status="R", returned_from=march, returned_to=march)
    assert got["achItemId"].tolist() == [waiting[3]]



def test_the_noc_kind_is_called_nocs_wherever_the_sync_names_it(client, tmp_path):
    """Issue 32 item 16: ``kinds=`` wants ``nocs``; the summary, the state, the events and
    the frames' record of the store say ``nocs`` too (``noc`` is taken, as the client's
    other spellings are)."""
    from paynb._attrs import HISTORY

    summary = client.sync(path=tmp_path, kinds="noc", progress=False)
    assert summary["kind"].tolist() == ["nocs"]
    history = client.history
    assert list(history.info()["kinds"]) == ["nocs"]
    assert set(history.events("nocs")["kind"]) == {"nocs"}
    assert set(history.sql("select distinct kind from events")["kind"]) == {"nocs"}
    assert history.nocs().attrs[HISTORY]["kind"] == "nocs"
    with pytest.raises(ValidationError, match=r"'nox', not one of ach, rcc, instant, rtp, "
                                              r"nocs"):
        client.sync(kinds="nox", progress=False)
