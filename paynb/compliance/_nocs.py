"""The NOC correction ledger as a frame: :func:`noc_obligations` (NACHA Operating Rules,
Article Two, Subsection 2.12.1; the rules are :mod:`paynb.nacha`'s).

paynb helps monitor these obligations; it is not legal advice.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from paynb.errors import ValidationError
from paynb.frames import noc_ledger_frame
from paynb.nacha import DUE_SOON_DAYS, applied_marks_of, as_of_time, entries_of, ledger

__all__ = ["noc_obligations"]


def noc_obligations(nocs: Any, *, items: Any = None, as_of: Any = None, applied: Any = None,
                    due_soon: int = DUE_SOON_DAYS) -> pd.DataFrame:
    """The NOC correction ledger: one row per NOC, what it obliges and by when.

    Args:
        nocs: NOCs as ``client.nocs.list()`` gives them (or a list of NOC records).
        items: ACH items (``client.ach.list(...)``, or records): they give each NOC's
            account (the entry it was about) and the next entry to that account.
            Pass them listed with ``mask=False`` (or raw records): entries are matched
            by routing and **full** account number, and only an unmasked NOC gives the
            corrected record. The account is shown masked all the same.
        as_of: the day to judge by (date, datetime or ISO text; default now, UTC).
            :meth:`client.nocs.obligations() <paynb.resources.NocResource.obligations>`
            uses the service's clock.
        applied: NOCs already applied: their ids, a mapping of id to ``{"by", "when"}``,
            or a frame with ``nocId``, ``appliedBy``, ``appliedAt`` (what the journal
            records; ``client.nocs.obligations()`` reads it for you).
        due_soon: an open obligation reads ``due soon`` from this many banking days
            before its due date.

    Returns one row per NOC with ``nocId, achItemId, yourReferenceNumber, changeCode,
    changeReason``, the account (``bankRoutingNumber``, ``bankAccountNumber`` masked),
    ``mustChange`` (the change in words, with the corrected values), ``received`` (the
    NOC's date), ``sixthBankingDay`` (six banking days after receipt; a NOC received on
    a weekend or holiday counts from the next banking day), ``nextEntry`` (when the
    service received the first later entry to the same account), ``dueDate`` (the later
    of the two, NACHA 2.12.1), ``state`` (``open``, ``due soon``, ``overdue`` once the
    due date has passed, ``applied``; ``no change`` for a refused NOC, C61-C69, which
    has no due date), ``appliedBy``, ``appliedAt`` and ``correction``
    (a :class:`Correction`: the corrected account record, when the NOC's data and its
    entry are known).

    The ledger is the one that stood on ``as_of``'s day: a NOC dated later is left
    out, and a mark made later (its ``when``) does not count yet.

    The *next entry* is the earliest ACH entry in ``items`` (even one received after
    ``as_of``: the change is due before it goes out) to the same routing and
    account number as the entry the NOC was about, received by the service after the
    NOC's date, other than that entry itself, and not voided, invalid or blocked (those
    never went to the bank).
    """
    if isinstance(due_soon, bool) or not isinstance(due_soon, int) or due_soon < 0:
        raise ValidationError.for_argument(
            "due_soon", "must be a whole number of banking days, 0 or more")
    rows = ledger(nocs, entries_of(items), as_of=as_of_time(as_of),
                  applied=applied_marks_of(applied), due_soon=due_soon, as_it_stood=True)
    return noc_ledger_frame(rows)
