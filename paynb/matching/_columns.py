"""The two sides as matching sees them: checked column mapping, exact cents, dates, keys.

Both the expected ledger and the item frame become a :class:`Side`, whose ``norm`` frame
has the columns :class:`paynb.matching.Rule` describes."""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from paynb._coerce import parse_decimal
from paynb._kinds import KINDS
from paynb.matching._dates import arrow_text, days_of, row_label

__all__ = ["ITEM_COLUMNS", "ROLES", "Side", "expected_side", "item_side"]

logger = logging.getLogger("paynb.matching")

#: The roles a column of the expected ledger can play, and what each is used for.
ROLES: dict[str, str] = {
    "reference": "your reference number (yourReferenceNumber): the exact-reference pass",
    "account": "bank account number: the account passes and splits (last four digits "
               "when the items are masked)",
    "routing": "bank routing number: compared with the account when mapped",
    "amount": "amount (required): compared exactly, as decimals",
    "date": "date the payment was meant for: compared within the banking-day window",
    "name": "payer or payee name: the name-similarity rule",
    "id": "a column naming each expected line across runs (default: a fingerprint of "
          "the mapped values), used to keep manual decisions",
}

#: The columns of a paynb item frame used for each role, first present wins.
ITEM_COLUMNS: dict[str, tuple[str, ...]] = {
    "id": tuple(dict.fromkeys(kind.id_field for kind in KINDS.values() if kind.payment)),
    "reference": ("yourReferenceNumber",),
    "account": ("bankAccountNumber",),
    "routing": ("bankRoutingNumber",),
    "amount": ("amount",),
    # ACH: the day it goes to the bank; RCC: the deposit; instant and RTP: received.
    "date": ("sendDate", "depositDateTime", "receivedDateTime"),
    "name": ("name", "nameOnCard"),
}
#: The kind an item's id names in the keys of decisions kept in the journal; uniqueId,
#: shared by instant card and RTP payments, names a "payment".
_ITEM_KINDS = {kind.id_field: kind.name for kind in KINDS.values()} | {"uniqueId": "payment"}
_SIGNER = ("firstSignerFirstName", "firstSignerLastName")


@dataclass
class Side:
    """One side of the matching: its input frame and its normalised columns."""

    frame: pd.DataFrame
    norm: pd.DataFrame
    #: The roles present on this side.
    roles: frozenset[str]
    #: Input column of each role (items: the paynb column used).
    columns: dict[str, str]
    #: Items only: the kind of item (ach, rcc, payment) of each key.
    kind: str = ""

    def __len__(self) -> int:
        return len(self.norm)

    def display_names(self, rows: np.ndarray) -> pd.Series | None:
        """The names of the row positions ``rows`` as written (an item's: its first
        signer's first and last name); None when the side has no name."""
        column = self.columns.get("name")
        if column is None:
            return None
        if column in self.frame.columns:
            return self.frame[column].iloc[rows]
        first, last = (self.frame[c].iloc[rows].astype("string").fillna("") for c in _SIGNER)
        return (first + " " + last).str.strip()

    def names_at(self, rows: np.ndarray) -> pa.Array | None:
        """The names of the row positions ``rows`` (lower case, single spaces); None when
        the side has no name."""
        values = self.display_names(rows)
        return None if values is None else _names(values).cast(pa.string())

    def read_names(self, rows: np.ndarray) -> None:
        """Fill the ``name`` column of the rows chosen by the mask ``rows``; left empty
        when the side has no name."""
        found = self.names_at(np.flatnonzero(rows)) if rows.any() else None
        if found is None:
            return
        names = pa.array(self.norm["name"], type=pa.string(), from_pandas=True)
        self.norm["name"] = pc.replace_with_mask(names, pa.array(rows), found).to_pandas()

    @cached_property
    def keys(self) -> np.ndarray:
        """A stable text key per row, for decisions kept across runs."""
        if "id" in self.columns:
            ids = self.frame[self.columns["id"]].astype("string").fillna("")
            return ((self.kind + ":" + ids) if self.kind else ids).to_numpy(dtype=object)
        # The mapped values as read, so that tomorrow's run (masked or not) finds the same.
        text = pd.Series("", index=self.frame.index, dtype="string")
        for role in ("reference", "account", "routing", "amount", "date", "name"):
            if role in self.columns:
                text = text + "|" + self.frame[self.columns[role]].astype("string").fillna("")
        # Two identical lines (say the same rent twice) get #1, #2 by their order.
        occurrence = text.groupby(text).cumcount() + 1
        return (text + "#" + occurrence.astype(str)).to_numpy(dtype=object)


