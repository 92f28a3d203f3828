"""The dual-control policy: which submissions and voids need a second person before
paynb sends them (a business rule of the team, set in its profile). Holding such a call
and deciding it are the journal's (:class:`~paynb.journal.ApprovalQueue`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from decimal import Decimal
from typing import Any

from paynb._coerce import parse_decimal
from paynb.errors import ValidationError
from paynb.journal._common import KINDS

__all__ = ["DualControl"]

_OFF_WORDS = frozenset({"", "0", "false", "no", "off"})
_ON_WORDS = frozenset({"1", "true", "yes", "on"})


def _amount(value: Any, argument: str) -> Decimal:
    try:
        amount = parse_decimal(value)
    except (ValueError, TypeError) as exc:
        raise ValidationError({argument: [f"must be an amount ({exc})"]}) from None
    if amount is None or not amount.is_finite() or amount < 0:
        raise ValidationError({argument: ["must be an amount, 0 or more"]})
    return amount


def _switch(value: Any, argument: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _ON_WORDS | _OFF_WORDS:
        return value.strip().lower() in _ON_WORDS
    raise ValidationError({argument: ["must be true or false"]})


@dataclass(frozen=True)
class DualControl:
    """Which submissions need a second person before paynb sends them.

    Args:
        limits: ``{kind: amount}`` (kinds ``ach``, ``rcc``, ``instant``, ``rtp``): a
            submission of that kind over the amount waits for approval; a bulk is judged
            by its total; ``0`` makes every one wait. Instant and RTP amounts are in the
            service's own unit, as sent.
        bulk: every bulk (``submit_many``) waits, whatever its total.
        void_over: a void (of one item or several, by their total amount) over this
            amount waits; ``0``: every void. The items' amounts are looked up first;
            a void of an item whose amount cannot be found waits too.
        instant: every instant payment (card and RTP) waits.
        expires_after: how long a payment may wait (default 24 hours); an older one
            expires and is never sent.

    In a profile (``[name.dual_control]``): ``ach_over``, ``rcc_over``, ``instant_over``,
    ``rtp_over``, ``bulk``, ``void_over``, ``instant`` and ``expires_after_hours``.
    """

    limits: Mapping[str, Any] = field(default_factory=dict)
    bulk: bool = False
    void_over: Any = None
    instant: bool = False
    expires_after: timedelta = timedelta(hours=24)

    def __post_init__(self) -> None:
        if not isinstance(self.limits, Mapping):
            raise ValidationError({"limits": ["must map kinds (ach, rcc, instant, rtp) to "
                                              "amounts"]})
        limits = {}
        for kind, limit in self.limits.items():
            if kind not in KINDS:
                raise ValidationError({"limits": [f"{kind!r} is not a kind: "
                                                  f"{', '.join(KINDS)}"]})
            limits[kind] = _amount(limit, f"limits[{kind!r}]")
        object.__setattr__(self, "limits", limits)
        object.__setattr__(self, "bulk", _switch(self.bulk, "bulk"))
        object.__setattr__(self, "instant", _switch(self.instant, "instant"))
        if self.void_over is not None:
            object.__setattr__(self, "void_over", _amount(self.void_over, "void_over"))
        wait = self.expires_after
        if isinstance(wait, int | float) and not isinstance(wait, bool):
            wait = timedelta(seconds=wait)
        if not isinstance(wait, timedelta) or wait <= timedelta(0):
            raise ValidationError({"expires_after": ["must be a positive timedelta (or "
                                                     "seconds)"]})
        object.__setattr__(self, "expires_after", wait)

    @classmethod
    def from_profile(cls, values: Mapping[str, Any], *, where: str) -> DualControl:
        """The policy of a profile's ``dual_control`` table (``where`` names it in errors)."""
        known = {f"{kind}_over" for kind in KINDS} | {"bulk", "void_over", "instant",
                                                        "expires_after_hours"}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValidationError({f"{where}.{key}": [f"is not a setting of dual control "
                                                      f"(known: {', '.join(sorted(known))})"]
                                   for key in unknown})
        try:
            wait = timedelta(hours=float(values.get("expires_after_hours", 24)))
        except (TypeError, ValueError):
            raise ValidationError({f"{where}.expires_after_hours": ["must be a number"]}
                                  ) from None
        return cls(limits={kind: values[f"{kind}_over"] for kind in KINDS
                           if f"{kind}_over" in values},
                   bulk=values.get("bulk", False), void_over=values.get("void_over"),
                   instant=values.get("instant", False), expires_after=wait)

    def needs_approval(self, kind: str, operation: str,
                       amounts: Sequence[Decimal | None]) -> str | None:
        """Why a call needs a second person (``None``: it does not): ``operation`` on
        ``kind`` of items of these ``amounts`` (``None``: not known)."""
        known = [amount for amount in amounts if amount is not None]
        total = sum(known, Decimal(0))
        if operation.startswith("void"):
            if self.void_over is None:
                return None
            if self.void_over == 0:
                return "every void needs a second person"
            if len(known) < len(amounts):
                return "a void of an item whose amount could not be looked up"
            if total > self.void_over:
                return f"a void of {total} in all, over the limit {self.void_over}"
            return None
        if operation == "submit_many" and self.bulk:
            return "every bulk needs a second person"
        if kind in ("instant", "rtp") and self.instant:
            return "every instant payment needs a second person"
        limit = self.limits.get(kind)
        if limit is not None and total > limit:
            return f"{total}{' in all' if len(amounts) > 1 else ''} over the {kind} limit {limit}"
        return None
