"""``paynb.match``: the passes, strictest first, each row matched at most once."""

from __future__ import annotations

import itertools
import logging
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from paynb.matching._columns import Side, check_columns, expected_side, finish_accounts, item_side
from paynb.matching._rules import (
    PAIR_COLUMNS,
    AccountAmountDate,
    AmountWithin,
    Context,
    NameSimilar,
    Reference,
    Rule,
    banking_index,
    tolerance_cents,
)

__all__ = ["match"]

logger = logging.getLogger("paynb.matching")

#: From this many rows (both sides together) a run takes about a second or more, and
#: ``progress=None`` shows a progress bar.
PROGRESS_ROWS = 100_000
#: The steps the progress bar counts.
_STEPS = ("reading", "reference", "account+amount+date", "fuzzy rules", "splits", "result")

#: Rule names of the passes that are not rules.
MANUAL, SPLIT, COMBINED = "manual", "split", "combined"


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


@dataclass
class State:
    """Who is matched with whom so far.

    Matches are numbered in the order made (the match id). Most are one-to-one, so each
    keeps its first expected and first item row in flat lists; the few with more rows
    (splits, combinations, some manual pairs) also have their full rows in ``multi``.
    """

    n_expected: int
    n_items: int
    e_group: np.ndarray = field(init=False)
    i_group: np.ndarray = field(init=False)
    e_tied: np.ndarray = field(init=False)
    i_tied: np.ndarray = field(init=False)
    rule_of: list[str] = field(default_factory=list)
    manual_of: list[bool] = field(default_factory=list)
    e_first: list[int] = field(default_factory=list)
    i_first: list[int] = field(default_factory=list)
    multi: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = field(default_factory=dict)
    #: (pass, expected row, item row) of every pair left out as a tie.
    ties: list[tuple[str, int, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.e_group = np.full(self.n_expected, -1, dtype=np.int64)
        self.i_group = np.full(self.n_items, -1, dtype=np.int64)
        self.e_tied = np.zeros(self.n_expected, dtype=bool)
        self.i_tied = np.zeros(self.n_items, dtype=bool)

    @property
    def count(self) -> int:
        """How many matches were made."""
        return len(self.rule_of)

    def group(self, group: int) -> tuple[str, bool, tuple[int, ...], tuple[int, ...]]:
        """Match ``group``: (rule, manual, expected rows, item rows)."""
        e_set, i_set = self.multi.get(group, ((self.e_first[group],), (self.i_first[group],)))
        return self.rule_of[group], self.manual_of[group], e_set, i_set

    def e_live(self) -> np.ndarray:
        return (self.e_group < 0) & ~self.e_tied

    def i_live(self) -> np.ndarray:
        return (self.i_group < 0) & ~self.i_tied

    def add(self, rule: str, manual: bool, e_rows: Sequence[int], i_rows: Sequence[int]) -> None:
        group = self.count
        e_set, i_set = tuple(int(r) for r in e_rows), tuple(int(r) for r in i_rows)
        self.rule_of.append(rule)
        self.manual_of.append(manual)
        self.e_first.append(e_set[0])
        self.i_first.append(i_set[0])
        if len(e_set) > 1 or len(i_set) > 1:
            self.multi[group] = (e_set, i_set)
        self.e_group[list(e_set)] = group
        self.i_group[list(i_set)] = group

    def add_pairs(self, rule: str, e_rows: np.ndarray, i_rows: np.ndarray) -> None:
        """Many one-to-one matches at once (the bulk of every run)."""
        first = self.count
        self.rule_of.extend([rule] * len(e_rows))
        self.manual_of.extend([False] * len(e_rows))
        self.e_first.extend(e_rows.tolist())
        self.i_first.extend(i_rows.tolist())
        ids = np.arange(first, self.count, dtype=np.int64)
        self.e_group[e_rows] = ids
        self.i_group[i_rows] = ids

    def tie(self, rule: str, pairs: Iterable[tuple[int, int]]) -> None:
        for e, i in pairs:
            self.ties.append((rule, int(e), int(i)))
            self.e_tied[e] = True
            self.i_tied[i] = True


# --------------------------------------------------------------------------- arguments

def _whole(value: Any, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return int(value)


def _checked_rules(rules: Iterable[Rule]) -> tuple[Rule, ...]:
    if isinstance(rules, str) or not isinstance(rules, Iterable):
        raise TypeError("rules must be a list of rules (objects with a name and a "
                        "candidates method)")
    checked = tuple(rules)
    for position, rule in enumerate(checked):
        if not isinstance(rule, Rule):
            raise TypeError(f"rules[{position}] ({rule!r}) is not a rule: it needs a name and "
                            "a candidates(expected, items, context) method")
    return checked


# --------------------------------------------------------------------------- resolving

def resolve(candidates: pd.DataFrame) -> tuple[pd.DataFrame, list[tuple[int, int]]]:
    """Accepted pairs (each side the other's only best) and the tied pairs.

    Rounds: accept every pair that is the single best of both its rows, drop their
    rows, again; when no pair is, the best pairs left are ties (their rows drop out).
    """
    if candidates.empty:
        return candidates, []
    cand = candidates.groupby(["expected", "item"], as_index=False, sort=False)["score"].max()
    e_count = cand["expected"].map(cand["expected"].value_counts())
    i_count = cand["item"].map(cand["item"].value_counts())
    single = ((e_count == 1) & (i_count == 1)).to_numpy()
    accepted = [cand[single]]
    rest = cand[~single]
    ties: list[tuple[int, int]] = []
    while len(rest):
        score = rest["score"]
        e_top = score == rest.groupby("expected")["score"].transform("max")
        i_top = score == rest.groupby("item")["score"].transform("max")
        e_ties = e_top.groupby(rest["expected"]).transform("sum") > 1
        i_ties = i_top.groupby(rest["item"]).transform("sum") > 1
        ok = e_top & i_top & ~e_ties & ~i_ties
        if ok.any():
            taken = rest[ok]
            accepted.append(taken)
            rest = rest[~rest["expected"].isin(taken["expected"])
                        & ~rest["item"].isin(taken["item"])]
            continue
        tied = rest[(e_top & e_ties) | (i_top & i_ties)]
        ties.extend(zip(tied["expected"].tolist(), tied["item"].tolist(), strict=True))
        rest = rest[~rest["expected"].isin(tied["expected"]) & ~rest["item"].isin(tied["item"])]
    return pd.concat(accepted, ignore_index=True), ties


def _run_rule(rule: Rule, expected: Side, items: Side, state: State, context: Context) -> None:
    e_live, i_live = state.e_live(), state.i_live()
    if not e_live.any() or not i_live.any():
        return
    found = rule.candidates(expected.norm[e_live], items.norm[i_live], context)
    if not isinstance(found, pd.DataFrame) or not set(PAIR_COLUMNS) <= set(found.columns):
        raise TypeError(f"rule {rule.name!r}: candidates() must return a DataFrame with the "
                        f"columns {', '.join(PAIR_COLUMNS)}")
    if found.empty:
        return
    pairs = found[list(PAIR_COLUMNS)].astype({"expected": np.int64, "item": np.int64,
                                              "score": np.float64})
    # A rule may only propose rows still open.
    pairs = pairs[e_live[pairs["expected"].to_numpy()] & i_live[pairs["item"].to_numpy()]]
    accepted, ties = resolve(pairs)
    state.add_pairs(rule.name, accepted["expected"].to_numpy(dtype=np.int64),
                    accepted["item"].to_numpy(dtype=np.int64))
    state.tie(rule.name, ties)
    logger.debug("pass %s: %d matched, %d tied pairs", rule.name, len(accepted), len(ties))


def _unique_references(expected: Side, items: Side, state: State) -> None:
    """The bulk of the reference pass as integer work: a reference that appears once on
    each side is a match. References repeated on a side are left to the general pass
    (where they tie)."""
    if expected.references is None or items.references is None:
        return
    # One dictionary over both sides: each reference becomes a small integer code.
    encoded = pa.chunked_array([expected.references, items.references]).dictionary_encode()
    # A missing reference has no code (-1).
    codes = np.concatenate([pc.fill_null(chunk.indices, -1).to_numpy().astype(np.int64)
                            for chunk in encoded.chunks])
    e_codes, i_codes = codes[:len(expected)], codes[len(expected):]
    e_open = state.e_live() & (e_codes >= 0)
    i_open = state.i_live() & (i_codes >= 0)
    size = int(codes.max()) + 1 if len(codes) else 0
    e_count = np.bincount(e_codes[e_open], minlength=size)
    i_count = np.bincount(i_codes[i_open], minlength=size)
    item_of = np.full(size, -1, dtype=np.int64)
    item_of[i_codes[i_open]] = np.flatnonzero(i_open)
    e_rows = np.flatnonzero(e_open)
    wanted = e_codes[e_rows]
    simple = (e_count[wanted] == 1) & (i_count[wanted] == 1)
    state.add_pairs(Reference.name, e_rows[simple], item_of[wanted[simple]])


# --------------------------------------------------------------------------- splits

def _sums_to(target: int, candidates: list[tuple[int, int]], max_parts: int,
             max_candidates: int) -> list[tuple[int, ...]]:
    """Up to two subsets (of 2..max_parts rows) of ``candidates`` ``(row, cents)``, in the
    order given (the closest first), whose cents add up to ``target`` exactly; only the
    first ``max_candidates`` are tried. Two found mean a tie, so the search stops there."""
    usable = [(row, cents) for row, cents in candidates
              if cents != 0 and (cents > 0) == (target > 0) and abs(cents) <= abs(target)]
    usable = usable[:max_candidates]
    if abs(sum(cents for _, cents in usable)) < abs(target):  # even all of them fall short
        return []
    found: list[tuple[int, ...]] = []
    for size in range(2, min(max_parts, len(usable)) + 1):
        for combo in itertools.combinations(usable, size):
            if sum(cents for _, cents in combo) == target:
                found.append(tuple(row for row, _ in combo))
                if len(found) == 2:
                    return found
    return found


def _searches(ones: pd.DataFrame, many: pd.DataFrame, window: int, max_parts: int,
              max_candidates: int) -> Iterator[tuple[int, list[tuple[int, ...]]]]:
    """For each row of ``ones`` (columns row, account, cents, day) that some rows of
    ``many`` could add up to: the row and the subsets found (:func:`_sums_to`).

    The candidates of a row are the rows of ``many`` on its account (when the account
    has two or more there) dated within the window, usable for its sign and size, the
    closest in date first (then by row), at most ``max_candidates``: one merge and a
    sort for all rows at once, so that Python searches only the rows whose candidates
    can reach their sum at all.
    """
    if ones.empty or many.empty:
        return
    accounts = many["account"].to_numpy()
    many = many[np.bincount(accounts)[accounts] >= 2]
    ones = ones[(ones["day"] >= 0) & (ones["cents"] != 0)]
    pairs = ones.merge(many[many["day"] >= 0], on="account", suffixes=("", "_m"))
    target, cents = pairs["cents"].to_numpy(), pairs["cents_m"].to_numpy()
    gap = np.abs(pairs["day_m"].to_numpy() - pairs["day"].to_numpy())
    usable = ((gap <= window) & (cents != 0) & ((cents > 0) == (target > 0))
              & (np.abs(cents) <= np.abs(target)))
    pairs = pairs[usable].assign(gap=gap[usable])
    pairs = pairs.sort_values(["row", "gap", "row_m"], kind="stable")
    pairs = pairs[pairs.groupby("row", sort=False).cumcount().to_numpy() < max_candidates]
    # Even all the candidates together fall short: no search needed.
    reach = pairs["cents_m"].abs().groupby(pairs["row"], sort=False).transform("sum")
    count = pairs.groupby("row", sort=False)["row_m"].transform("size")
    pairs = pairs[(count >= 2).to_numpy() & (reach >= pairs["cents"].abs()).to_numpy()]
    if pairs.empty:
        return
    rows = pairs["row"].to_numpy()
    starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])
    ends = np.r_[starts[1:], len(rows)]
    targets = pairs["cents"].to_numpy()
    others, other_cents = pairs["row_m"].tolist(), pairs["cents_m"].tolist()
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        options = list(zip(others[start:end], other_cents[start:end], strict=True))
        subsets = _sums_to(int(targets[start]), options, max_parts, max_candidates)
        if subsets:
            yield int(rows[start]), subsets


def _split_pass(expected: Side, items: Side, state: State, context: Context,
                max_parts: int, max_candidates: int) -> None:
    """One expected line paid as several items (split) and several lines collected as one
    item (combined): same account, dates within the window, sums equal to the cent."""
    keys = context.account_keys()
    if not keys or max_parts < 2:
        return
    e_rows = expected.norm[state.e_live()].dropna(subset=keys)
    i_rows = items.norm[state.i_live()].dropna(subset=keys)
    if e_rows.empty or i_rows.empty:
        return
    both = pd.concat([e_rows[keys], i_rows[keys]], ignore_index=True)
    codes, _ = pd.factorize(pd.MultiIndex.from_frame(both))
    dated = "date" in context.roles
    sides = {}
    for name, frame, account in (("e", e_rows, codes[:len(e_rows)]),
                                 ("i", i_rows, codes[len(e_rows):])):
        sides[name] = pd.DataFrame({
            "row": frame["row"].to_numpy(dtype=np.int64), "account": account,
            "cents": frame["cents"].to_numpy(dtype=np.int64),
            "day": banking_index(frame["date"].to_numpy()) if dated
            else np.zeros(len(frame), dtype=np.int64)})
    proposals: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = []
    tied: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = []
    for ones, many, kind in ((sides["e"], sides["i"], SPLIT), (sides["i"], sides["e"], COMBINED)):
        for row, subsets in _searches(ones, many, context.date_window, max_parts,
                                      max_candidates):
            for subset in subsets:
                pair = ((row,), subset) if kind == SPLIT else (subset, (row,))
                (proposals if len(subsets) == 1 else tied).append((kind, *pair))
    # A row in two proposals (one line, two ways to make its sum) is a tie, not a match.
    e_uses: defaultdict[int, int] = defaultdict(int)
    i_uses: defaultdict[int, int] = defaultdict(int)
    for _, e_set, i_set in proposals:
        for e in e_set:
            e_uses[e] += 1
        for i in i_set:
            i_uses[i] += 1
    for kind, e_set, i_set in proposals:
        if all(e_uses[e] == 1 for e in e_set) and all(i_uses[i] == 1 for i in i_set):
            state.add(kind, False, e_set, i_set)
        else:
            tied.append((kind, e_set, i_set))
    for kind, e_set, i_set in tied:
        open_pairs = [(e, i) for e in e_set for i in i_set
                      if state.e_group[e] < 0 and state.i_group[i] < 0]
        state.tie(kind, open_pairs)


# --------------------------------------------------------------------------- decisions

def _apply_pairs(decisions: list[dict[str, Any]], expected: Side, items: Side,
                 state: State) -> list[dict[str, Any]]:
    """Make the manual pairs of ``decisions``; returns those that could not be applied."""
    pairs = [d for d in decisions if d["action"] == "pair"]
    if not pairs:
        return []
    e_rows = {key: row for row, key in enumerate(expected.keys())}
    i_rows = {key: row for row, key in enumerate(items.keys())}
    stale = []
    for decision in pairs:
        e_set = [e_rows.get(key) for key in decision["expected"]]
        i_set = [i_rows.get(key) for key in decision["items"]]
        if (None in e_set or None in i_set or any(state.e_group[e] >= 0 for e in e_set)
                or any(state.i_group[i] >= 0 for i in i_set)):
            stale.append(decision)
            continue
        state.add(decision["method"], True, e_set, i_set)  # type: ignore[arg-type]
    return stale


# --------------------------------------------------------------------------- match

class _Progress:
    """A tqdm.auto bar over the steps of one run, or nothing when it is off."""

    def __init__(self, progress: bool | None, rows: int) -> None:
        if progress is not None and not isinstance(progress, bool):
            raise TypeError(f"progress must be True, False or None, got {progress!r}")
        self._bar = None
        if progress or (progress is None and rows >= PROGRESS_ROWS):
            from tqdm.auto import tqdm

            self._bar = tqdm(total=len(_STEPS), desc="matching", unit="step", leave=False)

    def step(self, name: str) -> None:
        """``name`` (one of :data:`_STEPS`) starts; the one before it is done."""
        if self._bar is not None:
            self._bar.n = _STEPS.index(name)
            self._bar.set_postfix_str(name)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()



def match(expected: pd.DataFrame, items: pd.DataFrame, *, columns: Mapping[str, str],
          date_window: int = 2, amount_tolerance: Decimal | str | int = 0,
          rules: Iterable[Rule] = (), journal: Any = None, ledger: str = "default",
          item_columns: Mapping[str, str] | None = None, max_parts: int = 4,
          max_candidates: int = 12, progress: bool | None = None) -> Any:
    """Match the analyst's expected ledger against paynb items, strictest pass first.

    Args:
        expected: any DataFrame of expected payments (read from CSV, Excel, a database).
        items: a paynb item frame (``client.ach.list()``, ``client.rcc.list()``...).
        columns: which column of ``expected`` plays each role: ``amount`` (required),
            ``reference``, ``account``, ``routing``, ``date``, ``name``, ``id`` (see
            :data:`paynb.matching.ROLES`); roles left out are not used. A column that
            is not in ``expected``, or an unknown role, is an error naming it.
        date_window: dates match when at most this many banking days apart
            (:func:`paynb.calendar.banking_days_between`).
        amount_tolerance: adds the fuzzy rule :class:`AmountWithin` with this
            tolerance (an exact amount: Decimal, string or int) when above 0.
        rules: more rules, run after the built-in ones in the order given
            (see :class:`Rule`).
        journal: a :class:`paynb.journal.Journal` (or its path) keeping the manual
            pairs and resolutions taken on the result, applied again on every run;
            ``None`` keeps them in a journal in memory for this result only.
        ledger: the name of this ledger in the journal (several may share one).
        item_columns: the item frame's column for a role, where it is not the usual
            one (see :data:`paynb.matching.ITEM_COLUMNS`).
        max_parts, max_candidates: the bound of the split and combined search: at
            most ``max_parts`` rows add up to one, chosen among the
            ``max_candidates`` of the same account closest in date.
        progress: a progress bar (tqdm.auto) over the passes: ``None`` shows it for
            large inputs (100,000 rows on both sides together, about a second or more),
            ``True`` always, ``False`` never.

    The passes: the manual pairs kept in the journal; the same reference number;
    the same account + exact amount + dates within the window; the fuzzy rules
    (amount within the tolerance, then name similarity when ``name`` is mapped,
    then ``rules``); splits and combinations. Every pass sees only the rows no
    earlier pass matched, and a row is never matched twice: two candidates that
    are equally good are a *tie*, neither is matched and both are reported.

    Returns:
        A :class:`MatchResult`.
    """
    from paynb.journal import Journal
    from paynb.matching._result import build_result

    checked = check_columns(expected, columns)
    settings = Settings(
        columns=checked, date_window=_whole(date_window, "date_window", 0),
        amount_tolerance=Decimal(tolerance_cents(amount_tolerance)) / 100,
        rules=_checked_rules(rules), ledger=str(ledger),
        item_columns=dict(item_columns) if item_columns is not None else None,
        max_parts=_whole(max_parts, "max_parts", 1),
        max_candidates=_whole(max_candidates, "max_candidates", 2))
    if journal is None:
        journal = Journal(":memory:")
    elif not isinstance(journal, Journal):
        journal = Journal(journal)
    decisions = journal.match_decisions(settings.ledger)

    bar = _Progress(progress, len(expected) + len(items))
    try:
        bar.step("reading")
        e_side = expected_side(expected, checked)
        i_side = item_side(items, settings.item_columns)
        last_four = finish_accounts(e_side, i_side)
        roles = frozenset((e_side.roles & i_side.roles) | {"amount"})
        context = Context(date_window=settings.date_window, last_four=last_four, roles=roles)
        if last_four and "account" in roles:
            logger.info("match: the items' account numbers are masked, so accounts compare by "
                        "their last four digits%s", " and the routing number"
                        if "routing" in roles else "")
        state = State(len(e_side), len(i_side))
        stale = _apply_pairs(decisions, e_side, i_side, state)
        bar.step("reference")
        if "reference" in roles:
            _unique_references(e_side, i_side, state)
        _run_rule(Reference(), e_side, i_side, state, context)
        bar.step("account+amount+date")
        _run_rule(AccountAmountDate(), e_side, i_side, state, context)
        bar.step("fuzzy rules")
        fuzzy: list[Rule] = []
        if settings.amount_tolerance > 0:
            fuzzy.append(AmountWithin(settings.amount_tolerance))
        if "name" in roles:
            fuzzy.append(NameSimilar())
        fuzzy.extend(settings.rules)
        if fuzzy:
            # Only the rows left by the exact passes need their names read.
            e_side.read_names(state.e_live())
            i_side.read_names(state.i_live())
        for rule in fuzzy:
            _run_rule(rule, e_side, i_side, state, context)
        bar.step("splits")
        _split_pass(e_side, i_side, state, context, settings.max_parts, settings.max_candidates)
        bar.step("result")
        return build_result(e_side, i_side, state, context, settings, journal,
                            decisions, stale, expected, items)
    finally:
        bar.close()
