"""The tables themselves: their types and layout, time travel (``as_of=``), and the
housekeeping of ``maintain()``."""

from __future__ import annotations

import datetime as dt
import time
import warnings

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest
import time_machine
from deltalake import DeltaTable

import paynb
from paynb.errors import ValidationError
from paynb.history import History

from .engines import assert_engines_agree
from .test_history import KINDS, assert_same_as_lists


def _machine_now() -> dt.datetime:
    """The machine's own time, which stamps the Delta logs' commits (in Rust): a wall clock
    moved for the tests (``--moment``, tests/conftest.py) does not move them."""
    if not time_machine.escape_hatch.is_travelling():  # (the hatch answers only then)
        return dt.datetime.now(dt.UTC)
    return time_machine.escape_hatch.datetime.datetime.now(dt.UTC)


def test_the_tables_hold_one_row_per_item_typed_for_every_engine(client, tmp_path):
    client.sync(path=tmp_path, progress=False)
    for kind in KINDS:
        table = DeltaTable(str(tmp_path / kind))
        schema = pa.schema(table.schema().to_arrow())
        frame = table.to_pandas()
        assert len(frame) == len(getattr(client, kind).list(progress=False)), kind
        assert not frame[paynb.history._store.ID_FIELDS[kind]].duplicated().any(), kind
        assert table.metadata().partition_columns == ["company", "month"]
        # Every time an instant in microseconds, with its zone (what Spark reads).
        times = [f for f in schema if pa.types.is_timestamp(f.type)]
        assert times and all(f.type == pa.timestamp("us", tz="UTC") for f in times), kind
        amount = schema.field("amount") if "amount" in schema.names else None
        if kind in ("ach", "rcc"):
            assert amount is not None and amount.type == pa.decimal128(18, 2)
        elif kind in ("instant", "rtp"):
            assert amount is not None and amount.type == pa.int64()
            assert "whole-number unit" in (amount.metadata or {}).get(b"comment", b"").decode()
        assert table.metadata().name == f"paynb {kind}"
    events = DeltaTable(str(tmp_path / "events"))
    assert events.metadata().partition_columns == ["kind", "company"]
    assert set(events.to_pandas()["kind"]) == set(KINDS)


def test_as_of_reads_the_history_as_it_stood(private, tmp_path):
    sb = private
    client = sb.connect(journal=None)
    client.sync(path=tmp_path, kinds=["ach", "nocs"], progress=False)
    before, events_before = client.history.ach(), client.history.events("ach")
    time.sleep(0.05)
    moment = _machine_now()
    time.sleep(0.05)
    waiting = client.ach.list(status="W", progress=False)["achItemId"].tolist()
    sb.simulate.force_status(waiting[0], "R", code="R01")
    client.sync(kinds="ach", progress=False)
    history = client.history
    now = history.ach()
    assert not now.equals(before)
    version = history.info()["versions"]["ach"] - 1
    for as_of in (moment, moment.isoformat(), pd.Timestamp(moment), version):
        pd.testing.assert_frame_equal(history.ach(as_of=as_of), before, obj=str(as_of))
    pd.testing.assert_frame_equal(history.events("ach", as_of=moment), events_before)
    statuses = history.sql("select count(*) as n from ach where itemStatus = 'R'",
                           as_of=moment)["n"].iloc[0]
    assert statuses == (before["itemStatus"] == "R").sum()
    assert history.info(as_of=moment)["kinds"]["ach"]["DEMO1"]["counts"] == {
        str(code): int(n) for code, n in before["itemStatus"].value_counts().items() if n}
    # A whole number is one table's version, the table a reader reads: the events'
    # version (as info() reports it) for events(); info() and SQL, which read every
    # table, refuse it and say what will do.
    events_version = history.info()["versions"]["events"] - 1
    pd.testing.assert_frame_equal(history.events("ach", as_of=events_version), events_before)
    assert len(history.events("ach")) > len(events_before)
    for read in (lambda: history.info(as_of=events_version),
                 lambda: history.sql("select 1", as_of=events_version)):
        with pytest.raises(ValidationError, match=r"as_of must be a date or a time .*"
                                                  r"events\(as_of=\.\.\.\) the events"):
            read()
    # A date alone is the end of that day: today's (UTC) is now.
    pd.testing.assert_frame_equal(history.ach(as_of=_machine_now().date()), now)
    with pytest.warns(paynb.PaynbWarning, match="did not exist yet"):
        assert history.ach(as_of="2001-01-01").empty
    with pytest.raises(ValidationError, match="as_of"):
        history.ach(as_of=version + 5)
    with pytest.raises(ValidationError, match="as_of"):
        history.sql("select 1", as_of=1)
    with pytest.raises(ValidationError, match="as_of"):
        history.ach(as_of="soon")
    for wrong in (-1, True):  # the message says what will do, a date among them
        with pytest.raises(ValidationError, match="as_of must be a date, a time or a table "
                                                  r"version \(0 or more\)"):
            history.ach(as_of=wrong)


