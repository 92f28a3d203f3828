"""What every router of the sandbox shares: problem answers, the request context (what
differs between sandboxes, on ``app.state.ctx``), authentication and body dependencies,
list filters and path ids."""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Annotated, Any

from fastapi import Depends, Path, Query, Request
from fastapi.responses import Response

from paynb import models
from paynb.codes import STATUS_ORDER
from paynb.sandbox.faults import Faults
from paynb.sandbox.queries import ListQuery
from paynb.sandbox.store import Store
from paynb.sandbox.wire import dumps, iso, parse_timestamp
from paynb.validation import parse_item_id

__all__ = ["VALIDATION_TITLE", "Body", "Company", "Context", "Ctx", "Listing", "Problem", "User",
           "UserDep", "body_doc", "item_id", "json_response", "parse", "problem_response",
           "require_route", "route_answer", "validation"]

VALIDATION_TITLE = "One or more validation errors occurred."


@dataclass(frozen=True)
class User:
    """A sandbox user and the companies it may act for."""

    username: str
    password: str = field(repr=False)
    companies: tuple[str, ...]


class Problem(Exception):
    """An error answer: becomes an ``application/problem+json`` response."""

    def __init__(self, status: int, title: str, detail: str | None = None, *,
                 errors: dict[str, list[str]] | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(title)
        self.status, self.title, self.detail = status, title, detail
        self.errors, self.headers = errors, headers


_RFC = "https://tools.ietf.org/html/rfc9110#section-15."
_SECTION = {400: "5.1", 401: "5.2", 403: "5.4", 404: "5.5", 405: "5.6", 413: "5.14",
            415: "5.16", 429: "5.29", 500: "6.1", 503: "6.4"}


def problem_response(request: Request, problem: Problem) -> Response:
    """``problem`` as an ASP.NET-style problem detail answer."""
    errors = {} if problem.errors is None else {"errors": problem.errors}
    body = {"type": _RFC + _SECTION.get(problem.status, ""), "title": problem.title,
            "status": problem.status, "detail": problem.detail, "instance": request.url.path,
            **errors, "traceId": secrets.token_hex(8)}
    return Response(dumps(body), status_code=problem.status, headers=problem.headers,
                    media_type="application/problem+json")


def json_response(data: Any, status: int = 200,
                  headers: dict[str, str] | None = None) -> Response:
    """``data`` as a JSON answer (``Decimal`` amounts exact)."""
    return Response(dumps(data), status_code=status, media_type="application/json",
                    headers=headers)


def validation(errors: dict[str, list[str]], detail: str | None = None) -> Problem:
    """A 400 validation problem naming each field and what is wrong with it."""
    return Problem(400, VALIDATION_TITLE, detail, errors=errors)


class Tokens:
    """Issued bearer tokens: opaque random strings, each with its user and expiry."""

    def __init__(self, ttl: float):
        self.ttl = ttl
        self._lock = threading.Lock()
        self._tokens: dict[str, tuple[User, float]] = {}

    def issue(self, user: User) -> str:
        """A new token for ``user``, valid for ``ttl`` seconds."""
        token = secrets.token_urlsafe(32)
        now = time.monotonic()
        with self._lock:
            if len(self._tokens) > 10_000:
                self._tokens = {t: v for t, v in self._tokens.items() if v[1] > now}
            self._tokens[token] = (user, now + self.ttl)
        return token

    def revoke(self, username: str) -> int:
        """Forget every token of ``username``; how many there were."""
        with self._lock:
            kept = {t: v for t, v in self._tokens.items() if v[0].username != username}
            revoked = len(self._tokens) - len(kept)
            self._tokens = kept
        return revoked

    def user(self, token: str) -> User | None:
        """The token's user; raises Problem 401 when the token expired."""
        with self._lock:
            found = self._tokens.get(token)
        if found is None:
            return None
        if found[1] <= time.monotonic():
            raise Problem(401, "Unauthorized", "The access token expired.", headers={
                "WWW-Authenticate": 'Bearer error="invalid_token", '
                                    'error_description="The token expired"'})
        return found[0]


@dataclass
class Context:
    """One sandbox application's state, as the routers see it."""

    store: Store
    faults: Faults
    tokens: Tokens
    users: dict[str, User]  # by username; the simulation may replace one (a new password)
    token_ttl: float
    max_body_bytes: int
    max_bulk_items: int
    # Answers of the token endpoint by outcome ("issued" or the OAuth error), so tests
    # can count token requests on the server side.
    token_requests: Counter[str] = field(default_factory=Counter)


def _context(request: Request) -> Context:
    return request.app.state.ctx  # type: ignore[no-any-return]


Ctx = Annotated[Context, Depends(_context)]


def _current_user(request: Request, ctx: Ctx) -> User:
    header = request.headers.get("authorization", "")
    scheme, _, token_text = header.partition(" ")
    if scheme.lower() != "bearer" or not token_text.strip():
        raise Problem(401, "Unauthorized", "A bearer token is required.",
                      headers={"WWW-Authenticate": "Bearer"})
    user = ctx.tokens.user(token_text.strip())
    if user is None:
        raise Problem(401, "Unauthorized", "The access token is not valid.",
                      headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
    return user


UserDep = Annotated[User, Depends(_current_user)]


def _company(companyCode: Annotated[str, Path()], user: UserDep) -> str:
    if companyCode not in user.companies:
        raise Problem(403, "Forbidden", f"The user may not act for company {companyCode}.")
    return companyCode


Company = Annotated[str, Depends(_company)]


def _too_large(limit: int) -> Problem:
    return Problem(413, "Payload Too Large", f"The body is larger than {limit} bytes.")


async def _json_body(request: Request, ctx: Ctx) -> Any:
    limit = ctx.max_body_bytes
    length = request.headers.get("content-length", "")
    if length.isascii() and length.isdigit() and int(length) > limit:
        raise _too_large(limit)
    raw = bytearray()
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > limit:
            raise _too_large(limit)
    if not raw.strip():
        raise validation({"body": ["a JSON body is required"]})
    try:
        # Decimal keeps amounts exact from the first byte on.
        return json.loads(raw, parse_float=Decimal)
    except (ValueError, RecursionError):
        raise validation({"body": ["is not valid JSON"]}) from None


Body = Annotated[Any, Depends(_json_body)]


def parse(model: type[models.RequestModel], data: Any) -> Any:
    """``data`` as a ``model``; a 400 naming every field in error otherwise."""
    item, errors = models.check(model, data)
    if errors:
        raise validation(errors)
    return item


def item_id(kind: str, text: str) -> int:
    """An ACH or RCC id from the path (ASCII digits only); anything else is an unknown id."""
    value = parse_item_id(text)
    if value is None:
        raise Problem(404, "Not Found", f"No {kind.upper()} item {text}.")
    return value


def _list_query(
    page: Annotated[int, Query(ge=0, le=10_000_000, description="Zero-based page")] = 0,
    page_size: Annotated[int, Query(alias="pageSize", ge=1, le=1000)] = 100,
    item_status: Annotated[list[str] | None, Query(
        alias="itemStatus", description="Repeatable: W S R I B V")] = None,
    return_date_start: Annotated[str | None, Query(
        alias="returnDateStart", description="e.g. 2026-11-01T00:00:00.000 (UTC)")] = None,
    return_date_end: Annotated[str | None, Query(alias="returnDateEnd")] = None,
    your_reference_number: Annotated[str | None, Query(
        alias="yourReferenceNumber", description="Sandbox extra: exact match")] = None,
) -> ListQuery:
    errors: dict[str, list[str]] = {}
    statuses = tuple(dict.fromkeys(s.strip().upper() for s in item_status or ()
                                   for s in s.split(",") if s.strip()))
    if any(s not in STATUS_ORDER for s in statuses):
        errors["itemStatus"] = [f"must be one of {', '.join(STATUS_ORDER)}"]
    bounds = []
    for name, text in (("returnDateStart", return_date_start),
                       ("returnDateEnd", return_date_end)):
        value = parse_timestamp(text) if text else None
        if text and value is None:
            errors[name] = ["must be a date-time like 2026-11-01T00:00:00.000"]
        bounds.append(value)
    if errors:
        raise validation(errors)
    return ListQuery(page, page_size, statuses, bounds[0], bounds[1], your_reference_number)


Listing = Annotated[ListQuery, Depends(_list_query)]


def body_doc(model: type[models.RequestModel]) -> dict[str, Any]:
    """``openapi_extra`` documenting a JSON body of ``model``."""
    ref = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": ref}}}}


def require_route(ctx: Context, scope: str, key: str, field_name: str, what: str,
                  max_amount: int, amount: Decimal) -> None:
    """Refuse an instant payment without a recent successful route check, or above its limit."""
    if not ctx.store.route_checked(scope, key):
        minutes = ctx.store.config.route_check_valid_ms // 60_000
        raise Problem(400, "Route not checked",
                      f"Do a route check for this {what} before sending (a successful "
                      f"check is valid for {minutes} minutes).",
                      errors={field_name: [f"no successful route check in the last "
                                           f"{minutes} minutes"]})
    if amount > max_amount:
        raise validation({"amount": [f"is above the route's limit of {max_amount}"]})


def route_answer(ctx: Context, head: dict[str, Any], payment_type: str,
                 max_amount: int | None) -> Response:
    """A route check's answer: ``head``, the payment type up to ``max_amount`` (none when
    None: not supported) and how long the check holds."""
    now = ctx.store.now()
    return json_response({
        **head,
        "paymentTypes": [] if max_amount is None else [
            {"type": payment_type, "maxAmount": max_amount, "currency": "USD"}],
        "checkedDateTime": iso(now),
        "validUntil": iso(now + ctx.store.config.route_check_valid_ms),
    })
