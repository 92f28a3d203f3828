"""Rows for new items, from a validated request model or an invalid bulk entry: each
``*_row`` function returns ``build(item_id, seq) -> row dict`` for
:meth:`paynb.sandbox.store.Store.insert`. An item keeps every documented field of its
request; its schedule and fate are drawn from the seed and its id, so the same requests
against the same seed always end the same way.
"""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Callable, Mapping
from decimal import Decimal
from typing import Any

import numpy as np

from paynb import models
from paynb.sandbox import processing, rules
from paynb.sandbox.store import Store
from paynb.sandbox.tables import KINDS
from paynb.sandbox.wire import dumps, parse_timestamp
from paynb.validation import to_decimal

__all__ = ["Build", "ach_row", "ach_wire_row", "invalid_row", "instant_row", "rcc_row",
           "rtp_row", "transaction_code"]

Build = Callable[[int, int], dict[str, Any]]
_CENT = Decimal("0.01")
#: The item source of everything submitted over the API.
API_SOURCE = "API"


def _cents(value: Any) -> int:
    return int(value * 100)


def _waiting(now: int, plan: processing.Schedule, fates: processing.Fates) -> dict[str, Any]:
    """What a new ACH or RCC item holds until its cut-off: W, its schedule and its fate."""
    fate = {"_fate_status": fates.status[0], "_fate_at": int(fates.at[0]),
            "_fate_code": fates.code[0], "_fate_message": fates.message[0]}
    return {"itemStatus": "W", "itemSource": API_SOURCE, "receivedDateTime": now,
            "_send_at": int(plan.send[0]), "_settle_at": int(plan.settle[0]),
            **(fate if fates.status[0] else {})}


def _ms(value: Any) -> int | None:
    """Epoch ms of a date-time given as text, datetime or date (the model's or the wire's)."""
    if value is None:
        return None
    if isinstance(value, str):
        return parse_timestamp(value)
    if isinstance(value, dt.datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=dt.UTC)
        return int(moment.timestamp() * 1000)
    if isinstance(value, dt.date):
        return int(dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC).timestamp()
                   * 1000)
    return None


def transaction_code(transaction_type: str | None, account_type: str | None,
                     prenote: bool) -> int:
    """The NACHA transaction code of an entry: 22/27 checking credit/debit, 32/37
    savings, one more (23/28/33/38) for a prenote."""
    savings = bool(account_type) and "saving" in str(account_type).lower()
    code = (32 if savings else 22) + (5 if transaction_type == "Debit" else 0)
    return code + 1 if prenote else code


def ach_wire_row(wire: Mapping[str, Any], now: int, store: Store, *,
                 batch: str | None = None) -> Build:
    """A new ACH item from a request body in wire names: every documented field it holds
    is stored and echoed; the requested send and effective dates are kept as
    ``requestedSendDate`` / ``requestedAchEffectiveDate``. It is W until its cut-off."""
    columns = set(KINDS["ach"].fields) - {"sendDate", "achEffectiveDate"}
    stored = {k: v for k, v in wire.items() if k in columns and k != "amount"}
    if isinstance(stored.get("iatAddenda"), Mapping):
        stored["iatAddenda"] = dumps(stored["iatAddenda"]).decode()
    if "sameDayAchRequested" in stored:
        stored["sameDayAchRequested"] = int(bool(stored["sameDayAchRequested"]))
    for name in ("achTransactionCode", "achCheckNumber"):
        if name in stored and stored[name] is not None:
            stored[name] = int(stored[name])
    requested_send = _ms(wire.get("sendDate"))
    requested_effective = _ms(wire.get("achEffectiveDate"))
    subtype = wire.get("achTransactionSubType")
    prenote = isinstance(subtype, str) and subtype.strip().lower() == "prenote"
    kind = "Prenote" if prenote else str(wire.get("achTransactionType"))
    stored.setdefault("achTransactionCode", transaction_code(
        wire.get("achTransactionType"), wire.get("achAccountType"), prenote))
    config = store.config
    plan = processing.schedule(
        config, [now], requested_send=[-1 if requested_send is None else requested_send],
        requested_effective=[-1 if requested_effective is None else requested_effective],
        same_day=[bool(wire.get("sameDayAchRequested"))])
    batch = batch or str(uuid.uuid4())

    def build(item_id: int, seq: int) -> dict[str, Any]:
        u = np.array(rules.draws(store.seed, "ach", item_id, 8)).reshape(8, 1)
        fates = processing.ach_fates(
            config, kinds=np.array([kind if kind in config.ach_return_rates else "Debit"]),
            states=np.array([str(wire.get("state"))]),
            accounts=np.array([str(wire.get("bankAccountNumber"))]),
            received=np.array([now]), settle=plan.settle, u=u[:5])
        row = {"achItemId": item_id, "flexBatchId": batch, **stored,
               "amount": _cents(wire["amount"]), "requestedSendDate": requested_send,
               "requestedAchEffectiveDate": requested_effective,
               "_effective_at": int(plan.effective[0]), **_waiting(now, plan, fates)}
        if fates.status[0] in ("", "R"):
            at, code = processing.noc_events(config, eligible=np.array([True]),
                                             settle=plan.settle, u=u[5:])
            if code[0] is not None:
                row.update(_noc_at=int(at[0]), _noc_code=code[0])
        return row

    return build


