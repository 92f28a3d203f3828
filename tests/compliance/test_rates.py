"""return_rates: hand-computed figures at the edges of both windows and of the levels."""

from __future__ import annotations

import datetime as dt
import logging
import math

import pandas as pd
import pytest

from paynb import compliance
from paynb.errors import UnknownCodeWarning

from .conftest import debit, filler, frame, row

AS_OF = "2026-11-23"  # 60D window: 2026-09-25 .. 2026-11-23


def worked_example() -> pd.DataFrame:
    """The worked example of docs/compliance.md (same numbers)."""
    records = filler(366, "2026-10-01")
    records += [debit("2026-10-01", "R", returned="2026-10-05", reason="R10") for _ in range(3)]
    records += [debit("2026-10-01", "R", returned="2026-11-23", reason="R05")]
    records += [debit("2026-10-01", "R", returned="2026-10-05", reason="R02")
                for _ in range(10)]
    records += [debit("2026-10-01", "R", returned="2026-10-05", reason="R01")
                for _ in range(20)]
    # None of these is a debit entry or a debit return:
    records += [debit(None, "W") for _ in range(5)]                       # not sent
    records += [debit(None, "V") for _ in range(3)]                       # voided
    records += [debit(None, "I", returned="2026-10-02", received="2026-10-01")
                for _ in range(2)]                                        # invalid
    records += [debit(None, "B", returned="2026-10-02", received="2026-10-01")
                for _ in range(2)]                                        # blocked
    records += [debit("2026-10-01", "R", returned="2026-10-05", reason="R01", kind="Credit")
                for _ in range(10)]                                       # credits
    records += [debit("2026-10-01", "S", amount=0) for _ in range(3)]     # prenotes
    records += [debit("2026-10-01", "R", amount=0, returned="2026-10-05", reason="R03")]
    return frame(records)


def test_worked_example_of_the_docs():
    rates = compliance.return_rates(worked_example(), as_of=AS_OF)
    assert list(rates["category"]) == ["unauthorized", "administrative", "overall"]
    assert list(rates["entries"]) == [400, 400, 400]
    assert list(rates["returns"]) == [4, 10, 34]
    assert list(rates["rate"]) == [0.01, 0.025, 0.085]
    assert list(rates["threshold"]) == [0.005, 0.03, 0.15]
    assert list(rates["level"]) == ["over", "warning", "ok"]
    assert rates["share_of_threshold"].round(4).tolist() == [2.0, 0.8333, 0.5667]
    assert (rates["window_start"] == pd.Timestamp("2026-09-25")).all()
    assert (rates["window_end"] == pd.Timestamp("2026-11-23")).all()


def edges() -> list[dict]:
    return [
        debit("2026-09-24"),                                                 # day before
        debit("2026-09-25"),                                                 # first day
        debit("2026-11-23T23:59:59.000Z"),                                   # last day
        debit("2026-11-24"),                                                 # day after
        debit("2026-09-20", "R", returned="2026-09-24T23:59:59Z", reason="R10"),
        debit("2026-09-20", "R", returned="2026-09-25T00:00:00Z", reason="R10"),
        debit("2026-11-20", "R", returned="2026-11-23T23:59:59Z", reason="R02"),
        debit("2026-11-20", "R", returned="2026-11-24T00:00:00Z", reason="R01"),
    ]


def test_60_day_window_edges():
    rates = compliance.return_rates(frame(edges()), as_of=AS_OF)
    # Entries sent 09-25, 11-23, 11-20, 11-20; returns on 09-25 (R10) and 11-23 (R02).
    assert list(rates["entries"]) == [4, 4, 4]
    assert list(rates["returns"]) == [1, 1, 2]
    assert list(rates["rate"]) == [0.25, 0.25, 0.5]


def test_the_day_after_moves_the_window():
    rates = compliance.return_rates(frame(edges()), as_of="2026-11-24")
    # 09-25 falls out (its entry and its R10 return), 11-24 comes in (entry and R01).
    assert list(rates["entries"]) == [4, 4, 4]
    assert list(rates["returns"]) == [0, 1, 2]


def test_naive_dates_and_date_objects_count_the_same():
    typed = frame(edges())
    naive = typed.copy()
    for column in ("sendDate", "returnDate", "receivedDateTime", "settleDate"):
        naive[column] = naive[column].dt.tz_localize(None)
    as_dates = typed.copy()
    for column in ("sendDate", "returnDate"):
        as_dates[column] = [None if pd.isna(v) else v.date() for v in typed[column]]
    expected = compliance.return_rates(typed, as_of=AS_OF)
    for other in (naive, as_dates):
        got = compliance.return_rates(other, as_of=dt.date(2026, 11, 23))
        pd.testing.assert_frame_equal(got, expected)


def test_as_of_with_a_time_zone_is_read_in_utc():
    # 2026-11-23 20:00 in New York is 2026-11-24 01:00 UTC: the window ends on the 24th.
    rates = compliance.return_rates(frame(edges()), as_of=pd.Timestamp(
        "2026-11-23 20:00", tz="America/New_York"))
    assert rates["window_end"].iloc[0] == pd.Timestamp("2026-11-24")


