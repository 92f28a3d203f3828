"""Routes every item kind shares (list, export, get one) and those of ACH and RCC
(submit one, submit many, void), built per kind onto a router."""

# No "from __future__ import annotations": FastAPI must see the path alias of the get-one
# routes, which depends on a local variable of add_read_routes.
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import APIRouter, Path
from fastapi.responses import Response

from paynb import models
from paynb.sandbox import items, processing
from paynb.sandbox.queries import ListQuery
from paynb.sandbox.routers._common import (
    Body,
    Company,
    Ctx,
    Listing,
    Problem,
    body_doc,
    item_id,
    json_response,
    parse,
    validation,
)
from paynb.sandbox.store import Store, VoidError
from paynb.sandbox.tables import KINDS
from paynb.sandbox.wire import iso

__all__ = ["add_item_routes", "add_read_routes", "submit_one"]

_MEDIA = {
    "csv": "text/csv; charset=utf-8",
    "json": "application/json",
    "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}

Row = Callable[[Any, int, Store], items.Build]


def _record(ctx: Ctx, kind: str, company_code: str, key: int | str) -> dict[str, Any]:
    record = ctx.store.get(kind, company_code, key)
    if record is None:
        raise Problem(404, "Not Found", f"No {kind.upper()} item {key} "
                                        f"for company {company_code}.")
    return record


def _export(ctx: Ctx, kind: str, company_code: str, query: ListQuery,
            filetype: str) -> Response:
    filetype = filetype.lower()
    if filetype not in _MEDIA:
        raise validation({"filetype": ["must be csv, json or xlsx"]},
                         "Unsupported export file type.")
    document = ctx.store.export(kind, company_code, query, filetype)
    stamp = iso(ctx.store.now())[:10].replace("-", "")  # type: ignore[index]
    name = f"{kind}-{company_code}-{stamp}.{filetype}"
    return Response(document, media_type=_MEDIA[filetype],
                    headers={"Content-Disposition": f'attachment; filename="{name}"'})


def submit_one(ctx: Ctx, kind: str, company_code: str, build: items.Build) -> Response:
    """Store one new item and answer its record."""
    record = ctx.store.insert(kind, company_code, [build])[0]
    return json_response({"transaction": record})


def _submit_many(ctx: Ctx, kind: str, company_code: str, data: Any,
                 bulk_model: type[models.BulkRequest], item_model: type[models.RequestModel],
                 row: Row) -> Response:
    _, errors = models.check(bulk_model, data)
    top = {k: v for k, v in errors.items() if not k.startswith("items[")}
    if top:
        raise validation(top)
    raw_items = data["items"]
    if len(raw_items) > ctx.max_bulk_items:
        raise validation({"items": [f"must hold at most {ctx.max_bulk_items} items"]})
    head = {k: v for k, v in data.items() if k != "items"}
    commit_valid = models.BulkRequest.model_validate(head).always_commit_valid
    per_item: dict[int, dict[str, list[str]]] = {}
    for key, messages in errors.items():
        number, _, rest = key[len("items["):].partition("]")
        per_item.setdefault(int(number), {})[rest.lstrip(".") or "item"] = messages
    if not processing.bulk_stores_anything(len(per_item), commit_valid):
        raise validation(errors, f"{len(per_item)} of {len(raw_items)} items are "
                                 "invalid; nothing was stored.")
    store = ctx.store
    now = store.now()
    builds = [items.invalid_row(kind, raw, KINDS[kind].fields, now) if i in per_item
              else row(item_model.model_validate(raw), now, store)
              for i, raw in enumerate(raw_items)]
    records = store.insert(kind, company_code, builds)
    for index, problems in per_item.items():
        records[index]["errors"] = problems
    return json_response({"total": len(records), "validCount": len(records) - len(per_item),
                          "invalidCount": len(per_item), "transactions": records})


def _void(ctx: Ctx, kind: str, company_code: str, *, many: bool, **choice: Any) -> Response:
    try:
        records = ctx.store.void(kind, company_code, **choice)
    except VoidError as exc:
        raise validation(exc.errors, exc.detail) from None
    return json_response({"transactions": records} if many else {"transaction": records[0]})


def add_read_routes(router: APIRouter, kind: str, prefix: str, tag: str, what: str, *,
                    get_paths: tuple[str, ...] = (), id_name: str = "itemId") -> None:
    """List, export and (for each of ``get_paths``) get-one endpoints of ``kind``."""

    @router.get(prefix, tags=[tag], summary=f"List {what} (paged)")
    def list_items(ctx: Ctx, company_code: Company, query: Listing) -> Response:
        return Response(ctx.store.list_json(kind, company_code, query),
                        media_type="application/json")

    @router.get(prefix + "/export/filetype/{fileType}", tags=[tag],
                summary=f"Export {what} (csv, json, xlsx)")
    def export_items(ctx: Ctx, company_code: Company, query: Listing,
                     fileType: str) -> Response:
        return _export(ctx, kind, company_code, query, fileType)

    for path in get_paths:
        @router.get(path, tags=[tag], summary=f"One of the {what}")
        def get_one(ctx: Ctx, company_code: Company,
                    item: Annotated[str, Path(alias=id_name)]) -> Response:
            key = item_id(kind, item) if id_name == "itemId" else item
            return json_response({"transaction": _record(ctx, kind, company_code, key)})


def add_item_routes(router: APIRouter, kind: str, prefix: str, bulk_paths: list[str],
                    item_model: type[models.RequestModel],
                    bulk_model: type[models.BulkRequest], row: Row,
                    ids_model: type[models.RequestModel], ids_path: str) -> None:
    """Submit, bulk submit, read and void endpoints of ACH or RCC items."""
    tag = kind.upper()
    ids_field = next(iter(ids_model.wire_names().values()))

    @router.post(prefix, tags=[tag], summary=f"Add one {tag} item",
                 openapi_extra=body_doc(item_model))
    def submit(ctx: Ctx, company_code: Company, data: Body) -> Response:
        item = parse(item_model, data)
        return submit_one(ctx, kind, company_code, row(item, ctx.store.now(), ctx.store))

    for path in bulk_paths:
        @router.post(path, tags=[tag], summary=f"Add several {tag} items",
                     openapi_extra=body_doc(bulk_model))
        def submit_bulk(ctx: Ctx, company_code: Company, data: Body) -> Response:
            return _submit_many(ctx, kind, company_code, data, bulk_model, item_model, row)

    add_read_routes(router, kind, prefix, tag, f"{tag} items",
                    get_paths=(prefix + "/{itemId}",))

    @router.put(prefix + "/{itemId}/void", tags=[tag], summary=f"Void one {tag} item (W -> V)")
    def void_by_id(ctx: Ctx, company_code: Company, itemId: str) -> Response:
        key = item_id(kind, itemId)
        _record(ctx, kind, company_code, key)  # an unknown id is a 404, not a void error
        return _void(ctx, kind, company_code, many=False, ids=[key],
                     field_name=KINDS[kind].id_field)

    @router.put(prefix + "/void/referencenumbers", tags=[tag],
                summary=f"Void {tag} items by your reference numbers",
                openapi_extra=body_doc(models.VoidByReferences))
    def void_by_references(ctx: Ctx, company_code: Company, data: Body) -> Response:
        request = parse(models.VoidByReferences, data)
        return _void(ctx, kind, company_code, many=True,
                     references=request.reference_numbers, field_name="referenceNumbers")

    @router.put(prefix + ids_path, tags=[tag], summary=f"Void {tag} items by item ids",
                openapi_extra=body_doc(ids_model))
    def void_by_ids(ctx: Ctx, company_code: Company, data: Body) -> Response:
        request = parse(ids_model, data)
        return _void(ctx, kind, company_code, many=True,
                     ids=next(iter(request.model_dump().values())), field_name=ids_field)
