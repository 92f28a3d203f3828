"""docs/monitor.md's scheduling examples, run as written: the cron line, the systemd
service and timer, the Airflow task, and the metric names the two alert rules use. Only
the install path (/opt/paynb/.venv) and the metrics folder are swapped for this machine's;
the profile ``ops`` is a profile file of the test's."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
import types
from pathlib import Path
from typing import Any

import pytest
import yaml

from paynb import sandbox

pytestmark = pytest.mark.timeout(600)
ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "monitor.md").read_text()
CREDS = sandbox.DEMO_CREDENTIALS
INSTALLED = "/opt/paynb/.venv/bin/paynb"
TEXTFILE = "/var/lib/node_exporter/textfile"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC, re.S)


@pytest.fixture(scope="module")
def machine(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A sandbox, a profile ``ops`` for it (DEMO1) in a config file, and a bare environment."""
    tmp = tmp_path_factory.mktemp("scheduling")
    with sandbox.serve(port=0, seed_items=1500, seed=2) as sb:
        config = tmp / "config.toml"
        config.write_text(
            f'[ops]\nbase_url = "{sb.base_url}"\nauth_url = "{sb.auth_url}"\n'
            f'company_code = "DEMO1"\nclient_id = "{CREDS.client_id}"\n'
            f'client_secret = "{CREDS.client_secret}"\nusername = "{CREDS.username}"\n'
            f'password = "{CREDS.password}"\nreports = "{tmp / "reports"}"\n')
        env = {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
               "HOME": str(tmp), "LANG": "C.UTF-8", "PAYNB_CONFIG": str(config),
               "XDG_DATA_HOME": str(tmp / "data"), "PAYNB_JOURNAL": str(tmp / "journal.db")}
        yield types.SimpleNamespace(tmp=tmp, env=env)


def here(text: str, tmp: Path) -> str:
    """A documented command with this machine's install and metrics folder."""
    (tmp / "textfile").mkdir(exist_ok=True)
    return text.replace(INSTALLED, str(Path(sys.executable).with_name("paynb"))) \
        .replace(TEXTFILE, str(tmp / "textfile"))


def test_the_cron_line(machine):
    (cron,) = blocks("cron")
    line = next(line for line in cron.splitlines() if line and not line.startswith("#"))
    fields = line.split(None, 5)
    assert fields[:5] == ["30", "6", "*", "*", "1-5"]  # 06:30, Monday to Friday
    done = subprocess.run(["/bin/sh", "-c", here(fields[5], machine.tmp)], env=machine.env,
                          capture_output=True, text=True, timeout=300)
    # DEMO1: a breach, the overdue NOCs of its designed scenarios (DEMO2 of this sandbox
    # has none overdue: its breach was the run's NOCs judged on a window of entries)
    assert done.returncode == 2, done.stderr
    assert done.stdout.startswith("DEMO1: BREACH (status 2)")
    assert "paynb_return_rate{" in (machine.tmp / "textfile" / "paynb.prom").read_text()


def test_the_systemd_service_and_timer(machine):
    units = {}
    for text in blocks("ini"):
        name = re.match(r"# /etc/systemd/system/(\S+)", text)[1]
        parser = configparser.ConfigParser(strict=False, interpolation=None)
        parser.optionxform = str  # type: ignore[assignment, method-assign]
        parser.read_string(text)
        units[name] = parser
    service, timer = units["paynb-monitor.service"], units["paynb-monitor.timer"]
    assert service["Service"]["Type"] == "oneshot"
    assert timer["Timer"]["OnCalendar"] == "Mon..Fri 06:30"
    assert timer["Install"]["WantedBy"] == "timers.target"
    name, value = service["Service"]["Environment"].split("=", 1)
    command = here(service["Service"]["ExecStart"], machine.tmp)
    done = subprocess.run(command.split(), env={**machine.env, name: value},
                          capture_output=True, text=True, timeout=300)
    succeeds = {0, *map(int, service["Service"]["SuccessExitStatus"].split())}
    assert done.returncode in succeeds, done.stderr  # a breach is no failed unit
    if shutil.which("systemd-analyze"):
        calendar = subprocess.run(["systemd-analyze", "calendar", "Mon..Fri 06:30"],
                                  capture_output=True, text=True)
        assert calendar.returncode == 0, calendar.stderr


def test_the_airflow_task(machine):
    """The DAG file runs with stand-ins for Airflow's DAG and BashOperator (Airflow is not
    a dependency); the task's command then runs as Airflow's BashOperator would, with
    bash, the task's env appended to the worker's."""
    (dag_file,) = [b for b in blocks("python") if "from airflow" in b]
    tasks: list[dict[str, Any]] = []

    class DAG:
        def __init__(self, **options: Any) -> None:
            self.options = options

        def __enter__(self) -> DAG:
            return self

        def __exit__(self, *exc: object) -> None:
            pass

    def BashOperator(**options: Any) -> None:
        tasks.append(options)

    airflow = types.ModuleType("airflow")
    airflow.DAG = DAG  # type: ignore[attr-defined]
    operators = types.ModuleType("airflow.operators")
    bash = types.ModuleType("airflow.operators.bash")
    bash.BashOperator = BashOperator  # type: ignore[attr-defined]
    modules = {"airflow": airflow, "airflow.operators": operators,
               "airflow.operators.bash": bash}
    saved = {name: sys.modules.get(name) for name in modules}
    sys.modules.update(modules)
    try:
        namespace: dict[str, Any] = {}
        exec(compile(dag_file, "docs/monitor.md (Airflow)", "exec"), namespace)
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name)
            else:
                sys.modules[name] = module
    assert namespace["dag"].options["schedule"] == "30 6 * * 1-5"
    (task,) = tasks
    assert task["append_env"] is True
    done = subprocess.run(["bash", "-c", here(task["bash_command"], machine.tmp)],
                          env={**machine.env, **task["env"]}, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr  # a breach (2) is no failed task
    assert "DEMO1: BREACH" in done.stdout
    failing = subprocess.run(["bash", "-c", here(task["bash_command"], machine.tmp)],
                             env={**machine.env, "PAYNB_CONFIG": "/nonexistent.toml"},
                             capture_output=True, text=True, timeout=300)
    assert failing.returncode != 0  # could not run (3): the task fails and retries


def test_the_alert_rules_use_metrics_the_run_writes(machine):
    (rules_text,) = [b for b in blocks("yaml") if "groups:" in b]
    rules = yaml.safe_load(rules_text)["groups"][0]["rules"]
    assert len(rules) == 2
    written = (machine.tmp / "textfile" / "paynb.prom")
    if not written.exists():
        test_the_cron_line(machine)
    names = set(re.findall(r"^(paynb_\w+)\{", written.read_text(), re.M))
    for rule in rules:
        used = set(re.findall(r"paynb_\w+", rule["expr"]))
        assert used and used <= names, (rule["alert"], used - names)
