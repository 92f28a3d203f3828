"""paynb._time: the one reading of a value as a UTC moment (issues 32.1 and 33)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

from paynb._time import is_date_only, utc_day, utc_moment
from paynb.errors import ValidationError

UTC = dt.UTC
NOON = dt.datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("value", [
    "2026-11-23T12:00:00Z", "2026-11-23T12:00:00.000Z", "2026-11-23T12:00:00z",
    "2026-11-23T12:00:00", "2026-11-23 12:00:00", "2026-11-23T07:00:00-05:00",
    " 2026-11-23T12:00:00Z ", dt.datetime(2026, 11, 23, 12), NOON,
    dt.datetime(2026, 11, 23, 13, tzinfo=dt.timezone(dt.timedelta(hours=1))),
    pd.Timestamp("2026-11-23T12:00"), pd.Timestamp("2026-11-23T07:00", tz="US/Eastern"),
    np.datetime64("2026-11-23T12:00:00"),
])
def test_every_form_reads_as_the_same_utc_instant(value) -> None:
    moment = utc_moment(value, "as_of")
    assert moment == NOON and moment.tzinfo is UTC


@pytest.mark.parametrize("value", ["2026-11-23", dt.date(2026, 11, 23)])
def test_a_date_is_its_midnight_utc_and_a_whole_day(value) -> None:
    assert utc_moment(value, "as_of") == dt.datetime(2026, 11, 23, tzinfo=UTC)
    assert is_date_only(value)


def test_instants_are_not_whole_days_and_the_utc_day_is_the_days_in_utc() -> None:
    assert not is_date_only("2026-11-23T00:00:00Z")
    assert not is_date_only(pd.Timestamp("2026-11-23"))  # a Timestamp is an instant
    assert not is_date_only(dt.datetime(2026, 11, 23))
    assert utc_day("2026-11-23T23:30:00-05:00", "as_of") == dt.date(2026, 11, 24)


@pytest.mark.parametrize("value", ["next friday", "", None, 20261123, 1.5, pd.NaT,
                                   np.datetime64("NaT"), "0001-01-01T00:00:00+01:00", [1]])
def test_anything_else_is_one_error_naming_the_argument(value) -> None:
    with pytest.raises(ValidationError) as caught:
        utc_moment(value, "returned_from")
    error = caught.value
    assert isinstance(error, ValueError) and list(error.errors) == ["returned_from"]
    assert str(error).startswith("returned_from must be a date, a datetime or ISO 8601 text "
                                 "(2026-11-23, 2026-11-23T15:30:00Z; without a zone: UTC); "
                                 "got ")
