"""Helpers of the reliability tests: clients to watch (a wire spy), the fault-run summary."""

from __future__ import annotations

import contextlib
import threading
from collections import Counter
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import pytest

from paynb.client import Client
from paynb.config import Credentials


class WireSpy:
    """Every HTTP request one client's session sends, with its outcome.

    The outcome is the answer's status code, or ``"lost"`` when no answer came
    (connection dropped or refused, timeout). Installed on the session instance,
    so it sees token requests and service calls alike and nothing of other clients.
    """

    def __init__(self, session: Any):
        self.calls: list[tuple[str, str, int | str]] = []
        self._lock = threading.Lock()
        original = session.send

        def send(request: Any, **kwargs: Any) -> Any:
            path = urlsplit(request.url).path
            try:
                response = original(request, **kwargs)
            except Exception:
                self._add(request.method, path, "lost")
                raise
            self._add(request.method, path, response.status_code)
            return response

        session.send = send

    def _add(self, method: str, path: str, outcome: int | str) -> None:
        with self._lock:
            self.calls.append((method, path, outcome))

    def reset(self) -> None:
        """Forget what was seen so far."""
        with self._lock:
            self.calls.clear()

    def select(self, method: str | None = None, *, token: bool | None = None
               ) -> list[tuple[str, str, int | str]]:
        """Calls of ``method`` (any when None); ``token`` True/False keeps only/no token calls."""
        with self._lock:
            calls = list(self.calls)
        return [c for c in calls
                if (method is None or c[0] == method)
                and (token is None or c[1].endswith("/connect/token") is token)]

    def outcomes(self, method: str | None = None) -> Counter[int | str]:
        """How many service calls (not token calls) of ``method`` ended each way."""
        return Counter(outcome for _, _, outcome in self.select(method, token=False))

    @property
    def token_requests(self) -> int:
        """How many times a token was asked for."""
        return len(self.select(token=True))


def make_client(sb: Any, *, journal: Any = None, company_code: str | None = None,
                credentials: dict[str, str] | None = None, **options: Any) -> Client:
    """A client of sandbox ``sb`` (its demo credentials unless ``credentials`` override)."""
    given = sb.credentials.as_dict()
    given.update(credentials or {})
    options.setdefault("max_workers", 4)
    return Client(base_url=sb.base_url, auth_url=sb.auth_url,
                  company_code=company_code or sb.company_code,
                  credentials=Credentials(**given), journal=journal, **options)


@contextlib.contextmanager
def spied_client(sb: Any, **options: Any) -> Iterator[tuple[Client, WireSpy]]:
    """A client of ``sb`` and the spy on its wire; closed afterwards."""
    client = make_client(sb, **options)
    try:
        yield client, WireSpy(client.transport.session)
    finally:
        client.close()


#: The name under which a test's fault-run lines travel in its report (from a worker of
#: ``pytest -n N`` to the process that prints the summary, too).
_PROPERTY = "paynb fault run"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Hand the fault-run lines the test wrote (faultrun.REPORTS) to its report."""
    from .faultrun import REPORTS

    report = yield
    report.user_properties.extend((_PROPERTY, line) for line in REPORTS)
    REPORTS.clear()
    return report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Repeat the counts of the fault runs at the end of the pytest output."""
    lines = [value for reports in terminalreporter.stats.values() for report in reports
             for name, value in getattr(report, "user_properties", ()) if name == _PROPERTY]
    if lines:
        terminalreporter.section("paynb fault runs")
        for line in lines:
            terminalreporter.write_line(line)
