"""Compliance on the frames paynb returns: NACHA return rates against their thresholds,
money still returnable, alerts for scheduled polls and an evidence report; the NOC
correction ledger and the submission guards.

paynb helps monitor these rules; it is not legal advice. The rules and their sources
are in ``docs/compliance.md``, ``docs/compliance-nocs-and-guards.md`` and :data:`SOURCES`.
"""

from __future__ import annotations

from paynb.compliance._alerts import ReturnRateAlert, ThresholdExceeded, check
from paynb.compliance._exposure import return_exposure
from paynb.compliance._guards import (
    MAX_REINITIATIONS,
    NEW_AUTHORIZATION_CODES,
    REINITIATION_CODES,
    REINITIATION_DAYS,
    RETRY_DESCRIPTION,
    GuardWarning,
    Verdict,
    check_entries,
    service_now,
)
from paynb.compliance._nocs import (
    NOC_CHANGES,
    NOC_DUE_DAYS,
    NOC_STATES,
    SETTLED_STATES,
    Correction,
    noc_obligations,
    parse_corrected_data,
)
from paynb.compliance._rates import LEVELS, daily_counts, return_rates, rolling_return_rates
from paynb.compliance._report import ComplianceReport, report
from paynb.compliance._rules import (
    CATEGORIES,
    CONSUMER_ENTRY_CLASSES,
    SOURCES,
    WARNING_SHARE,
    Category,
)

__all__ = [
    "CATEGORIES",
    "CONSUMER_ENTRY_CLASSES",
    "LEVELS",
    "MAX_REINITIATIONS",
    "NEW_AUTHORIZATION_CODES",
    "NOC_CHANGES",
    "NOC_DUE_DAYS",
    "NOC_STATES",
    "SETTLED_STATES",
    "REINITIATION_CODES",
    "REINITIATION_DAYS",
    "RETRY_DESCRIPTION",
    "SOURCES",
    "WARNING_SHARE",
    "Category",
    "ComplianceReport",
    "Correction",
    "GuardWarning",
    "ReturnRateAlert",
    "ThresholdExceeded",
    "Verdict",
    "check",
    "check_entries",
    "daily_counts",
    "noc_obligations",
    "parse_corrected_data",
    "report",
    "return_exposure",
    "return_rates",
    "rolling_return_rates",
    "service_now",
]
