"""The service's change feed: the returns poll of one kind, read from a watermark.

The service documents one way to learn of changes (spec 4.5): listing the items of
status B, I and R by return date. ``ItemResource.changes()`` (from the watermark the
client keeps) and the history's sync (from the store's own, committed with its rows)
both read it through :class:`ChangeFeed`: where a poll begins, what it asks, and where
the watermark goes after what it brought.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from paynb.resources._listing import wire_time

__all__ = ["CHANGES_OVERLAP", "CHANGE_STATUSES", "ChangeFeed"]

#: How far back each poll looks again before its watermark, so that an event recorded
#: late (its return date earlier than the last poll) is still caught. Events already
#: reported are recognised and not reported twice.
CHANGES_OVERLAP = dt.timedelta(days=1)
#: The statuses of the poll: blocked, invalid, returned (each sets a return date).
CHANGE_STATUSES = ("B", "I", "R")
_POLLED = tuple(("itemStatus", code) for code in CHANGE_STATUSES)


class ChangeFeed:
    """The returns poll read from ``mark``, the newest return date seen so far (an aware
    UTC datetime; None before the first poll)."""

    def __init__(self, mark: dt.datetime | None) -> None:
        self.mark = mark

    def start(self, *, counted: bool = False) -> dt.datetime | None:
        """Where the next poll begins: :data:`CHANGES_OVERLAP` before the watermark, or
        just after it when the caller has counted the overlap instead (``counted``; the
        service's filter is inclusive, to the millisecond); None (every return) before
        the first poll."""
        if self.mark is None:
            return None
        return self.mark + (dt.timedelta(milliseconds=1) if counted else -CHANGES_OVERLAP)

    def query(self, *, counted: bool = False) -> list[tuple[str, Any]]:
        """The list query of the next poll (from :meth:`start`)."""
        start = self.start(counted=counted)
        return [*_POLLED, *([] if start is None else
                            [("returnDateStart", wire_time(start, "watermark"))])]

    def overlap_query(self) -> list[tuple[str, Any]]:
        """The list query of the returns in the overlap, the day before the watermark
        (which a caller counts rather than reads again when it holds as many)."""
        assert self.mark is not None  # (only a watermark has an overlap)
        return [*_POLLED, ("returnDateStart", wire_time(self.start(), "watermark")),
                ("returnDateEnd", wire_time(self.mark, "watermark"))]

    def advance(self, return_dates: Any) -> dt.datetime | None:
        """Move the watermark on to the latest of ``return_dates`` (a pandas column of
        UTC times; missing ones are skipped) when it is later: the new watermark, or None
        when it stays."""
        dates = return_dates.dropna()
        if not len(dates):
            return None
        latest: dt.datetime = dates.max().to_pydatetime()
        # A zone-less time is UTC (paynb's rule), and the watermark is aware.
        latest = latest.replace(tzinfo=dt.UTC) if latest.tzinfo is None else latest
        if self.mark is not None and latest <= self.mark:
            return None
        self.mark = latest
        return latest
