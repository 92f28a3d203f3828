"""The journal: duplicate guard (threads and processes), states, watermarks, scrubbing.

Every test that takes ``journal`` (or ``journal_address``) runs twice: on an SQLite file
and on the tests' own PostgreSQL server (a team's journal). The rest is about the file.
"""

from __future__ import annotations

import ast
import inspect
import multiprocessing
import os
import pickle
import sqlite3
import stat
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import paynb
from paynb.errors import DuplicateSubmissionError
from paynb.journal import (
    SCHEMA_VERSION,
    STATES,
    DualControl,
    Journal,
    JournalError,
    _approvals,
    _journal,
    scrub,
)
from paynb.models import AchItem

COMPANY = "DEMO1"


@pytest.fixture
def path(tmp_path: Path) -> Path:
    """An SQLite journal file (for the tests about the file)."""
    return tmp_path / "journal.sqlite3"


@pytest.fixture
def journal(journal_address: str) -> Iterator[Journal]:
    """A fresh journal: an SQLite file, then a PostgreSQL schema."""
    with Journal(journal_address) as opened:
        yield opened


# ---------------------------------------------------------------------------- the guard

def test_second_submission_is_refused_and_names_the_first(journal: Journal) -> None:
    (first,) = journal.reserve(COMPANY, "ach", "submit", ["REF-1"])
    journal.settle(first, "sent", item_id=123, item_status="W")

    with pytest.raises(DuplicateSubmissionError) as caught:
        journal.reserve(COMPANY, "ach", "submit_many", ["REF-0", "REF-1"])

    error = caught.value
    assert error.reference_number == "REF-1"
    assert error.previous["id"] == first
    assert error.previous["state"] == "sent"
    assert error.previous["item_id"] == 123
    assert error.previous["item_status"] == "W"
    assert error.previous["when"].tzinfo is not None
    assert "REF-1" in str(error) and "allow_duplicate" in str(error)
    # All or nothing: REF-0 was not recorded either.
    assert [entry["reference"] for entry in journal.entries()] == ["REF-1"]


def test_allow_duplicate_records_a_second_entry(journal: Journal,
                                               caplog: pytest.LogCaptureFixture) -> None:
    journal.reserve(COMPANY, "ach", "submit", ["REF-1"])
    with caplog.at_level("WARNING", logger="paynb.journal"):
        (second,) = journal.reserve(COMPANY, "ach", "submit", ["REF-1"], allow_duplicate=True)
    assert "submitted again" in caplog.text and "REF-1" in caplog.text
    journal.settle(second, "sent", item_id=2)

    entries = journal.entries(reference="REF-1")
    assert [entry["allow_duplicate"] for entry in entries] == [False, True]
    assert [entry["state"] for entry in entries] == ["pending", "sent"]
    # Allowing once does not open the door for the next plain submission.
    with pytest.raises(DuplicateSubmissionError) as caught:
        journal.reserve(COMPANY, "ach", "submit", ["REF-1"])
    assert caught.value.previous["id"] == second


def test_the_guard_is_per_company_and_kind(journal: Journal) -> None:
    journal.reserve(COMPANY, "ach", "submit", ["REF-1"])
    journal.reserve("DEMO2", "ach", "submit", ["REF-1"])
    journal.reserve(COMPANY, "rcc", "submit", ["REF-1"])
    journal.reserve(COMPANY, "rtp", "send", ["REF-1"])
    assert len(journal.entries(reference="REF-1")) == 4


@pytest.mark.parametrize("state", ["rejected", "failed"])
def test_a_refused_or_unsent_submission_may_be_retried(journal: Journal, state: str) -> None:
    (first,) = journal.reserve(COMPANY, "instant", "send", ["IC-1"])
    journal.settle(first, state, detail="400 amount: must be positive")
    (second,) = journal.reserve(COMPANY, "instant", "send", ["IC-1"])
    assert journal.previous(COMPANY, "instant", "IC-1")["id"] == second


@pytest.mark.parametrize("state", ["pending", "sent", "unknown"])
def test_a_live_submission_blocks(journal: Journal, state: str) -> None:
    (first,) = journal.reserve(COMPANY, "rcc", "submit", ["R-1"])
    journal.settle(first, state)
    with pytest.raises(DuplicateSubmissionError):
        journal.reserve(COMPANY, "rcc", "submit", ["R-1"])
    assert journal.duplicates(COMPANY, "rcc", ["R-0", "R-1"]).keys() == {"R-1"}


