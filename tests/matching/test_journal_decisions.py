"""The journal's match_decisions table: recorded, read back, withdrawn. (A journal made before
the table gains it when it is brought up to schema 3: tests/team/test_who.py.)"""

from __future__ import annotations

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
