"""Other engines read the synced tables without paynb, and agree with ``client.history``:
the same ids, counts and exact sums per status, for every kind; and each recipe of
docs/history.md ("Reading the tables with other engines") runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from .engines import ENGINES, paynb_summary
from .test_history import KINDS

DOCS = Path(__file__).resolve().parents[2] / "docs" / "history.md"


@pytest.fixture(scope="module")
def store(client, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("engines")
    client.sync(path=path, progress=False)
    return path


@pytest.mark.parametrize("engine", list(ENGINES))
def test_every_engine_reads_what_paynb_reads(client, store, engine):
    for kind in KINDS:
        assert ENGINES[engine](store, kind) == paynb_summary(client.history, kind), kind


def recipe(engine: str) -> str:
    """The code block under the docs' heading of ``engine``."""
    text = DOCS.read_text(encoding="utf-8")
    found = re.search(rf"^\*\*{re.escape(engine)}\*\*.*?```python\n(.*?)```", text,
                      re.S | re.M)
    assert found, f"no recipe for {engine} in {DOCS}"
    return found.group(1)


@pytest.mark.parametrize("engine", ["deltalake to pandas", "Polars", "DuckDB", "Dask"])
def test_the_docs_recipes_run_as_written(client, store, engine):
    scope: dict = {"store": str(store)}
    exec(compile(recipe(engine), f"docs/history.md ({engine})", "exec"), scope)
    ach = scope["ach"]
    frame = ach.to_pandas() if hasattr(ach, "to_pandas") and not isinstance(
        ach, pd.DataFrame) else ach
    from .engines import _from_frame

    assert _from_frame(frame, "ach") == paynb_summary(client.history, "ach")
    if engine == "deltalake to pandas":
        assert len(scope["returned"]) == (frame["itemStatus"] == "R").sum()
    if engine == "Polars":
        counts = dict(zip(scope["by_status"]["itemStatus"], scope["by_status"]["len"],
                          strict=True))
        assert counts == frame["itemStatus"].value_counts().to_dict()


def test_spark_has_a_recipe_on_paper():
    assert 'format("delta")' in recipe("Spark")
