"""The sandbox's HTTP application: every endpoint of the service (one router per area in
:mod:`paynb.sandbox.routers`), the token endpoint and the simulation endpoints under
``/sandbox``. Request bodies are parsed with :mod:`paynb.models`, as the client and the
forms do, so the sandbox cannot disagree with them; every error is an ASP.NET-style
problem detail.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from pydantic.json_schema import models_json_schema
from starlette.exceptions import HTTPException as StarletteHTTPException

from paynb import models
from paynb._sign import SANDBOX_HEADER, SANDBOX_TIME_HEADER, SANDBOX_VALUE
from paynb._version import __version__
from paynb.sandbox import routers
from paynb.sandbox.faults import FaultMiddleware, Faults
from paynb.sandbox.routers import ROUTERS, VALIDATION_TITLE, User
from paynb.sandbox.routers.auth import CLIENT_ID, CLIENT_SECRET
from paynb.sandbox.store import Store
from paynb.sandbox.wire import iso

__all__ = ["CLIENT_ID", "CLIENT_SECRET", "DEMO_USERS", "VALIDATION_TITLE", "AppConfig",
           "SignMiddleware", "User", "create_app"]

logger = logging.getLogger("paynb.sandbox")

DEMO_USERS: tuple[User, ...] = (
    User("analyst", "analyst-password", ("DEMO1", "DEMO2")),
    User("other", "other-password", ("DEMO2",)),
)

_TITLES = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 413: "Payload Too Large", 500: "Internal Server Error"}


@dataclass
class AppConfig:
    """Settings of one sandbox application."""

    token_ttl: float = 3600.0
    max_body_bytes: int = 5 * 1024 * 1024
    max_bulk_items: int = 10_000
    users: tuple[User, ...] = DEMO_USERS


def create_app(store: Store, *, config: AppConfig | None = None,
               faults: Faults | None = None, instance_id: str | None = None) -> Any:
    """The sandbox as an ASGI application: FastAPI wrapped in the fault middleware, wrapped
    in :class:`SignMiddleware`. ``instance_id`` is what ``GET /sandbox/info`` names this
    running sandbox by."""
    config = config or AppConfig()
    faults = faults or Faults()
    app = FastAPI(
        title="paynb sandbox",
        version=__version__,
        description="An embedded sandbox of the payment item service (ACH, RCC, instant "
                    "card, instant RTP, ACH NOCs). Get a token at `/connect/token` "
                    f"(client `{CLIENT_ID}` / `{CLIENT_SECRET}`, user `analyst` / "
                    "`analyst-password`), then call the service paths with "
                    "`Authorization: Bearer <token>`. Rules and tables: docs/sandbox.md.",
        docs_url=None,  # FastAPI's page loads from a CDN: routers.docs serves one locally
        redoc_url=None,
    )
    app.state.instance_id = instance_id
    app.state.ctx = routers.Context(
        store=store, faults=faults, tokens=routers.Tokens(config.token_ttl),
        users={u.username: u for u in config.users}, token_ttl=config.token_ttl,
        max_body_bytes=config.max_body_bytes, max_bulk_items=config.max_bulk_items)
    _add_error_handlers(app)
    for router in ROUTERS:
        app.include_router(router)
    app.openapi = lambda: _openapi(app)  # type: ignore[method-assign]
    return SignMiddleware(FaultMiddleware(app, faults), store)


class SignMiddleware:
    """ASGI middleware that names the sandbox in every answer, faults included (the real
    service sends neither): ``X-Paynb-Sandbox: 1`` and the sandbox clock in
    ``X-Paynb-Sandbox-Time`` (:mod:`paynb._sign`), which a client reads."""

    def __init__(self, app: Any, store: Store) -> None:
        self.app = app
        self.store = store

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def signed(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                # The clock as the answer leaves (after an advance it made, say).
                message = {**message, "headers": [
                    *message.get("headers", ()),
                    (SANDBOX_HEADER.lower().encode(), SANDBOX_VALUE.encode()),
                    (SANDBOX_TIME_HEADER.lower().encode(), str(iso(self.store.now())).encode())]}
            await send(message)

        await self.app(scope, receive, signed)


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(routers.Problem)
    async def _on_problem(request: Request, exc: routers.Problem) -> Response:
        return routers.problem_response(request, exc)

    @app.exception_handler(RequestValidationError)
    async def _on_invalid(request: Request, exc: RequestValidationError) -> Response:
        errors: dict[str, list[str]] = {}
        for error in exc.errors():
            name = str(error["loc"][-1]) if error["loc"] else "request"
            errors.setdefault(name, []).append(_plain(error))
        return routers.problem_response(request, routers.validation(errors))

    @app.exception_handler(StarletteHTTPException)
    async def _on_http(request: Request, exc: StarletteHTTPException) -> Response:
        title = _TITLES.get(exc.status_code, "Error")
        detail = None if exc.detail == title else str(exc.detail)
        problem = routers.Problem(exc.status_code, title, detail, headers=exc.headers)
        return routers.problem_response(request, problem)

    @app.exception_handler(Exception)
    async def _on_crash(request: Request, exc: Exception) -> Response:
        logger.exception("sandbox error on %s %s", request.method, request.url.path)
        return routers.problem_response(request, routers.Problem(500, "Internal Server Error"))


def _openapi(app: FastAPI) -> dict[str, Any]:
    """The OpenAPI document, with the JSON schemas of the request models (and what they nest)."""
    if app.openapi_schema:
        return app.openapi_schema
    schema = get_openapi(title=app.title, version=app.version, description=app.description,
                         routes=app.routes)
    names = [models.AchItem, models.AchBulkRequest, models.RccItem, models.RccBulkRequest,
             models.CardRouteCheck, models.TokenRouteCheck, models.InstantCardTransaction,
             models.RtpTransaction, models.VoidByReferences, models.AchVoidByIds,
             models.RccVoidByIds]
    _, bodies = models_json_schema([(m, "validation") for m in names], by_alias=True,
                                   ref_template="#/components/schemas/{model}")
    schema.setdefault("components", {}).setdefault("schemas", {}).update(bodies.get("$defs", {}))
    app.openapi_schema = schema
    return schema


def _plain(error: dict[str, Any]) -> str:
    kind = error.get("type", "")
    if kind.startswith(("int", "greater", "less")):
        ctx = error.get("ctx") or {}
        bounds = [f"{word} {ctx[key]}" for key, word in (("ge", "at least"), ("le", "at most"))
                  if key in ctx]
        return "must be a whole number" + (" " + " and ".join(bounds) if bounds else "")
    if kind == "missing":
        return "is required"
    return str(error.get("msg", "is not valid"))
