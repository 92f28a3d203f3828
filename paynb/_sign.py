"""How the sandbox names itself in its answers, and how the client reads that.

The sandbox sends :data:`SANDBOX_HEADER` (value exactly ``"1"``) and its clock,
:data:`SANDBOX_TIME_HEADER` (ISO 8601, UTC, as the service's timestamps), with every
answer it gives; the real service sends neither. So a client reaches the sandbox by
whatever road (``paynb.connect()``, a profile, ``PAYNB_*`` variables, arguments in code)
and still knows it is the sandbox, and judges by the sandbox's clock (docs/sandbox.md,
"Answers"). Only the exact value counts: a header that is absent, empty or anything
else is the real service's answer.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["SANDBOX_HEADER", "SANDBOX_TIME_HEADER", "SANDBOX_VALUE", "is_sandbox_answer"]

#: The header of every sandbox answer (HTTP header names are case-insensitive).
SANDBOX_HEADER = "X-Paynb-Sandbox"
#: Its one value.
SANDBOX_VALUE = "1"
#: The sandbox clock when the answer was made, ``2026-12-08T14:05:00.000Z``.
SANDBOX_TIME_HEADER = "X-Paynb-Sandbox-Time"


def is_sandbox_answer(headers: Mapping[str, str]) -> bool:
    """Whether answer ``headers`` (a case-insensitive mapping, as ``requests`` gives them)
    say the sandbox made it: :data:`SANDBOX_HEADER` with exactly :data:`SANDBOX_VALUE`."""
    return headers.get(SANDBOX_HEADER) == SANDBOX_VALUE
