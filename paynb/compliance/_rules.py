"""The NACHA figures paynb monitors, each with the rule it comes from.

Everything here is public: the NACHA Operating Rules (Article Two, Subsection
2.17.2, "ODFI Return Rate Reporting", and the 2021 "Risk Management" rule
changes that added the administrative and overall levels; Article Three,
Subsections 3.8.3.1 and 3.13 for return time frames) and the Federal Reserve's
holiday schedule (in :mod:`paynb.calendar`). paynb helps monitor these
figures; it is not legal advice, and the ODFI's agreement with the originator
may set stricter limits.
"""

from __future__ import annotations

from dataclasses import dataclass

from paynb.codes import (
    ADMINISTRATIVE_RETURN_CODES,
    EXTENDED_RETURN_DAYS,
    STANDARD_RETURN_BANKING_DAYS,
    UNAUTHORIZED_RETURN_CODES,
)

__all__ = ["CATEGORIES", "CONSUMER_ENTRY_CLASSES", "EXTENDED_RETURN_DAYS", "NOT_ENTRY_STATUSES",
           "SOURCES", "STANDARD_RETURN_BANKING_DAYS", "WARNING_SHARE", "WINDOWS", "Category"]


@dataclass(frozen=True)
class Category:
    """A NACHA return-rate category: its return codes (None: every code) and threshold.

    ``threshold_bp`` is in basis points (hundredths of a percent), so the
    comparison with a rate is exact integer arithmetic.
    """

    name: str
    codes: frozenset[str] | None
    threshold_bp: int
    source: str

    @property
    def threshold(self) -> float:
        """The threshold as a fraction (0.005 for 0.5 %)."""
        return self.threshold_bp / 10_000


CATEGORIES: tuple[Category, ...] = (
    Category("unauthorized", UNAUTHORIZED_RETURN_CODES, 50,
             "NACHA Operating Rules, Article Two, Subsection 2.17.2 (ODFI Return Rate "
             "Reporting, Unauthorized Entry Return Rate): unauthorized debit returns above "
             "0.5 % of debit entries"),
    Category("administrative", ADMINISTRATIVE_RETURN_CODES, 300,
             "NACHA Operating Rules, Article Two, Subsection 2.17.2 (Administrative Return "
             "Rate Level, added by the 2021 Risk Management rules): R02, R03, R04 above "
             "3.0 % of debit entries"),
    Category("overall", None, 1500,
             "NACHA Operating Rules, Article Two, Subsection 2.17.2 (Overall Return Rate "
             "Level, added by the 2021 Risk Management rules): all debit returns above "
             "15.0 % of debit entries"),
)
"""The three return-rate categories, in the order every result lists them; their codes
are those :data:`paynb.codes.RETURN_CODE_TABLE` puts in each (R05, R07, R10, R11, R29,
R51 unauthorized; R02, R03, R04 administrative; overall: every return)."""

#: A level is "warning" from this share of the threshold on (configurable per call).
WARNING_SHARE = 0.8

#: The two measuring periods the rules allow (Subsection 2.17.2): the 60 calendar days
#: ending on the as-of day, or the two calendar months before the as-of day's month.
WINDOWS: tuple[str, ...] = ("60D", "2M")

#: Statuses that never count as an entry: waiting (not sent), voided, invalid, blocked.
#: A W item that the service already gave a send date is sent, and counts.
NOT_ENTRY_STATUSES = frozenset({"W", "V", "I", "B"})

# STANDARD_RETURN_BANKING_DAYS (Article Three, Subsection 3.8.3.1) and EXTENDED_RETURN_DAYS
# (Subsection 3.13) are paynb.codes' time frames, named here too.

#: Consumer entry classes whose debits may come back as unauthorized within the
#: extended time frame. The rules also give the extended time frame to other consumer
#: classes (POP, ARC, BOC, RCK, consumer IAT) and, as R05, to a CCD or CTX debit to
#: a consumer account; pass ``consumer_classes=`` to include them.
CONSUMER_ENTRY_CLASSES: frozenset[str] = frozenset({"PPD", "WEB", "TEL"})

#: The rules behind every figure, as the evidence workbook's notes sheet lists them.
SOURCES: tuple[tuple[str, str], ...] = (
    *((f"{c.name} return rate, threshold {c.threshold_bp / 100:g} %", c.source)
      for c in CATEGORIES),
    ("measuring period", "NACHA Operating Rules, Article Two, Subsection 2.17.2: the rates "
     "are computed over the preceding 60 days or two calendar months ('60D', '2M')"),
    ("entries", "debit entries only (status S or R, or any item with a send date); "
                "prenotes (amount 0), voided, invalid, blocked and unsent items excluded"),
    ("standard return deadline", "NACHA Operating Rules, Article Three, Subsection 3.8.3.1: "
     "returns available to the ODFI by the opening of business on the second banking day "
     "after the Settlement Date"),
    ("extended return deadline", "NACHA Operating Rules, Article Three, Subsection 3.13: "
     "unauthorized consumer debits (PPD, WEB, TEL ...) may be returned within 60 calendar "
     "days after the Settlement Date"),
    ("banking days", "Federal Reserve holiday schedule (federalreserve.gov, 'Holidays "
     "Observed by the Federal Reserve System'): a Saturday holiday is not moved"),
    ("disclaimer", "paynb helps monitor these figures; it is not legal advice. Your ODFI's "
                   "agreement may set stricter limits."),
)
