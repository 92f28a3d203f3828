"""One run of :func:`paynb.match` as a value: the sides as read, who matched whom, and
the frames made of them once (:class:`MatchRun`). :class:`paynb.MatchResult` holds the
latest run and makes a new one after each decision."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from paynb._coerce import missing
from paynb.codes import RETURN_STATUSES, STATUS_NAMES, code_label
from paynb.frames._columns import decimal_from_cents
from paynb.matching._columns import Side
from paynb.matching._rules import Context, banking_index
from paynb.matching._state import Settings, State

__all__ = ["REASONS", "MatchRun", "build_run", "decimals"]

logger = logging.getLogger("paynb.matching")

#: Exception reasons, in the order they are listed.
REASONS = ("returned", "voided", "amount differs")
#: The columns of the decisions frame.
_DECISION_COLUMNS = ["id", "when", "by", "ledger", "action", "method", "expected", "items",
                     "reason", "note"]


def decimals(cents: np.ndarray) -> pd.api.extensions.ExtensionArray:
    """Exact int64 cents as a decimal128(18, 2) array (no float, no Python loop)."""
    cents = np.asarray(cents, dtype=np.int64)
    valid = np.ones(len(cents), dtype=bool)
    return pd.arrays.ArrowExtensionArray(decimal_from_cents(cents, valid, 18, 2))


def _str_objects(values: np.ndarray) -> np.ndarray:
    """``values.astype(str)`` as an object array of Python str; integers and objects by
    ``str`` in Python, quicker than numpy's fixed-width text for a few thousand."""
    if values.dtype.kind in "iuO":
        return np.array([str(v) for v in values.tolist()] + [None], dtype=object)[:-1]
    return values.astype(str).astype(object)


@dataclass(frozen=True, eq=False)
class MatchRun:
    """What one run of :func:`paynb.match` found, made once and never changed: the two
    sides as read, who is matched with whom, the arguments, and the frames
    :class:`paynb.MatchResult` shows (documented there). A decision is a new run."""

    expected: Side
    items: Side
    state: State
    settings: Settings
    account_match: str
    matched: pd.DataFrame
    exceptions: pd.DataFrame
    unmatched_expected: pd.DataFrame
    unmatched_items: pd.DataFrame
    ties: pd.DataFrame
    summary: pd.DataFrame
    outcomes: pd.DataFrame
    decisions: pd.DataFrame
    stale_decisions: pd.DataFrame


def build_run(expected: Side, items: Side, state: State, context: Context, settings: Settings,
              decisions: list[dict[str, Any]], stale: list[dict[str, Any]]) -> MatchRun:
    """The frames of a finished run (``decisions``: the journal's, ``stale``: those of
    them that no longer fit the data)."""
    frames = _Frames(expected, items, state)
    sums = frames.sums()
    exceptions = frames.exceptions(sums, decisions)
    masks = frames.masks(exceptions)
    table = pd.DataFrame(decisions, columns=_DECISION_COLUMNS)
    if stale:
        logger.warning("match: %d kept decision(s) no longer fit the data (see "
                       "result.stale_decisions)", len(stale))
    return MatchRun(
        expected=expected, items=items, state=state, settings=settings,
        account_match=_account_match(context), matched=frames.matched(sums),
        exceptions=exceptions, unmatched_expected=frames.unmatched(expected, "expected"),
        unmatched_items=frames.unmatched(items, "items"), ties=frames.ties(),
        summary=frames.summary(masks), outcomes=frames.outcomes(masks), decisions=table,
        stale_decisions=table[table["id"].isin([d["id"] for d in stale])].reset_index(
            drop=True))


def _account_match(context: Context) -> str:
    """How accounts were compared, in words."""
    if "account" not in context.roles:
        return "not compared"
    routing = " + routing number" if "routing" in context.roles else ""
    return ("last four digits" if context.last_four else "full account number") + routing


