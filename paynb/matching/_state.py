"""What one run of :func:`paynb.match` keeps: its arguments (:class:`Settings`) and who is
matched with whom (:class:`State`); the engine fills them, the result reads them."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np

from paynb.matching._rules import Rule

__all__ = ["Settings", "State"]


@dataclass
class Settings:
    """The arguments of one :func:`match` call, kept to run it again."""

    columns: dict[str, str]
    date_window: int
    amount_tolerance: Decimal
    rules: tuple[Rule, ...]
    ledger: str
    item_columns: dict[str, str] | None
    max_parts: int
    max_candidates: int
    dayfirst: bool | None = None
    exact_references: bool = False


def _per_match(position: int, doc: str) -> Any:
    """A property: column ``position`` of the joined chunks of matches, one value per match."""
    return property(lambda state: _joined(state._chunks)[position], doc=doc)


def _joined(chunks: list[tuple[np.ndarray, ...]]) -> tuple[np.ndarray, ...]:
    """``chunks`` (tuples of columns) joined into one, kept so until the next is added."""
    if len(chunks) > 1:
        chunks[:] = [tuple(np.concatenate(parts) for parts in zip(*chunks, strict=True))]
    return chunks[0]


@dataclass
class State:
    """Who is matched with whom so far.

    Matches are numbered in the order made (the match id). Most are one-to-one, so each
    keeps its first expected and first item row in flat arrays; the few with more rows
    (splits, combinations, some manual pairs) also have their full rows in ``multi``.
    The per-match arrays are kept as the chunks each pass added (a pass adds thousands
    at once) and joined once when read.
    """

    n_expected: int
    n_items: int
    e_group: np.ndarray = field(init=False)
    i_group: np.ndarray = field(init=False)
    e_tied: np.ndarray = field(init=False)
    i_tied: np.ndarray = field(init=False)
    #: The rule names used so far; a match keeps the position of its rule's name.
    rule_names: list[str] = field(default_factory=list)
    multi: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = field(default_factory=dict)
    #: (pass, expected row, item row) of every pair left out as a tie.
    ties: list[tuple[str, int, int]] = field(default_factory=list)
    count: int = 0
    #: Chunks of (rule code, manual, first expected row, first item row), one per add (the
    #: first empty), joined when read.
    _chunks: list[tuple[np.ndarray, ...]] = field(default_factory=lambda: [(
        np.zeros(0, np.int64), np.zeros(0, bool), np.zeros(0, np.int64), np.zeros(0, np.int64))])
    #: Chunks of the rows of the matches in ``multi``, flat: (match id, expected row) and
    #: (match id, item row), in the order added; read through :meth:`multi_rows`.
    _multi_chunks: list[tuple[np.ndarray, ...]] = field(
        default_factory=lambda: [(np.zeros(0, np.int64),) * 4])

    def __post_init__(self) -> None:
        self.e_group = np.full(self.n_expected, -1, dtype=np.int64)
        self.i_group = np.full(self.n_items, -1, dtype=np.int64)
        self.e_tied = np.zeros(self.n_expected, dtype=bool)
        self.i_tied = np.zeros(self.n_items, dtype=bool)

    @property
    def rule_of(self) -> np.ndarray:
        """The rule name of each match (an object array)."""
        return np.array(self.rule_names, dtype=object)[self.rule_codes]

    rule_codes = _per_match(0, "The position in :attr:`rule_names` of each match's rule.")
    manual_of = _per_match(1, "Whether each match was made by hand.")
    e_first = _per_match(2, "The (first) expected row of each match.")
    i_first = _per_match(3, "The (first) item row of each match.")

    def group(self, group: int) -> tuple[str, bool, tuple[int, ...], tuple[int, ...]]:
        """Match ``group``: (rule, manual, expected rows, item rows)."""
        codes, manual, e_first, i_first = _joined(self._chunks)
        e_set, i_set = self.multi.get(group, ((int(e_first[group]),), (int(i_first[group]),)))
        return self.rule_names[codes[group]], bool(manual[group]), e_set, i_set

    def multi_rows(self) -> tuple[np.ndarray, ...]:
        """The rows of the matches in ``multi``, flat (the result frames read them as
        arrays, not group by group): match ids and expected rows, match ids and item rows,
        each in the order of ``multi``."""
        return _joined(self._multi_chunks)

    def e_live(self) -> np.ndarray:
        return (self.e_group < 0) & ~self.e_tied

    def i_live(self) -> np.ndarray:
        return (self.i_group < 0) & ~self.i_tied

    def _code(self, rule: str) -> int:
        if rule not in self.rule_names:
            self.rule_names.append(rule)
        return self.rule_names.index(rule)

    def add_groups(self, rule: str, manual: bool,
                   groups: Sequence[tuple[Sequence[int], Sequence[int]]]) -> None:
        """Several matches at once, each (expected rows, item rows)."""
        if not groups:
            return
        first, n = self.count, len(groups)
        e_sets, i_sets = ([tuple(int(r) for r in g[side]) for g in groups] for side in (0, 1))
        # Flat (match id, row) arrays of all the groups' rows, made once, not row by row.
        e_len, i_len = (np.fromiter(map(len, sets), dtype=np.int64, count=n)
                        for sets in (e_sets, i_sets))
        e_all, i_all = (np.fromiter(itertools.chain.from_iterable(sets), dtype=np.int64)
                        for sets in (e_sets, i_sets))
        ids = np.arange(first, first + n, dtype=np.int64)
        e_ids, i_ids = np.repeat(ids, e_len), np.repeat(ids, i_len)
        several = (e_len > 1) | (i_len > 1)
        if several.any():
            for offset in np.flatnonzero(several).tolist():
                self.multi[first + offset] = (e_sets[offset], i_sets[offset])
            e_mask, i_mask = np.repeat(several, e_len), np.repeat(several, i_len)
            self._multi_chunks.append((e_ids[e_mask], e_all[e_mask], i_ids[i_mask],
                                       i_all[i_mask]))
        # Each match by its first rows, then every row to its match.
        self.add_pairs(rule, e_all[np.cumsum(e_len) - e_len], i_all[np.cumsum(i_len) - i_len],
                       manual)
        self.e_group[e_all] = e_ids
        self.i_group[i_all] = i_ids

    def add_pairs(self, rule: str, e_rows: np.ndarray, i_rows: np.ndarray,
                  manual: bool = False) -> None:
        """Many one-to-one matches at once (the bulk of every run)."""
        n = len(e_rows)
        if not n:
            return
        ids = np.arange(self.count, self.count + n, dtype=np.int64)
        self._chunks.append((np.full(n, self._code(rule), dtype=np.int64),
                             np.full(n, manual, dtype=bool), np.asarray(e_rows, dtype=np.int64),
                             np.asarray(i_rows, dtype=np.int64)))
        self.count += n
        self.e_group[e_rows] = ids
        self.i_group[i_rows] = ids

    def tie(self, rule: str, pairs: Iterable[tuple[int, int]]) -> None:
        for e, i in pairs:
            self.ties.append((rule, int(e), int(i)))
            self.e_tied[e] = True
            self.i_tied[i] = True
