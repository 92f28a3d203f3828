"""Fixtures of the sandbox tests: a caller of the shared sandbox, and a sandbox per module."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sandbox_helpers import Api

from paynb.sandbox import Sandbox, serve


@pytest.fixture(scope="session")
def api(sandbox: Sandbox) -> Api:
    """The shared sandbox as the demo user (companies DEMO1 and DEMO2)."""
    return Api(sandbox)


@pytest.fixture(scope="module")
def own() -> Iterator[Sandbox]:
    """A sandbox of this module alone (clock, faults and statuses may be changed freely)."""
    with serve(port=0, seed_items=200, seed=5) as sb:
        yield sb


@pytest.fixture(scope="module")
def own_api(own: Sandbox) -> Api:
    return Api(own)
