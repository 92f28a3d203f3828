"""The ``df.paynb`` accessor: the charts on any DataFrame
(``df.paynb.return_trend(freq="W")`` is ``paynb.plots.return_trend(df, freq="W")``).

The accessor knows no chart itself: the modules above it in the layers (:data:`PROVIDERS`)
:func:`register` their functions, each taking the frame first, and are imported on the
first use of a name not registered yet, so that matplotlib loads with the first chart,
not with the frame. :mod:`paynb.frames` imports this module, which registers ``df.paynb``.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from typing import Any, TypeVar

import pandas as pd

__all__ = ["PROVIDERS", "PaynbAccessor", "register"]

#: The modules that register helpers on the accessor, imported on first use.
PROVIDERS = ("paynb.plots", "paynb.compliance.charts")

_F = TypeVar("_F", bound=Callable[..., Any])
_HELPERS: dict[str, Callable[..., Any]] = {}


def register(function: _F) -> _F:
    """Make ``function`` (whose first argument is a DataFrame) available as
    ``df.paynb.<its name>``; returns it unchanged, so it works as a decorator."""
    _HELPERS[function.__name__] = function
    return function


def _helpers() -> dict[str, Callable[..., Any]]:
    # By name, on first use: matplotlib loads with the first chart, not with the frame.
    for module in PROVIDERS:
        importlib.import_module(module)
    return _HELPERS


@pd.api.extensions.register_dataframe_accessor("paynb")
class PaynbAccessor:
    """``df.paynb.<helper>(...)``: every registered helper on this frame.

    The helpers are the charts of :mod:`paynb.plots` (``status_summary``,
    ``return_trend``, ``return_rate``, ``return_reasons``, ``returns_calendar``) and of
    :mod:`paynb.compliance.charts` (``return_rate_thresholds``, ``return_exposure``),
    each called with this frame as its first argument and the rest as given.
    """

    def __init__(self, df: pd.DataFrame):
        self._df = df

    def __getattr__(self, name: str) -> Callable[..., Any]:
        if name.startswith("_"):
            raise AttributeError(name)
        function = _HELPERS.get(name) or _helpers().get(name)
        if function is None:
            raise AttributeError(f"df.paynb has no helper {name!r}; it has "
                                 f"{', '.join(sorted(_helpers()))}")
        bound = functools.partial(function, self._df)
        functools.update_wrapper(bound, function)
        return bound

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(_helpers()))
