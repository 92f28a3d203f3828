"""Each figure the docs quote about the morning run and the settings is the code's own: a
constant changed without its page (or a page without its constant) fails here. The demo
install's size and time are measured, not code: README.md says how."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from paynb import _env, cli, monitor
from paynb.compliance import CATEGORIES, WARNING_SHARE
from paynb.monitor import _checks, _news

ROOT = Path(__file__).resolve().parents[2]
MONITOR = (ROOT / "docs" / "monitor.md").read_text()
REAL_SERVICE = (ROOT / "docs" / "real-service.md").read_text()
README = (ROOT / "README.md").read_text()
WORDS = {2: "two", 5: "five", 7: "seven", 10: "ten", 14: "fourteen", 15: "fifteen",
         30: "thirty"}


def _flat(text: str) -> str:
    """The text with its line breaks as spaces (a figure may sit across two lines)."""
    return " ".join(text.split())


@pytest.mark.parametrize(("phrase", "value"), [
    ("the newest {} runs per company are kept", monitor.KEEP),
    ("runs kept per company (default {})", monitor.KEEP),
    ("The base** is the {} banking days before the day measured", monitor.BASE_BANKING_DAYS),
    ("if the last {} banking days' entries and returns went on", monitor.BASE_BANKING_DAYS),
    ("up to {} days ahead", monitor.HORIZON_DAYS),
    ("or `not within {} days`", monitor.HORIZON_DAYS),
    ("The run counts the ACH items received in the last {} days", _checks.ENTRY_DAYS),
    ("a run that writes its report counts {} days", _checks.READ_DAYS),
    ("for {} days of rolling rates in its chart", _checks.CHART_DAYS),
    ("the solid line of the last {} days", _checks.CHART_DAYS),
    ("worst first, {} per kind", _news.LISTED),
    ("warning` from {} % of the threshold", round(WARNING_SHARE * 100)),
])
def test_each_figure_of_the_monitor_page_is_the_codes(phrase, value):
    text = _flat(MONITOR)
    shown = {str(value), f"{value:,}", WORDS.get(value, "")} - {""}
    assert any(phrase.format(figure) in text for figure in shown), (phrase, value)


def test_the_rates_thresholds_as_the_monitor_page_quotes_them():
    text = _flat(MONITOR)
    for category in CATEGORIES:
        percent = f"{category.threshold_bp / 100:g} %"
        assert f"over {percent}" in text, (category.name, percent)


def test_the_defaults_the_monitor_page_and_the_command_give(monkeypatch, capsys):
    given = []
    monkeypatch.setattr(cli._runs, "run_monitor", lambda args: given.append(args) or 0)
    assert cli.main(["monitor"]) == 0
    (args,) = given
    assert args.waiting_days == monitor.WAITING_BANKING_DAYS
    assert args.repeat is None and monitor.REPEAT == "1d"  # None: the profile's, else 1d
    with pytest.raises(SystemExit):
        cli.main(["monitor", "--help"])
    shown = _flat(capsys.readouterr().out)
    assert f"is late (default {monitor.WAITING_BANKING_DAYS})" in shown
    assert f"{monitor.REPEAT} once per banking day (default)" in shown
    assert f"runs kept per company (default {monitor.KEEP})" in shown
    assert "| `1d` (default) | on the next banking day |" in MONITOR
    assert f'repeat = "{monitor.REPEAT}"' in MONITOR
    assert f"`{monitor.NOTIFY_VARIABLE}`" in MONITOR


def test_every_metric_in_the_table_is_one_written_and_each_written_is_in_the_table(
        tmp_path):
    documented = set(re.findall(r"`(paynb_[a-z_]+)`", MONITOR.split("## Metrics")[1]
                                .split("## Scheduling")[0]))
    path = monitor.write_metrics(tmp_path / "m.prom", [], failed=["ACME1"])
    from prometheus_client.parser import text_string_to_metric_families

    written = {family.name for family in text_string_to_metric_families(path.read_text())}
    assert written <= documented  # a run that failed writes only some of them
    source = (ROOT / "paynb" / "monitor" / "_metrics.py").read_text()
    declared = set(re.findall(r'"(paynb_[a-z_]+)"', source))
    assert declared == documented


def test_the_exit_statuses_of_the_table():
    rows = dict(re.findall(r"^\| (\d) \| (.+?) \|$", MONITOR, flags=re.M))
    assert set(rows) == {str(s) for s in (monitor.EXIT_OK, monitor.EXIT_WARNING,
                                          monitor.EXIT_BREACH, monitor.EXIT_FAILED)}
    assert rows[str(monitor.EXIT_OK)] == "nothing to act on"


def test_the_settings_page_counts_what_the_code_reads():
    text = _flat(REAL_SERVICE)
    seven = WORDS[len(_env.CONNECTION)]
    assert f"the client's {seven} settings" in text
    assert f"Besides the {seven} connection settings" in text
    assert re.findall(r"\b(fourteen|fifteen|sixteen|thirteen)\b", text) == []  # no count
    # that a new variable would leave wrong; the tables list each (tests/test_env.py).


def test_the_readme_counts_the_notebooks():
    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    assert f"{WORDS[len(notebooks)]} notebooks" in README
    for notebook in notebooks:
        assert f"`{notebook.stem}`" in README, notebook.stem
