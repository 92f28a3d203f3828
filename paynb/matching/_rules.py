"""Matching rules: the built-in passes, the fuzzy rules and the protocol for your own.

A rule proposes scored candidate pairs among the open rows; paynb accepts a pair only when
each side is the other's single best, so a rule never has to care about ties or rows used
twice (docs/matching.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from paynb._coerce import parse_decimal
from paynb.calendar import BUSDAY_CALENDAR

_ORIGIN = np.datetime64("1970-01-01", "D")


def banking_index(dates: np.ndarray, missing: int = -1) -> np.ndarray:
    """Banking days from an origin to each date (inclusive), so that the difference of two
    indexes is :func:`paynb.calendar.banking_days_between` of their dates; ``missing``
    for NaT."""
    dates = np.asarray(dates, dtype="datetime64[D]")
    absent = np.isnat(dates)
    filled = np.where(absent, _ORIGIN, dates)
    # A ledger spans a few hundred distinct days: count those, not every row's.
    codes, days = pd.factorize(filled.view(np.int64))
    ends = days.astype("datetime64[D]") + np.timedelta64(1, "D")
    index = np.busday_count(_ORIGIN, ends, busdaycal=BUSDAY_CALENDAR)[codes]
    return np.where(absent, missing, index).astype(np.int64)

__all__ = ["AccountAmountDate", "AmountWithin", "Context", "NameSimilar", "Reference", "Rule"]

#: The columns of a rule's answer.
PAIR_COLUMNS = ("expected", "item", "score")


@dataclass(frozen=True)
class Context:
    """What a rule may need besides the rows: the settings of this :func:`paynb.match` call."""

    #: Dates match when at most this many banking days apart.
    date_window: int
    #: True when the items' account numbers are masked, so ``account`` holds last four digits.
    last_four: bool
    #: The roles mapped on both sides (``reference``, ``account``, ``routing``, ``date``,
    #: ``name``; ``amount`` always).
    roles: frozenset[str]

    def gaps(self, expected_dates: np.ndarray, item_dates: np.ndarray) -> np.ndarray:
        """Banking days from each expected date to the item date beside it (negative when the
        item came first); a large number where a date is missing, 0 when dates are not
        compared (no ``date`` role)."""
        e_days, i_days = banking_index(expected_dates, NO_DAY), banking_index(item_dates, NO_DAY)
        return day_gaps(e_days, i_days, self)

    def within(self, expected_dates: np.ndarray, item_dates: np.ndarray) -> np.ndarray:
        """Whether each pair of dates is within the window."""
        return np.abs(self.gaps(expected_dates, item_dates)) <= self.date_window

    def account_keys(self) -> list[str]:
        """The columns that identify an account on both sides: ``account``, and ``routing``
        when mapped (empty when the account is not mapped)."""
        if "account" not in self.roles:
            return []
        return ["account", "routing"] if "routing" in self.roles else ["account"]


@runtime_checkable
class Rule(Protocol):
    """A matching rule: anything with a ``name`` and a ``candidates`` method.

    ``candidates(expected, items, context)`` gets the rows still unmatched, as
    frames with the columns ``row`` (the row's position in its input frame),
    ``reference`` (trimmed and lower case, as written with ``exact_references=True``),
    ``account`` (the last four digits when the items are
    masked), ``routing``, ``cents`` (the exact amount as an int64 count of
    cents), ``date`` (``datetime64[D]``) and ``name`` (lower case, single
    spaces); missing values are ``None``/``NaT``. It returns a DataFrame with
    the columns ``expected`` and ``item`` (``row`` values) and ``score``
    (a number, higher is better) of the pairs it finds plausible. Return an
    empty frame when nothing is.

    The pairs a rule's pass accepts are reported with ``rule`` = its ``name``.
    """

    name: str

    def candidates(self, expected: pd.DataFrame, items: pd.DataFrame,
                   context: Context) -> pd.DataFrame:
        """Candidate pairs with their scores (see the class)."""
        ...


def no_pairs() -> pd.DataFrame:
    """An empty answer of a rule."""
    return _answer(pd.DataFrame({"row_e": [], "row_i": []}), 0.0)


def _answer(pairs: pd.DataFrame, score: np.ndarray | float) -> pd.DataFrame:
    return pd.DataFrame({"expected": pairs["row_e"].to_numpy(dtype=np.int64),
                         "item": pairs["row_i"].to_numpy(dtype=np.int64),
                         "score": np.broadcast_to(np.asarray(score, dtype=np.float64),
                                                  (len(pairs),))})


#: The day of a row without a date in the coded frames (no banking index is this low).
NO_DAY = np.iinfo(np.int64).min
#: The gap of a pair when a date is missing: never within a window.
_FAR = np.iinfo(np.int32).max


def day_gaps(e_days: np.ndarray, i_days: np.ndarray, context: Context) -> np.ndarray:
    """:meth:`Context.gaps` on banking indexes (:func:`coded`'s ``day``)."""
    if "date" not in context.roles:
        return np.zeros(len(e_days), dtype=np.int64)
    present = (e_days != NO_DAY) & (i_days != NO_DAY)
    return np.where(present, i_days - e_days, _FAR)


def _codes(left: pa.Array, right: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Integer codes of two text columns over one dictionary (equal texts, equal codes);
    -1 where missing."""
    encoded = pa.chunked_array([left, right]).dictionary_encode()
    codes = np.concatenate([pc.fill_null(chunk.indices, -1).to_numpy().astype(np.int64)
                            for chunk in encoded.chunks]) if len(encoded.chunks) else \
        np.zeros(0, np.int64)
    return codes[:len(left)], codes[len(left):]


def coded(expected: pd.DataFrame, items: pd.DataFrame, context: Context
          ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Rule frames (the columns :class:`Rule` describes) as integers, for the built-in
    rules: ``row``, ``reference`` and ``account`` (the account and routing keys) as codes
    equal on both sides for equal values (-1 when missing), ``cents``, ``day`` (banking
    index, :data:`NO_DAY` when missing) and ``name``. :func:`paynb.match` makes them
    once for all rows (Arrow hashes the texts); a rule called on its own makes them here."""
    codes = {}
    for column, keys in (("reference", ["reference"]), ("account", context.account_keys())):
        e_code = np.full(len(expected), 0 if keys else -1, np.int64)
        i_code = np.full(len(items), 0 if keys else -1, np.int64)
        for key in keys:
            e_key, i_key = (_codes(*(pa.array(frame[key], type=pa.string(), from_pandas=True)
                                     for frame in (expected, items))))
            size = int(max(e_key.max(initial=-1), i_key.max(initial=-1))) + 2
            # Combined with the codes so far; -1 (missing) stays -1.
            e_code = np.where((e_code < 0) | (e_key < 0), -1, e_code * size + e_key)
            i_code = np.where((i_code < 0) | (i_key < 0), -1, i_code * size + i_key)
        codes[column] = (e_code, i_code)
    return tuple(pd.DataFrame({  # type: ignore[return-value]
        "row": frame["row"].to_numpy(dtype=np.int64), "reference": codes["reference"][side],
        "account": codes["account"][side], "cents": frame["cents"].to_numpy(dtype=np.int64),
        "day": banking_index(frame["date"].to_numpy(), NO_DAY),
        "name": frame["name"].to_numpy(dtype=object)})
        for side, frame in enumerate((expected, items)))


def _int_join(expected: pd.DataFrame, items: pd.DataFrame, on: Sequence[str],
              columns: Sequence[str]) -> pd.DataFrame:
    """Pairs of coded rows equal on ``on`` (codes of -1 left out), with ``columns`` of
    both sides suffixed ``_e`` and ``_i``; expected rows in their order."""
    keep = [*dict.fromkeys(["row", *on, *columns])]
    left = expected[keep]
    right = items[keep]
    for key in on:
        if key in ("reference", "account"):
            left = left[left[key].to_numpy() >= 0]
            right = right[right[key].to_numpy() >= 0]
    return left.merge(right, on=list(on), suffixes=("_e", "_i"))


class _Coded:
    """A built-in rule: :meth:`candidates` codes the frames and calls :meth:`pairs`, which
    :func:`paynb.match` calls with frames coded once for the whole run."""

    def candidates(self, expected: pd.DataFrame, items: pd.DataFrame,
                   context: Context) -> pd.DataFrame:
        """Candidate pairs with their scores (see the class)."""
        return self.coded_candidates(*coded(expected, items, context), context)

    def coded_candidates(self, expected: pd.DataFrame, items: pd.DataFrame,
              context: Context) -> pd.DataFrame:
        raise NotImplementedError


@dataclass(frozen=True)
class Reference(_Coded):
    """Pass 1: the same reference number (``yourReferenceNumber``) on both sides, trimmed
    and ignoring case unless ``paynb.match(..., exact_references=True)``.

    Amounts and dates are not compared: a pair whose amounts differ is matched and
    reported as an exception (amount differs).
    """

    name: str = "reference"

    def coded_candidates(self, expected: pd.DataFrame, items: pd.DataFrame,
              context: Context) -> pd.DataFrame:
        """Pairs with equal references, all scored 0 (two of them for one row are a tie)."""
        if "reference" not in context.roles:
            return no_pairs()
        return _answer(_int_join(expected, items, ["reference"], []), 0.0)


@dataclass(frozen=True)
class AccountAmountDate(_Coded):
    """Pass 2: the same account (and routing number, when mapped), the exact amount, and
    dates at most ``date_window`` banking days apart; the closer date is better."""

    name: str = "account+amount+date"

    def coded_candidates(self, expected: pd.DataFrame, items: pd.DataFrame,
              context: Context) -> pd.DataFrame:
        """Pairs equal on account and cents within the window, scored by -|gap|."""
        if not context.account_keys():
            return no_pairs()
        pairs = _int_join(expected, items, ["account", "cents"], ["day"])
        gaps = np.abs(day_gaps(pairs["day_e"].to_numpy(), pairs["day_i"].to_numpy(), context))
        keep = gaps <= context.date_window
        return _answer(pairs[keep], -gaps[keep])


@dataclass(frozen=True)
class AmountWithin(_Coded):
    """A fuzzy rule: the same account (and routing), amounts at most ``tolerance`` apart,
    dates within the window. The smaller difference is better, then the closer date.

    ``paynb.match(..., amount_tolerance=...)`` adds this rule with that tolerance.
    """

    tolerance: Decimal | str | int = Decimal("0.00")
    name: str = "amount within tolerance"

    def coded_candidates(self, expected: pd.DataFrame, items: pd.DataFrame,
              context: Context) -> pd.DataFrame:
        """Pairs on the same account within the tolerance and the window."""
        limit = tolerance_cents(self.tolerance)
        if not context.account_keys():
            return no_pairs()
        pairs = _int_join(expected, items, ["account"], ["cents", "day"])
        difference = np.abs(pairs["cents_e"].to_numpy(dtype=np.int64)
                            - pairs["cents_i"].to_numpy(dtype=np.int64))
        gaps = np.abs(day_gaps(pairs["day_e"].to_numpy(), pairs["day_i"].to_numpy(), context))
        keep = (difference <= limit) & (gaps <= context.date_window)
        # Cents first, then days: a cent closer always wins over a day closer.
        score = -(difference[keep] * (context.date_window + 1) + gaps[keep])
        return _answer(pairs[keep], score)


@dataclass(frozen=True)
class NameSimilar(_Coded):
    """A fuzzy rule: the exact amount, dates within the window, and names at least
    ``threshold`` similar (0-100, rapidfuzz's ``token_sort_ratio``, so "Smith, John"
    and "john smith" are 100). Accounts are not compared, so a line paid from a new
    account (after a notification of change) still matches. The more similar is better.

    Used when the ``name`` role is mapped (paynb reads the items' names from the
    first signer's first and last name, or ``name``/``nameOnCard``).
    """

    threshold: float = 90.0
    name: str = "name similarity"

    def coded_candidates(self, expected: pd.DataFrame, items: pd.DataFrame,
              context: Context) -> pd.DataFrame:
        """Pairs of equal amounts within the window whose names are similar enough."""
        from rapidfuzz import fuzz
        from rapidfuzz.process import cpdist
        from rapidfuzz.utils import default_process

        if "name" not in context.roles:
            return no_pairs()
        if not 0 <= self.threshold <= 100:
            raise ValueError(f"NameSimilar: threshold must be within 0-100, got "
                             f"{self.threshold}")
        pairs = _int_join(expected[expected["name"].notna().to_numpy()],
                          items[items["name"].notna().to_numpy()], ["cents"], ["day", "name"])
        if pairs.empty:
            return no_pairs()
        gaps = np.abs(day_gaps(pairs["day_e"].to_numpy(), pairs["day_i"].to_numpy(), context))
        pairs = pairs[gaps <= context.date_window]
        similarity = cpdist(pairs["name_e"].tolist(), pairs["name_i"].tolist(),
                            processor=default_process, scorer=fuzz.token_sort_ratio, workers=1)
        keep = np.asarray(similarity) >= self.threshold
        return _answer(pairs[keep], np.asarray(similarity)[keep])


def tolerance_cents(tolerance: Decimal | str | int) -> int:
    """A tolerance as whole cents; floats and negative or finer values are refused."""
    if isinstance(tolerance, bool) or not isinstance(tolerance, Decimal | str | int):
        raise TypeError("amount_tolerance must be a Decimal, a string or an int "
                        f"(an exact amount), not {type(tolerance).__name__}")
    try:
        value = parse_decimal(tolerance)  # the one reading of amounts: "1,000.00" too
    except ValueError as exc:
        raise ValueError(f"amount_tolerance: {tolerance!r} is not an amount ({exc})") from None
    if value is None:
        raise ValueError("amount_tolerance: an amount is needed (0 for none), got "
                         f"{tolerance!r}")
    cents = value * 100
    if not value.is_finite() or value < 0 or cents != cents.to_integral_value():
        raise ValueError(f"amount_tolerance must be a non-negative amount with at most two "
                         f"decimals, got {tolerance!r}")
    return int(cents)
