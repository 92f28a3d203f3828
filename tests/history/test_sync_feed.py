"""The change feed: one reading of the service's returns poll, from a watermark, that
``changes()`` (the client's watermark) and the history's sync (the store's) share."""

from __future__ import annotations

import datetime as dt

import pandas as pd

from paynb.resources import CHANGES_OVERLAP, ChangeFeed

MARK = dt.datetime(2026, 11, 20, 15, 30, 0, 250_000, tzinfo=dt.UTC)
STATUSES = [("itemStatus", "B"), ("itemStatus", "I"), ("itemStatus", "R")]


def test_a_poll_starts_a_day_before_the_watermark_or_just_after_it_once_counted():
    assert ChangeFeed(None).start() is None
    assert ChangeFeed(None).query() == STATUSES  # every return: the first poll
    feed = ChangeFeed(MARK)
    assert feed.start() == MARK - CHANGES_OVERLAP == MARK - dt.timedelta(days=1)
    assert feed.start(counted=True) == MARK + dt.timedelta(milliseconds=1)
    assert feed.query() == [*STATUSES, ("returnDateStart", "2026-11-19T15:30:00.250")]
    assert feed.query(counted=True) == [*STATUSES,
                                        ("returnDateStart", "2026-11-20T15:30:00.251")]
    assert feed.overlap_query() == [*STATUSES, ("returnDateStart", "2026-11-19T15:30:00.250"),
                                    ("returnDateEnd", "2026-11-20T15:30:00.250")]


def test_the_watermark_moves_on_to_the_latest_return_date_only():
    feed = ChangeFeed(MARK)
    assert feed.advance(pd.Series([pd.NaT, pd.NaT], dtype="datetime64[ms, UTC]")) is None
    assert feed.advance(pd.Series(pd.to_datetime(["2026-11-20 15:30:00.250",
                                                  "2026-11-01 00:00:00.000"], utc=True))) is None
    assert feed.mark == MARK
    later = dt.datetime(2026, 11, 21, 8, tzinfo=dt.UTC)  # zone-less: UTC
    assert feed.advance(pd.Series(pd.to_datetime(["2026-11-21 08:00", None,
                                                  "2026-11-02 00:00"]))) == later
    assert feed.mark == later
    first = ChangeFeed(None)
    assert first.advance(pd.Series(pd.to_datetime(["2026-11-03"], utc=True))) == first.mark \
        == dt.datetime(2026, 11, 3, tzinfo=dt.UTC)


def test_changes_and_the_sync_read_the_poll_to_the_same_watermark(private, tmp_path):
    """Two watermarks, one reading: after a poll and a sync of the same service, the
    client's watermark and the store's are the same moment, and every return the poll
    reports is recorded by the sync."""
    client = private.connect(journal=None)
    company = client.context.company_code

    def both() -> tuple[pd.DataFrame, str]:
        reported = client.ach.changes(progress=False)
        client.sync(path=tmp_path, kinds="ach", progress=False)
        state = client.history.info()["kinds"]["ach"][company]
        assert state["watermark"] == client.context.watermark("ach").isoformat()
        return reported, state["watermark"]

    reported, first = both()
    assert len(reported) > 0
    waiting = client.ach.list(status="W", progress=False)["achItemId"].tolist()
    private.simulate.advance_clock(days=2)
    for item in waiting[-3:]:
        private.simulate.force_status(item, "R", code="R01")
    reported, second = both()
    assert second > first
    assert sorted(reported["achItemId"]) == sorted(waiting[-3:])
    events = client.history.events("ach")
    recorded = events[events["itemStatus"] == "R"]["itemId"].tolist()
    assert {str(i) for i in waiting[-3:]} <= set(recorded)
