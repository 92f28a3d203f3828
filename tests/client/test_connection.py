"""Connection truth (issue 13.1, 13.4) and the keyword-only Client (issue 14.5).

Where settings come from and what paynb says when they are incomplete or
misspelt; where the calls go (``client.environment``); a user's own
``requests.Session``; and failures without an answer, which name the request
that failed and its host.
"""

from __future__ import annotations

import logging
import socket

import pytest
import requests
import responses

import paynb
from paynb import config
from paynb.errors import TransportError, ValidationError

pytestmark = pytest.mark.guards_unchecked

BASE = "https://svc.test"
AUTH = "https://auth.test"
ACH_PATH = "/api/v3/AchTransactions/companycode/DEMO1"

CREDS = paynb.Credentials(client_id="nb", client_secret="s3cret-value",
                          username="jane", password="pa55word-value")
SETTINGS = {"base_url": "https://svc.test", "auth_url": "https://auth.test",
            "company_code": "ACME1"}


def _no_secret(text: str) -> None:
    assert "s3cret-value" not in text and "pa55word-value" not in text


# ---------------------------------------------------------------- keyword-only Client


def test_an_old_positional_call_says_what_to_write_without_echoing_secrets():
    with pytest.raises(TypeError) as caught:
        paynb.Client("https://svc.test", "https://auth.test", "ACME1", "nb", "s3cret-value",
                     "jane", "pa55word-value")
    message = str(caught.value)
    assert "keyword arguments only (7 positional values given, not shown)" in message
    assert "credentials=paynb.Credentials(client_id=..., client_secret=..., username=..., " \
        "password=...)" in message
    _no_secret(message)


def test_loose_credential_keywords_say_to_use_one_credentials_object():
    with pytest.raises(TypeError, match="credentials as one object, not client_secret, "
                                        "password") as caught:
        paynb.Client(**SETTINGS, client_secret="s3cret-value", password="pa55word-value")
    _no_secret(str(caught.value))


def test_credentials_never_show_their_secrets():
    shown = repr(CREDS) + str(CREDS) + f"{CREDS}" + repr([CREDS])
    _no_secret(shown)
    assert shown.startswith("Credentials(client_id='nb', client_secret=<hidden>, "
                            "username='jane', password=<hidden>)")
    client = paynb.Client(**SETTINGS, credentials=CREDS, journal=None)
    _no_secret(repr(client) + client._repr_html_() + str(vars(client)))
    with pytest.raises(ValidationError, match="password"):
        paynb.Credentials("nb", "s", "jane", " ")


def test_credentials_from_env_keyring_and_profile(monkeypatch, tmp_path):
    for name, value in (("PAYNB_CLIENT_ID", "nb"), ("PAYNB_CLIENT_SECRET", "s3cret-value"),
                        ("PAYNB_USERNAME", "jane"), ("PAYNB_PASSWORD", "pa55word-value")):
        monkeypatch.setenv(name, value)
    assert paynb.Credentials.from_env() == CREDS
    monkeypatch.delenv("PAYNB_PASSWORD")
    with pytest.raises(ValidationError) as caught:
        paynb.Credentials.from_env()
    assert list(caught.value.errors) == ["PAYNB_PASSWORD"]

    import keyring

    store = {("paynb", "desk:client_secret"): "s3cret-value",
             ("paynb", "desk:password"): "pa55word-value"}
    monkeypatch.setattr(keyring, "get_password", lambda service, name: store.get((service, name)))
    assert paynb.Credentials.from_keyring("desk", client_id="nb", username="jane") == CREDS
    path = tmp_path / "config.toml"
    path.write_text('[desk]\nbase_url = "https://svc.test"\nauth_url = "https://auth.test"\n'
                    'company_code = "ACME1"\nclient_id = "nb"\nusername = "jane"\n')
    assert paynb.Credentials.from_profile("desk", path=path) == CREDS


class _OwnTlsAdapter(requests.adapters.HTTPAdapter):
    """What a bank's network setup might mount: an adapter with its own SSL context."""