def _existing(frame: pd.DataFrame) -> str:
    return ", ".join(repr(str(c)) for c in frame.columns) or "(none)"


def _check_role(argument: str, role: str, column: str, roles: Iterable[str],
                frame: pd.DataFrame, which: str) -> None:
    """One role -> column pair the user gave in ``argument``: a known role, a column
    of ``frame`` (the ``which`` frame)."""
    if role not in roles:
        raise ValueError(f"{argument}: unknown role {role!r}; the roles are "
                         f"{', '.join(roles)}")
    try:
        present = column in frame.columns
    except TypeError:  # unhashable, such as a list of columns
        present = False
    if not present:
        # A ValueError (a bad argument), not a KeyError: its message is shown as written.
        raise ValueError(f"{argument}: the {role} column {column!r} is not in the {which} "
                         f"frame; its columns are {_existing(frame)}")


def check_columns(expected: pd.DataFrame, columns: Mapping[str, str]) -> dict[str, str]:
    """``columns`` checked: known roles, existing columns, an amount."""
    if not isinstance(expected, pd.DataFrame):
        raise TypeError(f"expected must be a pandas DataFrame, not {type(expected).__name__}")
    if not isinstance(columns, Mapping):
        raise TypeError("columns must map roles to column names, like "
                        "{'amount': 'Amount', 'date': 'Due date'}")
    for role, column in columns.items():
        _check_role("columns", role, column, ROLES, expected, "expected")
    checked = dict(columns)
    if "amount" not in checked:
        raise ValueError("columns: the 'amount' role is required (the column of the "
                         "expected amounts)")
    return checked


def _bad_amount(frame: pd.DataFrame, column: str, position: int, value: Any, why: str,
                which: str) -> ValueError:
    return ValueError(f"{which} {row_label(frame, position)}, column {column!r}: "
                      f"amount {value!r} {why}")


def _decimal_cents(value: Any, frame: pd.DataFrame, column: str, position: int,
                   which: str) -> int:
    """One amount as exact cents, read as every amount paynb reads
    (:func:`paynb._coerce.parse_decimal`: ``1,234.56`` and ``$1,234.56`` too), or an error
    naming its row."""
    try:
        amount = parse_decimal(value, currency_sign=True)
    except ValueError as exc:
        raise _bad_amount(frame, column, position, value, f"is not an amount ({exc})",
                          which) from None
    if amount is None:
        raise _bad_amount(frame, column, position, value, "is missing", which)
    if not amount.is_finite():
        raise _bad_amount(frame, column, position, value, "is not a finite number", which)
    cents = amount * 100
    if cents != cents.to_integral_value():
        raise _bad_amount(frame, column, position, value, "has more than two decimals", which)
    return int(cents)


def _decimal_array_cents(array: pa.Array | pa.ChunkedArray) -> np.ndarray | None:
    """Cents of a decimal128 array with at most two decimals (None when it has more)."""
    scale = array.type.scale
    if scale > 2:
        try:
            array = array.cast(pa.decimal128(array.type.precision, 2))
        except pa.ArrowInvalid:
            return None
        scale = 2
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    if array.null_count:
        return None
    # decimal128 values are 16-byte two's complement integers (low word first): read the
    # unscaled integers straight from the buffer, no float and no Python object on the way.
    words = np.frombuffer(array.buffers()[1], dtype=np.int64)
    words = words[2 * array.offset:2 * (array.offset + len(array))]
    low, high = words[0::2], words[1::2]
    if not (high == (low >> 63)).all():  # beyond int64: not an amount
        return None
    return low * 10 ** (2 - scale)


