"""Secrets: a full run of every flow with DEBUG logging, then a scan of everything the
run left behind. The password, client secret, access tokens, one-time passwords and full
card numbers appear in no log line, exception text, repr, ``_repr_html_``, frame, journal
row (the SQLite file read raw) or export document.

Credentials can come from the environment or from the OS keyring (a profile without its
secrets; an in-memory keyring backend stands in for the OS one), so a notebook holds none.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import keyring
import keyring.backend
import pytest
import requests

import paynb
from paynb import config, models, sandbox
from paynb.client import Client
from paynb.errors import PaynbError, PaynbWarning, TransportError

from .conftest import make_client
from .faultrun import ach_item

pytestmark = pytest.mark.guards_unchecked

CREDS = sandbox.DEMO_CREDENTIALS
CARDS = ["4111111111111111", "5555555555554444", "6011111111111117", "4012888888881881"]
TOT_PASSWORDS = ["7319264058", "8642097531"]
WRONG_PASSWORD = "wrong-password-4417"  # also a secret: it must not leak either


class MemoryKeyring(keyring.backend.KeyringBackend):
    """A keyring in a dict: what the OS keyring would hold, for the length of a test."""

    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.entries: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.entries.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.entries[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self.entries.pop((service, username), None)


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


class Evidence:
    """Everything a run produced that a person or a file could see."""

    def __init__(self) -> None:
        self.texts: list[tuple[str, str]] = []
        self.errors: list[BaseException] = []

    def add(self, where: str, value: Any) -> None:
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        self.texts.append((where, value if isinstance(value, str) else repr(value)))

    def shown(self, where: str, obj: Any) -> None:
        """What a notebook shows of ``obj``: repr, str and HTML (frames in full)."""
        if hasattr(obj, "to_string"):
            self.add(f"{where} to_string", obj.to_string())
            self.add(f"{where} to_csv", obj.to_csv())
        self.add(f"{where} repr", repr(obj))
        self.add(f"{where} str", str(obj))
        if hasattr(obj, "_repr_html_"):
            self.add(f"{where} html", obj._repr_html_() or "")

    def expect_error(self, where: str, call: Callable[[], Any],
                     kind: type[BaseException] = PaynbError) -> BaseException:
        try:
            call()
        except kind as exc:
            self.errors.append(exc)
            self.add(f"{where} exception", "".join(traceback.format_exception(exc)))
            self.add(f"{where} exception repr", repr(exc))
            self.add(f"{where} exception attributes", repr(vars(exc)))
            return exc
        raise AssertionError(f"{where}: expected {kind.__name__}")

    def leaks(self, secrets: list[str]) -> list[str]:
        return [f"{secret!r} in {where}" for where, text in self.texts for secret in secrets
                if secret in text]


def _instant(card: str, tot: str, reference: str, amount: int = 1000) -> dict[str, Any]:
    return {"nameOnCard": "JANE DOE", "cardNumber": card, "cardExpiration": "12/2035",
            "totPassword": tot, "amount": amount, "yourReferenceNumber": reference}


def _token_catcher(client: Client, tokens: list[str]) -> None:
    """Remember every access token the client receives (to look for it afterwards)."""
    session = client.transport.session
    original = session.send

    def send(request: Any, **kwargs: Any) -> Any:
        response = original(request, **kwargs)
        if request.url.endswith("/connect/token") and response.ok:
            tokens.append(response.json()["access_token"])
        return response

    session.send = send


def _every_flow(sb: Any, client: Client, seen: Evidence) -> None:
    """Every call of the public API, with its results and errors put in evidence.

    Half-way, the token runs out, so that two tokens pass through the run.
    """
    seen.shown("client", client)
    for name in ("ach", "rcc", "instant", "rtp", "nocs"):
        seen.shown(f"client.{name}", getattr(client, name))
    # ACH and RCC
    stored = client.ach.submit(ach_item("SEC-ACH-1", 1))
    seen.shown("ach.submit", stored)
    bulk = client.ach.submit_many([ach_item("SEC-ACH-2", 2), ach_item("SEC-ACH-3", 3),
                                   dict(ach_item("SEC-ACH-4", 4), bankAccountNumber="12'34")])
    seen.shown("ach.submit_many", bulk)
    seen.shown("ach.get", client.ach.get(int(stored["achItemId"])))
    seen.shown("ach.void", client.ach.void(int(stored["achItemId"])))
    seen.shown("ach.void_many", client.ach.void_many([int(bulk["achItemId"].iloc[0])]))
    seen.shown("ach.void_references", client.ach.void_references(["SEC-ACH-3"]))
    seen.shown("ach.list", client.ach.list(progress=False))
    seen.shown("ach.changes", client.ach.changes())
    seen.shown("rcc.submit", client.rcc.submit({
        "firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "address1": "1 Main St",
        "city": "Springfield", "state": "IL", "zip": "62701", "yourReferenceNumber": "SEC-RCC",
        "bankRoutingNumber": "011000015", "bankAccountNumber": "12345678", "amount": "19.99"}))
    seen.shown("rcc.list", client.rcc.list(progress=False))
    client.transport.auth._renew_at = 0.0  # the token has run out: the next call renews it
    # Instant card: by card number and by token, with one-time passwords.
    for n, card in enumerate(CARDS[:3]):
        check = client.instant.check_route(card)
        seen.shown(f"instant.check_route {n}", check)
        seen.add(f"instant.check_route {n} raw", check.raw)
        seen.shown(f"instant.send {n}", client.instant.send(
            _instant(card, TOT_PASSWORDS[n % 2], f"SEC-IC-{n}")))
    seen.shown("instant.check_route token",
               client.instant.check_route(token_id="tok_visa_1", sub_client_id="sub-1"))
    sent = client.instant.send({"tokenId": "tok_visa_1", "yourSubClientId": "sub-1",
                                "totPassword": TOT_PASSWORDS[1], "amount": 2500,
                                "yourReferenceNumber": "SEC-IC-TOKEN"})
    seen.shown("instant.send token", sent)
    seen.shown("instant.get", client.instant.get(sent["uniqueId"]))
    seen.shown("instant.list", client.instant.list(progress=False))
    # An instant payment whose answer is lost, settled by reconcile().
    client.instant.check_route(CARDS[3])
    sb.simulate.script_fault("drop_after_commit", on="writes")
    seen.expect_error("instant.send lost answer", lambda: client.instant.send(
        _instant(CARDS[3], TOT_PASSWORDS[0], "SEC-IC-LOST")), TransportError)
    seen.shown("reconcile", client.reconcile())
    # RTP
    seen.shown("rtp.check_route", client.rtp.check_route("021000021"))
    rtp = client.rtp.send({"firstName": "Jane", "lastName": "Doe",
                           "routingNumber": "021000021", "accountNumber": "12345678",
                           "amount": 1000, "yourReferenceNumber": "SEC-RTP"})
    seen.shown("rtp.send", rtp)
    seen.shown("rtp.get", client.rtp.get(rtp["uniqueId"]))
    seen.shown("rtp.list", client.rtp.list(progress=False))
    seen.shown("nocs.list", client.nocs.list(progress=False))
    # Exports, as frames and as the service's raw documents.
    for name in ("ach", "rcc", "instant", "rtp", "nocs"):
        for filetype in ("csv", "json", "xlsx"):
            seen.shown(f"{name}.export {filetype}", getattr(client, name).export(filetype))
    seen.shown("journal", client.journal())
    # Errors, each with a secret close by.
    seen.expect_error("bad card", lambda: client.instant.send(
        _instant(CARDS[0][:-1] + "2", TOT_PASSWORDS[0], "SEC-ERR-1")))
    seen.expect_error("bad one-time password", lambda: client.instant.send(
        _instant(CARDS[0], TOT_PASSWORDS[0] + "x", "SEC-ERR-2")))
    seen.expect_error("route not checked", lambda: client.instant.send(
        _instant("4000056655665556", TOT_PASSWORDS[0], "SEC-ERR-3")))
    seen.expect_error("above the limit", lambda: client.instant.send(
        _instant(CARDS[0], TOT_PASSWORDS[0], "SEC-ERR-4", amount=10**9)))
    seen.expect_error("duplicate", lambda: client.instant.send(
        _instant(CARDS[0], TOT_PASSWORDS[1], "SEC-IC-0")))
    seen.expect_error("service refuses", lambda: client.instant.send(
        _instant(CARDS[1][:-1] + "0", TOT_PASSWORDS[1], "SEC-ERR-5"), validate=False))
    seen.expect_error("bad route check", lambda: client.instant.check_route(
        CARDS[2][:-1] + "0"))
    seen.expect_error("not found", lambda: client.instant.get("no-such-id"))
    seen.shown("model", models.InstantCardTransaction.model_validate(
        _instant(CARDS[0], TOT_PASSWORDS[0], "SEC-MODEL")))


def _sqlite_bytes(path: Path) -> bytes:
    """An SQLite database and its side files (WAL, shared memory), raw."""
    return b"".join(p.read_bytes() for p in sorted(path.parent.glob(path.name + "*")))


def test_no_secret_anywhere_after_every_flow(tmp_path: Path, caplog: pytest.LogCaptureFixture
                                             ) -> None:
    caplog.set_level(logging.DEBUG)
    seen = Evidence()
    tokens: list[str] = []
    journal = tmp_path / "journal.sqlite3"
    service_db = tmp_path / "sandbox.sqlite3"
    with sandbox.serve(port=0, db=service_db, seed_items=200, seed=41) as sb:
        client = make_client(sb, journal=journal)
        _token_catcher(client, tokens)
        seen.shown("credentials", sb.credentials)
        seen.shown("sandbox", sb)
        seen.shown("auth", client.transport.auth)
        try:
            _every_flow(sb, client, seen)
            wrong = make_client(sb, journal=journal, credentials={"password": WRONG_PASSWORD})
            seen.expect_error("wrong password", lambda: wrong.ach.list(progress=False))
            wrong.close()
        finally:
            client.close()
        # The service's own export documents, as a user could download them.
        token = tokens[-1] if tokens else ""
        for segment in ("AchTransactions", "InstantTransactions", "InstantRtpTransactions"):
            for filetype in ("csv", "json", "xlsx"):
                answer = requests.get(f"{sb.base_url}/api/v3/{segment}/companycode/DEMO1/"
                                      f"export/filetype/{filetype}",
                                      headers={"Authorization": f"Bearer {token}"}, timeout=30)
                assert answer.ok
                seen.add(f"export document {segment} {filetype}", answer.content)
    seen.add("log", caplog.text)
    for record in caplog.records:
        seen.add(f"log record {record.name}", f"{record.getMessage()} {record.exc_text or ''}")
    seen.add("journal file", _sqlite_bytes(journal))
    # The sandbox keeps no more than a real service may show: no card number, no secret.
    seen.add("sandbox database", _sqlite_bytes(service_db))
    assert len(tokens) >= 2, "the token was renewed half-way"
    assert len(caplog.records) > 50 and len(seen.errors) >= 9
    secrets = [CREDS.password, CREDS.client_secret, WRONG_PASSWORD, *tokens, *TOT_PASSWORDS,
               *CARDS]
    leaks = seen.leaks(secrets)
    assert not leaks, "secrets shown:\n" + "\n".join(leaks[:30])
    # The evidence holds what it should: last four digits, masked accounts, the journal.
    everything = "\n".join(text for _, text in seen.texts)
    assert "1111" in everything and "SEC-IC-LOST" in everything
    assert "****5678" in everything


def test_credentials_from_the_environment(sb_small: Any, monkeypatch: pytest.MonkeyPatch,
                                          caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    values = {"PAYNB_BASE_URL": sb_small.base_url, "PAYNB_AUTH_URL": sb_small.auth_url,
              "PAYNB_COMPANY_CODE": "DEMO1", "PAYNB_CLIENT_ID": CREDS.client_id,
              "PAYNB_CLIENT_SECRET": CREDS.client_secret, "PAYNB_USERNAME": CREDS.username,
              "PAYNB_PASSWORD": CREDS.password, "PAYNB_JOURNAL": "off"}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    for client in (Client.from_env(), paynb.connect()):
        with client:
            assert len(client.ach.list(max_items=5, progress=False)) == 5
            shown = repr(client) + client._repr_html_() + str(vars(client))
            assert CREDS.password not in shown and CREDS.client_secret not in shown
            assert client.environment == "env"
    settings = config.from_env()
    assert settings is not None
    assert CREDS.password not in repr(settings) and CREDS.client_secret not in repr(settings)
    assert CREDS.password not in caplog.text and CREDS.client_secret not in caplog.text


def test_credentials_from_the_keyring(sb_small: Any, tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch,
                                      memory_keyring: MemoryKeyring,
                                      caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    profile = tmp_path / "config.toml"
    # The profile names everything but the secrets: those live in the keyring.
    profile.write_text(f'[sbx]\nbase_url = "{sb_small.base_url}"\n'
                       f'auth_url = "{sb_small.auth_url}"\ncompany_code = "DEMO1"\n'
                       f'client_id = "{CREDS.client_id}"\nusername = "{CREDS.username}"\n')
    monkeypatch.setenv("PAYNB_CONFIG", str(profile))
    config.store_secrets("sbx", client_secret=CREDS.client_secret, password=CREDS.password)
    assert memory_keyring.entries == {("paynb", "sbx:client_secret"): CREDS.client_secret,
                                      ("paynb", "sbx:password"): CREDS.password}
    with paynb.connect("sbx", journal=None) as client:
        assert len(client.ach.list(max_items=5, progress=False)) == 5
        shown = repr(client) + client._repr_html_()
    text = profile.read_text()
    for secret in (CREDS.password, CREDS.client_secret):
        assert secret not in text and secret not in shown and secret not in caplog.text
    # Without the keyring entry the profile is incomplete: a clear error, naming the field.
    memory_keyring.delete_password("paynb", "sbx:password")
    with pytest.raises(paynb.errors.ValidationError) as caught:
        paynb.connect("sbx", journal=None)
    assert "password" in str(caught.value)


@pytest.fixture(scope="module")
def sb_small() -> Iterator[Any]:
    with sandbox.serve(port=0, seed_items=50, seed=43) as running:
        yield running


def test_notification_urls_never_show(tmp_path: Path, caplog: pytest.LogCaptureFixture,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """paynb monitor's notification URLs hold secrets (an SMTP password, a webhook token):
    a run with one channel down and one that takes the message, at DEBUG logging, shows
    none of their parts in its logs (apprise's own included), its report (object, HTML
    and workbook), its message, its deliveries or the journal."""
    import socket

    from paynb import monitor

    caplog.set_level(logging.DEBUG)
    with socket.socket() as probe:  # a port nobody listens on: the SMTP server is down
        probe.bind(("127.0.0.1", 0))
        closed = probe.getsockname()[1]
    smtp = (f"mailtos://ops-mailer:SMTP-Pa55-7731@127.0.0.1:{closed}"
            "?from=paynb@example.com&to=payments-ops@example.com")
    hook = "json://127.0.0.1:9/hooks/T0KEN-SECRET-8812"  # port 9: nothing there either
    monkeypatch.setenv("PAYNB_NOTIFY", f"{smtp} {hook}")
    seen = Evidence()
    journal = tmp_path / "journal.sqlite3"
    with sandbox.serve(port=0, seed_items=300, seed=41) as sb, \
            make_client(sb, journal=journal, company_code="DEMO2") as client:
        # A new unauthorized return whatever the day: the seeded data alone may bring
        # nothing new on a given morning (a weekend after a holiday), and then nothing
        # is sent and no channel is tried.
        settled = client.ach.list(status="S", progress=False)
        sb.simulate.force_status(int(settled["achItemId"].iloc[0]), "R", code="R10",
                                 company_code="DEMO2")
        report = monitor.run(client, reports=tmp_path / "reports")
    assert report.status == monitor.EXIT_FAILED and len(report.deliveries) == 2
    assert not any(d.delivered for d in report.deliveries)
    seen.shown("report", report)
    seen.add("message", report.title + report.message)
    seen.add("deliveries", repr(report.deliveries) + "".join(map(str, report.deliveries)))
    seen.add("problems", "\n".join(report.problems))
    assert report.html is not None and report.workbook is not None
    seen.add("report page", report.html.read_text())
    seen.add("workbook", report.workbook.read_bytes())
    seen.add("log", caplog.text)
    for record in caplog.records:
        seen.add(f"log record {record.name}", f"{record.getMessage()} {record.exc_text or ''}")
    seen.add("journal file", _sqlite_bytes(journal))
    assert any(record.name == "apprise" for record in caplog.records)  # it did log
    secrets = ["SMTP-Pa55-7731", "ops-mailer", "T0KEN-SECRET-8812", "payments-ops", smtp,
               hook, CREDS.password, CREDS.client_secret]
    leaks = seen.leaks(secrets)
    assert not leaks, "secrets shown:\n" + "\n".join(leaks[:30])
    assert "notification 1 (mailtos)" in "\n".join(report.problems)


@pytest.mark.guards_unchecked
def test_a_team_journal_never_shows_its_password(sb_small: Any, postgres: Any,
                                                 monkeypatch: pytest.MonkeyPatch,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    """The password in a PostgreSQL journal's address (argument, profile or PAYNB_JOURNAL)
    shows nowhere: reprs, the client's HTML, errors, log lines, the settings."""
    import _postgres

    from paynb.errors import DuplicateSubmissionError, JournalError

    caplog.set_level(logging.DEBUG)
    seen = Evidence()
    address = postgres.fresh()
    client = make_client(sb_small, journal=address)
    try:
        seen.shown("client", client)
        seen.shown("journal object", client._journal)
        seen.add("journal vars", vars(client._journal))
        seen.add("context", repr(client.context))
        seen.shown("submit", client.ach.submit(ach_item("SEC-PG-1", 1)))
        seen.expect_error("duplicate", lambda: client.ach.submit(ach_item("SEC-PG-1", 1)),
                          DuplicateSubmissionError)
        seen.shown("journal", client.journal())
    finally:
        client.close()
    wrong = address.replace(_postgres.PASSWORD, "not-" + _postgres.PASSWORD)
    # A journal that refuses the password is said at once (a warning: reading goes on),
    # and again by what needs it.
    with pytest.warns(PaynbWarning, match="password authentication failed") as warned:
        refused = make_client(sb_small, journal=wrong)
    seen.add("warning", " ".join(str(warning.message) for warning in warned))
    seen.expect_error("wrong password", lambda: refused.ach.submit(ach_item("SEC-PG-2", 2)),
                      JournalError)
    refused.close()
    # The same address from a profile and from the environment.
    monkeypatch.setenv("PAYNB_JOURNAL", address)
    seen.shown("journal from the environment", paynb.journal.Journal.from_env())
    path = Path(paynb.config.config_path())
    path.write_text(f'[team]\nbase_url = "{sb_small.base_url}"\n'
                    f'auth_url = "{sb_small.auth_url}"\ncompany_code = "DEMO1"\n'
                    f'client_id = "{CREDS.client_id}"\nclient_secret = "x"\n'
                    f'username = "{CREDS.username}"\npassword = "y"\njournal = "{address}"\n')
    settings = config.from_profile("team")
    seen.shown("settings", settings)
    seen.add("log", caplog.text)
    leaks = seen.leaks([_postgres.PASSWORD])
    assert not leaks, "the journal's password shown:\n" + "\n".join(leaks[:30])
    assert "<hidden>" in repr(settings) and "postgresql://" in client._repr_html_()


