"""Small coercions that several layers share, defined once.

- :func:`missing` -- whether a value is absent: ``None``, NaN, pandas ``NaT`` or ``NA``
  (an empty cell of a DataFrame row, a field the service left null);
- :data:`STATUS_BY_NAME` -- an item status by its name in any case
  (``"returned"`` -> ``"R"``), for filters and for answers that spell statuses out.
"""

from __future__ import annotations

from typing import Any

from paynb.codes import STATUS_NAMES

__all__ = ["STATUS_BY_NAME", "missing"]

#: Item status codes by their lower-case names (``"returned"`` -> ``"R"``).
STATUS_BY_NAME = {name.lower(): code for code, name in STATUS_NAMES.items()}


def missing(value: Any) -> bool:
    """None, NaN, pandas NaT or NA (the values not equal to themselves, or undecidable)."""
    if value is None:
        return True
    try:
        return bool(value != value)
    except TypeError:  # pandas NA: its comparisons are NA too
        return True
