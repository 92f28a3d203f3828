"""The resource namespaces of a client: ``client.ach``, ``.rcc``, ``.instant``, ``.rtp``,
``.nocs``. One module per kind; ACH and RCC share :class:`~paynb.resources._items.ItemResource`,
instant card and RTP share :class:`~paynb.resources._payments.PaymentResource`. Each is
given the client's :class:`ResourceContext`, never the client."""

from paynb.resources._base import Resource, fetch_list, frame_rows, page_fetcher, wire_time
from paynb.resources._context import (
    Environment,
    ResourceContext,
    SeenHistory,
    ServiceClock,
    SubmissionGuard,
)
from paynb.resources._feed import CHANGE_STATUSES, CHANGES_OVERLAP, ChangeFeed
from paynb.resources.ach import AchResource
from paynb.resources.instant import InstantResource
from paynb.resources.nocs import NocResource
from paynb.resources.rcc import RccResource
from paynb.resources.rtp import RtpResource

__all__ = [
    "CHANGES_OVERLAP",
    "CHANGE_STATUSES",
    "AchResource",
    "ChangeFeed",
    "Environment",
    "InstantResource",
    "NocResource",
    "RccResource",
    "Resource",
    "ResourceContext",
    "RtpResource",
    "SeenHistory",
    "ServiceClock",
    "SubmissionGuard",
    "fetch_list",
    "frame_rows",
    "page_fetcher",
    "wire_time",
]
