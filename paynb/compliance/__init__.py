"""Compliance monitoring: NACHA's NOC deadlines and the submission guards.

paynb helps monitor these rules; it is not legal advice. The rules and their sources
are in ``docs/compliance-nocs-and-guards.md``.
"""

from __future__ import annotations

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
    Correction,
    noc_obligations,
    parse_corrected_data,
)

__all__ = [
    "MAX_REINITIATIONS",
    "NEW_AUTHORIZATION_CODES",
    "NOC_CHANGES",
    "NOC_DUE_DAYS",
    "NOC_STATES",
    "REINITIATION_CODES",
    "REINITIATION_DAYS",
    "RETRY_DESCRIPTION",
    "Correction",
    "GuardWarning",
    "Verdict",
    "check_entries",
    "noc_obligations",
    "parse_corrected_data",
    "service_now",
]
