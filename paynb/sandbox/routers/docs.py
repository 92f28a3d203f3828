"""``/docs``: Swagger UI of ``/openapi.json``, every file served by the sandbox (FastAPI's
own page loads them from a CDN: blank without internet). Swagger UI 5's files as the
fastapi-offline package ships them.
"""

from __future__ import annotations

import functools
import importlib.resources

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import Response

from paynb.sandbox.routers._common import Problem

__all__ = ["router"]

_ASSETS = "/docs/assets/"
_DOCS_ASSETS = {"swagger-ui-bundle.js": "text/javascript; charset=utf-8",
                "swagger-ui.css": "text/css; charset=utf-8", "favicon.png": "image/png"}

router = APIRouter(include_in_schema=False)


@functools.cache
def _docs_asset(name: str) -> bytes:
    return (importlib.resources.files("fastapi_offline") / "static" / name).read_bytes()


@router.get("/docs")
def docs(request: Request) -> Response:
    """The API docs page."""
    app = request.app
    return get_swagger_ui_html(
        openapi_url=app.openapi_url or "/openapi.json", title=f"{app.title} - API",
        swagger_js_url=_ASSETS + "swagger-ui-bundle.js",
        swagger_css_url=_ASSETS + "swagger-ui.css", swagger_favicon_url=_ASSETS + "favicon.png",
        # No validator badge: it would fetch an image from validator.swagger.io.
        swagger_ui_parameters={"validatorUrl": None})


@router.get(_ASSETS + "{name}")
def docs_asset(name: str) -> Response:
    """One of Swagger UI's files."""
    if name not in _DOCS_ASSETS:
        raise Problem(404, "Not Found", f"No docs file {name}.")
    return Response(_docs_asset(name), media_type=_DOCS_ASSETS[name],
                    headers={"Cache-Control": "public, max-age=86400"})
