"""A history of two companies read at scale (issue 46): the lists' order without a slice
a row, SQL scoped to the History's company, streams for what does not fit, reads that
would not fit refused before they fill memory; rebuilds that restart their counts and
keep the events; old tables given the settings of new ones."""

from __future__ import annotations

import re
import shutil
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import polars as pl
import pytest
from deltalake import DeltaTable, write_deltalake

from paynb import compliance
from paynb._attrs import HISTORY
from paynb.errors import HistoryCompanyWarning, HistoryError, HistoryWarning
from paynb.history import History
from paynb.history import _store as st
from paynb.sandbox import Sandbox, serve

COMPANIES = ("DEMO1", "DEMO2")
DOCS = Path(__file__).parents[2] / "docs"


@pytest.fixture(scope="module")
def two(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Sandbox, Path]]:
    """A store holding the ACH items of both demo companies (each synced by its client)."""
    path = tmp_path_factory.mktemp("two") / "store"
    with serve(port=0, seed_items=600, seed=5) as sb:
        for company in COMPANIES:
            with sb.connect(company_code=company, journal=None) as client:
                client.sync(path=path, kinds="ach", progress=False)
        yield sb, path


def _grouped_query() -> str:
    """The grouped query of docs/compliance.md, "Grouped items", as written there."""
    text = (DOCS / "compliance.md").read_text(encoding="utf-8")
    found = re.search(r'grouped = history\.sql\("""(.*?)"""\)', text, re.S)
    assert found is not None
    return found.group(1)


def test_two_companies_read_back_in_each_ones_list_order(two):
    sb, path = two
    every = History(path).ach()
    parts = [History(path, company=c).ach() for c in COMPANIES]
    assert all(len(part) for part in parts)
    # One company's rows, then the other's, each in its list's order (both start at 0).
    pd.testing.assert_frame_equal(every, pd.concat(parts, ignore_index=True))
    for company, part in zip(COMPANIES, parts, strict=True):
        with sb.connect(company_code=company, journal=None) as client:
            pd.testing.assert_frame_equal(part, client.ach.list(progress=False), obj=company)
    narrow = History(path).ach(columns=["itemStatus", "amount"])
    pd.testing.assert_frame_equal(narrow, every[["achItemId", "itemStatus", "amount"]])


def test_sql_of_a_company_sees_its_rows_and_the_grouped_example_gives_its_figures(two):
    sb, path = two
    query = _grouped_query()
    figures = []
    for company in COMPANIES:
        with sb.connect(company_code=company, journal=None) as client:
            client.sync(path=path, kinds="ach", progress=False)  # (nothing new)
            history = client.history  # as docs/compliance.md has it: the client's
            with warnings.catch_warnings():
                warnings.simplefilter("error", HistoryCompanyWarning)  # one company: quiet
                grouped = history.sql(query)
                held = history.sql("select distinct company from ach")["company"].tolist()
                seen = history.sql("select distinct company from events")["company"].tolist()
            assert held == [company] and seen == [company]
            grouped.attrs[HISTORY] = history.held("ach")
            items = history.ach()
            as_of = items["receivedDateTime"].max()
            rates = compliance.return_rates(items, as_of=as_of)
            pd.testing.assert_frame_equal(
                compliance.return_rates(grouped, as_of=as_of, weights="items"), rates,
                obj=company)
            with history.connect() as connection:
                ((count,),) = connection.sql("select count(*) from ach").fetchall()
            assert count == len(items)
            figures.append(rates["rate"].tolist())
    assert figures[0] != figures[1]  # (else mixing them would go unseen)
    with pytest.warns(HistoryCompanyWarning, match="2 companies .DEMO1, DEMO2. .*mix them"):
        History(path).sql("select count(*) from ach")


def test_scan_streams_a_table_of_the_historys_company(two):
    _, path = two
    history = History(path, company="DEMO2")
    dataset = history.scan("ach")
    table = dataset.to_table()
    assert set(table.column("company").to_pylist()) == {"DEMO2"}
    assert table.num_rows == len(history.ach())
    assert sum(batch.num_rows for batch in dataset.to_batches(columns=["achItemId"])) == \
        table.num_rows
    by_status = pl.scan_pyarrow_dataset(dataset).group_by("itemStatus").len().collect()
    assert by_status["len"].sum() == table.num_rows
    ((rows,),) = duckdb.sql("select count(*) from dataset").fetchall()
    assert rows == table.num_rows
    assert set(history.scan("events").to_table().column("company").to_pylist()) == {"DEMO2"}
    assert History(path).scan("ach").count_rows() == len(History(path).ach())


def test_a_read_that_would_not_fit_is_refused_before_it_fills_memory(two, monkeypatch):
    _, path = two
    history = History(path, company="DEMO1")
    expected = history.ach(columns=["itemStatus"])
    monkeypatch.setattr(st, "available_memory", lambda: 20_000)  # bytes
    for read in (history.ach, lambda: history.sql("select * from ach")):
        with pytest.raises(HistoryError, match=r"does not fit in memory: .* rows read .*"
                                               r"history\.scan"):
            read()
    # What fits is read; the stream reads on.
    assert history.sql("select count(*) as n from ach")["n"].iloc[0] == len(expected)
    assert history.scan("ach").count_rows() == len(expected)
    monkeypatch.setattr(st, "available_memory", lambda: None)  # not known: read
    pd.testing.assert_frame_equal(history.ach(columns=["itemStatus"]), expected)