def two_month_items() -> pd.DataFrame:
    return frame([
        debit("2025-10-31"),
        debit("2025-11-01"),
        debit("2025-12-31"),
        debit("2026-01-01"),
        debit("2025-10-01", "R", returned="2025-10-31", reason="R29"),
        debit("2025-10-01", "R", returned="2025-11-01", reason="R29"),
        debit("2025-10-01", "R", returned="2025-12-31", reason="R03"),
        debit("2025-10-01", "R", returned="2026-01-01", reason="R03"),
    ])


@pytest.mark.parametrize("as_of", ["2026-01-01", "2026-01-15", "2026-01-31"])
def test_two_month_window_across_the_year_boundary(as_of):
    rates = compliance.return_rates(two_month_items(), as_of=as_of, window="2M")
    assert rates["window_start"].iloc[0] == pd.Timestamp("2025-11-01")
    assert rates["window_end"].iloc[0] == pd.Timestamp("2025-12-31")
    assert list(rates["entries"]) == [2, 2, 2]
    assert list(rates["returns"]) == [1, 1, 2]


def test_two_month_window_on_the_first_of_the_next_month():
    rates = compliance.return_rates(two_month_items(), as_of="2026-02-01", window="2M")
    assert rates["window_start"].iloc[0] == pd.Timestamp("2025-12-01")
    assert rates["window_end"].iloc[0] == pd.Timestamp("2026-01-31")
    assert list(rates["entries"]) == [2, 2, 2]  # 12-31 and 01-01
    assert list(rates["returns"]) == [0, 2, 2]  # the two R03


def test_empty_window_gives_no_entries_not_an_error():
    rates = compliance.return_rates(frame(edges()), as_of="2027-06-01")
    assert list(rates["entries"]) == [0, 0, 0]
    assert rates["rate"].isna().all() and rates["share_of_threshold"].isna().all()
    assert list(rates["level"]) == ["no entries"] * 3
    empty = compliance.return_rates(frame([]), as_of=AS_OF)
    assert list(empty["level"]) == ["no entries"] * 3


def levels(unauthorized: int, entries: int, **options) -> str:
    records = [debit("2026-11-02", "R", returned="2026-11-03", reason="R10")
               for _ in range(unauthorized)]
    records += filler(entries - unauthorized, "2026-11-02")
    rates = compliance.return_rates(frame(records), as_of=AS_OF, **options)
    return row(rates, "unauthorized")["level"]


def test_exactly_the_threshold_is_not_over_it():
    assert levels(1, 200) == "warning"   # 0.5 % does not exceed 0.5 %
    assert levels(1, 199) == "over"      # 0.5025 %
    assert levels(2, 500) == "warning"   # 0.4 %: exactly 80 % of the threshold
    assert levels(2, 501) == "ok"
    assert levels(2, 500, warning_share=0.9) == "ok"
    assert levels(0, 10) == "ok"


def test_split_by_company_keeps_a_company_without_entries():
    records = edges() + [debit("2026-01-05", company="DEMO2")]
    rates = compliance.return_rates(frame(records), as_of=AS_OF, by="companyCode")
    assert list(rates["companyCode"]) == ["DEMO1"] * 3 + ["DEMO2"] * 3
    assert row(rates, "overall", companyCode="DEMO1")["returns"] == 2
    assert row(rates, "overall", companyCode="DEMO2")["level"] == "no entries"


def test_split_by_two_columns():
    records = edges() + [debit("2026-11-02", company="DEMO2", entry_class="WEB")]
    rates = compliance.return_rates(frame(records), as_of=AS_OF,
                                    by=["companyCode", "achEntryClass"])
    assert rates[["companyCode", "achEntryClass"]].drop_duplicates().values.tolist() == [
        ["DEMO1", "PPD"], ["DEMO2", "WEB"]]
    assert row(rates, "overall", companyCode="DEMO2")["entries"] == 1


def test_without_a_send_date_column_entries_fall_back_and_say_so(caplog):
    items = frame(edges()).drop(columns=["sendDate"])
    with caplog.at_level(logging.WARNING, logger="paynb.compliance"):
        rates = compliance.return_rates(items, as_of=AS_OF)
    assert "no sendDate column" in caplog.text
    # receivedDateTime equals the send date in these records; the W rule changes: an
    # S or R item is still an entry.
    assert list(rates["entries"]) == [4, 4, 4]


def test_effective_date_is_the_second_choice():
    items = frame([debit(None, "S", achEffectiveDate="2026-11-02", received="2026-08-01")])
    assert compliance.return_rates(items, as_of=AS_OF)["entries"].iloc[0] == 1