def test_a_users_session_keeps_its_settings_and_gets_paynbs_pool():
    session = requests.Session()
    session.proxies = {"https": "http://proxy.bank.test:3128"}
    session.verify = "/etc/ssl/bank-ca.pem"
    session.cert = ("/etc/ssl/me.pem", "/etc/ssl/me.key")
    session.headers["X-Desk"] = "treasury"
    own = _OwnTlsAdapter()
    session.mount("https://", own)
    client = paynb.Client(**SETTINGS, credentials=CREDS, session=session, journal=None,
                          max_workers=5)
    assert client.transport.session is session
    assert session.proxies == {"https": "http://proxy.bank.test:3128"}
    assert session.verify == "/etc/ssl/bank-ca.pem"
    assert session.cert == ("/etc/ssl/me.pem", "/etc/ssl/me.key")
    assert session.headers["X-Desk"] == "treasury"
    assert session.headers["Accept"] == "application/json"
    assert session.adapters["https://"] is own  # the user's own class stays
    pooled = session.adapters["http://"]  # the plain default one gets paynb's pool
    assert type(pooled) is requests.adapters.HTTPAdapter and pooled._pool_maxsize == 7
    assert pooled.max_retries.total == 0
    client.close()
    assert session.adapters["https://"] is own  # closing the client leaves it to its owner


def test_a_users_session_is_used_for_every_call(stub):
    session = requests.Session()
    session.headers["X-Desk"] = "treasury"
    stub.get(f"{BASE}{ACH_PATH}/7", json={"achItemId": 7, "itemStatus": "W"})
    client = paynb.Client(base_url=BASE, auth_url=AUTH, company_code="DEMO1",
                          credentials=CREDS, session=session, journal=None)
    assert client.ach.get(7)["achItemId"] == 7
    assert [call.request.headers.get("X-Desk") for call in stub.calls] == ["treasury"] * 2


@pytest.mark.parametrize("where", ["netrc", "session auth"])
def test_a_netrc_entry_or_a_sessions_own_auth_does_not_replace_the_bearer_token(
        sandbox, tmp_path, monkeypatch, where):
    # requests puts a ~/.netrc entry for the host, or a session's auth, in place of an
    # Authorization header given in headers=: the service would get Basic credentials.
    session = requests.Session()
    if where == "netrc":
        netrc = tmp_path / "netrc"
        netrc.write_text("machine 127.0.0.1 login desk password netrc-secret\n")
        netrc.chmod(0o600)
        monkeypatch.setenv("NETRC", str(netrc))
    else:
        session.auth = ("desk", "session-secret")
    sent = []
    session.hooks["response"].append(
        lambda response, **_: sent.append(response.request.headers.get("Authorization")))
    with sandbox.connect(journal=None, session=session) as client:
        assert len(client.ach.list(max_items=5, progress=False)) == 5
    # The first answer is the token request's; every call after it carries the bearer token.
    assert len(sent) >= 2 and all(h.startswith("Bearer ") for h in sent[1:]), sent


# ---------------------------------------------------------------- connection truth


@pytest.fixture
def no_sandbox(monkeypatch):
    """Fail the test if paynb.connect() falls back to the sandbox."""

    def refuse() -> None:
        raise AssertionError("connect() fell back to the sandbox")

    monkeypatch.setattr(paynb.sandbox, "ensure_running", refuse)


