"""The submission guards as compliance names them, each the client's own: the rules are
:mod:`paynb.nacha`'s, the client's guard service (:mod:`paynb.guards`) applies them.

paynb helps monitor these rules; it is not legal advice.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

    from paynb.client import Client

__all__ = ["check_entries", "service_now"]


def service_now(client: Client) -> dt.datetime:
    """The service's time (UTC) by ``client``'s clock: :meth:`paynb.Client.service_now`."""
    return client.service_now()


def check_entries(client: Client, items: Any, *, new_authorization: bool = False,
                  as_of: Any = None) -> pd.DataFrame:
    """What the submission guards would say of ACH ``items``, sending nothing:
    :meth:`paynb.Client.check_entries`."""
    return client.check_entries(items, new_authorization=new_authorization, as_of=as_of)