def test_a_reference_twice_in_one_bulk_is_refused(journal: Journal) -> None:
    with pytest.raises(DuplicateSubmissionError) as caught:
        journal.reserve(COMPANY, "ach", "submit_many", ["A", "B", "A"])
    assert caught.value.reference_number == "A"
    assert journal.entries() == []
    assert journal.reserve(COMPANY, "ach", "submit_many", ["A", "A"], allow_duplicate=True)


def test_voids_are_recorded_never_refused(journal: Journal) -> None:
    journal.reserve(COMPANY, "ach", "void", [41])
    ids = journal.reserve(COMPANY, "ach", "void_many", [41, 42])
    journal.reserve(COMPANY, "ach", "void_references", ["REF-1"])
    journal.reserve(COMPANY, "ach", "void_references", ["REF-1"])
    entries = journal.entries(operation="void_many")
    assert [entry["id"] for entry in entries] == ids
    assert [entry["reference"] for entry in entries] == ["41", "42"]
    assert [entry["item_id"] for entry in entries] == [41, 42]
    assert {entry["batch"] for entry in entries} == {ids[0]}
    assert len(journal.entries(state="pending")) == 5


def test_a_failed_entry_found_sent_after_all_is_recorded_beside_the_retry(
        journal: Journal) -> None:
    (first,) = journal.reserve(COMPANY, "ach", "submit", ["REF-1"])
    journal.settle(first, "failed")
    (second,) = journal.reserve(COMPANY, "ach", "submit", ["REF-1"])
    journal.settle(second, "sent", item_id=2)
    # The unique guard must not turn the truth into an error.
    journal.settle(first, "sent", item_id=1)
    assert [entry["state"] for entry in journal.entries()] == ["sent", "sent"]


# ---------------------------------------------------------------------------- states

def test_unknown_then_settled_by_reconcile(journal: Journal) -> None:
    lost, answered = journal.reserve(COMPANY, "ach", "submit_many", ["L", "A"],
                                     summary=[{"amount": Decimal("1.00")}, None])
    journal.settle_many([(lost, "unknown", None, None, "connection dropped"),
                         (answered, "sent", 7, "W")])
    assert [entry["id"] for entry in journal.unknown_entries(COMPANY)] == [lost]
    assert journal.unknown_entries("DEMO2") == []

    journal.settle(lost, "sent", item_id=8, item_status="W")

    assert journal.unknown_entries() == []
    entry = journal.entries(reference="L")[0]
    assert entry["state"] == "sent"
    assert entry["item_id"] == 8
    assert entry["detail"] == "connection dropped"  # kept: settle only overwrites what it gets
    assert entry["summary"] == {"amount": "1.00"}
    assert entry["updated"] >= entry["when"]


def test_stale_pending_entries_count_as_unknown(journal: Journal) -> None:
    (entry_id,) = journal.reserve(COMPANY, "rtp", "send", ["RTP-1"])
    assert journal.unknown_entries() == []
    assert [entry["id"] for entry in journal.unknown_entries(stale_after=-1)] == [entry_id]
    assert journal.unknown_entries(stale_after=None) == []


def test_settle_checks_ids_and_states(journal: Journal) -> None:
    (entry_id,) = journal.reserve(COMPANY, "ach", "submit", ["REF-1"])
    with pytest.raises(KeyError, match="999"):
        journal.settle_many([(entry_id, "sent"), (999, "sent")])
    assert journal.entries()[0]["state"] == "pending"  # one transaction: nothing changed
    with pytest.raises(ValueError, match="state"):
        journal.settle(entry_id, "done")


def test_ids_taken_from_a_dataframe_are_stored_as_plain_values(journal: Journal) -> None:
    ids = pd.Series([41, 42], dtype="Int64")
    entry_ids = journal.reserve(COMPANY, "ach", "void_many", list(ids.to_numpy("int64")))
    journal.settle_many([(entry_ids[0], "sent", ids.astype("int64").iloc[0], "V"),
                         (entry_ids[1], "rejected", pd.NA, None, "400: not in W")])
    assert [entry["item_id"] for entry in journal.entries()] == [41, 42]


