"""``client.rcc``: RCC items (spec 4.2)."""

from __future__ import annotations

from paynb.models import RccBulkRequest, RccItem, RccVoidByIds
from paynb.resources._items import ItemResource

__all__ = ["RccResource"]


class RccResource(ItemResource):
    """RCC items of the client's company.

    Paths under ``/api/v3/RccTransactions/companycode/{companyCode}``, except the
    bulk submission, which the spec writes ``/apiv3/RccTransactions/.../many``
    (no slash between ``api`` and ``v3``); paynb sends it exactly so.
    """

    kind = "rcc"
    segment = "RccTransactions"
    model = RccItem
    bulk_model = RccBulkRequest
    void_ids_model = RccVoidByIds
    void_ids_segment = "rccitemids"
    bulk_prefix = "/apiv3"
