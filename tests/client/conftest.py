"""Fixtures of the client tests: isolated settings, and clients of a stubbed service.

Every test runs with ``PAYNB_JOURNAL`` and ``PAYNB_CONFIG`` pointing into its own
temporary folder, so that no test reads or writes the user's real journal or
profiles.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import responses

from paynb.client import Client
from paynb.config import Credentials

BASE = "https://svc.test"
AUTH = "https://auth.test"
TOKEN_URL = f"{AUTH}/connect/token"
ACH_PATH = "/api/v3/AchTransactions/companycode/DEMO1"
SECRETS = ("stub-client-secret", "stub-password")



@pytest.fixture
def journal_path(tmp_path: Path) -> Path:
    return tmp_path / "journal.sqlite3"


@pytest.fixture
def stub() -> Iterator[responses.RequestsMock]:
    """A stubbed service whose token endpoint answers ``tok-1``, ``tok-2``, ..."""
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        count = {"n": 0}

        def token(request: Any) -> tuple[int, dict[str, str], str]:
            count["n"] += 1
            return 200, {}, json.dumps({"access_token": f"tok-{count['n']}",
                                        "expires_in": 3600, "token_type": "Bearer"})

        mock.add_callback(responses.POST, TOKEN_URL, callback=token)
        yield mock


@pytest.fixture
def stub_client(stub: responses.RequestsMock, journal_path: Path) -> Iterator[Client]:
    """A client of the stubbed service, with a journal in the test's folder."""
    client = Client(base_url=BASE, auth_url=AUTH, company_code="DEMO1",
                    credentials=Credentials("stub-client", SECRETS[0], "stub-user", SECRETS[1]),
                    journal=journal_path, max_retries=3)
    client.transport.sleep = lambda seconds: None  # backoff without waiting
    yield client
    client.close()


def ach_item(reference: str, **changes: Any) -> dict[str, Any]:
    """A valid ACH item with ``reference``."""
    item = {
        "firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
        "zip": "10001", "yourReferenceNumber": reference, "bankRoutingNumber": "021000021",
        "bankAccountNumber": "000123456789", "achTransactionType": "Debit",
        "amount": Decimal("125.10"),
    }
    item.update(changes)
    return item


def rcc_item(reference: str, **changes: Any) -> dict[str, Any]:
    """A valid RCC item with ``reference``."""
    item = {
        "firstSignerFirstName": "Sam", "firstSignerLastName": "Lee", "address1": "1 Main St",
        "city": "Springfield", "state": "IL", "zip": "62701", "yourReferenceNumber": reference,
        "bankRoutingNumber": "021000021", "bankAccountNumber": "000987654321",
        "amount": Decimal("49.99"),
    }
    item.update(changes)
    return item


@pytest.fixture
def make_ach() -> Callable[..., dict[str, Any]]:
    return ach_item


@pytest.fixture
def make_rcc() -> Callable[..., dict[str, Any]]:
    return rcc_item
