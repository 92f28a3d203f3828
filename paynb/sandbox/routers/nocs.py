"""ACH NOCs: ``/api/v3/AchNocs/companycode/{companyCode}`` (list and export)."""

from __future__ import annotations

from fastapi import APIRouter

from paynb.sandbox.routers._items import add_read_routes

__all__ = ["router"]

router = APIRouter()
add_read_routes(router, "noc", "/api/v3/AchNocs/companycode/{companyCode}", "ACH NOC",
                "ACH NOCs")
