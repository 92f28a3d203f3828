"""Matching rules: the built-in passes, the fuzzy rules and the protocol for your own.

A rule proposes *candidate pairs* among the rows still unmatched, each with a
score (higher is better). paynb then accepts a pair only when each side is the
other's single best candidate; two candidates equally good are a tie, and
neither is matched (both are reported). So a rule never has to worry about
rows matched twice or about ties: it only says which pairs are plausible and
how good each is.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Protocol, runtime_checkable

import numpy as np
import pandas as pd

from paynb.calendar import BUSDAY_CALENDAR

_ORIGIN = np.datetime64("1970-01-01", "D")


def banking_index(dates: np.ndarray) -> np.ndarray:
    """Banking days from an origin to each date (inclusive), so that the difference of two
    indexes is :func:`paynb.calendar.banking_days_between` of their dates; -1 for NaT."""
    dates = np.asarray(dates, dtype="datetime64[D]")
    missing = np.isnat(dates)
    filled = np.where(missing, _ORIGIN, dates)
    index = np.busday_count(_ORIGIN, filled + np.timedelta64(1, "D"), busdaycal=BUSDAY_CALENDAR)
    return np.where(missing, -1, index).astype(np.int64)

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
        if "date" not in self.roles:
            return np.zeros(len(expected_dates), dtype=np.int64)
        expected_dates = np.asarray(expected_dates, dtype="datetime64[D]")
        item_dates = np.asarray(item_dates, dtype="datetime64[D]")
        present = ~(np.isnat(expected_dates) | np.isnat(item_dates))
        gaps = banking_index(item_dates) - banking_index(expected_dates)
        return np.where(present, gaps, np.iinfo(np.int32).max)

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
    ``reference``, ``account`` (the last four digits when the items are
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
    return pd.DataFrame({"expected": np.array([], dtype=np.int64),
                         "item": np.array([], dtype=np.int64),
                         "score": np.array([], dtype=np.float64)})


def joined(expected: pd.DataFrame, items: pd.DataFrame, on: Sequence[str]) -> pd.DataFrame:
    """Every pair of rows equal on ``on`` (rows missing any of them left out), with both
    sides' columns suffixed ``_e`` and ``_i``."""
    left = expected.dropna(subset=list(on))
    right = items.dropna(subset=list(on))
    if left.empty or right.empty:
        return pd.DataFrame(columns=[*on, *(f"{c}_e" for c in expected.columns if c not in on),
                                     *(f"{c}_i" for c in items.columns if c not in on)])
    return left.merge(right, on=list(on), suffixes=("_e", "_i"))


def _answer(pairs: pd.DataFrame, score: np.ndarray | float) -> pd.DataFrame:
    return pd.DataFrame({"expected": pairs["row_e"].to_numpy(dtype=np.int64),
                         "item": pairs["row_i"].to_numpy(dtype=np.int64),
                         "score": np.broadcast_to(np.asarray(score, dtype=np.float64),
                                                  (len(pairs),))})


@dataclass(frozen=True)
class Reference:
    """Pass 1: the same reference number (``yourReferenceNumber``) on both sides.

    Amounts and dates are not compared: a pair whose amounts differ is matched and
    reported as an exception (amount differs).
    """

    name: str = "reference"

    def candidates(self, expected: pd.DataFrame, items: pd.DataFrame,
                   context: Context) -> pd.DataFrame:
        """Pairs with equal references, all scored 0 (two of them for one row are a tie)."""
        if "reference" not in context.roles:
            return no_pairs()
        pairs = joined(expected[["row", "reference"]], items[["row", "reference"]],
                       ["reference"])
        return _answer(pairs, 0.0)


@dataclass(frozen=True)
class AccountAmountDate:
    """Pass 2: the same account (and routing number, when mapped), the exact amount, and
    dates at most ``date_window`` banking days apart; the closer date is better."""

    name: str = "account+amount+date"

    def candidates(self, expected: pd.DataFrame, items: pd.DataFrame,
                   context: Context) -> pd.DataFrame:
        """Pairs equal on account and cents within the window, scored by -|gap|."""
        keys = context.account_keys()
        if not keys:
            return no_pairs()
        pairs = joined(expected, items, [*keys, "cents"])
        gaps = np.abs(context.gaps(pairs["date_e"].to_numpy(), pairs["date_i"].to_numpy()))
        keep = gaps <= context.date_window
        return _answer(pairs[keep], -gaps[keep])


@dataclass(frozen=True)
class AmountWithin:
    """A fuzzy rule: the same account (and routing), amounts at most ``tolerance`` apart,
    dates within the window. The smaller difference is better, then the closer date.

    ``paynb.match(..., amount_tolerance=...)`` adds this rule with that tolerance.
    """

    tolerance: Decimal | str | int = Decimal("0.00")
    name: str = "amount within tolerance"

    def candidates(self, expected: pd.DataFrame, items: pd.DataFrame,
                   context: Context) -> pd.DataFrame:
        """Pairs on the same account within the tolerance and the window."""
        keys = context.account_keys()
        limit = tolerance_cents(self.tolerance)
        if not keys:
            return no_pairs()
        pairs = joined(expected, items, keys)
        difference = np.abs(pairs["cents_e"].to_numpy(dtype=np.int64)
                            - pairs["cents_i"].to_numpy(dtype=np.int64))
        gaps = np.abs(context.gaps(pairs["date_e"].to_numpy(), pairs["date_i"].to_numpy()))
        keep = (difference <= limit) & (gaps <= context.date_window)
        # Cents first, then days: a cent closer always wins over a day closer.
        score = -(difference[keep] * (context.date_window + 1) + gaps[keep])
        return _answer(pairs[keep], score)


@dataclass(frozen=True)
class NameSimilar:
    """A fuzzy rule: the exact amount, dates within the window, and names at least
    ``threshold`` similar (0-100, rapidfuzz's ``token_sort_ratio``, so "Smith, John"
    and "john smith" are 100). Accounts are not compared, so a line paid from a new
    account (after a notification of change) still matches. The more similar is better.

    Used when the ``name`` role is mapped (paynb reads the items' names from the
    first signer's first and last name, or ``name``/``nameOnCard``).
    """

    threshold: float = 90.0
    name: str = "name similarity"

    def candidates(self, expected: pd.DataFrame, items: pd.DataFrame,
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
        pairs = joined(expected.dropna(subset=["name"]), items.dropna(subset=["name"]),
                       ["cents"])
        if pairs.empty:
            return no_pairs()
        within = context.within(pairs["date_e"].to_numpy(), pairs["date_i"].to_numpy())
        pairs = pairs[within]
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
        value = Decimal(str(tolerance).strip())
    except ArithmeticError:
        raise ValueError(f"amount_tolerance: {tolerance!r} is not an amount") from None
    cents = value * 100
    if not value.is_finite() or value < 0 or cents != cents.to_integral_value():
        raise ValueError(f"amount_tolerance must be a non-negative amount with at most two "
                         f"decimals, got {tolerance!r}")
    return int(cents)