class _Frames:
    """The frames of one run, made from its sides and state (read, never changed); what
    one frame needs of another is passed to it."""

    def __init__(self, expected: Side, items: Side, state: State) -> None:
        self._expected, self._items, self._state = expected, items, state

    def _item_ids(self, rows: np.ndarray) -> pd.Series:
        ids = self._items.frame[self._items.columns["id"]]
        return ids.take(rows).reset_index(drop=True)

    def cents(self) -> tuple[np.ndarray, np.ndarray]:
        """The exact cents (int64) of every expected line and every item."""
        return self._expected.norm["cents"].to_numpy(), self._items.norm["cents"].to_numpy()

    def sums(self) -> tuple[np.ndarray, np.ndarray]:
        """Expected and item cents per match, summed exactly (int64) over its rows."""
        state = self._state
        e_cents, i_cents = self.cents()
        e_sum, i_sum = e_cents[state.e_first], i_cents[state.i_first]
        # The matches of several rows: summed over them.
        e_ids, e_rows, i_ids, i_rows = state.multi_rows()
        groups = np.fromiter(state.multi, dtype=np.int64, count=len(state.multi))
        e_sum[groups], i_sum[groups] = 0, 0
        np.add.at(e_sum, e_ids, e_cents[e_rows])
        np.add.at(i_sum, i_ids, i_cents[i_rows])
        return e_sum, i_sum

    def matched(self, sums: tuple[np.ndarray, np.ndarray]) -> pd.DataFrame:
        """The matched frame; ``sums``: each match's expected and item cents."""
        state, e_norm, i_norm = self._state, self._expected.norm, self._items.norm
        count = state.count
        e_cents, i_cents = self.cents()
        # Per match: items minus expected, summed over its rows.
        group_difference = sums[1] - sums[0]
        match_ids = np.arange(count, dtype=np.int64)
        e_rows, i_rows = state.e_first, state.i_first
        if state.multi:
            # One row per part: the single side repeats beside each part of the other
            # (part k of a match takes row k of a side with several, else its only row).
            e_ids, e_flat, i_ids, i_flat = state.multi_rows()
            groups = np.fromiter(state.multi, dtype=np.int64, count=len(state.multi))
            e_n, i_n = (np.bincount(ids, minlength=count)[groups] for ids in (e_ids, i_ids))
            e_at, i_at = np.searchsorted(e_ids, groups), np.searchsorted(i_ids, groups)
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
        e_dates, i_dates = e_norm["date"].to_numpy()[e_rows], i_norm["date"].to_numpy()[i_rows]
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
        return pd.DataFrame({
            "match_id": match_ids,
            # Codes into the few rule names: a categorical, not 100,000 strings.
            "rule": pd.Categorical.from_codes(state.rule_codes[match_ids],
                                              categories=state.rule_names)
            if state.rule_names else pd.Categorical([]),
            "manual": state.manual_of[match_ids],
            "expected_row": self._expected.frame.index.to_numpy()[e_rows],
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

    def _item_status(self) -> tuple[np.ndarray, np.ndarray]:
        """Whether each item was returned (or is invalid, blocked), whether voided."""
        items = self._items.frame
        if "itemStatus" not in items.columns:
            return np.zeros(len(items), dtype=bool), np.zeros(len(items), dtype=bool)
        status = items["itemStatus"]
        return (status.isin(RETURN_STATUSES).to_numpy(dtype=bool),
                status.isin(["V"]).to_numpy(dtype=bool))

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
            if missing(status):
                texts.append(None)
                continue
            text = STATUS_NAMES.get(str(status), str(status))
            texts.append(text if missing(reason) or not str(reason).strip()
                         else f"{text} {code_label(reason)}")
        return np.array(texts + [None], dtype=object)[:-1]

    def exceptions(self, sums: tuple[np.ndarray, np.ndarray],
                   decisions: list[dict[str, Any]]) -> pd.DataFrame:
        """The exceptions frame, with the resolutions among ``decisions``."""
        state = self._state
        item_returned, item_voided = self._item_status()
        i_first = state.i_first
        # Per match, vectorised over the one-to-one ones; the few others by their rows.
        e_sum, i_sum = sums
        returned, voided = item_returned[i_first], item_voided[i_first]
        if state.multi:
            _, _, i_ids, i_rows = state.multi_rows()
            returned[i_ids[item_returned[i_rows]]] = True
            voided[i_ids[item_voided[i_rows]]] = True
        labels = self._expected.frame.index.to_numpy()

        # The exceptions as flat arrays (match id, reason's position in REASONS, detail),
        # ordered by match, then reason: no frame per reason to concatenate and sort.
        found = [np.flatnonzero(flags) for flags in (returned, voided, i_sum != e_sum)]
        # Each match's returned items; the texts made for all of them at once.
        parts = [[int(i_first[g])] if g not in state.multi else
                 [i for i in state.multi[g][1] if item_returned[i]] for g in found[0].tolist()]
        flat = np.array([i for part in parts for i in part], dtype=np.int64)
        texts = iter(self._returned_details(flat).astype(str).tolist())
        # Arrow writes the exact decimals as text, all at once ("-0.05").
        amounts = pa.array(decimals(i_sum[found[2]] - e_sum[found[2]])).cast(pa.string())
        detail_texts = [*(", ".join(next(texts) for _ in part) for part in parts),
                   *["the item was voided"] * len(found[1]),
                   *pc.binary_join_element_wise("items minus expected: ", amounts,
                                                "").to_pylist()]
        codes = np.repeat(np.arange(len(REASONS), dtype=np.int8), [len(f) for f in found])
        order = np.lexsort((codes, np.concatenate(found)))
        groups, codes = np.concatenate(found).astype(np.int64)[order], codes[order]
        details = np.array(detail_texts + [None], dtype=object)[:-1][order]
        # Who each exception concerns, by what the analyst knows them by: one value per
        # row of the match (joined with ", " for a split or a combination).
        e_sets, i_sets = self._match_rows(groups)
        named = {"expected_rows": self._joined(e_sets, _str_objects(labels[e_sets[1]]))}
        for prefix, (owner, rows), side in (("expected", e_sets, self._expected),
                                            ("item", i_sets, self._items)):
            for role in ("id", "reference", "name"):
                named[f"{prefix}_{role}s"] = self._joined((owner, rows),
                                                          self._texts(side, role, rows))
        resolutions = self._resolutions(groups, codes, decisions)
        kept = {key: [None if d is None else d[key] for d in resolutions]
                for key in ("note", "when", "by")}
        return pd.DataFrame({
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
            "resolved": np.array([d is not None for d in resolutions], dtype=bool),
            "note": kept["note"],
            "decided": pd.to_datetime(pd.Series(kept["when"], dtype=object), utc=True),
            "decided_by": pd.Series(kept["by"], dtype="string"),
        })

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
    def _texts(side: Side, role: str, rows: np.ndarray) -> np.ndarray:
        """The text of ``role`` at ``rows`` of ``side`` (None where missing, all None when
        the role is not mapped); names as written."""
        if role == "name":
            values = side.display_names(rows)
        elif role in side.columns:
            values = side.frame[side.columns[role]].take(rows)
        else:
            values = None
        if values is None:
            return np.full(len(rows), None, dtype=object)
        return values.astype("string").to_numpy(dtype=object, na_value=None)

    @staticmethod
    def _joined(owned: tuple[np.ndarray, np.ndarray], values: np.ndarray) -> np.ndarray:
        """Per match: the texts ``values`` of its rows (``owned``, from :meth:`_match_rows`)
        joined with ", ", None when it has none."""
        owner = owned[0]
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
                     decisions: list[dict[str, Any]]) -> list[dict[str, Any] | None]:
        """The kept ``resolve`` decision covering each exception (match ids, reasons as
        positions in :data:`REASONS`): same reason, same rows; None where none does."""
        resolved = {(d["reason"], tuple(d["expected"]), tuple(d["items"])): d
                    for d in decisions if d["action"] == "resolve"}
        if not resolved:
            return [None] * len(groups)
        # Keys tie a resolution to its match across runs; without one they are not needed.
        e_keys, i_keys = self._expected.keys, self._items.keys
        found = []
        for group, code in zip(groups.tolist(), codes.tolist(), strict=True):
            _, _, e_set, i_set = self._state.group(group)
            found.append(resolved.get((REASONS[code], tuple(e_keys[e] for e in e_set),
                                       tuple(i_keys[i] for i in i_set))))
        return found

    def unmatched(self, side: Side, which: str) -> pd.DataFrame:
        """The rows of ``side`` (``which``: "expected" or "items") nobody matched."""
        groups = self._state.e_group if which == "expected" else self._state.i_group
        rows = np.flatnonzero(groups < 0)
        frame = side.frame.iloc[rows]  # a copy already (copy on write)
        # Most rows have no tie: texts only for those that have.
        tied_with = np.full(len(rows), None, dtype=object)
        if self._state.ties:
            others: dict[int, list[str]] = {}
            ids = self._items.frame[self._items.columns["id"]].to_numpy(dtype=object)
            labels = self._expected.frame.index.to_numpy()
            for _, e, i in self._state.ties:
                row, other = (e, ids[i]) if which == "expected" else (i, labels[e])
                others.setdefault(row, []).append(str(other))
            # A tied row is never matched afterwards, so it is among ``rows``.
            positions = np.searchsorted(rows, list(others))
            for position, names in zip(positions.tolist(), others.values(), strict=True):
                tied_with[position] = ", ".join(dict.fromkeys(names))
        frame["tied_with"] = pd.Series(tied_with, index=frame.index, dtype="string").fillna("")
        if which == "expected":
            frame.insert(0, "expected_row", frame.index)
        return frame

    def ties(self) -> pd.DataFrame:
        """The pairs left out because another was equally good."""
        ties = self._state.ties
        e_rows, i_rows = (np.array([t[k] for t in ties], dtype=np.int64) for k in (1, 2))
        return pd.DataFrame({
            "rule": pd.Series([t[0] for t in ties], dtype="string"),
            "expected_row": self._expected.frame.index.to_numpy()[e_rows],
            "item_id": self._item_ids(i_rows),
            "expected_amount": decimals(self._expected.norm["cents"].to_numpy()[e_rows]),
            "item_amount": decimals(self._items.norm["cents"].to_numpy()[i_rows]),
        })

    def masks(self, exceptions: pd.DataFrame) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Per category of the summary: which expected lines and which items it holds."""
        state = self._state
        e_matched, i_matched = state.e_group >= 0, state.i_group >= 0

        def rows_of(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            # The rows of the matches ``ids`` on each side (unmatched rows have no id).
            return np.isin(state.e_group, ids), np.isin(state.i_group, ids)

        resolved = exceptions["resolved"].to_numpy(dtype=bool)
        match_ids = exceptions["match_id"].to_numpy()
        return {
            "matched": (e_matched, i_matched),
            "matched by hand": rows_of(np.flatnonzero(state.manual_of)),
            "exceptions open": rows_of(match_ids[~resolved]),
            "exceptions resolved": rows_of(match_ids[resolved]),
            "unmatched expected": (~e_matched, np.zeros(len(i_matched), dtype=bool)),
            "unmatched items": (np.zeros(len(e_matched), dtype=bool), ~i_matched),
            "tied": (state.e_tied & ~e_matched, state.i_tied & ~i_matched),
        }

    def summary(self, masks: dict[str, tuple[np.ndarray, np.ndarray]]) -> pd.DataFrame:
        """Counts and exact sums per category (``masks``, from :meth:`masks`)."""
        return _counted(masks, *self.cents(), "category")

    def outcomes(self, masks: dict[str, tuple[np.ndarray, np.ndarray]]) -> pd.DataFrame:
        """Per outcome of the chart, none overlapping another, on each side: the lines and
        items and their amounts without sign (a debit of 100 and a credit of 100 are 200
        to look at)."""
        e_matched, i_matched = masks["matched"]
        e_open, i_open = masks["exceptions open"]
        e_tied, i_tied = masks["tied"]
        chosen = {"unmatched": (~e_matched & ~e_tied, ~i_matched & ~i_tied),
                  "tied": (e_tied, i_tied),
                  "exceptions open": (e_open, i_open),
                  "matched": (e_matched & ~e_open, i_matched & ~i_open)}
        e_cents, i_cents = self.cents()
        return _counted(chosen, np.abs(e_cents), np.abs(i_cents), "outcome")


def _counted(masks: dict[str, tuple[np.ndarray, np.ndarray]], e_cents: np.ndarray,
             i_cents: np.ndarray, name: str) -> pd.DataFrame:
    """Per entry of ``masks`` (expected lines, items): how many, and their exact sums."""
    return pd.DataFrame({
        "expected_lines": [int(m[0].sum()) for m in masks.values()],
        "expected_amount": decimals(np.array([e_cents[m[0]].sum() for m in masks.values()],
                                             dtype=np.int64)),
        "items": [int(m[1].sum()) for m in masks.values()],
        "item_amount": decimals(np.array([i_cents[m[1]].sum() for m in masks.values()],
                                         dtype=np.int64)),
    }, index=pd.Index(list(masks), name=name))
