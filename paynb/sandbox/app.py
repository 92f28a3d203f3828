"""The sandbox's HTTP application: every endpoint of the service, the token
endpoint, and the simulation endpoints under ``/sandbox``.

Request bodies are parsed with :mod:`paynb.models` (the same models the
client and the forms use), so the sandbox cannot disagree with them. Bulk
bodies are checked item by item so that ``alwaysCommitValid: true`` can
commit the valid items. Every error is an ASP.NET-style problem detail.
"""


import functools
import hashlib
import importlib.resources
import json
import logging
import secrets
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from pydantic.json_schema import models_json_schema
from starlette.exceptions import HTTPException as StarletteHTTPException

from paynb import models
from paynb._version import __version__
from paynb.codes import NOC_CODES, RETURN_CODES, STATUS_ORDER
from paynb.sandbox import items, rules
from paynb.sandbox.faults import FaultMiddleware, Faults, FaultSettings
from paynb.sandbox.store import KINDS, ListQuery, Store, VoidError
from paynb.sandbox.wire import dumps, iso, parse_timestamp
from paynb.validation import check_routing_number

__all__ = ["CLIENT_ID", "CLIENT_SECRET", "DEMO_USERS", "AppConfig", "User", "create_app"]

logger = logging.getLogger("paynb.sandbox")

CLIENT_ID = "paynb-sandbox"
CLIENT_SECRET = "sandbox-secret"


@dataclass(frozen=True)
class User:
    """A sandbox user and the companies it may act for."""

    username: str
    password: str = field(repr=False)
    companies: tuple[str, ...]


DEMO_USERS: tuple[User, ...] = (
    User("analyst", "analyst-password", ("DEMO1", "DEMO2")),
    User("other", "other-password", ("DEMO2",)),
)


@dataclass
class AppConfig:
    """Settings of one sandbox application."""

    token_ttl: float = 3600.0
    max_body_bytes: int = 5 * 1024 * 1024
    max_bulk_items: int = 10_000
    users: tuple[User, ...] = DEMO_USERS


class Problem(Exception):
    """An error answer: becomes an ``application/problem+json`` response."""

    def __init__(self, status: int, title: str, detail: str | None = None, *,
                 errors: dict[str, list[str]] | None = None,
                 headers: dict[str, str] | None = None):
        super().__init__(title)
        self.status, self.title, self.detail = status, title, detail
        self.errors, self.headers = errors, headers


VALIDATION_TITLE = "One or more validation errors occurred."


def _problem_response(request: Request, problem: Problem) -> Response:
    body: dict[str, Any] = {
        "type": _RFC + _SECTION.get(problem.status, ""),
        "title": problem.title,
        "status": problem.status,
        "detail": problem.detail,
        "instance": request.url.path,
    }
    if problem.errors is not None:
        body["errors"] = problem.errors
    body["traceId"] = secrets.token_hex(8)
    return Response(dumps(body), status_code=problem.status, headers=problem.headers,
                    media_type="application/problem+json")


_RFC = "https://tools.ietf.org/html/rfc9110#section-15."
_SECTION = {400: "5.1", 401: "5.2", 403: "5.4", 404: "5.5", 405: "5.6", 413: "5.14",
            415: "5.16", 429: "5.29", 500: "6.1", 503: "6.4"}
_TITLES = {400: "Bad Request", 401: "Unauthorized", 403: "Forbidden", 404: "Not Found",
           405: "Method Not Allowed", 413: "Payload Too Large", 500: "Internal Server Error"}


