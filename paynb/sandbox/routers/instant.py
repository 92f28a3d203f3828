"""Instant card payments: route checks (by card or token) and sends."""

from __future__ import annotations

import hashlib
import secrets

from fastapi import APIRouter
from fastapi.responses import Response

from paynb import models
from paynb.sandbox import items, rules
from paynb.sandbox.routers._common import (
    Body,
    Company,
    Ctx,
    body_doc,
    parse,
    require_route,
    route_answer,
)
from paynb.sandbox.routers._items import add_read_routes, submit_one

__all__ = ["router"]

PREFIX = "/api/v3/InstantTransactions/companycode/{companyCode}"
_TAG = "Instant card"
_CARD_KEY = secrets.token_bytes(16)

router = APIRouter(tags=[_TAG])


def _card(card_number: str) -> tuple[rules.CardRoute, str, str]:
    """A card's route, the key its route check is remembered by, its last four digits."""
    # Only a keyed hash of the card number is kept, never the number itself.
    key = "card:" + hashlib.blake2b(card_number.encode(), key=_CARD_KEY).hexdigest()
    return rules.card_route(card_number), key, card_number[-4:]


def _token(token_id: str, sub_client: str) -> tuple[rules.CardRoute, str, str]:
    """A token's route, the key its route check is remembered by, its last four digits."""
    digest = hashlib.blake2b(f"{token_id}|{sub_client}".encode(), digest_size=4).digest()
    return (rules.token_route(token_id), f"token:{token_id}|{sub_client}",
            f"{int.from_bytes(digest, 'big') % 10_000:04d}")


def _route_answer(ctx: Ctx, company_code: str, route: rules.CardRoute, key: str,
                  last_four: str) -> Response:
    """A route check's answer; a supported, reachable route is remembered (by ``key``)
    for the sends that follow it."""
    if route.supported and route.reachable:
        ctx.store.remember_route_check(company_code, key)
    return route_answer(ctx, {"supported": route.supported, "reachable": route.reachable,
                              "cardBrand": route.brand, "cardLastFour": last_four},
                        "Push", route.max_amount if route.supported else None)


@router.post("/api/v3/InstantRoutes/companycode/{companyCode}",
             summary="Route check by card number", openapi_extra=body_doc(models.CardRouteCheck))
def card_route_check(ctx: Ctx, company_code: Company, data: Body) -> Response:
    """Can this card receive an instant payment?"""
    check = parse(models.CardRouteCheck, data)
    return _route_answer(ctx, company_code, *_card(check.card_number))


@router.post("/api/v3/InstantRoutes/companycode/{companyCode}/token",
             summary="Route check by token", openapi_extra=body_doc(models.TokenRouteCheck))
def token_route_check(ctx: Ctx, company_code: Company, data: Body) -> Response:
    """Can this card token receive an instant payment?"""
    check = parse(models.TokenRouteCheck, data)
    return _route_answer(ctx, company_code, *_token(check.token_id, check.your_sub_client_id))


@router.post(PREFIX, summary="Send an instant card payment",
             openapi_extra=body_doc(models.InstantCardTransaction))
def instant_send(ctx: Ctx, company_code: Company, data: Body) -> Response:
    """Send an instant card payment to a route-checked card or token."""
    txn = parse(models.InstantCardTransaction, data)
    route, key, last_four = (_card(txn.card_number) if txn.card_number
                             else _token(txn.token_id, txn.your_sub_client_id))
    field_name = "cardNumber" if txn.card_number else "tokenId"
    require_route(ctx, company_code, key, field_name, "card", route.max_amount, txn.amount)
    return submit_one(ctx, "instant", company_code, items.instant_row(
        txn, ctx.store.now(), brand=route.brand, last_four=last_four))


add_read_routes(router, "instant", PREFIX, _TAG, "instant card payments", get_paths=(
    "/api/v3/InstantTransactinos/companycode/{companyCode}/{uniqueId}",
    PREFIX + "/{uniqueId}"), id_name="uniqueId")
