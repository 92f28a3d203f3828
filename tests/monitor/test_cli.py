"""``paynb monitor`` as cron runs it: a real subprocess with a bare environment (a profile
file, no terminal), its exit statuses, what it prints, its metrics, and a notification
that cannot be delivered: the report is kept, the failure named, the status 3, and no
secret (the service's password and client secret, the SMTP password in the notification
URL) in anything it leaves behind."""

from __future__ import annotations

import datetime as dt
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from paynb import sandbox

from .conftest import free_port

pytestmark = pytest.mark.timeout(600)
CREDS = sandbox.DEMO_CREDENTIALS
SMTP_USER, SMTP_PASSWORD = "paynb-mailer", "SMTP-PASSWORD-4417"


def _profile(path: Path, sb: Any, **extra: str) -> Path:
    lines = [f'base_url = "{sb.base_url}"', f'auth_url = "{sb.auth_url}"',
             'company_code = "DEMO1"', f'client_id = "{CREDS.client_id}"',
             f'client_secret = "{CREDS.client_secret}"', f'username = "{CREDS.username}"',
             f'password = "{CREDS.password}"', *(f"{k} = {v}" for k, v in extra.items())]
    path.write_text("[ops]\n" + "\n".join(lines) + "\n")
    path.chmod(0o600)  # it holds secrets: else every run warns so on stderr
    return path


def _cron(tmp: Path, *args: str, config: Path | None = None, **env: str
          ) -> subprocess.CompletedProcess[str]:
    """``paynb monitor ...`` with the little environment cron gives a job."""
    bare = {"PATH": os.environ["PATH"], "HOME": str(tmp / "home"), "LANG": "C.UTF-8",
            "XDG_DATA_HOME": str(tmp / "data"), "PAYNB_JOURNAL": str(tmp / "journal.sqlite3"),
            "PAYNB_CONFIG": str(config or tmp / "none.toml"), **env}
    command = [str(Path(sys.executable).with_name("paynb")), "monitor", *args]
    return subprocess.run(command, env=bare, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)


def test_exit_statuses_and_metrics(tmp_path):
    nothing = _cron(tmp_path)
    assert nothing.returncode == 3
    assert "nothing to monitor" in nothing.stderr and "PAYNB_PROFILE" in nothing.stderr
    with sandbox.serve(port=0, seed_items=6000, seed=5) as sb:
        config = _profile(tmp_path / "config.toml", sb, reports=f'"{tmp_path / "reports"}"')
        wrong = tmp_path / "wrong.toml"
        wrong.write_text(config.read_text().replace(CREDS.password, "not-the-password"))
        refused = _cron(tmp_path, "--profile", "ops", "--no-report", config=wrong)
        assert refused.returncode == 3
        assert "DEMO1: could not run: AuthenticationError" in refused.stderr
        assert "not-the-password" not in refused.stderr + refused.stdout
        # DEMO2 is over the unauthorized threshold, and has a NOC left overdue (the demo's
        # own are mostly applied by later entries, so one is made, three weeks old): 2.
        with sandbox.Sandbox(sb.base_url, company_code="DEMO2").connect(journal=None) as two:
            sent = two.ach.list(status="S", progress=False)["achItemId"].iloc[0]
        sb.simulate.create_noc(int(sent), change_code="C01", company_code="DEMO2",
                               date=dt.datetime.now(dt.UTC) - dt.timedelta(days=21))
        metrics = tmp_path / "textfile" / "paynb.prom"
        breach = _cron(tmp_path, "--profile", "ops", "--company", "DEMO2", "--no-report",
                       "--metrics", str(metrics), config=config)
        assert breach.returncode == 2, breach.stderr
        assert breach.stdout.startswith("DEMO2: BREACH (status 2)")
        assert "paynb monitor: DEMO2 BREACH" in breach.stdout  # no URL: the message printed
        text = metrics.read_text()
        assert re.search(r"paynb_return_rate\{category=\"unauthorized\",company=\"DEMO2\"\} 0\.\d+",
                         text)
        assert 'paynb_return_rate_threshold{category="unauthorized",company="DEMO2"} 0.005' \
            in text
        assert re.search(r'paynb_noc_overdue\{company="DEMO2"\} [1-9]', text)
        assert 'paynb_monitor_up{company="DEMO2"} 1.0' in text
        assert "paynb_monitor_last_success_timestamp_seconds" in text
        # DEMO1 with its NOCs applied and nothing new since the last run: 0.
        with sb.connect(journal=tmp_path / "journal.sqlite3") as client:
            for noc_id in client.nocs.list(progress=False)["nocId"].tolist():
                client.nocs.apply(int(noc_id), by="test")
        _cron(tmp_path, "--profile", "ops", "--no-report", config=config)
        calm = _cron(tmp_path, "--profile", "ops", "--no-report", config=config)
        assert calm.returncode == 0, calm.stdout + calm.stderr
        assert calm.stdout.strip() == "DEMO1: OK (status 0); 0 new alert(s)"
        # An unauthorized return comes in: a warning, 1.
        with sb.connect(journal=None) as client:
            debit = client.ach.list(status="S", progress=False)
            debit = debit[debit["achTransactionType"] == "Debit"]["achItemId"].iloc[-1]
        sb.simulate.force_status(int(debit), "R", code="R05", company_code="DEMO1")
        warned = _cron(tmp_path, "--profile", "ops", "--no-report", config=config)
        assert warned.returncode == 1, warned.stdout + warned.stderr
        assert "unauthorized return R05" in warned.stdout and str(debit) in warned.stdout