def test_a_half_set_environment_is_one_error_not_the_sandbox(monkeypatch, no_sandbox):
    monkeypatch.setenv("PAYNB_COMPANY_CODE", "ACME1")
    monkeypatch.setenv("PAYNB_USERNAME", "jane")
    monkeypatch.setenv("PAYNB_PASSWORD", "pa55word-value")
    with pytest.raises(ValidationError) as caught:
        paynb.connect(journal=None)
    error = caught.value
    assert list(error.errors) == ["PAYNB_BASE_URL", "PAYNB_AUTH_URL", "PAYNB_CLIENT_ID",
                                  "PAYNB_CLIENT_SECRET"]
    message = str(error)
    assert message.startswith("PAYNB_COMPANY_CODE, PAYNB_USERNAME, PAYNB_PASSWORD are set, "
                              "so paynb connects to the real service and will not fall back "
                              "to the sandbox")
    assert ("  - base_url: the environment variable PAYNB_BASE_URL, or the key 'base_url' "
            "of profile '<name>' in ") in message
    assert ("  - client_secret: the environment variable PAYNB_CLIENT_SECRET, or the key "
            "'client_secret' of profile '<name>' in ") in message
    assert "store it with paynb.config.store_secrets('<profile>', " \
        "client_secret=getpass.getpass())" in message
    _no_secret(message)
    with pytest.raises(ValidationError):
        paynb.Client.from_env()


def test_one_connection_variable_alone_is_not_the_sandbox(monkeypatch, no_sandbox):
    monkeypatch.setenv("PAYNB_AUTH_URL", "https://auth.test")
    with pytest.raises(ValidationError, match="PAYNB_AUTH_URL is set"):
        paynb.connect(journal=None)


def test_a_misspelt_variable_is_refused_with_did_you_mean(monkeypatch, no_sandbox):
    monkeypatch.setenv("PAYNB_BASEURL", "https://svc.test")
    monkeypatch.setenv("PAYNB_COMPANY_CODE", "ACME1")
    for start in (lambda: paynb.connect(journal=None),
                  lambda: paynb.Client.from_env(journal=None)):
        with pytest.raises(ValidationError, match=r"PAYNB_BASEURL is not a paynb variable "
                                                  r"\(did you mean PAYNB_BASE_URL\?\)"):
            start()


def test_a_misspelt_variable_alone_never_connects_to_the_sandbox(monkeypatch, no_sandbox):
    # Issue 32.5: only PAYNB_BASEURL set used to connect to the sandbox with a warning.
    monkeypatch.setenv("PAYNB_BASEURL", "https://svc.test")
    with pytest.raises(ValidationError) as caught:
        paynb.connect(journal=None)
    error = caught.value
    assert error.errors == {"PAYNB_BASEURL": ["is not a paynb variable (did you mean "
                                              "PAYNB_BASE_URL?)"]}
    assert str(error).startswith("PAYNB_BASEURL is not a paynb variable (did you mean "
                                 "PAYNB_BASE_URL?). paynb stops here rather than go on "
                                 "without it. Correct or unset it; the PAYNB_* variables "
                                 "paynb reads are PAYNB_BASE_URL, ")


def test_a_misspelt_journal_variable_is_refused_by_a_client_given_its_settings(monkeypatch):
    monkeypatch.setenv("PAYNB_JOURNL", "/tmp/elsewhere.sqlite3")
    with pytest.raises(ValidationError, match="did you mean PAYNB_JOURNAL"):
        paynb.Client(**SETTINGS, credentials=CREDS)


def test_paynbs_other_variables_are_known(monkeypatch):
    # conftest sets PAYNB_JOURNAL, PAYNB_CONFIG, PAYNB_SANDBOX_FILE and PAYNB_SANDBOX_DB.
    monkeypatch.setenv("PAYNB_CHROMIUM", "/usr/bin/chromium")
    config.check_names()


def test_unknown_names_are_each_named_with_the_closest_known_one():
    with pytest.raises(ValidationError) as caught:
        config.check_names({"PAYNB_PASSWROD": "x", "PAYNB_JOURNAL": "off", "PAYNB_ZZZ": "1"})
    assert caught.value.errors == {
        "PAYNB_PASSWROD": ["is not a paynb variable (did you mean PAYNB_PASSWORD?)"],
        "PAYNB_ZZZ": ["is not a paynb variable"]}
    assert str(caught.value).startswith(
        "PAYNB_PASSWROD is not a paynb variable (did you mean PAYNB_PASSWORD?); PAYNB_ZZZ is "
        "not a paynb variable. paynb stops here rather than go on without it. Correct or "
        "unset them;")


