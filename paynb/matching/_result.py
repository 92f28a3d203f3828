"""The outcome of :func:`paynb.match`: its latest run's frames, shown, charted and exported,
and the decisions (pair, resolve) that make a new run."""

from __future__ import annotations

import html
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from paynb._excel import MONEY_FORMAT, write_excel
from paynb._redact import is_account_field, last_four
from paynb.matching._columns import Side
from paynb.matching._run import MatchRun, decimals
from paynb.plots import match_outcomes

if TYPE_CHECKING:
    from matplotlib.axes import Axes

    from paynb.journal import Journal

__all__ = ["MatchResult"]


class MatchResult:
    """What :func:`paynb.match` found: the frames of its latest run (all amounts exact
    ``decimal128(18, 2)``), a chart, an Excel export, and the decisions.

    Decisions: :meth:`pair` and :meth:`resolve` record a decision in the journal and
    bring the result up to date (its frames are then those of a new run; a frame read
    before stays as it was); a later :func:`paynb.match` with the same journal and
    ledger applies them again.
    """

    def __init__(self, run: MatchRun, journal: Journal, rerun: Callable[[], MatchRun]) -> None:
        """Users get a result from :func:`paynb.match`: ``run`` is its first run,
        ``rerun()`` the same match made again (after a decision)."""
        self._run, self._rerun = run, rerun
        #: The journal keeping the decisions.
        self.journal = journal

    @property
    def matched(self) -> pd.DataFrame:
        """One row per expected line and item matched (a split has one row per item, a
        combination one per expected line): ``match_id``, ``rule`` (the pass that
        matched it: ``reference``, ``account+amount+date``, a fuzzy rule's name,
        ``split``, ``combined`` or ``manual``), ``manual``, ``expected_row`` (the label
        in the expected frame), ``item_id``, both references, amounts and dates,
        ``amount_difference`` (items minus expected, over the whole match) and
        ``date_difference`` (banking days from the expected date to the item's)."""
        return self._run.matched

    @property
    def exceptions(self) -> pd.DataFrame:
        """Matches that need a look: ``returned`` (the item was returned, invalid or
        blocked after matching), ``voided``, ``amount differs``; each names its rows as
        the analyst knows them, one value per row joined with ", " for a split or a
        combination: ``expected_rows`` (labels), ``expected_ids`` (the ``id`` column,
        when mapped), ``expected_references``, ``expected_names`` (when mapped),
        ``item_ids``, ``item_references``, ``item_names`` (as the service holds them);
        with ``resolved``, ``note``, ``decided`` and ``decided_by`` from the decisions
        kept in the journal."""
        return self._run.exceptions

    @property
    def unmatched_expected(self) -> pd.DataFrame:
        """The expected lines nobody matched (all their columns), with ``tied_with``
        naming the equally good candidates of a tie."""
        return self._run.unmatched_expected

    @property
    def unmatched_items(self) -> pd.DataFrame:
        """The items nobody matched, as :attr:`unmatched_expected`."""
        return self._run.unmatched_items

    @property
    def ties(self) -> pd.DataFrame:
        """The pairs left out because another was equally good."""
        return self._run.ties

    @property
    def summary(self) -> pd.DataFrame:
        """Counts and exact sums per category."""
        return self._run.summary

    @property
    def outcomes(self) -> pd.DataFrame:
        """What :meth:`plot` draws: per outcome (``unmatched``, ``tied``, ``exceptions
        open``, ``matched``), none overlapping another, the expected lines and the items,
        and their amounts without sign."""
        return self._run.outcomes

    @property
    def decisions(self) -> pd.DataFrame:
        """The decisions of the journal this run applied (pairs and resolutions)."""
        return self._run.decisions

    @property
    def stale_decisions(self) -> pd.DataFrame:
        """Decisions the journal holds that no longer fit the data (a row gone, or
        already matched another way); they are kept in the journal."""
        return self._run.stale_decisions

    @property
    def account_match(self) -> str:
        """How accounts were compared: "full account number", "last four digits" (masked
        items), or "not compared" (no account column mapped)."""
        return self._run.account_match

    def __repr__(self) -> str:
        s = self.summary
        tied = s.loc["tied", "expected_lines"]
        # Tied lines are among the unmatched: say so, or they pass for lines with no item.
        ties = f", {tied:,} expected lines tied (see .ties)" if tied else ""
        return (f"<MatchResult: {s.loc['matched', 'expected_lines']:,} of "
                f"{len(self._run.expected):,} expected lines matched, "
                f"{s.loc['exceptions open', 'expected_lines']:,} in open exceptions, "
                f"{s.loc['unmatched items', 'items']:,} items unmatched{ties}>")

    def _repr_html_(self) -> str:
        shown = self.summary.copy()
        for column in ("expected_amount", "item_amount"):
            shown[column] = [f"{value:,.2f}" for value in shown[column]]
        table = shown.to_html(escape=True, border=0, classes="paynb-table paynb-match-summary")
        return (f"<div class='paynb-match-result'><b>Match of {len(self._run.expected):,} "
                f"expected lines against {len(self._run.items):,} items</b> (accounts "
                f"compared by {html.escape(self.account_match)}; dates within "
                f"{self._run.settings.date_window} banking days){table}</div>")

    def plot(self, ax: Axes | None = None) -> Axes:
        """Where the money stands, your ledger beside the service, outcome by outcome
        (:func:`paynb.plots.match_outcomes` of :attr:`outcomes`); returns the Axes."""
        return match_outcomes(self.outcomes, ax)

    def to_excel(self, path: str | os.PathLike[str]) -> None:
        """Write one sheet per frame (summary, matched, exceptions, unmatched expected,
        unmatched items, ties) by paynb's Excel rules: every amount a number shown with
        two decimals (exact decimals and ``Decimal`` values alike, and the ledger's own
        amount column as matching read it, even when the ledger holds it as text), times
        in UTC without their zone (Excel has none), shown as dates where a column holds
        only midnights; account numbers masked ``****6789``."""
        run = self._run
        account, amount = run.settings.columns.get("account"), run.settings.columns["amount"]
        # The ledger's amounts as matching read them: the unmatched rows, in order.
        cents = run.expected.norm["cents"].to_numpy()[run.state.e_group < 0]
        unmatched = run.unmatched_expected
        sheets = {"summary": run.summary.reset_index(), "matched": run.matched,
                  "exceptions": run.exceptions,
                  "unmatched expected": unmatched.assign(
                      **{amount: pd.Series(decimals(cents), index=unmatched.index)}),
                  "unmatched items": run.unmatched_items, "ties": run.ties}
        write_excel(path, {name: _masked(frame, account) for name, frame in sheets.items()},
                    formats={amount: MONEY_FORMAT})

    def pair(self, expected_rows: Any, item_ids: Any, *, note: str | None = None) -> None:
        """Pair unmatched expected line(s) with unmatched item(s) by hand: one line with
        one or more items, or several lines with one item. ``expected_rows`` are labels of
        the expected frame (``expected_row``), ``item_ids`` the items' ids. The decision
        is kept in the journal and the result is brought up to date (the pair shows with
        ``rule`` ``manual``)."""
        run = self._run
        e_rows = _rows(expected_rows, run.expected, "expected_rows", expected=True)
        i_rows = _rows(item_ids, run.items, "item_ids", expected=False)
        if len(e_rows) > 1 and len(i_rows) > 1:
            raise ValueError("pair one expected line with items, or expected lines with one "
                             "item, not several with several")
        ids = run.items.frame[run.items.columns["id"]]
        taken = [f"expected row {run.expected.frame.index[e]}" for e in e_rows
                 if run.state.e_group[e] >= 0]
        taken += [f"item {ids.iloc[i]}" for i in i_rows if run.state.i_group[i] >= 0]
        if taken:
            raise ValueError(f"already matched: {', '.join(taken)}; a row is matched once")
        self.journal.match_decisions.record(
            run.settings.ledger, "pair", note=note,
            expected=[run.expected.keys[e] for e in e_rows],
            items=[run.items.keys[i] for i in i_rows])
        self._run = self._rerun()

    def resolve(self, exception_id: int, note: str) -> None:
        """Mark exception ``exception_id`` (a row of ``exceptions``) resolved with a note
        saying why; kept in the journal, so the next run shows it resolved too."""
        if not isinstance(note, str) or not note.strip():
            raise ValueError("note: say why the exception is resolved")
        run = self._run
        found = run.exceptions[run.exceptions["exception_id"] == exception_id]
        if found.empty:
            raise KeyError(f"no exception {exception_id!r}; exception_id is one of "
                           f"{run.exceptions['exception_id'].tolist()}")
        row = found.iloc[0]
        _, _, e_set, i_set = run.state.group(int(row["match_id"]))
        self.journal.match_decisions.record(
            run.settings.ledger, "resolve", reason=str(row["reason"]), note=note.strip(),
            expected=[run.expected.keys[e] for e in e_set],
            items=[run.items.keys[i] for i in i_set])
        self._run = self._rerun()


def _rows(labels: Any, side: Side, argument: str, *, expected: bool) -> list[int]:
    """The row positions in ``side`` of ``labels``: labels of the expected frame
    (``expected``), else the items' ids."""
    values = [labels] if np.isscalar(labels) else list(labels)
    if not values:
        raise ValueError(f"{argument}: name at least one row")
    if expected:
        lookup = {label: row for row, label in enumerate(side.frame.index)}
    else:
        ids = side.frame[side.columns["id"]]
        lookup = {str(value): row for row, value in enumerate(ids.tolist())}
        values = [str(v) for v in values]
    missing = [v for v in values if v not in lookup]
    if missing:
        raise KeyError(f"{argument}: {missing[0]!r} is not in the "
                       f"{'expected frame' if expected else 'items'}")
    return [lookup[v] for v in values]


def _masked(frame: pd.DataFrame, account: str | None) -> pd.DataFrame:
    """``frame`` with its account numbers shown by their last four (the analyst's account
    column and every ``...AccountNumber``), as paynb shows them everywhere."""
    out = frame.copy()
    for column in out.columns:
        if column == account or is_account_field(column):
            text = out[column].astype("string")
            out[column] = text.map(last_four, na_action="ignore").astype("string")
    return out