def amount_cents(frame: pd.DataFrame, column: str, which: str = "expected") -> np.ndarray:
    """The amounts of ``frame[column]`` as exact int64 cents.

    Strings (``1,234.56`` and ``$1,234.56`` too, as :func:`paynb._coerce.parse_decimal`
    reads them), ints, Decimals, decimal128 and floats (taken as their shortest decimal
    text: ``0.1`` is 10 cents) are accepted; a missing amount, a value that is no
    number, or one with more than two decimals is an error naming its row.
    """
    values = frame[column]
    dtype = values.dtype
    fast: np.ndarray | None = None
    if isinstance(dtype, pd.ArrowDtype) and pa.types.is_decimal(dtype.pyarrow_dtype):
        fast = _decimal_array_cents(pa.array(values))
    elif pd.api.types.is_integer_dtype(dtype) and not values.isna().any():
        fast = values.to_numpy(dtype=np.int64) * 100
    elif pd.api.types.is_float_dtype(dtype):
        floats = values.to_numpy(dtype=np.float64, na_value=np.nan)
        scaled = np.round(floats * 100)
        # n / 100 == x exactly when x's shortest text has at most two decimals.
        if np.isfinite(floats).all() and (scaled / 100 == floats).all():
            fast = scaled.astype(np.int64)
    elif (pd.api.types.is_string_dtype(dtype) or dtype is np.dtype(object)) and len(values):
        strings = values.to_numpy(dtype=object)
        if all(type(v) is str for v in strings[:1000]):
            try:
                array = pa.array(strings, type=pa.string()).cast(pa.decimal128(38, 2))
                fast = _decimal_array_cents(array)
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                fast = None
    if fast is not None:
        return fast
    # The slow way finds and names the offending row (or accepts what Arrow would not,
    # such as " 12.50" or a column mixing ints, Decimals and strings).
    raw = values.to_numpy(dtype=object)
    return np.fromiter((_decimal_cents(v, frame, column, i, which) for i, v in enumerate(raw)),
                       dtype=np.int64, count=len(raw))


# Text columns go through pyarrow compute (vectorised, RE2), not Python's re per value, and
# back with to_pandas() (a numpy object array assigned to a frame is inferred value by value).

def _blank_to_null(array: pa.Array) -> pa.Array:
    return pc.if_else(pc.equal(array, ""), pa.scalar(None, pa.string()), array)


def _references(values: pd.Series, exact: bool) -> pa.Array:
    """References as compared: trimmed and lower case (``" ab-1 "`` is ``"AB-1"``), or as
    written when ``exact``; blank (empty or only spaces) is no reference either way."""
    text = arrow_text(values)
    trimmed = pc.utf8_trim_whitespace(text)
    if exact:
        return pc.if_else(pc.equal(trimmed, ""), pa.scalar(None, pa.string()), text)
    return _blank_to_null(pc.utf8_lower(trimmed))


def _all_digits(array: pa.Array) -> bool:
    return bool(pc.all(pc.utf8_is_digit(array)).as_py() is not False)


def _number_digits(values: pd.Series) -> pa.Array:
    """The digits of each value (a number a CSV reader made a float loses its ``.0``).
    Columns of digits only, the usual case, skip the regular expressions."""
    text = arrow_text(values)
    if _all_digits(text):
        return _blank_to_null(text)
    text = pc.replace_substring_regex(text, r"\.0$", "")
    return _blank_to_null(pc.replace_substring_regex(text, r"\D", ""))


def _account_keys(values: pd.Series, last_four: bool) -> pd.Series:
    if last_four:
        # Masked items show ****6789: only the last four digits can be compared.
        tail = pc.utf8_slice_codeunits(arrow_text(values), -4)
        if not _all_digits(tail):
            tail = pc.utf8_slice_codeunits(_number_digits(values), -4)
        return pc.utf8_lpad(_blank_to_null(tail), 4, "0").to_pandas()
    # Leading zeros dropped: a CSV reader turns 000123 into 123.
    return _blank_to_null(pc.utf8_ltrim(_number_digits(values), "0")).to_pandas()


def _names(values: pd.Series) -> pa.Array:
    text = pc.replace_substring_regex(pc.utf8_lower(arrow_text(values)), r"\s+", " ")
    return _blank_to_null(pc.utf8_trim_whitespace(text))


def _empty(n: int) -> pd.Series:
    return pd.Series([None] * n, dtype=object)


