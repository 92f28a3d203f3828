"""Case 13: the compliance figures of a history grown to millions of items (issue 46).

A synced ACH table grown by replication (``benchmarks/_scale_data.py``: 80 % DEMO1, 20 %
DEMO2) to 1,000,000 and 10,000,000 items (50,000,000 with ``--at-50m``). For DEMO1, as
of the store's last day:

- **paynb**: ``compliance.return_rates(History(path, company="DEMO1"))``: the items
  grouped in DuckDB by what the figures read, then the rates from the groups;
- **DuckDB**: the plain grouped query alone (docs/compliance.md's, scoped to the company)
  over the table's current files: the floor paynb's figures are held to (1.3x);
- **Polars**: the same grouping with ``scan_delta`` (lazy) and ``collect``;
- **deltalake**: the same grouping with the table's Arrow dataset (the company's rows
  and the columns read) and Arrow's ``group_by``.

Each contender runs in a process of its own, one after the other in each round, so that
its peak memory (``ru_maxrss``) is its own; the import of its libraries is timed apart
and not counted in its time, but is in its peak (the "after imports" figure says how
much of the peak is the libraries').
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks._harness import Config, Row, fmt_bytes, fmt_s

__all__ = ["run"]

COMPANY = "DEMO1"
TEXTS = ["achTransactionType", "achTransactionSubType", "achEntryClass", "itemStatus",
         "returnReason"]
DAYS = ["sendDate", "achEffectiveDate", "receivedDateTime", "returnDate", "settleDate"]
#: paynb's time over the plain DuckDB query's, and paynb's peak memory, at most.
TIME_TARGET = 1.3
MEMORY_TARGETS = {10_000_000: 2**30, 50_000_000: 2 * 2**30}


def _duckdb(path: str, day: str) -> int:
    import duckdb
    from deltalake import DeltaTable

    connection = duckdb.connect()
    connection.execute("SET TimeZone = 'UTC'")
    files = DeltaTable(f"{path}/ach").file_uris()
    connection.execute(f"CREATE VIEW ach AS SELECT * FROM read_parquet({files!r}, "
                       "hive_partitioning = true, hive_types = {company: VARCHAR, "
                       "month: VARCHAR})")
    days = ", ".join(f'"{c}"::date AS "{c}"' for c in DAYS)
    grouped = connection.sql(
        f"SELECT {', '.join(TEXTS)}, {days}, sign(amount) AS sign, sum(amount) AS amount, "
        f"count(*) AS items FROM ach WHERE company = '{COMPANY}' GROUP BY ALL"
    ).to_arrow_table()
    return grouped.num_rows


def _polars(path: str, day: str) -> int:
    import polars as pl

    grouped = (pl.scan_delta(f"{path}/ach").filter(pl.col("company") == COMPANY)
               .group_by(*TEXTS, *[pl.col(c).dt.date() for c in DAYS],
                         pl.col("amount").sign().alias("sign"))
               .agg(pl.col("amount").sum(), pl.len().alias("items")).collect())
    return grouped.height


def _deltalake(path: str, day: str) -> int:
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds
    from deltalake import DeltaTable

    table = DeltaTable(f"{path}/ach").to_pyarrow_dataset().to_table(
        columns=[*TEXTS, *DAYS, "amount"], filter=ds.field("company") == COMPANY)
    for name in DAYS:
        at = table.schema.get_field_index(name)
        utc = table.column(name).cast(pa.timestamp("us"))  # the UTC wall clock
        table = table.set_column(at, name, utc.cast(pa.date32()))
    table = table.append_column("sign", pc.sign(table.column("amount").cast(pa.float64())))
    grouped = table.group_by([*TEXTS, *DAYS, "sign"], use_threads=True).aggregate(
        [("amount", "sum"), ([], "count_all")])
    return grouped.num_rows


def _paynb(path: str, day: str) -> int:
    from paynb import History, compliance

    rates = compliance.return_rates(History(path, company=COMPANY), as_of=day)
    return len(rates)


CONTENDERS = {"paynb": _paynb, "DuckDB": _duckdb, "Polars": _polars, "deltalake": _deltalake}
_IMPORTS = {"paynb": ["paynb.compliance", "paynb.history", "duckdb", "deltalake"],
            "DuckDB": ["duckdb", "deltalake"], "Polars": ["polars"],
            "deltalake": ["deltalake", "pyarrow.dataset"]}


def _peak() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def worker(name: str, path: str, day: str) -> None:
    """One run of contender ``name`` in this process: prints its figures as JSON."""
    import importlib

    began = time.perf_counter()
    for module in _IMPORTS[name]:
        importlib.import_module(module)
    imported, after_imports = time.perf_counter() - began, _peak()
    began = time.perf_counter()
    rows = CONTENDERS[name](path, day)
    seconds = time.perf_counter() - began
    print(json.dumps({"seconds": seconds, "peak": _peak(), "imports": after_imports,
                      "import_seconds": imported, "rows": rows}))


def _spawn(name: str, path: Path, day: str) -> dict[str, Any]:
    answer = subprocess.run([sys.executable, "-m", "benchmarks.case_scale", name, str(path),
                             day], capture_output=True, text=True)
    if answer.returncode:
        raise RuntimeError(f"{name} at {path}: {answer.stderr.strip().splitlines()[-1:]}")
    figures: dict[str, Any] = json.loads(answer.stdout.strip().splitlines()[-1])
    return figures


def versions() -> str:
    """The versions of what the figures depend on."""
    from importlib.metadata import version

    return ", ".join(f"{name} {version(name)}" for name in (
        "pandas", "pyarrow", "numpy", "deltalake", "duckdb", "polars"))


def _measure(cfg: Config, rows: int) -> list[Row]:
    from benchmarks._scale_data import grown, last_day

    path = grown(rows)
    day = str(last_day(path))
    samples: dict[str, list[dict[str, Any]]] = {name: [] for name in CONTENDERS}
    for _ in range(cfg.rounds):
        for name in CONTENDERS:
            samples[name].append(_spawn(name, path, day))

    def median(name: str, key: str) -> float:
        return statistics.median(s[key] for s in samples[name])

    floor = median("DuckDB", "seconds")
    out = []
    for name in CONTENDERS:
        seconds, peak = median(name, "seconds"), median(name, "peak")
        ratio = seconds / floor
        target, met = "", None
        if name == "paynb":
            memory = MEMORY_TARGETS.get(rows)
            target = f"<= {TIME_TARGET}x DuckDB" + (
                f", peak <= {fmt_bytes(memory)}" if memory else "")
            met = ratio <= TIME_TARGET and (memory is None or peak <= memory)
        out.append(Row(
            f"13 {name}, {rows:,} items", f"{fmt_s(seconds)}, peak {fmt_bytes(peak)}",
            f"{fmt_s(floor)} (DuckDB)", ratio, "", target, met,
            [f"{COMPANY}'s figures as of {day}; median of {cfg.rounds} processes; "
             f"after imports {fmt_bytes(median(name, 'imports'))} "
             f"({fmt_s(median(name, 'import_seconds'))}, not timed); {versions()}"]
            if name == "paynb" else []))
    return out


def run(cfg: Config) -> list[Row]:
    """The figures at 1M and 10M items (50M with ``--at-50m``; 20,000 quick)."""
    sizes = [20_000] if cfg.quick else [1_000_000, 10_000_000]
    if cfg.huge:
        sizes.append(50_000_000)
    rows = []
    for size in sizes:
        rows += _measure(cfg, size)
    return rows


if __name__ == "__main__":
    worker(*sys.argv[1:4])
