"""Token endpoint, bearer auth, expiry and company isolation."""

from __future__ import annotations

import pytest
import requests
from sandbox_helpers import ACH, Api, ach_item, problem

from paynb.sandbox import serve


def _token(sb, **form):
    return requests.post(sb.auth_url + "/connect/token", data=form, timeout=30)


def test_token_success_shape(sandbox):
    answer = _token(sandbox, grant_type="password", **sandbox.credentials.as_dict())
    assert answer.status_code == 200
    body = answer.json()
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 3600
    assert body["scope"] == "paynb.api"
    assert len(body["access_token"]) >= 32
    assert answer.headers["cache-control"] == "no-store"


@pytest.mark.parametrize(("change", "error"), [
    ({"grant_type": None}, "invalid_request"),
    ({"grant_type": "client_credentials"}, "unsupported_grant_type"),
    ({"password": None}, "invalid_request"),
    ({"client_secret": "Xq-not-it"}, "invalid_client"),
    ({"client_id": "someone"}, "invalid_client"),
    ({"password": "Xq-not-it"}, "invalid_grant"),
    ({"username": "nobody"}, "invalid_grant"),
])
def test_token_errors(sandbox, change, error):
    form = {"grant_type": "password", **sandbox.credentials.as_dict(), **change}
    answer = _token(sandbox, **{k: v for k, v in form.items() if v is not None})
    assert answer.status_code == 400
    body = answer.json()
    assert body["error"] == error
    assert "Xq-not-it" not in answer.text


def test_token_refuses_json_body(sandbox):
    answer = requests.post(sandbox.auth_url + "/connect/token", timeout=30,
                           json={"grant_type": "password", **sandbox.credentials.as_dict()})
    assert answer.status_code == 400
    assert answer.json()["error"] == "invalid_request"


def test_no_token_is_401(sandbox):
    answer = requests.get(sandbox.base_url + ACH.format(company="DEMO1"), timeout=30)
    problem(answer, 401)
    assert answer.headers["www-authenticate"].startswith("Bearer")


@pytest.mark.parametrize("header", ["Bearer nonsense", "Basic abc", "Bearer ", "nonsense"])
def test_bad_token_is_401(sandbox, header):
    answer = requests.get(sandbox.base_url + ACH.format(company="DEMO1"), timeout=30,
                          headers={"Authorization": header})
    problem(answer, 401)


def test_expired_token_is_401():
    with serve(port=0, seed_items=0, token_ttl=0) as sb:
        answer = _token(sb, grant_type="password", **sb.credentials.as_dict())
        assert answer.json()["expires_in"] == 0
        headers = {"Authorization": f"Bearer {answer.json()['access_token']}"}
        answer = requests.get(sb.base_url + ACH.format(company="DEMO1"), headers=headers,
                              timeout=30)
        body = problem(answer, 401)
        assert "expired" in body["detail"]
        assert 'error="invalid_token"' in answer.headers["www-authenticate"]


def test_route_inquiry_needs_a_token_too(sandbox):
    answer = requests.get(sandbox.base_url + "/api/v3/InstantRtpRoutes/021000021", timeout=30)
    problem(answer, 401)


def test_company_not_held_is_403(sandbox):
    other = Api(sandbox, "other", "other-password", company="DEMO2")
    assert other.get(ACH).status_code == 200
    body = problem(other.get(ACH, company="DEMO1"), 403)
    assert "DEMO1" in body["detail"]
    problem(other.post(ACH, ach_item(), company="DEMO1"), 403)
    problem(other.get(ACH, company="NOPE"), 403)


def test_companies_are_isolated(api):
    item = ach_item()
    stored = api.post(ACH, item, company="DEMO2").json()["transaction"]
    assert stored["companyCode"] == "DEMO2"
    problem(api.get(ACH + f"/{stored['achItemId']}", company="DEMO1"), 404)
    assert api.get(ACH + f"/{stored['achItemId']}", company="DEMO2").status_code == 200
    mine = api.get(ACH, params={"yourReferenceNumber": item["yourReferenceNumber"]}).json()
    assert mine["total"] == 0
    page = api.get(ACH, company="DEMO2", params={"pageSize": 1000}).json()
    assert {r["companyCode"] for r in page["transactions"]} == {"DEMO2"}


def test_token_works_for_every_held_company(api):
    for company in ("DEMO1", "DEMO2"):
        assert api.get(ACH, company=company, params={"pageSize": 1}).status_code == 200


def test_connect_signs_in_as_another_company_and_keeps_its_own_address(sandbox):
    from paynb.errors import PermissionDeniedError, ValidationError

    with sandbox.connect(company_code="DEMO2", journal=None) as other:
        assert other.company_code == "DEMO2"
        items = other.ach.list(progress=False)
        assert len(items) > 0 and set(items["companyCode"]) == {"DEMO2"}
    with sandbox.connect(company_code="NOPE", journal=None) as stranger, \
            pytest.raises(PermissionDeniedError, match="NOPE"):
        stranger.ach.list(max_items=1, progress=False)
    with pytest.raises(ValidationError, match="base_url is this sandbox's own"):
        sandbox.connect(base_url="http://127.0.0.1:9")


def _form(sb, username, password):
    return {**sb.credentials.as_dict(), "grant_type": "password", "username": username,
            "password": password}


def test_set_password_refuses_the_old_one_and_revokes_tokens():
    with serve(port=0, seed_items=5) as sb:
        old = Api(sb, "other", "other-password", company="DEMO2")
        assert old.get(ACH).status_code == 200
        assert sb.simulate.set_password("other", "new-other-password") == 1
        answer = _token(sb, **_form(sb, "other", "other-password"))
        assert (answer.status_code, answer.json()["error"]) == (400, "invalid_grant")
        assert problem(old.get(ACH), 401)["detail"] == "The access token is not valid."
        assert Api(sb, "other", "new-other-password", company="DEMO2").get(
            ACH).status_code == 200
        # Other users are untouched.
        assert Api(sb).get(ACH).status_code == 200
        assert sb.simulate.info()["tokenRequests"] == {"invalid_grant": 1, "issued": 3}


def test_set_password_can_keep_tokens_until_they_expire():
    with serve(port=0, seed_items=5) as sb:
        api = Api(sb)
        assert sb.simulate.set_password("analyst", "changed", revoke_tokens=False) == 0
        assert api.get(ACH).status_code == 200
        assert _token(sb, **_form(sb, "analyst", "analyst-password")).status_code == 400
        assert _token(sb, **_form(sb, "analyst", "changed")).status_code == 200


@pytest.mark.parametrize(("username", "body", "status", "errors"), [
    ("nobody", {"password": "x"}, 404, None),
    ("analyst", {}, 400, {"password": ["must be a non-empty text"]}),
    ("analyst", {"password": ""}, 400, {"password": ["must be a non-empty text"]}),
    ("analyst", {"password": 7}, 400, {"password": ["must be a non-empty text"]}),
    ("analyst", {"password": "x", "revokeTokens": "yes"}, 400,
     {"revokeTokens": ["must be true or false"]}),
    ("analyst", {"password": "x", "user": "other"}, 400,
     {"user": ["is not a field of this request"]}),
])
def test_set_password_bad_requests(sandbox, username, body, status, errors):
    answer = requests.post(f"{sandbox.base_url}/sandbox/users/{username}/password", json=body,
                           timeout=30)
    assert problem(answer, status).get("errors") == errors
    assert _token(sandbox, **_form(sandbox, "analyst", "analyst-password")).status_code == 200
