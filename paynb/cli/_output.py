"""What the ``paynb`` commands write: their lines on standard output, problems on standard
error, and why something failed in one line."""

from __future__ import annotations

import sys

__all__ = ["err", "say", "why"]


def say(text: str = "") -> None:
    """A line on standard output, flushed (a scheduler's log shows it when it is said)."""
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def err(text: str) -> None:
    """A line on standard error, flushed."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def why(exc: BaseException) -> str:
    """One line saying why something could not be done (no secret: paynb's errors never
    hold one; others are named by type and first line)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"
