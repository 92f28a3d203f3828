"""The converter of each type of field (:data:`paynb._kinds.TYPES`) and, from the registry
of kinds, each kind's schema: its fields in frame order with their converters."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from paynb._coerce import missing
from paynb._kinds import KINDS as KIND_REGISTRY
from paynb._kinds import kind_of
from paynb.codes import (
    ACH_ACCOUNT_TYPES,
    ACH_ENTRY_CLASSES,
    ACH_TRANSACTION_CODES,
    ACH_TRANSACTION_SUBTYPES,
    INSTANT_STATUSES,
    ITEM_KINDS,
    NOC_CODE_TABLE,
    NOC_CODES,
    RETURN_CODES,
    STATUS_NAMES,
    STATUS_ORDER,
)
from paynb.frames._columns import (
    _ARROW,
    CARD_BRANDS,
    _amounts,
    _card_brand,
    _categorical,
    _categories,
    _code_meanings,
    _column,
    _dated,
    _ids,
    _instant_status,
    _integral,
    _is_text,
    _last_four,
    _mask_accounts,
    _meanings,
    _parse_timestamps,
    _status_code,
    _strings,
    _text,
    _timestamps,
    _whole_numbers,
    logger,
)

# --------------------------------------------------------------------------- field converters
# Each converter takes (name, raw columns by canonical name, context) and returns the
# output columns in order: the field itself, then what is derived from it.

Columns = dict[str, Any]


class _Context:
    def __init__(self, n: int, mask: bool):
        self.n = n
        self.mask = mask

    def nulls(self) -> list[None]:
        return [None] * self.n


def _get(raw: Columns, name: str, ctx: _Context) -> Sequence[Any]:
    values = raw.get(name)
    return ctx.nulls() if values is None else values


def _conv_str(name: str, raw: Columns, ctx: _Context) -> Columns:
    return {name: _strings(_get(raw, name, ctx))}


def _conv_id(name: str, raw: Columns, ctx: _Context) -> Columns:
    return {name: _ids(name, _get(raw, name, ctx))}


def _conv_amount(name: str, raw: Columns, ctx: _Context) -> Columns:
    return {name: _amounts(name, _get(raw, name, ctx))}


INSTANT_AMOUNT_UNIT = ("the service's own whole-number unit, not stated by the spec "
                       "(cents or dollars); the wire integer, unconverted")
"""What ``df.attrs["amountUnit"]`` says of instant card and RTP amounts."""


def _conv_wire_integer(name: str, raw: Columns, ctx: _Context) -> Columns:
    """Instant and RTP amounts: the wire integer as nullable ``Int64`` (their unit is not
    stated, so they are not shown as dollars); exact decimals, with a warning, should the
    service send fractions."""
    whole = _whole_numbers(_get(raw, name, ctx))
    if whole is not None:
        return {name: whole}
    values = _column(_get(raw, name, ctx))
    numbers, _, all_whole = _integral(values)
    if all_whole and not (numbers.abs() >= 2.0 ** 63).any():
        return {name: _ids(name, values)}
    logger.warning("column %s holds amounts that are not whole numbers; kept as exact "
                   "decimals (instant amounts are whole numbers in the spec)", name)
    return {name: _amounts(name, values)}


def _conv_time(name: str, raw: Columns, ctx: _Context) -> Columns:
    return {name: _timestamps(name, _get(raw, name, ctx))}


def _conv_account(name: str, raw: Columns, ctx: _Context) -> Columns:
    values = _get(raw, name, ctx)
    if not ctx.mask:
        return {name: _strings(values)}
    text = _text(values)
    return {name: _mask_accounts(text if text is not None else _strings(values))}


def _conv_item_status(name: str, raw: Columns, ctx: _Context) -> Columns:
    status = _categorical(name, _get(raw, name, ctx), STATUS_ORDER, _status_code, ordered=True)
    names = [STATUS_NAMES[code] for code in STATUS_ORDER]
    codes = np.where(status.codes < len(names), status.codes, -1)
    return {
        name: status,
        "itemStatusName": pd.Categorical.from_codes(codes, dtype=_categories(tuple(names),
                                                                             True)),
    }


def _conv_instant_status(name: str, raw: Columns, ctx: _Context) -> Columns:
    return {name: _categorical(name, _get(raw, name, ctx), INSTANT_STATUSES, _instant_status,
                               ordered=False)}


def _conv_card_brand(name: str, raw: Columns, ctx: _Context) -> Columns:
    return {name: _categorical(name, _get(raw, name, ctx), CARD_BRANDS, _card_brand,
                               ordered=False, warn=False)}


_TRUE = frozenset({"true", "t", "yes", "y", "1"})
_FALSE = frozenset({"false", "f", "no", "n", "0"})


def _flag(value: Any) -> bool | None:
    if missing(value) or value is pd.NA:
        return None
    if isinstance(value, bool | np.bool_):
        return bool(value)
    if isinstance(value, int | float) and value in (0, 1):
        return bool(value)
    text = str(value).strip().lower()
    return True if text in _TRUE else False if text in _FALSE else None


def _text_flags(name: str, text: pa.Array) -> pd.api.extensions.ExtensionArray:
    """Flags written as text and read by Arrow (a sheet's ``true``), by the words of
    :func:`_flag`, in compiled code (no Python call per value)."""
    words = pc.utf8_lower(pc.utf8_trim_whitespace(text))
    true = pc.is_in(words, value_set=pa.array(sorted(_TRUE), words.type))
    false = pc.is_in(words, value_set=pa.array(sorted(_FALSE), words.type))
    flags = pc.if_else(true, True, pc.if_else(false, False, pa.scalar(None, pa.bool_())))
    unreadable = pc.sum(pc.and_(pc.invert(pc.or_(true, false)),
                                pc.not_equal(text, ""))).as_py() or 0
    if unreadable:
        logger.warning("column %s: %d values are not true or false; left empty", name,
                       unreadable)
    return pd.BooleanDtype().__from_arrow__(flags)


def _conv_bool(name: str, raw: Columns, ctx: _Context) -> Columns:
    """A flag as pandas' nullable ``boolean`` (JSON true/false, or an export's text)."""
    values = _get(raw, name, ctx)
    if isinstance(values, _ARROW) and pa.types.is_large_string(values.type):
        return {name: _text_flags(name, values)}
    if isinstance(values, _ARROW) and pa.types.is_boolean(values.type):
        return {name: pd.BooleanDtype().__from_arrow__(values)}
    values = _column(values)
    try:
        return {name: pd.array(values, dtype="boolean")}
    except (TypeError, ValueError):
        flags = [_flag(value) for value in values]
        unreadable = sum(1 for v, f in zip(values, flags, strict=True)
                         if f is None and not missing(v) and v != "")
        if unreadable:
            logger.warning("column %s: %d values are not true or false; left empty", name,
                           unreadable)
        return {name: pd.array(flags, dtype="boolean")}


def _open_code(value: Any) -> str | None:
    """A code of an open set as sent; blank (the docs' sub-type ``" "``) is absent."""
    if missing(value):
        return None
    return str(value).strip() or None


#: The converters :func:`_open_set` made (they read text only).
_OPEN_SETS: list[Callable[..., Columns]] = []


def _open_set(known: Mapping[str, str], *, described: str | None = None
              ) -> Callable[[str, Columns, _Context], Columns]:
    """A converter to a categorical over the ``known`` codes (others appended, no warning:
    the set is open), with their meanings in the column ``described`` when given."""
    def convert(name: str, raw: Columns, ctx: _Context) -> Columns:
        codes = _categorical(name, _get(raw, name, ctx), tuple(known), _open_code,
                             ordered=False, warn=False)
        out: Columns = {name: codes}
        if described:
            # Each category's meaning once, spread over the rows by the categorical's codes.
            out[described] = _meanings(codes.codes, codes.categories,
                                       {k.upper(): v for k, v in known.items()})
        return out

    _OPEN_SETS.append(convert)
    return convert


def _conv_transaction_code(name: str, raw: Columns, ctx: _Context) -> Columns:
    codes = _ids(name, _get(raw, name, ctx))
    meanings = {str(code): meaning for code, meaning in ACH_TRANSACTION_CODES.items()}
    # The distinct codes (numbers, or text when they are no integers) looked up once.
    positions, uniques = pd.factorize(codes)
    return {name: codes, "achTransactionCodeDescription": _meanings(positions, uniques,
                                                                     meanings)}


def _conv_return_reason(name: str, raw: Columns, ctx: _Context) -> Columns:
    codes = _strings(_get(raw, name, ctx))
    return {name: codes,
            "returnReasonDescription": _code_meanings(name, codes, RETURN_CODES, "return")}


def _conv_change_code(name: str, raw: Columns, ctx: _Context) -> Columns:
    codes = _strings(_get(raw, name, ctx))
    given = _strings(_get(raw, "changeReason", ctx))
    meanings = _code_meanings(name, codes, NOC_CODES, "change")
    reasons = pd.Series(given).fillna(pd.Series(meanings)).array
    return {name: codes, "changeReason": reasons}


#: NOC codes whose corrected data holds an account number (NACHA): C01, C03, C06, C07.
_ACCOUNT_NOCS = frozenset(code for code, noc in NOC_CODE_TABLE.items()
                          if "bankAccountNumber" in noc.fields)
#: Of those, the ones whose corrected data starts with the routing number: C03, C07.
_ROUTING_FIRST_NOCS = frozenset(code for code in _ACCOUNT_NOCS
                                if "bankRoutingNumber" in NOC_CODE_TABLE[code].fields)
_DIGIT_RUN = re.compile(r"\d{5,}")


def _mask_corrected(code: Any, data: Any) -> Any:
    if missing(data) or missing(code) or str(code).strip().upper() not in _ACCOUNT_NOCS:
        return data
    text = str(data)
    routing = str(code).strip().upper() in _ROUTING_FIRST_NOCS
    seen = 0

    def mask(match: re.Match[str]) -> str:
        nonlocal seen
        seen += 1
        run = match.group()
        if routing and seen == 1 and len(run) == 9:
            return run  # the corrected routing number is no secret
        return "****" + run[-4:]

    return _DIGIT_RUN.sub(mask, text)


def _conv_corrected_data(name: str, raw: Columns, ctx: _Context) -> Columns:
    values = _get(raw, name, ctx)
    if ctx.mask:
        codes = _column(_get(raw, "changeCode", ctx))
        # NOCs are few; a loop over them is cheap.
        values = [_mask_corrected(c, v) for c, v in zip(codes, _column(values), strict=True)]
    return {name: _strings(values)}


def _conv_card(name: str, raw: Columns, ctx: _Context) -> Columns:
    given = _last_four(_strings(_get(raw, "cardLastFour", ctx)))
    if "cardNumber" in raw:
        derived = _last_four(_strings(raw["cardNumber"]))
        given = pd.Series(given).fillna(pd.Series(derived)).array
    return {"cardLastFour": given}


_TIME_SUFFIXES = ("date", "datetime", "time", "timestamp")


def _conv_extra(name: str, raw: Columns, ctx: _Context) -> Columns:
    """A field paynb does not know: kept, typed from its values (or its Arrow type, read
    from the history: as this typed them when it was stored)."""
    folded = name.lower()
    if folded.endswith("accountnumber"):
        return _conv_account(name, raw, ctx)
    values = raw[name]
    if isinstance(values, _ARROW) and not _is_text(values.type):
        if pa.types.is_temporal(values.type):
            return {name: _dated(_parse_timestamps(values)[0])}
        if pa.types.is_floating(values.type):
            return {name: values.to_numpy(zero_copy_only=False)}
        if pa.types.is_decimal(values.type):
            return {name: _amounts(name, values)}
        if pa.types.is_boolean(values.type):
            return _conv_bool(name, raw, ctx)
        if pa.types.is_integer(values.type):
            return {name: _ids(name, values)}
    values = _column(values)
    inferred = pd.api.types.infer_dtype(values, skipna=True)
    if inferred == "integer":
        return {name: _ids(name, values)}
    if inferred in ("floating", "mixed-integer-float", "decimal") and folded.endswith("amount"):
        return {name: _amounts(name, values)}
    if inferred == "floating":
        return {name: pd.Series(values, dtype=object).astype("float64").to_numpy()}
    if inferred == "boolean":
        return {name: pd.array(values, dtype="boolean")}
    if inferred == "string":
        if folded.endswith(_TIME_SUFFIXES) or name.endswith("At"):
            parsed, lost = _parse_timestamps(values)
            if not lost:  # a date only when every value is one
                return {name: _dated(parsed)}
        return {name: _strings(values)}
    return {name: _objects(values)}


def _conv_object(name: str, raw: Columns, ctx: _Context) -> Columns:
    """A nested object (``iatAddenda``) kept as sent, one dict per row."""
    return {name: _objects(_get(raw, name, ctx))}


def _objects(values: Sequence[Any]) -> np.ndarray:
    """An object column kept as sent (lists and dicts stay one value per row)."""
    if isinstance(values, np.ndarray) and values.dtype == object:
        return values  # (one value per row already: parsed from the history's JSON)
    array = np.empty(len(values), dtype=object)
    for i, value in enumerate(values):
        array[i] = value
    return array


# --------------------------------------------------------------------------- schemas

#: The converter of each type of field (paynb._kinds.TYPES). A ``change_reason`` has none:
#: the ``change_code`` converter writes it beside the code.
_CONVERTERS: dict[str, Callable[..., Columns]] = {
    "id": _conv_id, "text": _conv_str, "account": _conv_account, "money": _conv_amount,
    "wire_integer": _conv_wire_integer, "time": _conv_time, "flag": _conv_bool,
    "object": _conv_object, "item_status": _conv_item_status,
    "instant_status": _conv_instant_status, "card_brand": _conv_card_brand,
    "card_last_four": _conv_card, "transaction_code": _conv_transaction_code,
    "return_reason": _conv_return_reason, "change_code": _conv_change_code,
    "corrected_data": _conv_corrected_data,
    "account_type": _open_set(ACH_ACCOUNT_TYPES),
    "transaction_subtype": _open_set(ACH_TRANSACTION_SUBTYPES),
    "entry_class": _open_set(ACH_ENTRY_CLASSES, described="achEntryClassDescription"),
}
_SCHEMAS: dict[str, list[tuple[str, Callable[..., Columns]]]] = {
    kind.name: [(f.name, _CONVERTERS[f.type]) for f in kind.fields if f.type in _CONVERTERS]
    for kind in KIND_REGISTRY.values()}
#: Converters that read their field as text only (missing or a string), which may
#: therefore be handed an Arrow ``large_string`` array (see :func:`_record_reader`).
_TEXT_CONVERTERS: frozenset[Callable[..., Columns]] = frozenset({
    _conv_str, _conv_account, _conv_time, _conv_item_status, _conv_instant_status,
    _conv_card_brand, _conv_return_reason, *_OPEN_SETS})
#: The fields of each kind that :func:`_record_reader` may read as Arrow text.
_TEXT_FIELDS: dict[str, frozenset[str]] = {
    kind: frozenset(name for name, convert in fields if convert in _TEXT_CONVERTERS)
    for kind, fields in _SCHEMAS.items()}
#: Kinds whose ``amount`` is the wire integer in an unstated unit.
_WIRE_INTEGER_KINDS = frozenset(k.name for k in KIND_REGISTRY.values()
                                 if k.amount == "wire_integer")
KINDS: tuple[str, ...] = ITEM_KINDS
"""The item kinds :func:`to_frame` knows (:data:`paynb.codes.ITEM_KINDS`)."""

#: Field names that other spellings fold onto, per kind, when the canonical one is absent.
_FIELD_ALIASES: dict[str, dict[str, str]] = {
    kind.name: dict(kind.aliases) for kind in KIND_REGISTRY.values()}
#: Fields whose converter reads other fields too (so their column is not empty just
#: because the field itself is absent), and those fields.
READS_ALSO: dict[str, tuple[str, ...]] = {
    "cardLastFour": ("cardNumber",), "changeCode": ("changeReason",),
    "correctedData": ("changeCode",)}
#: Columns that the converter of another field writes, by that field; they are not
#: converted on their own.
DERIVED_FROM = {"itemStatusName": "itemStatus", "returnReasonDescription": "returnReason",
                "changeReason": "changeCode", "achEntryClassDescription": "achEntryClass",
                "achTransactionCodeDescription": "achTransactionCode"}
_CONSUMED = {*DERIVED_FROM, "cardNumber"}


def _kind(kind: str) -> str:
    return kind_of(kind).name


