"""ACH items: ``/api/v3/AchTransactions/companycode/{companyCode}...``."""

from __future__ import annotations

from fastapi import APIRouter

from paynb import models
from paynb.sandbox import items
from paynb.sandbox.routers._items import add_item_routes

__all__ = ["PREFIX", "router"]

PREFIX = "/api/v3/AchTransactions/companycode/{companyCode}"

router = APIRouter()
add_item_routes(router, "ach", PREFIX, [PREFIX + "/many"], models.AchItem,
                models.AchBulkRequest, items.ach_row, models.AchVoidByIds, "/void/achitemids")