def test_tables_gives_the_stores_delta_tables_and_nothing_for_no_store(client, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no store: an empty answer, without a word
        assert History(tmp_path / "nowhere").tables() == {}
    client.sync(path=tmp_path, kinds=["ach", "nocs"], progress=False)
    history = client.history
    tables = history.tables()
    assert sorted(tables) == ["ach", "events", "nocs"]
    assert {name: table.version() for name, table in tables.items()} == \
        history.info()["versions"]
    assert tables["ach"].to_pyarrow_table().num_rows == len(history.ach())
    assert history.tables()["ach"] is tables["ach"]  # the History reads through them


def test_every_tenth_commit_checkpoints_the_log_and_time_travel_still_reads_it(
        private, tmp_path):
    sb = private
    client = sb.connect(journal=None)
    client.sync(path=tmp_path, kinds="ach", progress=False)
    first = client.history.ach()
    log = tmp_path / "ach" / "_delta_log"
    waiting = client.ach.list(status="W", progress=False)["achItemId"].tolist()
    versions = []
    for item in waiting[:10]:  # a commit each: one item returned
        assert not (log / "_last_checkpoint").exists() or versions[-1] >= 9
        sb.simulate.force_status(item, "R", code="R01")
        client.sync(kinds="ach", progress=False)
        versions.append(DeltaTable(str(tmp_path / "ach")).version())
    table = DeltaTable(str(tmp_path / "ach"))
    assert table.metadata().configuration["delta.checkpointInterval"] == "10"
    assert versions[-1] >= 10
    checkpoints = sorted(int(p.name.split(".")[0]) for p in log.glob("*.checkpoint.parquet"))
    assert checkpoints and all((v + 1) % 10 == 0 for v in checkpoints)
    history = client.history
    pd.testing.assert_frame_equal(history.ach(as_of=0), first)
    assert (history.ach()["itemStatus"] == "R").sum() == (first["itemStatus"] == "R").sum() + 10
    assert_same_as_lists(client, history, ("ach",))
    assert_engines_agree(history, tmp_path, ("ach",))


def test_maintain_compacts_vacuums_and_says_what_it_did(private, tmp_path):
    sb = private
    client = sb.connect(journal=None)
    client.sync(path=tmp_path, kinds="ach", progress=False)
    waiting = client.ach.list(status="W", progress=False)["achItemId"].tolist()
    for item in waiting[:3]:
        sb.simulate.force_status(item, "R", code="R01")
        client.sync(kinds="ach", progress=False)
    history = client.history
    expected, events = history.ach(), history.events("ach")
    kept = history.maintain()  # 30 days of time travel: nothing is old enough to go
    assert list(kept.columns) == ["table", "files_before", "bytes_before", "files_after",
                                  "bytes_after", "files_compacted", "files_written",
                                  "files_removed", "bytes_removed", "version"]
    figures = kept.set_index("table")
    assert figures.loc["events", "files_compacted"] == figures.loc["events", "files_before"]
    assert figures.loc["events", "files_after"] == 1 and figures["files_removed"].sum() == 0
    assert figures["bytes_removed"].sum() == 0
    for name in ("ach", "events"):  # the figures are the tables' own
        sizes = pa.table(DeltaTable(str(tmp_path / name)).get_add_actions(flatten=True))
        assert figures.loc[name, "bytes_after"] == pc.sum(sizes["size_bytes"]).as_py()
        assert figures.loc[name, "files_after"] == sizes.num_rows
    assert history.ach(as_of=0).shape[0] == len(expected)  # the first version is still read
    files = {p: p.stat().st_size for p in tmp_path.rglob("*.parquet")}
    gone = history.maintain(retention_days=0).set_index("table")
    assert gone.loc["ach", "files_removed"] > 0 and gone.loc["events", "files_removed"] > 0
    left = set(tmp_path.rglob("*.parquet"))
    assert gone["files_removed"].sum() == len(set(files) - left)
    assert gone["bytes_removed"].sum() == sum(files[p] for p in set(files) - left)
    pd.testing.assert_frame_equal(history.ach(), expected)
    pd.testing.assert_frame_equal(history.events("ach"), events)
    assert_same_as_lists(client, history, ("ach",))
    assert_engines_agree(history, tmp_path, ("ach",))
    with pytest.raises(ValidationError, match="retention_days"):
        history.maintain(retention_days=-1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        client.sync(kinds="ach", progress=False)  # syncs go on after a vacuum


def test_without_deltalake_the_history_names_the_extra(client, tmp_path, monkeypatch):
    import sys

    from paynb.errors import MissingExtraError

    client.sync(path=tmp_path, kinds="nocs", progress=False)
    history = History(tmp_path)
    monkeypatch.setitem(sys.modules, "duckdb", None)  # as if not installed
    with pytest.raises(MissingExtraError, match=r"pip install 'paynb\[history\]'.*duckdb") \
            as caught:
        history.sql("select 1")
    assert caught.value.extra == "history" and caught.value.missing == ["duckdb"]
    monkeypatch.setitem(sys.modules, "deltalake", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'paynb\[history\]'.*deltalake"):
        History(tmp_path)
    with pytest.raises(MissingExtraError, match=r"paynb\[history\]"):
        client.sync(path=tmp_path, progress=False)


def test_a_history_kept_open_reads_each_later_sync_and_a_store_made_anew(private, tmp_path):
    import shutil

    client = private.connect(journal=None)
    client.sync(path=tmp_path, kinds="ach", progress=False)
    kept = History(tmp_path)
    before = kept.ach()
    waiting = before.loc[before["itemStatus"] == "W", "achItemId"].tolist()
    private.simulate.force_status(int(waiting[0]), "R", code="R01")
    client.sync(kinds="ach", progress=False)
    # The table it opened is brought up to date, not read as it was.
    after = kept.ach()
    assert after.loc[after["achItemId"] == waiting[0], "itemStatus"].astype(str).tolist() == ["R"]
    assert kept.info()["versions"]["ach"] == History(tmp_path).info()["versions"]["ach"]
    # The store deleted and synced anew (its log starts again): opened again, not mixed.
    shutil.rmtree(tmp_path / "ach")
    private.simulate.force_status(int(waiting[1]), "R", code="R01")
    client.sync(kinds="ach", progress=False)
    pd.testing.assert_frame_equal(kept.ach(), History(tmp_path).ach())
    assert kept.info()["versions"]["ach"] == History(tmp_path).info()["versions"]["ach"]


_READ_AND_EXIT = """
import sys
from paynb.history import History
from paynb.history._store import Store
store = Store(sys.argv[1])
for name in ("ach", "nocs"):
    store.scan(name, store.open(name), [("company", "=", "DEMO1")])
History(sys.argv[1], company="DEMO1").scan("nocs").to_table()
"""


def test_a_process_that_read_the_store_ends_as_it_should(client, tmp_path):
    """Arrow's reading threads under deltalake's file system (written in Python) call into
    Python, and a process ending while one winds down aborted (exit 134, "terminate
    called without an active exception": apache/arrow#34314) every other time: a morning
    run's exit code then said nothing. A store on this machine is read through Arrow's
    own file system."""
    import subprocess
    import sys

    import pyarrow.fs as pafs

    client.sync(path=tmp_path, kinds=["ach", "nocs"], progress=False)
    dataset = History(tmp_path, company="DEMO1").scan("ach")
    assert isinstance(dataset.filesystem, pafs.SubTreeFileSystem)
    assert isinstance(dataset.filesystem.base_fs, pafs.LocalFileSystem)
    ended = [subprocess.run([sys.executable, "-c", _READ_AND_EXIT, str(tmp_path)],
                            capture_output=True, text=True, timeout=120) for _ in range(4)]
    assert [(done.returncode, done.stderr) for done in ended] == [(0, "")] * 4
