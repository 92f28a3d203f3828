"""Who: every journal entry, NOC mark, guard override, match decision and approval records
who did it (the client's ``user``: the profile's, else the OS user), and every reader
shows it; a team's records are shared by everyone on the journal."""

from __future__ import annotations

import getpass
import shutil
import sqlite3
import uuid
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import paynb
from paynb.errors import DuplicateSubmissionError
from paynb.journal import SCHEMA_VERSION, Journal

pytestmark = pytest.mark.guards_unchecked

FIXTURE = Path(__file__).parent.parent / "fixtures" / "journal_v2.sqlite3"


def _ach(reference: str, amount: str = "12.00") -> dict[str, Any]:
    return {"firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
            "zip": "10001", "yourReferenceNumber": reference, "bankRoutingNumber": "021000021",
            "bankAccountNumber": "000123456789", "achTransactionType": "Debit",
            "amount": Decimal(amount)}


def test_every_entry_says_who_and_the_guard_names_them_across_clients(team: Any) -> None:
    ana, bob = team("ana", dual_control=None), team("bob", dual_control=None)
    reference = f"WHO-{uuid.uuid4().hex[:8]}"
    ana.ach.submit(_ach(reference))
    with pytest.raises(DuplicateSubmissionError) as caught:
        bob.ach.submit(_ach(reference))  # another analyst, another client: the same guard
    assert f"submit by ana at {caught.value.previous['when']:%Y-%m-%d %H:%M:%S} UTC, sent" \
        in str(caught.value)
    assert caught.value.previous["by"] == "ana"
    journal = bob.journal()
    assert list(journal.loc[journal["reference"] == reference, "by"]) == ["ana"]
    assert str(journal["by"].dtype) == "string"
    assert "acting as" in bob._repr_html_() and ">bob<" in bob._repr_html_()
    assert bob.user == "bob"


def test_the_user_defaults_to_the_os_user_and_a_profile_names_it(sb: Any, tmp_path: Path,
                                                                 monkeypatch: Any) -> None:
    journal = tmp_path / "j.sqlite3"
    assert sb.connect(journal=journal).user == getpass.getuser()
    assert Journal(journal).user == getpass.getuser()
    path = tmp_path / "config.toml"
    creds = sb.credentials
    path.write_text(f'[team]\nbase_url = "{sb.base_url}"\nauth_url = "{sb.auth_url}"\n'
                    f'company_code = "DEMO1"\nclient_id = "{creds.client_id}"\n'
                    f'client_secret = "{creds.client_secret}"\nusername = "{creds.username}"\n'
                    f'password = "{creds.password}"\njournal = "{journal}"\nuser = "ana"\n'
                    '[team.dual_control]\nach_over = "1000"\nbulk = true\n'
                    'expires_after_hours = 8\n')
    monkeypatch.setenv("PAYNB_CONFIG", str(path))
    monkeypatch.delenv("PAYNB_JOURNAL")
    client = paynb.connect("team")
    assert client.user == "ana"
    assert client.dual_control == paynb.DualControl(limits={"ach": "1000"}, bulk=True,
                                                    expires_after=__import__(
                                                        "datetime").timedelta(hours=8))
    assert paynb.connect("team", user="bob").user == "bob"  # the call comes first
    # The same in INI form: the dual control is a section "team.dual_control".
    ini = tmp_path / "config.ini"
    ini.write_text(f"[team]\nbase_url = {sb.base_url}\nauth_url = {sb.auth_url}\n"
                   f"company_code = DEMO1\nclient_id = {creds.client_id}\n"
                   f"client_secret = {creds.client_secret}\nusername = {creds.username}\n"
                   f"password = {creds.password}\njournal = {journal}\nuser = ana\n"
                   "[team.dual_control]\nvoid_over = 0\ninstant = yes\n")
    monkeypatch.setenv("PAYNB_CONFIG", str(ini))
    assert paynb.config.profile_names() == ["team"]
    client = paynb.connect("team")
    assert client.dual_control.void_over == 0 and client.dual_control.instant is True
    assert "every void" in client._repr_html_()


