"""The resource namespaces of a client: ``client.ach``, ``.rcc``, ``.instant``, ``.rtp``,
``.nocs``. One module per kind; ACH and RCC share :class:`~paynb.resources._items.ItemResource`,
instant card and RTP share :class:`~paynb.resources._payments.PaymentResource`. Each is
given the client's :class:`ResourceContext`, never the client; its list is a
:class:`Listing` (``client.ach.listing``), whose :meth:`~Listing.pages` the history reads."""

from paynb.resources._base import Resource, frame_rows
from paynb.resources._context import (
    Environment,
    ResourceContext,
    SeenHistory,
    ServiceClock,
    SubmissionGuard,
)
from paynb.resources._feed import CHANGE_STATUSES, CHANGES_OVERLAP, ChangeFeed
from paynb.resources._listing import Listing, Pages, wire_time
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
    "Listing",
    "NocResource",
    "Pages",
    "RccResource",
    "Resource",
    "ResourceContext",
    "RtpResource",
    "SeenHistory",
    "ServiceClock",
    "SubmissionGuard",
    "frame_rows",
    "wire_time",
]
