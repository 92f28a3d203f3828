"""``client.nocs``: ACH notices of change (spec 4.5), and the ledger of what they oblige."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from paynb.errors import ValidationError
from paynb.nacha import as_of_time
from paynb.resources._base import Resource
from paynb.resources._listing import frames

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["NocResource"]


class NocResource(Resource):
    """ACH NOCs of the client's company: ``list``, ``export``, ``obligations``, ``apply``.

    A NOC (notice of change) is sent by the receiving bank when account data of
    an item has changed; ``changeCode`` (C01...) comes with its ``changeReason``.
    """

    kind = "noc"
    segment = "AchNocs"

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
        return self._list(locals())

    def obligations(self, as_of: Any = None, *, progress: bool | None = None) -> pd.DataFrame:
        """The NOC correction ledger (:func:`paynb.compliance.noc_obligations`) of every NOC,
        with the journal's applied marks, judged at ``as_of`` (default: the service's
        clock, ``context.clock``; see :func:`paynb.compliance.service_now`).

        Lists the NOCs (all pages) and fetches the entries they are about that this
        client has not seen; the *next entry* to each account is looked for among the
        ACH items this client has listed, fetched or submitted in this session. Account
        numbers are compared in full inside the client and shown masked.
        """
        guard = self.context.require_guard()
        when = as_of_time(as_of) if as_of is not None else self.context.clock.now()
        self.list(progress=progress)
        return frames.noc_ledger_frame(guard.noc_ledger(when))

    def apply(self, noc_id: Any, *, by: str | None = None,
              note: str | None = None) -> dict[str, Any]:
        """Record in the journal that NOC ``noc_id``'s correction is made.

        ``by`` is who made it (default: the client's ``user``); ``note`` a free remark. The
        mark is kept in the journal, so the ledger survives restarts and is shared
        by every process using the same journal; the first mark of a NOC stands.
        Returns ``{noc_id, by, when, note, already}`` (``already``: it was marked before).

        ``noc_id`` must be a NOC of the company: one this client has seen, one the
        service lists (the list is asked when the id is not among those seen), or one the
        history store holds; any other id is a :class:`~paynb.errors.ValidationError`.
        """
        if noc_id is None or isinstance(noc_id, bool) or not str(noc_id).strip():
            raise ValidationError.for_argument("noc_id", "must be the id of a NOC")
        if by is not None and (not isinstance(by, str) or not by.strip()):
            raise ValidationError.for_argument(
                "by", "must be a non-empty name, or None for the client's user")
        if note is not None and not isinstance(note, str):
            raise ValidationError.for_argument("note", "must be text or None")
        journal = self.context.require_journal()
        key = str(noc_id).strip()
        looked = self.context.require_guard().unknown_noc(key)
        if looked is not None:
            raise ValidationError.for_argument(
                "noc_id", f"{key!r} is not the id of a NOC: {looked}, none with "
                          "that id (client.nocs.list() shows them). A mark on a "
                          "mistyped id would leave the NOC it was meant for open")
        return journal.nocs.apply(self.context.company_code, key, by=by or self.context.user,
                                  note=note)
