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


@pytest.fixture
def store_reads(monkeypatch: pytest.MonkeyPatch) -> list[list[str] | None]:
    """The columns of every read of a history table (None: all of them), in order."""
    from paynb.history import _store

    reads: list[list[str] | None] = []
    real = _store.Store.scan

    def counted(self, name, table, files=None, columns=None, condition=None):  # type: ignore[no-untyped-def]
        reads.append(columns)
        return real(self, name, table, files, columns, condition)

    monkeypatch.setattr(_store.Store, "scan", counted)
    return reads
