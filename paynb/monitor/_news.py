"""What is new since the last notification, and the short message that says it: pure
functions of this run's findings and the notification ledger's rows, no I/O. The rules
(docs/monitor.md, "What alerts"):

- a finding to act on (``warning`` or ``breach``) alerts the first time it is found, and
  again only when it is worse than when it was last notified;
- a breach already notified is repeated while it stands, in a quiet summary line
  ("still"), not as a new alert, at most once per :data:`REPEAT` (one banking day; as
  Alertmanager's ``repeat_interval``, see :class:`Repeat`);
- a notified condition that no longer holds (a rate back under its level, a NOC
  applied) is said once, as cleared; an event (a return that came in) never clears.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from paynb import calendar
from paynb.errors import ValidationError
from paynb.journal import Notified
from paynb.monitor._findings import KINDS, Finding, rank, worst_level

__all__ = ["REPEAT", "News", "Repeat", "diff", "ledger_rows", "message", "worst_first"]

#: How often a standing breach is said again by default: once per banking day.
REPEAT = "1d"
_INTERVAL = re.compile(r"(?P<count>\d+)\s*(?P<unit>[dhm])?")
_UNITS = {"h": dt.timedelta(hours=1), "m": dt.timedelta(minutes=1)}

#: Findings of one kind listed by name in a message before "and N more".
LISTED = 5
_KIND_WORDS = {"rate": "return rate", "noc": "NOC", "unauthorized": "unauthorized return",
               "waiting": "item still waiting", "unknown": "submission with no answer"}


@dataclass(frozen=True)
class Repeat:
    """How often a breach that stands is said again (``repeat=``, ``--repeat``):
    ``"1d"`` once per banking day (the default), ``"2d"`` every other banking day,
    ``"4h"`` or ``"30m"`` once that long has passed, ``"0"`` every run. Banking days are
    the Federal Reserve's (:mod:`paynb.calendar`), counted between the days (UTC) of the
    service's time measured (a breach notified on a Friday is said again on the Monday);
    hours and minutes on the service's time too.

    Attributes:
        text: the interval as given.
        banking_days: banking days between two sayings (0 for hours and minutes).
        elapsed: time between two sayings (zero for banking days).
    """

    text: str
    banking_days: int = 0
    elapsed: dt.timedelta = dt.timedelta(0)

    @classmethod
    def parse(cls, value: str | Repeat, argument: str = "repeat") -> Repeat:
        """The interval ``value`` says (``"1d"``, ``"4h"``, ``"30m"``, ``"0"``); a
        :class:`~paynb.errors.ValidationError` naming ``argument`` for anything else."""
        if isinstance(value, Repeat):
            return value
        found = _INTERVAL.fullmatch(value.strip().lower()) if isinstance(value, str) else None
        if found is None or (found["unit"] is None and int(found["count"]) != 0):
            raise ValidationError.for_argument(argument, (
                "must be banking days, hours or minutes, as '1d', '4h' or '30m', or '0' "
                f"for every run; got {value!r}"))
        count, unit = int(found["count"]), found["unit"]
        if unit == "d":
            return cls(value, banking_days=count)
        return cls(value, elapsed=count * _UNITS[unit] if unit else dt.timedelta(0))

    def due(self, notified: dt.datetime, now: dt.datetime) -> bool:
        """Whether a breach last said at ``notified`` is said again at ``now`` (both the
        service's time)."""
        if self.banking_days:
            passed = calendar.banking_days_between(notified.astimezone(dt.UTC).date(),
                                                   now.astimezone(dt.UTC).date())
            return bool(passed >= self.banking_days)
        return now - notified >= self.elapsed


@dataclass(frozen=True)
class News:
    """This run's findings against the ledger (see the module's rules).

    Attributes:
        new: findings to act on that were not notified before (or had cleared).
        worse: findings notified before at a milder level, with that level.
        standing: breaches notified before, still in breach, and due to be said again
            (:class:`Repeat`): the quiet summary.
        cleared: ledger rows of conditions that no longer hold.
        held: findings to act on notified before at the same level and not said again
            (a warning, or a breach said within the repeat interval).
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
        """Whether this run sends a message: something alerts, a breach stands and is due
        to be said again, a notified condition cleared, or a notified breach eased."""
        return bool(self.alerts or self.standing or self.cleared or any(
            level == "breach" for _, level in self.improved))


def diff(findings: Iterable[Finding], ledger: Mapping[str, Notified], *,
         as_of: dt.datetime, repeat: str | Repeat = REPEAT) -> News:
    """Sort this run's findings against the ``ledger`` (rows by key) into :class:`News`;
    ``as_of`` is the service's time measured, ``repeat`` how often a standing breach is
    said again (:class:`Repeat`)."""
    interval = Repeat.parse(repeat)
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
        elif finding.level == "breach" and interval.due(before.notified, as_of):
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
    that a relapse alerts again) and when it was last said (an alert, or a standing
    breach said again), and the cleared ones closed."""
    alerted = {finding.key for finding in [*news.alerts, *news.standing]}
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
    lines += [f.title for f in findings if f.kind == "returns"][:1]
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