def item_side(items: pd.DataFrame, overrides: Mapping[str, str] | None = None,
              wanted: Iterable[str] = (), *, dayfirst: bool | None = None,
              exact_references: bool = False) -> Side:
    """The item frame as a side; its columns come from :data:`ITEM_COLUMNS`, ``overrides``
    (``item_columns=``) first. Every role of ``wanted`` (those mapped on the expected
    side) must be found: a role silently left out would change what matches."""
    if not isinstance(items, pd.DataFrame):
        raise TypeError(f"items must be a paynb item DataFrame, not {type(items).__name__}")
    # Per role, the first of its usual columns the frame has.
    columns = {role: found for role, candidates in ITEM_COLUMNS.items()
               if (found := next((c for c in candidates if c in items.columns), None))}
    for role, column in (overrides or {}).items():
        _check_role("item_columns", role, column, ITEM_COLUMNS, items, "items")
        columns[role] = column
    if "name" not in columns and all(c in items.columns for c in _SIGNER):
        columns["name"] = " + ".join(_SIGNER)
    for role in ("id", "amount", *(r for r in wanted if r != "id")):
        if role not in columns:
            usual = " or ".join(repr(c) for c in ITEM_COLUMNS[role])
            if role == "name":
                usual += " or " + " and ".join(repr(c) for c in _SIGNER)
            why = ("" if role in ("id", "amount") else
                   f" (columns= maps the {role} role; leave it out to match without it)")
            raise ValueError(f"items: no {role} column ({usual}){why}; its columns are "
                             f"{_existing(items)}. Pass a frame from the paynb client, or "
                             f"item_columns={{{role!r}: ...}}")
    return _side(items, columns, "items", kind=_ITEM_KINDS.get(columns["id"], "item"),
                 dayfirst=dayfirst, exact_references=exact_references)


def expected_side(expected: pd.DataFrame, columns: Mapping[str, str], *,
                  dayfirst: bool | None = None, exact_references: bool = False) -> Side:
    """The expected ledger as a side (``columns`` already checked)."""
    return _side(expected, dict(columns), "expected", dayfirst=dayfirst,
                 exact_references=exact_references)


def _side(frame: pd.DataFrame, columns: dict[str, str], which: str, *, kind: str = "",
          dayfirst: bool | None, exact_references: bool) -> Side:
    n = len(frame)
    norm = pd.DataFrame({"row": np.arange(n, dtype=np.int64)})
    col = columns.get
    norm["reference"] = _references(frame[col("reference")], exact_references).to_pandas() \
        if col("reference") else _empty(n)
    # Account keys are finished by :func:`account_keys` once both sides are known.
    norm["account"] = frame[columns["account"]].reset_index(drop=True) if col("account") \
        else _empty(n)
    norm["routing"] = (pc.utf8_lpad(_number_digits(frame[columns["routing"]]), 9, "0")
                       .to_pandas() if col("routing") else _empty(n))
    norm["cents"] = amount_cents(frame, columns["amount"], which)
    norm["date"] = days_of(frame[columns["date"]], which, columns["date"], dayfirst) \
        if col("date") else np.full(n, np.datetime64("NaT"), dtype="datetime64[D]")
    if which == "items" and col("date") == "sendDate" and "receivedDateTime" in frame.columns:
        # An ACH item not sent (yet: W, I, B) has no send date; the ledger expects it on the
        # day it was received, so that day stands in (docs/matching.md).
        unsent = np.isnat(norm["date"].to_numpy())
        if unsent.any():
            received = days_of(frame["receivedDateTime"], which, "receivedDateTime", dayfirst)
            norm.loc[unsent, "date"] = received[unsent]
    # Names are read only for the rows left to the fuzzy rules (Side.read_names).
    norm["name"] = _empty(n)
    roles = frozenset(role for role in ("reference", "account", "routing", "amount", "date",
                                        "name") if role in columns)
    return Side(frame=frame, norm=norm, roles=roles, columns=columns, kind=kind)


def finish_accounts(expected: Side, items: Side) -> bool:
    """Turn both sides' raw account values into comparable keys; True when only the last
    four digits can be compared (the items are masked)."""
    column = items.columns.get("account")
    # Masked items show ****6789.
    last_four = column is not None and bool(
        items.frame[column].astype("string").str.contains("*", regex=False).any())
    for side in (expected, items):
        if "account" in side.columns:
            side.norm["account"] = _account_keys(side.frame[side.columns["account"]],
                                                 last_four)
    return last_four
