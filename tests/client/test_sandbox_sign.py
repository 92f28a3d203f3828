"""The sandbox names itself in its answers (issue 43.5, 44.3): a client that reached it by
its URL (``PAYNB_*`` variables, a profile, arguments in code) labels it the sandbox and
judges by the sandbox's clock; a service without the exact header stays the real one."""

from __future__ import annotations

import datetime as dt
import http.server
import json
import threading
from collections.abc import Iterator
from typing import Any

import pandas as pd
import pytest
import requests

import paynb
from paynb import compliance, config, monitor, sandbox
from paynb._sign import SANDBOX_HEADER, SANDBOX_TIME_HEADER
from paynb.monitor import UNAUTHORIZED

pytestmark = [pytest.mark.guards_unchecked, pytest.mark.timeout(300)]

CREDS = sandbox.DEMO_CREDENTIALS


def _by_url(monkeypatch: pytest.MonkeyPatch, sb: Any) -> None:
    """The sandbox set in ``PAYNB_*`` variables, as an operator's cron line sets a service;
    no discovery file names it."""
    settings = sb.settings()
    for setting, variable in config.ENV_VARIABLES.items():
        monkeypatch.setenv(variable, getattr(settings, setting))
    monkeypatch.delenv("PAYNB_SANDBOX_FILE", raising=False)


def test_every_sandbox_answer_carries_its_name_and_clock(sandbox: Any) -> None:
    for method, path in (("GET", "/sandbox/info"), ("GET", "/api/v3/nothing-here"),
                         ("POST", "/connect/token")):
        answer = requests.request(method, sandbox.base_url + path, timeout=10)
        assert answer.headers[SANDBOX_HEADER] == "1", path
        told = pd.Timestamp(answer.headers[SANDBOX_TIME_HEADER])
        assert abs(told - pd.Timestamp(sandbox.simulate.now())) < pd.Timedelta(minutes=1)


def test_a_sandbox_reached_by_url_is_the_sandbox_with_its_clock_in_the_run(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    with sandbox.serve(port=0, seed_items=600, seed=5) as sb:
        moved = sb.simulate.advance_clock(days=1)
        day = moved.date()
        assert day == dt.datetime.now(dt.UTC).date() + dt.timedelta(days=1)
        _by_url(monkeypatch, sb)
        with paynb.connect(journal=str(tmp_path / "journal.sqlite3")) as client:
            # Nothing has answered yet: settings that do not name the sandbox are the real
            # service's until its answers say otherwise (never the other way round).
            assert "REAL SERVICE" in repr(client)
            items = client.ach.list(status="S", progress=False)
            assert repr(client).startswith(
                f"<paynb.Client sandbox {sb.base_url.removeprefix('http://')} (simulated, "
                "nothing is paid; PAYNB_* variables)")
            assert client.environment.is_sandbox and client.environment == "env"
            assert abs(compliance.service_now(client) - moved) < dt.timedelta(minutes=1)
            # A return dated the sandbox's day (its tomorrow by this machine's clock).
            debits = items[(items["achTransactionType"] == "Debit") & (items["amount"] > 0)]
            item_id = int(debits["achItemId"].max())
            sb.simulate.force_status(item_id, "R", code="R10", date=moved,
                                     company_code="DEMO1")
            report = monitor.run(client, report=False, send=False)
        assert report.as_of.date() == day
        assert "REAL SERVICE" not in report.environment + report.title + report.message
        assert report.environment.startswith("sandbox ") and "(sandbox " in report.title
        new = report.measured.new_returns
        assert new.loc[new["achItemId"] == item_id, "unauthorized"].tolist() == [True]
        # Its rates count it: the same figures as the compliance function's on the
        # service's own list, as of the sandbox's day (as of this machine's day it is not
        # counted yet, which is what the run showed before).
        with sb.connect(journal=None) as direct:
            listed = direct.ach.list(progress=False)
        rates = report.measured.rates.set_index("category")
        assert listed[listed["returnReason"].isin(UNAUTHORIZED)
                      & (listed["achItemId"] == item_id)].shape[0] == 1
        for as_of, counted in ((day, True), (day - dt.timedelta(days=1), False)):
            expected = compliance.return_rates(listed, as_of=as_of).set_index("category")
            same = int(expected.loc["unauthorized", "returns"]) == int(
                rates.loc["unauthorized", "returns"])
            assert same is counted, as_of


class _Service:
    """A stand-in for the real service on loopback: tokens, and 404 for everything else;
    ``header``: the ``X-Paynb-Sandbox`` value its answers carry (None: none)."""

    def __init__(self, header: str | None) -> None:
        class Handler(http.server.BaseHTTPRequestHandler):
            def _answer(self, status: int, body: dict[str, Any]) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if header is not None:
                    self.send_header(SANDBOX_HEADER, header)
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                self._answer(200, {"access_token": "t", "expires_in": 3600,
                                   "token_type": "Bearer"})

            def do_GET(self) -> None:
                self._answer(404, {"title": "Not Found", "status": 404})

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def service(request: pytest.FixtureRequest) -> Iterator[_Service]:
    served = _Service(request.param)
    yield served
    served.close()


@pytest.mark.parametrize("service", [None, "0", "true", "yes", "", "1 1", "2"],
                         indirect=True)
def test_only_the_exact_header_makes_a_service_the_sandbox(service: _Service) -> None:
    with paynb.Client(base_url=service.url, auth_url=service.url, company_code="ACME1",
                      credentials=CREDS, journal=None) as client:
        before = dt.datetime.now(dt.UTC)
        now = client.context.clock.now()  # asks once; the answer carries no exact "1"
        assert before <= now <= dt.datetime.now(dt.UTC)
        assert not client.environment.is_sandbox
        assert client.context.transport.sandbox is False
        assert repr(client).startswith(
            f"<paynb.Client REAL SERVICE {service.url.removeprefix('http://')} "
            "(settings given in code)")


@pytest.mark.parametrize("service", ["1"], indirect=True)
def test_the_exact_header_is_the_sandbox_and_stays_it(service: _Service) -> None:
    with paynb.Client(base_url=service.url, auth_url=service.url, company_code="ACME1",
                      credentials=CREDS, journal=None) as client:
        assert client.context.clock.identify() is True
        assert client.environment.is_sandbox
        assert repr(client).startswith("<paynb.Client sandbox ")
