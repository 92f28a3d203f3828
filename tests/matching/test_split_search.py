"""The vectorised split/combined candidate search finds what the per-account loop it
replaced found (that loop, and the per-row subset search, are kept here, as the
reference)."""

from __future__ import annotations

import itertools

import hypothesis.strategies as st
import numpy as np
import pandas as pd
from hypothesis import given, settings

from paynb.matching._engine import _searches
from paynb.matching._rules import NO_DAY


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


def reference_searches(ones: pd.DataFrame, many: pd.DataFrame, window: int, max_parts: int,
                       max_candidates: int) -> dict[int, list[tuple[int, ...]]]:
    """The search as it was: per account, per row, sorted in Python."""
    found = {}
    for account, group in ones.groupby("account"):
        others = many[many["account"] == account]
        if len(others) < 2:
            continue
        for row, cents, day in zip(group["row"], group["cents"], group["day"], strict=True):
            near = sorted((abs(o_day - day), o_row, o_cents) for o_row, o_cents, o_day in
                          zip(others["row"], others["cents"], others["day"], strict=True)
                          if NO_DAY not in (day, o_day) and abs(o_day - day) <= window)
            subsets = _sums_to(int(cents), [(int(r), int(c)) for _, r, c in near], max_parts,
                               max_candidates)
            if subsets:
                found[int(row)] = subsets
    return found


def side(draw: st.DrawFn, size: int) -> pd.DataFrame:
    return pd.DataFrame({
        "row": np.arange(size, dtype=np.int64) * 3 + draw(st.integers(0, 2)),
        "account": np.array(draw(st.lists(st.integers(0, 3), min_size=size, max_size=size)),
                            dtype=np.int64),
        "cents": np.array(draw(st.lists(st.integers(-300, 600), min_size=size,
                                        max_size=size)), dtype=np.int64),
        # -1 stands for a missing date (NO_DAY)
        "day": np.array([NO_DAY if d < 0 else d for d in draw(
            st.lists(st.integers(-1, 6), min_size=size, max_size=size))], dtype=np.int64)})


@st.composite
def searches(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame, int, int, int]:
    ones = side(draw, draw(st.integers(0, 12)))
    many = side(draw, draw(st.integers(0, 25)))
    # Small amounts on the many side so that sums are found often.
    many["cents"] = many["cents"] // draw(st.sampled_from([1, 3, 7]))
    return (ones, many, draw(st.integers(0, 3)), draw(st.integers(2, 4)),
            draw(st.integers(2, 6)))


@settings(max_examples=300, deadline=None)
@given(searches())
def test_the_vectorised_search_finds_what_the_loop_found(case) -> None:
    ones, many, window, max_parts, max_candidates = case
    got = dict(_searches(ones, many, window, max_parts, max_candidates))
    assert got == reference_searches(ones, many, window, max_parts, max_candidates)


def test_a_split_within_the_window_is_found_and_one_outside_is_not() -> None:
    ones = pd.DataFrame({"row": [0, 1], "account": [0, 0], "cents": [300, 500],
                         "day": [10, 10]})
    many = pd.DataFrame({"row": [0, 1, 2, 3], "account": [0, 0, 0, 0],
                         "cents": [100, 200, 250, 250], "day": [10, 12, 13, 9]})
    # 300 = 100 + 200 (days 0 and 2 away); 500 = 250 + 250 needs row 2, three days away.
    assert dict(_searches(ones, many, 2, 4, 12)) == {0: [(0, 1)]}
    assert dict(_searches(ones, many, 3, 4, 12)) == {0: [(0, 1)], 1: [(3, 2)]}
    assert list(itertools.islice(_searches(ones, many.iloc[:0], 3, 4, 12), 1)) == []
