"""``paynb.match``: the passes, strictest first, each row matched at most once."""

from __future__ import annotations

import itertools
import logging
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from paynb.journal import Journal
from paynb.matching._columns import Side, check_columns, expected_side, finish_accounts, item_side
from paynb.matching._dates import check_dayfirst
from paynb.matching._result import MatchResult
from paynb.matching._rules import (
    NO_DAY,
    PAIR_COLUMNS,
    AccountAmountDate,
    AmountWithin,
    Context,
    NameSimilar,
    Reference,
    Rule,
    _Coded,
    coded,
    tolerance_cents,
)
from paynb.matching._run import MatchRun, build_run
from paynb.matching._state import Settings, State

__all__ = ["match"]

logger = logging.getLogger("paynb.matching")

#: From this many rows (both sides together) a run takes about a second or more, and
#: ``progress=None`` shows a progress bar.
PROGRESS_ROWS = 100_000
#: The steps the progress bar counts.
_STEPS = ("reading", "reference", "account+amount+date", "fuzzy rules", "splits", "result")

#: Rule names of the passes that are not rules (manual pairs keep their decision's method).
SPLIT, COMBINED = "split", "combined"


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


def resolve(candidates: pd.DataFrame) -> tuple[pd.DataFrame, list[tuple[int, int]]]:
    """Accepted pairs (each side the other's only best) and the tied pairs.

    Rounds: accept every pair that is the single best of both its rows, drop their
    rows, again; when no pair is, the best pairs left are ties (their rows drop out).
    """
    if candidates.empty:
        return candidates, []
    e = candidates["expected"].to_numpy(dtype=np.int64)
    i = candidates["item"].to_numpy(dtype=np.int64)
    score = candidates["score"].to_numpy(dtype=np.float64)
    # A pair proposed twice counts once, with its best score (in the order first proposed).
    order = np.lexsort((i, e))  # stable: the first proposal of a pair comes first
    starts = np.flatnonzero(np.r_[True, (e[order][1:] != e[order][:-1])
                                  | (i[order][1:] != i[order][:-1])])
    best = np.maximum.reduceat(score[order], starts)
    by_first = np.argsort(order[starts], kind="stable")
    kept = order[starts][by_first]
    e, i, score = e[kept], i[kept], best[by_first]
    # The bulk: pairs whose rows have no other candidate, in numpy.
    single = (np.bincount(e)[e] == 1) & (np.bincount(i)[i] == 1)
    cand = pd.DataFrame({"expected": e, "item": i, "score": score})
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


def _run_rule(rule: Rule, coded: tuple[pd.DataFrame, pd.DataFrame], expected: Side,
              items: Side, state: State, context: Context,
              names: Sequence[np.ndarray] = ()) -> None:
    e_live, i_live = state.e_live(), state.i_live()
    if not e_live.any() or not i_live.any():
        return
    if isinstance(rule, _Coded) and type(rule).candidates is _Coded.candidates:
        # A built-in rule: on the integer frames coded once for the run (with the names of
        # the open rows, read by then, for the name rule).
        e_frame, i_frame = coded[0][e_live], coded[1][i_live]
        if isinstance(rule, NameSimilar) and names:
            e_frame = e_frame.assign(name=names[0][e_live])
            i_frame = i_frame.assign(name=names[1][i_live])
        found = rule.coded_candidates(e_frame, i_frame, context)
    else:
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


def _unique_references(coded: tuple[pd.DataFrame, pd.DataFrame], state: State) -> None:
    """The bulk of the reference pass as integer work: a reference that appears once on
    each side is a match. References repeated on a side are left to the general pass
    (where they tie)."""
    e_codes, i_codes = (frame["reference"].to_numpy() for frame in coded)
    e_open, i_open = state.e_live() & (e_codes >= 0), state.i_live() & (i_codes >= 0)
    size = int(max(e_codes.max(initial=-1), i_codes.max(initial=-1))) + 1
    e_count, i_count = (np.bincount(codes[open_], minlength=size)
                        for codes, open_ in ((e_codes, e_open), (i_codes, i_open)))
    item_of = np.full(size, -1, dtype=np.int64)
    item_of[i_codes[i_open]] = np.flatnonzero(i_open)
    e_rows = np.flatnonzero(e_open)
    wanted = e_codes[e_rows]
    simple = (e_count[wanted] == 1) & (i_count[wanted] == 1)
    state.add_pairs(Reference.name, e_rows[simple], item_of[wanted[simple]])


