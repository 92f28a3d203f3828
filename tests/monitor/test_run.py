"""monitor.run's edges: the missing extra named, no journal refused, the reports folder
kept to its count, the ledger in a journal kept in memory, nothing heavy on import."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile

import pytest

from paynb import monitor
from paynb.errors import MissingExtraError, PaynbError
from paynb.journal import Journal

pytestmark = pytest.mark.timeout(600)


def test_without_the_extra_the_error_names_it(client, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "apprise" else real(name, *a))
    with pytest.raises(MissingExtraError) as caught:
        monitor.run(client)
    assert "pip install 'paynb[monitor]'" in str(caught.value)
    assert caught.value.extra == "monitor" and caught.value.missing == ["apprise"]
    assert isinstance(caught.value, ImportError)


def test_a_client_without_a_journal_is_refused(client):
    with pytest.raises(PaynbError, match="journal=None"):
        monitor.run(client, report=False)


@pytest.mark.parametrize("argument", ["keep", "waiting_days"])
def test_bad_counts_are_named(sandbox, tmp_path, argument):
    with sandbox.connect(journal=tmp_path / "j.sqlite3") as client, \
            pytest.raises(ValueError, match=argument):
        monitor.run(client, **{argument: 0})


def test_reports_are_kept_to_their_count_with_their_workbooks(sandbox, tmp_path):
    folder = tmp_path / "reports"
    with sandbox.connect(company_code="DEMO2", journal=tmp_path / "j.sqlite3") as client:
        reports = [monitor.run(client, reports=folder, keep=2, notify=[]) for _ in range(3)]
    kept = sorted(p.name for p in (folder / "DEMO2").iterdir())
    assert kept == sorted(p.name for r in reports[1:] for p in (r.html, r.workbook))
    assert not reports[0].html.exists()
    sheets = zipfile.ZipFile(reports[-1].workbook).read("xl/workbook.xml").decode()
    for sheet in ("rates", "exposure_by_day", "notes", "findings", "noc_obligations",
                  "new_returns", "waiting", "unknown_submissions"):
        assert f'name="{sheet}"' in sheets, sheet
    page = reports[-1].html.read_text()
    assert "paynb morning run: DEMO2" in page and "data:image/png;base64," in page
    assert "<script" not in page and "http://" not in page.split("Report:")[0] \
        .replace(client.base_url, "")




def test_a_journal_in_memory_keeps_the_ledger(sandbox):
    journal = Journal(":memory:")
    # DEMO1: its designed scenarios hold overdue NOCs (DEMO2 of this sandbox alerts nothing,
    # which read as overdue NOCs only while the run judged NOCs on a window of entries).
    with sandbox.connect(company_code="DEMO1", journal=journal) as client:
        first = monitor.run(client, report=False, notify=[])
        second = monitor.run(client, sync=False, report=False, notify=[])
        runs = journal.monitor.runs("DEMO1")  # (closing the client closes the journal)
    assert first.news.alerts and not second.news.alerts
    # The breach stands; said today already, the second run has nothing to say.
    assert [r.delivered for r in runs] == ["printed", "nothing"]


def test_importing_paynb_and_the_monitor_loads_none_of_the_extra() -> None:
    code = ("import sys, paynb, paynb.monitor; "
            "print(sorted(m for m in ('papermill', 'nbconvert', 'apprise', 'prometheus_client')"
            " if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip() == "[]", done.stderr


