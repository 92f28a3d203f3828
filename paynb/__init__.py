"""paynb: the payment item service from Jupyter notebooks.

Typed DataFrames for lists, NOCs and exports; safe ipywidgets forms for
submissions, voids and instant payments; return-trend charts; and an embedded
sandbox of the service so that all of it works with no account::

    import paynb
    client = paynb.connect()          # a configured profile, else the embedded sandbox
    returns = client.ach.list(status=["R", "I", "B"])

Everything is imported on first use, so ``import paynb`` stays fast; the
heavy parts (pandas, matplotlib, ipywidgets, the sandbox) load when needed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from paynb._version import __version__

if TYPE_CHECKING:
    from paynb import calendar, compliance, errors, forms, models, monitor, plots, sandbox
    from paynb.client import Client, connect
    from paynb.config import Credentials
    from paynb.errors import PaynbError, PaynbWarning
    from paynb.history import History
    from paynb.journal import Approval, DualControl
    from paynb.matching import MatchResult, match
    from paynb.results import ExportFile, RouteCheck
    from paynb.transport import Transport

__all__ = [
    "Client",
    "Credentials",
    "ExportFile",
    "RouteCheck",
    "__version__",
    "calendar",
    "compliance",
    "connect",
    "errors",
    "forms",
    "models",
    "monitor",
    "plots",
    "sandbox",
    "match",
    "MatchResult",
    "History",
    "PaynbError",
    "PaynbWarning",
    "DualControl",
    "Approval",
    "Transport",
]

_LAZY_ATTRIBUTES = {
    "Client": "paynb.client",
    "connect": "paynb.client",
    "Credentials": "paynb.config",
    "ExportFile": "paynb.results",
    "RouteCheck": "paynb.results",
    "match": "paynb.matching",
    "MatchResult": "paynb.matching",
    "History": "paynb.history",
    "PaynbError": "paynb.errors",
    "PaynbWarning": "paynb.errors",
    "DualControl": "paynb.journal",
    "Approval": "paynb.journal",
    "Transport": "paynb.transport",
}
_LAZY_MODULES = {"calendar", "compliance", "errors", "forms", "models", "monitor", "plots",
                 "sandbox"}


def __getattr__(name: str) -> Any:
    # By name, on first use: `import paynb` stays fast (the client, pandas, matplotlib,
    # ipywidgets and the sandbox load with the first name that needs them).
    if name in _LAZY_ATTRIBUTES:
        value = getattr(importlib.import_module(_LAZY_ATTRIBUTES[name]), name)
    elif name in _LAZY_MODULES:
        value = importlib.import_module(f"paynb.{name}")
    else:
        raise AttributeError(f"module 'paynb' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
