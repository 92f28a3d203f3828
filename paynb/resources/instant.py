"""``client.instant``: instant card payments (spec 4.3)."""

from __future__ import annotations

from typing import Any

from paynb.errors import ValidationError
from paynb.models import CardRouteCheck, InstantCardTransaction, TokenRouteCheck
from paynb.resources._base import wire_body
from paynb.resources._payments import PaymentResource
from paynb.results import RouteCheck

__all__ = ["InstantResource"]


class InstantResource(PaymentResource):
    """Instant card transactions of the client's company.

    ``check_route`` first (by card number, or by token and sub-client id), then
    ``send``; ``list``, ``get`` and ``export`` read them back. Card numbers are
    never kept: frames show ``cardLastFour`` only.
    """

    kind = "instant"
    segment = "InstantTransactions"
    model = InstantCardTransaction
    # The spec spells the single-transaction segment this way; the service is addressed so.
    item_segment = "InstantTransactinos"
    #: A held card payment keeps no one-time password: its approver gives a current one.
    approver_supplies = {"totPassword": "tot_password"}

    def check_route(self, card_number: str | None = None, *, token_id: str | None = None,
                    sub_client_id: str | None = None) -> RouteCheck:
        """Ask whether a card (or the card behind a token) can take an instant payment.

        Give ``card_number``, or ``token_id`` with ``sub_client_id``. The answer is
        remembered for :data:`~paynb.resources._payments.ROUTE_CHECK_TTL` seconds
        so that :meth:`send` to the same card or token is allowed.
        """
        if (card_number is None) == (token_id is None):
            raise ValidationError.for_argument(
                "card_number", "give a card number, or token_id and sub_client_id")
        if card_number is not None:
            body = wire_body(CardRouteCheck, {"cardNumber": card_number}, validate=True)
            path = self._path(segment="InstantRoutes")
        else:
            body = wire_body(TokenRouteCheck,
                             {"tokenId": token_id, "yourSubClientId": sub_client_id},
                             validate=True)
            path = self._path("/token", segment="InstantRoutes")
        return self._remember(body, RouteCheck.from_answer(self._call("POST", path, body=body)))

    def _check_route_of(self, body: dict[str, Any]) -> RouteCheck:
        if body.get("cardNumber"):
            return self.check_route(str(body["cardNumber"]))
        return self.check_route(token_id=body.get("tokenId"),
                                sub_client_id=body.get("yourSubClientId"))

    def _destination(self, body: dict[str, Any]) -> tuple[str | None, str]:
        card = body.get("cardNumber")
        if card:
            digits = "".join(ch for ch in str(card) if ch.isdigit())
            return f"card:{digits}", f"card ending {digits[-4:]}"
        token, sub_client = body.get("tokenId"), body.get("yourSubClientId")
        if token:
            return f"token:{token}\x1f{sub_client}", "this token"
        return None, "this payment (no card number or token)"
