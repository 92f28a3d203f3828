"""check(): the alerts a poll's result, merged with the history, triggers."""

from __future__ import annotations

import logging

import pytest

from paynb import compliance

from .conftest import debit, filler, frame

AS_OF = "2026-11-23"


def history() -> list[dict]:
    """DEMO1: 1 unauthorized return of 250 entries (0.4 %: warning); DEMO2: quiet."""
    records = [debit("2026-11-02", "R", returned="2026-11-04", reason="R10")]
    records += filler(249, "2026-11-02")
    records += filler(100, "2026-11-02", company="DEMO2")
    return records


def test_a_poll_that_pushes_a_company_over_the_threshold():
    past = frame(history())
    # The poll brings two of DEMO1's entries back as R07 returns (same ids, newer copy).
    changed = past.iloc[[1, 2]].copy()
    changed["itemStatus"] = "R"
    changed["returnReason"] = "R07"
    changed["returnDate"] = changed["sendDate"] + (changed["sendDate"] - changed["sendDate"])
    alerts = compliance.check(changed, history=past, as_of=AS_OF)
    assert len(alerts) == 1
    alert = alerts[0]
    assert alert.group == {"companyCode": "DEMO1"}
    assert (alert.category, alert.level, alert.previous_level) == ("unauthorized", "over",
                                                                  "warning")
    assert (alert.returns, alert.entries) == (3, 250)  # merged by id: still 250 entries
    assert alert.worsened
    assert alert.message == ("DEMO1: unauthorized return rate 1.20% over the 0.5% threshold "
                             "(was warning): 3 returns of 250 debit entries, 2026-09-25 to "
                             "2026-11-23")


def test_a_standing_warning_is_reported_but_not_worsened(caplog):
    past = frame(history())
    with caplog.at_level(logging.INFO, logger="paynb.compliance"):
        alerts = compliance.check(past.iloc[:0], history=past, as_of=AS_OF)
    assert [(a.level, a.previous_level, a.worsened) for a in alerts] == [
        ("warning", "warning", False)]
    assert "at the warning level of the 0.5% threshold" in caplog.text


def test_raise_on():
    items = frame(history())
    assert compliance.check(items, as_of=AS_OF, raise_on="over")  # warning only: no raise
    with pytest.raises(compliance.ThresholdExceeded) as caught:
        compliance.check(items, as_of=AS_OF, raise_on="warning")
    assert len(caught.value.alerts) == 1
    assert "DEMO1: unauthorized return rate 0.40%" in str(caught.value)
    with pytest.raises(ValueError, match="raise_on must be 'warning', 'over' or None"):
        compliance.check(items, raise_on="ok")


def test_nothing_to_report():
    assert compliance.check(frame(filler(10, "2026-11-02")), as_of=AS_OF) == []
