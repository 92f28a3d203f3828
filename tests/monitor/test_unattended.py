"""``paynb monitor`` run unattended, as cron runs it every minute: a standing breach mailed
once a banking day (not every run), standard error quiet, and metrics that say what
docs/monitor.md says they do, even for a run that could not start.

The repeats are run in this process with the wall clock moved (time-machine): the sandbox
served here reads the same clock, so the service's time the run measures moves with it.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import time_machine
from prometheus_client.parser import text_string_to_metric_families

from paynb import cli, sandbox

from .test_cli import CREDS, _cron, _profile

pytestmark = pytest.mark.timeout(900)
UTC = dt.UTC


def _environment(monkeypatch: pytest.MonkeyPatch, sb: Any, notify: str = "") -> None:
    """The ``PAYNB_*`` variables of a scheduled run against ``sb`` (DEMO2)."""
    for name, value in {"PAYNB_BASE_URL": sb.base_url, "PAYNB_AUTH_URL": sb.auth_url,
                        "PAYNB_COMPANY_CODE": "DEMO2", "PAYNB_CLIENT_ID": CREDS.client_id,
                        "PAYNB_CLIENT_SECRET": CREDS.client_secret,
                        "PAYNB_USERNAME": CREDS.username, "PAYNB_PASSWORD": CREDS.password,
                        "PAYNB_NOTIFY": notify}.items():
        monkeypatch.setenv(name, value)


def _metrics(path: Path) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """The file as Prometheus reads it: ``{metric: {labels: value}}``, and the HELP texts
    under ``"HELP"``."""
    found: dict[str, Any] = {"HELP": {}}
    for family in text_string_to_metric_families(path.read_text()):
        found["HELP"][family.name] = family.documentation
        for sample in family.samples:
            found.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = \
                sample.value
    return found


# Friday before Martin Luther King Day (Monday 2027-01-18, the Fed closed): a run every
# few minutes, over the weekend and the holiday, to the Tuesday.
FRIDAY = dt.datetime(2027, 1, 15, 10, 0, tzinfo=UTC)
RUNS = [
    (FRIDAY, "new"),                                              # found: mailed at once
    (FRIDAY + dt.timedelta(minutes=7), None),                     # minutes later: nothing
    (dt.datetime(2027, 1, 15, 23, 50, tzinfo=UTC), None),         # the same day
    (dt.datetime(2027, 1, 16, 10, 0, tzinfo=UTC), None),          # Saturday
    (dt.datetime(2027, 1, 17, 10, 0, tzinfo=UTC), None),          # Sunday
    (dt.datetime(2027, 1, 18, 10, 0, tzinfo=UTC), None),          # the holiday
    (dt.datetime(2027, 1, 19, 6, 30, tzinfo=UTC), "still"),       # the next banking day
    (dt.datetime(2027, 1, 19, 6, 31, tzinfo=UTC), None),          # ... once
]


def test_a_standing_breach_is_mailed_once_a_banking_day(monkeypatch, capsys, smtp_receiver,
                                                        json_receiver):
    """DEMO2 is over its unauthorized threshold (docs/sandbox.md) and stays over: the
    first run mails it, the next banking day's first run mails it once more, and no other
    run of those five days mails anything."""
    with time_machine.travel(FRIDAY - dt.timedelta(minutes=5), tick=True):
        sb = sandbox.serve(port=0, seed_items=1500, seed=3)
        with sb.connect(company_code="DEMO2", journal=os.environ["PAYNB_JOURNAL"]) as client:
            for noc_id in client.nocs.list(progress=False)["nocId"].tolist():
                client.nocs.apply(int(noc_id), by="test")  # NOCs are not this test's subject
    _environment(monkeypatch, sb, f"{smtp_receiver.url} {json_receiver.url}")
    said = []
    try:
        for moment, expected in RUNS:
            before = len(smtp_receiver.messages)
            with time_machine.travel(moment, tick=True):
                status = cli.main(["monitor", "--no-report"])
            out, err = capsys.readouterr()
            assert status == 2 and err == "", (moment, out, err)
            assert out.startswith("DEMO2: BREACH (status 2)"), out
            mailed = smtp_receiver.texts()[before:]
            said.append(None if not mailed else "still" if "Still in breach:" in mailed[0][1]
                        else "new")
            assert len(mailed) == (expected is not None), (moment, mailed)
    finally:
        sb.close()
    assert said == [expected for _, expected in RUNS]
    assert len(json_receiver.bodies) == 2
    subject, body = smtp_receiver.texts()[1]
    assert subject.startswith("paynb monitor: DEMO2 BREACH on 2027-01-19 ")
    assert "unauthorized return rate" in body.split("Still in breach:")[1]


def test_repeat_takes_another_interval_and_refuses_one_it_cannot_read(
        monkeypatch, capsys, smtp_receiver):
    with time_machine.travel(FRIDAY, tick=True):
        sb = sandbox.serve(port=0, seed_items=1500, seed=3)
    _environment(monkeypatch, sb, smtp_receiver.url)
    try:
        with time_machine.travel(FRIDAY + dt.timedelta(minutes=1), tick=True):
            assert cli.main(["monitor", "--no-report", "--repeat", "0"]) == 2
        with time_machine.travel(FRIDAY + dt.timedelta(minutes=2), tick=True):
            assert cli.main(["monitor", "--no-report", "--repeat", "0"]) == 2  # every run
        with time_machine.travel(FRIDAY + dt.timedelta(hours=3), tick=True):
            assert cli.main(["monitor", "--no-report", "--repeat", "4h"]) == 2
        with time_machine.travel(FRIDAY + dt.timedelta(hours=4, minutes=5), tick=True):
            assert cli.main(["monitor", "--no-report", "--repeat", "4h"]) == 2
    finally:
        sb.close()
    texts = smtp_receiver.texts()
    assert len(texts) == 3, [subject for subject, _ in texts]
    assert "Still in breach:" in texts[1][1] and "Still in breach:" in texts[2][1]
    capsys.readouterr()
    assert cli.main(["monitor", "--repeat", "daily"]) == 3  # could not run, nothing checked
    assert capsys.readouterr().err == (
        "paynb monitor: could not run: ValidationError: --repeat must be banking days, hours "
        "or minutes, as '1d', '4h' or '30m', or '0' for every run; got 'daily'\n")


def test_a_run_from_cron_writes_one_line_per_company_and_nothing_on_stderr(
        tmp_path, smtp_receiver, json_receiver):
    """Notifications to an SMTP server and a webhook, the report written (the report
    notebook's kernel): standard output holds one line per company, standard error
    nothing (apprise's debug lines, jupyter's "Could not destroy zmq context", IPython's
    start-up warnings stay out); ``--verbose`` lets the libraries' lines through."""
    with sandbox.serve(port=0, seed_items=1500, seed=3) as sb:
        config = _profile(tmp_path / "config.toml", sb,
                          notify=f'["{smtp_receiver.url}", "{json_receiver.url}"]',
                          reports=f'"{tmp_path / "reports"}"', companies='["DEMO1", "DEMO2"]')
        run = _cron(tmp_path, "--profile", "ops", config=config)
        assert run.returncode == 2, run.stdout + run.stderr
        assert run.stderr == ""
        lines = run.stdout.splitlines()
        assert [line.split(":")[0] for line in lines] == ["DEMO1", "DEMO2"], lines
        assert all("; report " in line for line in lines)
        assert len(smtp_receiver.messages) == len(json_receiver.bodies) == 2
        loud = _cron(tmp_path, "--profile", "ops", "--no-report", "--repeat", "0",
                     "--verbose", config=config)
        assert loud.returncode == 2
        assert "apprise" in loud.stderr  # what apprise says of each send
        assert len(smtp_receiver.messages) == 4


def test_metrics_say_what_the_docs_say(tmp_path, monkeypatch, capsys):
    """docs/monitor.md, "Metrics": the last success is the run's start, 0 seconds since
    after a success, and a run that cannot start still writes ``up 0``."""
    metrics = tmp_path / "textfile" / "paynb.prom"
    with sandbox.serve(port=0, seed_items=1500, seed=3) as sb:
        _environment(monkeypatch, sb)
        started = dt.datetime.now(UTC)
        assert cli.main(["monitor", "--no-report", "--metrics", str(metrics)]) == 2
        ended = dt.datetime.now(UTC)
    found = _metrics(metrics)
    company = (("company", "DEMO2"),)
    assert found["paynb_monitor_up"][company] == 1
    assert found["paynb_monitor_status"][company] == 2
    assert found["paynb_monitor_seconds_since_last_success"][company] == 0
    success = found["paynb_monitor_last_success_timestamp_seconds"][company]
    assert started.timestamp() <= success <= ended.timestamp()
    assert "started" in found["HELP"]["paynb_monitor_last_success_timestamp_seconds"]
    docs = (Path(__file__).resolve().parents[2] / "docs" / "monitor.md").read_text()
    assert ("| `paynb_monitor_last_success_timestamp_seconds` | when the company's last "
            "successful run started (Unix time) |") in docs
    assert found["paynb_return_rate_threshold"][(("category", "unauthorized"),
                                                 ("company", "DEMO2"))] == 0.005

    # The service is gone: DEMO2 cannot run; its last success is kept, up 0, status 3.
    assert cli.main(["monitor", "--no-report", "--metrics", str(metrics)]) == 3
    down = _metrics(metrics)
    assert down["paynb_monitor_up"][company] == 0
    assert down["paynb_monitor_status"][company] == 3
    assert down["paynb_monitor_last_success_timestamp_seconds"][company] == success
    assert down["paynb_monitor_seconds_since_last_success"][company] > 0

    # A configuration that cannot even start the run (the profile named does not exist):
    # the file still says up 0 for the companies it held, not the earlier run's 1.
    monkeypatch.setenv("PAYNB_PROFILE", "nowhere")
    assert cli.main(["monitor", "--no-report", "--metrics", str(metrics)]) == 3
    assert "could not run" in capsys.readouterr().err
    broken = _metrics(metrics)
    assert broken["paynb_monitor_up"] == {company: 0}
    assert broken["paynb_monitor_status"] == {company: 3}
    assert broken["paynb_monitor_last_success_timestamp_seconds"][company] == success

    # No earlier file, no company named: one series with an empty company label.
    fresh = tmp_path / "fresh.prom"
    assert cli.main(["monitor", "--metrics", str(fresh)]) == 3
    assert _metrics(fresh)["paynb_monitor_up"] == {(("company", ""),): 0}
    assert cli.main(["monitor", "--company", "ACME1", "--metrics", str(fresh)]) == 3
    assert _metrics(fresh)["paynb_monitor_up"] == {(("company", "ACME1"),): 0}


def test_the_help_says_whole_sentences():
    shown = subprocess.run([str(Path(sys.executable).with_name("paynb")), "--help"],
                           capture_output=True, text=True, check=True).stdout
    description = " ".join(shown.split("\n\n")[1].split())
    assert description == cli.DESCRIPTION and description.endswith(".")
    assert "``" not in shown


def test_apprise_lines_below_the_level_asked_are_not_shown(json_receiver):
    """A script's ``logging.basicConfig(level=WARNING)`` gives the root a handler with no
    level of its own: apprise's debug lines, made to find a failure's reason, must not
    reach it."""
    from paynb.monitor._notify import deliver

    seen: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = seen.append  # type: ignore[method-assign]
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.WARNING)
    try:
        outcome = deliver([json_receiver.url], "title", "body", level="breach")
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    assert [d.delivered for d in outcome] == [True] and len(json_receiver.bodies) == 1
    assert [r.getMessage() for r in seen if r.levelno < logging.WARNING] == []