def test_bad_arguments_are_named(journal: Journal) -> None:
    with pytest.raises(ValueError, match="kind"):
        journal.reserve(COMPANY, "wire", "submit", ["A"])
    with pytest.raises(ValueError, match="operation"):
        journal.reserve(COMPANY, "ach", "pay", ["A"])
    with pytest.raises(ValueError, match="company"):
        journal.reserve("", "ach", "submit", ["A"])
    with pytest.raises(TypeError, match="references"):
        journal.reserve(COMPANY, "ach", "submit", "A")
    with pytest.raises(ValueError, match="summary"):
        journal.reserve(COMPANY, "ach", "submit_many", ["A", "B"], summary=[{}])
    assert journal.reserve(COMPANY, "ach", "submit_many", []) == []


def test_a_bulk_of_5000_is_reserved_and_settled_in_one_go(journal: Journal) -> None:
    references = [f"BULK-{n:05d}" for n in range(5000)]
    ids = journal.reserve(COMPANY, "ach", "submit_many", references,
                          summary=[{"amount": Decimal(n) / 100} for n in range(5000)])
    assert ids == list(range(ids[0], ids[0] + 5000))
    journal.settle_many((entry_id, "sent", 10_000 + n, "W") for n, entry_id in enumerate(ids))
    frame = journal.frame(state="sent")
    assert len(frame) == 5000
    assert frame["item_id"].iloc[-1] == "14999"
    assert len(journal.duplicates(COMPANY, "ach", references)) == 5000


def test_frame_is_typed_and_the_same_when_empty(journal: Journal) -> None:
    empty = journal.frame()
    (entry_id,) = journal.reserve(COMPANY, "ach", "submit", ["REF-1"])
    journal.settle(entry_id, "sent", item_id=5, item_status="W")
    frame = journal.frame(COMPANY, "ach", ["sent", "unknown"])

    assert list(empty.columns) == list(frame.columns)
    assert empty.dtypes.to_dict() == frame.dtypes.to_dict()
    assert str(frame["when"].dtype) == "datetime64[ns, UTC]"
    assert list(frame["state"].cat.categories) == list(STATES)
    assert frame["id"].dtype == "Int64"
    assert frame.loc[0, "item_id"] == "5"
    assert journal.frame(state="failed").empty


# ---------------------------------------------------------------------------- polling

def test_watermarks_per_company_and_kind(journal: Journal) -> None:
    assert journal.polling.watermark(COMPANY, "ach") is None
    journal.polling.set_watermark(COMPANY, "ach", datetime(2026, 11, 1, 8, 30))  # zone-less: UTC
    journal.polling.set_watermark(COMPANY, "rcc", datetime(2026, 11, 2, tzinfo=timezone(timedelta(
        hours=-5))))
    journal.polling.set_watermark(COMPANY, "ach", pd.Timestamp("2026-11-03T12:00:00.5Z"))

    assert journal.polling.watermark(COMPANY, "ach") == datetime(2026, 11, 3, 12, 0, 0, 500000,
                                                         tzinfo=UTC)
    assert journal.polling.watermark(COMPANY, "rcc") == datetime(2026, 11, 2, 5, tzinfo=UTC)
    assert journal.polling.watermark("DEMO2", "ach") is None
    with pytest.raises(TypeError):
        journal.polling.set_watermark(COMPANY, "ach", "2026-11-01")


def test_seen_changes_report_only_new_keys(journal: Journal) -> None:
    returned = datetime(2026, 11, 1, tzinfo=UTC)
    first = [(1, "R", returned), (2, "B", None)]
    assert journal.polling.seen_changes(COMPANY, "ach", first) == set()
    assert journal.polling.mark_seen(COMPANY, "ach", first) == 2

    # The overlapping window comes back with pandas values and a new change of item 1.
    again = [(1, "R", pd.Timestamp(returned)), (2, "B", pd.NaT), (1, "I", returned),
             (2, "B", pd.NA)]
    assert journal.polling.seen_changes(COMPANY, "ach", again) == {again[0], again[1], again[3]}
    assert journal.polling.mark_seen(COMPANY, "ach", again) == 1
    assert journal.polling.seen_changes(COMPANY, "rcc", again) == set()


# ---------------------------------------------------------------------------- secrets

SECRETS = ("hunter2-password", "s3cret-client", "eyJ-access-token", "987654",
           "4111111111111111", "000123456789")


