"""An embedded sandbox of the payment item service: FastAPI over SQLite on loopback.

It is what the notebooks, the tests, the benchmarks and a new user's first
hour run against, with no account::

    from paynb import sandbox

    with sandbox.serve(port=0, seed_items=1000) as sb:
        sb.base_url, sb.auth_url, sb.company_code, sb.credentials
        sb.simulate.advance_clock(days=3)          # business processing catches up
        sb.simulate.script_fault("drop_after_commit", on="writes")

    sb = sandbox.ensure_running()   # the shared demo sandbox, as paynb.connect() uses

Every rule and table (card ranges, RTP banks, restricted states, blocked
accounts, return and NOC rates) is in :mod:`paynb.sandbox.rules` and
``docs/sandbox.md``. FastAPI and uvicorn load only when a sandbox starts here.
"""

from __future__ import annotations

from paynb.sandbox.faults import FaultSettings
from paynb.sandbox.server import (
    DEMO_CREDENTIALS,
    DEMO_ITEMS,
    Credentials,
    Sandbox,
    ensure_running,
    register_client,
    serve,
)
from paynb.sandbox.simulate import Simulator

__all__ = ["DEMO_CREDENTIALS", "DEMO_ITEMS", "Credentials", "FaultSettings", "Sandbox", "Simulator",
           "ensure_running", "register_client", "serve"]