def test_a_waiting_item_with_a_send_date_is_an_entry_one_without_is_not():
    items = frame([debit("2026-11-02", "W"), debit(None, "W", received="2026-11-02"),
                   debit("2026-11-02", "V"), debit("2026-11-02", "B")])
    assert compliance.return_rates(items, as_of=AS_OF)["entries"].iloc[0] == 1


@pytest.mark.parametrize(("options", "message"), [
    ({"window": "30D"}, "window must be one of '60D', '2M'"),
    ({"as_of": "not a date"}, "as_of must be a date"),
    ({"warning_share": 0}, "warning_share must be a number in (0, 1]"),
    ({"by": "nope"}, "by: items has no column 'nope'"),
])
def test_bad_arguments_are_named(options, message):
    with pytest.raises(ValueError) as caught:
        compliance.return_rates(frame(edges()), **options)
    assert message in str(caught.value)


def test_a_frame_without_the_status_column_is_refused():
    with pytest.raises(ValueError, match="no column 'itemStatus'"):
        compliance.return_rates(frame(edges()).drop(columns=["itemStatus", "itemStatusName"]))


def test_rate_is_nan_not_zero_division():
    rates = compliance.return_rates(frame([debit("2026-01-01", "R", returned="2026-11-02",
                                                 reason="R10")]), as_of=AS_OF)
    # A return in the window of an entry originated before it: returns 1, entries 0.
    assert list(rates["returns"]) == [1, 0, 1]
    assert math.isnan(rates["rate"].iloc[0]) and rates["level"].iloc[0] == "no entries"


def test_arrow_dates_and_iso_texts_count_the_same():
    import pyarrow as pa

    typed = frame(edges())
    expected = compliance.return_rates(typed, as_of=AS_OF)
    arrow = typed.copy()
    texts = typed.copy()
    for column in ("sendDate", "returnDate", "receivedDateTime"):
        days = [None if pd.isna(v) else v.date() for v in typed[column]]
        arrow[column] = pd.array(days, dtype=pd.ArrowDtype(pa.date32()))
        texts[column] = [None if d is None else d.isoformat() for d in days]
    for other in (arrow, texts):
        pd.testing.assert_frame_equal(compliance.return_rates(other, as_of=AS_OF), expected)


def test_60_day_window_across_the_year_boundary():
    # As the docs' table says: as of 2026-01-15 the 60 days run from 2025-11-17.
    items = frame([debit("2025-11-16"), debit("2025-11-17"), debit("2026-01-15"),
                   debit("2026-01-16")])
    rates = compliance.return_rates(items, as_of="2026-01-15")
    assert rates["window_start"].iloc[0] == pd.Timestamp("2025-11-17")
    assert list(rates["entries"]) == [2, 2, 2]


def test_new_codes_count_where_nacha_puts_them_and_an_unknown_one_in_overall_only():
    """R51 (RCK) is unauthorized, R31 and R61 only overall; R99, in no NACHA table, counts
    in the overall rate only (with one warning from the frame)."""
    records = filler(95, "2026-10-01")
    records += [debit("2026-10-01", "R", returned="2026-10-05", reason=code)
                for code in ("R51", "R31", "R61", "R99", "R99")]
    with pytest.warns(UnknownCodeWarning, match="R99"):
        items = frame(records)
    rates = compliance.return_rates(items, as_of=AS_OF)
    assert list(rates["returns"]) == [1, 0, 5]
    assert list(rates["entries"]) == [100, 100, 100]
    # The report's top reasons (three per category), described; by=None works too.
    report = compliance.report(items, as_of=AS_OF, by=None)
    top = report.top_reasons
    assert list(zip(top["category"], top["returnReason"], top["returns"], strict=True)) == [
        ("unauthorized", "R51", 1), ("overall", "R99", 2), ("overall", "R31", 1),
        ("overall", "R51", 1)]
    assert top["description"].tolist() == [
        "RCK: check ineligible or RCK entry improper", "not a NACHA code paynb knows",
        "CCD/CTX return the ODFI agreed to take", "RCK: check ineligible or RCK entry improper"]


def test_daily_counts_add_up_to_the_window():
    """daily_counts counts what return_rates counts, one day at a time: the worked example
    by day, and its window summed."""
    items = worked_example()
    days = compliance.daily_counts(items, start="2026-09-25", end=AS_OF)
    assert len(days) == 60 * 3
    summed = days.groupby("category", observed=True)[["returns", "entries"]].sum()
    rates = compliance.return_rates(items, as_of=AS_OF).set_index("category")
    assert summed["returns"].tolist() == rates["returns"].tolist() == [4, 10, 34]
    assert (summed["entries"] == 400).all()
    first = days[days["date"] == pd.Timestamp("2026-10-05")].set_index("category")
    assert first["returns"].tolist() == [3, 10, 33] and (first["entries"] == 0).all()
    assert days.loc[days["date"] == pd.Timestamp("2026-10-01"), "entries"].tolist() == [400] * 3
    with pytest.raises(ValueError, match="after end"):
        compliance.daily_counts(items, start=AS_OF, end="2026-11-01")
