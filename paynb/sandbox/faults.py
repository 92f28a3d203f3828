"""Faults on demand on the service paths (``/api...``) only: latency, 503s, 429s with
Retry-After, dropped connections. Reads (GET) and writes have separate
:class:`FaultSettings`; random faults come from their own seeded stream, and
:meth:`Faults.enqueue` scripts exact ones for tests that must not depend on chance.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
from collections import deque
from dataclasses import asdict, dataclass, fields
from decimal import Decimal
from typing import Any

from paynb.sandbox.wire import dumps

__all__ = ["FAULT_NAMES", "FaultMiddleware", "FaultSettings", "Faults"]

logger = logging.getLogger("paynb.sandbox")

#: Scripted fault names: answer 503, answer 429, drop the connection before the
#: request is handled, or (writes) handle it, commit, and drop before answering.
FAULT_NAMES = ("503", "429", "drop", "drop_after_commit")


@dataclass
class FaultSettings:
    """Random faults of one direction (reads or writes). Rates are shares in [0, 1]."""

    latency_ms: float = 0.0
    """Added before every request is handled."""
    error_rate: float = 0.0
    """Share of requests answered 503 Service Unavailable (nothing handled)."""
    rate_limit_rate: float = 0.0
    """Share of requests answered 429 Too Many Requests (nothing handled)."""
    retry_after: int = 1
    """Seconds sent in the ``Retry-After`` header of a 429."""
    drop_rate: float = 0.0
    """Share of requests whose connection is closed without an answer."""
    drop_after_commit: float = 0.5
    """Writes: share of the drops that happen after the write committed (a lost answer)."""

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FaultSettings:
        """Settings from a mapping; unknown keys or bad values raise ``ValueError``."""
        unknown = set(data) - {f.name for f in fields(cls)}
        if unknown:
            raise ValueError(f"unknown fault settings: {', '.join(sorted(unknown))}")
        # The simulation endpoint parses JSON numbers as Decimal: rates like 0.1 arrive so.
        settings = cls(**{k: float(v) if isinstance(v, Decimal) else v for k, v in data.items()})
        settings.validate()
        return settings

    def validate(self) -> None:
        """Raise ``ValueError`` naming the first setting out of range."""
        for name in ("error_rate", "rate_limit_rate", "drop_rate", "drop_after_commit"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
                raise ValueError(f"{name} must be a number from 0 to 1")
        for name in ("latency_ms", "retry_after"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
                raise ValueError(f"{name} must be a number of at least 0")
        if self.error_rate + self.rate_limit_rate + self.drop_rate > 1:
            raise ValueError("error_rate + rate_limit_rate + drop_rate must be at most 1")

    def as_dict(self) -> dict[str, Any]:
        """The settings as a plain mapping."""
        return asdict(self)


class Faults:
    """The fault state of one sandbox: settings for reads and writes, and a script."""

    def __init__(self, *, reads: FaultSettings | None = None,
                 writes: FaultSettings | None = None, seed: int = 0):
        self.reads = reads or FaultSettings()
        self.writes = writes or FaultSettings()
        self._random = random.Random(seed)
        self._script: deque[tuple[str, str]] = deque()
        # Settings change on request threads while the event loop draws faults.
        self._lock = threading.Lock()

    def set(self, *, reads: FaultSettings | None = None, writes: FaultSettings | None = None,
            seed: int | None = None) -> None:
        """Replace the settings of one or both directions (and reseed the draws)."""
        with self._lock:
            self.reads, self.writes = reads or self.reads, writes or self.writes
            if seed is not None:
                self._random.seed(seed)

    def clear(self) -> None:
        """No faults at all: default settings both ways and an empty script."""
        with self._lock:
            self.reads, self.writes = FaultSettings(), FaultSettings()
            self._script.clear()

    def enqueue(self, fault: str, *, count: int = 1, on: str = "any") -> None:
        """Script ``fault`` for the next ``count`` requests of ``on`` (reads, writes, any)."""
        if fault not in FAULT_NAMES:
            raise ValueError(f"fault must be one of {', '.join(FAULT_NAMES)}")
        if on not in ("reads", "writes", "any"):
            raise ValueError("on must be reads, writes or any")
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 10_000:
            raise ValueError("count must be a whole number from 1 to 10000")
        with self._lock:
            self._script.extend([(fault, on)] * count)

    def as_dict(self) -> dict[str, Any]:
        """The state as the simulation endpoint answers it."""
        with self._lock:
            return {"reads": self.reads.as_dict(), "writes": self.writes.as_dict(),
                    "scripted": [{"fault": f, "on": on} for f, on in self._script]}

    def decide(self, write: bool) -> tuple[float, str | None]:
        """``(seconds of latency, fault name or None)`` for the next request."""
        with self._lock:
            settings = self.writes if write else self.reads
            direction = "writes" if write else "reads"
            for index, (fault, on) in enumerate(self._script):
                if on in ("any", direction):
                    del self._script[index]
                    # A read has nothing to commit: a scripted drop-after-commit is a drop.
                    plain = fault == "drop_after_commit" and not write
                    return settings.latency_ms / 1000, "drop" if plain else fault
            u = self._random.random()
            fault = None
            if u < settings.error_rate:
                fault = "503"
            elif u < settings.error_rate + settings.rate_limit_rate:
                fault = "429"
            elif u < settings.error_rate + settings.rate_limit_rate + settings.drop_rate:
                after = write and self._random.random() < settings.drop_after_commit
                fault = "drop_after_commit" if after else "drop"
            return settings.latency_ms / 1000, fault


def _drop(receive: Any) -> bool:
    """Close the client's connection with no answer; False when the server hides it."""
    # uvicorn's receive is a bound method of its request cycle, which holds the transport.
    cycle = getattr(receive, "__self__", None)
    transport = getattr(cycle, "transport", None)
    if transport is None:
        return False
    transport.close()
    cycle.disconnected = True  # tells uvicorn not to write its own 500 afterwards
    return True


class FaultMiddleware:
    """ASGI middleware that applies :class:`Faults` to the service paths."""

    def __init__(self, app: Any, faults: Faults):
        self.app = app
        self.faults = faults

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/api"):
            await self.app(scope, receive, send)
            return
        write = scope["method"] not in ("GET", "HEAD", "OPTIONS")
        delay, fault = self.faults.decide(write)
        if delay:
            await asyncio.sleep(delay)
        if fault is None:
            await self.app(scope, receive, send)
        elif fault in ("503", "429"):
            settings = self.faults.writes if write else self.faults.reads
            await _answer(send, scope["path"], int(fault), settings.retry_after)
        else:
            if fault == "drop_after_commit":
                async def swallow(message: dict[str, Any]) -> None:
                    """The answer is produced, then lost with the connection."""

                await self.app(scope, receive, swallow)
            logger.info("fault: dropping the connection of %s %s", scope["method"],
                        scope["path"])
            if not _drop(receive):
                raise ConnectionAbortedError("sandbox fault: connection dropped")


async def _answer(send: Any, path: str, status: int, retry_after: int) -> None:
    title = {503: "Service Unavailable", 429: "Too Many Requests"}[status]
    body = dumps({"type": f"https://httpstatuses.io/{status}", "title": title,
                  "status": status, "detail": "Sandbox fault injected on demand.",
                  "instance": path})
    headers = [(b"content-type", b"application/problem+json"),
               (b"content-length", str(len(body)).encode())]
    if status == 429:
        headers.append((b"retry-after", str(int(retry_after)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
