"""Copying an analyst's own SQLite journal into the team's (an SQLite file, then a
PostgreSQL schema): who and when kept, the team's guard then knows what the analyst sent,
a second copy adds nothing, a newer schema is refused, the command says what it copied."""

from __future__ import annotations

import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from paynb import cli
from paynb.errors import DuplicateSubmissionError
from paynb.journal import Journal, JournalCopy, JournalError

COMPANY = "DEMO1"


def _dees_journal(path: Path) -> Journal:
    """Dee's own journal, from before the team had one: a payment sent, a bulk (one row
    refused), a void, a payment waiting for approval, a NOC mark, a guard override and a
    match decision."""
    journal = Journal(path, user="dee")
    (sent,) = journal.reserve(COMPANY, "ach", "submit", ["DEE-1"], summary={"amount": "10.00"})
    journal.settle(sent, "sent", item_id=101, item_status="W")
    bulk = journal.reserve(COMPANY, "ach", "submit_many", ["DEE-2", "DEE-3"])
    journal.settle_many([(bulk[0], "sent", 102, "W"), (bulk[1], "rejected", None, None, "bad")])
    (void,) = journal.reserve(COMPANY, "ach", "void", [101])
    journal.settle(void, "sent", item_id=101, item_status="V")
    journal.hold(COMPANY, "ach", "submit", ["DEE-4"], why="over the limit",
                 summary=[{"yourReferenceNumber": "DEE-4", "amount": "5000.00"}],
                 request={"bodies": [{"yourReferenceNumber": "DEE-4"}]},
                 expires_after=timedelta(hours=1))
    journal.nocs.apply(COMPANY, "N-77", by="dee", note="C01 fixed in the CRM")
    journal.overrides.record(COMPANY, "ach", "DEE-1", "returned-account", "R03 before",
                             by="dee")
    journal.match_decisions.record("bank", "pair", expected=["L1"], items=["101"])
    return journal


def test_an_analysts_journal_is_copied_into_the_teams_once(tmp_path: Path,
                                                           journal_address: str) -> None:
    mine = _dees_journal(tmp_path / "dee.sqlite3")
    team = Journal(journal_address, user="bob")
    (bobs,) = team.reserve(COMPANY, "ach", "submit", ["BOB-1"])

    done = team.copy_from(mine)

    assert isinstance(done, JournalCopy) and not done.dry_run
    assert dict(done.copied) == {"entries": 5, "approvals": 1, "noc_applied": 1,
                                 "guard_overrides": 1, "match_decisions": 1}
    assert done.unclaimed == 0 and done.total == 9
    text = str(done)
    assert "journal entries: 5 copied, 0 already there" in text
    assert "left out: the polling memory" in text
    # Who and when, as Dee's journal had them; the batches hold together.
    theirs = {e["reference"]: e for e in mine.entries()}
    copied = {e["reference"]: e for e in team.entries() if e["by"] == "dee"}
    assert set(copied) == {"DEE-1", "DEE-2", "DEE-3", "101", "DEE-4"}
    for reference, entry in copied.items():
        original = theirs[reference]
        assert (entry["when"], entry["updated"], entry["state"], entry["item_id"],
                entry["summary"]) == (original["when"], original["updated"],
                                      original["state"], original["item_id"],
                                      original["summary"])
    assert copied["DEE-2"]["batch"] == copied["DEE-3"]["batch"] == copied["DEE-2"]["id"]
    assert copied["DEE-1"]["batch"] == copied["DEE-1"]["id"] != bobs
    (waiting,) = team.approvals.list(COMPANY)
    assert (waiting.prepared_by, waiting.references) == ("dee", ["DEE-4"])
    assert team.nocs.applied(COMPANY)["N-77"]["by"] == "dee"
    assert [o["by"] for o in team.overrides.list(COMPANY)] == ["dee"]
    # The team's guard now knows what Dee sent (and what waits for approval).
    with pytest.raises(DuplicateSubmissionError, match="'DEE-1' .* by dee at"):
        team.reserve(COMPANY, "ach", "submit", ["DEE-1"])
    with pytest.raises(DuplicateSubmissionError, match="by dee .* awaiting approval"):
        team.reserve(COMPANY, "ach", "submit", ["DEE-4"])
    team.reserve(COMPANY, "ach", "submit", ["DEE-3"])  # rejected: free again

    again = team.copy_from(mine)

    assert again.total == 0
    assert dict(again.already) == {"entries": 5, "approvals": 1, "noc_applied": 1,
                                   "guard_overrides": 1, "match_decisions": 1}
    assert len(team.entries()) == 7


def test_a_reference_sent_by_both_is_copied_without_claiming_it(tmp_path: Path,
                                                                journal_address: str) -> None:
    mine = _dees_journal(tmp_path / "dee.sqlite3")
    team = Journal(journal_address, user="bob")
    (bobs,) = team.reserve(COMPANY, "ach", "submit", ["DEE-1"])  # bob sent it too
    done = team.copy_from(mine)
    assert done.unclaimed == 1 and done.duplicates == ((COMPANY, "ach", "DEE-1"),)
    assert "1 live submissions whose reference another live entry" in str(done)
    assert "ach DEE-1 of DEMO1" in str(done)
    states = [(e["by"], e["state"]) for e in team.entries(reference="DEE-1")]
    assert states == [("bob", "pending"), ("dee", "sent")]
    with pytest.raises(DuplicateSubmissionError):  # still guarded
        team.reserve(COMPANY, "ach", "submit", ["DEE-1"])
    team.settle(bobs, "sent")


def test_a_dry_run_writes_nothing_and_a_newer_schema_is_refused(tmp_path: Path,
                                                                journal_address: str) -> None:
    mine = _dees_journal(tmp_path / "dee.sqlite3")
    team = Journal(journal_address, user="bob")
    done = team.copy_from(mine, dry_run=True)
    assert done.dry_run and done.total == 9 and "would copy 9 rows" in str(done)
    assert team.entries() == [] and len(team.approvals.list(COMPANY)) == 0
    with pytest.raises(JournalError, match="into itself"):
        team.copy_from(journal_address)
    newer = tmp_path / "newer.sqlite3"
    with sqlite3.connect(newer) as conn:
        conn.execute("PRAGMA user_version = 99")
    with pytest.raises(JournalError, match="newer"):
        team.copy_from(newer)
    assert team.entries() == []


def test_the_command_says_what_it_copied(tmp_path: Path, journal_address: str,
                                         capsys: Any) -> None:
    _dees_journal(tmp_path / "dee.sqlite3").close()
    source = str(tmp_path / "dee.sqlite3")
    assert cli.main(["journal", "copy", source, journal_address, "--dry-run"]) == 0
    assert "would copy 9 rows (dry run: nothing written)" in capsys.readouterr().out
    assert cli.main(["journal", "copy", source, journal_address]) == 0
    said = capsys.readouterr().out
    assert "copied 9 rows" in said and "journal entries: 5 copied" in said
    assert cli.main(["journal", "copy", source, journal_address]) == 0
    assert "copied 0 rows" in capsys.readouterr().out
    if journal_address.startswith("postgresql"):
        import _postgres

        assert _postgres.PASSWORD not in said
        wrong = journal_address.replace(_postgres.PASSWORD, "not-" + _postgres.PASSWORD)
        assert cli.main(["journal", "copy", source, wrong]) == 2
        error = capsys.readouterr().err
        assert "paynb journal copy: cannot use the journal" in error
        assert _postgres.PASSWORD not in error
