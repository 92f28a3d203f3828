"""What a morning run finds, and what it means for the scheduler: pure values, no I/O.
A :class:`Finding` is one thing worth knowing about a company on the day measured; its
``key`` names it across runs, so that the notification ledger, which remembers what was
said by key, alerts only on what is new (or worse).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EXIT_BREACH", "EXIT_FAILED", "EXIT_OK", "EXIT_WARNING", "KINDS", "LEVELS",
           "Finding", "exit_status", "worst_level"]

#: Levels of a finding, mildest first. ``info`` is context (the returns that came in, the
#: money still returnable); ``warning`` and ``breach`` are to act on and alert.
LEVELS: tuple[str, ...] = ("ok", "info", "warning", "breach")

#: The kinds of finding, in the order a report and a message list them, each with
#: whether it is a standing condition (it holds until it clears: a rate, an overdue NOC)
#: or an event (it happens once: a return came in).
KINDS: dict[str, bool] = {
    "rate": True,          # a NACHA return rate against its threshold
    "noc": True,           # a NOC obligation overdue (breach) or due soon (warning)
    "unauthorized": False,  # an unauthorized return that came in since the last run
    "waiting": True,       # an item still W past its documented cut-off
    "unknown": True,       # a submission journaled unknown: reconcile() settles it
    "returns": False,      # the returns that came in since the last run (info)
    "exposure": True,      # money still returnable (info)
}

#: Exit status of ``paynb monitor``: nothing to act on.
EXIT_OK = 0
#: Exit status of ``paynb monitor``: warnings.
EXIT_WARNING = 1
#: Exit status of ``paynb monitor``: a breach (a rate over its threshold) or an overdue NOC.
EXIT_BREACH = 2
#: Exit status of ``paynb monitor``: could not run (configuration, network, the missing
#: extra, a notification that could not be delivered).
EXIT_FAILED = 3


def rank(level: str) -> int:
    """A level's place in :data:`LEVELS` (higher is worse)."""
    try:
        return LEVELS.index(level)
    except ValueError:
        raise ValueError(f"level must be one of {', '.join(LEVELS)}; got {level!r}") from None


@dataclass(frozen=True)
class Finding:
    """One thing a run found about one company.

    Attributes:
        company: the company code.
        kind: one of :data:`KINDS`.
        key: the finding's name across runs (``rate:unauthorized``, ``noc:1234``,
            ``unauthorized:5678``, ``waiting:ach:91``, ``unknown:12``): the notification
            ledger keeps what was said by it.
        level: one of :data:`LEVELS`.
        title: one line a person can act on (no secret, no full account number).
        detail: the figures behind it (JSON-friendly values).
    """

    company: str
    kind: str
    key: str
    level: str
    title: str
    detail: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}; got {self.kind!r}")
        rank(self.level)

    @property
    def standing(self) -> bool:
        """Whether it holds until it clears (a rate, an overdue NOC), rather than happens
        once (a return that came in)."""
        return KINDS[self.kind]

    @property
    def alerts(self) -> bool:
        """Whether it is something to act on (``warning`` or ``breach``)."""
        return rank(self.level) >= rank("warning")

    def __str__(self) -> str:
        return f"[{self.level}] {self.title}"


def worst_level(findings: Iterable[Finding]) -> str:
    """The worst level among ``findings`` to act on: ``breach``, ``warning``, else ``ok``
    (context, ``info``, is never a level of the run)."""
    worst = max((f.level for f in findings), key=rank, default="ok")
    return "ok" if worst == "info" else worst


def exit_status(findings: Iterable[Finding], *, failed: bool = False) -> int:
    """What ``paynb monitor`` exits with: 0 nothing to act on, 1 warnings, 2 a breach or
    an overdue NOC, 3 when the run could not be completed (``failed``: configuration,
    network, or a notification that could not be delivered)."""
    if failed:
        return EXIT_FAILED
    worst = worst_level(findings)
    return {"breach": EXIT_BREACH, "warning": EXIT_WARNING}.get(worst, EXIT_OK)
