"""``client.ach``: ACH items (spec 4.1)."""

from __future__ import annotations

from paynb.models import AchBulkRequest, AchItem, AchVoidByIds
from paynb.resources._items import ItemResource

__all__ = ["AchResource"]


class AchResource(ItemResource):
    """ACH items (debits, credits, debit prenotes) of the client's company.

    Paths under ``/api/v3/AchTransactions/companycode/{companyCode}``; see
    :class:`~paynb.resources._items.ItemResource` for the calls.
    """

    kind = "ach"
    segment = "AchTransactions"
    model = AchItem
    bulk_model = AchBulkRequest
    void_ids_model = AchVoidByIds
    void_ids_segment = "achitemids"
