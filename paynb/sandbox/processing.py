"""The sandbox's business rules: what happens to an item after it is submitted.

Transitions, the void rule, bulk semantics, the processing schedule, and the
generation of returns and NOCs live here, with every number in one
:class:`Config`; :class:`paynb.sandbox.store.Store` calls these functions and
only stores what they decide.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DAY_MS", "HOUR_MS", "Config", "bulk_stores_anything"]

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS


@dataclass(frozen=True)
class Config:
    """Every number of the sandbox's business rules."""

    #: A successful route check allows sends to that card, token or routing number this long.
    route_check_valid_ms: int = 15 * 60_000


def bulk_stores_anything(invalid: int, commit_valid: bool) -> bool:
    """Bulk semantics: a bulk with invalid items stores nothing unless ``alwaysCommitValid``
    (then the valid items are stored and the invalid ones are answered as I)."""
    return commit_valid or not invalid
