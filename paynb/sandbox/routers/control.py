"""The ``/sandbox/...`` endpoints: clock, processing, forced statuses, NOCs, users, faults.
No token is needed (loopback); ``sb.simulate`` (:class:`paynb.sandbox.Simulator`) calls them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import replace
from decimal import Decimal
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from paynb._version import __version__
from paynb.codes import STATUS_ORDER
from paynb.sandbox import processing, scenarios
from paynb.sandbox.faults import FaultSettings
from paynb.sandbox.routers._common import Body, Ctx, Problem, json_response, validation
from paynb.sandbox.wire import iso, parse_timestamp
from paynb.validation import parse_item_id

__all__ = ["router"]

router = APIRouter(prefix="/sandbox", tags=["sandbox"])


def _obj(data: Any, allowed: Iterable[str] | None = None) -> dict[str, Any]:
    """``data`` as a JSON object; with ``allowed``, one holding no other field."""
    if not isinstance(data, dict):
        raise validation({"body": ["must be a JSON object"]})
    extra = sorted(set(data).difference(allowed or data))
    if extra:
        raise validation({name: ["is not a field of this request"] for name in extra})
    return data


def _when(ctx: Ctx, data: dict[str, Any], name: str) -> int:
    text = data.get(name)
    if text is None:
        return ctx.store.now()
    value = parse_timestamp(text) if isinstance(text, str) else None
    if value is None:
        raise validation({name: ["must be a date or date-time like 2026-11-01"]})
    return value


def _code_error(code: Any, letter: str, what: str) -> list[str] | None:
    """Why ``code`` is no return (``R``) or change (``C``) code, or None. Any code of that
    shape is taken, also one in none of NACHA's tables (``R99``): the real service may
    send one, and the sandbox shows how paynb reads it (docs/codes.md)."""
    if isinstance(code, str) and re.fullmatch(rf"{letter}\d\d", code):
        return None
    return [f"must be a {what} code: {letter} and two digits, like {letter}01 (NACHA's are "
            "listed in docs/codes.md)"]


def _schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return {"requestBody": {"content": {"application/json": {"schema": schema}}}}


@router.get("/info", summary="Sandbox facts: clock, seed, companies")
def info(ctx: Ctx, request: Request) -> Response:
    """Seed, clock, companies, users, instance and database ids, token requests so far."""
    store = ctx.store
    return json_response({
        "sandbox": True, "version": __version__, "seed": store.seed, "now": iso(store.now()),
        "companies": sorted({c for u in ctx.users.values() for c in u.companies}),
        "users": [{"username": u.username, "companies": list(u.companies)}
                  for u in ctx.users.values()],
        "instanceId": getattr(request.app.state, "instance_id", None),
        "databaseId": store.get_meta("databaseId"),
        "tokenRequests": dict(sorted(ctx.token_requests.items())),
    })


# async: runs on the event loop like the token endpoint, so a token request sees
# the old password and its tokens, or the new password and none of the old tokens.
@router.post("/users/{username}/password", summary="Change (or revoke) a user's password",
             openapi_extra=_schema({"password": {"type": "string"},
                                    "revokeTokens": {"type": "boolean", "default": True}},
                                   ["password"]))
async def set_password(ctx: Ctx, username: str, data: Body) -> Response:
    """Give a user a new password; by default its tokens stop working at once."""
    data = _obj(data, {"password", "revokeTokens"})
    password, revoke = data.get("password"), data.get("revokeTokens", True)
    errors: dict[str, list[str]] = {}
    if not isinstance(password, str) or not password:
        errors["password"] = ["must be a non-empty text"]
    if not isinstance(revoke, bool):
        errors["revokeTokens"] = ["must be true or false"]
    if errors:
        raise validation(errors)
    user = ctx.users.get(username)
    if user is None:
        raise Problem(404, "Not Found", f"No user {username}.")
    ctx.users[username] = replace(user, password=password)
    revoked = ctx.tokens.revoke(username) if revoke else 0
    return json_response({"username": username, "revokedTokens": revoked})


@router.get("/clock", summary="The sandbox clock")
def clock(ctx: Ctx) -> Response:
    """The sandbox time."""
    return json_response({"now": iso(ctx.store.now())})


_UNIT_MS = {"days": processing.DAY_MS, "hours": processing.HOUR_MS, "minutes": 60_000,
            "seconds": 1000}


@router.post("/clock/advance", summary="Move the clock forward and run business processing",
             openapi_extra=_schema({n: {"type": "number"} for n in _UNIT_MS}))
def advance(ctx: Ctx, data: Body) -> Response:
    """Move the sandbox clock forward; every business event now due happens."""
    data = _obj(data, _UNIT_MS)
    total = 0
    for name, value in data.items():
        if isinstance(value, bool) or not isinstance(value, int | float | Decimal) or value < 0:
            raise validation({name: ["must be a number of at least 0"]})
        total += int(Decimal(str(value)) * _UNIT_MS[name])
    return json_response({"now": iso(ctx.store.advance_clock(total))})


@router.post("/process", summary="Run business processing now")
def process(ctx: Ctx) -> Response:
    """Apply every business event due by the sandbox clock."""
    ctx.store.process()
    return json_response({"now": iso(ctx.store.now())})


@router.post("/companycode/{companyCode}/{kind}/{itemId}/status",
             summary="Force an ACH or RCC item into a status",
             openapi_extra=_schema({
                 "status": {"type": "string", "enum": list(STATUS_ORDER)},
                 "code": {"type": "string", "example": "R01"},
                 "message": {"type": "string"},
                 "date": {"type": "string", "example": "2026-11-01"}}, ["status"]))
def force(ctx: Ctx, companyCode: str, kind: str, itemId: str, data: Body) -> Response:
    """Put an item into a status now (or at ``date``), with a return code for R."""
    data = _obj(data, {"status", "code", "message", "date"})
    key = parse_item_id(itemId)
    if kind not in ("ach", "rcc") or key is None:
        raise Problem(404, "Not Found", "Use /sandbox/companycode/{code}/ach|rcc/{itemId}.")
    status, code, message = data.get("status"), data.get("code"), data.get("message")
    errors: dict[str, list[str]] = {}
    if status not in STATUS_ORDER:
        errors["status"] = [f"must be one of {', '.join(STATUS_ORDER)}"]
    if status == "R" and code is None:
        code = "R01"
    if code is not None and (problem := _code_error(code, "R", "return")):
        errors["code"] = problem
    if message is not None and not isinstance(message, str):
        errors["message"] = ["must be text"]
    if errors:
        raise validation(errors)
    if not ctx.store.force_status(kind, companyCode, key, status, at=_when(ctx, data, "date"),
                                  code=code, message=message):
        raise Problem(404, "Not Found", f"No {kind.upper()} item {itemId} "
                                        f"for company {companyCode}.")
    return json_response({"transaction": ctx.store.get(kind, companyCode, key)})


@router.post("/companycode/{companyCode}/ach/{itemId}/noc", summary="Create a NOC for an ACH item",
             openapi_extra=_schema({"changeCode": {"type": "string", "example": "C01"},
                                    "correctedData": {"type": "string"},
                                    "date": {"type": "string", "example": "2026-11-01"}}))
def create_noc(ctx: Ctx, companyCode: str, itemId: str, data: Body) -> Response:
    """Create a NOC for an ACH item now (or at ``date``)."""
    data = _obj(data, {"changeCode", "correctedData", "date"})
    code = data.get("changeCode", "C01")
    corrected = data.get("correctedData")
    if problem := _code_error(code, "C", "change"):
        raise validation({"changeCode": problem})
    if corrected is not None and not isinstance(corrected, str):
        raise validation({"correctedData": ["must be text"]})
    key = parse_item_id(itemId)
    record = None if key is None else ctx.store.create_noc(
        companyCode, key, code, at=_when(ctx, data, "date"), corrected_data=corrected)
    if record is None:
        raise Problem(404, "Not Found", f"No ACH item {itemId} for company {companyCode}.")
    return json_response({"transaction": record})


@router.get("/scenarios", summary="The named demo items: NOCs and retried accounts")
def list_scenarios(ctx: Ctx) -> Response:
    """What each named demo item demonstrates, with its ids, statuses and NOC."""
    return json_response({"scenarios": scenarios.describe(ctx.store)})


@router.get("/faults", summary="Current fault settings")
def get_faults(ctx: Ctx) -> Response:
    """The fault settings and the scripted faults still to come."""
    return json_response(ctx.faults.as_dict())


@router.put("/faults", summary="Set fault settings",
            openapi_extra=_schema({"reads": {"type": "object"}, "writes": {"type": "object"},
                                   "seed": {"type": "integer"}}))
def set_faults(ctx: Ctx, data: Body) -> Response:
    """Replace the random fault settings of reads and/or writes."""
    data = _obj(data, {"reads", "writes", "seed"})
    settings: dict[str, FaultSettings] = {}
    for name in ("reads", "writes"):
        if name in data:
            try:
                settings[name] = FaultSettings.from_dict(_obj(data[name]))
            except (ValueError, TypeError) as exc:
                raise validation({name: [str(exc)]}) from None
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise validation({"seed": ["must be a whole number"]})
    ctx.faults.set(seed=seed, **settings)
    return json_response(ctx.faults.as_dict())


@router.delete("/faults", summary="Remove every fault")
def clear_faults(ctx: Ctx) -> Response:
    """Remove every fault setting and scripted fault."""
    ctx.faults.clear()
    return json_response(ctx.faults.as_dict())


@router.post("/faults/script", summary="Script exact faults for the next requests",
             openapi_extra=_schema({
                 "fault": {"type": "string", "enum": ["503", "429", "drop", "drop_after_commit"]},
                 "count": {"type": "integer", "default": 1},
                 "on": {"type": "string", "enum": ["reads", "writes", "any"]}}, ["fault"]))
def script_faults(ctx: Ctx, data: Body) -> Response:
    """Make the next requests meet exact faults."""
    data = _obj(data, {"fault", "count", "on"})
    try:
        ctx.faults.enqueue(str(data.get("fault")), count=data.get("count", 1),
                           on=data.get("on", "any"))
    except ValueError as exc:
        raise validation({"fault": [str(exc)]}) from None
    return json_response(ctx.faults.as_dict())
