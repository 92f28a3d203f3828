"""How paynb.match reads the analyst's ledger: amounts as everywhere in paynb, dates by
explicit formats (never a guess, never a pandas warning), references trimmed and in any case."""

from __future__ import annotations

import datetime as dt
import warnings
from decimal import Decimal

import pandas as pd
import pytest

import paynb
from paynb.matching._dates import days_of
from tests.matching.conftest import ach_items

COLUMNS = {"account": "acct", "routing": "routing", "amount": "amount", "date": "date"}


def _ledger(**row) -> pd.DataFrame:
    base = {"acct": "123456789", "routing": "021000021", "amount": "10.00",
            "date": "2026-11-19"}
    return pd.DataFrame([{**base, **row}], dtype=str)


def _match(expected: pd.DataFrame, items: pd.DataFrame, **options):
    # Any warning from paynb's reading (pandas' "Parsing dates in %d.%m.%Y format" among
    # them) fails the test.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        return paynb.match(expected, items, columns=options.pop("columns", COLUMNS),
                           progress=False, **options)


# ------------------------------------------------------------------ amounts

@pytest.mark.parametrize("amount", ["1,234.56", "$1,234.56", " 1,234.56 ", "1234.56"])
def test_ledger_amounts_with_thousands_separators_are_read_as_submit_reads_them(amount):
    items = ach_items([{"amount": "1234.56", "sendDate": "2026-11-19"}])
    result = _match(_ledger(amount=amount), items)
    assert result.matched["expected_amount"].tolist() == [Decimal("1234.56")]
    assert result.matched["rule"].tolist() == ["account+amount+date"]


def test_submit_and_match_read_the_same_amount_text():
    from paynb.validation import to_decimal

    assert to_decimal("1,234.56") == Decimal("1234.56")  # what submit's models accept
    items = ach_items([{"amount": "1234.56", "sendDate": "2026-11-19"}])
    assert len(_match(_ledger(amount="1,234.56"), items).matched) == 1


@pytest.mark.parametrize("amount", ["12,30", "1,23,456.00", "ten"])
def test_an_amount_that_is_no_number_is_refused_naming_its_row(amount):
    expected = pd.concat([_ledger(), _ledger(amount=amount)], ignore_index=True)
    with pytest.raises(ValueError, match=r"expected row 1, column 'amount': amount .* is not "
                                         r"an amount"):
        _match(expected, ach_items([{}]))


def test_the_amount_tolerance_reads_thousands_separators_too():
    items = ach_items([{"amount": "2000.00", "sendDate": "2026-11-19"}])
    result = _match(_ledger(amount="1,000.00"), items, amount_tolerance="1,000.00")
    assert result.matched["rule"].tolist() == ["amount within tolerance"]
    with pytest.raises(ValueError, match="amount_tolerance"):
        _match(_ledger(), items, amount_tolerance="12,30")


# ------------------------------------------------------------------ dates

@pytest.mark.parametrize("text", [
    "19.11.2026", "19/11/2026", "11/19/2026", "19-11-2026", "19.11.26", "11/19/2026 0:00",
    "2026-11-19", "2026-11-19T10:30:00Z", "2026-11-19 10:30", "2026/11/19", "20261119",
    "19 Nov 2026", "19-NOV-2026", "Nov 19, 2026", "November 19 2026"])
def test_dates_in_the_accepted_formats_match_without_a_warning(text):
    items = ach_items([{"sendDate": "2026-11-19"}])
    result = _match(_ledger(date=text), items)
    assert result.matched["expected_date"].tolist() == [pd.Timestamp("2026-11-19")]
    assert result.matched["date_difference"].tolist() == [0]


def test_a_zoned_time_counts_by_its_utc_day():
    days = days_of(pd.Series(["2026-11-19T23:30:00-05:00"], dtype=str), "expected", "date")
    assert days.tolist() == [dt.date(2026, 11, 20)]


def test_a_column_is_read_in_the_order_its_values_allow():
    day_first = pd.Series(["19.11.2026", "03.04.2026"], dtype=str)
    month_first = pd.Series(["11/19/2026", "03/04/2026"], dtype=str)
    assert days_of(day_first, "expected", "date").tolist() == [
        dt.date(2026, 11, 19), dt.date(2026, 4, 3)]
    assert days_of(month_first, "expected", "date").tolist() == [
        dt.date(2026, 11, 19), dt.date(2026, 3, 4)]


