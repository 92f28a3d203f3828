"""The submission guards as compliance sees them: :func:`check_entries` (what the guards
would say of entries, sending nothing) and :func:`service_now` (the clock they judge by).

The rules are :mod:`paynb.nacha`'s (pure); the client's guard service (:mod:`paynb.guards`)
gathers their evidence and applies them in ``submit`` and ``submit_many``.

paynb helps monitor these rules; it is not legal advice.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pandas as pd

from paynb.nacha import as_of_time, present, records_of

if TYPE_CHECKING:
    from paynb.client import Client

__all__ = ["check_entries", "service_now"]


def service_now(client: Client) -> dt.datetime:
    """The service's time (UTC) by ``client``'s clock (``client.context.clock``): the
    sandbox's own clock when connected to a sandbox, however reached (it names itself in
    its answers; ``GET /sandbox/clock``; it moves with ``simulate.advance_clock``), else
    the local UTC time (the real service publishes no clock)."""
    return client.context.clock.now()


def check_entries(client: Client, items: Any, *, new_authorization: bool = False,
                  as_of: Any = None) -> pd.DataFrame:
    """What the submission guards would say of ACH ``items``, sending nothing.

    ``items`` is one mapping, a DataFrame or a list of mappings (wire names). Judged
    against the history this client has seen, at the service's time (or ``as_of``).
    Returns one row per item: ``row, yourReferenceNumber, verdict`` (``refused``,
    ``warning``, ``ok``), ``allowed, rules`` (of the refusals), ``reasons, warnings,
    overridden, changes`` (fields paynb would set), ``notes`` and ``checked``.
    """
    rows = [items] if isinstance(items, Mapping) else records_of(items, "items")
    # Empty cells of a frame (NaN, NA) are fields left out, as submit_many reads them.
    bodies = {n: {str(k): v for k, v in row.items() if present(v) is not None}
              for n, row in enumerate(rows)}
    now = as_of_time(as_of) if as_of is not None else None
    verdicts = client.context.require_guard().judge(bodies, new_authorization=new_authorization,
                                                    now=now)
    columns = ["row", "yourReferenceNumber", "verdict", "allowed", "rules", "reasons",
               "warnings", "overridden", "changes", "notes", "checked"]
    return pd.DataFrame([{
        "row": n, "yourReferenceNumber": v.reference, "verdict": v.verdict,
        "allowed": v.allowed, "rules": [rule for rule, _ in v.refusals],
        "reasons": v.reasons, "warnings": v.warnings,
        "overridden": [rule for rule, _ in v.overridden], "changes": v.changes,
        "notes": v.notes, "checked": v.checked} for n, v in verdicts.items()],
        columns=columns)
