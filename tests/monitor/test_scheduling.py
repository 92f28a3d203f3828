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

from .conftest import secretless_profile, secrets_file

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
    """A sandbox, a profile ``ops`` for it (DEMO1) in a config file with its secrets in
    the secrets file beside it (mode 0600), and a bare environment without a keyring."""
    tmp = tmp_path_factory.mktemp("scheduling")
    with sandbox.serve(port=0, seed_items=1500, seed=2) as sb:
        config = secretless_profile(tmp / "config.toml", sb, "DEMO1",
                                    reports=f'"{tmp / "reports"}"')
        secrets = secrets_file(tmp / "secrets.toml", sb)
        env = {"PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
               "HOME": str(tmp), "LANG": "C.UTF-8", "PAYNB_CONFIG": str(config),
               "XDG_DATA_HOME": str(tmp / "data"), "PAYNB_JOURNAL": str(tmp / "journal.db"),
               "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
        yield types.SimpleNamespace(tmp=tmp, env=env, config=config, secrets=secrets)


def here(text: str, tmp: Path) -> str:
    """A documented command with this machine's install and metrics folder."""
    (tmp / "textfile").mkdir(exist_ok=True)
    return text.replace(INSTALLED, str(Path(sys.executable).with_name("paynb"))) \
        .replace(TEXTFILE, str(tmp / "textfile"))


def test_the_cron_line(machine):
    (cron,) = blocks("cron")
    lines = [line for line in cron.splitlines() if line and not line.startswith("#")]
    # cron's own variable lines, then the job, whose command line (copied into each mail's
    # Subject) sets no variable: nothing secret can ride along.
    variables = dict(line.split("=", 1) for line in lines[:-1])
    assert variables == {"PAYNB_PROFILE": "ops"}
    fields = lines[-1].split(None, 5)
    assert fields[:5] == ["30", "6", "*", "*", "1-5"]  # 06:30, Monday to Friday
    assert fields[5].startswith(INSTALLED) and "=" not in fields[5].split()[0]
    done = subprocess.run(["/bin/sh", "-c", here(fields[5], machine.tmp)],
                          env={**machine.env, **variables}, capture_output=True, text=True,
                          timeout=300)
    # DEMO1: a breach, the overdue NOCs of its designed scenarios (DEMO2 of this sandbox
    # has none overdue: its breach was the run's NOCs judged on a window of entries)
    assert done.returncode == 2, done.stderr
    assert "warning" not in done.stderr  # the secrets file is private
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
    # LoadCredential=: systemd copies the root-only file into the run's own credentials
    # folder (readable by the service's user alone) and names it in CREDENTIALS_DIRECTORY.
    credential, source = service["Service"]["LoadCredential"].split(":", 1)
    assert source == "/etc/paynb/secrets.toml"
    passed = machine.tmp / "credentials"
    passed.mkdir()
    (passed / credential).write_text(machine.secrets.read_text())
    (passed / credential).chmod(0o400)
    # A profile file with no secrets file beside it: the credential is what serves.
    unit_config = machine.tmp / "unit" / "config.toml"
    unit_config.parent.mkdir()
    unit_config.write_text(machine.config.read_text())
    command = here(service["Service"]["ExecStart"], machine.tmp)
    done = subprocess.run(command.split(), env={
        **machine.env, name: value, "PAYNB_CONFIG": str(unit_config),
        "CREDENTIALS_DIRECTORY": str(passed)}, capture_output=True, text=True, timeout=300)
    succeeds = {0, *map(int, service["Service"]["SuccessExitStatus"].split())}
    assert done.returncode in succeeds, done.stderr  # a breach is no failed unit
    assert "DEMO1: BREACH" in done.stdout
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
    # ... and Prometheus reads that it is down, not the successful run's up 1.
    written = (machine.tmp / "textfile" / "paynb.prom").read_text()
    assert 'paynb_monitor_up{company="DEMO1"} 0.0' in written


def test_the_alert_rules_use_metrics_the_run_writes(machine):
    (rules_text,) = [b for b in blocks("yaml") if "groups:" in b]
    rules = yaml.safe_load(rules_text)["groups"][0]["rules"]
    assert len(rules) == 2
    written = (machine.tmp / "textfile" / "paynb.prom")
    test_the_cron_line(machine)  # a run that completes writes every metric
    names = set(re.findall(r"^(paynb_\w+)\{", written.read_text(), re.M))
    for rule in rules:
        used = set(re.findall(r"paynb_\w+", rule["expr"]))
        assert used and used <= names, (rule["alert"], used - names)