def test_an_ambiguous_column_asks_for_dayfirst_and_never_guesses():
    items = ach_items([{"sendDate": "2026-04-03"}])
    ambiguous = _ledger(date="03/04/2026")
    with pytest.raises(ValueError, match=r"row 0, column 'date': '03/04/2026' could be day "
                                         r"first or month first.*dayfirst=True"):
        _match(ambiguous, items)
    assert len(_match(ambiguous, items, dayfirst=True).matched) == 1  # 3 April
    assert _match(ambiguous, items, dayfirst=False).matched.empty  # 4 March
    # The same day either way is no ambiguity.
    assert days_of(pd.Series(["05/05/2026"], dtype=str), "e", "d").tolist() == [
        dt.date(2026, 5, 5)]


def test_dayfirst_is_obeyed_and_checked():
    with pytest.raises(ValueError, match=r"'19/11/2026' is not a date read month first"):
        days_of(pd.Series(["19/11/2026"], dtype=str), "expected", "date", dayfirst=False)
    with pytest.raises(ValueError, match=r"row 1.*'11/19/2026' is month first while "
                                         r"'19/11/2026' is day first"):
        days_of(pd.Series(["19/11/2026", "11/19/2026"], dtype=str), "expected", "date")
    with pytest.raises(TypeError, match="dayfirst must be True"):
        _match(_ledger(), ach_items([{}]), dayfirst="yes")


@pytest.mark.parametrize("text", ["tomorrow", "2026-02-30", "31/02/2026", "19.11"])
def test_a_text_that_is_no_date_is_refused_naming_the_formats(text):
    expected = pd.concat([_ledger(), _ledger(date=text)], ignore_index=True)
    with pytest.raises(ValueError, match=r"expected row 1, column 'date': .* is not a date.*"
                                         r"19\.11\.2026 or 11/19/2026"):
        _match(expected, ach_items([{}]))


def test_date_objects_and_date_columns_are_read_as_they_are():
    items = ach_items([{"sendDate": "2026-11-19"}])
    for column in (pd.Series([dt.date(2026, 11, 19)], dtype=object),
                   pd.Series([dt.datetime(2026, 11, 19, 18, 0)], dtype=object),
                   pd.to_datetime(pd.Series(["2026-11-19"])),
                   pd.Series(["2026-11-19"], dtype="date32[pyarrow]"),
                   pd.to_datetime(pd.Series(["2026-11-19T12:00Z"])).astype(
                       "timestamp[ms, tz=UTC][pyarrow]")):
        expected = _ledger().assign(date=column)
        assert len(_match(expected, items).matched) == 1, column.dtype


# ------------------------------------------------------------------ references

def test_references_compare_trimmed_and_ignoring_case():
    items = ach_items([{"yourReferenceNumber": "INV-42", "amount": "99.00"}])
    expected = _ledger(ref=" inv-42 ")
    columns = {**COLUMNS, "reference": "ref"}
    result = _match(expected, items, columns=columns)
    assert result.matched["rule"].tolist() == ["reference"]
    # The frames show the references as written.
    assert result.matched["expected_reference"].tolist() == [" inv-42 "]
    assert result.matched["item_reference"].tolist() == ["INV-42"]
    exact = _match(expected, items, columns=columns, exact_references=True)
    assert exact.matched.empty
    assert _match(_ledger(ref="INV-42"), items, columns=columns,
                  exact_references=True).matched["rule"].tolist() == ["reference"]
    with pytest.raises(TypeError, match="exact_references must be True or False"):
        _match(expected, items, columns=columns, exact_references="no")


def test_a_blank_reference_is_no_reference_either_way():
    items = ach_items([{"yourReferenceNumber": " ", "amount": "99.00"}])
    for exact in (False, True):
        result = _match(_ledger(ref=" "), items, columns={**COLUMNS, "reference": "ref"},
                        exact_references=exact)
        assert result.matched.empty
