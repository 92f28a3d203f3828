"""Helpers of the sandbox tests: an HTTP caller with a token, valid bodies, fresh references."""

from __future__ import annotations

import itertools
import uuid
from decimal import Decimal
from typing import Any

import requests

from paynb._json import dumps
from paynb.sandbox import Sandbox

_counter = itertools.count()
_RUN = uuid.uuid4().hex[:6]

ACH = "/api/v3/AchTransactions/companycode/{company}"
RCC = "/api/v3/RccTransactions/companycode/{company}"
INSTANT = "/api/v3/InstantTransactions/companycode/{company}"
RTP = "/api/v3/InstantRtpTransactions/companycode/{company}"
NOCS = "/api/v3/AchNocs/companycode/{company}"


def token(sb: Sandbox, username: str | None = None, password: str | None = None) -> str:
    """A bearer token of ``sb`` for the demo user (or another one)."""
    form = {"grant_type": "password", **sb.credentials.as_dict()}
    if username:
        form.update(username=username, password=password)
    answer = requests.post(sb.auth_url + "/connect/token", data=form, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()["access_token"]


class Api:
    """Calls to one sandbox as one user: ``api.get(ACH, params=...)`` (``{company}`` filled)."""

    def __init__(self, sb: Sandbox, username: str | None = None, password: str | None = None,
                 company: str = "DEMO1"):
        self.sb = sb
        self.company = company
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token(sb, username, password)}"

    def url(self, path: str, company: str | None = None) -> str:
        return self.sb.base_url + path.format(company=company or self.company)

    def call(self, method: str, path: str, body: Any = None, *, company: str | None = None,
             **kwargs: Any) -> requests.Response:
        if body is not None:
            kwargs["data"] = dumps(body)
            kwargs.setdefault("headers", {})["Content-Type"] = "application/json"
        return self.session.request(method, self.url(path, company), timeout=60, **kwargs)

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.call("GET", path, **kwargs)

    def post(self, path: str, body: Any = None, **kwargs: Any) -> requests.Response:
        return self.call("POST", path, body, **kwargs)

    def put(self, path: str, body: Any = None, **kwargs: Any) -> requests.Response:
        return self.call("PUT", path, body, **kwargs)


def ref(label: str = "T") -> str:
    """A reference number no other test or run uses."""
    return f"{label}-{_RUN}-{next(_counter)}"


def ach_item(**changes: Any) -> dict[str, Any]:
    """A valid ACH debit with a fresh reference."""
    item: dict[str, Any] = {
        "firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
        "zip": "10001", "yourReferenceNumber": ref("ACH"), "bankRoutingNumber": "021000021",
        "bankAccountNumber": "000123456789", "achAccountType": "Checking",
        "achTransactionType": "Debit", "achEntryClass": "PPD", "amount": Decimal("125.10"),
    }
    item.update(changes)
    return item


def rcc_item(**changes: Any) -> dict[str, Any]:
    """A valid RCC item with a fresh reference."""
    item: dict[str, Any] = {
        "firstSignerFirstName": "Sam", "firstSignerLastName": "Lee", "address1": "1 Main St",
        "city": "Springfield", "state": "IL", "zip": "62701", "yourReferenceNumber": ref("RCC"),
        "bankRoutingNumber": "021000021", "bankAccountNumber": "000987654321",
        "amount": Decimal("49.99"),
    }
    item.update(changes)
    return item


def problem(answer: requests.Response, status: int) -> dict[str, Any]:
    """The problem detail of ``answer``, after checking its status and content type."""
    assert answer.status_code == status, answer.text
    assert answer.headers["content-type"].startswith("application/problem+json")
    body = answer.json()
    assert body["status"] == status
    assert {"type", "title", "status", "detail", "instance"} <= set(body)
    return body
