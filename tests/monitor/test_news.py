"""What is new, the ledger rows kept, the message and the exit status: pure functions,
no server."""

from __future__ import annotations

import datetime as dt

import pytest

from paynb.monitor import (
    EXIT_BREACH,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_WARNING,
    Finding,
    Notified,
    diff,
    exit_status,
    ledger_rows,
    message,
    worst_level,
)

DAY1 = dt.datetime(2026, 11, 30, 6, tzinfo=dt.UTC)
DAY2 = DAY1 + dt.timedelta(days=1)


def rate(level: str) -> Finding:
    return Finding("DEMO1", "rate", "rate:unauthorized", level, f"unauthorized rate {level}")


def noc(number: int, level: str = "breach") -> Finding:
    return Finding("DEMO1", "noc", f"noc:{number}", level, f"NOC {number} {level}")


def unauthorized(item: int) -> Finding:
    return Finding("DEMO1", "unauthorized", f"unauthorized:{item}", "warning",
                   f"unauthorized return R10 of item {item}")


RETURNS = Finding("DEMO1", "returns", "returns", "info", "Returns since the last run: 2")


def after(findings: list[Finding], ledger: dict[str, Notified], now: dt.datetime
          ) -> dict[str, Notified]:
    """The ledger once a run with ``findings`` was delivered."""
    news = diff(findings, ledger)
    return {**ledger, **{row.key: row for row in ledger_rows(findings, news, ledger, now)}}


def test_a_warning_alerts_once_then_its_breach_once_then_the_breach_repeats_quietly():
    ledger: dict[str, Notified] = {}
    first = diff([rate("warning"), RETURNS], ledger)
    assert [f.key for f in first.new] == ["rate:unauthorized"] and first.worth_sending
    ledger = after([rate("warning"), RETURNS], ledger, DAY1)
    again = diff([rate("warning")], ledger)
    assert not again.alerts and [f.key for f in again.held] == ["rate:unauthorized"]
    assert not again.worth_sending
    worse = diff([rate("breach")], ledger)
    assert [(f.key, was) for f, was in worse.worse] == [("rate:unauthorized", "warning")]
    ledger = after([rate("breach")], ledger, DAY2)
    assert ledger["rate:unauthorized"].level == "breach"
    assert ledger["rate:unauthorized"].notified == DAY2
    standing = diff([rate("breach")], ledger)
    assert not standing.alerts and [f.key for f in standing.standing] == ["rate:unauthorized"]
    assert standing.worth_sending  # a breach repeats daily until it clears


def test_an_eased_breach_is_said_once_and_a_relapse_alerts_again():
    ledger = after([rate("breach")], {}, DAY1)
    eased = diff([rate("warning")], ledger)
    assert [(f.level, was) for f, was in eased.improved] == [("warning", "breach")]
    assert eased.worth_sending and not eased.alerts
    ledger = after([rate("warning")], ledger, DAY2)
    assert ledger["rate:unauthorized"].level == "warning"
    assert ledger["rate:unauthorized"].notified == DAY1  # eased, not notified as new
    assert [f for f, _ in diff([rate("breach")], ledger).worse]


def test_a_cleared_condition_is_said_once_and_alerts_again_when_it_returns():
    ledger = after([noc(7)], {}, DAY1)
    cleared = diff([], ledger)
    assert [row.key for row in cleared.cleared] == ["noc:7"] and cleared.worth_sending
    ledger = after([], ledger, DAY2)
    assert ledger["noc:7"].cleared == DAY2
    assert not diff([], ledger).worth_sending
    assert [f.key for f in diff([noc(7)], ledger).new] == ["noc:7"]


def test_an_event_alerts_once_and_never_clears():
    ledger = after([unauthorized(5)], {}, DAY1)
    assert not diff([unauthorized(5)], ledger).alerts  # met again: not sent again
    assert not diff([], ledger).cleared                # gone from "new": not "cleared"


def test_ledger_rows_keep_what_was_notified_and_when():
    ledger = after([rate("warning"), noc(1, "warning")], {}, DAY1)
    rows = {row.key: row for row in ledger_rows(
        [rate("warning"), noc(1, "breach")], diff([rate("warning"), noc(1, "breach")],
                                                   ledger), ledger, DAY2)}
    assert rows["rate:unauthorized"].notified == DAY1 and rows["rate:unauthorized"].seen == DAY2
    assert rows["noc:1"].notified == DAY2 and rows["noc:1"].level == "breach"
    assert RETURNS.key not in rows  # context is never in the ledger


def test_the_message_says_what_is_new_the_worst_level_and_the_report():
    ledger = after([noc(1)], {}, DAY1)
    findings = [rate("breach"), noc(1), *[noc(n) for n in range(2, 9)], unauthorized(5),
                RETURNS]
    news = diff(findings, ledger)
    title, body = message(company="DEMO1", environment="sandbox", as_of=DAY2,
                          findings=findings, news=news, report="/r/DEMO1.html")
    assert title == "paynb monitor: DEMO1 BREACH on 2026-12-01 (sandbox)"
    lines = body.splitlines()
    assert lines[0] == "New:"
    assert "- unauthorized rate breach" in lines
    assert "- ... and 2 more NOCs" in lines  # five named, then a count
    assert "- unauthorized return R10 of item 5" in lines
    assert lines[lines.index("Still in breach:") + 1] == "- NOC 1 breach"
    assert lines[-2:] == ["Returns since the last run: 2", "Report: /r/DEMO1.html"]


def test_worsened_findings_say_what_they_were():
    ledger = after([rate("warning")], {}, DAY1)
    news = diff([rate("breach")], ledger)
    _, body = message(company="DEMO1", environment="sandbox", as_of=DAY2,
                      findings=[rate("breach")], news=news, report=None,
                      failures=["notification 1 (mailto): failed (refused)"])
    assert body.splitlines() == ["New:", "- unauthorized rate breach (was warning)",
                                 "Not delivered: notification 1 (mailto): failed (refused)"]


@pytest.mark.parametrize(("levels", "failed", "status"), [
    ([], False, EXIT_OK), (["ok", "info"], False, EXIT_OK), (["info", "warning"], False,
                                                              EXIT_WARNING),
    (["warning", "breach"], False, EXIT_BREACH), (["ok"], True, EXIT_FAILED),
    (["breach"], True, EXIT_FAILED)])
def test_exit_status(levels, failed, status):
    findings = [Finding("DEMO1", "noc", f"noc:{n}", level, "t") for n, level in
                enumerate(levels)]
    assert exit_status(findings, failed=failed) == status
    assert worst_level(findings) == {EXIT_OK: "ok", EXIT_WARNING: "warning",
                                     EXIT_BREACH: "breach"}[exit_status(findings)]


def test_a_finding_refuses_an_unknown_kind_or_level():
    with pytest.raises(ValueError, match="kind"):
        Finding("DEMO1", "weather", "weather", "ok", "sunny")
    with pytest.raises(ValueError, match="level"):
        Finding("DEMO1", "rate", "rate:overall", "dire", "t")
