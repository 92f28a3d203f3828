"""Compliance monitoring on the frames paynb returns: NACHA return rates against their
thresholds, money still returnable, alerts for scheduled polls, and an evidence report.

paynb helps monitor these figures; it is not legal advice. The rules and their
sources are in ``docs/compliance.md`` and :data:`SOURCES`.
"""

from __future__ import annotations

from paynb.compliance._alerts import ReturnRateAlert, ThresholdExceeded, check
from paynb.compliance._exposure import return_exposure
from paynb.compliance._rates import LEVELS, return_rates, rolling_return_rates
from paynb.compliance._report import ComplianceReport, report
from paynb.compliance._rules import (
    CATEGORIES,
    CONSUMER_ENTRY_CLASSES,
    SOURCES,
    Category,
)

__all__ = [
    "CATEGORIES",
    "CONSUMER_ENTRY_CLASSES",
    "LEVELS",
    "SOURCES",
    "Category",
    "ComplianceReport",
    "ReturnRateAlert",
    "ThresholdExceeded",
    "check",
    "report",
    "return_exposure",
    "return_rates",
    "rolling_return_rates",
]