def test_credentials_in_base_url_never_show_in_the_clients_repr():
    client = paynb.Client(base_url="https://jane:pa55word-value@svc.test/api",
                          auth_url=AUTH, company_code="ACME1", credentials=CREDS, journal=None)
    shown = repr(client) + client._repr_html_() + client.environment.label
    _no_secret(shown)
    assert "jane" not in shown and "https://<hidden>@svc.test/api" in shown


def test_a_profile_without_secrets_says_the_keyring_has_none_and_how_to_store(
        tmp_path, monkeypatch, no_sandbox):
    import keyring

    monkeypatch.setattr(keyring, "get_password", lambda service, name: None)
    path = tmp_path / "config.toml"
    path.write_text('[default]\nbase_url = "https://svc.test"\nauth_url = "https://auth.test"\n'
                    'company_code = "ACME1"\nclient_id = "nb"\nusername = "jane"\n')
    monkeypatch.setenv("PAYNB_CONFIG", str(path))
    with pytest.raises(ValidationError) as caught:
        paynb.connect(journal=None)
    message = str(caught.value)
    assert list(caught.value.errors) == ["client_secret", "password"]
    assert f"profile 'default' of {path} lacks client_secret, password." in message
    assert ("the OS keyring (the keyring holds none for profile 'default'; store it with "
            "paynb.config.store_secrets('default', password=getpass.getpass()))") in message


# ---------------------------------------------------------------- where the calls go


def test_the_environment_is_in_the_repr_and_the_html(sandbox):
    with sandbox.connect(journal=None) as client:
        assert client.environment.is_sandbox and client.environment == "sandbox"
        assert repr(client) == (f"<paynb.Client sandbox (simulated, nothing is paid): "
                                f"{sandbox.base_url}, company DEMO1>")
        assert "paynb-env-sandbox" in client._repr_html_()
    real = paynb.Client(**SETTINGS, credentials=CREDS, journal=None, environment="uat")
    assert not real.environment.is_sandbox and real.environment == "uat"
    assert real.environment.label == "REAL SERVICE svc.test (profile uat)"
    assert repr(real) == ("<paynb.Client REAL SERVICE svc.test (profile uat): "
                          "https://svc.test, company ACME1>")
    shown = real._repr_html_()
    assert "paynb-env-real" in shown and "background:#fde8e8" in shown
    assert "submissions move real money" in shown and "ACME1" in shown
    custom = paynb.Client(**SETTINGS, credentials=CREDS, journal=None)
    assert custom.environment.label == "REAL SERVICE svc.test (settings given in code)"


# ---------------------------------------------------------------- failures without an answer


def _unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_network_down_names_the_token_request_and_its_host_once(caplog):
    address = f"http://127.0.0.1:{_unused_port()}"
    client = paynb.Client(base_url=address, auth_url=address, company_code="DEMO1",
                          credentials=CREDS, journal=None, max_retries=2, timeout=2)
    client.transport.sleep = lambda seconds: None
    with caplog.at_level(logging.WARNING, logger="paynb"), \
            pytest.raises(TransportError) as caught:
        client.ach.list(progress=False)
    retries = [r.getMessage() for r in caplog.records]
    host = address.removeprefix("http://")
    assert len(retries) == 2
    for number, line in enumerate(retries, start=1):
        assert line.startswith(f"token request to {host}: no answer (connection refused "
                               f"(ConnectionError)); retry {number} of 2 in ")
        assert "AchTransactions" not in line
    error = caught.value
    assert (error.host, error.request, error.method, error.path, error.attempts) == (
        host, "token request", "POST", "/connect/token", 3)
    message = str(error)
    assert message.startswith(f"no answer from {host} to the token request (POST "
                              "/connect/token): connection refused (ConnectionError); "
                              "3 attempts over ")
    assert message.count(host) == 2  # where it failed, and the address to check
    assert ("Check that the VPN or network connection is up, that the proxy (HTTPS_PROXY, or "
            "proxies= of the session you passed) lets the call through, and that auth_url "
            + address + " is the right address.") in message
    _no_secret(message + caplog.text)


