"""The sandbox's HTTP endpoints, one :class:`fastapi.APIRouter` per area (:data:`ROUTERS`,
in the order :func:`paynb.sandbox.app.create_app` includes them), and what they share.
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
