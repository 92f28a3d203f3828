"""``check_many`` on a whole upload: 100,000 rows of which 5 % are bad, of every kind.

The column checks must give, row for row, the verdict and the messages that one
pydantic model per row gives (the reference, computed here with
:func:`paynb.models.check`): the bad rows carry each kind of refusal of the models
(docs/validation.md), and some good rows carry what is only *warned* about (an open
set's unknown value, a past effective date), which must stay valid: the fast path is
never stricter than the models.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest

import paynb
from paynb import _checks, models

ROUTING = ["021000021", "011000015", "121000358", "026009593", "071000013"]


def _ach(rng: random.Random, n: int) -> dict[str, Any]:
    return {"firstSignerFirstName": rng.choice(["Jane", "José", "Li", "Ann-Marie"]),
            "firstSignerLastName": rng.choice(["Doe", "O Brien", "Núñez", "Smith"]),
            "state": rng.choice(["NY", "CA", "TX", "PR"]),
            "zip": rng.choice([f"{rng.randrange(501, 99950):05d}", "10001-1234"]),
            "yourReferenceNumber": f"FILE-{n:06d}",
            "bankRoutingNumber": rng.choice(ROUTING),
            "bankAccountNumber": str(rng.randrange(10**5, 10**15)),
            "amount": f"{rng.randrange(1, 900_000) / 100:.2f}",
            "achAccountType": rng.choice(["Checking", "Savings"]),
            "achTransactionType": rng.choice(["Debit", "Credit"]),
            "achEntryClass": rng.choice(["PPD", "CCD", "WEB"])}


def _rcc(rng: random.Random, n: int) -> dict[str, Any]:
    return {"firstSignerFirstName": rng.choice(["Jane", "José", "Li"]),
            "firstSignerLastName": rng.choice(["Doe", "Núñez", "Smith"]),
            "address1": f"{rng.randrange(1, 999)} Main St", "city": "Springfield",
            "state": rng.choice(["IL", "NY", "GU"]),
            "zip": rng.choice([f"{rng.randrange(501, 99950):05d}", "62701 1234"]),
            "yourReferenceNumber": f"RCC-{n:06d}", "bankRoutingNumber": rng.choice(ROUTING),
            "bankAccountNumber": str(rng.randrange(10**5, 10**15)),
            "amount": f"{rng.randrange(1, 900_000) / 100:.2f}"}


def _drop(field: str) -> Callable[[dict[str, Any]], None]:
    return lambda row: row.pop(field)


def _set(**values: Any) -> Callable[[dict[str, Any]], None]:
    return lambda row: row.update(values)


#: One refusal of the models each (docs/validation.md, "Refused").
ACH_BAD: dict[str, Callable[[dict[str, Any]], None]] = {
    "bad checksum": _set(bankRoutingNumber="021000022"),
    "routing not nine digits": _set(bankRoutingNumber="02100002"),
    "too long name": _set(firstSignerLastName="N" * 51),
    "blank name": _set(firstSignerFirstName="   "),
    "control character": _set(firstSignerLastName="Do\x01e"),
    "apostrophe in reference": _set(yourReferenceNumber="O'BRIEN-1"),
    "bad enum (closed set)": _set(achTransactionType="Transfer"),
    "three decimals": _set(amount="10.005"),
    "negative": _set(amount="-5.00"),
    "zero, not a prenote": _set(amount="0.00"),
    "too large": _set(amount="100000000.00"),
    "amount not a number": _set(amount="12.50 USD"),
    "prenote with money": _set(achTransactionSubType="Prenote", amount="5.00"),
    "missing required": _drop("bankAccountNumber"),
    "missing amount": _drop("amount"),
    "IAT without addenda": _set(achEntryClass="IAT"),
    "same-day over $1M": _set(sameDayAchRequested=True, amount="1000000.01"),
    "bad state": _set(state="XX"),
    "bad zip": _set(zip="1234"),
    "bad account": _set(bankAccountNumber="12'3456"),
    "unknown field": _set(bankRoutingNumbr="021000021"),
}
#: What is only warned about, or unusual but fine: the row stays valid.
ACH_WARNED: dict[str, Callable[[dict[str, Any]], None]] = {
    "unknown entry class": _set(achEntryClass="XYZ"),
    "unknown account type": _set(achAccountType="Money"),
    "lower-case enum": _set(achAccountType="savings"),
    "past effective date": _set(achEffectiveDate="2020-01-02"),
    "prenote at zero": _set(achTransactionSubType="Prenote", amount="0"),
    "same-day at $1M": _set(sameDayAchRequested=True, amount="1000000.00"),
    "long description": _set(achCompanyEntryDescription="PAYROLL 2026"),
    "blank optional": _set(address2=" "),
    "padded name": _set(firstSignerFirstName=" Jane "),
    "newline at the end (stripped)": _set(firstSignerLastName="Doe\n"),
    "thousands separator": _set(amount="1,250.00"),
}
RCC_BAD: dict[str, Callable[[dict[str, Any]], None]] = {
    "bad checksum": _set(bankRoutingNumber="011000016"),
    "too long name": _set(city="C" * 51),
    "three decimals": _set(amount="19.999"),
    "negative": _set(amount="-1"),
    "missing required": _drop("address1"),
    "bad zip (RCC: space only)": _set(zip="62701-1234"),
    "bad state": _set(state="ny1"),
}
RCC_WARNED: dict[str, Callable[[dict[str, Any]], None]] = {
    "second signer": _set(secondSignerFirstName="John", secondSignerLastName="Roe"),
    "lower-case state": _set(state="il"),
}


def _upload(make: Callable[[random.Random, int], dict[str, Any]],
            bad: dict[str, Callable[[dict[str, Any]], None]],
            warned: dict[str, Callable[[dict[str, Any]], None]],
            n: int, seed: int) -> tuple[list[dict[str, Any]], list[str]]:
    """``n`` rows, 5 % with one refusal each (every kind), 2 % with one advisory each."""
    rng = random.Random(seed)
    rows, kinds = [], []
    for i in range(n):
        row = make(rng, i)
        draw = rng.random()
        kind = ""
        if draw < 0.05:
            kind = rng.choice(sorted(bad))
            bad[kind](row)
        elif draw < 0.07:
            kind = rng.choice(sorted(warned))
            warned[kind](row)
        rows.append(row)
        kinds.append(kind)
    return rows, kinds


def _reference(model: type[models.RequestModel], rows: list[dict[str, Any]]
               ) -> tuple[list[bool], list[Any], list[tuple[str, ...]], dict[int, Any]]:
    """One pydantic model per row: verdicts, errors, advisories, wire bodies."""
    valid, errors, advice, bodies = [], [], [], {}
    for n, row in enumerate(rows):
        item, problems = models.check(model, row)
        valid.append(item is not None)
        errors.append(problems or None)
        advice.append(() if item is None else tuple(
            f"{a.field}: {a.message}" for a in item.advisories()))
        if item is not None:
            bodies[n] = item.to_wire()
    return valid, errors, advice, bodies


@pytest.fixture(scope="module")
def offline() -> Any:
    """A client that never connects: checking happens before any request."""
    return paynb.Client(base_url="http://127.0.0.1:9", auth_url="http://127.0.0.1:9",
                        company_code="DEMO1",
                        credentials=paynb.Credentials("id", "secret", "user", "password"),
                        journal=None)


@pytest.mark.parametrize(("kind", "make", "bad", "warned", "n"), [
    ("ach", _ach, ACH_BAD, ACH_WARNED, 100_000),
    ("rcc", _rcc, RCC_BAD, RCC_WARNED, 20_000),
])
def test_a_file_with_five_percent_bad_rows_of_every_kind(
        offline: Any, kind: str, make: Any, bad: Any, warned: Any, n: int) -> None:
    rows, kinds = _upload(make, bad, warned, n, seed=19)
    resource = getattr(offline, kind)
    valid, errors, advice, bodies = _reference(resource.model, rows)

    verdicts = resource.check_many(rows)
    assert verdicts["valid"].tolist() == valid
    assert verdicts["errors"].tolist() == errors
    assert verdicts["advisories"].tolist() == advice
    # The same upload as a DataFrame (text columns held by Arrow; a missing cell is an
    # absent field): the same verdicts.
    by_frame = resource.check_many(pd.DataFrame(rows))
    assert by_frame["valid"].tolist() == valid
    assert by_frame["errors"].tolist() == errors
    assert by_frame["advisories"].tolist() == advice
    # Every kind of refusal is in the file and refused; every advisory stays valid.
    refused = {kinds[i] for i in range(n) if not valid[i]}
    assert refused == set(bad)
    assert all(valid[i] for i in range(n) if kinds[i] in warned)
    assert 0.04 * n < n - sum(valid) < 0.06 * n

    # submit_many's pre-check: the same verdicts, and the wire bodies of the models.
    pre = _checks.check_rows(resource.model, rows)
    checked, refused_rows = pre.bodies, pre.errors
    assert sorted(refused_rows) == [i for i in range(n) if not valid[i]]
    assert checked == bodies
    assert all(list(checked[i]) == list(bodies[i]) for i in range(0, n, 97) if i in bodies)
    # ... and the columns, not the models, vouched for the ordinary rows.
    assert _checks.check_rows(resource.model, rows, bodies=False).fast > 0.9 * n
