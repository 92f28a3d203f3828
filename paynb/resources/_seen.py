"""What a client has seen of the service this session: the raw ACH item and NOC records.

The submission guards of :mod:`paynb.compliance` judge an entry by the history of its
account (NOCs, returns, earlier reinitiations). The client keeps that history as it goes:
every ACH item and NOC record a list, a get, a poll (``changes()``) or a submission answer
brought back is remembered here, newest version of each record last, with the full
account numbers (the frames mask them; the guards must compare the full number). Nothing
here is ever shown: the records stay inside the client and the guards say only masked
numbers.

It lives below :mod:`paynb.compliance` (in the resources layer) because the records are
captured where they arrive, whether or not the compliance module has been imported yet:
a guard that ran after the analyst listed items must see those items.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["SeenRecords"]

#: Records kept per kind; beyond it the oldest are forgotten (the guard then says the
#: period it checked is shorter). A million raw ACH records would take gigabytes.
MAX_RECORDS = 250_000


def _id(record: Mapping[str, Any], field: str, lowered: str) -> Any:
    key = record.get(field)
    if key is None:  # another spelling (AchItemId): rare, so looked for only then
        key = next((value for name, value in record.items()
                    if str(name).lower() == lowered), None)
    return key


class SeenRecords:
    """Raw records of one kind seen by one client, keyed by id (latest version wins).

    The records are kept as the service sent them (no copy: remembering a list of
    100,000 items costs a dictionary insertion each); readers must allow for other
    spellings of the field names (``AchItemId``).
    """

    def __init__(self, id_field: str) -> None:
        self._field = id_field
        self._id = id_field.lower()
        self._lock = threading.Lock()
        self._records: dict[Any, Mapping[str, Any]] = {}
        #: Bumped on every change, so that an index built from the records knows it is stale.
        self.version = 0

    def __len__(self) -> int:
        return len(self._records)

    def __repr__(self) -> str:
        return f"<SeenRecords {self._id}: {len(self)} records>"

    def add(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Remember ``records`` (those without an id are skipped: they cannot be told apart)."""
        field, lowered = self._field, self._id
        with self._lock:
            store = self._records
            for record in records:
                # Plain lookups: this runs on every list page, 100,000 records included.
                key = record.get(field) if type(record) is dict else (
                    _id(record, field, lowered) if isinstance(record, Mapping) else None)
                if key is None:
                    if type(record) is not dict:
                        continue
                    key = _id(record, field, lowered)
                    if key is None:
                        continue
                if key in store:
                    del store[key]  # re-inserted last: dicts keep insertion order
                store[key] = record
            while len(store) > MAX_RECORDS:
                del store[next(iter(store))]
            self.version += 1

    def records(self) -> list[Mapping[str, Any]]:
        """A snapshot of the stored records, oldest first."""
        with self._lock:
            return list(self._records.values())

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._records.clear()
            self.version += 1
