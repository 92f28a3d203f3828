"""The token endpoint: ``POST /connect/token`` (OAuth 2 password grant)."""

from __future__ import annotations

import secrets

from fastapi import APIRouter, Request
from fastapi.responses import Response

from paynb.sandbox.routers._common import Ctx, json_response

__all__ = ["CLIENT_ID", "CLIENT_SECRET", "router"]

CLIENT_ID = "paynb-sandbox"
CLIENT_SECRET = "sandbox-secret"

router = APIRouter(tags=["auth"])

_FORM_DOC = {"requestBody": {"required": True, "content": {
    "application/x-www-form-urlencoded": {"schema": {
        "type": "object",
        "required": ["grant_type", "client_id", "client_secret", "username", "password"],
        "properties": {n: {"type": "string"} for n in (
            "grant_type", "client_id", "client_secret", "username", "password", "scope")}}}}}}


# async: runs on the event loop like the password change of the simulation, so a token
# request sees the old password and its tokens, or the new password and none of them.
@router.post("/connect/token", summary="Get an access token (password grant)",
             openapi_extra=_FORM_DOC)
async def token(request: Request, ctx: Ctx) -> Response:
    """Issue a bearer token for a demo user."""
    try:
        form = await request.form()
    except Exception:  # a body that is not a form at all
        form = {}  # type: ignore[assignment]

    def fail(error: str, description: str) -> Response:
        ctx.token_requests[error] += 1
        return json_response({"error": error, "error_description": description}, 400,
                             {"Cache-Control": "no-store"})

    grant = form.get("grant_type")
    if not grant:
        return fail("invalid_request", "grant_type is required")
    if grant != "password":
        return fail("unsupported_grant_type", "only the password grant is supported")
    if not all(form.get(n) for n in ("client_id", "client_secret", "username", "password")):
        return fail("invalid_request",
                    "client_id, client_secret, username and password are required")
    if not (secrets.compare_digest(str(form["client_id"]), CLIENT_ID)
            and secrets.compare_digest(str(form["client_secret"]), CLIENT_SECRET)):
        return fail("invalid_client", "unknown client or wrong client secret")
    user = ctx.users.get(str(form["username"]))
    if user is None or not secrets.compare_digest(str(form["password"]), user.password):
        return fail("invalid_grant", "invalid username or password")
    ctx.token_requests["issued"] += 1
    return json_response({"access_token": ctx.tokens.issue(user),
                          "expires_in": int(ctx.token_ttl), "token_type": "Bearer",
                          "scope": "paynb.api"}, 200,
                         {"Cache-Control": "no-store", "Pragma": "no-cache"})
