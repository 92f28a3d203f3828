"""The returns that came in since the last run: each code named with its meaning (issue 36:
paynb shows no bare code), counted and summed exactly."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import duckdb
import pandas as pd
import pyarrow as pa

from paynb.monitor._checks import _new_returns


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
        "settleDate": pd.to_datetime(["2026-11-27"] * 5, utc=True),
        "company": ["DEMO1"] * 5})
    amounts = pa.array(items.pop("amount"), pa.decimal128(18, 2))
    # The checks read the history through DuckDB: the same views, over these rows.
    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    connection.register("ach", pa.Table.from_pandas(items, preserve_index=False)
                        .append_column("amount", amounts))
    # A first run (no previous one): the returns dated on the last banking day or later.
    findings, new, by_reason, _ = _new_returns(connection, "DEMO1", None,
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
