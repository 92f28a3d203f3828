"""The history tests' own sandbox."""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import pytest

from paynb.sandbox import Sandbox, serve

from .test_history import ach_item


@pytest.fixture
def private() -> Iterator[Sandbox]:
    """A sandbox of this test alone (it changes items and the clock), with 40 items still
    waiting: the demo's own have mostly gone W -> S by the banking-day cut-off."""
    with serve(port=0, seed_items=300, seed=3) as sb:
        with sb.connect(journal=None) as client, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the guards' notice of a client with no history
            client.ach.submit_many([ach_item(f"HIST-W-{n}", 500 + n) for n in range(40)])
        yield sb
