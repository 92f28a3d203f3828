"""``client.nocs``: ACH notices of change (spec 4.5)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from paynb.resources._base import Resource

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["NocResource"]


class NocResource(Resource):
    """ACH NOCs of the client's company: ``list`` and ``export``.

    A NOC (notice of change) is sent by the receiving bank when account data of
    an item has changed; ``changeCode`` (C01...) comes with its ``changeReason``.
    """

    kind = "noc"
    segment = "AchNocs"
    id_field = "nocId"

    def list(self, *, page: int | None = None, page_size: int | None = None,
             max_items: int | None = None, progress: bool | None = None) -> pd.DataFrame:
        """NOCs as a DataFrame, every page unless ``page`` is given (see ``client.ach.list``)."""
        return self._list([], page=page, page_size=page_size, max_items=max_items,
                          progress=progress)
