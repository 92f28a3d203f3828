"""What is new, the ledger rows kept, the message and the exit status: pure functions,
no server."""

from __future__ import annotations

import datetime as dt

import pytest

from paynb.errors import ValidationError
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
DAY3 = DAY1 + dt.timedelta(days=2)


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
    news = diff(findings, ledger, as_of=now)
    return {**ledger, **{row.key: row for row in ledger_rows(findings, news, ledger, now)}}


def test_a_warning_alerts_once_then_its_breach_once_then_the_breach_repeats_quietly():
    ledger: dict[str, Notified] = {}
    first = diff([rate("warning"), RETURNS], ledger, as_of=DAY1)
    assert [f.key for f in first.new] == ["rate:unauthorized"] and first.worth_sending
    ledger = after([rate("warning"), RETURNS], ledger, DAY1)
    again = diff([rate("warning")], ledger, as_of=DAY2)
    assert not again.alerts and [f.key for f in again.held] == ["rate:unauthorized"]
    assert not again.worth_sending
    worse = diff([rate("breach")], ledger, as_of=DAY2)
    assert [(f.key, was) for f, was in worse.worse] == [("rate:unauthorized", "warning")]
    ledger = after([rate("breach")], ledger, DAY2)
    assert ledger["rate:unauthorized"].level == "breach"
    assert ledger["rate:unauthorized"].notified == DAY2
    same_day = diff([rate("breach")], ledger, as_of=DAY2 + dt.timedelta(minutes=5))
    assert not same_day.standing and not same_day.worth_sending  # said today already
    assert [f.key for f in same_day.held] == ["rate:unauthorized"]
    standing = diff([rate("breach")], ledger, as_of=DAY3)
    assert not standing.alerts and [f.key for f in standing.standing] == ["rate:unauthorized"]
    assert standing.worth_sending  # a breach repeats once a banking day until it clears


def test_an_eased_breach_is_said_once_and_a_relapse_alerts_again():
    ledger = after([rate("breach")], {}, DAY1)
    eased = diff([rate("warning")], ledger, as_of=DAY2)
    assert [(f.level, was) for f, was in eased.improved] == [("warning", "breach")]
    assert eased.worth_sending and not eased.alerts
    ledger = after([rate("warning")], ledger, DAY2)
    assert ledger["rate:unauthorized"].level == "warning"
    assert ledger["rate:unauthorized"].notified == DAY1  # eased, not notified as new
    assert [f for f, _ in diff([rate("breach")], ledger, as_of=DAY3).worse]


def test_a_cleared_condition_is_said_once_and_alerts_again_when_it_returns():
    ledger = after([noc(7)], {}, DAY1)
    cleared = diff([], ledger, as_of=DAY2)
    assert [row.key for row in cleared.cleared] == ["noc:7"] and cleared.worth_sending
    ledger = after([], ledger, DAY2)
    assert ledger["noc:7"].cleared == DAY2
    assert not diff([], ledger, as_of=DAY3).worth_sending
    assert [f.key for f in diff([noc(7)], ledger, as_of=DAY3).new] == ["noc:7"]


def test_an_event_alerts_once_and_never_clears():
    ledger = after([unauthorized(5)], {}, DAY1)
    assert not diff([unauthorized(5)], ledger, as_of=DAY2).alerts  # met again: not sent again
    assert not diff([], ledger, as_of=DAY2).cleared                # gone from "new": not "cleared"


def test_ledger_rows_keep_what_was_notified_and_when():
    ledger = after([rate("warning"), noc(1, "warning")], {}, DAY1)
    rows = {row.key: row for row in ledger_rows(
        [rate("warning"), noc(1, "breach")], diff([rate("warning"), noc(1, "breach")],
                                                   ledger, as_of=DAY2), ledger, DAY2)}
    assert rows["rate:unauthorized"].notified == DAY1 and rows["rate:unauthorized"].seen == DAY2
    assert rows["noc:1"].notified == DAY2 and rows["noc:1"].level == "breach"
    assert RETURNS.key not in rows  # context is never in the ledger