def test_network_down_names_the_auth_url_as_configured_with_its_path():
    # An identity server usually lives under a path; the advice named only the scheme and
    # host ("auth_url http://127.0.0.1:port"), not the address the analyst set.
    address = f"http://127.0.0.1:{_unused_port()}"
    client = paynb.Client(base_url=address, auth_url=address + "/identity/", company_code="DEMO1",
                          credentials=CREDS, journal=None, max_retries=0, timeout=2)
    with pytest.raises(TransportError) as caught:
        client.ach.list(progress=False)
    assert "(POST /identity/connect/token)" in str(caught.value)
    assert f"auth_url {address}/identity is the right address." in str(caught.value)


def test_no_answer_to_a_list_page_names_the_page_and_the_host(stub, caplog):
    stub.get(f"{BASE}{ACH_PATH}", body=requests.ConnectionError(
        "HTTPSConnectionPool(host='svc.test', port=443): Max retries exceeded (Caused by "
        "NewConnectionError('Failed to establish a new connection: [Errno 111] Connection "
        "refused'))"))
    client = paynb.Client(base_url=BASE, auth_url=AUTH, company_code="DEMO1",
                          credentials=CREDS, journal=None, max_retries=1)
    client.transport.sleep = lambda seconds: None
    with caplog.at_level(logging.WARNING, logger="paynb"), \
            pytest.raises(TransportError) as caught:
        client.ach.list(page=3, progress=False)
    assert [r.getMessage().split(" in ")[0] for r in caplog.records] == [
        f"list page 3 (GET {ACH_PATH}) to svc.test: no answer (connection refused "
        "(ConnectionError)); retry 1 of 1"]
    assert str(caught.value).startswith(
        f"no answer from svc.test to the list page 3 (GET {ACH_PATH}): connection refused "
        "(ConnectionError); 2 attempts over ")
    assert "base_url https://svc.test is the right address" in str(caught.value)


def test_no_answer_to_a_submission_is_said_once_and_not_resent(stub_client, stub):
    item = {"firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
            "zip": "10001", "yourReferenceNumber": "NET-1", "bankRoutingNumber": "021000021",
            "bankAccountNumber": "000123456789", "achTransactionType": "Debit",
            "amount": "125.10"}
    stub.post(f"{BASE}{ACH_PATH}", body=requests.Timeout("read timed out"))
    with pytest.raises(TransportError) as caught:
        stub_client.ach.submit(item)
    message = str(caught.value)
    assert message.startswith(f"no answer from svc.test to the submission (POST {ACH_PATH}): "
                              "timed out (Timeout); 1 attempt over ")
    assert "may or may not have processed it, and paynb does not send it again" in message
    assert len([c for c in stub.calls if c.request.method == "POST"
                and "connect" not in c.request.url]) == 1


def test_a_tls_failure_points_at_the_ca_bundle(stub):
    stub.replace(responses.POST, f"{AUTH}/connect/token",
                 body=requests.exceptions.SSLError("certificate verify failed"))
    client = paynb.Client(base_url=BASE, auth_url=AUTH, company_code="DEMO1",
                          credentials=CREDS, journal=None, max_retries=0)
    with pytest.raises(TransportError) as caught:
        client.ach.get(1)
    assert "the TLS handshake failed (SSLError); 1 attempt over " in str(caught.value)
    assert "Check the CA bundle (REQUESTS_CA_BUNDLE, or verify= of the session you passed)" \
        in str(caught.value)


