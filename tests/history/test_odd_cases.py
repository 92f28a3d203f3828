"""Interrupted syncs (a dropped connection, Ctrl-C, a killed process), the lock, corrupt
tables and stray files, a new field in the service's records, and frames that type a
field anew. After each interruption, deltalake, Polars and DuckDB read what paynb reads."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest

import paynb
from paynb import frames
from paynb.errors import PaynbError, ValidationError
from paynb.frames import _columns, _converters
from paynb.history import History, HistoryCorruptError, HistoryLockedError
from paynb.history import _sync as sync_module
from paynb.history._store import Store
from paynb.resources import Pages
from paynb.sandbox import Sandbox, serve

from .engines import assert_engines_agree
from .test_history import KINDS, ach_item, assert_same_as_lists

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def private() -> Iterator[Sandbox]:
    """A sandbox of this test alone, with 40 items still waiting whatever the time of day
    (the demo's own have gone W -> S by the banking-day cut-off, later in the day)."""
    with serve(port=0, seed_items=400, seed=5) as sb:
        with sb.connect(journal=None) as client, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the guards' notice of a client with no history
            client.ach.submit_many([ach_item(f"ODD-W-{n}", 600 + n) for n in range(40)])
        yield sb


def every_event_once(history: History) -> None:
    """Each item has one event per status it was seen in, and the last is its status now."""
    held = history.info()["kinds"]
    for name, status in (("ach", "itemStatus"), ("rcc", "itemStatus"), ("instant", "status")):
        if name not in held:
            continue
        events = history.events(name)
        assert not events.duplicated(["itemId", "itemStatus"]).any(), name
        frame = getattr(history, name)()
        id_field = "uniqueId" if name == "instant" else f"{name}ItemId"
        last = events.drop_duplicates("itemId", keep="last").set_index("itemId")["itemStatus"]
        now = pd.Series(frame[status].astype(str).to_numpy(),
                        index=frame[id_field].astype(str))
        assert last.sort_index().to_dict() == now.sort_index().to_dict(), name


# --------------------------------------------------------------------------- interruptions

def test_a_dropped_connection_leaves_the_last_commit_and_the_next_sync_completes(private,
                                                                                  tmp_path):
    client = private.connect(journal=None, page_size=20, max_retries=0)
    client.sync(path=tmp_path, kinds=["ach", "rcc"], progress=False)
    before = client.history.ach()
    version = client.history.info()["version"]
    for item_id in client.ach.list(status="W", progress=False)["achItemId"].tolist()[-30:]:
        private.simulate.force_status(item_id, "R", code="R03")
    client.ach.submit({"firstSignerFirstName": "A", "firstSignerLastName": "B", "state": "NY",
                       "zip": "10001", "yourReferenceNumber": "HIST-DROP-1",
                       "bankRoutingNumber": "021000021", "bankAccountNumber": "123456789",
                       "achTransactionType": "Debit", "amount": "1.00"})
    private.simulate.script_fault("drop", count=1, on="reads")
    with pytest.raises(PaynbError):
        client.sync(kinds=["ach", "rcc"], progress=False)
    assert client.history.info()["version"] == version
    pd.testing.assert_frame_equal(client.history.ach(), before)
    with private.simulate.faults(reads={"error_rate": 0.2, "drop_rate": 0.1}, seed=3):
        for _ in range(20):  # with retries off, some syncs fail; none may break the store
            try:
                client.sync(kinds=["ach", "rcc", "instant"], progress=False)
            except PaynbError:
                continue
        assert_engines_agree(client.history, tmp_path, ("ach", "rcc", "instant"))
    client.sync(progress=False)
    assert_same_as_lists(private.connect(journal=None), client.history)
    every_event_once(client.history)
    assert_engines_agree(client.history, tmp_path, KINDS)


def test_ctrl_c_before_a_kinds_commit_leaves_its_table_as_it_was(private, tmp_path,
                                                                  monkeypatch):
    client = private.connect(journal=None)
    client.sync(path=tmp_path, kinds=["ach", "rcc"], progress=False)
    before = client.history.ach()
    waiting = client.ach.list(status="W", progress=False)["achItemId"].tolist()
    private.simulate.force_status(waiting[-1], "B")
    original = sync_module._KindSync.incremental

    def interrupted(job):
        original(job)  # fetched and compared, nothing written yet
        raise KeyboardInterrupt

    monkeypatch.setattr(sync_module._KindSync, "incremental", interrupted)
    with pytest.raises(KeyboardInterrupt):
        client.sync(kinds=["ach", "rcc"], progress=False)
    pd.testing.assert_frame_equal(client.history.ach(), before)
    assert client.history.sql("select count(*) as n from ach where itemStatus = 'B'")["n"][0] \
        == (before["itemStatus"] == "B").sum()
    assert_engines_agree(client.history, tmp_path, ("ach", "rcc"))
    monkeypatch.undo()
    result = client.sync(kinds=["ach", "rcc"], progress=False).set_index("kind")
    assert result.loc["ach", "written"] == 1 and result.loc["ach", "events"] == 1
    assert_same_as_lists(client, client.history, ("ach", "rcc"))
    assert client.history.events("ach", item_id=waiting[-1])["itemStatus"].tolist() == ["W", "B"]


def test_cut_off_between_the_events_and_the_items_every_change_is_recorded_once(
        private, tmp_path, monkeypatch):
    """The events are committed before the items they describe: a sync stopped between the
    two leaves the items as they were and the changes recorded; the next sync writes the
    items and leaves out the changes already recorded."""
    client = private.connect(journal=None)
    client.sync(path=tmp_path, kinds=["ach", "rcc"], progress=False)
    before = client.history.ach()
    waiting = client.ach.list(status="W", progress=False)["achItemId"].tolist()
    private.simulate.force_status(waiting[-1], "B")
    private.simulate.force_status(waiting[-2], "R", code="R01")
    import deltalake  # imported where the sync writes: patched there

    original = deltalake.write_deltalake

    def stop_at_the_items(target, data, **options):
        if not str(getattr(target, "table_uri", target)).rstrip("/").endswith("events"):
            raise KeyboardInterrupt
        return original(target, data, **options)

    monkeypatch.setattr(deltalake, "write_deltalake", stop_at_the_items)
    with pytest.raises(KeyboardInterrupt):
        client.sync(kinds="ach", progress=False)
    monkeypatch.undo()
    pd.testing.assert_frame_equal(client.history.ach(), before)  # the items: as they were
    recorded = client.history.events("ach", item_id=waiting[-2:])
    assert sorted(recorded["itemStatus"]) == ["B", "R", "W", "W"]  # the changes: recorded
    assert_engines_agree(client.history, tmp_path, ("ach",))
    result = client.sync(kinds="ach", progress=False).set_index("kind")
    assert result.loc["ach", "written"] == 2 and result.loc["ach", "events"] == 0
    assert_same_as_lists(client, client.history, ("ach",))
    every_event_once(client.history)
    assert_engines_agree(client.history, tmp_path, ("ach",))


_CHILD = """
import sys, paynb
credentials = paynb.Credentials(client_id=sys.argv[4], client_secret=sys.argv[5],
                                username=sys.argv[6], password=sys.argv[7])
client = paynb.Client(base_url=sys.argv[1], auth_url=sys.argv[2], company_code=sys.argv[3],
                      credentials=credentials, journal=None, page_size=10, max_workers=1)
client.sync(path=sys.argv[8], progress=False)
"""


@pytest.mark.parametrize("moment", ["first events", "first kind", "later kinds"])
def test_a_sync_killed_midway_leaves_the_last_commits_and_the_next_one_completes(
        private, tmp_path, moment):
    """SIGKILL at three moments of a first sync: once the ACH events are committed (its
    items are being written), once the ACH table is committed, and once the later kinds
    are written. Every table reads as its last commit, in every engine; the next sync
    completes, every item and every status change once."""
    creds = private.credentials
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    private.simulate.set_faults(reads={"latency_ms": 5})
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, private.base_url, private.auth_url,
         private.company_code, creds.client_id, creds.client_secret, creds.username,
         creds.password, str(tmp_path)], env=env)
    ready = {"first events": tmp_path / "events" / "_delta_log",
             "first kind": tmp_path / "ach" / "_delta_log",
             "later kinds": tmp_path / "instant" / "_delta_log"}[moment]
    try:
        deadline = time.monotonic() + 90
        while not ready.is_dir():
            assert child.poll() is None, "the sync ended before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    finally:
        if child.poll() is None:
            child.kill()
    private.simulate.clear_faults()
    # A client made as the child made its own: the same service, as the store names it.
    client = paynb.Client(
        base_url=private.base_url, auth_url=private.auth_url,
        company_code=private.company_code, journal=None,
        credentials=paynb.Credentials(client_id=creds.client_id, username=creds.username,
                                      client_secret=creds.client_secret,
                                      password=creds.password))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # kinds not synced yet say so
        history = History(tmp_path)
        for name in KINDS:
            frame = getattr(history, name)()
            if (tmp_path / name / "_delta_log").is_dir() and len(frame):
                # A table committed holds the whole kind, as the service lists it.
                pd.testing.assert_frame_equal(frame, getattr(client, name).list(
                    progress=False), obj=name)
        assert_engines_agree(history, tmp_path, KINDS)
    client.sync(path=tmp_path, progress=False)  # the lock died with the process
    assert_same_as_lists(client, client.history)
    every_event_once(client.history)
    assert_engines_agree(client.history, tmp_path, KINDS)


