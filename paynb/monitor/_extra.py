"""The ``monitor`` extra: the packages a morning run needs, and the error that names them."""

from __future__ import annotations

import importlib.util

from paynb.errors import MissingExtraError

__all__ = ["EXTRA_MODULES", "require_extra"]

#: The modules of the ``monitor`` extra, by the package that brings each.
EXTRA_MODULES = {"papermill": "papermill", "nbconvert": "nbconvert", "apprise": "apprise",
                 "prometheus_client": "prometheus-client", "ipykernel": "ipykernel"}


def require_extra() -> None:
    """Raise :class:`~paynb.errors.MissingExtraError` naming the ``monitor`` extra (and the
    packages missing) unless it is installed."""
    missing = [package for module, package in EXTRA_MODULES.items()
               if importlib.util.find_spec(module) is None]
    if missing:
        raise MissingExtraError(
            f"the morning run needs the monitor extra: pip install 'paynb[monitor]' "
            f"(missing: {', '.join(missing)})", extra="monitor", missing=missing)
