"""The result: decisions kept in the journal across runs, summary, plot, Excel export."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import matplotlib.pyplot as plt
import openpyxl
import pandas as pd
import pytest

import paynb
from paynb.journal import Journal
from tests.matching.conftest import ach_items

COLUMNS = {"reference": "ref", "account": "acct", "amount": "amount", "date": "date"}


def _inputs():
    items = ach_items([{"amount": "10.00"}, {"amount": "20.00", "itemStatus": "R",
                                             "returnReason": "R01"},
                       {"amount": "33.00", "bankAccountNumber": "4444"}], mask=False)
    expected = pd.DataFrame({"ref": [None, "REF-2", None],
                             "acct": ["123456789", "123456789", "5555"],
                             "amount": ["10.00", "20.00", "33.10"],
                             "date": ["2026-07-06"] * 3})
    return expected, items


def test_manual_pairs_and_resolutions_are_kept_for_the_next_run(tmp_path: Path):
    expected, items = _inputs()
    journal = Journal(tmp_path / "journal.sqlite3")
    result = paynb.match(expected, items, columns=COLUMNS, journal=journal, ledger="billing")
    assert result.unmatched_expected.index.tolist() == [2]
    assert result.exceptions["reason"].tolist() == ["returned"]
    result.pair(2, 3, note="paid from the new account")
    # The manual pair brought its own exception (amount differs): ids follow the matches.
    returned = result.exceptions.set_index("reason").loc["returned", "exception_id"]
    result.resolve(int(returned), "customer paid again by wire")
    assert result.matched.set_index("expected_row").loc[2, "rule"] == "manual"
    # The next day: a new process, the same ledger read again.
    tomorrow = paynb.match(expected.copy(), items.copy(), columns=COLUMNS,
                           journal=Journal(tmp_path / "journal.sqlite3"), ledger="billing")
    manual = tomorrow.matched[tomorrow.matched["manual"]]
    assert manual[["expected_row", "item_id"]].values.tolist() == [[2, 3]]
    assert manual["amount_difference"].tolist() == [Decimal("-0.10")]
    reasons = tomorrow.exceptions.set_index("reason")
    assert bool(reasons.loc["returned", "resolved"])
    assert reasons.loc["returned", "note"] == "customer paid again by wire"
    assert not bool(reasons.loc["amount differs", "resolved"])  # the manual pair's own
    assert tomorrow.summary.loc["matched by hand", "expected_lines"] == 1
    assert tomorrow.summary.loc["exceptions resolved", "items"] == 1
    assert tomorrow.decisions["action"].tolist() == ["pair", "resolve"]
    # Another ledger in the same journal starts clean.
    other = paynb.match(expected, items, columns=COLUMNS, journal=journal, ledger="payroll")
    assert not other.matched["manual"].any()


def test_a_pair_of_rows_already_matched_is_refused():
    expected, items = _inputs()
    result = paynb.match(expected, items, columns=COLUMNS)
    with pytest.raises(ValueError, match="already matched: expected row 0"):
        result.pair(0, 3)
    with pytest.raises(KeyError, match="'99'"):
        result.pair(2, 99)
    with pytest.raises(ValueError, match="note"):
        result.resolve(0, " ")


def test_a_decision_whose_rows_are_gone_is_reported_stale(tmp_path: Path):
    expected, items = _inputs()
    journal = Journal(tmp_path / "j.sqlite3")
    paynb.match(expected, items, columns=COLUMNS, journal=journal).pair(2, 3)
    later = paynb.match(expected.iloc[:2], items, columns=COLUMNS, journal=journal)
    assert len(later.stale_decisions) == 1 and not later.matched["manual"].any()


def test_summary_html_and_plot():
    expected, items = _inputs()
    result = paynb.match(expected, items, columns=COLUMNS)
    assert result.summary.loc["matched", "expected_amount"] == Decimal("30.00")
    assert result.summary.loc["unmatched expected", "expected_amount"] == Decimal("33.10")
    html = result._repr_html_()
    assert "paynb-match-summary" in html and "33.10" in html and "full account number" in html
    ax = result.plot()
    try:
        assert ax.get_title() == "2 of 3 ledger lines matched (66.6%), 1 unmatched"
        assert ax.get_xlabel() == "Amount (USD)"
        assert [t.get_text() for t in ax.get_yticklabels()] == [
            "Unmatched", "Tied (for you to decide)", "Matched, open exception",
            "Matched, nothing open"]
        # A bar per outcome and side, ledger first: what needs a look on top.
        assert [round(p.get_width(), 2) for p in ax.patches] == [
            33.1, 33.0, 0.0, 0.0, 20.0, 20.0, 10.0, 10.0]
        texts = [t.get_text() for t in ax.texts]
        assert texts[:2] == ["1 ledger line · 33.10", "1 service item · 33.00"]
        assert texts[4] == "1 ledger line · 20.00"  # the returned item: an open exception
    finally:
        plt.close(ax.figure)


def test_the_plot_keeps_unmatched_lines_readable_beside_a_large_matched_amount():
    """Issue 32: on the demo data the unmatched ledger lines, what matters most, were
    invisible slivers under the matched amounts; exceptions were not shown."""
    items = ach_items([{"amount": "250000.00", "yourReferenceNumber": f"REF-{k}"}
                       for k in range(40)] + [{"amount": "12.00", "bankAccountNumber": "4444"}],
                      mask=False)
    expected = pd.DataFrame({"ref": [f"REF-{k}" for k in range(40)] + [None],
                             "acct": ["123456789"] * 40 + ["5555"],
                             "amount": ["250000.00"] * 40 + ["85.00"],
                             "date": ["2026-07-06"] * 41})
    ax = paynb.match(expected, items, columns=COLUMNS).plot()
    try:
        left, right = ax.get_xlim()
        unmatched_ledger = ax.patches[0]
        assert unmatched_ledger.get_width() == 85.0
        assert unmatched_ledger.get_width() / (right - left) > 0.5  # not a sliver
        assert ax.get_xlabel() == "Amount (USD), matched bars cut"
        texts = [t.get_text() for t in ax.texts]
        assert "40 ledger lines · 10,000,000.00" in texts  # the cut bar's true figures
        assert "1 service item · 12.00" in texts
    finally:
        plt.close(ax.figure)


def test_outcomes_split_both_sides_without_sign_and_plots_draws_them_on_the_axes_given():
    """Issue 45: the chart's numbers are a frame of the result, and the chart is
    paynb.plots.match_outcomes (Axes in, Axes out), which result.plot() draws."""
    expected, items = _inputs()
    expected.loc[2, "amount"] = "-33.10"  # a credit: 33.10 to look at, -33.10 in the summary
    result = paynb.match(expected, items, columns=COLUMNS)
    outcomes = result.outcomes
    assert outcomes.index.tolist() == ["unmatched", "tied", "exceptions open", "matched"]
    assert outcomes["expected_lines"].tolist() == [1, 0, 1, 1]
    assert outcomes["items"].tolist() == [1, 0, 1, 1]  # each row in one outcome only
    assert outcomes["expected_amount"].tolist() == [Decimal("33.10"), 0, Decimal("20.00"),
                                                    Decimal("10.00")]
    assert result.summary.loc["unmatched expected", "expected_amount"] == Decimal("-33.10")
    figure, ax = plt.subplots()
    try:
        assert paynb.plots.match_outcomes(outcomes, ax=ax) is ax
        assert [round(p.get_width(), 2) for p in ax.patches] == [
            33.1, 33.0, 0.0, 0.0, 20.0, 20.0, 10.0, 10.0]
        assert ax.get_title() == "2 of 3 ledger lines matched (66.6%), 1 unmatched"
    finally:
        plt.close(figure)


def test_a_result_frames_are_read_only_and_a_decision_makes_new_ones():
    """Issue 45: a result is a frozen run plus the decisions that make the next one; a
    frame read before a decision stays as it was."""
    expected, items = _inputs()
    result = paynb.match(expected, items, columns=COLUMNS)
    before = result.exceptions
    with pytest.raises(AttributeError):
        result.exceptions = before.iloc[:0]
    result.resolve(int(before["exception_id"].iloc[0]), "paid again by wire")
    assert result.exceptions["resolved"].tolist() == [True]
    assert before["resolved"].tolist() == [False]


def test_to_excel_numbers_with_two_decimals_and_masked_accounts(tmp_path: Path):
    expected, items = _inputs()
    result = paynb.match(expected, items, columns=COLUMNS)
    path = tmp_path / "match.xlsx"
    result.to_excel(path)
    book = openpyxl.load_workbook(path)
    assert book.sheetnames == ["summary", "matched", "exceptions", "unmatched expected",
                               "unmatched items", "ties"]
    matched = book["matched"]
    header = [c.value for c in matched[1]]
    amount = matched.cell(row=2, column=header.index("expected_amount") + 1)
    assert amount.value == 20.0 and amount.number_format == "#,##0.00"  # reference first
    accounts = [row[header.index("bankAccountNumber")] for row in
                matched.iter_rows(min_row=2, values_only=True)]
    assert accounts == ["****6789", "****6789"]
    sheet = book["unmatched expected"]
    header = [c.value for c in sheet[1]]
    # paynb's one masking rule (paynb._redact.last_four): an account of four characters
    # or fewer is shown by none of them.
    assert [r[header.index("acct")] for r in sheet.iter_rows(min_row=2, values_only=True)] == \
        ["****"]
    items_sheet = book["unmatched items"]
    assert "123456789" not in str(list(items_sheet.values))


def test_exceptions_name_the_ledger_line_and_the_item_as_the_analyst_knows_them():
    items = ach_items([{"amount": "20.00", "itemStatus": "R", "returnReason": "R01",
                        "yourReferenceNumber": "INV-7", "firstSignerFirstName": "Ana",
                        "firstSignerLastName": "Lima"},
                       {"amount": "6.00", "itemStatus": "R", "returnReason": "R01",
                        "bankAccountNumber": "4444", "yourReferenceNumber": None},
                       {"amount": "4.00", "bankAccountNumber": "4444",
                        "yourReferenceNumber": None}], mask=False)
    expected = pd.DataFrame({"ref": ["inv-7", None], "acct": ["123456789", "4444"],
                             "amount": ["20.00", "10.00"], "date": ["2026-07-06"] * 2,
                             "invoice": ["A-100", "A-200"], "payee": ["Ana Lima", "Bo Berg"]})
    result = paynb.match(expected, items, columns={**COLUMNS, "id": "invoice",
                                                   "name": "payee"})
    shown = result.exceptions.set_index("rule")
    one = shown.loc["reference"]
    assert (one["expected_ids"], one["expected_references"], one["item_references"],
            one["expected_names"], one["item_names"], one["item_ids"]) == (
        "A-100", "inv-7", "INV-7", "Ana Lima", "Ana Lima", "1")
    split = shown.loc["split"]  # one ledger line paid as two items, one of them returned
    assert (split["expected_rows"], split["expected_ids"], split["item_ids"],
            split["item_names"]) == ("1", "A-200", "2, 3", "John Smith, John Smith")
    assert pd.isna(split["item_references"])
    # Without an id or name mapped, the columns are there and empty.
    bare = paynb.match(expected, items, columns=COLUMNS).exceptions
    assert bare["expected_ids"].isna().all() and bare["expected_names"].isna().all()
    assert bare["item_names"].notna().all()


@pytest.mark.parametrize("amounts", [
    [Decimal("10.00"), Decimal("20.00"), Decimal("1033.10")],
    ["10.00", "20.00", "1,033.10"],  # text, as read_csv(dtype=str) gives it
], ids=["decimals", "text"])
def test_to_excel_writes_every_amount_as_a_number(tmp_path: Path, amounts):
    expected, items = _inputs()
    expected["amount"] = pd.Series(amounts, dtype=object)
    expected["fee"] = [Decimal("0.25"), None, Decimal("1.50")]
    result = paynb.match(expected, items, columns=COLUMNS)
    path = tmp_path / "match.xlsx"
    result.to_excel(path)
    book = openpyxl.load_workbook(path)
    for sheet in book.worksheets:
        header = [c.value for c in sheet[1]]
        for name in header:
            if "amount" not in str(name) and name != "fee":
                continue
            cells = [row[header.index(name)] for row in sheet.iter_rows(min_row=2)]
            assert all(isinstance(c.value, int | float) or c.value is None for c in cells), (
                sheet.title, name, [c.value for c in cells])
            assert all(c.number_format == "#,##0.00" for c in cells if c.value is not None)
    unmatched = book["unmatched expected"]
    header = [c.value for c in unmatched[1]]
    row = next(unmatched.iter_rows(min_row=2, values_only=True))
    assert (row[header.index("amount")], row[header.index("fee")]) == (1033.1, 1.5)
    # The result itself keeps the analyst's values as they were.
    assert result.unmatched_expected["amount"].tolist() == amounts[2:]
