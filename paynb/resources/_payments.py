"""Instant card and RTP payments: what both share (lists, lookups, the route-check guard)."""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, ClassVar, cast
from urllib.parse import quote

from paynb.errors import RouteNotCheckedError, RouteUnavailableError, ValidationError
from paynb.models import RequestModel
from paynb.resources._base import Resource, ResourceContext, as_mapping, wire_body
from paynb.resources._sending import Approver, Command
from paynb.results import RouteCheck
from paynb.validation import to_decimal

if TYPE_CHECKING:
    import pandas as pd

    from paynb.journal import Approval

__all__ = ["ROUTE_CHECK_TTL", "PaymentResource"]

#: How long a route check allows sends to its card, token or routing number (seconds).
ROUTE_CHECK_TTL = 15 * 60


class PaymentResource(Resource):
    """Base of ``client.instant`` and ``client.rtp``.

    ``send`` refuses, without sending anything, a payment whose destination
    was not route-checked by this client in the last :data:`ROUTE_CHECK_TTL`
    seconds (:class:`~paynb.errors.RouteNotCheckedError`), or whose check said
    the rail is unsupported or unreachable, or whose amount is above the
    check's limit (:class:`~paynb.errors.RouteUnavailableError`).
    """

    range_fields: ClassVar[dict[str, str]] = {
        "received": "receivedDateTime", "settled": "completedDateTime"}
    model: ClassVar[type[RequestModel]]
    #: Path segment of a single transaction (the spec misspells the instant one).
    item_segment: ClassVar[str]

    def __init__(self, context: ResourceContext) -> None:
        super().__init__(context)
        # Destinations are remembered by a keyed hash, never as card or account numbers.
        self._salt = secrets.token_bytes(16)
        self._checks: dict[str, tuple[RouteCheck, float]] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ route checks

    def _key(self, destination: str) -> str:
        return hmac.new(self._salt, destination.encode(), hashlib.sha256).hexdigest()

    def _remember(self, body: dict[str, Any], check: RouteCheck) -> RouteCheck:
        """Remember ``check`` of the destination of ``body`` (what was checked)."""
        destination = self._destination(body)[0]
        assert destination is not None  # (a route check's checked body names one)
        with self._lock:
            self._checks[self._key(destination)] = (check, time.monotonic())
        return check

    def _recent_check(self, destination: str | None) -> RouteCheck | None:
        if destination is None:
            return None
        with self._lock:
            found = self._checks.get(self._key(destination))
        if found is None or time.monotonic() - found[1] > ROUTE_CHECK_TTL:
            return None
        return found[0]

    def _destination(self, body: dict[str, Any]) -> tuple[str | None, str]:
        """The remembered-check key of a payment body, and how to name it in a message."""
        raise NotImplementedError

    # ------------------------------------------------------------------ calls

    def list(self, status: str | Iterable[str] | None = None, returned_from: Any = None,
             returned_to: Any = None, *, received_from: Any = None, received_to: Any = None,
             settled_from: Any = None, settled_to: Any = None, page: int | None = None,
             page_size: int | None = None, max_items: int | None = None,
             progress: bool | None = None) -> pd.DataFrame:
        """Transactions as a DataFrame, every page unless ``page`` is given.

        The filters are those of ``client.ach.list``; the service documents no query
        parameter for instant lists (spec 4.5 names the ACH list's), so every one is
        **applied here**, to the transactions that come back. Ranges take dates,
        datetimes or ISO text (UTC when zone-less); a bare date as the ``_to`` end
        takes in that whole day; a backwards range is a
        :class:`~paynb.errors.ValidationError` naming both arguments.

        Args:
            status: ``"Success"``, ``"Failed"`` or both (any casing).
            returned_from, returned_to: instant transactions have no return date:
                giving them is an error.
            received_from, received_to: range of ``receivedDateTime``.
            settled_from, settled_to: range of ``completedDateTime`` (an instant
                payment settles when it completes).
            page: fetch only this zero-based page.
            page_size: records per page (default: the client's ``page_size``).
            max_items: stop after this many records, counted before the filters.
            progress: False hides the progress bar shown for lists of several pages.
        """
        return self._list(locals())

    def get(self, unique_id: str) -> pd.Series:
        """One transaction by its ``uniqueId``."""
        if hasattr(unique_id, "item"):
            unique_id = unique_id.item()
        if isinstance(unique_id, bool) or not isinstance(unique_id, str | int) \
                or not str(unique_id).strip():
            raise ValidationError.for_argument("unique_id", "must be the transaction's uniqueId")
        path = self._path(f"/{quote(str(unique_id).strip(), safe='')}",
                          segment=self.item_segment)
        return self._row(self._record("GET", path))

    def send(self, txn: Any, *, allow_duplicate: bool = False,
             validate: bool = True) -> pd.Series | Approval:
        """Send one payment, after a recent successful route check of its destination.

        ``txn`` is a mapping, Series or model of the transaction; it is checked
        first (``validate=False`` skips that). Amounts are passed on unchanged
        (their unit is not shown in the spec). The journal refuses a reference
        number it already holds unless ``allow_duplicate``; the POST is sent once.

        When the client's dual control asks for a second person (every instant
        payment, or an amount over the kind's limit), nothing is sent: an
        :class:`~paynb.journal.Approval` is returned, and :meth:`paynb.Client.approve`
        by another analyst checks the route again and sends it exactly as prepared.
        """
        body = wire_body(self.model, as_mapping(txn, "txn"), validate=validate)
        return cast("pd.Series | Approval", self._sender.run(self._command(
            "send", {"bodies": [body], "allow_duplicate": allow_duplicate})))

    def _command(self, operation: str, request: dict[str, Any]) -> Command:
        """A payment's ``send``: its route checked first (by an approver's client too)."""
        if operation != "send":
            return super()._command(operation, request)
        (body,) = request["bodies"]

        def route(approver: Approver | None) -> None:
            # An approver's client checks the route itself: the check of the analyst who
            # prepared the payment was that client's.
            if approver is not None and self._recent_check(self._destination(body)[0]) is None:
                self._check_route_of(body)
            self._verify_route(body)

        return self._post(operation, request, route)

    def _verify_route(self, body: dict[str, Any]) -> None:
        """Refuse a payment whose destination this client has not route-checked lately,
        whose check said no, or whose amount is above the check's limit."""
        destination, label = self._destination(body)
        check = self._recent_check(destination)
        if check is None:
            raise RouteNotCheckedError(
                f"no route check of {label} by this client in the last "
                f"{ROUTE_CHECK_TTL // 60} minutes; call check_route first. Nothing was sent.")
        if not check.ok:
            raise RouteUnavailableError(
                f"the route check of {label} said supported={check.supported}, "
                f"reachable={check.reachable}. Nothing was sent.")
        amount = to_decimal(body.get("amount"))
        if check.max_amount is not None and amount is not None and amount > check.max_amount:
            raise RouteUnavailableError(
                f"amount {amount} is above the limit {check.max_amount} the route check of "
                f"{label} gave. Nothing was sent.")

    def _check_route_of(self, body: dict[str, Any]) -> RouteCheck:
        """Route-check the destination of a payment body (its card, token or routing
        number)."""
        raise NotImplementedError
