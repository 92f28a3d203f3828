"""The submission guards as compliance names them: :func:`check_entries` (what the guards
would say of entries, sending nothing) and :func:`service_now` (the clock they judge by),
each the client's own (``client.check_entries``, ``client.service_now``).

The rules are :mod:`paynb.nacha`'s (pure); the client's guard service (:mod:`paynb.guards`)
gathers their evidence and applies them in ``submit`` and ``submit_many``.

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