def _json(data: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(dumps(data), status_code=status, media_type="application/json",
                    headers=headers)


def _validation(errors: dict[str, list[str]], detail: str | None = None) -> Problem:
    return Problem(400, VALIDATION_TITLE, detail, errors=errors)


class _Tokens:
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


def _body_schemas() -> dict[str, Any]:
    """JSON schemas of the request models (and what they nest), for the OpenAPI document."""
    names = [models.AchItem, models.AchBulkRequest, models.RccItem, models.RccBulkRequest,
             models.CardRouteCheck, models.TokenRouteCheck, models.InstantCardTransaction,
             models.RtpTransaction, models.VoidByReferences, models.AchVoidByIds,
             models.RccVoidByIds]
    _, schemas = models_json_schema([(m, "validation") for m in names], by_alias=True,
                                    ref_template="#/components/schemas/{model}")
    return schemas.get("$defs", {})


def _body(model: type[models.RequestModel]) -> dict[str, Any]:
    """``openapi_extra`` documenting a JSON body of ``model``."""
    ref = {"$ref": f"#/components/schemas/{model.__name__}"}
    return {"requestBody": {"required": True, "content": {"application/json": {"schema": ref}}}}


def create_app(store: Store, *, config: AppConfig | None = None,
               faults: Faults | None = None) -> Any:
    """The sandbox as an ASGI application (FastAPI wrapped in the fault middleware)."""
    config = config or AppConfig()
    faults = faults or Faults()
    tokens = _Tokens(config.token_ttl)
    # By username; the simulation may replace a user (a changed password).
    users = {u.username: u for u in config.users}
    # Answers of the token endpoint by outcome ("issued" or the OAuth error), so tests
    # can count token requests on the server side.
    token_requests: Counter[str] = Counter()
    app = FastAPI(
        title="paynb sandbox",
        version=__version__,
        description="An embedded sandbox of the payment item service (ACH, RCC, instant "
                    "card, instant RTP, ACH NOCs). Get a token at `/connect/token` "
                    f"(client `{CLIENT_ID}` / `{CLIENT_SECRET}`, user `analyst` / "
                    "`analyst-password`), then call the service paths with "
                    "`Authorization: Bearer <token>`. Rules and tables: docs/sandbox.md.",
        # FastAPI's own pages load Swagger UI from a CDN: add_docs_routes serves it locally.
        docs_url=None,
        redoc_url=None,
    )
    app.state.store, app.state.faults, app.state.config = store, faults, config
    app.state.users, app.state.tokens, app.state.token_requests = users, tokens, token_requests

    # -- errors -----------------------------------------------------------------------

    @app.exception_handler(Problem)
    async def _on_problem(request: Request, exc: Problem) -> Response:
        return _problem_response(request, exc)

    @app.exception_handler(RequestValidationError)
    async def _on_invalid(request: Request, exc: RequestValidationError) -> Response:
        errors: dict[str, list[str]] = {}
        for error in exc.errors():
            name = str(error["loc"][-1]) if error["loc"] else "request"
            errors.setdefault(name, []).append(_plain(error))
        return _problem_response(request, _validation(errors))

    @app.exception_handler(StarletteHTTPException)
    async def _on_http(request: Request, exc: StarletteHTTPException) -> Response:
        title = _TITLES.get(exc.status_code, "Error")
        detail = None if exc.detail == title else str(exc.detail)
        return _problem_response(request, Problem(exc.status_code, title, detail,
                                                  headers=exc.headers))

    @app.exception_handler(Exception)
    async def _on_crash(request: Request, exc: Exception) -> Response:
        logger.exception("sandbox error on %s %s", request.method, request.url.path)
        return _problem_response(request, Problem(500, "Internal Server Error"))

    # -- auth -------------------------------------------------------------------------

    @app.post("/connect/token", tags=["auth"], summary="Get an access token (password grant)",
              openapi_extra={"requestBody": {"required": True, "content": {
                  "application/x-www-form-urlencoded": {"schema": {
                      "type": "object",
                      "required": ["grant_type", "client_id", "client_secret", "username",
                                   "password"],
                      "properties": {n: {"type": "string"} for n in (
                          "grant_type", "client_id", "client_secret", "username", "password",
                          "scope")}}}}}})
    async def token(request: Request) -> Response:
        try:
            form = await request.form()
        except Exception:  # a body that is not a form at all
            form = {}  # type: ignore[assignment]

        def fail(error: str, description: str) -> Response:
            token_requests[error] += 1
            return _json({"error": error, "error_description": description}, 400,
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
        user = users.get(str(form["username"]))
        if user is None or not secrets.compare_digest(str(form["password"]), user.password):
            return fail("invalid_grant", "invalid username or password")
        token_requests["issued"] += 1
        return _json({"access_token": tokens.issue(user), "expires_in": int(config.token_ttl),
                      "token_type": "Bearer", "scope": "paynb.api"}, 200,
                     {"Cache-Control": "no-store", "Pragma": "no-cache"})

    def current_user(request: Request) -> User:
        header = request.headers.get("authorization", "")
        scheme, _, token_text = header.partition(" ")
        if scheme.lower() != "bearer" or not token_text.strip():
            raise Problem(401, "Unauthorized", "A bearer token is required.",
                          headers={"WWW-Authenticate": "Bearer"})
        user = tokens.user(token_text.strip())
        if user is None:
            raise Problem(401, "Unauthorized", "The access token is not valid.",
                          headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
        return user

    def company(companyCode: Annotated[str, Path()],
                user: Annotated[User, Depends(current_user)]) -> str:
        if companyCode not in user.companies:
            raise Problem(403, "Forbidden", f"The user may not act for company {companyCode}.")
        return companyCode

    Company = Annotated[str, Depends(company)]
    UserDep = Annotated[User, Depends(current_user)]

    async def json_body(request: Request) -> Any:
        length = request.headers.get("content-length", "")
        if length.isdigit() and int(length) > config.max_body_bytes:
            raise _too_large(config.max_body_bytes)
        raw = bytearray()
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > config.max_body_bytes:
                raise _too_large(config.max_body_bytes)
        if not raw.strip():
            raise _validation({"body": ["a JSON body is required"]})
        try:
            # Decimal keeps amounts exact from the first byte on.
            return json.loads(raw, parse_float=Decimal)
        except (ValueError, RecursionError):
            raise _validation({"body": ["is not valid JSON"]}) from None

    Body = Annotated[Any, Depends(json_body)]

    def parse(model: type[models.RequestModel], data: Any) -> Any:
        item, errors = models.check(model, data)
        if errors:
            raise _validation(errors)
        return item

    def list_query(
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
            raise _validation(errors)
        return ListQuery(page, page_size, statuses, bounds[0], bounds[1], your_reference_number)

    Listing = Annotated[ListQuery, Depends(list_query)]

    # -- shared endpoint bodies -------------------------------------------------------

    def _item_id(kind: str, text: str) -> int:
        """An ACH or RCC id from the path; anything but digits is an unknown id."""
        if not (text.isascii() and text.isdigit()) or len(text) > 18:
            raise Problem(404, "Not Found", f"No {kind.upper()} item {text}.")
        return int(text)

    def get_item(kind: str, company_code: str, item_id: int | str) -> Response:
        record = store.get(kind, company_code, item_id)
        if record is None:
            raise Problem(404, "Not Found", f"No {kind.upper()} item {item_id} "
                                            f"for company {company_code}.")
        return _json({"transaction": record})

    def export(kind: str, company_code: str, query: ListQuery, filetype: str) -> Response:
        filetype = filetype.lower()
        if filetype not in _MEDIA:
            raise _validation({"filetype": ["must be csv, json or xlsx"]},
                              "Unsupported export file type.")
        document = store.export(kind, company_code, query, filetype)
        stamp = iso(store.now())[:10].replace("-", "")  # type: ignore[index]
        name = f"{kind}-{company_code}-{stamp}.{filetype}"
        return Response(document, media_type=_MEDIA[filetype],
                        headers={"Content-Disposition": f'attachment; filename="{name}"'})

    def submit_one(kind: str, company_code: str, build: items.Build) -> Response:
        record = store.insert(kind, company_code, [build])[0]
        return _json({"transaction": record})

    def submit_many(kind: str, company_code: str, data: Any,
                    bulk_model: type[models.BulkRequest],
                    item_model: type[models.RequestModel],
                    row: Callable[[Any, int, int], items.Build]) -> Response:
        _, errors = models.check(bulk_model, data)
        top = {k: v for k, v in errors.items() if not k.startswith("items[")}
        if top:
            raise _validation(top)
        raw_items = data["items"]
        if len(raw_items) > config.max_bulk_items:
            raise _validation({"items": [f"must hold at most {config.max_bulk_items} items"]})
        head = {k: v for k, v in data.items() if k != "items"}
        commit_valid = models.BulkRequest.model_validate(head).always_commit_valid
        per_item: dict[int, dict[str, list[str]]] = {}
        for key, messages in errors.items():
            index, _, rest = key[len("items["):].partition("]")
            per_item.setdefault(int(index), {})[rest.lstrip(".") or "item"] = messages
        if per_item and not commit_valid:
            raise _validation(errors, f"{len(per_item)} of {len(raw_items)} items are "
                                      "invalid; nothing was stored.")
        now = store.now()
        builds = [items.invalid_row(kind, raw, KINDS[kind].fields, now) if i in per_item
                  else row(item_model.model_validate(raw), now, store.seed)
                  for i, raw in enumerate(raw_items)]
        records = store.insert(kind, company_code, builds)
        for index, problems in per_item.items():
            records[index]["errors"] = problems
        return _json({"total": len(records), "validCount": len(records) - len(per_item),
                      "invalidCount": len(per_item), "transactions": records})

    def void(kind: str, company_code: str, *, many: bool, **choice: Any) -> Response:
        try:
            records = store.void(kind, company_code, **choice)
        except VoidError as exc:
            raise _validation(exc.errors, exc.detail) from None
        return _json({"transactions": records} if many else {"transaction": records[0]})

    def void_one(kind: str, company_code: str, item_text: str) -> Response:
        item_id = _item_id(kind, item_text)
        if store.get(kind, company_code, item_id) is None:
            raise Problem(404, "Not Found", f"No {kind.upper()} item {item_id} "
                                            f"for company {company_code}.")
        return void(kind, company_code, many=False, ids=[item_id],
                    field_name=KINDS[kind].id_field)

    # -- reading (every kind) ---------------------------------------------------------

    def add_read_routes(kind: str, prefix: str, tag: str, what: str, *,
                        get_paths: tuple[str, ...] = (), id_name: str = "itemId") -> None:
        """List, export and (for each of ``get_paths``) get-one endpoints of ``kind``."""

        @app.get(prefix, tags=[tag], summary=f"List {what} (paged)")
        def list_items(company_code: Company, query: Listing) -> Response:
            return Response(store.list_json(kind, company_code, query),
                            media_type="application/json")

        @app.get(prefix + "/export/filetype/{fileType}", tags=[tag],
                 summary=f"Export {what} (csv, json, xlsx)")
        def export_items(company_code: Company, query: Listing, fileType: str) -> Response:
            return export(kind, company_code, query, fileType)

        for path in get_paths:
            @app.get(path, tags=[tag], summary=f"One of the {what}")
            def get_one(company_code: Company,
                        item: Annotated[str, Path(alias=id_name)]) -> Response:
                key = _item_id(kind, item) if id_name == "itemId" else item
                return get_item(kind, company_code, key)

    # -- ACH and RCC ------------------------------------------------------------------

    def add_item_routes(kind: str, prefix: str, bulk_paths: list[str],
                        item_model: type[models.RequestModel],
                        bulk_model: type[models.BulkRequest],
                        row: Callable[[Any, int, int], items.Build],
                        ids_model: type[models.RequestModel], ids_path: str) -> None:
        tag = kind.upper()
        ids_field = next(iter(ids_model.wire_names().values()))

        @app.post(prefix, tags=[tag], summary=f"Add one {tag} item",
                  openapi_extra=_body(item_model))
        def submit(company_code: Company, data: Body) -> Response:
            item = parse(item_model, data)
            return submit_one(kind, company_code, row(item, store.now(), store.seed))

        for path in bulk_paths:
            @app.post(path, tags=[tag], summary=f"Add several {tag} items",
                      openapi_extra=_body(bulk_model))
            def submit_bulk(company_code: Company, data: Body) -> Response:
                return submit_many(kind, company_code, data, bulk_model, item_model, row)

        add_read_routes(kind, prefix, tag, f"{tag} items", get_paths=(prefix + "/{itemId}",))

        @app.put(prefix + "/{itemId}/void", tags=[tag], summary=f"Void one {tag} item (W -> V)")
        def void_by_id(company_code: Company, itemId: str) -> Response:
            return void_one(kind, company_code, itemId)

        @app.put(prefix + "/void/referencenumbers", tags=[tag],
                 summary=f"Void {tag} items by your reference numbers",
                 openapi_extra=_body(models.VoidByReferences))
        def void_by_references(company_code: Company, data: Body) -> Response:
            request = parse(models.VoidByReferences, data)
            return void(kind, company_code, many=True, references=request.reference_numbers,
                        field_name="referenceNumbers")

        @app.put(prefix + ids_path, tags=[tag], summary=f"Void {tag} items by item ids",
                 openapi_extra=_body(ids_model))
        def void_by_ids(company_code: Company, data: Body) -> Response:
            request = parse(ids_model, data)
            return void(kind, company_code, many=True,
                        ids=next(iter(request.model_dump().values())), field_name=ids_field)

    ach = "/api/v3/AchTransactions/companycode/{companyCode}"
    rcc = "/api/v3/RccTransactions/companycode/{companyCode}"
    add_item_routes("ach", ach, [ach + "/many"], models.AchItem, models.AchBulkRequest,
                    items.ach_row, models.AchVoidByIds, "/void/achitemids")
    add_item_routes("rcc", rcc, ["/apiv3/RccTransactions/companycode/{companyCode}/many",
                                 rcc + "/many"],
                    models.RccItem, models.RccBulkRequest, items.rcc_row, models.RccVoidByIds,
                    "/void/rccitemids")

    # -- instant card -----------------------------------------------------------------

    def card_key(card_number: str) -> str:
        # Only a keyed hash of the card number is kept, never the number itself.
        return "card:" + hashlib.blake2b(card_number.encode(), key=_CARD_KEY).hexdigest()

    def route_answer(route: rules.CardRoute, last_four: str, payment_type: str) -> dict:
        now = store.now()
        return {
            "supported": route.supported,
            "reachable": route.reachable,
            "cardBrand": route.brand,
            "cardLastFour": last_four,
            "paymentTypes": [{"type": payment_type, "maxAmount": route.max_amount,
                              "currency": "USD"}] if route.supported else [],
            "checkedDateTime": iso(now),
            "validUntil": iso(now + rules.ROUTE_CHECK_VALID_MS),
        }

    def token_last_four(token_id: str, sub_client: str) -> str:
        digest = hashlib.blake2b(f"{token_id}|{sub_client}".encode(), digest_size=4).digest()
        return f"{int.from_bytes(digest, 'big') % 10_000:04d}"

    instant = "/api/v3/InstantTransactions/companycode/{companyCode}"

    @app.post("/api/v3/InstantRoutes/companycode/{companyCode}", tags=["Instant card"],
              summary="Route check by card number", openapi_extra=_body(models.CardRouteCheck))
    def card_route_check(company_code: Company, data: Body) -> Response:
        check = parse(models.CardRouteCheck, data)
        route = rules.card_route(check.card_number)
        if route.supported and route.reachable:
            store.remember_route_check(company_code, card_key(check.card_number))
        return _json(route_answer(route, check.card_number[-4:], "Push"))

    @app.post("/api/v3/InstantRoutes/companycode/{companyCode}/token", tags=["Instant card"],
              summary="Route check by token", openapi_extra=_body(models.TokenRouteCheck))
    def token_route_check(company_code: Company, data: Body) -> Response:
        check = parse(models.TokenRouteCheck, data)
        route = rules.token_route(check.token_id)
        if route.supported and route.reachable:
            store.remember_route_check(company_code,
                                       f"token:{check.token_id}|{check.your_sub_client_id}")
        return _json(route_answer(route, token_last_four(check.token_id,
                                                         check.your_sub_client_id), "Push"))

    @app.post(instant, tags=["Instant card"], summary="Send an instant card payment",
              openapi_extra=_body(models.InstantCardTransaction))
    def instant_send(company_code: Company, data: Body) -> Response:
        txn = parse(models.InstantCardTransaction, data)
        if txn.card_number:
            key, field_name = card_key(txn.card_number), "cardNumber"
            route, last_four = rules.card_route(txn.card_number), txn.card_number[-4:]
        else:
            key, field_name = f"token:{txn.token_id}|{txn.your_sub_client_id}", "tokenId"
            route = rules.token_route(txn.token_id)
            last_four = token_last_four(txn.token_id, txn.your_sub_client_id)
        require_route(company_code, key, field_name, "card", route.max_amount, txn.amount)
        return submit_one("instant", company_code, items.instant_row(
            txn, store.now(), brand=route.brand, last_four=last_four))

    def require_route(scope: str, key: str, field_name: str, what: str, max_amount: int,
                      amount: Decimal) -> None:
        if not store.route_checked(scope, key):
            raise Problem(400, "Route not checked",
                          f"Do a route check for this {what} before sending (a successful "
                          "check is valid for 15 minutes).",
                          errors={field_name: ["no successful route check in the last "
                                               "15 minutes"]})
        if amount > max_amount:
            raise _validation({"amount": [f"is above the route's limit of {max_amount}"]})

    add_read_routes("instant", instant, "Instant card", "instant card payments", get_paths=(
        "/api/v3/InstantTransactinos/companycode/{companyCode}/{uniqueId}",
        instant + "/{uniqueId}"), id_name="uniqueId")

    # -- instant RTP ------------------------------------------------------------------

    rtp = "/api/v3/InstantRtpTransactions/companycode/{companyCode}"

    @app.get("/api/v3/InstantRtpRoutes/{routingNumber}", tags=["Instant RTP"],
             summary="Route inquiry by routing number")
    def rtp_route(routingNumber: str, user: UserDep) -> Response:
        problem = check_routing_number(routingNumber)
        if problem:
            raise _validation({"routingNumber": [problem]})
        bank = rules.RTP_BANKS.get(routingNumber)
        now = store.now()
        if bank and bank.reachable:
            store.remember_route_check(f"user:{user.username}", f"rtp:{routingNumber}")
        return _json({
            "routingNumber": routingNumber,
            "bankName": bank.bank_name if bank else None,
            "supported": bank is not None,
            "reachable": bool(bank and bank.reachable),
            "paymentTypes": [{"type": "CreditTransfer", "maxAmount": bank.max_amount,
                              "currency": "USD"}] if bank else [],
            "checkedDateTime": iso(now),
            "validUntil": iso(now + rules.ROUTE_CHECK_VALID_MS),
        })

    @app.post(rtp, tags=["Instant RTP"], summary="Send an instant RTP payment",
              openapi_extra=_body(models.RtpTransaction))
    def rtp_send(company_code: Company, user: UserDep, data: Body) -> Response:
        txn = parse(models.RtpTransaction, data)
        bank = rules.RTP_BANKS.get(txn.routing_number)
        require_route(f"user:{user.username}", f"rtp:{txn.routing_number}", "routingNumber",
                      "routing number", bank.max_amount if bank else 0, txn.amount)
        return submit_one("rtp", company_code, items.rtp_row(txn, store.now()))

    add_read_routes("rtp", rtp, "Instant RTP", "instant RTP payments",
                    get_paths=(rtp + "/{uniqueId}",), id_name="uniqueId")

    # -- NOCs -------------------------------------------------------------------------

    add_read_routes("noc", "/api/v3/AchNocs/companycode/{companyCode}", "ACH NOC", "ACH NOCs")

    # -- simulation -------------------------------------------------------------------

    add_simulation_routes(app, store, faults, parse_json=json_body)
    add_docs_routes(app)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema:
            return app.openapi_schema
        schema = get_openapi(title=app.title, version=app.version,
                             description=app.description, routes=app.routes)
        schema.setdefault("components", {}).setdefault("schemas", {}).update(_body_schemas())
        app.openapi_schema = schema
        return schema

    app.openapi = openapi  # type: ignore[method-assign]
    return FaultMiddleware(app, faults)


_CARD_KEY = secrets.token_bytes(16)
_MEDIA = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


def _too_large(limit: int) -> Problem:
    return Problem(413, "Payload Too Large", f"The body is larger than {limit} bytes.")


def _plain(error: dict[str, Any]) -> str:
    kind = error.get("type", "")
    if kind.startswith("int") or kind.startswith("greater") or kind.startswith("less"):
        return f"must be a whole number{_bounds(error.get('ctx') or {})}"
    if kind == "missing":
        return "is required"
    return str(error.get("msg", "is not valid"))


def _bounds(ctx: dict[str, Any]) -> str:
    parts = []
    if "ge" in ctx:
        parts.append(f"at least {ctx['ge']}")
    if "le" in ctx:
        parts.append(f"at most {ctx['le']}")
    return " " + " and ".join(parts) if parts else ""


# -- API docs page ----------------------------------------------------------------------

# Swagger UI 5's files, as shipped in the fastapi-offline package: FastAPI's default /docs
# loads them from cdn.jsdelivr.net, which leaves the page blank on a machine without internet.
_DOCS_ASSETS = {"swagger-ui-bundle.js": "text/javascript; charset=utf-8",
                "swagger-ui.css": "text/css; charset=utf-8", "favicon.png": "image/png"}


@functools.cache
def _docs_asset(name: str) -> bytes:
    return (importlib.resources.files("fastapi_offline") / "static" / name).read_bytes()


def add_docs_routes(app: FastAPI) -> None:
    """``/docs``: Swagger UI of ``/openapi.json`` with every file served by the sandbox."""
    assets = "/docs/assets/"

    @app.get("/docs", include_in_schema=False)
    def docs() -> Response:
        return get_swagger_ui_html(
            openapi_url=app.openapi_url or "/openapi.json", title=f"{app.title} - API",
            swagger_js_url=assets + "swagger-ui-bundle.js",
            swagger_css_url=assets + "swagger-ui.css", swagger_favicon_url=assets + "favicon.png",
            # No validator badge: it would fetch an image from validator.swagger.io.
            swagger_ui_parameters={"validatorUrl": None})

    @app.get(assets + "{name}", include_in_schema=False)
    def docs_asset(name: str) -> Response:
        if name not in _DOCS_ASSETS:
            raise Problem(404, "Not Found", f"No docs file {name}.")
        return Response(_docs_asset(name), media_type=_DOCS_ASSETS[name],
                        headers={"Cache-Control": "public, max-age=86400"})


# -- simulation endpoints ---------------------------------------------------------------


def add_simulation_routes(app: FastAPI, store: Store, faults: Faults, *,
                          parse_json: Callable[..., Any]) -> None:
    """The ``/sandbox/...`` endpoints (no token needed: the sandbox listens on loopback)."""
    Body = Annotated[Any, Depends(parse_json)]

    def obj(data: Any) -> dict[str, Any]:
        if not isinstance(data, dict):
            raise _validation({"body": ["must be a JSON object"]})
        return data

    def when(data: dict[str, Any], name: str) -> int:
        text = data.get(name)
        if text is None:
            return store.now()
        value = parse_timestamp(text) if isinstance(text, str) else None
        if value is None:
            raise _validation({name: ["must be a date or date-time like 2026-11-01"]})
        return value

    def unknown(data: dict[str, Any], allowed: set[str]) -> None:
        extra = sorted(set(data) - allowed)
        if extra:
            raise _validation({name: ["is not a field of this request"] for name in extra})

    @app.get("/sandbox/info", tags=["sandbox"], summary="Sandbox facts: clock, seed, companies")
    def info() -> Response:
        return _json({
            "sandbox": True, "version": __version__, "seed": store.seed, "now": iso(store.now()),
            "companies": sorted({c for u in app.state.users.values() for c in u.companies}),
            "users": [{"username": u.username, "companies": list(u.companies)}
                      for u in app.state.users.values()],
            "instanceId": getattr(app.state, "instance_id", None),
            "tokenRequests": dict(sorted(app.state.token_requests.items())),
        })

    # async: runs on the event loop like the token endpoint, so a token request sees
    # the old password and its tokens, or the new password and none of the old tokens.
    @app.post("/sandbox/users/{username}/password", tags=["sandbox"],
              summary="Change (or revoke) a user's password",
              openapi_extra={"requestBody": {"content": {"application/json": {"schema": {
                  "type": "object", "required": ["password"], "properties": {
                      "password": {"type": "string"},
                      "revokeTokens": {"type": "boolean", "default": True}}}}}}})
    async def set_password(username: str, data: Body) -> Response:
        data = obj(data)
        unknown(data, {"password", "revokeTokens"})
        password, revoke = data.get("password"), data.get("revokeTokens", True)
        errors: dict[str, list[str]] = {}
        if not isinstance(password, str) or not password:
            errors["password"] = ["must be a non-empty text"]
        if not isinstance(revoke, bool):
            errors["revokeTokens"] = ["must be true or false"]
        if errors:
            raise _validation(errors)
        user = app.state.users.get(username)
        if user is None:
            raise Problem(404, "Not Found", f"No user {username}.")
        app.state.users[username] = replace(user, password=password)
        revoked = app.state.tokens.revoke(username) if revoke else 0
        return _json({"username": username, "revokedTokens": revoked})

    @app.get("/sandbox/clock", tags=["sandbox"], summary="The sandbox clock")
    def clock() -> Response:
        return _json({"now": iso(store.now())})

    @app.post("/sandbox/clock/advance", tags=["sandbox"],
              summary="Move the clock forward and run business processing",
              openapi_extra={"requestBody": {"content": {"application/json": {"schema": {
                  "type": "object", "properties": {n: {"type": "number"} for n in (
                      "days", "hours", "minutes", "seconds")}}}}}})
    def advance(data: Body) -> Response:
        data = obj(data)
        unit_ms = {"days": rules.DAY_MS, "hours": rules.HOUR_MS, "minutes": 60_000,
                   "seconds": 1000}
        unknown(data, set(unit_ms))
        total = 0
        for name, value in data.items():
            if isinstance(value, bool) or not isinstance(value, int | float | Decimal) \
                    or value < 0:
                raise _validation({name: ["must be a number of at least 0"]})
            total += int(Decimal(str(value)) * unit_ms[name])
        return _json({"now": iso(store.advance_clock(total))})

    @app.post("/sandbox/process", tags=["sandbox"], summary="Run business processing now")
    def process() -> Response:
        store.process()
        return _json({"now": iso(store.now())})

    @app.post("/sandbox/companycode/{companyCode}/{kind}/{itemId}/status", tags=["sandbox"],
              summary="Force an ACH or RCC item into a status",
              openapi_extra={"requestBody": {"content": {"application/json": {"schema": {
                  "type": "object", "required": ["status"], "properties": {
                      "status": {"type": "string", "enum": list(STATUS_ORDER)},
                      "code": {"type": "string", "example": "R01"},
                      "message": {"type": "string"},
                      "date": {"type": "string", "example": "2026-11-01"}}}}}}})
    def force(companyCode: str, kind: str, itemId: str, data: Body) -> Response:
        data = obj(data)
        unknown(data, {"status", "code", "message", "date"})
        if kind not in ("ach", "rcc") or not itemId.isdigit():
            raise Problem(404, "Not Found", "Use /sandbox/companycode/{code}/ach|rcc/{itemId}.")
        status, code, message = data.get("status"), data.get("code"), data.get("message")
        errors: dict[str, list[str]] = {}
        if status not in STATUS_ORDER:
            errors["status"] = [f"must be one of {', '.join(STATUS_ORDER)}"]
        if status == "R" and code is None:
            code = "R01"
        if code is not None and code not in RETURN_CODES:
            errors["code"] = ["must be a return code R01 to R29"]
        if message is not None and not isinstance(message, str):
            errors["message"] = ["must be text"]
        if errors:
            raise _validation(errors)
        if not store.force_status(kind, companyCode, int(itemId), status, at=when(data, "date"),
                                  code=code, message=message):
            raise Problem(404, "Not Found", f"No {kind.upper()} item {itemId} "
                                            f"for company {companyCode}.")
        return _json({"transaction": store.get(kind, companyCode, int(itemId))})

    @app.post("/sandbox/companycode/{companyCode}/ach/{itemId}/noc", tags=["sandbox"],
              summary="Create a NOC for an ACH item",
              openapi_extra={"requestBody": {"content": {"application/json": {"schema": {
                  "type": "object", "properties": {
                      "changeCode": {"type": "string", "example": "C01"},
                      "correctedData": {"type": "string"},
                      "date": {"type": "string", "example": "2026-11-01"}}}}}}})
    def create_noc(companyCode: str, itemId: str, data: Body) -> Response:
        data = obj(data)
        unknown(data, {"changeCode", "correctedData", "date"})
        code = data.get("changeCode", "C01")
        corrected = data.get("correctedData")
        if not isinstance(code, str) or code not in NOC_CODES:
            raise _validation({"changeCode": ["must be a change code C01 to C13"]})
        if corrected is not None and not isinstance(corrected, str):
            raise _validation({"correctedData": ["must be text"]})
        record = store.create_noc(companyCode, int(itemId) if itemId.isdigit() else -1, code,
                                  at=when(data, "date"), corrected_data=corrected)
        if record is None:
            raise Problem(404, "Not Found", f"No ACH item {itemId} for company {companyCode}.")
        return _json({"transaction": record})

    @app.get("/sandbox/faults", tags=["sandbox"], summary="Current fault settings")
    def get_faults() -> Response:
        return _json(faults.as_dict())

    @app.put("/sandbox/faults", tags=["sandbox"], summary="Set fault settings",
             openapi_extra={"requestBody": {"content": {"application/json": {"schema": {
                 "type": "object", "properties": {
                     "reads": {"type": "object"}, "writes": {"type": "object"},
                     "seed": {"type": "integer"}}}}}}})
    def set_faults(data: Body) -> Response:
        data = obj(data)
        unknown(data, {"reads", "writes", "seed"})
        settings: dict[str, FaultSettings] = {}
        for name in ("reads", "writes"):
            if name in data:
                try:
                    settings[name] = FaultSettings.from_dict(obj(data[name]))
                except (ValueError, TypeError) as exc:
                    raise _validation({name: [str(exc)]}) from None
        seed = data.get("seed")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
            raise _validation({"seed": ["must be a whole number"]})
        faults.set(seed=seed, **settings)
        return _json(faults.as_dict())

    @app.delete("/sandbox/faults", tags=["sandbox"], summary="Remove every fault")
    def clear_faults() -> Response:
        faults.clear()
        return _json(faults.as_dict())

    @app.post("/sandbox/faults/script", tags=["sandbox"],
              summary="Script exact faults for the next requests",
              openapi_extra={"requestBody": {"content": {"application/json": {"schema": {
                  "type": "object", "required": ["fault"], "properties": {
                      "fault": {"type": "string",
                                "enum": ["503", "429", "drop", "drop_after_commit"]},
                      "count": {"type": "integer", "default": 1},
                      "on": {"type": "string", "enum": ["reads", "writes", "any"]}}}}}}})
    def script_faults(data: Body) -> Response:
        data = obj(data)
        unknown(data, {"fault", "count", "on"})
        try:
            faults.enqueue(str(data.get("fault")), count=data.get("count", 1),
                           on=data.get("on", "any"))
        except ValueError as exc:
            raise _validation({"fault": [str(exc)]}) from None
        return _json(faults.as_dict())

