"""Instant RTP payments: route inquiry by routing number, and sends."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from paynb import models
from paynb.sandbox import items, rules
from paynb.sandbox.routers._common import (
    Body,
    Company,
    Ctx,
    UserDep,
    body_doc,
    parse,
    require_route,
    route_answer,
    validation,
)
from paynb.sandbox.routers._items import add_read_routes, submit_one
from paynb.validation import check_routing_number

__all__ = ["router"]

PREFIX = "/api/v3/InstantRtpTransactions/companycode/{companyCode}"
_TAG = "Instant RTP"

router = APIRouter(tags=[_TAG])


@router.get("/api/v3/InstantRtpRoutes/{routingNumber}",
            summary="Route inquiry by routing number")
def rtp_route(ctx: Ctx, routingNumber: str, user: UserDep) -> Response:
    """Can this bank receive RTP payments, up to which amount, and now?"""
    problem = check_routing_number(routingNumber)
    if problem:
        raise validation({"routingNumber": [problem]})
    bank = rules.RTP_BANKS.get(routingNumber)
    if bank and bank.reachable:
        ctx.store.remember_route_check(f"user:{user.username}", f"rtp:{routingNumber}")
    return route_answer(ctx, {"routingNumber": routingNumber,
                              "bankName": bank.bank_name if bank else None,
                              "supported": bank is not None,
                              "reachable": bool(bank and bank.reachable)},
                        "CreditTransfer", bank.max_amount if bank else None)


@router.post(PREFIX, summary="Send an instant RTP payment",
             openapi_extra=body_doc(models.RtpTransaction))
def rtp_send(ctx: Ctx, company_code: Company, user: UserDep, data: Body) -> Response:
    """Send an instant RTP payment to a route-checked routing number."""
    txn = parse(models.RtpTransaction, data)
    bank = rules.RTP_BANKS.get(txn.routing_number)
    require_route(ctx, f"user:{user.username}", f"rtp:{txn.routing_number}", "routingNumber",
                  "routing number", bank.max_amount if bank else 0, txn.amount)
    return submit_one(ctx, "rtp", company_code, items.rtp_row(txn, ctx.store.now()))


add_read_routes(router, "rtp", PREFIX, _TAG, "instant RTP payments",
                get_paths=(PREFIX + "/{uniqueId}",), id_name="uniqueId")
