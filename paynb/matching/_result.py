"""The outcome of :func:`paynb.match`: frames, summary, plot, Excel export, decisions."""

from __future__ import annotations

import html
import logging
import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from paynb._charts import CURRENCY, new_axes, no_items, thousands
from paynb._excel import MONEY_FORMAT, write_excel
from paynb.codes import STATUS_NAMES, code_label
from paynb.matching._columns import Side
from paynb.matching._rules import banking_index
from paynb.matching._state import Settings, State

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from paynb.journal import Journal
    from paynb.matching._rules import Context

__all__ = ["MatchResult"]

logger = logging.getLogger("paynb.matching")

_AMOUNT = pa.decimal128(18, 2)
_RETURNED = ("R", "I", "B")  # the statuses the return charts count as returns
#: Exception reasons, in the order they are listed.
REASONS = ("returned", "voided", "amount differs")
#: The plot's outcomes: their colours (paynb's palette) and labels.
_OUTCOME_COLORS = {"unmatched": "#C44E52", "tied": "#8172B3", "exceptions open": "#DD8452",
                   "matched": "#55A868"}
_OUTCOME_LABELS = {"unmatched": "Unmatched", "tied": "Tied (for you to decide)",
                   "exceptions open": "Matched, open exception",
                   "matched": "Matched, nothing open"}