def _searches(ones: pd.DataFrame, many: pd.DataFrame, window: int, max_parts: int,
              max_candidates: int) -> Iterator[tuple[int, list[tuple[int, ...]]]]:
    """For each row of ``ones`` (columns row, account, cents, day) that some rows of
    ``many`` could add up to: the row and the subsets found (:func:`_subset_sums`).

    The candidates of a row are the rows of ``many`` on its account (when the account
    has two or more there) dated within the window, usable for its sign and size, the
    closest in date first (then by row), at most ``max_candidates``: one merge and a
    sort for all rows at once, so that Python searches only the rows whose candidates
    can reach their sum at all.
    """
    if ones.empty or many.empty:
        return
    # Only accounts with two or more rows of ``many`` (codes compacted for bincount).
    accounts = pd.factorize(many["account"].to_numpy())[0]
    many = many[np.bincount(accounts)[accounts] >= 2]
    ones = ones[(ones["day"] != NO_DAY) & (ones["cents"] != 0)]
    pairs = ones.merge(many[many["day"] != NO_DAY], on="account", suffixes=("", "_m"))
    row, other = pairs["row"].to_numpy(), pairs["row_m"].to_numpy()
    target, cents = pairs["cents"].to_numpy(), pairs["cents_m"].to_numpy()
    gap = np.abs(pairs["day_m"].to_numpy() - pairs["day"].to_numpy())
    usable = ((gap <= window) & (cents != 0) & ((cents > 0) == (target > 0))
              & (np.abs(cents) <= np.abs(target)))
    # Per row, the closest first (then by row), at most max_candidates: numpy, not groupby.
    order = np.flatnonzero(usable)
    order = order[np.lexsort((other[order], gap[order], row[order]))]
    row, other, target, cents = row[order], other[order], target[order], cents[order]
    starts = _starts(row)
    rank = np.arange(len(row)) - np.repeat(starts, np.diff(np.r_[starts, len(row)]))
    kept = rank < max_candidates
    row, other, target, cents = row[kept], other[kept], target[kept], cents[kept]
    starts = _starts(row)
    sizes = np.diff(np.r_[starts, len(row)])
    # Even all the candidates together fall short: no search needed.
    reach = np.add.reduceat(np.abs(cents), starts) if len(row) else np.zeros(0, np.int64)
    searched = (sizes >= 2) & (reach >= np.abs(target[starts]))
    starts, sizes = starts[searched], sizes[searched]
    if not len(starts):
        return
    targets = target[starts]
    found: dict[int, list[tuple[int, ...]]] = {}
    for k in np.unique(sizes).tolist():
        chosen = np.flatnonzero(sizes == k)
        for position, subsets in _subset_sums(starts[chosen], k, targets[chosen], other,
                                              cents, max_parts):
            found[int(row[starts[chosen[position]]])] = subsets
    for key in sorted(found):
        yield key, found[key]


def _starts(sorted_rows: np.ndarray) -> np.ndarray:
    """Where each run of equal values starts in ``sorted_rows``."""
    return np.flatnonzero(np.r_[True, sorted_rows[1:] != sorted_rows[:-1]]) if len(
        sorted_rows) else np.zeros(0, dtype=np.int64)


