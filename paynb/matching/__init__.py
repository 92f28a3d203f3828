"""Match the analyst's own ledger (expected payments) against the service's items.

:func:`match` runs passes, strictest first, each row matched at most once: the
manual pairs kept in the journal, the exact reference number, the account +
exact amount + date within a window of banking days, the fuzzy rules (amount
within a tolerance, name similarity, your own :class:`Rule`), then splits and
combinations. It returns a :class:`MatchResult` with the matched pairs, the
exceptions to look at, the unmatched rows of both sides, ties, a summary, a
plot and an Excel export. The exceptions view is :class:`paynb.forms.ExceptionsView`.

Not to be confused with :meth:`paynb.Client.reconcile`, which settles the local
journal's submissions whose answer was lost.
"""

from __future__ import annotations

from paynb.matching._columns import ITEM_COLUMNS, ROLES
from paynb.matching._demo import PlantedLedger, expected_ledger
from paynb.matching._engine import match
from paynb.matching._result import MatchResult
from paynb.matching._rules import (
    AccountAmountDate,
    AmountWithin,
    Context,
    NameSimilar,
    Reference,
    Rule,
)

__all__ = ["ITEM_COLUMNS", "ROLES", "AccountAmountDate", "AmountWithin", "Context", "MatchResult",
           "NameSimilar", "PlantedLedger", "Reference", "Rule", "expected_ledger", "match"]
