"""A returned prenote is a returned prenote (issue 43.4): never an entry, never counted in
a return rate (NACHA Operating Rules, Article Two, Subsection 2.6: prenotifications are
non-monetary; Subsection 2.17.2 counts debit Entries), whatever its return code, and
``counted_returns`` says so by the one rule the rates count by."""

from __future__ import annotations

from paynb import compliance

from .conftest import debit, filler, frame

AS_OF = "2026-11-23"


def _returns() -> list[dict]:
    return [
        debit("2026-11-02", "R", returned="2026-11-20", reason="R10"),            # counted
        debit("2026-11-02", "R", returned="2026-11-20", reason="R10", amount=0,   # prenote
              achTransactionSubType="Prenote", achTransactionCode=28),
        debit("2026-11-02", "R", returned="2026-11-20", reason="R10", amount=0),  # prenote
        debit("2026-11-02", "R", returned="2026-11-20", reason="R03",             # prenote
              achTransactionSubType="Prenote"),
        debit("2026-11-02", "R", returned="2026-11-20", reason="R10",             # credit
              kind="Credit"),
        debit("2026-11-02", "R", returned="2026-11-20", reason="R02"),            # counted
    ]


def test_counted_returns_tells_a_returned_prenote_from_a_returned_debit_entry():
    items = frame(_returns())
    counted = compliance.counted_returns(items)
    assert counted.index.equals(items.index)
    assert counted.columns.tolist() == ["prenote", "counted", "unauthorized", "administrative"]
    assert counted["prenote"].tolist() == [False, True, True, True, False, False]
    assert counted["counted"].tolist() == [True, False, False, False, False, True]
    assert counted["unauthorized"].tolist() == [True, False, False, False, False, False]
    assert counted["administrative"].tolist() == [False] * 5 + [True]


def test_the_rates_count_what_counted_returns_says_and_no_prenote():
    items = frame(filler(100, "2026-11-02") + _returns())
    rates = compliance.return_rates(items, as_of=AS_OF).set_index("category")
    counted = compliance.counted_returns(items)
    assert int(rates.loc["unauthorized", "returns"]) == int(counted["unauthorized"].sum()) == 1
    assert int(rates.loc["administrative", "returns"]) == 1
    assert int(rates.loc["overall", "returns"]) == int(counted["counted"].sum()) == 2
    assert int(rates.loc["overall", "entries"]) == 102  # the two returned debit entries too
