"""The sandbox's HTTP endpoints, one :class:`fastapi.APIRouter` per area.

:data:`ROUTERS` is the order :func:`paynb.sandbox.app.create_app` includes them in; the
request context, problem details and tokens they share come with them.
"""

from __future__ import annotations

from paynb.sandbox.routers import ach, auth, control, docs, instant, nocs, rcc, rtp
from paynb.sandbox.routers._common import (
    VALIDATION_TITLE,
    Context,
    Problem,
    Tokens,
    User,
    problem_response,
    validation,
)

__all__ = ["ROUTERS", "VALIDATION_TITLE", "Context", "Problem", "Tokens", "User",
           "problem_response", "validation"]

ROUTERS = (auth.router, ach.router, rcc.router, instant.router, rtp.router, nocs.router,
           control.router, docs.router)
