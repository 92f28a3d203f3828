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

__all__ = ["SandboxProcess", "Served"]

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

    def client_kwargs(self) -> dict[str, str]:
        """Positional-by-name arguments of ``paynb.Client`` for this sandbox."""
        return {"base_url": self.base_url, "auth_url": self.auth_url,
                "company_code": self.company_code, **self.credentials}


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
