"""Instant payments in two steps: :class:`InstantCardForm` and :class:`RtpForm`. Step 2 (the
payment) opens only after a successful route check of exactly the destination now entered
(docs/forms.md); the amount is checked against the rail's limit before anything is sent.
"""

from __future__ import annotations

import hashlib
from typing import Any

import ipywidgets as widgets

from paynb.errors import RouteNotCheckedError, RouteUnavailableError
from paynb.forms._base import button, escape, last_four, record_html
from paynb.forms.single import PaymentForm
from paynb.models import (
    CardRouteCheck,
    InstantCardTransaction,
    RequestModel,
    RtpTransaction,
    TokenRouteCheck,
    check,
)

__all__ = ["InstantCardForm", "RtpForm"]


class _InstantForm(PaymentForm):
    """A payment form with a route check in front of it."""

    verb = "Send"
    busy_text = "Sending…"

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        #: The last successful or failed route check of the destination now entered.
        self.route: Any = None
        self._route_key: str | None = None
        self.check_button = button("Check route", "paynb-check-route", icon="search")
        self.check_button.on_click(self._guarded(self._check_route, "Checking the route…"))
        self.route_info = widgets.HTML("").add_class("paynb-route")

    # -- to be defined per rail -------------------------------------------------------

    def _route_wires(self) -> tuple[str, ...]:
        """The fields of step 1, as used now."""
        raise NotImplementedError

    def _call_route_check(self, values: dict[str, Any]) -> Any:
        raise NotImplementedError

    def _assemble_steps(self, route: tuple[str, ...], payment: tuple[str, ...],
                        *mode: widgets.Widget) -> None:
        """Step 1 (``mode``, the ``route`` fields, the check), step 2 (the ``payment``
        fields, the buttons)."""
        step1, step2 = (widgets.HTML(f"<h4 style='margin:0.6em 0 0.2em'>Step {n}: {what}</h4>")
                        for n, what in ((1, "route check"), (2, "payment")))
        self._assemble(step1, *mode, widgets.VBox(self.fields.rows(route)), self.check_button,
                       self.route_info, step2, widgets.VBox(self.fields.rows(payment)),
                       self.buttons)

    def _route_values(self) -> dict[str, Any]:
        return {wire: self.fields[wire].value for wire in self._route_wires()}

    def _route_errors(self) -> dict[str, list[str]]:
        """The errors of the step-1 fields alone."""
        step1 = self._route_wires()
        return {k: v for k, v in self.fields.check()[1].items() if k in step1}

    def _key(self) -> str:
        # A digest, not the values: the card number is not kept in a second place.
        return hashlib.sha256(repr(sorted(self._route_values().items())).encode()).hexdigest()

    def _changed(self, *_args: Any) -> None:
        if self.route is not None and self._key() != self._route_key:
            self.route = None
            self.route_info.value = ""
        super()._changed()

    def _check_route(self) -> None:
        if self._route_errors():
            return  # the button was disabled: a programmatic click gets no further
        route = self._call_route_check(self._route_values())
        self.route, self._route_key = route, self._key()
        self.route_info.value = self._route_html(route)
        if route.ok:
            limit = (f" up to {route.max_amount} {route.currency or ''}".rstrip()
                     if route.max_amount is not None else "")
            self._announce(f"Route available{limit}. Step 2: fill in the payment.", "ok")
        else:
            self._announce(self._unavailable(route), "error")

    @staticmethod
    def _unavailable(route: Any) -> str:
        why = [] if route.supported else ["the rail is not supported"]
        why += [] if route.reachable else ["the destination is not reachable"]
        return f"Route not available: {' and '.join(why)}. Nothing can be sent to it."

    @staticmethod
    def _route_html(route: Any) -> str:
        verdict = ("<b style='color:#1b7f3b'>&#10004; route available</b>" if route.ok
                   else "<b style='color:#b00020'>&#10008; route not available</b>")
        facts = {"supported": route.supported, "reachable": route.reachable,
                 **{k: route.raw[k] for k in ("cardBrand", "cardLastFour", "bankName")
                    if route.raw.get(k)}}
        limits = "".join(
            f"<tr><td>{escape(t.get('type'))}</td><td>{escape(t.get('maxAmount'))}</td>"
            f"<td>{escape(t.get('currency'))}</td></tr>" for t in route.payment_types)
        table = ("<table class='paynb-table'><tr><th>payment type</th><th>max amount</th>"
                 f"<th>currency</th></tr>{limits}</table>" if limits else "")
        return f"{verdict}{record_html(facts)}{table}"

    def _validate(self) -> tuple[RequestModel | None, dict[str, list[str]]]:
        item, errors = super()._validate()
        limit = self.route.max_amount if self.route is not None else None
        if item is not None and limit is not None and item.amount > limit:
            return None, {"amount": [f"must be at most {limit} (the rail's limit)"]}
        return item, errors

    def _blocked(self) -> str | None:
        if self.route is None:
            problems = self.fields.problems(self._route_errors())
            return "Step 1: check the route first" + (f" — {problems}" if problems else ".")
        if not self.route.ok:
            return self._unavailable(self.route)
        return None

    def _refresh(self) -> None:
        super()._refresh()
        route_ok = self.route is not None and self.route.ok
        step1 = set(self._route_wires())
        for field in self.fields:
            if field.wire not in step1:
                field.disabled = not route_ok
        self.check_button.disabled = self.busy or bool(self._route_errors())

    def _send(self, item: RequestModel, *, allow_duplicate: bool) -> None:
        super()._send(item, allow_duplicate=allow_duplicate)
        if self._done:
            # Each payment gets its own route check.
            self.route = None
            self.route_info.value = ""
            self._refresh()

    def _deliver(self, payload: dict[str, Any], *, allow_duplicate: bool) -> Any:
        try:
            return self.resource.send(payload, allow_duplicate=allow_duplicate)
        except (RouteNotCheckedError, RouteUnavailableError):
            # The client's own check has expired or says no: this form's check goes too.
            self.route = None
            self.route_info.value = ""
            raise

    def _sent(self, record: Any) -> str:
        detail = record.get("statusDescription") or record.get("statusCode") or ""
        return (f"Sent: uniqueId {record.get('uniqueId')}, status {record.get('status')}"
                + (f" ({detail})" if detail else "") + ".")

    @staticmethod
    def _amount(item: Any) -> str:
        # A whole number in the service's own unit (the spec does not say which): no
        # currency sign or decimals that would guess one.
        return f"{item.amount} (amount in the service's unit)"