def test_the_message_says_what_is_new_the_worst_level_and_the_report():
    ledger = after([noc(1)], {}, DAY1)
    findings = [rate("breach"), noc(1), *[noc(n) for n in range(2, 9)], unauthorized(5),
                RETURNS]
    news = diff(findings, ledger, as_of=DAY2)
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
    news = diff([rate("breach")], ledger, as_of=DAY2)
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


def _said_again(notified: dt.datetime, now: dt.datetime, repeat: str = "1d") -> bool:
    """Whether a breach notified at ``notified`` is in the quiet summary at ``now``."""
    ledger = after([rate("breach")], {}, notified)
    return bool(diff([rate("breach")], ledger, as_of=now, repeat=repeat).standing)


@pytest.mark.parametrize(("notified", "now", "again"), [
    # Friday 2027-01-15: Saturday, Sunday and Martin Luther King Day (the 18th) are no
    # banking days; Tuesday is the next one.
    (dt.datetime(2027, 1, 15, 16), dt.datetime(2027, 1, 15, 23, 59), False),
    (dt.datetime(2027, 1, 15, 16), dt.datetime(2027, 1, 16, 9), False),
    (dt.datetime(2027, 1, 15, 16), dt.datetime(2027, 1, 18, 9), False),
    (dt.datetime(2027, 1, 15, 16), dt.datetime(2027, 1, 19, 6), True),
    # Wednesday before Thanksgiving (Thursday 2026-11-26): again on the Friday.
    (dt.datetime(2026, 11, 25, 11), dt.datetime(2026, 11, 26, 11), False),
    (dt.datetime(2026, 11, 25, 11), dt.datetime(2026, 11, 27, 6), True),
    # An ordinary night: the next morning, even less than 24 hours later.
    (dt.datetime(2026, 12, 7, 10), dt.datetime(2026, 12, 8, 6), True),
    # Found on a Saturday (said at once, as new): again on the Monday.
    (dt.datetime(2026, 12, 5, 12), dt.datetime(2026, 12, 6, 12), False),
    (dt.datetime(2026, 12, 5, 12), dt.datetime(2026, 12, 7, 6), True),
])
def test_a_standing_breach_is_said_again_once_per_banking_day(notified, now, again):
    assert _said_again(notified.replace(tzinfo=dt.UTC), now.replace(tzinfo=dt.UTC)) is again


def test_other_repeat_intervals():
    monday = dt.datetime(2026, 12, 7, 10, tzinfo=dt.UTC)
    assert _said_again(monday, monday + dt.timedelta(minutes=1), "0")
    assert not _said_again(monday, monday + dt.timedelta(hours=3, minutes=59), "4h")
    assert _said_again(monday, monday + dt.timedelta(hours=4), "4h")
    assert _said_again(monday, monday + dt.timedelta(minutes=30), "30m")
    assert not _said_again(monday, monday + dt.timedelta(days=1), "2d")
    assert _said_again(monday, monday + dt.timedelta(days=2), "2D")
    # Said again, the breach's clock starts over: the next saying is a banking day later.
    ledger = after([rate("breach")], {}, monday)
    ledger = after([rate("breach")], ledger, monday + dt.timedelta(days=1))
    assert ledger["rate:unauthorized"].notified == monday + dt.timedelta(days=1)
    assert not diff([rate("breach")], ledger, as_of=monday + dt.timedelta(days=1, hours=2)
                    ).standing


@pytest.mark.parametrize("value", ["daily", "1w", "-1d", "1.5d", "", "d", "4", 4, None])
def test_a_repeat_interval_it_cannot_read_is_refused_naming_the_argument(value):
    with pytest.raises(ValidationError, match=r"^repeat must be banking days, hours or "
                                              r"minutes, as '1d', '4h' or '30m', or '0'"):
        diff([rate("breach")], {}, as_of=DAY1, repeat=value)
