"""The sandbox's HTTP endpoints, one :class:`fastapi.APIRouter` per area.

:data:`ROUTERS` is the order :func:`paynb.sandbox.app.create_app` includes them in.
"""

from __future__ import annotations

from paynb.sandbox.routers import ach, auth, control, docs, instant, nocs, rcc, rtp

__all__ = ["ROUTERS"]

ROUTERS = (auth.router, ach.router, rcc.router, instant.router, rtp.router, nocs.router,
           control.router, docs.router)
