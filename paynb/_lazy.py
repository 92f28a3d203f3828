"""A module of paynb imported on its first use, for the few that must not load with the
client (:mod:`paynb.frames` brings pandas and pyarrow). ``tests/test_import_graph.py``
counts the uses and checks each names a module below its user in the layers."""

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