def test_available_memory_is_the_machines():
    available = st.available_memory()
    assert available is None or available > 2**20


def _counts(history: History) -> dict[str, int]:
    frame = history.ach(columns=["itemStatus"])
    return {str(k): int(v) for k, v in frame["itemStatus"].value_counts().items() if v}


def test_a_rebuild_restarts_counts_and_order_and_keeps_the_events(private, tmp_path):
    sb = private
    client = sb.connect(journal=None)
    client.sync(path=tmp_path, kinds="ach", progress=False)
    waiting = client.ach.list(status="W", progress=False)["achItemId"].tolist()
    sb.simulate.force_status(waiting[0], "R", code="R01")
    client.sync(kinds="ach", progress=False)
    history = client.history
    events = history.events("ach")
    assert list(history.events("ach", item_id=waiting[0])["itemStatus"]) == ["W", "R"]
    frame = history.ach()
    for _ in range(2):
        client.sync(kinds="ach", rebuild=True, progress=False)
        held = History(tmp_path).info()["kinds"]["ach"]["DEMO1"]
        assert held["counts"] == _counts(history)
        assert held["nextOrder"] == len(frame)
        pd.testing.assert_frame_equal(history.ach(), frame)
        # Every status each item was seen in is kept, none twice.
        pd.testing.assert_frame_equal(history.events("ach"), events)
    places = DeltaTable(str(tmp_path / "ach")).to_pandas(columns=["_order"])["_order"]
    assert sorted(places) == list(range(len(frame)))
    sb.simulate.force_status(waiting[1], "R", code="R01")
    client.sync(kinds="ach", rebuild=True, progress=False)
    assert list(history.events("ach", item_id=waiting[1])["itemStatus"]) == ["W", "R"]
    assert len(history.events("ach")) == len(events) + 1


def test_a_store_of_events_alone_says_why_it_answers_nothing(private, tmp_path):
    client = private.connect(journal=None)
    client.sync(path=tmp_path, kinds="ach", progress=False)
    shutil.rmtree(tmp_path / "ach")  # as a first sync stopped between its two commits
    with pytest.warns(HistoryWarning, match="only its events table was written"):
        assert History(tmp_path).ach().empty


def test_maintain_gives_a_table_made_before_the_settings_those_of_new_ones(private,
                                                                          tmp_path):
    client = private.connect(journal=None)
    client.sync(path=tmp_path, kinds="ach", progress=False)
    expected = client.history.ach()
    table = DeltaTable(str(tmp_path / "ach"))
    rows, kept = table.to_pyarrow_table(), st.state(table)
    shutil.rmtree(tmp_path / "ach")  # written again as an earlier paynb wrote it
    write_deltalake(str(tmp_path / "ach"), rows, partition_by=list(st.PARTITIONS),
                    commit_properties=st.commit_properties(kept))
    assert "delta.checkpointInterval" not in \
        DeltaTable(str(tmp_path / "ach")).metadata().configuration
    History(tmp_path).maintain()
    configuration = DeltaTable(str(tmp_path / "ach")).metadata().configuration
    assert configuration["delta.checkpointInterval"] == str(st.CHECKPOINT_COMMITS)
    assert configuration["delta.targetFileSize"] == str(st.TARGET_FILE_BYTES)
    pd.testing.assert_frame_equal(History(tmp_path, company="DEMO1").ach(), expected)


def test_syncs_say_nothing_of_pandas_4(private, tmp_path):
    errors: Any = pytest.importorskip("pandas.errors")
    if not hasattr(errors, "Pandas4Warning"):
        pytest.skip("no Pandas4Warning in this pandas")
    client = private.connect(journal=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error", errors.Pandas4Warning)
        client.sync(path=tmp_path, progress=False)
        waiting = client.ach.list(status="W", progress=False)["achItemId"].tolist()
        private.simulate.force_status(waiting[0], "R", code="R01")
        client.sync(progress=False)
        client.sync(kinds="ach", rebuild=True, progress=False)
        client.history.ach()


@pytest.mark.parametrize("files", [4, 4_000])
def test_rows_come_back_in_list_order_whatever_the_files_hold(files):
    """Files holding long runs of list places are sliced (no copy); files whose places
    interleave (a month's file holding places spread over its neighbours', an old
    version) are gathered a column at a time, not cut into a slice a row."""
    import numpy as np
    import pyarrow as pa

    from paynb.history._reader import RUNS_SLICED, _in_order

    rows = 20_000
    places = np.arange(rows)
    companies = np.where(places % 5 == 0, "DEMO2", "DEMO1")
    # Each "file" a chunk: long runs (4 files) or places dealt out to 4,000 files in turn.
    chunks = np.array_split(places, files) if files < 10 else [
        places[start::files] for start in range(files)]
    table = pa.Table.from_batches([pa.record_batch({
        "company": companies[chunk], "_order": chunk, "amount": chunk * 100})
        for chunk in chunks])
    ordered = _in_order(table)
    expected = table.sort_by([("company", "ascending"), ("_order", "ascending")])
    assert ordered.to_pydict() == expected.to_pydict()
    runs = ordered.column("amount").num_chunks
    assert runs <= files + 2 if files < RUNS_SLICED else runs == 1