def test_smtp_down_keeps_the_report_names_the_failure_and_leaks_nothing(tmp_path,
                                                                          json_receiver):
    closed = free_port()  # nothing listens there: the SMTP server is down
    smtp = (f"mailto://{SMTP_USER}:{SMTP_PASSWORD}@127.0.0.1:{closed}"
            "?from=paynb@example.com&to=ops@example.com")
    with sandbox.serve(port=0, seed_items=1500, seed=3) as sb:
        config = _profile(tmp_path / "config.toml", sb, notify=f'["{smtp}", "{json_receiver.url}"]',
                          reports=f'"{tmp_path / "reports"}"', companies='["DEMO2"]')
        metrics = tmp_path / "paynb.prom"
        first = _cron(tmp_path, "--profile", "ops", "--metrics", str(metrics), config=config)
        assert first.returncode == 3, first.stdout + first.stderr
        assert re.search(r"DEMO2: notification 1 \(mailto\): failed \(.*Connection refused",
                         first.stderr), first.stderr
        html = sorted((tmp_path / "reports" / "DEMO2").glob("*.html"))
        assert len(html) == 1 and html[0].stat().st_size > 10_000  # the report is kept
        assert len(json_receiver.bodies) == 1  # the other channel got the message
        assert 'paynb_monitor_notifications_failed{company="DEMO2"} 1.0' in metrics.read_text()
        # Not delivered everywhere: the next run says the same alerts again.
        second = _cron(tmp_path, "--profile", "ops", "--no-report", config=config)
        assert second.returncode == 3
        assert json_receiver.bodies[1]["message"].split("\nReport")[0].startswith("New:")
        evidence = {"stdout": first.stdout + second.stdout, "stderr": first.stderr
                    + second.stderr, "report": html[0].read_text(),
                    "metrics": metrics.read_text(),
                    "journal": b"".join(p.read_bytes() for p in tmp_path.glob("journal*"))
                    .decode("utf-8", "replace"),
                    "messages": repr(json_receiver.bodies)}
        for workbook in (tmp_path / "reports" / "DEMO2").glob("*.xlsx"):
            evidence["workbook"] = workbook.read_bytes().decode("latin-1")
    for secret in (SMTP_PASSWORD, SMTP_USER, CREDS.password, CREDS.client_secret, smtp):
        for where, text in evidence.items():
            assert secret not in text, f"{secret!r} in {where}"
    assert "notification 1 (mailto)" in evidence["stderr"]


def test_an_unexpected_error_is_status_3_with_its_reason(sandbox, monkeypatch, capsys):
    """A bug must not exit 1 through a traceback: a scheduler would read "warnings"."""
    from paynb import cli, monitor

    def broken(client: Any, **options: Any) -> None:
        raise RuntimeError("something paynb did not foresee")

    monkeypatch.setattr(monitor, "run", broken)
    for name, value in {"PAYNB_BASE_URL": sandbox.base_url, "PAYNB_AUTH_URL": sandbox.auth_url,
                        "PAYNB_COMPANY_CODE": "DEMO1", "PAYNB_CLIENT_ID": CREDS.client_id,
                        "PAYNB_CLIENT_SECRET": CREDS.client_secret,
                        "PAYNB_USERNAME": CREDS.username,
                        "PAYNB_PASSWORD": CREDS.password}.items():
        monkeypatch.setenv(name, value)
    assert cli.main(["monitor", "--no-report"]) == 3
    err = capsys.readouterr().err
    assert "DEMO1: could not run: RuntimeError: something paynb did not foresee" in err