def test_the_history_is_where_history_says_and_its_errors_have_a_command_line_way_out(
        tmp_path):
    store = tmp_path / "srv" / "history"
    with sandbox.serve(port=0, seed_items=500, seed=3) as one, \
            sandbox.serve(port=0, seed_items=500, seed=4) as other:
        config = _profile(tmp_path / "config.toml", one, companies='["DEMO2"]')
        first = _cron(tmp_path, "--profile", "ops", "--no-report", "--history", str(store),
                      config=config)
        assert first.returncode == 2, first.stderr
        assert {"ach", "events", "nocs", "rcc"} <= {p.name for p in store.iterdir()}
        assert not (tmp_path / "data" / "paynb" / "history").exists()  # not the default

        # A table that cannot be read: the command line's way out is named, and works.
        log = store / "ach" / "_delta_log" / "00000000000000000000.json"
        log.write_text("not a delta log")
        broken = _cron(tmp_path, "--profile", "ops", "--no-report", "--history", str(store),
                       config=config)
        assert broken.returncode == 3
        assert "client.sync(rebuild=True)" in broken.stderr  # the Python way, and:
        assert (f"From the command line: `paynb history rebuild --profile ops --history "
                f"{store}` builds it again from the service") in broken.stderr
        rebuilt = _history(tmp_path, config, "rebuild", "--profile", "ops", "--history",
                           str(store))
        assert rebuilt.returncode == 0, rebuilt.stderr
        assert rebuilt.stdout.startswith(f"DEMO2: history rebuilt in {store} (")
        again = _cron(tmp_path, "--profile", "ops", "--no-report", "--history", str(store),
                      config=config)
        assert again.returncode == 2, again.stderr

        # Another service's store: a folder of the run's own.
        elsewhere = _profile(tmp_path / "other.toml", other, companies='["DEMO2"]')
        mixed = _cron(tmp_path, "--profile", "ops", "--no-report", "--history", str(store),
                      config=elsewhere)
        assert mixed.returncode == 3
        assert "was synced from" in mixed.stderr
        assert ("From the command line: `paynb monitor --history PATH` gives the run a "
                "folder of its own") in mixed.stderr


def _history(tmp: Path, config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``paynb history ...`` with the environment ``_cron`` gives ``paynb monitor``."""
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp / "home"), "LANG": "C.UTF-8",
           "XDG_DATA_HOME": str(tmp / "data"), "PAYNB_JOURNAL": str(tmp / "journal.sqlite3"),
           "PAYNB_CONFIG": str(config)}
    return subprocess.run([str(Path(sys.executable).with_name("paynb")), "history", *args],
                          env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