def test_a_held_card_payment_keeps_no_one_time_password(sb_small: Any, tmp_path: Path,
                                                        caplog: pytest.LogCaptureFixture
                                                        ) -> None:
    """Dual control: a card payment waiting for a second person is kept in the shared
    journal without its one-time password (its approver gives a current one), and with its
    card number only until it is decided; the queue, the errors and the logs show neither."""
    from paynb.errors import ValidationError

    caplog.set_level(logging.DEBUG)
    seen = Evidence()
    journal = tmp_path / "team.sqlite3"
    ana = make_client(sb_small, journal=journal, user="ana", dual_control={"instant": True})
    bob = make_client(sb_small, journal=journal, user="bob", dual_control={"instant": True})
    try:
        ana.instant.check_route(CARDS[0])
        held = ana.instant.send(_instant(CARDS[0], TOT_PASSWORDS[0], "SEC-HELD-1"))
        seen.shown("held", held)
        seen.shown("queue", bob.approvals())
        seen.shown("queue frame", bob.approvals().to_frame())
        seen.shown("journal", bob.journal())
        waiting = _sqlite_bytes(journal)
        assert CARDS[0].encode() in waiting  # what will be sent, until it is decided
        seen.add("journal file while held", waiting.replace(CARDS[0].encode(), b"<card>"))
        seen.expect_error("no one-time password", lambda: bob.approve(held.id),
                          ValidationError)
        seen.expect_error("bad one-time password", lambda: bob.approve(
            held.id, tot_password=TOT_PASSWORDS[1] + "x"), ValidationError)
        seen.shown("approved", bob.approve(held.id, tot_password=TOT_PASSWORDS[1]))
        seen.shown("decided", bob.approvals(state=None))
    finally:
        ana.close()
        bob.close()
    seen.add("journal file once decided", _sqlite_bytes(journal))
    seen.add("log", caplog.text)
    leaks = seen.leaks([*TOT_PASSWORDS, *CARDS])
    assert not leaks, "secrets shown:\n" + "\n".join(leaks[:30])
