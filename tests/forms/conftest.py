"""Fixtures of the form tests: a client of the shared sandbox with its own journal."""

from __future__ import annotations

import itertools
import logging
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

import paynb

_counter = itertools.count()


@pytest.fixture
def client(sandbox: Any, tmp_path: Any) -> Iterator[paynb.Client]:
    """A client of the sandbox whose journal is this test's own."""
    with sandbox.connect(journal=tmp_path / "journal.sqlite") as client:
        yield client


@pytest.fixture
def ref() -> Any:
    """A maker of reference numbers no other test (or run) uses."""
    run = uuid.uuid4().hex[:8]
    return lambda label="": f"F-{run}-{next(_counter)}{label}"


@pytest.fixture(autouse=True)
def no_unexpected_errors(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    """A form action that failed unexpectedly only logs: make that fail the test."""
    with caplog.at_level(logging.ERROR, logger="paynb.forms"):
        yield
    failures = [r for r in caplog.records if r.name == "paynb.forms" and r.levelno >= logging.ERROR]
    assert not failures, failures[0].getMessage()


@pytest.fixture
def fill() -> Any:
    """Type values (by wire name) into a form's fields: ``fill(form, amount="1.00")``."""

    def typer(form: Any, **values: Any) -> None:
        for wire, value in values.items():
            form.fields[wire].value = value

    return typer


@pytest.fixture
def ach_values(ref: Any) -> dict[str, str]:
    """What a user types for a valid ACH debit, with a fresh reference."""
    return {
        "firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
        "zip": "10001", "yourReferenceNumber": ref("ach"), "bankRoutingNumber": "021000021",
        "bankAccountNumber": "000123456789", "achTransactionType": "Debit",
        "amount": "125.10",
    }
