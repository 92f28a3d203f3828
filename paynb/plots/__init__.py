"""Charts that answer an analyst's questions: what changed, how many, is it getting worse?

Every helper takes a DataFrame as the client returns it (see :mod:`paynb.frames`),
an optional matplotlib ``ax`` to draw on, and returns the Axes; none calls
``plt.show()``. Each aggregates first (group counts on the categorical status,
period floors on the dates), so a million rows draw as fast as a hundred.
A frame with no rows, or with nothing to show, gives an empty chart that says so.

Status colours come from :data:`paynb.codes.STATUS_COLORS`, so a status looks the
same in every chart. Dates are UTC, every tick of a date axis in one format
(``15 Oct``, the year under the first tick and wherever it changes). Titles, axes and
legends name columns in words (``transaction type``, not ``achTransactionType``), codes
with their meanings (``R01: Insufficient funds``, from :mod:`paynb.codes`; a code in no
NACHA table is summed under "other"), and ACH and RCC amounts in their currency
(``Amount (USD)``); instant card and RTP amounts are whole numbers in the service's
unstated unit and are never shown with decimals.

:func:`match_outcomes` draws a ledger matched against the service (``MatchResult.plot()``)
from its ``outcomes`` frame.

The item charts hang on every DataFrame as ``df.paynb.<name>(...)``::

    returns = client.ach.list(status=["R", "I", "B"])
    returns.paynb.return_trend(freq="W")
"""

from paynb.compliance.charts import return_exposure, return_rate_thresholds
from paynb.plots._base import (
    CURRENCY,
    INSTANT_COLORS,
    LOG_SCALE_BELOW,
    RETURN_STATUSES,
    RETURN_WINDOW_DAYS,
)
from paynb.plots._items import (
    return_rate,
    return_reasons,
    return_trend,
    returns_calendar,
    status_summary,
)
from paynb.plots._match import match_outcomes

__all__ = [
    "CURRENCY", "INSTANT_COLORS", "LOG_SCALE_BELOW", "RETURN_STATUSES", "RETURN_WINDOW_DAYS",
    "match_outcomes", "return_exposure", "return_rate", "return_rate_thresholds",
    "return_reasons", "return_trend", "returns_calendar", "status_summary",
]