def ach_row(item: models.AchItem, now: int, store: Store) -> Build:
    """A new ACH item from its request model (see :func:`ach_wire_row`)."""
    return ach_wire_row(item.to_wire(), now, store)


def rcc_row(item: models.RccItem, now: int, store: Store) -> Build:
    """A new RCC item in W; it is deposited (S) at the next banking day's cut-off."""
    config = store.config
    plan = processing.schedule(config, [now])
    wire = _wire(item, "rcc")
    batch = str(uuid.uuid4())

    def build(item_id: int, seq: int) -> dict[str, Any]:
        u = np.array(rules.draws(store.seed, "rcc", item_id, 4)).reshape(4, 1)
        fates = processing.rcc_fates(
            config, states=np.array([item.state]), accounts=np.array([item.bank_account_number]),
            received=np.array([now]), deposit=plan.send, u=u)
        bank = rules.BANKS.get(item.bank_routing_number)
        bank_fields = dict(zip(("bankName", "bankCity", "bankState", "bankZip"), bank,
                               strict=True)) if bank else {}
        return {"rccItemId": item_id, "flexBatchId": batch, **bank_fields,
                # The check the service draws on the account: numbered, dated today.
                "checkNumber": 1001 + item_id % 8999, "checkDate": rules.day_start(now),
                **wire, "amount": _cents(item.amount), **_waiting(now, plan, fates)}

    return build


def _wire(item: models.RequestModel, kind: str) -> dict[str, Any]:
    """The request's fields that ``kind``'s records hold (the amount is stored apart)."""
    columns = set(KINDS[kind].fields)
    return {k: v for k, v in item.to_wire().items() if k != "amount" and k in columns}


_NUMERIC = {"achTransactionCode", "achCheckNumber", "checkNumber", "sameDayAchRequested",
            "merchantId", "bankId", "returnItemId"}


def invalid_row(kind: str, data: Any, columns: tuple[str, ...], now: int) -> Build:
    """An I entry for an invalid bulk item: the readable parts of the input, status I."""
    data = data if isinstance(data, Mapping) else {}
    # Numbers and dates are kept only by the valid; text is kept as far as it reads (cut to
    # a sane length; an object or a list not at all).
    text = [name for name in columns if name in data and name not in _NUMERIC
            and name not in KINDS[kind].timestamps and name not in ("amount", "iatAddenda")]

    def build(item_id: int, seq: int) -> dict[str, Any]:
        row: dict[str, Any] = {f"{kind}ItemId": item_id}
        for name in text:
            value = data[name]
            row[name] = None if value is None or isinstance(value, dict | list) \
                else str(value)[:100]
        amount = to_decimal(data.get("amount"))
        # Size first: quantize() raises InvalidOperation on a huge amount like 1e308.
        if amount is not None and abs(amount) < 10**12 and amount == amount.quantize(_CENT):
            row["amount"] = _cents(amount)
        row.update(itemStatus="I", receivedDateTime=now, returnDate=rules.day_start(now),
                   returnMessage="Failed validation", itemSource=API_SOURCE)
        return row

    return build


def instant_row(item: models.InstantCardTransaction, now: int, *, brand: str,
                last_four: str) -> Build:
    """A completed instant card transaction (the outcome follows the amount, see rules)."""
    amount = int(item.amount)
    status, code, description = rules.card_outcome(amount)

    def build(row_id: int, seq: int) -> dict[str, Any]:
        return {"_id": row_id, "uniqueId": str(uuid.uuid4()),
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
        return {"_id": row_id, "uniqueId": str(uuid.uuid4()), **_wire(item, "rtp"),
                "amount": amount,
                "status": status, "statusCode": code, "statusDescription": description,
                "receivedDateTime": now, "completedDateTime": now + 500 + row_id % 1500}

    return build
