"""The recipes of docs/history.md ("Compliance figures with another engine") run as
written on a synced store and give paynb's own return rates: Polars, DuckDB, Dask and
PySpark code (through sqlframe on DuckDB: Spark cannot run here)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from paynb import compliance

from .test_engines import recipe as docs_recipe

ENGINES = ["Polars", "DuckDB", "Dask", "PySpark"]


@pytest.fixture(scope="module")
def store(client, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("engine-figures")
    client.sync(path=path, progress=False)
    return path


def recipe(engine: str) -> str:
    """The code block under the docs' heading "Return rates with ``engine``"."""
    return docs_recipe(f"Return rates with {engine}")


@pytest.fixture(scope="module")
def as_of(client, store) -> str:
    """The day of the store's last item (the sandbox's items are dated from today)."""
    return f"{client.history.ach()['receivedDateTime'].max():%Y-%m-%d}"


def run(engine: str, store: Path, as_of: str, code: str | None = None) -> pd.DataFrame:
    scope: dict = {"store": str(store), "as_of": as_of}
    exec(compile(code or recipe(engine), f"docs/history.md ({engine})", "exec"), scope)
    rates: pd.DataFrame = scope["rates"]
    return rates


@pytest.mark.filterwarnings("ignore:pandas only supports SQLAlchemy:UserWarning")  # sqlframe's
@pytest.mark.parametrize("engine", ENGINES)
def test_each_engine_gives_paynbs_return_rates(client, store, as_of, engine):
    if engine == "PySpark":
        pytest.importorskip("sqlframe")
    expected = compliance.return_rates(client.history.ach(), as_of=as_of, by="companyCode")
    assert expected["entries"].min() > 0 and expected["returns"].max() > 0  # (counted)
    rates = run(engine, store, as_of)
    pd.testing.assert_frame_equal(rates, expected, check_dtype=False, check_categorical=False)


def test_dask_without_dropna_false_loses_the_groups_of_missing_reasons(store, as_of):
    code = recipe("Dask").replace(", dropna=False", "")
    assert code != recipe("Dask")
    rates = run("Dask", store, as_of, code)
    assert rates["rate"].isna().all()  # what the docs warn of

