"""Compliance on the frames paynb returns: NACHA return rates against their thresholds,
money still returnable, alerts for scheduled polls and an evidence report; the NOC
correction ledger and the submission guards (their rules are :mod:`paynb.nacha`'s, the
client's guard service applies them: :mod:`paynb.guards`).

paynb helps monitor these rules; it is not legal advice. The rules and their sources
are in ``docs/compliance.md``, ``docs/compliance-nocs-and-guards.md`` and :data:`SOURCES`.
"""

from __future__ import annotations

from paynb.compliance._alerts import ReturnRateAlert, check
from paynb.compliance._exposure import return_exposure
from paynb.compliance._guards import check_entries, service_now
from paynb.compliance._nocs import noc_obligations
from paynb.compliance._rates import (
    LEVELS,
    counted_returns,
    daily_counts,
    return_rates,
    rolling_return_rates,
)
from paynb.compliance._report import ComplianceReport, report
from paynb.compliance._rules import (
    CATEGORIES,
    CONSUMER_ENTRY_CLASSES,
    SOURCES,
    WARNING_SHARE,
    Category,
)
from paynb.errors import GuardWarning, ThresholdExceeded
from paynb.nacha import (
    MAX_REINITIATIONS,
    NEW_AUTHORIZATION_CODES,
    NOC_CHANGES,
    NOC_DUE_DAYS,
    NOC_STATES,
    REINITIATION_CODES,
    REINITIATION_DAYS,
    RETRY_DESCRIPTION,
    SETTLED_STATES,
    Correction,
    Verdict,
    parse_corrected_data,
)

__all__ = ["CATEGORIES", "CONSUMER_ENTRY_CLASSES", "LEVELS", "MAX_REINITIATIONS",
           "NEW_AUTHORIZATION_CODES", "NOC_CHANGES", "NOC_DUE_DAYS", "NOC_STATES", "SETTLED_STATES",
           "REINITIATION_CODES", "REINITIATION_DAYS", "RETRY_DESCRIPTION", "SOURCES",
           "WARNING_SHARE", "Category", "ComplianceReport", "Correction", "GuardWarning",
           "ReturnRateAlert", "ThresholdExceeded", "Verdict", "check", "check_entries",
           "counted_returns", "daily_counts", "noc_obligations", "parse_corrected_data", "report",
           "return_exposure", "return_rates", "rolling_return_rates", "service_now"]
