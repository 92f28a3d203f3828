"""What is new since the last notification, and the short message that says it: pure
functions of this run's findings and the notification ledger's rows, no I/O.

The rules (docs/monitor.md, "What alerts"):

- a finding to act on (``warning`` or ``breach``) alerts the first time it is found, and
  again only when it is worse than when it was last notified;
- a breach already notified is repeated every run while it stands, in a quiet summary
  line ("still"), not as a new alert;
- a notified condition that no longer holds (a rate back under its level, a NOC
  applied) is said once, as cleared; an event (a return that came in) never clears.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from paynb.journal import Notified
from paynb.monitor._findings import KINDS, Finding, rank, worst_level

__all__ = ["News", "diff", "ledger_rows", "message", "worst_first"]

#: Findings of one kind listed by name in a message before "and N more".
LISTED = 5
_KIND_WORDS = {"rate": "return rate", "noc": "NOC", "unauthorized": "unauthorized return",
               "waiting": "item still waiting", "unknown": "submission with no answer"}


@dataclass(frozen=True)
class News:
    """This run's findings against the ledger (see the module's rules).

    Attributes:
        new: findings to act on that were not notified before (or had cleared).
        worse: findings notified before at a milder level, with that level.
        standing: breaches notified before and still in breach (the quiet summary).
        cleared: ledger rows of conditions that no longer hold.
        held: findings to act on notified before at the same level (not repeated).
        improved: findings notified before at a worse level, with that level (a breach
            back at the warning level is said once).
    """

    new: list[Finding] = field(default_factory=list)
    worse: list[tuple[Finding, str]] = field(default_factory=list)
    standing: list[Finding] = field(default_factory=list)
    cleared: list[Notified] = field(default_factory=list)
    held: list[Finding] = field(default_factory=list)
    improved: list[tuple[Finding, str]] = field(default_factory=list)

    @property
    def alerts(self) -> list[Finding]:
        """The findings that alert this run: the new ones, then the worsened ones."""
        return [*self.new, *(finding for finding, _ in self.worse)]

    @property
    def worth_sending(self) -> bool:
        """Whether this run sends a message: something alerts, a breach stands, a
        notified condition cleared, or a notified breach eased."""
        return bool(self.alerts or self.standing or self.cleared or any(
            level == "breach" for _, level in self.improved))


def diff(findings: Iterable[Finding], ledger: Mapping[str, Notified]) -> News:
    """Sort this run's findings against the ``ledger`` (rows by key) into :class:`News`."""
    news = News()
    acting: set[str] = set()
    for finding in findings:
        if not finding.alerts:
            continue
        acting.add(finding.key)
        before = ledger.get(finding.key)
        if before is None or before.cleared is not None:
            news.new.append(finding)
        elif rank(finding.level) > rank(before.level):
            news.worse.append((finding, before.level))
        elif finding.level == "breach":
            news.standing.append(finding)
        elif rank(finding.level) < rank(before.level):
            news.improved.append((finding, before.level))
        else:
            news.held.append(finding)
    for key, row in ledger.items():
        kind = key.split(":", 1)[0]
        if row.cleared is None and key not in acting and KINDS.get(kind, True):
            news.cleared.append(row)
    return news


def ledger_rows(findings: Iterable[Finding], news: News, ledger: Mapping[str, Notified],
                now: dt.datetime) -> list[Notified]:
    """The ledger rows to write once this run's message went out (or had nothing to
    say): every finding to act on, with the level notified (or its milder level now, so
    that a relapse alerts again), and the cleared ones closed."""
    alerted = {finding.key for finding in news.alerts}
    rows = []
    for finding in findings:
        if not finding.alerts:
            continue
        before = ledger.get(finding.key)
        notified = now if finding.key in alerted or before is None else before.notified
        rows.append(Notified(finding.key, finding.level, finding.title, notified, now))
    rows += [Notified(row.key, row.level, row.title, row.notified, row.seen, now)
             for row in news.cleared]
    return rows


def _listed(lines: Sequence[str], word: str) -> list[str]:
    """The first :data:`LISTED` lines of a kind, then a count of the others."""
    shown = [f"- {line}" for line in lines[:LISTED]]
    if len(lines) > LISTED:
        shown.append(f"- ... and {len(lines) - LISTED} more {word}s")
    return shown


def _by_kind(findings: Iterable[Finding]) -> list[list[Finding]]:
    groups: dict[str, list[Finding]] = {}
    for finding in findings:
        groups.setdefault(finding.kind, []).append(finding)
    return [groups[kind] for kind in KINDS if kind in groups]


def message(*, company: str, environment: str, as_of: dt.datetime,
            findings: Sequence[Finding], news: News, report: str | None,
            failures: Sequence[str] = ()) -> tuple[str, str]:
    """The short message of a run: ``(title, body)``.

    The title says the company, the worst level and the day; the body what is new (each
    alert, worst first), what still stands, what cleared, the returns that came in, and
    where the report is. It holds no secret (findings never do) and names no
    notification address.
    """
    worst = worst_level(findings)
    title = f"paynb monitor: {company} {worst.upper()} on {as_of:%Y-%m-%d} ({environment})"
    lines: list[str] = []
    alerts = sorted(news.alerts, key=lambda f: -rank(f.level))
    if alerts:
        lines.append("New:")
        was = {finding.key: level for finding, level in news.worse}
        for group in _by_kind(alerts):
            texts = [f.title + (f" (was {was[f.key]})" if f.key in was else "")
                     for f in sorted(group, key=lambda f: -rank(f.level))]
            lines += _listed(texts, _KIND_WORDS[group[0].kind])
    if news.standing:
        lines.append("Still in breach:")
        for group in _by_kind(news.standing):
            if group[0].kind == "noc" and len(group) > 1:
                lines.append(f"- {len(group)} NOCs overdue")
            else:
                lines += _listed([f.title for f in group], _KIND_WORDS[group[0].kind])
    eased = [(f, level) for f, level in news.improved if level == "breach"]
    if eased:
        lines.append("Better:")
        lines += _listed([f"{f.title} (was {level})" for f, level in eased], "finding")
    if news.cleared:
        lines.append("Cleared (no longer found):")
        lines += _listed([row.title for row in news.cleared], "finding")
    returns = next((f for f in findings if f.kind == "returns"), None)
    if returns is not None:
        lines.append(returns.title)
    if failures:
        lines.append("Not delivered: " + "; ".join(failures))
    if report:
        lines.append(f"Report: {report}")
    if not lines:
        lines.append("Nothing new.")
    return title, "\n".join(lines)


def worst_first(findings: Iterable[Finding]) -> list[Finding]:
    """``findings`` worst level first, then in the order of :data:`KINDS`."""
    order = {kind: index for index, kind in enumerate(KINDS)}
    return sorted(findings, key=lambda f: (-rank(f.level), order[f.kind]))

