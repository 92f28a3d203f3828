"""A simulated week against the sandbox, each morning's run notifying an SMTP server and a
JSON endpoint on loopback: the unauthorized return rate alerts once at the warning level,
once at the breach (then repeats quietly once a banking day), and each new unauthorized
return alerts once. What alerts is computed here independently, from the service's own lists.

DEMO2 crossed the thresholds before the sandbox's today (docs/sandbox.md), so the week
pushes DEMO1, the well-behaved company, over them with forced unauthorized returns
(the sandbox's simulation API), the way a bad batch would; the bank's own returns
arrive meanwhile as the sandbox schedules them.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd
import pytest

from paynb import calendar, compliance, monitor, sandbox
from paynb.monitor import UNAUTHORIZED

pytestmark = pytest.mark.timeout(600)


def _unauthorized_ids(client: Any) -> dict[int, pd.Timestamp]:
    """Every unauthorized return of the company, as the service lists them: id -> date."""
    returned = client.ach.list(status="R", progress=False)
    picked = returned[returned["returnReason"].isin(UNAUTHORIZED)]
    return dict(zip(picked["achItemId"].astype(int),
                    pd.to_datetime(picked["returnDate"], utc=True), strict=True))


def _rate(client: Any, today: dt.date) -> tuple[int, int]:
    """(unauthorized returns, debit entries) in the 60-day window, from the service's list."""
    row = compliance.return_rates(client.ach.list(progress=False), as_of=today)
    row = row[row["category"] == "unauthorized"].iloc[0]
    return int(row["returns"]), int(row["entries"])


def _force(sb: Any, client: Any, count: int, today: dt.date, code: str) -> list[int]:
    """Return ``count`` settled debits of the window with ``code``, dated today."""
    items = client.ach.list(status="S", progress=False)
    debits = items[(items["achTransactionType"] == "Debit") & (items["amount"] > 0)
                   & (pd.to_datetime(items["sendDate"], utc=True)
                      >= pd.Timestamp(today - dt.timedelta(days=30), tz="UTC"))]
    chosen = [int(i) for i in debits["achItemId"].sort_values().tolist()[:count]]
    for item_id in chosen:
        sb.simulate.force_status(item_id, "R", code=code, date=today, company_code="DEMO1")
    return chosen


def _apply_nocs(client: Any) -> None:
    """The analyst applies every NOC each morning (NOCs are another test's subject)."""
    for noc_id in client.nocs.list(progress=False)["nocId"].tolist():
        client.nocs.apply(int(noc_id), by="test")


def test_a_week_of_mornings(tmp_path, smtp_receiver, json_receiver):
    urls = [smtp_receiver.url, json_receiver.url]
    with sandbox.serve(port=0, seed_items=3000, seed=11) as sb:
        client = sb.connect(journal=tmp_path / "journal.sqlite3")
        known = _unauthorized_ids(client)
        sent_before = 0
        said: dt.date | None = None  # the day the breach was last said
        for day in range(6):
            if day:
                sb.simulate.advance_clock(days=1)
            today = sb.simulate.now().date()
            _apply_nocs(client)
            forced: list[int] = []
            returns, entries = _rate(client, today)
            if day == 1:  # to the warning level, not over: R * 250 >= E, R * 200 <= E
                need = -(-entries // 250) - returns
                assert need > 0 and (returns + need) * 200 <= entries
                forced = _force(sb, client, need, today, "R10")
            elif day == 2:  # over the threshold: R * 200 > E
                forced = _force(sb, client, entries // 200 + 1 - returns, today, "R10")
            elif day == 3:
                forced = _force(sb, client, 1, today, "R05")
            now = _unauthorized_ids(client)
            if day == 0:  # a first run: the returns since the last banking day
                first = pd.Timestamp(calendar.add_banking_days(today, -1).date(), tz="UTC")
                new = {i for i, when in now.items() if when >= first}
            else:
                new = set(now) - set(known)
            known = now
            assert set(forced) <= new

            report = monitor.run(client, notify=urls, report=False)

            assert not report.problems
            rate = next(f for f in report.findings if f.key == "rate:unauthorized")
            expected_level = ["ok", "warning", "breach", "breach", "breach", "breach"][day]
            assert rate.level == expected_level, (day, rate.title)
            expected = {f"unauthorized:{i}" for i in new}
            if day in (1, 2):
                expected.add("rate:unauthorized")
            assert {f.key for f in report.news.alerts} == expected, day
            again = day >= 3 and calendar.banking_days_between(said, today) >= 1
            assert [f.key for f in report.news.standing] == (["rate:unauthorized"]
                                                             if again else []), day
            if day == 2 or again:
                said = today
            if day == 2:
                assert [(f.key, was) for f, was in report.news.worse] == [
                    ("rate:unauthorized", "warning")]
            # Exactly one message per morning with something to say, the same on both.
            sent = sent_before + (1 if report.news.worth_sending else 0)
            assert len(smtp_receiver.messages) == len(json_receiver.bodies) == sent, day
            if sent > sent_before:
                subject, body = smtp_receiver.texts()[-1]
                assert subject == report.title and body == report.message
                assert json_receiver.bodies[-1]["title"] == report.title
                assert json_receiver.bodies[-1]["message"] == report.message
                for finding in report.news.alerts[:5]:
                    assert finding.title in body
                if again:
                    assert "Still in breach:" in body and rate.title in body
            sent_before = sent
            assert all(d.delivered for d in report.deliveries)
        assert len(smtp_receiver.messages) >= 3  # day 1 to day 3 each had something new
        runs = client.context.journal.monitor.runs("DEMO1")
        assert [r.delivered for r in runs][1:4] == ["sent"] * 3
        client.close()
