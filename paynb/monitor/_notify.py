"""Notifications through apprise: one URL per channel (email, Slack, a webhook, ...), from
the profile's ``notify`` key or ``PAYNB_NOTIFY``. The URLs hold secrets: a channel is named
by its position and scheme only (``notification 2 (mailtos)``), and every part of the
URLs is hidden from what apprise logs and from a failure's reason.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from paynb._redact import hide_urls, url_scheme

__all__ = ["NOTIFY_VARIABLE", "Delivery", "deliver", "notify_urls"]

logger = logging.getLogger("paynb.monitor")

#: The variable holding notification URLs (several, separated by whitespace).
NOTIFY_VARIABLE = "PAYNB_NOTIFY"
_APPRISE_LOGGER = "apprise"
# What in apprise's log says why a notification failed.
_TELLING = re.compile(r"error|fail|refused|timed out|timeout|unreach|denied|reset", re.I)


def notify_urls(value: Any = None) -> list[str]:
    """The notification URLs: ``value`` (a string of URLs separated by whitespace, or a
    list of them), else ``$PAYNB_NOTIFY``; an empty list when neither holds one."""
    if value is None:
        value = os.environ.get(NOTIFY_VARIABLE, "")
    if isinstance(value, str):
        return value.split()
    if isinstance(value, Sequence):
        urls: list[str] = []
        for item in value:
            if not isinstance(item, str):
                raise TypeError(f"notify must hold URLs as text, not {type(item).__name__}")
            urls += item.split()
        return urls
    raise TypeError(f"notify must be a string of URLs or a list of them, not "
                    f"{type(value).__name__}")


@dataclass(frozen=True)
class Delivery:
    """What became of one notification: ``channel`` (``notification 1 (json)``), whether
    it was ``delivered``, and why not (``reason``, with no part of the URL in it)."""

    channel: str
    delivered: bool
    reason: str | None = None

    def __str__(self) -> str:
        return f"{self.channel}: " + ("delivered" if self.delivered else
                                      f"failed ({self.reason or 'no reason given'})")


class _Hide(logging.Filter):
    """Hides the URLs' parts in apprise's own log records (they may quote a host, a
    user or a token), keeps the last warning or error as the failure's reason, and lets
    through only the records of the level apprise's logger had (``shown``) or above."""

    def __init__(self, urls: Sequence[str], shown: int = logging.WARNING) -> None:
        super().__init__()
        self.urls = list(urls)
        self.shown = shown
        self.problems: list[str] = []

    def filter(self, record: logging.LogRecord) -> bool:
        text = hide_urls(record.getMessage(), self.urls)
        record.msg, record.args = text, ()
        if record.exc_info:
            record.exc_text = hide_urls(logging.Formatter().formatException(record.exc_info),
                                        self.urls)
            record.exc_info = None
        if record.levelno >= logging.WARNING or _TELLING.search(text):
            self.problems.append(text)
        return record.levelno >= self.shown


@contextmanager
def _hidden(urls: Sequence[str]) -> Iterator[_Hide]:
    target = logging.getLogger(_APPRISE_LOGGER)
    # Its debug lines say why a send failed ("Connection refused"): let them be made, to
    # be read here, and shown only as the logger's own level would have (a handler with
    # no level of its own, as logging.basicConfig makes, would show them all).
    hide = _Hide(urls, target.getEffectiveLevel())
    level = target.level
    target.setLevel(logging.DEBUG)
    target.addFilter(hide)
    try:
        yield hide
    finally:
        target.removeFilter(hide)
        target.setLevel(level)


def _reason(problems: list[str]) -> str:
    """The most telling of apprise's complaints, on one line."""
    telling = [p for p in problems if _TELLING.search(p)] or problems
    text = " ".join(" ".join(telling[-2:]).split()) if telling else "not delivered"
    return text[:300]


def deliver(urls: Sequence[str], title: str, body: str, *, level: str) -> list[Delivery]:
    """Send ``title`` and ``body`` to each URL (each on its own: one channel failing does
    not stop the others); ``level`` (``ok``, ``info``, ``warning``, ``breach``) sets
    apprise's notification type."""
    import apprise

    kind = {"breach": apprise.NotifyType.FAILURE, "warning": apprise.NotifyType.WARNING
            }.get(level, apprise.NotifyType.INFO)
    outcomes = []
    for number, url in enumerate(urls, 1):
        channel = f"notification {number} ({url_scheme(url)})"
        with _hidden(urls) as hide:
            target = apprise.Apprise()
            if not target.add(url):
                outcomes.append(Delivery(channel, False, "not a notification URL apprise "
                                                         "knows (see its list of services)"))
                continue
            try:
                sent = bool(target.notify(body=body, title=title, notify_type=kind,
                                          body_format=apprise.NotifyFormat.TEXT))
            except Exception as exc:  # a plugin's bug must not lose the report
                sent = False
                hide.problems.append(hide_urls(f"{type(exc).__name__}: {exc}", urls))
        outcome = Delivery(channel, sent, None if sent else _reason(hide.problems))
        (logger.info if sent else logger.warning)("%s", outcome)
        outcomes.append(outcome)
    return outcomes

