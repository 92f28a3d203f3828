"""The journal's records of applied NOCs and guard overrides: kept across processes and
restarts, added to a journal written before they existed (schema 1)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from paynb.journal import SCHEMA_VERSION, Journal


def test_applied_marks_survive_a_reopen_and_the_first_mark_stands(journal_address: str
                                                                  ) -> None:
    path = journal_address  # an SQLite file, then a PostgreSQL schema
    with Journal(path) as journal:
        first = journal.nocs.apply("DEMO1", 17, by="ana", note="CRM updated")
        assert first["already"] is False and first["noc_id"] == "17"
    with Journal(path) as again:
        second = again.nocs.apply("DEMO1", "17", by="bob")
        assert second["already"] is True and second["by"] == "ana"
        marks = again.nocs.applied("DEMO1")
        assert list(marks) == ["17"] and marks["17"]["note"] == "CRM updated"
        assert again.nocs.applied("OTHER") == {}


def test_overrides_are_recorded_with_who(journal_address: str) -> None:
    with Journal(journal_address) as journal:
        number = journal.overrides.record("DEMO1", "ach", "REF-1", "returned-account",
                                         "returned R02", by="ana")
        (found,) = journal.overrides.list("DEMO1")
        assert found["id"] == number and found["by"] == "ana"
        assert found["rule"] == "returned-account" and found["reference"] == "REF-1"
        assert journal.overrides.list("OTHER") == []


def test_a_schema_1_journal_gains_the_new_tables(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    with Journal(path) as journal:
        journal.reserve("DEMO1", "ach", "submit", ["OLD-1"])
    with sqlite3.connect(path) as conn:   # as paynb before schema 2 left it
        conn.execute("DROP TABLE noc_applied")
        conn.execute("DROP TABLE guard_overrides")
        conn.execute("DROP TABLE match_decisions")
        conn.execute("DROP TABLE approvals")
        conn.execute("DROP INDEX entries_guard")
        conn.execute("ALTER TABLE entries DROP COLUMN by")
        conn.execute("CREATE UNIQUE INDEX entries_guard ON entries (company, kind, reference)"
                     " WHERE guard = 1 AND state IN ('pending', 'sent', 'unknown')")
        conn.execute("PRAGMA user_version = 1")
    with Journal(path) as reopened:
        assert [e["reference"] for e in reopened.entries("DEMO1")] == ["OLD-1"]
        reopened.nocs.apply("DEMO1", 1, by="ana")
        assert "1" in reopened.nocs.applied("DEMO1")
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
