"""The moments the date-sensitive tests run at, the wall clock moved (time-machine).

A rule that counts banking days or months can hold on the day a test was written and
fail on most others; each moment here is a day that has broken such code somewhere:
a Monday (the weekend just behind), the same Monday in the evening (the day's
cut-off passed: no seeded item waits any more), a Friday before a Monday holiday, a Saturday,
Thanksgiving, Christmas Eve late in the evening (23:50 UTC: already the next day in
some places, a holiday the next morning), and a month far from the one the suite was
written in.
"""

from __future__ import annotations

import datetime as dt

import pytest

UTC = dt.UTC

MOMENTS = {
    "monday": dt.datetime(2026, 12, 7, 10, 0, tzinfo=UTC),
    "monday-evening": dt.datetime(2026, 12, 7, 21, 30, tzinfo=UTC),
    "friday-before-mlk": dt.datetime(2027, 1, 15, 16, 0, tzinfo=UTC),
    "saturday": dt.datetime(2026, 12, 5, 12, 0, tzinfo=UTC),
    "thanksgiving": dt.datetime(2026, 11, 26, 15, 0, tzinfo=UTC),
    "christmas-eve-2350": dt.datetime(2026, 12, 24, 23, 50, tzinfo=UTC),
    "july-2027": dt.datetime(2027, 7, 2, 12, 0, tzinfo=UTC),
}



def moment(name: str) -> dt.datetime:
    """The moment called ``name`` above, or ``name`` read as an ISO 8601 time (UTC when it
    has no zone): what ``--moment`` and ``PAYNB_TEST_MOMENT`` take (tests/conftest.py)."""
    if name in MOMENTS:
        return MOMENTS[name]
    try:
        when = dt.datetime.fromisoformat(name)
    except ValueError:
        raise pytest.UsageError(f"--moment {name!r} is neither a moment of tests/_moments.py "
                                f"({', '.join(MOMENTS)}) nor an ISO 8601 time") from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


#: ``@at_every_moment`` on a test taking ``moment``: one run per moment above.
at_every_moment = pytest.mark.parametrize("moment", list(MOMENTS.values()), ids=list(MOMENTS))