def decimals(cents: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """Exact int64 cents as a decimal128(18, 2) array (no float, no Python loop)."""
    cents = np.ascontiguousarray(cents, dtype=np.int64)
    # decimal128 is a 16-byte two's complement integer: low word, then the sign.
    words = np.empty((len(cents), 2), dtype=np.int64)
    words[:, 0] = cents
    words[:, 1] = np.where(cents < 0, -1, 0)
    array = pa.Array.from_buffers(_AMOUNT, len(cents), [None, pa.py_buffer(words.tobytes())])
    return pd.arrays.ArrowExtensionArray(array)


def _missing(value: Any) -> bool:
    """A missing scalar (None, NA, NaN), without pandas' general isna per value."""
    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


def _str_objects(values: np.ndarray) -> np.ndarray:
    """``values.astype(str)`` as an object array of Python str; integers and objects by
    ``str`` in Python, quicker than numpy's fixed-width text for a few thousand."""
    if values.dtype.kind in "iuO":
        return np.array([str(v) for v in values.tolist()] + [None], dtype=object)[:-1]
    return values.astype(str).astype(object)


def _labels(frame: pd.DataFrame, rows: np.ndarray) -> np.ndarray:
    return frame.index.to_numpy()[rows]


class MatchResult:
    """What :func:`paynb.match` found.

    Frames (all amounts exact ``decimal128(18, 2)``):

    - ``matched``: one row per expected line and item matched (a split has one row per
      item, a combination one per expected line): ``match_id``, ``rule`` (the pass
      that matched it: ``reference``, ``account+amount+date``, a fuzzy rule's name,
      ``split``, ``combined`` or ``manual``), ``manual``, ``expected_row`` (the label
      in the expected frame), ``item_id``, both references, amounts and dates,
      ``amount_difference`` (items minus expected, over the whole match) and
      ``date_difference`` (banking days from the expected date to the item's);
    - ``exceptions``: matches that need a look: ``returned`` (the item was returned,
      invalid or blocked after matching), ``voided``, ``amount differs``; each names
      its rows as the analyst knows them, one value per row joined with ", " for a
      split or a combination: ``expected_rows`` (labels), ``expected_ids`` (the
      ``id`` column, when mapped), ``expected_references``, ``expected_names`` (when
      mapped), ``item_ids``, ``item_references``, ``item_names`` (as the service
      holds them); with ``resolved``, ``note``, ``decided`` and ``decided_by`` from
      the decisions kept in the journal;
    - ``unmatched_expected``, ``unmatched_items``: the rows of the inputs nobody
      matched (all their columns), with ``tied_with`` naming the equally good
      candidates of a tie;
    - ``ties``: the pairs left out because another was equally good;
    - ``summary``: counts and exact sums per category.

    Decisions: :meth:`pair` and :meth:`resolve` record a decision in the journal and
    bring the result up to date; a later :func:`paynb.match` with the same journal
    and ledger applies them again.
    """

    matched: pd.DataFrame
    exceptions: pd.DataFrame
    unmatched_expected: pd.DataFrame
    unmatched_items: pd.DataFrame
    ties: pd.DataFrame
    summary: pd.DataFrame
    #: The decisions of the journal this run applied (pairs and resolutions).
    decisions: pd.DataFrame
    #: Decisions the journal holds that no longer fit the data (a row gone, or already
    #: matched another way); they are kept in the journal.
    stale_decisions: pd.DataFrame
    #: How accounts were compared: "full account number", "last four digits" (masked
    #: items), or "not compared" (no account column mapped).
    account_match: str
    journal: Journal

    # ------------------------------------------------------------------ building

    @classmethod
    def _build(cls, expected: Side, items: Side, state: State, context: Context,
               settings: Settings, journal: Journal, decisions: list[dict[str, Any]],
               stale: list[dict[str, Any]], rerun: Callable[[], MatchResult]) -> MatchResult:
        self = cls.__new__(cls)
        self._expected, self._items, self._state = expected, items, state
        self._settings, self._rematch = settings, rerun
        self.journal = journal
        if "account" not in context.roles:
            self.account_match = "not compared"
        elif context.last_four:
            self.account_match = "last four digits" + (
                " + routing number" if "routing" in context.roles else "")
        else:
            self.account_match = "full account number" + (
                " + routing number" if "routing" in context.roles else "")
        self.matched = self._matched_frame()
        self.exceptions = self._exceptions_frame(decisions)
        self.unmatched_expected = self._unmatched(expected, state.e_group, "expected")
        self.unmatched_items = self._unmatched(items, state.i_group, "items")
        self.ties = self._ties_frame()
        self.decisions = pd.DataFrame(decisions, columns=["id", "when", "by", "ledger",
                                                          "action", "method", "expected",
                                                          "items", "reason", "note"])
        self.stale_decisions = self.decisions[self.decisions["id"].isin(
            [d["id"] for d in stale])].reset_index(drop=True)
        if stale:
            logger.warning("match: %d kept decision(s) no longer fit the data (see "
                           "result.stale_decisions)", len(stale))
        self.summary = self._summary_frame()
        return self

    def _item_ids(self, rows: np.ndarray) -> pd.Series:
        ids = self._items.frame[self._items.columns["id"]]
        return ids.take(rows).reset_index(drop=True)

    def _group_rows(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The rows of the matches with more than one row: (match id, expected row) and
        (match id, item row) pairs, flat."""
        return self._state.multi_rows()

    def _sums(self) -> tuple[np.ndarray, np.ndarray]:
        """Expected and item cents per match, summed exactly (int64) over its rows."""
        state = self._state
        e_cents = self._expected.norm["cents"].to_numpy()
        i_cents = self._items.norm["cents"].to_numpy()
        e_sum, i_sum = e_cents[state.e_first], i_cents[state.i_first]
        if state.multi:
            e_ids, e_rows, i_ids, i_rows = self._group_rows()
            groups = np.fromiter(state.multi, dtype=np.int64, count=len(state.multi))
            e_sum[groups] = 0
            i_sum[groups] = 0
            np.add.at(e_sum, e_ids, e_cents[e_rows])
            np.add.at(i_sum, i_ids, i_cents[i_rows])
        return e_sum, i_sum

    def _matched_frame(self) -> pd.DataFrame:
        state, e_norm, i_norm = self._state, self._expected.norm, self._items.norm
        count = state.count
        e_cents = e_norm["cents"].to_numpy()
        i_cents = i_norm["cents"].to_numpy()
        e_sum, i_sum = self._sums()
        # Per match: items minus expected, summed over its rows.
        group_difference = i_sum - e_sum
        match_ids = np.arange(count, dtype=np.int64)
        e_rows, i_rows = state.e_first, state.i_first
        if state.multi:
            # One row per part: the single side repeats beside each part of the other
            # (part k of a match takes row k of a side with several, else its only row).
            e_ids, e_flat, i_ids, i_flat = self._group_rows()
            groups = np.fromiter(state.multi, dtype=np.int64, count=len(state.multi))
            e_n = np.bincount(e_ids, minlength=count)[groups]
            i_n = np.bincount(i_ids, minlength=count)[groups]
            e_at = np.searchsorted(e_ids, groups)
            i_at = np.searchsorted(i_ids, groups)
            extra = np.maximum(e_n, i_n) - 1
            owner = np.repeat(np.arange(len(groups)), extra)
            part = np.arange(len(owner)) - np.repeat(np.cumsum(extra) - extra, extra) + 1
            extra_ids = groups[owner]
            extra_e = e_flat[e_at[owner] + np.where(e_n[owner] > 1, part, 0)]
            extra_i = i_flat[i_at[owner] + np.where(i_n[owner] > 1, part, 0)]
            # Each match's rows together, by match id: placed where they belong (the
            # first row of a match, then its parts), no sort of all the rows.
            sizes = np.ones(count, dtype=np.int64)
            sizes[groups] += extra
            starts = np.cumsum(sizes) - sizes
            match_ids = np.repeat(match_ids, sizes)
            placed = starts[extra_ids] + part
            e_rows, i_rows = np.repeat(e_rows, sizes), np.repeat(i_rows, sizes)
            e_rows[placed], i_rows[placed] = extra_e, extra_i
        self._group_difference = group_difference
        self._group_sums = (e_sum, i_sum)
        e_dates = e_norm["date"].to_numpy()[e_rows]
        i_dates = i_norm["date"].to_numpy()[i_rows]
        present = ~(np.isnat(e_dates) | np.isnat(i_dates))
        gaps = banking_index(i_dates) - banking_index(e_dates)
        items = self._items.frame
        references = {}
        for name, side, rows in (("expected_reference", self._expected, e_rows),
                                 ("item_reference", self._items, i_rows)):
            column = side.columns.get("reference")
            references[name] = (side.frame[column].take(rows).astype("string")
                                .reset_index(drop=True) if column else
                                pd.Series(pd.NA, index=range(len(rows)), dtype="string"))
        frame = pd.DataFrame({
            "match_id": match_ids,
            # Codes into the few rule names: a categorical, not 100,000 strings.
            "rule": pd.Categorical.from_codes(state.rule_codes[match_ids],
                                              categories=state.rule_names)
            if state.rule_names else pd.Categorical([]),
            "manual": state.manual_of[match_ids],
            "expected_row": _labels(self._expected.frame, e_rows),
            "item_id": self._item_ids(i_rows),
            **references,
            "expected_amount": decimals(e_cents[e_rows]),
            "item_amount": decimals(i_cents[i_rows]),
            "amount_difference": decimals(group_difference[match_ids]),
            "expected_date": e_dates.astype("datetime64[ns]"),
            "item_date": i_dates.astype("datetime64[ns]"),
            "date_difference": pd.arrays.IntegerArray(np.where(present, gaps, 0), ~present),
            # In the constructor: a column inserted afterwards copies the frame's blocks.
            **{column: items[column].take(i_rows).reset_index(drop=True)
               for column in ("itemStatus", "bankAccountNumber") if column in items.columns},
        })
        return frame

    def _item_status(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Whether each item of ``rows`` was returned (or is invalid, blocked), voided."""
        items = self._items.frame
        if "itemStatus" not in items.columns:
            return np.zeros(len(rows), dtype=bool), np.zeros(len(rows), dtype=bool)
        # Per distinct status (itemStatus is a categorical), then per row by its code.
        codes, uniques = pd.factorize(items["itemStatus"])
        uniques = pd.Series(uniques, dtype=object)
        returned = np.append(uniques.isin(_RETURNED).to_numpy(dtype=bool), False)
        voided = np.append((uniques == "V").to_numpy(dtype=bool), False)
        picked = codes[rows]
        return returned[picked], voided[picked]

    def _returned_details(self, rows: np.ndarray) -> np.ndarray:
        """What each item of ``rows`` shows as returned: "Returned R01: Insufficient funds"
        (its status and the return code with its meaning; taken for those rows only: a few
        thousand, not every item)."""
        items = self._items.frame
        # A few thousand rows: plain Python over their values beats pandas text columns.
        statuses = items["itemStatus"].take(rows).tolist()
        reasons = (items["returnReason"].take(rows).tolist() if "returnReason" in items.columns
                   else [None] * len(rows))
        texts: list[str | None] = []
        for status, reason in zip(statuses, reasons, strict=True):
            if _missing(status):
                texts.append(None)
                continue
            text = STATUS_NAMES.get(str(status), str(status))
            texts.append(text if _missing(reason) or not str(reason).strip()
                         else f"{text} {code_label(reason)}")
        return np.array(texts + [None], dtype=object)[:-1]

    def _exceptions_frame(self, decisions: list[dict[str, Any]]) -> pd.DataFrame:
        state, items = self._state, self._items.frame
        item_returned, item_voided = self._item_status(np.arange(len(items)))
        i_first = state.i_first
        # Per match, vectorised over the one-to-one ones; the few others by their rows.
        e_sum, i_sum = self._group_sums
        returned = item_returned[i_first]
        voided = item_voided[i_first]
        if state.multi:
            _, _, i_ids, i_rows = self._group_rows()
            returned[i_ids[item_returned[i_rows]]] = True
            voided[i_ids[item_voided[i_rows]]] = True
        differs = self._group_difference != 0
        labels = self._expected.frame.index.to_numpy()

        def returned_detail(groups: np.ndarray) -> list[str]:
            # Each match's returned items; the texts made for all of them at once.
            rows = [[int(i_first[g])] if g not in state.multi else
                    [i for i in state.multi[g][1] if item_returned[i]] for g in groups.tolist()]
            flat = np.array([i for part in rows for i in part], dtype=np.int64)
            texts = iter(self._returned_details(flat).astype(str).tolist())
            return [", ".join(next(texts) for _ in part) for part in rows]

        # The exceptions as flat arrays (match id, reason's position in REASONS, detail),
        # ordered by match, then reason: no frame per reason to concatenate and sort.
        found_ids, found_codes, found_details = [], [], []
        for code, flags in enumerate((returned, voided, differs)):
            groups = np.flatnonzero(flags)
            if REASONS[code] == "returned":
                detail = returned_detail(groups)
            elif REASONS[code] == "voided":
                detail = ["the item was voided"] * len(groups)
            else:
                # Arrow writes the exact decimals as text, all at once ("-0.05").
                amounts = pa.array(decimals(i_sum[groups] - e_sum[groups])).cast(pa.string())
                detail = pc.binary_join_element_wise("items minus expected: ", amounts,
                                                     "").to_pylist()
            found_ids.append(groups)
            found_codes.append(np.full(len(groups), code, dtype=np.int8))
            found_details.extend(detail)
        order = np.lexsort((np.concatenate(found_codes), np.concatenate(found_ids)))
        groups = np.concatenate(found_ids).astype(np.int64)[order]
        codes = np.concatenate(found_codes)[order]
        details = np.array(found_details + [None], dtype=object)[:-1][order]
        # Who each exception concerns, by what the analyst knows them by: one value per
        # row of the match (joined with ", " for a split or a combination).
        e_sets, i_sets = self._match_rows(groups)
        named = {
            "expected_rows": self._joined(e_sets, lambda rows: _str_objects(labels[rows])),
            "expected_ids": self._joined(e_sets, self._texts(self._expected, "id")),
            "expected_references": self._joined(e_sets, self._texts(self._expected,
                                                                    "reference")),
            "expected_names": self._joined(e_sets, self._texts(self._expected, "name")),
            "item_ids": self._joined(i_sets, self._texts(self._items, "id")),
            "item_references": self._joined(i_sets, self._texts(self._items, "reference")),
            "item_names": self._joined(i_sets, self._texts(self._items, "name")),
        }
        resolved_flags, notes, decided, deciders = self._resolutions(groups, codes, decisions)
        frame = pd.DataFrame({
            "exception_id": np.arange(len(groups), dtype=np.int64),
            "match_id": groups,
            "reason": pd.Categorical.from_codes(codes, categories=REASONS),
            "detail": pd.Series(details, dtype=object),
            "rule": pd.Series(state.rule_of[groups], dtype="string"),
            "manual": state.manual_of[groups],
            **{column: pd.Series(values, dtype="string") if column != "expected_rows"
               else values for column, values in named.items()},
            "expected_amount": decimals(e_sum[groups]),
            "item_amount": decimals(i_sum[groups]),
            "amount_difference": decimals(i_sum[groups] - e_sum[groups]),
            "resolved": resolved_flags,
            "note": notes,
            "decided": pd.to_datetime(pd.Series(decided, dtype=object), utc=True),
            "decided_by": pd.Series(deciders, dtype="string"),
        })
        return frame

    def _match_rows(self, groups: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray],
                                                        tuple[np.ndarray, np.ndarray]]:
        """The expected and the item rows of the matches ``groups``, each side as (the
        match's position in ``groups`` per row, the row), in match order: flat arrays, the
        one-to-one matches without a Python loop."""
        state = self._state
        sides = []
        for first, which in ((state.e_first, 0), (state.i_first, 1)):
            owners, rows = [np.arange(len(groups))], [first[groups]]
            several = np.flatnonzero(np.isin(groups, np.fromiter(
                state.multi, dtype=np.int64, count=len(state.multi))))
            if len(several):
                keep = np.ones(len(groups), dtype=bool)
                keep[several] = False
                owners, rows = [owners[0][keep]], [rows[0][keep]]
                for position in several.tolist():
                    members = state.multi[int(groups[position])][which]
                    owners.append(np.full(len(members), position, dtype=np.int64))
                    rows.append(np.asarray(members, dtype=np.int64))
            owner, row = np.concatenate(owners), np.concatenate(rows)
            order = np.argsort(owner, kind="stable")
            sides.append((owner[order], row[order]))
        return sides[0], sides[1]

    @staticmethod
    def _texts(side: Side, role: str) -> Any:
        """A function giving the text of ``role`` at some rows of ``side`` (None where
        missing, all None when the role is not mapped); names as written."""

        def texts(rows: np.ndarray) -> np.ndarray:
            if role == "name":
                values = side.display_names(rows)
            elif role in side.columns:
                values = side.frame[side.columns[role]].take(rows)
            else:
                values = None
            if values is None:
                return np.full(len(rows), None, dtype=object)
            return values.astype("string").to_numpy(dtype=object, na_value=None)

        return texts

    @staticmethod
    def _joined(owned: tuple[np.ndarray, np.ndarray], texts: Any) -> np.ndarray:
        """Per match: the texts of its rows (``owned``, from :meth:`_match_rows`) joined
        with ", ", None when it has none."""
        owner, rows = owned
        values = texts(rows)
        if not len(owner):
            return np.full(0, None, dtype=object)
        count = int(owner.max()) + 1
        if len(owner) == count:  # one row per match: no joining
            return values
        joined: list[list[str]] = [[] for _ in range(count)]
        for who, value in zip(owner.tolist(), values.tolist(), strict=True):
            if value is not None and value != "":
                joined[who].append(str(value))
        return np.array([", ".join(parts) if parts else None for parts in joined] + [None],
                        dtype=object)[:-1]

    def _resolutions(self, groups: np.ndarray, codes: np.ndarray,
                     decisions: list[dict[str, Any]]
                     ) -> tuple[np.ndarray, list[str | None], list[Any], list[str | None]]:
        """Which exceptions (their match ids, reasons as positions in :data:`REASONS`) a
        kept ``resolve`` decision covers: same reason, same rows."""
        resolved = {(d["reason"], tuple(d["expected"]), tuple(d["items"])): d
                    for d in decisions if d["action"] == "resolve"}
        flags = np.zeros(len(groups), dtype=bool)
        notes: list[str | None] = [None] * len(groups)
        decided: list[Any] = [None] * len(groups)
        deciders: list[str | None] = [None] * len(groups)
        if not resolved:
            return flags, notes, decided, deciders
        # Keys tie a resolution to its match across runs; without one they are not needed.
        e_keys, i_keys = self._expected.keys(), self._items.keys()
        for position, (group, code) in enumerate(zip(groups.tolist(), codes.tolist(),
                                                     strict=True)):
            _, _, e_set, i_set = self._state.group(group)
            decision = resolved.get((REASONS[code], tuple(e_keys[e] for e in e_set),
                                     tuple(i_keys[i] for i in i_set)))
            if decision is not None:
                flags[position] = True
                notes[position] = decision["note"]
                decided[position] = decision["when"]
                deciders[position] = decision["by"]
        return flags, notes, decided, deciders

    def _unmatched(self, side: Side, groups: np.ndarray, which: str) -> pd.DataFrame:
        rows = np.flatnonzero(groups < 0)
        frame = side.frame.iloc[rows]  # a copy already (copy on write)
        # Most rows have no tie: texts only for those that have.
        tied_with = np.full(len(rows), None, dtype=object)
        if self._state.ties:
            others: dict[int, list[str]] = {}
            ids = self._items.frame[self._items.columns["id"]].to_numpy(dtype=object)
            labels = self._expected.frame.index.to_numpy()
            for _, e, i in self._state.ties:
                if which == "expected":
                    others.setdefault(e, []).append(str(ids[i]))
                else:
                    others.setdefault(i, []).append(str(labels[e]))
            # A tied row is never matched afterwards, so it is among ``rows``.
            positions = np.searchsorted(rows, list(others))
            for position, names in zip(positions.tolist(), others.values(), strict=True):
                tied_with[position] = ", ".join(dict.fromkeys(names))
        frame["tied_with"] = pd.Series(tied_with, index=frame.index, dtype="string").fillna("")
        if which == "expected":
            frame.insert(0, "expected_row", frame.index)
        return frame

    def _ties_frame(self) -> pd.DataFrame:
        ties = self._state.ties
        e_rows = np.array([t[1] for t in ties], dtype=np.int64)
        i_rows = np.array([t[2] for t in ties], dtype=np.int64)
        return pd.DataFrame({
            "rule": pd.Series([t[0] for t in ties], dtype="string"),
            "expected_row": _labels(self._expected.frame, e_rows),
            "item_id": self._item_ids(i_rows),
            "expected_amount": decimals(self._expected.norm["cents"].to_numpy()[e_rows]),
            "item_amount": decimals(self._items.norm["cents"].to_numpy()[i_rows]),
        })

    def _summary_frame(self) -> pd.DataFrame:
        state = self._state
        e_cents = self._expected.norm["cents"].to_numpy()
        i_cents = self._items.norm["cents"].to_numpy()
        manual_groups = state.manual_of
        e_matched, i_matched = state.e_group >= 0, state.i_group >= 0
        e_manual = e_matched & manual_groups[np.maximum(state.e_group, 0)] if len(
            manual_groups) else np.zeros(len(e_cents), dtype=bool)
        i_manual = i_matched & manual_groups[np.maximum(state.i_group, 0)] if len(
            manual_groups) else np.zeros(len(i_cents), dtype=bool)
        exceptions = self.exceptions
        open_ = exceptions[~exceptions["resolved"]]
        closed = exceptions[exceptions["resolved"]]

        def exception_rows(frame: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
            groups = np.isin(np.arange(state.count), frame["match_id"].to_numpy())
            return (e_matched & groups[np.maximum(state.e_group, 0)] if len(groups) else
                    np.zeros(len(e_cents), dtype=bool),
                    i_matched & groups[np.maximum(state.i_group, 0)] if len(groups) else
                    np.zeros(len(i_cents), dtype=bool))

        self._masks = masks = {
            "matched": (e_matched, i_matched),
            "matched by hand": (e_manual, i_manual),
            "exceptions open": exception_rows(open_),
            "exceptions resolved": exception_rows(closed),
            "unmatched expected": (~e_matched, np.zeros(len(i_cents), dtype=bool)),
            "unmatched items": (np.zeros(len(e_cents), dtype=bool), ~i_matched),
            "tied": (state.e_tied & ~e_matched, state.i_tied & ~i_matched),
        }
        summary = pd.DataFrame({
            "expected_lines": [int(m[0].sum()) for m in masks.values()],
            "expected_amount": decimals(np.array([e_cents[m[0]].sum() for m in masks.values()],
                                                 dtype=np.int64)),
            "items": [int(m[1].sum()) for m in masks.values()],
            "item_amount": decimals(np.array([i_cents[m[1]].sum() for m in masks.values()],
                                             dtype=np.int64)),
        }, index=pd.Index(list(masks), name="category"))
        return summary

    # ------------------------------------------------------------------ display

    def __repr__(self) -> str:
        s = self.summary
        tied = s.loc["tied", "expected_lines"]
        # Tied lines are among the unmatched: say so, or they pass for lines with no item.
        ties = f", {tied:,} expected lines tied (see .ties)" if tied else ""
        return (f"<MatchResult: {s.loc['matched', 'expected_lines']:,} of "
                f"{len(self._expected):,} expected lines matched, "
                f"{s.loc['exceptions open', 'expected_lines']:,} in open exceptions, "
                f"{s.loc['unmatched items', 'items']:,} items unmatched{ties}>")

    def _repr_html_(self) -> str:
        shown = self.summary.copy()
        for column in ("expected_amount", "item_amount"):
            shown[column] = [f"{value:,.2f}" for value in shown[column]]
        table = shown.to_html(escape=True, border=0, classes="paynb-table paynb-match-summary")
        return (f"<div class='paynb-match-result'><b>Match of {len(self._expected):,} "
                f"expected lines against {len(self._items):,} items</b> (accounts compared "
                f"by {html.escape(self.account_match)}; dates within "
                f"{self._settings.date_window} banking days){table}</div>")

    def plot(self, ax: Axes | None = None) -> Axes:
        """Where the money stands, your ledger beside the service: for each outcome
        (unmatched, tied, open exceptions, matched) a bar for the ledger lines (solid)
        and one for the service's items (hatched) whose length is their amount, labelled
        with their count and amount; returns the Axes.

        What needs a look comes first. When the matched amount dwarfs the rest, the
        matched bars are cut (marked with a break, their figures in their labels) so that
        the axis is scaled for the rest: an unmatched line is never a sliver. Amounts are
        summed without their sign (a debit of 100 and a credit of 100 are 200 to look at);
        ``summary`` has the signed sums."""
        ax = new_axes(ax)
        rows = self._outcomes()
        total_e, total_i = len(self._expected), len(self._items)
        matched_e = int(self.summary.loc["matched", "expected_lines"])
        # Rounded down: 5 lines of 37,990 unmatched is 99.9 %, never 100.0 %.
        share = f" ({math.floor(matched_e / total_e * 1000) / 10:.1f}%)" if total_e else ""
        unmatched_e = rows["unmatched"][0][0]
        title = (f"{matched_e:,} of {total_e:,} ledger lines matched{share}"
                 + (f", {unmatched_e:,} unmatched" if unmatched_e else ""))
        if not total_e and not total_i:
            return no_items(ax, "Ledger against the service", "nothing to match")
        # Cents to currency units for drawing only; the frames keep exact amounts.
        amounts = {name: (e[1] / 100, i[1] / 100) for name, (e, i) in rows.items()}
        rest = max([v for name, pair in amounts.items() if name != "matched" for v in pair],
                   default=0.0)
        top = max(amounts["matched"])
        cut = rest * 1.6 if rest > 0 and top > 3 * rest else None
        limit = cut if cut is not None else max(top, rest) * 1.35 or 1.0
        height = 0.38
        for position, (name, (e, i)) in enumerate(rows.items()):
            for offset, (count, cents), hatch, (one, many) in (
                    (-height / 2, e, None, ("ledger line", "ledger lines")),
                    (height / 2, i, "///", ("service item", "service items"))):
                value = abs(cents) / 100
                ax.barh(position + offset, min(value, limit), height=height * 0.95,
                        color=_OUTCOME_COLORS[name], alpha=1.0 if hatch is None else 0.6,
                        hatch=hatch, edgecolor="white", linewidth=0)
                label = f"{count:,} {one if count == 1 else many} · {value:,.2f}"
                if cut is not None and value > limit:
                    # Cut: a break near the end, the figures inside the bar.
                    for dx in (0.93, 0.95):
                        ax.plot([limit * dx, limit * (dx + 0.01)],
                                [position + offset - height * 0.45,
                                 position + offset + height * 0.45],
                                color="white", linewidth=2.5, solid_capstyle="butt")
                    ax.text(limit * 0.91, position + offset, label, va="center", ha="right",
                            color="white", fontsize="small", fontweight="bold")
                elif name == "unmatched" and hatch is None and count:
                    # Ledger lines with no item: what matters most, however small.
                    ax.text(value + limit * 0.01, position + offset, label, va="center",
                            ha="left", fontsize="small", fontweight="bold",
                            color=_OUTCOME_COLORS[name])
                else:
                    ax.text(min(value, limit) + limit * 0.01, position + offset, label,
                            va="center", ha="left", fontsize="small", color="#333333")
        ax.set_yticks(range(len(rows)), [_OUTCOME_LABELS[name] for name in rows])
        ax.invert_yaxis()  # what needs a look on top
        ax.set_xlim(0, limit)
        ax.set_xlabel(f"Amount ({CURRENCY}){', matched bars cut' if cut is not None else ''}")
        thousands(ax, "x")
        ax.grid(axis="x", color="#E5E5E5")
        ax.set_axisbelow(True)
        for spine in ("top", "right"):
            ax.spines[spine].set_visible(False)
        ax.set_title(title)
        return ax

    def _outcomes(self) -> dict[str, tuple[tuple[int, int], tuple[int, int]]]:
        """Per outcome, exclusive of the others, on each side: (count, cents without sign)
        of the expected lines and of the items."""
        masks = self._masks
        e_cents = np.abs(self._expected.norm["cents"].to_numpy())
        i_cents = np.abs(self._items.norm["cents"].to_numpy())
        e_matched, i_matched = masks["matched"]
        e_open, i_open = masks["exceptions open"]
        e_tied, i_tied = masks["tied"]
        chosen = {"unmatched": (~e_matched & ~e_tied, ~i_matched & ~i_tied),
                  "tied": (e_tied, i_tied),
                  "exceptions open": (e_open, i_open),
                  "matched": (e_matched & ~e_open, i_matched & ~i_open)}
        return {name: ((int(e.sum()), int(e_cents[e].sum())), (int(i.sum()),
                                                               int(i_cents[i].sum())))
                for name, (e, i) in chosen.items()}

    # ------------------------------------------------------------------ export

    def to_excel(self, path: str | os.PathLike[str]) -> None:
        """Write one sheet per frame (summary, matched, exceptions, unmatched expected,
        unmatched items, ties) by paynb's Excel rules: every amount a number shown with
        two decimals (exact decimals and ``Decimal`` values alike, and the ledger's own
        amount column as matching read it, even when the ledger holds it as text), times
        in UTC without their zone (Excel has none), shown as dates where a column holds
        only midnights; account numbers masked ``****6789``."""
        sheets = {"summary": self.summary.reset_index(), "matched": self.matched,
                  "exceptions": self.exceptions,
                  "unmatched expected": self._exact_amounts(self.unmatched_expected),
                  "unmatched items": self.unmatched_items, "ties": self.ties}
        account = self._settings.columns.get("account")
        amount = self._settings.columns.get("amount")
        write_excel(path, {name: _masked(frame, account) for name, frame in sheets.items()},
                    formats={amount: MONEY_FORMAT} if amount else None)

    def _exact_amounts(self, unmatched: pd.DataFrame) -> pd.DataFrame:
        """``unmatched`` (rows of the expected frame) with the ledger's amount column as
        the exact amounts matching read from it (text such as ``"1,234.56"`` or
        ``Decimal`` objects become numbers in Excel, like every other amount)."""
        column = self._settings.columns["amount"]
        # The unmatched rows, in order: the rows of ``unmatched`` (see _unmatched).
        cents = self._expected.norm["cents"].to_numpy()[self._state.e_group < 0]
        return unmatched.assign(**{column: pd.Series(decimals(cents), index=unmatched.index)})

    # ------------------------------------------------------------------ decisions

    def pair(self, expected_rows: Any, item_ids: Any, *, note: str | None = None) -> None:
        """Pair unmatched expected line(s) with unmatched item(s) by hand: one line with
        one or more items, or several lines with one item. ``expected_rows`` are labels of
        the expected frame (``expected_row``), ``item_ids`` the items' ids. The decision
        is kept in the journal and the result is brought up to date (the pair shows with
        ``rule`` ``manual``)."""
        e_rows = self._rows(expected_rows, self._expected, "expected_rows")
        i_rows = self._rows(item_ids, self._items, "item_ids")
        if len(e_rows) > 1 and len(i_rows) > 1:
            raise ValueError("pair one expected line with items, or expected lines with one "
                             "item, not several with several")
        state = self._state
        taken = [f"expected row {side_label(self._expected.frame, e)}" for e in e_rows
                 if state.e_group[e] >= 0]
        taken += [f"item {self._item_ids(np.array([i])).iloc[0]}" for i in i_rows
                  if state.i_group[i] >= 0]
        if taken:
            raise ValueError(f"already matched: {', '.join(taken)}; a row is matched once")
        self.journal.match_decisions.record(
            self._settings.ledger, "pair", note=note,
            expected=[self._expected.keys()[e] for e in e_rows],
            items=[self._items.keys()[i] for i in i_rows])
        self._rerun()

    def resolve(self, exception_id: int, note: str) -> None:
        """Mark exception ``exception_id`` (a row of ``exceptions``) resolved with a note
        saying why; kept in the journal, so the next run shows it resolved too."""
        if not isinstance(note, str) or not note.strip():
            raise ValueError("note: say why the exception is resolved")
        found = self.exceptions[self.exceptions["exception_id"] == exception_id]
        if found.empty:
            raise KeyError(f"no exception {exception_id!r}; exception_id is one of "
                           f"{self.exceptions['exception_id'].tolist()}")
        row = found.iloc[0]
        _, _, e_set, i_set = self._state.group(int(row["match_id"]))
        self.journal.match_decisions.record(
            self._settings.ledger, "resolve", reason=str(row["reason"]), note=note.strip(),
            expected=[self._expected.keys()[e] for e in e_set],
            items=[self._items.keys()[i] for i in i_set])
        self._rerun()

    def _rows(self, labels: Any, side: Side, argument: str) -> list[int]:
        values = [labels] if np.isscalar(labels) else list(labels)
        if not values:
            raise ValueError(f"{argument}: name at least one row")
        if side is self._expected:
            lookup = {label: row for row, label in enumerate(side.frame.index)}
        else:
            ids = side.frame[side.columns["id"]]
            lookup = {str(value): row for row, value in enumerate(ids.tolist())}
            values = [str(v) for v in values]
        missing = [v for v in values if v not in lookup]
        if missing:
            raise KeyError(f"{argument}: {missing[0]!r} is not in the "
                           f"{'expected frame' if side is self._expected else 'items'}")
        return [lookup[v] for v in values]

    def _rerun(self) -> None:
        fresh = self._rematch()
        self.__dict__.update(fresh.__dict__)


def side_label(frame: pd.DataFrame, row: int) -> Any:
    """The index label of row position ``row``."""
    return frame.index[row]


def _mask_account(values: pd.Series) -> pd.Series:
    text = values.astype("string")
    masked = "****" + text.str.replace(r"\D", "", regex=True).str[-4:]
    return masked.where(text.notna() & ~text.str.startswith("*"), text)


def _masked(frame: pd.DataFrame, account: str | None) -> pd.DataFrame:
    """``frame`` with its account numbers masked (the analyst's account column and every
    ``...AccountNumber``)."""
    out = frame.copy()
    for column in out.columns:
        if column == account or str(column).lower().endswith("accountnumber"):
            out[column] = _mask_account(out[column])
    return out


def build_result(expected: Side, items: Side, state: State, context: Context,
                 settings: Settings, journal: Journal, decisions: list[dict[str, Any]],
                 stale: list[dict[str, Any]], *, rerun: Callable[[], MatchResult]
                 ) -> MatchResult:
    """The engine's way to a :class:`MatchResult` (users get one from :func:`paynb.match`;
    the class keeps its constructor to this module). ``rerun()`` is the same run again,
    for a result brought up to date after a decision."""
    return MatchResult._build(expected, items, state, context, settings, journal, decisions,
                              stale, rerun)
