"""``client.rtp``: instant RTP payments (spec 4.4)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from paynb.errors import ValidationError
from paynb.models import RtpTransaction
from paynb.resources._payments import PaymentResource
from paynb.results import RouteCheck
from paynb.validation import check_routing_number

__all__ = ["RtpResource"]


class RtpResource(PaymentResource):
    """Instant RTP transactions of the client's company.

    ``check_route(routing_number)`` first, then ``send``; ``list``, ``get`` and
    ``export`` read them back.
    """

    kind = "rtp"
    segment = "InstantRtpTransactions"
    model = RtpTransaction
    item_segment = "InstantRtpTransactions"

    def check_route(self, routing_number: str) -> RouteCheck:
        """Ask whether the bank of ``routing_number`` takes instant RTP payments.

        The answer is remembered for
        :data:`~paynb.resources._payments.ROUTE_CHECK_TTL` seconds so that
        :meth:`send` to that routing number is allowed.
        """
        number = str(routing_number).strip() if isinstance(routing_number, str) else None
        problem = "must be text" if number is None else check_routing_number(number)
        if problem:
            raise ValidationError.for_argument("routing_number", problem)
        assert number is not None
        # The only path without a companycode segment (spec 4.4).
        answer = self._call("GET", f"/api/v3/InstantRtpRoutes/{quote(number, safe='')}")
        return self._remember({"routingNumber": number}, RouteCheck.from_answer(answer))

    def _check_route_of(self, body: dict[str, Any]) -> RouteCheck:
        return self.check_route(str(body.get("routingNumber") or ""))

    def _destination(self, body: dict[str, Any]) -> tuple[str | None, str]:
        number = body.get("routingNumber")
        if not number:
            return None, "this payment (no routing number)"
        return f"rtp:{str(number).strip()}", f"routing number {number}"
