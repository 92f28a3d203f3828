"""Python calls of the sandbox's simulation endpoints (``/sandbox/...``): ``sb.simulate`` on
every :class:`~paynb.sandbox.Sandbox`, also one another process runs (it talks HTTP).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any

import requests

from paynb._time import utc_moment
from paynb.errors import ApiError, BadRequestError, NotFoundError
from paynb.sandbox.faults import FaultSettings

__all__ = ["Simulator"]

When = dt.datetime | dt.date | str | None


def _when(value: When) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        value = value.astimezone(dt.UTC).replace(tzinfo=None)
    return value.isoformat()


def _given(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` without the options left at None (the endpoint's default applies)."""
    return {k: v for k, v in body.items() if v is not None}


def _settings(value: FaultSettings | dict[str, Any] | None) -> dict[str, Any] | None:
    return value if value is None or isinstance(value, dict) else asdict(value)


class Simulator:
    """Drive a sandbox: its clock, item statuses, NOCs and faults (``company_code``: the
    default company of the item calls)."""

    def __init__(self, base_url: str, company_code: str = "DEMO1", *, timeout: float = 30.0):
        self.base_url = base_url.rstrip("/")
        self.company_code = company_code
        self.timeout = timeout
        self._session = requests.Session()

    def __repr__(self) -> str:
        return f"Simulator({self.base_url!r}, company_code={self.company_code!r})"

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        response = self._session.request(method, self.base_url + path, json=body,
                                         timeout=self.timeout)
        if response.ok:
            return response.json()
        problem = response.json() if "json" in response.headers.get("content-type", "") else {}
        error = {400: BadRequestError, 404: NotFoundError}.get(response.status_code, ApiError)
        raise error(problem.get("detail") or problem.get("title") or response.reason,
                    status=response.status_code, method=method, path=path,
                    title=problem.get("title"), detail=problem.get("detail"),
                    errors=problem.get("errors"))

    def info(self) -> dict[str, Any]:
        """Sandbox facts: seed, clock, companies, users, instance id, and ``tokenRequests``,
        the token endpoint's answers so far by outcome (``"issued"`` or the OAuth error)."""
        return self._call("GET", "/sandbox/info")

    def set_password(self, username: str, password: str, *,
                     revoke_tokens: bool = True) -> int:
        """Give ``username`` a new password, as an administrator changing or revoking it:
        token requests with the old one are refused (``invalid_grant``), and with
        ``revoke_tokens`` the user's tokens stop working at once (401), else when they
        expire. Returns how many tokens were revoked. Lasts until the sandbox stops;
        ``sb.credentials`` keep the demo password."""
        body = {"password": password, "revokeTokens": revoke_tokens}
        return self._call("POST", f"/sandbox/users/{username}/password", body)["revokedTokens"]

    def now(self) -> dt.datetime:
        """The sandbox clock (UTC)."""
        return utc_moment(self._call("GET", "/sandbox/clock")["now"], "now")

    def advance_clock(self, *, days: float = 0, hours: float = 0, minutes: float = 0,
                      seconds: float = 0) -> dt.datetime:
        """Move the sandbox clock forward, run business processing, return the new time."""
        body = {"days": days, "hours": hours, "minutes": minutes, "seconds": seconds}
        return utc_moment(self._call("POST", "/sandbox/clock/advance", body)["now"], "now")

    def process(self) -> None:
        """Run business processing now (it also runs before every read)."""
        self._call("POST", "/sandbox/process")

    def force_status(self, item_id: int, status: str, *, kind: str = "ach",
                     code: str | None = None, date: When = None, message: str | None = None,
                     company_code: str | None = None) -> dict[str, Any]:
        """Put an ACH or RCC item into ``status`` (I, B, R, S, W or V) and return its record:
        ``code`` is the return code for R (default R01), ``date`` the event time (default
        now; the returnDate is that day), ``message`` replaces the code's standard text."""
        body = {"status": status, "code": code, "message": message, "date": _when(date)}
        path = (f"/sandbox/companycode/{company_code or self.company_code}/{kind}/"
                f"{item_id}/status")
        return self._call("POST", path, _given(body))["transaction"]

    def create_noc(self, ach_item_id: int, *, change_code: str = "C01",
                   corrected_data: str | None = None, date: When = None,
                   company_code: str | None = None) -> dict[str, Any]:
        """Create a NOC for an ACH item and return the NOC record."""
        body = {"changeCode": change_code, "correctedData": corrected_data, "date": _when(date)}
        path = f"/sandbox/companycode/{company_code or self.company_code}/ach/{ach_item_id}/noc"
        return self._call("POST", path, _given(body))["transaction"]

    def scenarios(self) -> list[dict[str, Any]]:
        """The named demo items (docs/sandbox.md, "Scenarios"): for each, its reference,
        what it demonstrates (a NOC to apply, a reinitiation limit, a closed account
        debited again...), its receiving account, its items and its NOC."""
        return self._call("GET", "/sandbox/scenarios")["scenarios"]

    def get_faults(self) -> dict[str, Any]:
        """The fault settings for reads and writes, and the scripted faults still to come."""
        return self._call("GET", "/sandbox/faults")

    def set_faults(self, *, reads: FaultSettings | dict[str, Any] | None = None,
                   writes: FaultSettings | dict[str, Any] | None = None,
                   seed: int | None = None) -> dict[str, Any]:
        """Replace the random fault settings of reads and/or writes (None keeps them)."""
        body = {"reads": _settings(reads), "writes": _settings(writes), "seed": seed}
        return self._call("PUT", "/sandbox/faults", _given(body))

    def script_fault(self, fault: str, *, count: int = 1, on: str = "any") -> dict[str, Any]:
        """Make the next ``count`` requests of ``on`` (reads, writes, any) meet ``fault``:
        ``"503"``, ``"429"``, ``"drop"`` or ``"drop_after_commit"``."""
        return self._call("POST", "/sandbox/faults/script",
                          {"fault": fault, "count": count, "on": on})

    def clear_faults(self) -> dict[str, Any]:
        """Remove every fault setting and scripted fault."""
        return self._call("DELETE", "/sandbox/faults")

    @contextmanager
    def faults(self, *, reads: FaultSettings | dict[str, Any] | None = None,
               writes: FaultSettings | dict[str, Any] | None = None,
               seed: int | None = None) -> Iterator[Simulator]:
        """``with sb.simulate.faults(reads=FaultSettings(error_rate=0.3)):`` - cleared after."""
        self.set_faults(reads=reads, writes=writes, seed=seed)
        try:
            yield self
        finally:
            self.clear_faults()
