"""The racer of ``test_concurrent_submit.py``: submit references at the same moment as
another thread or process that shares the journal file.

A module of its own so that a process started with ``spawn`` can import it.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any


def item(reference: str) -> dict[str, Any]:
    """The ACH item both racers submit for ``reference``."""
    return {"firstSignerFirstName": "Race", "firstSignerLastName": "Condition", "state": "NY",
            "zip": "10001", "yourReferenceNumber": reference, "bankRoutingNumber": "021000021",
            "bankAccountNumber": "12345678", "achTransactionType": "Debit",
            "amount": Decimal("10.01")}


def race(settings: dict[str, Any], journal: str, references: list[str], barrier: Any,
         how: str = "submit") -> list[str]:
    """Submit each reference right after ``barrier`` lets both racers go.

    Returns one outcome per reference: ``sent``, ``duplicate`` or the error's name.
    ``how`` is ``submit`` (one item) or ``submit_many`` (a bulk of one).
    """
    from paynb.client import Client
    from paynb.errors import DuplicateSubmissionError

    outcomes = []
    with Client(**settings, journal=journal) as client:
        client.ach.list(max_items=1, progress=False)  # token and connection ready
        for reference in references:
            barrier.wait(timeout=60)
            try:
                if how == "submit":
                    client.ach.submit(item(reference))
                else:
                    result = client.ach.submit_many([item(reference)])
                    assert list(result["itemStatus"]) == ["W"]
                outcomes.append("sent")
            except DuplicateSubmissionError:
                outcomes.append("duplicate")
            except Exception as exc:  # reported to the test, which fails on it
                outcomes.append(f"{type(exc).__name__}: {exc}")
    return outcomes


def race_in_process(settings: dict[str, Any], journal: str, references: list[str],
                    barrier: Any, results: Any, how: str) -> None:
    """:func:`race` in a child process; the outcomes go back through ``results``."""
    results.put(race(settings, journal, references, barrier, how))