def test_scrub_drops_secrets_and_masks_numbers() -> None:
    summary = {
        "password": SECRETS[0], "client_secret": SECRETS[1], "accessToken": SECRETS[2],
        "totPassword": SECRETS[3], "cardNumber": SECRETS[4], "bankAccountNumber": SECRETS[5],
        "cardExpiration": "12/2030",
        "items": [{"accountNumber": "12345678", "amount": Decimal("10.10")}],
        "note": "paid with card 4111 1111 1111 1111",
        "yourReferenceNumber": "REF-1", "routingNumber": "021000021",
        "row": {"n": pd.Series([3]).iloc[0], "x": float("nan")}, "at": pd.NaT,
    }
    assert scrub(summary) == {
        "cardLastFour": "1111", "bankAccountNumber": "****6789",
        "items": [{"accountNumber": "****5678", "amount": "10.10"}],
        "note": "paid with card ****1111",
        "yourReferenceNumber": "REF-1", "routingNumber": "021000021",
        "row": {"n": 3, "x": None}, "at": None,
    }


def test_nothing_secret_reaches_the_file(path: Path) -> None:
    item = AchItem(first_signer_first_name="Jane", first_signer_last_name="Doe", state="NY",
                   zip="10001", your_reference_number="REF-1",
                   bank_routing_number="021000021", bank_account_number=SECRETS[5],
                   ach_transaction_type="Credit", amount=Decimal("10.10"))
    with Journal(path) as journal:
        (entry_id,) = journal.reserve(COMPANY, "ach", "submit", ["REF-1"], summary=item)
        journal.reserve(COMPANY, "instant", "send", ["IC-1"], summary={
            "cardNumber": SECRETS[4], "totPassword": SECRETS[3], "token": SECRETS[2]})
        journal.settle(entry_id, "failed", detail=f"card {SECRETS[4]} refused")
        stored = journal.entries()
    raw = b"".join(p.read_bytes() for p in path.parent.iterdir())
    for secret in SECRETS:
        assert secret.encode() not in raw
        assert secret not in repr(stored)
    assert stored[0]["summary"]["bankAccountNumber"] == "****6789"


# ---------------------------------------------------------------------------- the file