class InstantCardForm(_InstantForm):
    """Send an instant card payment: check the route (card number, or token and
    sub-client id), then send. The card number and one-time password are password
    inputs, emptied once sent. ``form.result`` is the transaction (a Series)."""

    model = InstantCardTransaction
    kind = "instant"
    title = "Instant card payment"
    css_name = "instant"
    _card_fields = ("cardNumber", "nameOnCard", "cardExpiration")
    _token_fields = ("tokenId", "yourSubClientId")

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self.route_by = widgets.ToggleButtons(options=[("Card number", "card"),
                                                       ("Token", "token")],
                                              value="card", description="Route by")
        self.route_by.add_class("paynb-field-routeBy")
        self.route_by.observe(self._mode, names="value")
        self._assemble_steps(("cardNumber", "tokenId", "yourSubClientId"),
                             ("nameOnCard", "cardExpiration", "totPassword", "amount",
                              "yourReferenceNumber"), self.route_by)
        self._mode()

    def _mode(self, *_args: Any) -> None:
        card = self.route_by.value == "card"
        for wire in (*self._card_fields, *self._token_fields):
            self.fields[wire].visible = card == (wire in self._card_fields)
        # Optional in the model only because the other mode may be used instead.
        self.fields.require(self._card_fields if card else self._token_fields)
        self._changed()

    def _route_wires(self) -> tuple[str, ...]:
        return ("cardNumber",) if self.route_by.value == "card" else self._token_fields

    def _movement(self, item: Any) -> str:
        to = (f"card {last_four(item.card_number)}" if item.card_number else
              f"the card of token {last_four(item.token_id)} (sub-client "
              f"{item.your_sub_client_id})")
        return (f"send {self._amount(item)}, paid out to {to}, reference "
                f"{item.your_reference_number}")

    def _route_errors(self) -> dict[str, list[str]]:
        # Its own models: the transaction's cross-field rules only run once every field is valid.
        model = CardRouteCheck if self.route_by.value == "card" else TokenRouteCheck
        return check(model, self._route_values())[1]

    def _call_route_check(self, values: dict[str, Any]) -> Any:
        # Checked as the payment will send it ("4111 1111 ..." -> "41111111..."), so that
        # the client finds this check again when the payment goes out.
        if self.route_by.value == "card":
            card = CardRouteCheck.model_validate(values)
            return self.resource.check_route(card.card_number)
        token = TokenRouteCheck.model_validate(values)
        return self.resource.check_route(token_id=token.token_id,
                                         sub_client_id=token.your_sub_client_id)


class RtpForm(_InstantForm):
    """Send an instant RTP payment: check the routing number, then send.
    ``form.result`` is the transaction (a Series)."""

    model = RtpTransaction
    kind = "rtp"
    title = "Instant RTP payment"
    css_name = "rtp"

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self._assemble_steps(("routingNumber",), ("name", "firstName", "lastName",
                                                  "accountNumber", "amount", "yourReferenceNumber"))
        self._refresh()

    def _route_wires(self) -> tuple[str, ...]:
        return ("routingNumber",)

    def _movement(self, item: Any) -> str:
        return (f"send {self._amount(item)}, paid out to account "
                f"{last_four(item.account_number)} at routing {item.routing_number} "
                f"({item.first_name} {item.last_name}), reference {item.your_reference_number}")

    def _call_route_check(self, values: dict[str, Any]) -> Any:
        return self.resource.check_route(values["routingNumber"])

