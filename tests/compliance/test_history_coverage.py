"""Figures measured on a local history say when they reach days the store cannot hold:
before its ``since``, or after its last sync (paynb._attrs.HISTORY)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import paynb
from paynb import compliance
from paynb._attrs import HISTORY

from .conftest import filler, frame

# The store keeps items received from 2026-09-01 on and was synced on 2026-11-20.
HELD = {"path": "/tmp/store", "kind": "ach", "since": "2026-09-01T00:00:00+00:00",
        "syncedAt": "2026-11-20T10:00:00+00:00"}


def from_history(held: dict = HELD) -> pd.DataFrame:
    items = frame(filler(50, "2026-10-01"))
    items.attrs[HISTORY] = dict(held)
    return items


def quiet(call):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return call()


@pytest.mark.parametrize("as_of", ["2026-10-30", "2026-11-20"])
def test_a_window_the_store_holds_is_quiet(as_of):
    # 60 days ending 2026-10-30 start 2026-09-01, the store's first day; 2026-11-20 is the
    # day it was synced.
    rates = quiet(lambda: compliance.return_rates(from_history(), as_of=as_of))
    assert rates["entries"].tolist() == [50, 50, 50]


def test_a_window_starting_the_day_before_the_store_says_so():
    with pytest.warns(paynb.PaynbWarning, match=r"the return rates' window \(2026-08-31 to "
                      r"2026-10-29\) is measured on the local history at /tmp/store \(ach\): it "
                      r"keeps the items received from 2026-09-01 on") as caught:
        compliance.return_rates(from_history(), as_of="2026-10-29")
    assert caught[0].filename == __file__
    assert "last synced" not in str(caught[0].message)


def test_a_day_after_the_last_sync_says_so():
    with pytest.warns(paynb.PaynbWarning, match=r"\(2026-09-23 to 2026-11-21\) .*last synced "
                      r"on 2026-11-20, so the returns and entries since then are not counted"):
        compliance.return_rates(from_history(), as_of="2026-11-21")
    # A store that keeps every item says only that.
    with pytest.warns(paynb.PaynbWarning) as caught:
        compliance.return_exposure(from_history({**HELD, "since": None}), as_of="2026-11-23")
    assert len(caught) == 1 and "received from" not in str(caught[0].message)
    assert "the return exposure (2026-09-24 to 2026-11-23)" in str(caught[0].message)


def test_the_mark_follows_filters_and_goes_with_a_fresh_poll():
    items = from_history()
    with pytest.warns(paynb.PaynbWarning, match="rolling return rates' windows"):
        compliance.rolling_return_rates(items[items["amount"].notna()], start="2026-11-01",
                                        end="2026-11-23")
    # Joined with a poll's frame (no mark): current, so nothing to say.
    joined = pd.concat([items, frame(filler(1, "2026-11-22"))], ignore_index=True)
    quiet(lambda: compliance.return_rates(joined, as_of="2026-11-23"))
    # check() measures the history alone for the previous level: as it was, on purpose.
    quiet(lambda: compliance.check(frame(filler(1, "2026-11-22")), history=items,
                                   as_of="2026-11-23"))


def test_a_report_says_it_once():
    with pytest.warns(paynb.PaynbWarning) as caught:
        compliance.report(from_history(), as_of="2026-11-23")
    said = [str(w.message) for w in caught if issubclass(w.category, paynb.PaynbWarning)]
    assert len(said) == 1, said
    # Its oldest day: the exposure's, 60 days back (the rates' window starts a day later).
    assert said[0].startswith("the compliance report (2026-09-24 to 2026-11-23)")
    assert "last synced on 2026-11-20" in said[0] and "received from" not in said[0]
    with pytest.warns(paynb.PaynbWarning) as caught:
        compliance.report(from_history(), as_of="2026-10-15")
    said = [str(w.message) for w in caught if issubclass(w.category, paynb.PaynbWarning)]
    assert len(said) == 1 and "(2026-08-16 to 2026-10-15)" in said[0]
    assert "received from 2026-09-01" in said[0] and "last synced" not in said[0]