def test_default_path_honours_the_environment(tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAYNB_JOURNAL", str(tmp_path / "deep" / "j.sqlite3"))
    assert Journal.default_path() == tmp_path / "deep" / "j.sqlite3"
    assert (tmp_path / "deep").is_dir()

    monkeypatch.delenv("PAYNB_JOURNAL")
    import platformdirs

    monkeypatch.setattr(platformdirs, "user_data_dir",
                        lambda *args, **kwargs: str(tmp_path / "data" / "paynb"))
    assert Journal.default_path() == tmp_path / "data" / "paynb" / "journal.sqlite3"
    assert Journal(None).path == tmp_path / "data" / "paynb" / "journal.sqlite3"


@pytest.mark.parametrize("value", ["off", "OFF", "none", "0"])
def test_the_environment_can_turn_the_journal_off(value: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAYNB_JOURNAL", value)
    assert Journal.from_env() is None
    with pytest.raises(JournalError, match="off"):
        Journal.default_path()


def test_from_env_opens_the_file_it_names(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAYNB_JOURNAL", str(tmp_path / "j.sqlite3"))
    journal = Journal.from_env()
    assert journal is not None and journal.path == tmp_path / "j.sqlite3"
    assert journal.path.exists()


def test_the_variable_is_read_in_one_place() -> None:
    """$PAYNB_JOURNAL means one thing wherever paynb looks at it (issue 45): one function
    reads it, and the default journal and config's warning about a stray one ask it."""
    package = Path(paynb.__file__).parent
    reads = []
    for source in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(source.read_text())):
            looked_up = (node.args if isinstance(node, ast.Call)
                         else [node.slice] if isinstance(node, ast.Subscript) else [])
            if any(isinstance(one, ast.Constant) and one.value == "PAYNB_JOURNAL"
                   for one in looked_up):
                reads.append((str(source.relative_to(package)), node.lineno))
    assert [where for where, _ in reads] == ["journal/_journal.py"]
    lines, start = inspect.getsourcelines(_journal.journal_variable)
    assert start <= reads[0][1] < start + len(lines)


def test_each_journal_module_keeps_to_its_room() -> None:
    """Issue 45: no module of the journal over 600 lines; the dual-control policy (a
    business rule) apart from the storage of the queue and of the entries."""
    package = Path(_journal.__file__).parent
    sizes = {source.name: len(source.read_text().splitlines())
             for source in package.glob("*.py")}
    assert {name: size for name, size in sizes.items() if size > 600} == {}
    assert DualControl.__module__ == "paynb.journal._dual_control"
    assert not hasattr(_approvals, "DualControl")


def test_the_file_is_private_versioned_and_in_wal_mode(path: Path) -> None:
    Journal(path).close()
    if os.name == "posix":
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_an_in_memory_journal_guards_too() -> None:
    journal = Journal(":memory:")
    journal.reserve(COMPANY, "ach", "submit", ["REF-1"])
    with pytest.raises(DuplicateSubmissionError):
        journal.reserve(COMPANY, "ach", "submit", ["REF-1"])
    assert not Path(":memory:").exists()


def test_a_newer_schema_is_refused(path: Path) -> None:
    with sqlite3.connect(path) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(JournalError, match="newer"):
        Journal(path)


def test_a_journal_survives_pickling_and_reopening(journal: Journal) -> None:
    journal.reserve(COMPANY, "ach", "submit", ["REF-1"])
    copy = pickle.loads(pickle.dumps(journal))
    assert (copy.path, copy.location) == (journal.path, journal.location)
    with pytest.raises(DuplicateSubmissionError):
        copy.reserve(COMPANY, "ach", "submit", ["REF-1"])
    journal.close()
    assert len(journal.entries()) == 1  # reopens on use


# ---------------------------------------------------------------------------- concurrency

def _race(journal: Journal, barrier: threading.Barrier, outcomes: list[str]) -> None:
    barrier.wait()
    try:
        journal.reserve(COMPANY, "ach", "submit", ["RACE-1"])
        outcomes.append("reserved")
    except DuplicateSubmissionError:
        outcomes.append("refused")


@pytest.mark.parametrize("shared", [True, False], ids=["one-object", "object-per-thread"])
def test_eight_threads_one_reference_one_winner(journal_address: str, shared: bool) -> None:
    journals = ([Journal(journal_address)] * 8 if shared
                else [Journal(journal_address) for _ in range(8)])
    barrier = threading.Barrier(8)
    outcomes: list[str] = []
    threads = [threading.Thread(target=_race, args=(journal, barrier, outcomes))
               for journal in journals]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["refused"] * 7 + ["reserved"]
    assert len(journals[0].entries()) == 1
    for journal in journals:
        journal.close()


def _six_open_at_once(where: Any, failures: list[BaseException]) -> None:
    """Six threads open a fresh journal at the same moment and each records an entry."""

    def open_it(barrier: threading.Barrier) -> None:
        barrier.wait()
        try:
            with Journal(where) as journal:
                journal.reserve(COMPANY, "ach", "void", [1])
        except BaseException as exc:  # every failure is the finding
            failures.append(exc)

    barrier = threading.Barrier(6)
    threads = [threading.Thread(target=open_it, args=(barrier,)) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_threads_creating_one_fresh_file_at_once_all_open_it(tmp_path: Path) -> None:
    # Switching a fresh file to WAL used to fail at once with "database is locked" while
    # another connection was creating it (about one round in thirty, found by CI).
    failures: list[BaseException] = []
    for round_ in range(40):
        file = tmp_path / f"fresh-{round_}.sqlite3"
        _six_open_at_once(file, failures)
        assert failures == [], f"round {round_}: {failures[0]!r}"
        assert len(Journal(file).entries()) == 6


def test_connections_creating_one_fresh_postgresql_schema_at_once_all_open_it(
        postgres: Any) -> None:
    # The first to open a fresh database creates the schema; the others wait for it and
    # find it made (an advisory lock), rather than failing on tables half made.
    failures: list[BaseException] = []
    for round_ in range(8):
        address = postgres.fresh()
        _six_open_at_once(address, failures)
        assert failures == [], f"round {round_}: {failures[0]!r}"
        with Journal(address) as journal:
            assert len(journal.entries()) == 6


def _process_race(address: str, barrier, queue, references: list[str]) -> None:
    journal = Journal(address)  # both processes create the fresh journal at the same time
    won = []
    for reference in references:
        barrier.wait()  # both reach for this reference at the same moment
        try:
            journal.reserve(COMPANY, "ach", "submit", [reference])
            won.append(reference)
        except DuplicateSubmissionError:
            pass
    queue.put(won)


def test_two_processes_one_winner_per_reference(journal_address: str) -> None:
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(2)
    queue = context.Queue()
    references = [f"P-{n:03d}" for n in range(100)]
    processes = [context.Process(target=_process_race,
                                 args=(journal_address, barrier, queue, references))
                 for _ in range(2)]
    for process in processes:
        process.start()
    won = [queue.get(timeout=60) for _ in processes]
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    assert sorted(won[0] + won[1]) == references  # each reference won exactly once
    with Journal(journal_address) as journal:
        assert len(journal.entries()) == 100


# ---------------------------------------------------------------------------- PostgreSQL

def _tables_as_text(address: str) -> str:
    """Every row of every table of a PostgreSQL journal, as text (what the server holds)."""
    import psycopg

    with psycopg.connect(address) as conn:
        tables = [row[0] for row in conn.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = current_schema()").fetchall()]
        return "\n".join(repr(conn.execute(f"SELECT * FROM {table}").fetchall())
                         for table in tables)


def test_nothing_secret_reaches_the_database(postgres: Any) -> None:
    address = postgres.fresh()
    with Journal(address) as journal:
        journal.reserve(COMPANY, "ach", "submit", ["REF-1"], summary={
            "bankAccountNumber": SECRETS[5], "password": SECRETS[0]})
        (entry_id,) = journal.reserve(COMPANY, "instant", "send", ["IC-1"], summary={
            "cardNumber": SECRETS[4], "totPassword": SECRETS[3], "token": SECRETS[2]})
        journal.settle(entry_id, "failed", detail=f"card {SECRETS[4]} refused")
        journal.nocs.apply(COMPANY, 7, by="ana", note=f"card {SECRETS[4]}")
    held = _tables_as_text(address)
    assert "REF-1" in held and "****6789" in held
    for secret in SECRETS:
        assert secret not in held


def test_a_postgresql_journal_is_versioned_and_refuses_a_newer_schema(postgres: Any) -> None:
    import psycopg

    address = postgres.fresh()
    Journal(address).close()
    with psycopg.connect(address, autocommit=True) as conn:
        assert conn.execute("SELECT version FROM paynb_schema").fetchall() == [
            (SCHEMA_VERSION,)]
        conn.execute("UPDATE paynb_schema SET version = 99")
    with pytest.raises(JournalError, match="newer paynb") as caught:
        Journal(address)
    assert f"schema 99, this one knows {SCHEMA_VERSION}" in str(caught.value)


def test_the_password_of_the_address_is_never_shown(postgres: Any,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    import _postgres

    address = postgres.fresh()
    caplog.set_level("DEBUG")
    with Journal(address) as journal:
        shown = [repr(journal), journal.location, str(vars(journal)), repr(vars(journal._db))]
        assert journal.backend == "postgresql" and journal.path is None
        assert journal.location.startswith(f"postgresql://{_postgres.USER}:<hidden>@127.0.0.1")
    wrong = address.replace(_postgres.PASSWORD, _postgres.PASSWORD + "-wrong")
    with pytest.raises(JournalError) as refused:
        Journal(wrong)
    shown += [str(refused.value), repr(refused.value)]
    assert "password authentication failed" in str(refused.value)
    closed = address.replace(f":{postgres.port}/", f":{_unused_port()}/")
    with pytest.raises(JournalError) as unreachable:
        Journal(closed)
    shown += [str(unreachable.value)]
    assert "Connection refused" in str(unreachable.value)
    assert str(unreachable.value).startswith("cannot use the journal postgresql://")
    shown.append(caplog.text)
    for text in shown:
        assert _postgres.PASSWORD not in text


def _unused_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_address_in_the_environment_opens_a_postgresql_journal(
        postgres: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    address = postgres.fresh()
    monkeypatch.setenv("PAYNB_JOURNAL", address)
    assert Journal.default_address() == address
    with pytest.raises(JournalError, match="PostgreSQL database, not a file"):
        Journal.default_path()
    journal = Journal.from_env()
    assert journal is not None and journal.backend == "postgresql"
    journal.close()
