"""Fixtures shared by every test folder: one served sandbox for the whole session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from paynb.sandbox import Sandbox, serve

#: ACH items of the shared sandbox (with RCC, instant and RTP in proportion).
SEED_ITEMS = 2000


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    """A sandbox served on 127.0.0.1 for the whole session, in memory, seed 1.

    Shared by every test: a test that submits or voids should use reference
    numbers of its own, and a test that changes the clock or faults should
    start its own with :func:`paynb.sandbox.serve`.
    """
    with serve(port=0, seed_items=SEED_ITEMS, seed=1) as sb:
        yield sb
