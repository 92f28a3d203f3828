"""A module of paynb imported on its first use, for the few that must not load with the
client: :mod:`paynb.frames` brings pandas and pyarrow, which ``import paynb;
paynb.Client(...)`` does not need (it stays at about the cost of ``import requests``; the
first list pays for pandas).

Each use names its module and says why; ``tests/test_import_graph.py`` counts them with
the lazy imports and checks that each names a module below its user in the layers, as an
import would be checked.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["OnFirstUse"]


class OnFirstUse:
    """Module ``name`` (of paynb), imported on the first attribute read."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return f"<{self._name}, imported on first use>"

    def __getattr__(self, attribute: str) -> Any:
        return getattr(importlib.import_module(self._name), attribute)