def test_a_token_endpoint_503_is_retried_as_the_token_request(stub, caplog):
    stub.replace(responses.POST, f"{AUTH}/connect/token", status=503)
    client = paynb.Client(base_url=BASE, auth_url=AUTH, company_code="DEMO1",
                          credentials=CREDS, journal=None, max_retries=2)
    client.transport.sleep = lambda seconds: None
    with caplog.at_level(logging.WARNING, logger="paynb"), \
            pytest.raises(paynb.errors.AuthenticationError, match="HTTP 503"):
        client.ach.get(1)
    assert [r.getMessage().split(" in ")[0] for r in caplog.records] == [
        "token request to auth.test: HTTP 503; retry 1 of 2",
        "token request to auth.test: HTTP 503; retry 2 of 2"]


def test_only_a_connection_never_made_counts_as_never_sent():
    from urllib3.exceptions import MaxRetryError, NewConnectionError, ProtocolError

    from paynb.auth import never_connected

    refused = requests.ConnectionError(MaxRetryError(
        None, "/x", reason=NewConnectionError(None, "[Errno 111] Connection refused")))
    assert never_connected(refused)
    assert never_connected(requests.exceptions.ConnectTimeout("connect timed out"))
    dropped = requests.ConnectionError(ProtocolError("Connection aborted.",
                                                     ConnectionResetError(104, "reset")))
    assert not never_connected(dropped)
    assert not never_connected(requests.exceptions.ReadTimeout("read timed out"))
    assert not never_connected(requests.exceptions.SSLError("certificate verify failed"))


# ---------------------------------------------------------------- a wrong address (issue 32.4)

def _sandbox_client(sandbox, **addresses):
    settings = {"base_url": sandbox.base_url, "auth_url": sandbox.auth_url, **addresses}
    return paynb.Client(**settings, company_code="DEMO1", journal=None,
                        credentials=paynb.Credentials(**sandbox.credentials.as_dict()))


def test_a_wrong_base_url_names_the_whole_url_asked_and_says_base_url_is_wrong(sandbox):
    wrong = sandbox.base_url + "/api"
    with _sandbox_client(sandbox, base_url=wrong) as client, \
            pytest.raises(paynb.errors.NotFoundError) as caught:
        client.ach.list(progress=False)
    error = caught.value
    assert error.url == f"{sandbox.base_url}/api/api/v3/AchTransactions/companycode/DEMO1"
    assert error.path == "/api/v3/AchTransactions/companycode/DEMO1"  # after base_url
    message = str(error)
    assert message.startswith(f"404 GET {sandbox.base_url}/api/api/v3/AchTransactions/")
    assert (f"The service has no such path: base_url {wrong} is likely wrong (paynb puts "
            f"/api/v3/... after it); try {sandbox.base_url}.") in message


def test_a_missing_item_names_its_url_and_blames_no_setting(client):
    with pytest.raises(paynb.errors.NotFoundError) as caught:
        client.ach.get(99999999)
    message = str(caught.value)
    assert message.startswith(
        f"404 GET {client.base_url}/api/v3/AchTransactions/companycode/DEMO1/99999999: ")
    assert "base_url" not in message


def test_a_wrong_auth_url_says_auth_url_is_wrong_not_the_credentials(sandbox):
    wrong = sandbox.auth_url + "/identity"
    with _sandbox_client(sandbox, auth_url=wrong) as client, \
            pytest.raises(paynb.errors.AuthenticationError) as caught:
        client.ach.list(progress=False)
    error = caught.value
    assert (error.status, error.url) == (404, f"{wrong}/connect/token")
    assert str(error) == (
        f"token request to {wrong}/connect/token refused: HTTP 404 without an OAuth error "
        f"code; no token endpoint there, so auth_url {wrong} is likely wrong (paynb posts "
        f"to auth_url + /connect/token), not the credentials")


def test_wrong_credentials_still_blame_the_credentials(sandbox):
    with paynb.Client(base_url=sandbox.base_url, auth_url=sandbox.auth_url, journal=None,
                      company_code="DEMO1", credentials=CREDS) as client, \
            pytest.raises(paynb.errors.AuthenticationError) as caught:
        client.ach.list(progress=False)
    assert "auth_url" not in str(caught.value) and caught.value.error


