"""What a client has seen of the service this session: ACH items and NOCs, for the guards.

The submission guards judge an entry by the history of its account (NOCs, returns,
earlier reinitiations), which the client keeps as it goes: every ACH item and NOC record
a list, a get, a poll or a submission answer brought back, newest version last, with the
full account numbers (the guards compare them; nothing here is ever shown). Records are
kept by reference (a dictionary insertion each, not a copy) and cut down to the fields
the guards read once they read them (:meth:`SeenRecords.compact`).

It lives in the resources layer, below :mod:`paynb.compliance`, because the records are
captured where they arrive, whether or not the compliance module is imported yet.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["SeenRecords"]

#: Records kept per kind; beyond it the oldest are forgotten (the guards then say the
#: period they checked is shorter).
MAX_RECORDS = 250_000


def _id(record: Mapping[str, Any], field: str, lowered: str) -> Any:
    key = record.get(field)
    if key is None:  # another spelling (AchItemId): rare, so looked for only then
        key = next((value for name, value in record.items()
                    if str(name).lower() == lowered), None)
    return key


class _Kept(dict):  # type: ignore[type-arg]
    """An ACH record cut down to :data:`ENTRY_FIELDS`."""

    __slots__ = ()


class SeenRecords:
    """Records of one kind seen by one client, keyed by id (latest version wins).

    ``fields`` names the fields :meth:`compact` keeps of each record (``None``: the
    whole record is always kept).
    """

    def __init__(self, id_field: str, fields: tuple[str, ...] | None = None) -> None:
        self._field = id_field
        self._id = id_field.lower()
        self._fields = fields
        self._lock = threading.Lock()
        self._records: dict[Any, Mapping[str, Any]] = {}
        self._whole: dict[str, Mapping[str, Any]] = {}
        #: Ids (as text) whose whole record is kept when it comes by.
        self.keep_whole: set[str] = set()
        #: Bumped on every change, so that an index built from the records knows it is stale.
        self.version = 0

    def __len__(self) -> int:
        return len(self._records)

    def __contains__(self, key: Any) -> bool:
        return key in self._records

    def __repr__(self) -> str:
        return f"<SeenRecords {self._id}: {len(self)} records>"

    def add(self, records: Iterable[Mapping[str, Any]]) -> None:
        """Remember ``records`` (those without an id are skipped: they cannot be told apart)."""
        field, lowered, whole = self._field, self._id, self.keep_whole
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
                if whole and str(key) in whole:
                    self._whole[str(key)] = record
                if key in store:
                    del store[key]  # re-inserted last: dicts keep insertion order
                store[key] = record
            while len(store) > MAX_RECORDS:
                oldest = next(iter(store))
                del store[oldest]
                self._whole.pop(str(oldest), None)
            self.version += 1

    def compact(self) -> None:
        """Cut every record down to the kept fields (records in another spelling stay
        whole); what the records say is unchanged, so :attr:`version` is too."""
        fields, field = self._fields, self._field
        if fields is None:
            return
        with self._lock:
            store = self._records
            whole = self.keep_whole
            for key, record in store.items():
                if type(record) is not _Kept and field in record:
                    if whole and str(key) in whole:
                        self._whole[str(key)] = record
                    store[key] = _Kept((name, record[name]) for name in fields if name in record)

    def records(self) -> list[Mapping[str, Any]]:
        """A snapshot of the stored records, oldest first."""
        with self._lock:
            return list(self._records.values())

    def whole(self, key: Any) -> Mapping[str, Any] | None:
        """The whole record of ``key`` (``None`` when only the kept fields are known)."""
        with self._lock:
            found = self._whole.get(str(key))
            if found is None:
                record = self._records.get(key)
                if record is not None and type(record) is not _Kept:
                    found = record
            return found

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._records.clear()
            self._whole.clear()
            self.version += 1
