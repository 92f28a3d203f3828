"""The returns that came in since the last run: each code named with its meaning (issue 36:
paynb shows no bare code), counted and summed exactly."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import duckdb
import pandas as pd
import pyarrow as pa

from paynb.monitor._checks import _new_returns


def _history(items: pd.DataFrame) -> duckdb.DuckDBPyConnection:
    """The checks read the history through DuckDB: the same views, over these rows (with
    the columns of a history's ACH table that the returns check reads)."""
    n = len(items)
    items = items.assign(**{
        "achTransactionType": items.get("achTransactionType", pd.Series(["Debit"] * n)),
        "achTransactionSubType": items.get("achTransactionSubType", pd.Series([None] * n,
                                                                              dtype=object)),
        "sendDate": pd.to_datetime(["2026-11-25"] * n, utc=True),
        "receivedDateTime": pd.to_datetime(["2026-11-24"] * n, utc=True),
        "company": ["DEMO1"] * n})
    amounts = pa.array(items.pop("amount"), pa.decimal128(18, 2))
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    connection.register("ach", pa.Table.from_pandas(items, preserve_index=False)
                        .append_column("amount", amounts))
    return connection


def test_the_returns_title_names_each_code_with_its_meaning() -> None:
    items = pd.DataFrame({
        "achItemId": [1, 2, 3, 4, 5],
        "yourReferenceNumber": ["A", "B", "C", "D", "E"],
        "amount": [Decimal("10.00"), Decimal("20.50"), Decimal("5.25"), Decimal("1.00"),
                   Decimal("99.00")],
        "achEntryClass": ["PPD"] * 5,
        "itemStatus": ["R", "R", "R", "R", "S"],
        "returnReason": ["R01", "R01", "R10", None, None],
        "returnDate": pd.to_datetime(["2026-12-01", "2026-12-01", "2026-12-01", "2026-12-01",
                                      None], utc=True),
        "settleDate": pd.to_datetime(["2026-11-27"] * 5, utc=True)})
    # A first run (no previous one): the returns dated on the last banking day or later.
    findings, new, by_reason, _ = _new_returns(_history(items), "DEMO1", None,
                                               dt.date(2026, 12, 2))
    assert new["achItemId"].tolist() == [1, 2, 3, 4]
    summary = findings[-1]
    assert summary.title == (
        "Returns since the last banking day: 4, $36.75 (R01: Insufficient funds 2, "
        "R10: Customer says the debit is not authorized 1, no code 1)")
    assert by_reason["amount"].tolist() == [Decimal("30.50"), Decimal("5.25"),
                                            Decimal("1.00")]
    unauthorized = [f.title for f in findings if f.kind == "unauthorized"]
    assert unauthorized == ["unauthorized return R10 (Customer says the debit is not "
                            "authorized) of item 3 (C), $5.25, returned 2026-12-01"]


def test_a_returned_prenote_is_shown_as_one_and_is_no_unauthorized_return() -> None:
    """A $0.00 prenote returned R10 is no entry (NACHA Operating Rules, Article Two,
    Subsection 2.6; docs/compliance.md): the run lists it as a returned prenote and raises
    no "unauthorized return" finding for it, nor for a credit; the debit entry's R10 is one."""
    items = pd.DataFrame({
        "achItemId": [1, 2, 3],
        "yourReferenceNumber": ["P", "C", "D"],
        "amount": [Decimal("0.00"), Decimal("12.00"), Decimal("30.00")],
        "achEntryClass": ["PPD"] * 3,
        "achTransactionType": ["Debit", "Credit", "Debit"],
        "achTransactionSubType": ["Prenote", None, None],
        "itemStatus": ["R"] * 3,
        "returnReason": ["R10"] * 3,
        "returnDate": pd.to_datetime(["2026-12-01"] * 3, utc=True),
        "settleDate": pd.to_datetime(["2026-11-27"] * 3, utc=True)})
    findings, new, _, _ = _new_returns(_history(items), "DEMO1", None, dt.date(2026, 12, 2))
    assert new["prenote"].tolist() == [True, False, False]
    assert new["unauthorized"].tolist() == [False, False, True]
    assert [f.key for f in findings if f.kind == "unauthorized"] == ["unauthorized:3"]
    assert findings[-1].title == (
        "Returns since the last banking day: 3, $42.00 (R10: Customer says the debit is not "
        "authorized 3); 1 returned prenote (no entry, not in the rates)")
    assert findings[-1].detail["prenotes"] == 1