def test_credentials_in_an_address_never_show(sandbox):
    host = sandbox.base_url.removeprefix("http://")
    secret_base = f"http://jane:pa55word-value@{host}/api?key=s3cret-value"
    with _sandbox_client(sandbox, base_url=secret_base) as client, \
            pytest.raises(paynb.errors.NotFoundError) as caught:
        client.ach.list(progress=False)
    shown = str(caught.value) + repr(caught.value.url)
    _no_secret(shown)
    assert "jane" not in shown and f"http://<hidden>@{host}/api" in shown
    auth = f"http://jane:pa55word-value@{host}/nothing"
    with _sandbox_client(sandbox, auth_url=auth) as client, \
            pytest.raises(paynb.errors.AuthenticationError) as refused:
        client.ach.list(progress=False)
    _no_secret(str(refused.value) + repr(client.transport.auth))
    assert f"auth_url http://<hidden>@{host}/nothing is likely wrong" in str(refused.value)


# ---------------------------------------------------------------- the transport, a public seam

class _Recorder(requests.adapters.HTTPAdapter):
    """A recording of the wire, as a user mounts one on the client's session."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []

    def send(self, request, **kwargs):
        self.sent.append(f"{request.method} {request.path_url}")
        return super().send(request, **kwargs)


def test_the_transport_is_the_public_seam_for_recording_retrying_and_raw_calls(sandbox):
    path = "/api/v3/AchTransactions/companycode/DEMO1"
    with _sandbox_client(sandbox) as client:
        transport = client.transport
        assert isinstance(transport, paynb.Transport)
        assert transport.base_url == sandbox.base_url and transport.max_retries == 5
        with pytest.raises(AttributeError):
            client.transport = transport  # a client keeps its transport
        recorder = _Recorder()
        transport.session.mount(sandbox.base_url, recorder)
        listed = client.ach.list(progress=False, page_size=500)
        one = int(listed["achItemId"].iloc[0])
        raw = transport.json("GET", f"{path}/{one}")
        # The waits between retries are the transport's own to replace.
        waits: list[float] = []
        transport.sleep, transport.max_retries = waits.append, 2
        transport.base_url = f"http://127.0.0.1:{_unused_port()}"
        with pytest.raises(TransportError):
            transport.json("GET", path)
    assert raw["transaction"]["achItemId"] == one  # the answer as the service sends it
    assert f"GET {path}/{one}" in recorder.sent
    assert any(sent.startswith(f"GET {path}?") for sent in recorder.sent)
    assert len(waits) == 2


# ---------------------------------------------------------------- what the guards would say


def test_the_guards_verdicts_and_clock_are_the_clients_own(sandbox):
    """``client.check_entries()`` and ``client.service_now()``: compliance's functions of the
    same names give the same answers through them, reaching into nothing of the client."""
    from paynb import compliance

    body = {"firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
            "zip": "10001", "yourReferenceNumber": "CONN-GUARDS-1",
            "bankRoutingNumber": "021000021", "bankAccountNumber": "000123456789",
            "achTransactionType": "Debit", "amount": "40.00",
            "achCompanyEntryDescription": float("nan")}  # an empty cell: left out
    with sandbox.connect(journal=None) as client:
        found = client.check_entries([body], as_of="2026-01-10")
        assert list(found.columns) == ["row", "yourReferenceNumber", "verdict", "allowed",
                                       "rules", "reasons", "warnings", "overridden",
                                       "changes", "notes", "checked"]
        assert found.loc[0, "yourReferenceNumber"] == "CONN-GUARDS-1"
        assert bool(found.loc[0, "allowed"]) and found.loc[0, "rules"] == []
        assert found.equals(compliance.check_entries(client, [body], as_of="2026-01-10"))
        now = client.service_now()
        assert abs((now - sandbox.simulate.now()).total_seconds()) < 5
        assert abs((compliance.service_now(client) - now).total_seconds()) < 5
