"""``client.nocs``: ACH notices of change (spec 4.5)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

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

    range_fields: ClassVar[dict[str, str]] = {"received": "nocDate"}

    def list(self, status: Any = None, returned_from: Any = None, returned_to: Any = None, *,
             received_from: Any = None, received_to: Any = None, settled_from: Any = None,
             settled_to: Any = None, page: int | None = None, page_size: int | None = None,
             max_items: int | None = None, progress: bool | None = None) -> pd.DataFrame:
        """NOCs as a DataFrame, every page unless ``page`` is given (see ``client.ach.list``).

        The filters are those of ``client.ach.list``; a NOC has a date only, so
        ``received_from``/``received_to`` (range of ``nocDate``, the day the notice
        came; **applied here**, the service documents no parameter) is the one that
        applies. A NOC has no status, return or settle date: ``status`` and the other
        ranges are an error. A bare date as ``received_to`` takes in that whole day; a
        backwards range is a :class:`~paynb.errors.ValidationError` naming both ends.
        """
        filters = self._filters(status, returned_from=returned_from, returned_to=returned_to,
                                received_from=received_from, received_to=received_to,
                                settled_from=settled_from, settled_to=settled_to)
        return self._filtered_list(filters, page=page, page_size=page_size,
                                   max_items=max_items, progress=progress)
