"""Fixtures of the team tests: analysts of one company sharing one journal (an SQLite file,
then a PostgreSQL schema), each with a client of their own, and a spy on what reaches the
service."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

import pytest

from paynb import sandbox
from paynb.client import Client
from paynb.config import Credentials

#: The dual control of the tests: ACH over 1,000.00, every bulk, every instant payment,
#: voids over 500.00.
POLICY = {"ach_over": "1000.00", "bulk": True, "instant": True, "void_over": "500"}


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    """The team's service: a sandbox of this module's own."""
    with sandbox.serve(port=0, seed_items=0, seed=35) as running:
        yield running


class Wire:
    """Every request the watched clients send to the service (token requests left out):
    ``(method, path, body)``, the body as the JSON text that went out."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str | None]] = []
        self._lock = threading.Lock()

    def watch(self, client: Client) -> None:
        session = client.transport.session
        original = session.send

        def send(request: Any, **kwargs: Any) -> Any:
            path = urlsplit(request.url).path
            if not path.endswith("/connect/token"):
                body = request.body.decode() if isinstance(request.body, bytes) else request.body
                with self._lock:
                    self.calls.append((request.method, path, body))
            return original(request, **kwargs)

        session.send = send

    def writes(self) -> list[tuple[str, str, Any]]:
        """The POSTs and PUTs, bodies parsed (amounts as exact Decimals)."""
        with self._lock:
            return [(method, path, None if body is None else json.loads(body,
                                                                         parse_float=Decimal))
                    for method, path, body in self.calls if method in ("POST", "PUT")
                    and "/InstantRoutes" not in path and "/route" not in path.lower()]


@pytest.fixture
def wire() -> Wire:
    return Wire()


@pytest.fixture
def team(sb: Any, journal_address: str, wire: Wire) -> Iterator[Callable[..., Client]]:
    """``team("ana")``: a client of ``sb`` acting as ``ana`` on the team's journal, with
    :data:`POLICY` unless ``dual_control=`` says otherwise; closed after the test."""
    made: list[Client] = []

    def member(user: str, **options: Any) -> Client:
        options.setdefault("dual_control", POLICY)
        client = Client(base_url=sb.base_url, auth_url=sb.auth_url,
                        company_code=options.pop("company_code", sb.company_code),
                        credentials=Credentials(**sb.credentials.as_dict()),
                        journal=journal_address, user=user, environment="sandbox",
                        **options)
        wire.watch(client)
        made.append(client)
        return client

    yield member
    for client in made:
        client.close()
