"""The morning run's figures are the public functions' answers to the same questions, on the
demo data of both companies, in a masked store and one of whole numbers, on any day: its
overdue NOCs are ``client.nocs.obligations()``'s, its rates ``compliance.return_rates``',
its money still returnable ``compliance.return_exposure``'s."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from decimal import Decimal
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from paynb import compliance, monitor
from paynb.monitor._checks import measure

CASES = [(company, mask) for company in ("DEMO1", "DEMO2") for mask in (True, False)]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Any:
    """The user data folder of this module's clients (their stores' key secrets)."""
    return tmp_path_factory.mktemp("agree-data")


@pytest.fixture(autouse=True)
def _data(data, monkeypatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(data))


@pytest.fixture(scope="module")
def runs(sandbox, data, tmp_path_factory) -> Iterator[dict[tuple[str, bool], tuple[Any, Any]]]:
    """A client of each demo company, masked and not, its history synced and a run made."""
    folder = tmp_path_factory.mktemp("agree")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(data))
        opened = {}
        for company, mask in CASES:
            name = f"{company}-{'masked' if mask else 'whole'}"
            client = sandbox.connect(company_code=company, mask=mask,
                                     journal=folder / f"{name}.sqlite3")
            client.sync(path=folder / name, kinds=monitor.SYNCED_KINDS, progress=False)
            opened[company, mask] = (client, monitor.run(client, report=False, notify=[]))
        yield opened
        for client, _ in opened.values():
            client.close()


def _nocs(findings: list[Any]) -> dict[str, str]:
    """The run's NOC findings: NOC id -> the ledger's state it says."""
    return {f.detail["nocId"]: f.detail["state"] for f in findings if f.kind == "noc"}


def _due(obligations: pd.DataFrame) -> dict[str, str]:
    due = obligations[obligations["state"].isin(["overdue", "due soon"])]
    return dict(zip(due["nocId"].astype(str), due["state"].astype(str), strict=True))


def _rates(rates: pd.DataFrame) -> list[tuple]:
    return [(row["category"], int(row["returns"]), int(row["entries"]), row["level"])
            for row in rates[["category", "returns", "entries", "level"]].to_dict("records")]


def _exposure(exposure: pd.DataFrame) -> dict[str, Decimal | int]:
    return {"standard_amount": Decimal(str(exposure["standard_amount"].sum())),
            "standard_count": int(exposure["standard_count"].sum()),
            "unauthorized_amount": Decimal(str(exposure["unauthorized_amount"].sum())),
            "unauthorized_count": int(exposure["unauthorized_count"].sum())}


@pytest.mark.parametrize(("company", "mask"), CASES)
def test_the_runs_overdue_nocs_are_the_ledgers_on_the_demo(runs, company, mask) -> None:
    client, run = runs[company, mask]
    obligations = client.nocs.obligations(as_of=run.as_of)
    assert _nocs(run.findings) == _due(obligations)
    overdue = obligations[obligations["state"] == "overdue"]
    if company == "DEMO1":
        # The designed scenarios (paynb.sandbox.scenarios): C01, C02, C07 overdue.
        scenarios = set(overdue["yourReferenceNumber"].dropna())
        assert {"SCN-NOC-C01", "SCN-NOC-C02", "SCN-NOC-C07"} <= scenarios
    # Each overdue NOC of the report shows the account of its entry.
    shown = run.measured.nocs
    assert shown["bankAccountNumber"].notna().all()
    assert shown["bankAccountNumber"].str.startswith("****").all()


@pytest.mark.parametrize(("company", "mask"), CASES)
def test_the_runs_rates_and_exposure_are_the_public_functions(runs, company, mask) -> None:
    client, run = runs[company, mask]
    today = run.as_of.astimezone(dt.UTC).date()
    items = client.history.ach()
    assert _rates(run.measured.rates) == _rates(compliance.return_rates(items, as_of=today))
    assert run.measured.exposure_total == _exposure(
        compliance.return_exposure(items, as_of=today))


def _typed(rows: list[dict[str, Any]], key: str) -> list[list[tuple[str, type, Any]]]:
    """Records as (field, type, value), in the order of ``key``: two readings agree on
    values and on the types the ledger reads."""
    return [[(name, type(value), value) for name, value in sorted(row.items())]
            for row in sorted(rows, key=lambda row: row[key])]


@pytest.mark.parametrize(("company", "mask"), CASES)
def test_duckdb_reads_the_nocs_evidence_as_the_arrow_dataset_does(runs, company, mask,
                                                                    monkeypatch) -> None:
    """A store on this machine gives the ledger its evidence through DuckDB's Parquet
    reader; any other (an object store's) through deltalake's Arrow dataset: the same
    records, of the same types, whether masked or not."""
    from paynb.history import _accounts

    client, _run = runs[company, mask]
    by_duckdb = client.history.noc_evidence()
    assert by_duckdb.nocs and by_duckdb.items
    monkeypatch.setattr(_accounts, "parquet_source", lambda *_: None)
    by_arrow = client.history.noc_evidence()
    assert _typed(by_duckdb.nocs, "nocId") == _typed(by_arrow.nocs, "nocId")
    assert _typed(by_duckdb.items, "achItemId") == _typed(by_arrow.items, "achItemId")
    assert (by_duckdb.secret, by_duckdb.matches) == (by_arrow.secret, by_arrow.matches)


@settings(max_examples=12, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(case=st.sampled_from(CASES), back=st.integers(0, 60), hour=st.integers(0, 23))
def test_on_any_day_the_runs_findings_are_the_public_functions(runs, case, back, hour) -> None:
    """The checks measured as of a drawn day (up to 60 days back, any hour) find the NOCs
    due that ``obligations()`` finds that day, and the rates and exposure of
    ``return_rates`` and ``return_exposure`` over every item of the history."""
    client, run = runs[case]
    as_of = (run.as_of - dt.timedelta(days=back)).replace(hour=hour)
    today = as_of.date()
    found = measure(client, client.history, as_of=as_of, since=None, report=False)
    assert _nocs(found.findings) == _due(client.nocs.obligations(as_of=as_of))
    items = client.history.ach()
    assert _rates(found.rates) == _rates(compliance.return_rates(items, as_of=today))
    assert found.exposure_total == _exposure(compliance.return_exposure(items, as_of=today))


def test_a_masked_store_whose_key_is_not_here_says_its_noc_accounts_are_unknown(
        runs, tmp_path, monkeypatch) -> None:
    """A masked store tells accounts apart by keyed hashes whose secret stays on the machine
    that synced it: elsewhere (or a store synced before the keys) the run cannot match a
    NOC's account to later entries, and says so with the mend, instead of calling applied
    NOCs overdue in silence. A store of whole numbers needs no key."""
    masked, run = runs["DEMO1", True]
    whole, whole_run = runs["DEMO1", False]
    assert "noc:accounts" not in {f.key for f in (*run.findings, *whole_run.findings)}
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))  # a machine without the store's key
    found = measure(masked, masked.history, as_of=run.as_of, since=None, report=False)
    warned = [f for f in found.findings if f.key == "noc:accounts"]
    assert [f.level for f in warned] == ["warning"]
    assert "client.sync(rebuild=True)" in warned[0].title
    found = measure(whole, whole.history, as_of=run.as_of, since=None, report=False)
    assert "noc:accounts" not in {f.key for f in found.findings}
