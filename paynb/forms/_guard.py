"""The submission guards' side of the ACH forms: what the NACHA guards of
:mod:`paynb.compliance` say of the entry being typed (:func:`guard_verdicts`,
:func:`guard_text`), so that a refused entry's button stays disabled with the reason in
the status line, and the box by which the analyst says the receiver authorized anew."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import ipywidgets as widgets

from paynb.errors import PaynbError
from paynb.forms._base import tick
from paynb.nacha import NEW_AUTHORIZATION_CODES

__all__ = ["guard_text", "guard_verdicts", "new_authorization_box"]


def guard_verdicts(client: Any, bodies: Mapping[int, Mapping[str, Any]], *,
                   new_authorization: bool) -> tuple[dict[int, Any], str | None]:
    """The guards' verdicts on ``bodies`` (row -> wire body), or ``({}, why)`` when they
    cannot be asked (the service's clock did not answer...): a form then blocks, as
    ``submit`` would fail the same way."""
    try:
        guard = client.context.require_guard()
        return guard.judge(bodies, new_authorization=new_authorization), None
    except PaynbError as exc:
        return {}, f"Cannot check NACHA's rules for this entry: {exc}"


def guard_text(verdict: Any) -> str:
    """The warnings and notes of an allowed entry, for a form's "ready" line."""
    parts = [f"Warning: {text}." for text in verdict.warnings if not text.startswith("cannot")]
    parts += [f"Note: {text}." for text in verdict.notes]
    parts += [f"Sent under a new authorization ({rule})." for rule, _ in verdict.overridden]
    if any(text.startswith("cannot") for text in verdict.warnings):
        parts.append("Not checked against NOCs and returns: list ACH items and NOCs or sync "
                     "the history first.")
    return " ".join(parts)


def new_authorization_box() -> widgets.Checkbox:
    """The checkbox by which the analyst says the receiver authorized the entry anew."""
    box = tick("New authorization from the receiver", "paynb-new-authorization")
    box.tooltip = ("Tick only if you hold a new authorization: after a return that "
                   f"requires one ({', '.join(NEW_AUTHORIZATION_CODES)})")
    return box
