"""The journal's match_decisions table: recorded, read back, withdrawn, made on first use."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from paynb.journal import Journal


def test_record_read_withdraw(journal_address: str):
    journal = Journal(journal_address)  # an SQLite file, then a PostgreSQL schema
    first = journal.match_decisions.record("billing", "pair", expected=["a#1"], items=["ach:7"],
                                          note="card 4111 1111 1111 1111 on the memo")
    journal.match_decisions.record("payroll", "resolve", expected=["b#1"], items=["ach:8"],
                                  reason="returned", note="ok")
    kept = journal.match_decisions.in_force("billing")
    assert [(d["id"], d["action"], d["expected"], d["items"]) for d in kept] == [
        (first, "pair", ["a#1"], ["ach:7"])]
    assert "4111 1111 1111 1111" not in kept[0]["note"]  # scrubbed like every stored text
    journal.match_decisions.withdraw(first)
    assert journal.match_decisions.in_force("billing") == []
    with pytest.raises(KeyError):
        journal.match_decisions.withdraw(first)
    with pytest.raises(ValueError, match="action"):
        journal.match_decisions.record("billing", "forget", expected=[], items=[])


def test_a_journal_made_before_the_table_gets_it_on_first_use(tmp_path: Path):
    path = tmp_path / "old.sqlite3"
    Journal(path).close()
    with sqlite3.connect(path) as conn:  # as a journal written before this table existed
        conn.execute("DROP TABLE match_decisions")
    journal = Journal(path)
    assert journal.match_decisions.in_force() == []
    journal.match_decisions.record("billing", "pair", expected=["a#1"], items=["ach:1"])
    assert len(journal.match_decisions.in_force()) == 1
