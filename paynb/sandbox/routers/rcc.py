"""RCC items: ``/api/v3/RccTransactions/companycode/{companyCode}...``."""

from __future__ import annotations

from fastapi import APIRouter

from paynb import models
from paynb.sandbox import items
from paynb.sandbox.routers._items import add_item_routes

__all__ = ["PREFIX", "router"]

PREFIX = "/api/v3/RccTransactions/companycode/{companyCode}"

router = APIRouter()
# The spec's bulk path has no "/" after "api" (kept as the service documents it).
add_item_routes(router, "rcc", PREFIX,
                ["/apiv3/RccTransactions/companycode/{companyCode}/many", PREFIX + "/many"],
                models.RccItem, models.RccBulkRequest, items.rcc_row, models.RccVoidByIds,
                "/void/rccitemids")