def _subset_sums(starts: np.ndarray, k: int, targets: np.ndarray, others: np.ndarray,
                 cents: np.ndarray, max_parts: int) -> Iterator[tuple[int, list[tuple[int, ...]]]]:
    """Rows with ``k`` candidates each (``others[start:start + k]``, closest first): the
    first two subsets (of 2..max_parts candidates, smallest first, then in
    itertools.combinations order) whose cents add up to the row's target exactly, for
    the rows with any; two found mean a tie (every subset of every row summed at once, in
    int64, exact)."""
    # For each subset size 2..max_parts (at most k): every subset of range(k) of that size,
    # one per row, in itertools.combinations order.
    combos = [np.array(list(itertools.combinations(range(k), size)), dtype=np.int64)
              for size in range(2, min(max_parts, k) + 1)]
    n_combos = sum(len(c) for c in combos)
    # Rows in batches, so that the sums stay a few million cells.
    step = max(1, 2_000_000 // max(n_combos, 1))
    for begin in range(0, len(starts), step):
        batch = starts[begin:begin + step]
        table = cents[batch[:, None] + np.arange(k)]
        sums = np.concatenate([table[:, combo].sum(axis=2) for combo in combos], axis=1)
        hit = sums == targets[begin:begin + step, None]
        any_hit = np.flatnonzero(hit.any(axis=1))
        if not len(any_hit):
            continue
        hit = hit[any_hit]
        first = hit.argmax(axis=1)
        hit[np.arange(len(hit)), first] = False
        second = np.where(hit.any(axis=1), hit.argmax(axis=1), -1)
        # Each pick as the candidates' rows: one gather per subset size, not per row.
        offsets = np.cumsum([0] + [len(c) for c in combos])
        subsets: list[list[tuple[int, ...]]] = [[] for _ in range(len(any_hit))]
        base = batch[any_hit]
        for picks, which in ((first, np.ones(len(any_hit), dtype=bool)), (second, second >= 0)):
            for size, combo in enumerate(combos):
                chosen = np.flatnonzero(which & (picks >= offsets[size])
                                        & (picks < offsets[size + 1]))
                rows = others[base[chosen, None] + combo[picks[chosen] - offsets[size]]]
                for position, subset in zip(chosen.tolist(), rows.tolist(), strict=True):
                    subsets[position].append(tuple(subset))
        for position, found in zip(any_hit.tolist(), subsets, strict=True):
            yield begin + position, found


def _split_pass(coded: tuple[pd.DataFrame, pd.DataFrame], state: State, context: Context,
                max_parts: int, max_candidates: int) -> None:
    """One expected line paid as several items (split) and several lines collected as one
    item (combined): same account, dates within the window, sums equal to the cent."""
    if not context.account_keys() or max_parts < 2:
        return
    e_open, i_open = (frame.loc[live & (frame["account"].to_numpy() >= 0),
                                ["row", "account", "cents", "day"]]
                      for frame, live in ((coded[0], state.e_live()), (coded[1], state.i_live())))
    if "date" not in context.roles:
        e_open, i_open = e_open.assign(day=0), i_open.assign(day=0)
    if e_open.empty or i_open.empty:
        return
    proposals: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = []
    tied: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = []
    for ones, many, kind in ((e_open, i_open, SPLIT), (i_open, e_open, COMBINED)):
        for row, subsets in _searches(ones, many, context.date_window, max_parts,
                                      max_candidates):
            for subset in subsets:
                pair = ((row,), subset) if kind == SPLIT else (subset, (row,))
                (proposals if len(subsets) == 1 else tied).append((kind, *pair))
    # A row in two proposals (one line, two ways to make its sum) is a tie, not a match.
    # Counted over all proposals at once; only the rows used twice (usually none) are
    # looked at proposal by proposal.
    e_twice, i_twice = ({row for row, uses in Counter(itertools.chain.from_iterable(
        p[side] for p in proposals)).items() if uses > 1} for side in (1, 2))
    accepted: dict[str, list[tuple[tuple[int, ...], tuple[int, ...]]]] = {SPLIT: [], COMBINED: []}
    for kind, e_set, i_set in proposals:
        if e_twice.isdisjoint(e_set) and i_twice.isdisjoint(i_set):
            accepted[kind].append((e_set, i_set))
        else:
            tied.append((kind, e_set, i_set))
    for kind, groups in accepted.items():
        state.add_groups(kind, False, groups)
    for kind, e_set, i_set in tied:
        open_pairs = [(e, i) for e in e_set for i in i_set
                      if state.e_group[e] < 0 and state.i_group[i] < 0]
        state.tie(kind, open_pairs)


def _read_names(expected: Side, items: Side, state: State, *, own_rules: bool
                ) -> list[np.ndarray]:
    """The names of the rows still open on each side (None elsewhere), for the name rule;
    with ``own_rules``, also filled into the sides' ``name`` column for your own rules."""
    names = []
    for side, live in ((expected, state.e_live()), (items, state.i_live())):
        rows = np.flatnonzero(live)
        found = side.names_at(rows)
        column = np.full(len(side), None, dtype=object)
        if found is not None:
            column[rows] = found.to_numpy(zero_copy_only=False)
        names.append(column)
        if own_rules:  # your own rules see them in their frames
            side.read_names(live)
    return names


def _apply_pairs(decisions: list[dict[str, Any]], expected: Side, items: Side,
                 state: State) -> list[dict[str, Any]]:
    """Make the manual pairs of ``decisions``; returns those that could not be applied."""
    pairs = [d for d in decisions if d["action"] == "pair"]
    if not pairs:
        return []
    e_rows, i_rows = ({key: row for row, key in enumerate(side.keys)} for side in (expected, items))
    stale = []
    for decision in pairs:
        e_set = [e_rows.get(key) for key in decision["expected"]]
        i_set = [i_rows.get(key) for key in decision["items"]]
        if (None in e_set or None in i_set or any(state.e_group[e] >= 0 for e in e_set)
                or any(state.i_group[i] >= 0 for i in i_set)):
            stale.append(decision)
            continue
        state.add_groups(decision["method"], True, [(e_set, i_set)])  # type: ignore[list-item]
    return stale


class _Progress:
    """A tqdm.auto bar over the steps of one run, or nothing when it is off (tqdm.auto,
    which looks for ipywidgets, is imported only then)."""

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
          max_candidates: int = 12, progress: bool | None = None,
          dayfirst: bool | None = None, exact_references: bool = False) -> MatchResult:
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
        dayfirst: how dates written as text with the day and month as numbers are read:
            ``True`` day first (``19.11.2026``), ``False`` month first (``11/19/2026``),
            ``None`` the one order every date of the column allows (a column that reads
            both ways is an error asking for ``dayfirst=``). ISO 8601 dates, and dates
            with the month's name, read the same either way (docs/matching.md lists the
            formats).
        exact_references: compare reference numbers as written; by default they
            compare trimmed and ignoring case (``" ab-1"`` matches ``"AB-1"``).

    The passes: the manual pairs kept in the journal; the same reference number;
    the same account + exact amount + dates within the window; the fuzzy rules
    (amount within the tolerance, then name similarity when ``name`` is mapped,
    then ``rules``); splits and combinations. Every pass sees only the rows no
    earlier pass matched, and a row is never matched twice: two candidates that
    are equally good are a *tie*, neither is matched and both are reported.

    Returns:
        A :class:`MatchResult`.
    """
    checked = check_columns(expected, columns)
    settings = Settings(
        columns=checked, date_window=_whole(date_window, "date_window", 0),
        amount_tolerance=Decimal(tolerance_cents(amount_tolerance)) / 100,
        rules=_checked_rules(rules), ledger=str(ledger),
        item_columns=dict(item_columns) if item_columns is not None else None,
        max_parts=_whole(max_parts, "max_parts", 1),
        max_candidates=_whole(max_candidates, "max_candidates", 2),
        dayfirst=check_dayfirst(dayfirst),
        exact_references=exact_references)
    if not isinstance(exact_references, bool):
        raise TypeError(f"exact_references must be True or False, got {exact_references!r}")
    if not isinstance(journal, Journal):
        journal = Journal(":memory:" if journal is None else journal)
    first = _run(expected, items, settings, journal, progress)
    return MatchResult(first, journal, lambda: _run(expected, items, settings, journal, None))


def _run(expected: pd.DataFrame, items: pd.DataFrame, settings: Settings, journal: Journal,
         progress: bool | None) -> MatchRun:
    """One run of the passes over ``expected`` and ``items``, with the decisions
    ``journal`` holds now (again after each decision taken on the result)."""
    decisions = journal.match_decisions.in_force(settings.ledger)
    bar = _Progress(progress, len(expected) + len(items))
    try:
        bar.step("reading")
        e_side = expected_side(expected, settings.columns, dayfirst=settings.dayfirst,
                               exact_references=settings.exact_references)
        i_side = item_side(items, settings.item_columns, settings.columns,
                           dayfirst=settings.dayfirst, exact_references=settings.exact_references)
        last_four = finish_accounts(e_side, i_side)
        roles = frozenset((e_side.roles & i_side.roles) | {"amount"})
        context = Context(date_window=settings.date_window, last_four=last_four, roles=roles)
        if last_four and "account" in roles:
            logger.info("match: the items' account numbers are masked, so accounts compare by "
                        "their last four digits%s", " and the routing number"
                        if "routing" in roles else "")
        coded_sides = coded(e_side.norm, i_side.norm, context)
        state = State(len(e_side), len(i_side))
        stale = _apply_pairs(decisions, e_side, i_side, state)
        bar.step("reference")
        _unique_references(coded_sides, state)
        _run_rule(Reference(), coded_sides, e_side, i_side, state, context)
        bar.step("account+amount+date")
        _run_rule(AccountAmountDate(), coded_sides, e_side, i_side, state, context)
        bar.step("fuzzy rules")
        if settings.amount_tolerance > 0:
            _run_rule(AmountWithin(settings.amount_tolerance), coded_sides, e_side, i_side, state,
                      context)
        # Names are read only for the rows the passes before left (the amount rule needs none).
        named: list[Rule] = [NameSimilar()] if "name" in roles else []
        names = (_read_names(e_side, i_side, state, own_rules=bool(settings.rules))
                 if named or settings.rules else [])
        for rule in [*named, *settings.rules]:
            _run_rule(rule, coded_sides, e_side, i_side, state, context, names)
        bar.step("splits")
        _split_pass(coded_sides, state, context, settings.max_parts, settings.max_candidates)
        bar.step("result")
        return build_run(e_side, i_side, state, context, settings, decisions, stale)
    finally:
        bar.close()