def test_marks_overrides_and_decisions_record_who_and_are_shared(journal_address: str
                                                                 ) -> None:
    ana, bob = Journal(journal_address, user="ana"), Journal(journal_address, user="bob")
    decision = ana.match_decisions.record("billing", "pair", expected=["a#1"], items=["7"])
    (kept,) = bob.match_decisions.in_force("billing")  # bob sees ana's decision
    assert (kept["id"], kept["by"]) == (decision, "ana")
    bob.match_decisions.withdraw(decision)
    assert ana.match_decisions.in_force("billing") == []
    ana.nocs.apply("DEMO1", 17, by=ana.user)
    assert bob.nocs.applied("DEMO1")["17"]["by"] == "ana"
    ana.close()
    bob.close()


def test_a_match_result_shows_who_decided(tmp_path: Path) -> None:
    from matching.conftest import ach_items
    from matching.test_result import COLUMNS, _inputs

    expected, items = _inputs()
    assert ach_items  # the items are made as the client makes them
    journal = Journal(tmp_path / "j.sqlite3", user="ana")
    result = paynb.match(expected, items, columns=COLUMNS, journal=journal, ledger="l")
    result.pair(2, 3, note="paid from the new account")
    returned = result.exceptions.set_index("reason").loc["returned", "exception_id"]
    result.resolve(int(returned), "paid again by wire")
    assert list(result.decisions["by"]) == ["ana", "ana"]
    later = paynb.match(expected, items, columns=COLUMNS,
                        journal=Journal(tmp_path / "j.sqlite3", user="bob"), ledger="l")
    reasons = later.exceptions.set_index("reason")
    assert reasons.loc["returned", "decided_by"] == "ana"  # bob's run shows ana's decision


# ---------------------------------------------------------------------------- migration

def test_a_journal_written_by_schema_2_is_brought_forward(tmp_path: Path,
                                                          caplog: Any) -> None:
    """tests/fixtures/journal_v2.sqlite3 was written by paynb before schema 3: everything
    in it is still read, the new columns are empty for the old rows, and new rows say who."""
    path = tmp_path / "old.sqlite3"
    shutil.copy(FIXTURE, path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
    caplog.set_level("WARNING", logger="paynb.journal")
    with Journal(path, user="ana") as journal:
        assert f"schema 2 brought up to {SCHEMA_VERSION}" in caplog.text
        entries = journal.entries("ACME1")
        assert [(e["reference"], e["state"]) for e in entries][:3] == [
            ("INV-1", "sent"), ("INV-2", "unknown"), ("CHK-9", "rejected")]
        assert {e["by"] for e in entries} == {None}
        assert entries[0]["summary"]["accountNumber"] == "****6789"
        # The guard still holds on the old rows, and names no one it does not know.
        with pytest.raises(DuplicateSubmissionError, match="submit at .* UTC, unknown"):
            journal.reserve("ACME1", "ach", "submit", ["INV-2"])
        assert journal.polling.watermark("ACME1", "ach").isoformat() == \
            "2025-06-11T20:50:04+00:00"
        assert journal.nocs.applied("ACME1")["7"]["by"] == "jane"
        assert journal.overrides.list("ACME1")[0]["rule"] == "R07-reinitiation"
        (decision,) = journal.match_decisions.in_force("ledger-2025")
        assert (decision["action"], decision["by"]) == ("resolve", None)
        journal.reserve("ACME1", "ach", "submit", ["NEW-1"])
        assert journal.entries(reference="NEW-1")[0]["by"] == "ana"
        assert len(journal.approvals.list("ACME1")) == 0
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    caplog.clear()
    Journal(path).close()
    assert "brought up" not in caplog.text  # once only


def test_a_schema_2_journal_without_match_decisions_gains_the_table(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    shutil.copy(FIXTURE, path)
    with sqlite3.connect(path) as conn:  # made before the table, which came on first use
        conn.execute("DROP TABLE match_decisions")
    with Journal(path, user="ana") as journal:
        journal.match_decisions.record("l", "pair", expected=["a"], items=["b"])
        assert journal.match_decisions.in_force()[0]["by"] == "ana"
