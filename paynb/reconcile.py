"""Journal settlement: what :meth:`paynb.Client.reconcile` does with the journal's
``unknown`` entries (answers lost). :func:`settle` looks each entry up through the
resource of its kind and records the outcome, one transaction per kind; it needs only the
journal, the company and the resources (docs/reference/internals.md).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from paynb.errors import NotFoundError
from paynb.journal import NOT_ACCEPTED, SUBMISSIONS, VOIDS_BY_ID, Journal

if TYPE_CHECKING:
    import pandas as pd

    from paynb.resources import Resource

__all__ = ["BULK_LOOKUP", "SETTLE_AFTER", "settle"]

#: Seconds after a lost answer before :func:`settle` settles a submission it
#: cannot find as ``failed`` (re-submittable): time for a service still working on the
#: request to store it.
SETTLE_AFTER = 300.0

#: Unknown entries of one kind above which :func:`settle` fetches the kind's
#: whole list once rather than looking each entry up by itself.
BULK_LOOKUP = 20


def settle(journal: Journal, company_code: str, resources: Mapping[str, Resource], *,
           settle_after: float = SETTLE_AFTER, recorded: Sequence[int] = ()) -> pd.DataFrame:
    """Settle the ``unknown`` entries of ``company_code`` in ``journal`` by looking each
    up through ``resources[kind]``; one row per entry looked at (see
    :meth:`paynb.Client.reconcile`, which validates ``settle_after`` and calls this).
    ``recorded``: entries whose answers the client had kept while the journal could not
    be used, and has just recorded: a row each, as they were ``pending``."""
    import pandas as pd

    rows = [_row(entry, was="pending") for entry in journal.entries(company_code)
            if entry["id"] in set(recorded)]
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for entry in journal.unknown_entries(company_code):
        by_kind.setdefault(entry["kind"], []).append(entry)
    now = dt.datetime.now(dt.UTC)
    for kind, entries in by_kind.items():
        lookup = _Lookup(resources[kind], entries)
        rows += _settle_lost(journal, lookup, entries, wait=settle_after, now=now)
    columns = ["id", "when", "kind", "operation", "reference", "was", "state", "item_id",
               "item_status", "detail"]
    # Object columns, so that item ids of found and not-found entries side by side stay
    # whole numbers (a float column would write 53 as "53.0").
    frame = pd.DataFrame(sorted(rows, key=lambda row: row["id"]), columns=columns,
                         dtype=object)
    frame["when"] = pd.to_datetime(frame["when"], utc=True)
    return frame.astype({"id": "Int64", "item_id": "string"})


def _settle_lost(journal: Journal, lookup: _Lookup, entries: list[dict[str, Any]], *,
                 wait: float, now: dt.datetime) -> list[dict[str, Any]]:
    """Look ``entries`` (of one kind) up and settle them in one journal transaction;
    their rows for :func:`settle`. When a lookup fails for good, the entries looked
    up before it are still settled, and a rerun settles the rest."""
    rows: list[dict[str, Any]] = []
    outcomes: list[tuple[Any, ...]] = []
    try:
        for entry in entries:
            row = _reconciled(lookup, entry, wait=wait, now=now)
            rows.append(row)
            if row["state"] != "unknown":
                # An entry kept unknown is left as it is: its time and detail still
                # say when and how its answer was lost.
                outcomes.append((row["id"], row["state"], row["item_id"],
                                 row["item_status"], row["detail"]))
    finally:
        journal.settle_many(outcomes)
    return rows


def _reconciled(lookup: _Lookup, entry: dict[str, Any], *, wait: float,
                now: dt.datetime) -> dict[str, Any]:
    """The row of :func:`settle` for one entry: its state after the lookup."""
    state, item_id, status, detail = _reconcile_entry(lookup, entry)
    if state == "failed" and entry["operation"] in SUBMISSIONS:
        # The answer was lost when the entry was last updated (settled unknown); a stale
        # pending entry never had one, so its reservation time counts.
        lost = entry["updated"] or entry["when"]
        settle_from = lost + dt.timedelta(seconds=wait)
        if now < settle_from:
            state = "unknown"
            detail = (f"reconcile: not found in the service yet; the answer was lost at "
                      f"{lost:%Y-%m-%d %H:%M:%S} UTC and the entry may be settled failed "
                      f"from {settle_from:%Y-%m-%d %H:%M:%S} UTC")
    return _row(entry, was=entry["state"], state=state, item_id=item_id,
                item_status=status, detail=detail)


def _row(entry: Mapping[str, Any], *, was: str, **outcome: Any) -> dict[str, Any]:
    """A row of :func:`settle`: the entry, the state it ``was`` in, and its ``outcome``
    (``state``, ``item_id``, ``item_status``, ``detail``; default: the entry's own)."""
    row = {name: entry[name] for name in ("id", "when", "kind", "operation", "reference")}
    return {**row, "was": was, **{name: outcome.get(name, entry[name]) for name in
                                  ("state", "item_id", "item_status", "detail")}}


class _Lookup:
    """Finds the items of one kind that :func:`settle` asks about.

    A few entries are looked up one by one (a list filtered by ``yourReferenceNumber``,
    or ``get`` for a void by id). For more than :data:`BULK_LOOKUP` entries, or when the
    service ignores the filter (it answers other references too), the kind's whole list
    is fetched once, its pages concurrently, and every entry is matched in it in one pass:
    a lost bulk of 1,000 rows then costs a few pages, not 1,000 requests.
    """

    def __init__(self, resource: Resource, entries: list[dict[str, Any]]) -> None:
        self.resource = resource
        self._entries = entries
        self._by_reference: dict[str, dict[str, Any]] | None = None
        self._by_id: dict[int, dict[str, Any]] | None = None
        if len(entries) > BULK_LOOKUP:
            self._index(resource.listing.frame())

    def _index(self, frame: pd.DataFrame) -> None:
        """From the whole list ``frame``, keep the latest item of each reference and the
        item of each id that the entries name."""
        entries = self._entries
        references = {str(entry["reference"]) for entry in entries
                      if entry["reference"] is not None}
        mine = frame[frame["yourReferenceNumber"].isin(references)]
        latest = mine.drop_duplicates("yourReferenceNumber", keep="last")
        self._by_reference = dict(zip(latest["yourReferenceNumber"].astype(str),
                                      latest.to_dict("records"), strict=True))
        id_field = self.resource.id_field
        ids = {int(entry["item_id"] or entry["reference"]) for entry in entries
               if entry["operation"] in VOIDS_BY_ID}
        if ids and id_field in frame.columns:
            voided = frame[frame[id_field].isin(ids)]
            self._by_id = {int(key): record for key, record in
                           zip(voided[id_field], voided.to_dict("records"), strict=True)}
        else:
            self._by_id = {}

    def by_reference(self, reference: str) -> dict[str, Any] | None:
        """The latest item with ``reference``, or ``None``."""
        if self._by_reference is None:
            # The sandbox filters by yourReferenceNumber; a service that ignores the
            # parameter answers the whole list, which then serves every later lookup.
            frame = self.resource.listing.frame([("yourReferenceNumber", reference)])
            matches = frame[frame["yourReferenceNumber"] == reference]
            if len(matches) < len(frame):
                self._index(frame)
            return None if matches.empty else matches.iloc[-1].to_dict()
        return self._by_reference.get(reference)

    def by_id(self, item_id: int) -> dict[str, Any] | None:
        """The item ``item_id`` (voids are of ACH and RCC items only), or ``None``."""
        if self._by_id is not None:
            return self._by_id.get(item_id)
        try:
            # Only the item resources (ACH, RCC) have get(); voids are of their items only.
            item = self.resource.get(item_id)  # type: ignore[attr-defined]
        except NotFoundError:
            return None
        return cast("dict[str, Any]", item.to_dict())


def _reconcile_entry(lookup: _Lookup, entry: dict[str, Any]) -> tuple[str, Any, Any, str]:
    """The settled state, item id, item status and a note for one unknown journal entry."""
    import pandas as pd

    id_field = lookup.resource.id_field
    by_id = entry["operation"] in VOIDS_BY_ID
    if by_id:
        found = lookup.by_id(int(entry["item_id"] or entry["reference"]))
        if found is None:
            return "failed", None, None, "reconcile: the item does not exist"
        status: str | None = str(found["itemStatus"])
    else:
        found = lookup.by_reference(str(entry["reference"]))
        if found is None:
            return "failed", None, None, "reconcile: not found in the service; it never arrived"
        status = found.get("itemStatus" if "itemStatus" in found else "status")
        status = None if status is None or pd.isna(status) else str(status)
    if by_id or entry["operation"] == "void_references":
        done = status == "V"
        return ("sent" if done else "failed", found[id_field], status,
                "reconcile: voided" if done else f"reconcile: the item is {status}, not voided")
    # An item the service stored but will never process (I: invalid, B: blocked) is
    # recorded as a submission's answer records it, so that a corrected one may be sent.
    state = NOT_ACCEPTED.get(status or "", "sent")
    return state, found[id_field], status, "reconcile: found in the service"
