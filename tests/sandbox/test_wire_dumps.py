"""The sandbox's JSON writer: Decimal amounts as exact JSON numbers, nothing else touched."""

from __future__ import annotations

import json
from decimal import Decimal

from paynb.sandbox import wire


def test_decimals_are_exact_numbers_and_text_stays_text() -> None:
    body = {"total": 3, "creditAmount": Decimal("1250.50"), "transactions": [
        {"amount": Decimal("0.10"), "note": "125.00"},
        {"amount": Decimal("-7"), "note": f'"{wire._MARK}1.00"'},
        {"amount": Decimal("99999999999999.99"), "note": None},
    ]}
    text = wire.dumps(body)
    assert b'"creditAmount":1250.50' in text
    assert b'"amount":0.10,' in text and b'"amount":-7,' in text
    assert b'"amount":99999999999999.99,' in text
    decoded = json.loads(text, parse_float=Decimal)
    assert decoded["transactions"][0]["note"] == "125.00"
    assert decoded["transactions"][1]["note"] == f'"{wire._MARK}1.00"'
    assert [t["amount"] for t in decoded["transactions"]] == [
        Decimal("0.10"), Decimal("-7"), Decimal("99999999999999.99")]
