"""JSON for request bodies, with ``Decimal`` amounts written exactly.

``json.dumps`` cannot write a ``Decimal`` as a number, and going through
``float`` is where artefacts like ``10.000000001`` come from. Each Decimal is
written from its own digits instead.
"""

from __future__ import annotations

import json
import secrets
from decimal import Decimal
from typing import Any

__all__ = ["dumps"]


def dumps(obj: Any) -> str:
    """Serialise ``obj`` to compact JSON; ``Decimal`` values keep every digit."""
    nonce = secrets.token_hex(8)
    numbers: list[str] = []

    def placeholder(value: Any) -> str:
        if isinstance(value, Decimal):
            if not value.is_finite():
                raise ValueError("amounts must be finite numbers")
            numbers.append(format(value, "f"))
            return f"{nonce}:{len(numbers) - 1}"
        raise TypeError(f"{type(value).__name__} is not JSON serialisable")

    text = json.dumps(obj, default=placeholder, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)
    for index, number in enumerate(numbers):
        text = text.replace(f'"{nonce}:{index}"', number, 1)
    return text
