"""Rows for new items: from a validated request model, or from an invalid bulk entry.

Each ``*_row`` function returns ``build(item_id, seq) -> row dict`` for
:meth:`paynb.sandbox.store.Store.insert`; the item's fate (what business
processing will do to it) is drawn from the seed and its id, so the same
requests against the same seed always end the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

from paynb import models
from paynb.sandbox import rules
from paynb.sandbox.store import new_unique_id
from paynb.validation import to_decimal

__all__ = ["Build", "ach_row", "invalid_row", "instant_row", "rcc_row", "rtp_row"]

Build = Callable[[int, int], dict[str, Any]]
_CENT = Decimal("0.01")


def _cents(value: Any) -> int:
    return int(value * 100)


def _fate_columns(fate: rules.Fate | None) -> dict[str, Any]:
    if fate is None:
        return {}
    return {"_fate_status": fate.status, "_fate_at": fate.at, "_fate_code": fate.code,
            "_fate_message": fate.message}


def ach_row(item: models.AchItem, now: int, seed: int) -> Build:
    """A new ACH item in W; it is sent the next day and settles the day after."""
    send = rules.day_start(now) + rules.DAY_MS

    def build(item_id: int, seq: int) -> dict[str, Any]:
        u = rules.draws(seed, "ach", item_id, 5)
        kind = item.ach_transaction_sub_type or item.ach_transaction_type
        fate = rules.ach_fate(state=item.state, account=item.bank_account_number, kind=kind,
                              received=now, send=send, u=u)
        row = {"achItemId": item_id, **_wire(item), "amount": _cents(item.amount),
               "itemStatus": "W", "receivedDateTime": now, "sendDate": send,
               "settleDate": send + rules.DAY_MS, **_fate_columns(fate)}
        noc = rules.noc_for(u[3], u[4]) if fate is None or fate.status == "R" else None
        if noc:
            row.update(_noc_at=send + 2 * rules.DAY_MS, _noc_code=noc)
        return row

    return build


def rcc_row(item: models.RccItem, now: int, seed: int) -> Build:
    """A new RCC item in W; it is deposited (S) the next day."""
    deposit = rules.day_start(now) + rules.DAY_MS

    def build(item_id: int, seq: int) -> dict[str, Any]:
        fate = rules.rcc_fate(state=item.state, account=item.bank_account_number,
                              received=now, send=deposit, u=rules.draws(seed, "rcc", item_id, 3))
        return {"rccItemId": item_id, **_wire(item), "amount": _cents(item.amount),
                "itemStatus": "W", "receivedDateTime": now, "depositDateTime": deposit,
                **_fate_columns(fate)}

    return build


def _wire(item: models.RequestModel) -> dict[str, Any]:
    return {k: v for k, v in item.to_wire().items() if k != "amount"}


def _loose(value: Any) -> str | None:
    # An invalid entry keeps what it can of the input as text, cut to a sane length.
    if value is None or isinstance(value, dict | list):
        return None
    return str(value)[:100]


def invalid_row(kind: str, data: Any, columns: tuple[str, ...], now: int) -> Build:
    """An I entry for an invalid bulk item: the readable parts of the input, status I."""
    data = data if isinstance(data, Mapping) else {}

    def build(item_id: int, seq: int) -> dict[str, Any]:
        row: dict[str, Any] = {f"{kind}ItemId": item_id}
        for name in columns:
            if name in data and name != "amount":
                row[name] = _loose(data[name])
        amount = to_decimal(data.get("amount"))
        # Size first: quantize() raises InvalidOperation on a huge amount like 1e308.
        if amount is not None and abs(amount) < 10**12 and amount == amount.quantize(_CENT):
            row["amount"] = _cents(amount)
        row.update(itemStatus="I", receivedDateTime=now, returnDate=rules.day_start(now),
                   returnMessage="Failed validation")
        return row

    return build



def instant_row(item: models.InstantCardTransaction, now: int, *, brand: str,
                last_four: str) -> Build:
    """A completed instant card transaction (the outcome follows the amount, see rules)."""
    amount = int(item.amount)
    status, code, description = rules.card_outcome(amount)

    def build(row_id: int, seq: int) -> dict[str, Any]:
        return {"_id": row_id, "uniqueId": new_unique_id(),
                "yourReferenceNumber": item.your_reference_number,
                "nameOnCard": item.name_on_card, "cardBrand": brand, "cardLastFour": last_four,
                "amount": amount, "status": status, "statusCode": code,
                "statusDescription": description, "receivedDateTime": now,
                "completedDateTime": now + 1000 + row_id % 2000}

    return build


def rtp_row(item: models.RtpTransaction, now: int) -> Build:
    """A completed instant RTP transaction (the outcome follows amount and account)."""
    amount = int(item.amount)
    status, code, description = rules.rtp_outcome(amount, item.account_number)

    def build(row_id: int, seq: int) -> dict[str, Any]:
        return {"_id": row_id, "uniqueId": new_unique_id(), **_wire(item), "amount": amount,
                "status": status, "statusCode": code, "statusDescription": description,
                "receivedDateTime": now, "completedDateTime": now + 500 + row_id % 1500}

    return build
