"""A store of the format paynb wrote before the Delta tables (tests/fixtures/history_v1,
written by tests/fixtures/make_history_v1.py with that paynb) is converted on opening
without loss: every item's latest version, every event, the watermarks; or rebuilt from
the service when told."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

import paynb
from paynb import frames
from paynb.frames._converters import DERIVED_FROM
from paynb.history import History

from .engines import assert_engines_agree

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
EXPECTED = json.loads((FIXTURES / "history_v1.expected.json").read_text(encoding="utf-8"))
KINDS = ("ach", "rcc", "instant", "rtp", "nocs")


def _maker():
    spec = importlib.util.spec_from_file_location("make_history_v1",
                                                  FIXTURES / "make_history_v1.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def old_store(tmp_path) -> Path:
    """A copy of the old store, and its account keys' secret where paynb keeps secrets."""
    store = tmp_path / "store"
    shutil.copytree(FIXTURES / "history_v1", store)
    keys = Path(os.environ["XDG_DATA_HOME"]) / "paynb" / "history-keys"
    shutil.copytree(FIXTURES / "history_v1-keys", keys)
    return store


def _stored(records: list[dict]) -> list[dict]:
    """The records without what a frame derives from their codes (``returnReasonDescription``
    ...): a read describes each code as paynb.codes does now, as the lists do, where the old
    store kept the wording of its day (R03's was "No account / unable to locate account")."""
    return [{k: v for k, v in record.items() if k not in DERIVED_FROM} for record in records]


def assert_as_before(history: History) -> None:
    rows = _maker().rows
    for kind in KINDS:
        frame = getattr(history, kind)()
        assert _stored(rows(frame)) == _stored(EXPECTED["frames"][kind]), kind
        pd.testing.assert_frame_equal(frame, frames.to_frame(frame, kind), obj=kind)
        # Every event (one sync's in the order of their ids now, as the events' reader
        # gives them).
        def by_time(events):
            return sorted(events, key=lambda e: (e["seenAt"], len(e["itemId"]), e["itemId"]))

        assert rows(history.events(kind)) == by_time(EXPECTED["events"][kind]), kind
    info, old = history.info(), EXPECTED["info"]
    assert (info["service"], info["masked"], info["accountKey"]) == \
        (old["service"], old["masked"], old["accountKey"])
    for kind in KINDS:
        before = old["kinds"]["noc" if kind == "nocs" else kind][EXPECTED["company"]]
        after = info["kinds"][kind][EXPECTED["company"]]
        for key in ("since", "watermark", "syncedAt", "counts", "nextOrder"):
            assert after[key] == before[key], (kind, key)


def test_an_old_store_is_converted_on_opening_without_loss(old_store):
    with pytest.warns(paynb.PaynbWarning, match="format of an earlier paynb .* converting it "
                      "to Delta tables; the old files are kept in .*paynb-history-v1"):
        history = History(old_store)
    assert_as_before(history)
    assert {p.name for p in old_store.iterdir()} == {*KINDS, "events", "paynb-history-v1",
                                                     ".lock"}
    assert (old_store / "paynb-history-v1" / "items").is_dir()
    assert_engines_agree(history, old_store, KINDS)
    # The account keys came along: the guards still match an account in the store.
    found = History(old_store, company=EXPECTED["company"]).guard_rows(
        [("021000021", "555000003")],
                               since=paynb.history._store.when("2000-01-01", "since"))
    assert found.problem is None and [row["bankAccountNumber"] for row in found.items] == \
        ["555000003"]
    # Opened again: nothing more to convert, nothing said.
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_as_before(History(old_store))


def test_a_conversion_cut_short_is_done_again(old_store, monkeypatch):
    import deltalake

    original, calls = deltalake.write_deltalake, []

    def cut_short(*args, **options):
        calls.append(args[0])
        if len(calls) == 3:  # the events and one kind written
            raise KeyboardInterrupt
        return original(*args, **options)

    monkeypatch.setattr(deltalake, "write_deltalake", cut_short)
    with pytest.raises(KeyboardInterrupt), pytest.warns(paynb.PaynbWarning):
        History(old_store)
    monkeypatch.undo()
    assert not (old_store / "paynb-history.json").exists()  # moved aside: converting
    with pytest.warns(paynb.PaynbWarning, match="converting"):
        history = History(old_store)
    assert_as_before(history)


def test_an_old_store_is_rebuilt_from_the_service_when_told(old_store):
    with paynb.sandbox.serve(port=0, seed_items=30, seed=2) as sb, \
            sb.connect(journal=None) as client:
        with pytest.warns(paynb.PaynbWarning, match="earlier paynb: its files are removed"):
            client.sync(path=old_store, rebuild=True, progress=False)
        assert not (old_store / "paynb-history.json").exists()
        assert not (old_store / "paynb-history-v1").exists()
        for kind in KINDS:
            assert len(getattr(client.history, kind)()) == \
                len(getattr(client, kind).list(progress=False))