# --------------------------------------------------------------------------- the lock

def test_a_second_sync_meets_the_lock_with_a_clear_message(private, tmp_path):
    client = private.connect(journal=None)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from paynb.history._store import Store\n"
         "with Store(sys.argv[1]).locked():\n    print('held', flush=True); time.sleep(60)",
         str(tmp_path)], env=dict(os.environ, PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(HistoryLockedError, match=f"pid {holder.pid}.*syncing"):
            client.sync(path=tmp_path, progress=False)
    finally:
        holder.kill()
        holder.wait(30)
    client.sync(path=tmp_path, kinds="nocs", progress=False)
    assert client.history.info()["version"] == 1


# --------------------------------------------------------------------------- bad files

@pytest.fixture
def synced(private, tmp_path) -> tuple[paynb.Client, Path]:
    client = private.connect(journal=None)
    client.sync(path=tmp_path, kinds=["ach", "nocs"], progress=False)
    return client, tmp_path


def test_a_corrupt_file_is_named_and_rebuild_recovers(synced):
    client, path = synced
    victim = sorted((path / "ach").rglob("*.parquet"))[0]
    victim.write_bytes(b"PAR1 this is not parquet")
    with pytest.raises(HistoryCorruptError) as caught:
        client.history.ach()
    assert "the ach table" in str(caught.value) and "sync(rebuild=True)" in str(caught.value)
    client.sync(rebuild=True, progress=False, kinds=["ach", "nocs"])
    pd.testing.assert_frame_equal(client.history.ach(), client.ach.list(progress=False))
    assert client.history.info()["version"] == 2


def test_files_the_log_does_not_name_are_no_data(synced):
    """A stray file in a table's folder (a copy, notes, a writer's left-over) is not in
    the table's log: no reader takes it for data."""
    client, path = synced
    before = client.history.ach()
    data = sorted((path / "ach").rglob("*.parquet"))[0]
    shutil.copy(data, data.with_name("copy-of-" + data.name))
    (path / "ach" / "notes.csv").write_text("a,b\n")
    pd.testing.assert_frame_equal(client.history.ach(), before)
    assert client.history.sql("select count(*) as n from ach")["n"].iloc[0] == len(before)
    assert_engines_agree(client.history, path, ("ach",))


def test_a_broken_log_is_named_and_rebuild_recovers(synced):
    client, path = synced
    last = sorted((path / "ach" / "_delta_log").glob("*.json"))[-1]
    last.write_text("{not json")
    with pytest.raises(HistoryCorruptError, match="ach table.*rebuild=True"):
        History(path).ach()
    client.sync(rebuild=True, progress=False, kinds="ach")
    assert History(path).info()["version"] >= 2
    pd.testing.assert_frame_equal(client.history.ach(), client.ach.list(progress=False))


# --------------------------------------------------------------------------- schema changes

def test_a_new_field_in_the_records_widens_the_store(private, tmp_path, monkeypatch):
    client = private.connect(journal=None, page_size=50)
    client.sync(path=tmp_path, kinds="ach", progress=False)
    original = Pages.read

    def with_trace(pages, response):
        page = original(pages, response)
        for record in page.records:
            record["traceNumber"] = 5_000_000 + record["achItemId"]
        return page

    last = client.ach.list(progress=False)["achItemId"].iloc[-1]
    monkeypatch.setattr(Pages, "read", with_trace)  # every page the sync reads
    private.simulate.force_status(int(last), "R", code="R01")
    client.sync(kinds="ach", progress=False)
    monkeypatch.undo()
    frame = client.history.ach()
    assert str(frame["traceNumber"].dtype) == "Int64"
    traced = frame.dropna(subset=["traceNumber"])
    assert len(traced) >= 1
    assert (traced["traceNumber"] == 5_000_000 + traced["achItemId"]).all()
    assert frame.columns[-1] == "traceNumber"
    base = frame.drop(columns="traceNumber")
    pd.testing.assert_frame_equal(base, client.ach.list(progress=False))
    widened = client.history.sql("select count(traceNumber) as n from ach")["n"].iloc[0]
    assert widened == len(traced)


def test_frames_that_type_a_field_anew_still_give_the_list_frame(private, tmp_path,
                                                                 monkeypatch):
    """Another paynb types ``zip`` as a categorical: stored files keep text, reads follow."""
    client = private.connect(journal=None)
    client.sync(path=tmp_path, kinds=["ach", "rcc"], progress=False)

    def zip_category(name, raw, ctx):
        return {name: pd.Categorical(_columns._strings(_converters._get(raw, name, ctx)))}

    schema = [(name, zip_category if name == "zip" else convert)
              for name, convert in _converters._SCHEMAS["ach"]]
    monkeypatch.setitem(_converters._SCHEMAS, "ach", schema)
    live = client.ach.list(progress=False)
    assert isinstance(live["zip"].dtype, pd.CategoricalDtype)
    pd.testing.assert_frame_equal(client.history.ach(), live)
    pd.testing.assert_frame_equal(client.history.rcc(), client.rcc.list(progress=False))


def test_history_reads_kinds_never_synced_as_empty_list_frames(private, tmp_path):
    client = private.connect(journal=None)
    client.sync(path=tmp_path, kinds="nocs", progress=False)
    history = client.history
    for name in KINDS[:-1]:
        # Empty, as the lists' frames of no items, and said to be never synced.
        with pytest.warns(paynb.PaynbWarning, match=rf"holds no {name} items: no sync "
                          rf"fetched them \(it holds nocs\); client.sync\(kinds='{name}'\)"
                          ) as caught:
            got = getattr(history, name)()
        assert caught[0].filename == __file__
        pd.testing.assert_frame_equal(got, frames.empty_frame(
            "instant" if name == "instant" else name))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert history.ach().empty  # said once per History and kind
        assert len(history.nocs()) > 0  # a kind synced: quiet
    assert client.history.sql("select count(*) as n from ach")["n"].iloc[0] == 0
    info = client.history.info()
    assert info["masked"] is True and list(info["kinds"]) == ["nocs"]


def test_a_folder_never_synced_into_says_so_instead_of_passing_for_no_items(tmp_path):
    from paynb.errors import HistoryWarning, PaynbWarning

    typo = History(tmp_path / "histroy")
    with pytest.warns(PaynbWarning, match="does not exist.*run client.sync") as caught:
        assert typo.ach().empty
    assert caught[0].filename == __file__  # pointed at the reader's caller, not at paynb
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert typo.rcc().empty  # said once per History, not on every read
    # Every reader says it alike (SQL, the events, the housekeeping, info too), naming
    # the path.
    for read in (lambda h: h.sql("select count(*) as n from ach")["n"].iloc[0] == 0,
                 lambda h: h.events("ach").empty, lambda h: h.nocs().empty,
                 lambda h: h.ach(as_of="2026-01-01").empty, lambda h: h.maintain().empty,
                 lambda h: h.info()["version"] == 0 and h.info()["kinds"] == {}):
        with pytest.warns(HistoryWarning, match=f"into {tmp_path / 'mistyped'} .*does not "
                                                "exist.*run client.sync") as caught:
            assert read(History(tmp_path / "mistyped"))
        assert caught[0].filename == __file__
    assert not (tmp_path / "mistyped").exists()  # nothing was made there
    with pytest.warns(PaynbWarning, match="is empty"):
        History(tmp_path).nocs()
    (tmp_path / "notes.txt").write_text("not a store")
    with pytest.warns(PaynbWarning, match="holds other files, but no table of a paynb"):
        History(tmp_path).nocs()
    with pytest.raises(ValidationError, match=r"path .*notes\.txt is a file: give the folder"):
        History(tmp_path / "notes.txt")



def test_a_return_the_poll_cannot_reach_is_reported_and_the_search_stays_short(tmp_path,
                                                                            caplog):
    """A waiting item returned with a date before the store's watermark: the poll does not
    reach it, the W count says one item left W, and the search of the S list stops at
    the oldest item the store holds as waiting (not at the start of the list), then says
    what it could not find and how to recover."""
    with serve(port=0, seed_items=300, seed=3) as sb:
        client = sb.connect(journal=None, page_size=10)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            client.ach.submit_many([{
                "firstSignerFirstName": "Hist", "firstSignerLastName": f"Ory{n}",
                "state": "NY", "zip": "10001", "yourReferenceNumber": f"HIST-LATE-{n}",
                "bankRoutingNumber": "021000021", "bankAccountNumber": f"{987650000 + n}",
                "achTransactionType": "Debit", "amount": "12.34"} for n in range(30)])
        client.sync(path=tmp_path, kinds="ach", progress=False)
        waiting = client.ach.list(status="W", progress=False)["achItemId"].tolist()
        sent = len(client.ach.list(status="S", progress=False))
        sb.simulate.force_status(waiting[0], "R", code="R01", date="2001-02-05")
        with caplog.at_level("WARNING", logger="paynb.history"):
            result = client.sync(progress=False).set_index("kind").loc["ach"]
        assert "no longer waiting" in caplog.text and "rebuild=True" in caplog.text
        # Total and last page, the returns poll, W and V counts, then the S list's first
        # page and its last few (down to the demo's two oldest waiting items, 20 items
        # before the end): not its sent / 10 pages.
        assert result["requests"] <= 10 < sent / 10
        assert result["written"] == 0
        client.sync(rebuild=True, progress=False)
        pd.testing.assert_frame_equal(History(tmp_path).ach(), client.ach.list(progress=False))


def _unwritable(tmp_path: Path) -> Path:
    """A folder that cannot be made: one under a read-only folder, or (as root, whom
    permissions do not stop) one under /proc, where nothing can be created."""
    if hasattr(os, "geteuid") and os.geteuid() != 0:
        locked = tmp_path / "read-only"
        locked.mkdir()
        locked.chmod(0o500)
        return locked / "history"
    if not Path("/proc/self").is_dir():
        pytest.skip("needs a non-root user or Linux's /proc")
    return Path("/proc/self/paynb-history")


@pytest.mark.parametrize("where", ["a file in the way", "not writable"])
def test_a_path_that_cannot_be_written_is_named_with_what_to_do(client, tmp_path, where):
    if where == "a file in the way":
        blocker = tmp_path / "notes.txt"
        blocker.write_text("not a folder")
        path = blocker / "history"
    else:
        path = _unwritable(tmp_path)
    try:
        with pytest.raises(PaynbError, match=r"path .* cannot be written") as caught:
            client.sync(path=path, kinds="ach", progress=False)
    finally:
        if where != "a file in the way" and path.parent.name == "read-only":
            path.parent.chmod(0o700)
    message = str(caught.value)
    assert str(path) in message and "sync(path=...)" in message
    assert not isinstance(caught.value, OSError)
    # The client's history stays where it was.
    assert client.history.path != path


def test_records_of_the_lists_end_and_the_poll_frame_as_the_poll_saw_them(private, tmp_path):
    """Items on both the list's end and the returns poll: the poll's record, at the list's
    place of the item."""
    client = private.connect(journal=None)
    job = sync_module._KindSync(client.context, client.ach, Store(tmp_path), "ach", None, {},
                                since=None,
                                masked=True, now=pd.Timestamp.now(tz="UTC"), progress=False,
                                secret=None)
    records = client.ach.listing.pages([], 50)(0).records
    walk, poll = records[:30], [dict(r) for r in records[20:50]]
    for record in poll[:10]:  # items on both: the poll saw them returned
        record.update(itemStatus="R", returnDate="2026-11-20T00:00:00.000Z")
    framed = job._frame(walk + poll)
    assert framed["achItemId"].tolist() == [r["achItemId"] for r in records[:50]]
    assert (framed.set_index("achItemId").loc[[r["achItemId"] for r in poll[:10]],
                                              "itemStatus"] == "R").all()


def test_new_items_already_returned_keep_their_list_places_and_one_event(private, tmp_path):
    """New items on the list's end that the returns poll also brings (returned before the
    sync saw them): framed apart, joined, stored once each, as the poll saw them, in the
    list's order."""
    client = private.connect(journal=None, page_size=50)
    client.sync(path=tmp_path, kinds="ach", progress=False)
    client.ach.submit_many([ach_item(f"ODD-NEW-{n}", 700 + n) for n in range(6)])
    new = client.ach.list(progress=False)["achItemId"].iloc[-6:].tolist()
    for item in new[1::2]:
        private.simulate.force_status(int(item), "R", code="R01")
    client.sync(kinds="ach", progress=False)
    history = client.history.ach()
    pd.testing.assert_frame_equal(history, client.ach.list(progress=False))
    assert history.set_index("achItemId").loc[new[1::2], "itemStatus"].eq("R").all()
    events = client.history.events("ach")
    assert not events.duplicated(["itemId", "itemStatus"]).any()
    assert events[events["itemId"].isin([str(i) for i in new])].groupby("itemId").size() \
        .eq(1).all()


def test_files_of_a_grown_schema_are_read_by_name(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from paynb.history._sql import _one_schema

    pq.write_table(pa.table({"a": [1], "b": ["x"]}), tmp_path / "old.parquet")
    pq.write_table(pa.table({"a": [2], "b": ["y"]}), tmp_path / "same.parquet")
    pq.write_table(pa.table({"a": [3], "b": ["z"], "c": [1.5]}), tmp_path / "new.parquet")
    listed = lambda *names: tuple(str(tmp_path / n) for n in names)  # noqa: E731
    assert _one_schema(listed("old.parquet", "same.parquet"))
    assert not _one_schema(listed("old.parquet", "new.parquet"))
