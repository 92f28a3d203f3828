"""The sandbox as an API under fuzzing, company isolation, and token checks on every route.

- schemathesis generates requests (valid and invalid) for every operation of the
  sandbox's OpenAPI document: none may be answered with a 5xx.
- Every service route of the document, called without a token or with a bad one, is a
  401; called by a user of another company, a 403; and a user of company B can read,
  submit or void nothing of company A, not even through B's own paths with A's ids.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis import GenerationMode

from paynb import sandbox

from .faultrun import service_token

COMPANY_A, COMPANY_B = "DEMO1", "DEMO2"
# "other" holds DEMO2 only; "analyst" holds both (docs/sandbox.md).
OTHER = ("other", "other-password")

# Simulation endpoints that would change the fuzzing run itself (faults, clock, the
# users' passwords) are left out; every service path and the token endpoint are in.
_SKIPPED = re.compile(r"^/sandbox/(faults|clock/advance|process|users)")


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    with sandbox.serve(port=0, seed_items=300, seed=31) as running:
        yield running


def _operations(sb: Any) -> list[Any]:
    schema = schemathesis.openapi.from_url(f"{sb.base_url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    return [op for op in operations if not _SKIPPED.match(op.path)]


def _has_invalid_values(operation: Any) -> bool:
    """False when every input is a free-text path parameter: no value of it is invalid,
    so a negative case cannot be generated (hypothesis would search in vain)."""
    return bool(operation.body) or len(operation.query) > 0 or len(operation.headers) > 0


def _fuzz(sb: Any, positive: int, negative: int) -> dict[str, Any]:
    """Run every operation with ``positive`` valid and ``negative`` invalid generated
    requests (company path parameter pinned to a company the user holds, so that the
    requests reach the handlers instead of stopping at the 403); collect 5xx answers."""
    token = service_token(sb)
    session = requests.Session()
    headers = {"Authorization": f"Bearer {token}"}
    sent = 0
    failures: list[str] = []
    skipped: list[str] = []
    statuses: dict[int, int] = {}
    operations = _operations(sb)
    for operation in operations:
        company = {"companyCode": COMPANY_A} if "companyCode" in operation.path else None
        runs = [(GenerationMode.POSITIVE, positive)]
        if _has_invalid_values(operation):
            runs.append((GenerationMode.NEGATIVE, negative))
        else:
            skipped.append(f"{operation.method.upper()} {operation.path}")
        for mode, examples in runs:
            strategy = operation.as_strategy(generation_mode=mode, path_parameters=company)

            @settings(max_examples=examples, deadline=None, database=None,
                      phases=[Phase.explicit, Phase.generate],
                      suppress_health_check=list(HealthCheck))
            @given(case=strategy)
            def run(case: Any) -> None:
                nonlocal sent
                response = case.call(base_url=sb.base_url, session=session,
                                     headers=headers, timeout=30)
                sent += 1
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
                if response.status_code >= 500:
                    failures.append(f"{case.method} {case.formatted_path} "
                                    f"query={case.query} body={str(case.body)[:200]} "
                                    f"-> {response.status_code} {response.text[:200]}")

            run()
    session.close()
    return {"operations": len(operations), "sent": sent, "failures": failures,
            "skipped": skipped, "statuses": dict(sorted(statuses.items()))}


def _check_fuzz(sb: Any, title: str, *, positive: int, negative: int) -> None:
    result = _fuzz(sb, positive, negative)
    print(f"{title}: {result['operations']} operations, {result['sent']} requests, "
          f"statuses {result['statuses']}; operations without invalid inputs: "
          f"{len(result['skipped'])}")
    assert result["sent"] >= result["operations"] * min(positive, 10)
    assert not result["failures"], "5xx answers:\n" + "\n".join(result["failures"][:20])


def test_no_server_error_under_generated_requests(sb: Any) -> None:
    _check_fuzz(sb, "schemathesis (short)", positive=50, negative=20)


@pytest.mark.long
@pytest.mark.timeout(1200)
def test_no_server_error_under_many_generated_requests() -> None:
    with sandbox.serve(port=0, seed_items=300, seed=32) as running:
        _check_fuzz(running, "schemathesis (long)", positive=150, negative=60)


# -- token checks and company isolation ----------------------------------------------------

ACH = {"firstSignerFirstName": "Iso", "firstSignerLastName": "Lated", "state": "NY",
       "zip": "10001", "yourReferenceNumber": "ISO-ACH", "bankRoutingNumber": "021000021",
       "bankAccountNumber": "12345678", "achTransactionType": "Debit", "amount": 12.5}
RCC = {"firstSignerFirstName": "Iso", "firstSignerLastName": "Lated", "address1": "1 Main St",
       "city": "Springfield", "state": "IL", "zip": "62701", "yourReferenceNumber": "ISO-RCC",
       "bankRoutingNumber": "011000015", "bankAccountNumber": "12345678", "amount": 19.99}
CARD = "4111111111111111"


def _w_item(sb: Any, token: str, kind: str, company: str) -> dict[str, Any]:
    """A fresh waiting item of ``company`` (submitted now, with a token that may)."""
    segment = {"ach": "AchTransactions", "rcc": "RccTransactions"}[kind]
    body = dict(ACH if kind == "ach" else RCC, yourReferenceNumber=f"ISO-{kind}-{company}")
    answer = requests.post(f"{sb.base_url}/api/v3/{segment}/companycode/{company}", json=body,
                           headers={"Authorization": f"Bearer {token}"}, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()["transaction"]


def _payment(sb: Any, token: str, company: str) -> str:
    auth = {"Authorization": f"Bearer {token}"}
    base = f"{sb.base_url}/api/v3"
    assert requests.post(f"{base}/InstantRoutes/companycode/{company}",
                         json={"cardNumber": CARD}, headers=auth, timeout=30).ok
    answer = requests.post(f"{base}/InstantTransactions/companycode/{company}", headers=auth,
                           timeout=30, json={"nameOnCard": "ISO", "cardNumber": CARD,
                                             "cardExpiration": "12/2035", "amount": 100,
                                             "yourReferenceNumber": f"ISO-IC-{company}"})
    assert answer.ok, answer.text
    return answer.json()["transaction"]["uniqueId"]


@pytest.fixture(scope="module")
def targets(sb: Any) -> dict[str, Any]:
    """Items of company A that the calls below aim at, and a valid body per route."""
    token = service_token(sb)  # analyst: holds both companies
    ach, rcc = _w_item(sb, token, "ach", COMPANY_A), _w_item(sb, token, "rcc", COMPANY_A)
    return {"ach": ach, "rcc": rcc, "unique_id": _payment(sb, token, COMPANY_A),
            "token": token}


def _request(path: str, method: str, targets: dict[str, Any], company: str
             ) -> tuple[str, Any]:
    """The concrete path and a valid body for one route of the OpenAPI document."""
    ach, rcc = targets["ach"], targets["rcc"]
    rcc_route = "Rcc" in path
    item = rcc if rcc_route else ach
    id_field = "rccItemId" if rcc_route else "achItemId"
    concrete = (path.replace("{companyCode}", company)
                .replace("{itemId}", str(item[id_field]))
                .replace("{uniqueId}", targets["unique_id"])
                .replace("{filetype}", "csv").replace("{fileType}", "csv")
                .replace("{routingNumber}", "021000021"))
    body: Any = None
    if method == "post":
        if path.endswith("/many"):
            body = {"alwaysCommitValid": True,
                    "items": [dict(RCC if rcc_route else ACH, yourReferenceNumber="ISO-BULK")]}
        elif "InstantRoutes" in path:
            body = ({"tokenId": "tok_1", "yourSubClientId": "sub"} if path.endswith("/token")
                    else {"cardNumber": CARD})
        elif "InstantRtpTransactions" in path:
            body = {"firstName": "Iso", "lastName": "Lated", "routingNumber": "021000021",
                    "accountNumber": "12345678", "amount": 100, "yourReferenceNumber": "ISO-P"}
        elif "InstantTransactions" in path:
            body = {"nameOnCard": "ISO", "cardNumber": CARD, "cardExpiration": "12/2035",
                    "amount": 100, "yourReferenceNumber": "ISO-IC2"}
        else:
            body = dict(RCC if rcc_route else ACH, yourReferenceNumber="ISO-NEW")
    elif path.endswith("/referencenumbers"):
        body = {"referenceNumbers": [item["yourReferenceNumber"]]}
    elif path.endswith("itemids"):
        body = {("rccItemIds" if rcc_route else "achItemIds"): [item[id_field]]}
    return concrete, body


def _service_routes(sb: Any) -> list[tuple[str, str]]:
    document = requests.get(f"{sb.base_url}/openapi.json", timeout=30).json()
    routes = [(path, method) for path, operations in document["paths"].items()
              for method in operations if path.startswith(("/api", "/apiv3"))]
    assert len(routes) >= 30, "the document lists every service route of spec section 4"
    return routes


def _snapshot(sb: Any, targets: dict[str, Any]) -> dict[str, Any]:
    auth = {"Authorization": f"Bearer {targets['token']}"}
    base = f"{sb.base_url}/api/v3"
    seen = {}
    for segment in ("AchTransactions", "RccTransactions", "InstantTransactions",
                    "InstantRtpTransactions"):
        answer = requests.get(f"{base}/{segment}/companycode/{COMPANY_A}",
                              params={"pageSize": 1}, headers=auth, timeout=30).json()
        seen[segment] = answer["total"]
    for kind, segment, id_field in (("ach", "AchTransactions", "achItemId"),
                                    ("rcc", "RccTransactions", "rccItemId")):
        item = requests.get(f"{base}/{segment}/companycode/{COMPANY_A}/"
                            f"{targets[kind][id_field]}", headers=auth, timeout=30).json()
        seen[kind] = item["transaction"]["itemStatus"]
    return seen


@pytest.mark.parametrize("who", ["no token", "garbage token", "malformed header"])
def test_every_service_route_needs_a_valid_token(sb: Any, targets: dict[str, Any],
                                                 who: str) -> None:
    headers = {"no token": {}, "garbage token": {"Authorization": "Bearer not-a-token"},
               "malformed header": {"Authorization": targets["token"]}}[who]
    before = _snapshot(sb, targets)
    wrong = []
    for path, method in _service_routes(sb):
        concrete, body = _request(path, method, targets, COMPANY_A)
        answer = requests.request(method.upper(), sb.base_url + concrete, json=body,
                                  headers=headers, timeout=30)
        if answer.status_code != 401:
            wrong.append(f"{method.upper()} {concrete} -> {answer.status_code}")
    assert not wrong, "answered without a valid token:\n" + "\n".join(wrong)
    assert _snapshot(sb, targets) == before


def test_a_user_of_another_company_is_refused_on_every_route(sb: Any,
                                                              targets: dict[str, Any]) -> None:
    token = service_token(sb, *OTHER)
    before = _snapshot(sb, targets)
    wrong = []
    checked = 0
    for path, method in _service_routes(sb):
        if "{companyCode}" not in path:
            continue  # the RTP route inquiry names no company
        concrete, body = _request(path, method, targets, COMPANY_A)
        answer = requests.request(method.upper(), sb.base_url + concrete, json=body,
                                  headers={"Authorization": f"Bearer {token}"}, timeout=30)
        checked += 1
        if answer.status_code != 403:
            wrong.append(f"{method.upper()} {concrete} -> {answer.status_code}")
        elif answer.headers.get("content-type", "").startswith("application/problem+json"):
            assert answer.json()["status"] == 403
    assert checked >= 28
    assert not wrong, "a DEMO2-only user reached DEMO1:\n" + "\n".join(wrong)
    assert _snapshot(sb, targets) == before, "DEMO1 changed under a DEMO2-only user"


def test_company_b_paths_do_not_reach_company_a_items(sb: Any, targets: dict[str, Any]) -> None:
    """Ids and references of company A, used through company B's own paths, find nothing."""
    token = service_token(sb, *OTHER)
    auth = {"Authorization": f"Bearer {token}"}
    before = _snapshot(sb, targets)
    base = f"{sb.base_url}/api/v3"
    for kind, segment, id_field, ids_path in (
            ("ach", "AchTransactions", "achItemId", "achitemids"),
            ("rcc", "RccTransactions", "rccItemId", "rccitemids")):
        item = targets[kind]
        b_path = f"{base}/{segment}/companycode/{COMPANY_B}"
        got = requests.get(f"{b_path}/{item[id_field]}", headers=auth, timeout=30)
        assert got.status_code == 404
        void = requests.put(f"{b_path}/{item[id_field]}/void", headers=auth, timeout=30)
        assert void.status_code in (400, 404)
        by_ids = requests.put(f"{b_path}/void/{ids_path}", headers=auth, timeout=30,
                              json={id_field + "s": [item[id_field]]})
        assert by_ids.status_code in (400, 404) or not by_ids.json().get("transactions")
        by_refs = requests.put(f"{b_path}/void/referencenumbers", headers=auth, timeout=30,
                               json={"referenceNumbers": [item["yourReferenceNumber"]]})
        assert by_refs.status_code in (400, 404) or not by_refs.json().get("transactions")
        listed = requests.get(b_path, params={"pageSize": 1000}, headers=auth, timeout=30)
        assert all(r["companyCode"] == COMPANY_B for r in listed.json()["transactions"])
        assert item[id_field] not in {r[id_field] for r in listed.json()["transactions"]}
        exported = requests.get(f"{b_path}/export/filetype/json", headers=auth, timeout=30)
        assert str(item["yourReferenceNumber"]) not in exported.text
    unique = targets["unique_id"]
    for segment in ("InstantTransactinos", "InstantTransactions"):
        got = requests.get(f"{base}/{segment}/companycode/{COMPANY_B}/{unique}", headers=auth,
                           timeout=30)
        assert got.status_code == 404
    assert _snapshot(sb, targets) == before
    assert Decimal(str(targets["ach"]["amount"])) == Decimal("12.5")
