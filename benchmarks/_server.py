"""The benchmark's sandbox, served from a child process.

Why a separate process: the sandbox is Python (FastAPI, uvicorn, SQLite). In
the harness's own process its request handling, JSON encoding and event loop
would compete with the client for one GIL, so a concurrent client would be
measured against a server it slows down and that slows it down, which is not
what an analyst meets (the real service runs elsewhere). In its own process the
server gets one of the two cores and the client the other; the baseline and
paynb are measured against the very same server, interleaved.

Run as ``python -m benchmarks._server '{"seed_items": 20000, "latency_ms": 50}'``:
it prints one line ``BENCH-SANDBOX {json}`` with the addresses, credentials and
seeding time, then serves until its stdin is closed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

import requests

__all__ = ["SandboxProcess", "Sandboxes", "Served"]

_MARKER = "BENCH-SANDBOX "


@dataclass
class Served:
    """What the child reports: where the sandbox is and how long it took to be ready."""

    base_url: str
    auth_url: str
    company_code: str
    credentials: dict[str, str]
    ready_s: float
    options: dict[str, Any] = field(default_factory=dict)

    def client_kwargs(self) -> dict[str, Any]:
        """The connection arguments of ``paynb.Client`` for this sandbox."""
        import paynb

        return {"base_url": self.base_url, "auth_url": self.auth_url,
                "company_code": self.company_code,
                "credentials": paynb.Credentials(**self.credentials)}

    def set_latency(self, ms: float) -> None:
        """Added latency of every read and write from now on (``PUT /sandbox/faults``)."""
        settings = {"latency_ms": ms}
        answer = requests.put(f"{self.base_url}/sandbox/faults", timeout=30,
                              json={"reads": settings, "writes": settings})
        answer.raise_for_status()


class Sandboxes:
    """Sandboxes shared by the cases of one run, one per seeded size, started on first use.

    Seeding is the slow part of a start, so cases 1, 2 and 7 share the sandbox
    of a size and set its latency themselves.
    """

    def __init__(self) -> None:
        self._running: dict[int, tuple[SandboxProcess, Served]] = {}

    def get(self, seed_items: int, *, latency_ms: float = 0) -> Served:
        """The sandbox seeded with ``seed_items``, now with ``latency_ms`` added."""
        if seed_items not in self._running:
            process = SandboxProcess(seed_items=seed_items)
            self._running[seed_items] = (process, process.__enter__())
        served = self._running[seed_items][1]
        served.set_latency(latency_ms)
        return served

    def close(self) -> None:
        """Stop every sandbox started."""
        while self._running:
            _, (process, _) = self._running.popitem()
            process.__exit__(None, None, None)


class SandboxProcess:
    """``with SandboxProcess(seed_items=N, latency_ms=50) as served:`` a sandbox in a child.

    Keyword arguments go to ``paynb.sandbox.serve(port=0, ...)`` unchanged.
    """

    def __init__(self, *, startup_timeout: float = 600, **options: Any) -> None:
        self.options = options
        self.startup_timeout = startup_timeout
        self._proc: subprocess.Popen[str] | None = None
        self._log = tempfile.TemporaryFile(mode="w+")  # noqa: SIM115 (closed in __exit__)

    def __enter__(self) -> Served:
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "benchmarks._server", json.dumps(self.options)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log, text=True,
            cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
        )
        assert self._proc.stdout is not None
        deadline = time.monotonic() + self.startup_timeout
        for line in self._proc.stdout:
            if line.startswith(_MARKER):
                return Served(**json.loads(line[len(_MARKER):]), options=self.options)
            if time.monotonic() > deadline:
                break
        self.__exit__(None, None, None)
        self._log.seek(0)
        raise RuntimeError(f"sandbox child did not start ({self.options}):\n"
                           + self._log.read()[-3000:])

    def __exit__(self, *exc: object) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        try:
            if proc.stdin:
                proc.stdin.close()
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.terminate()
            proc.wait(timeout=10)
        finally:
            if proc.stdout:
                proc.stdout.close()
            self._log.close()


def _child(options: dict[str, Any]) -> None:
    from paynb.sandbox import serve

    start = time.perf_counter()
    with serve(port=0, **options) as sb:
        ready = time.perf_counter() - start
        creds = sb.credentials.as_dict()
        info = {
            "base_url": sb.base_url,
            "auth_url": sb.auth_url,
            "company_code": sb.company_code,
            "credentials": {k: creds[k] for k in ("client_id", "client_secret",
                                                   "username", "password")},
            "ready_s": ready,
        }
        print(_MARKER + json.dumps(info), flush=True)
        sys.stdin.read()  # serve until the parent closes our stdin (or dies)


if __name__ == "__main__":
    _child(json.loads(sys.argv[1]) if len(sys.argv) > 1 else {})
