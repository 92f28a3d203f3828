"""Small result objects the client hands back where a DataFrame does not fit.

``RouteCheck`` is the answer of an instant route check (card or RTP), read
tolerantly because the service's answer shape is "not shown" in the spec;
``ExportFile`` is an exported document paynb does not turn into a DataFrame.
"""

from __future__ import annotations

import datetime as dt
import html
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from paynb._redact import redact
from paynb.validation import to_decimal

__all__ = ["ExportFile", "RouteCheck"]


def lookup(record: Mapping[str, Any], *names: str) -> Any:
    """The value of the first of ``names`` found in ``record``, ignoring case and underscores."""
    folded = {str(key).replace("_", "").lower(): value for key, value in record.items()}
    for name in names:
        key = name.replace("_", "").lower()
        if key in folded:
            return folded[key]
    return None


def _as_bool(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() in {"true", "yes", "1", "y"}
    return bool(value)


@dataclass(frozen=True)
class RouteCheck:
    """The answer of an instant route check.

    ``supported`` says whether the receiving bank takes the instant rail and
    ``reachable`` whether the destination can be reached now. ``payment_types``
    lists what the rail allows (type, maximum amount, currency);
    ``max_amount`` is the largest of those maxima, or ``None`` when the answer
    gave none. ``raw`` is the answer as the service sent it, scrubbed like a
    journal row: a card number it might echo is cut to its last four digits,
    account numbers are masked.
    """

    supported: bool
    reachable: bool
    payment_types: tuple[dict[str, Any], ...] = ()
    max_amount: Decimal | None = None
    currency: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, repr=False)
    checked_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC),
                                    repr=False)

    @property
    def ok(self) -> bool:
        """True when the rail is both supported and reachable."""
        return self.supported and self.reachable

    @classmethod
    def from_answer(cls, answer: Any) -> RouteCheck:
        """Read a route-check answer, whatever the casing of its fields."""
        if not isinstance(answer, Mapping):
            answer = {}
        wrapped = lookup(answer, "route", "result", "data")
        record = wrapped if isinstance(wrapped, Mapping) else answer
        types = []
        for entry in lookup(record, "paymentTypes", "types", "limits") or []:
            if isinstance(entry, Mapping):
                types.append({
                    "type": lookup(entry, "type", "paymentType", "name"),
                    "maxAmount": to_decimal(lookup(entry, "maxAmount", "max", "limit")),
                    "currency": lookup(entry, "currency"),
                })
        maxima = [t["maxAmount"] for t in types if t["maxAmount"] is not None]
        currencies = [t["currency"] for t in types if t["currency"]]
        return cls(
            supported=_as_bool(lookup(record, "supported", "isSupported")),
            reachable=_as_bool(lookup(record, "reachable", "isReachable")),
            payment_types=tuple(types),
            max_amount=max(maxima) if maxima else None,
            currency=currencies[0] if currencies else None,
            raw=redact(dict(answer)),
        )

    def _repr_html_(self) -> str:
        verdict = "available" if self.ok else "NOT available"
        rows = "".join(
            f"<tr><td>{html.escape(str(t['type']))}</td><td>{t['maxAmount']}</td>"
            f"<td>{html.escape(str(t['currency'] or ''))}</td></tr>"
            for t in self.payment_types)
        return (f"<b>Route {verdict}</b> (supported={self.supported}, "
                f"reachable={self.reachable})<table><tr><th>type</th><th>max amount</th>"
                f"<th>currency</th></tr>{rows}</table>")


@dataclass(frozen=True)
class ExportFile:
    """An exported document paynb did not read into a DataFrame (an unknown file type)."""

    content: bytes = field(repr=False)
    name: str
    content_type: str

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the bytes to ``path`` (a file, or a folder to put ``name`` in); return the path."""
        target = Path(path) if path is not None else Path(self.name)
        if target.is_dir():
            target = target / self.name
        target.write_bytes(self.content)
        return target

    def __repr__(self) -> str:
        return (f"ExportFile(name={self.name!r}, content_type={self.content_type!r}, "
                f"size={len(self.content)} bytes)")
