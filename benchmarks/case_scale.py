"""Case 13: a history grown to millions of items (issue 46): paynb's readers and its
compliance figures, beside what other engines take for the same work.

A synced ACH table grown by replication (``benchmarks/_grow.py``: 80 % DEMO1, 20 %
DEMO2, both companies' rows in one table). Every contender runs in a process of its
own, one after the other, so that its peak memory is its own (``VmHWM``; ``ru_maxrss``
would keep the parent's size at the fork); the import of its libraries is timed apart
and not counted in its time, but is in its peak.

**Reads** (item 1), at 1,000,000, 3,000,000 and 10,000,000 items: each reader of
``History.ach()`` (all companies; one company, ``History(path, company="DEMO1")``;
``columns=["itemStatus", "amount"]``; a range, one month of received items; ``as_of=0``)
against the same rows read by deltalake and made a pandas frame
(``to_pyarrow_table().to_pandas()``: the target, 1.5x in time and in peak memory), by
Polars (``scan_delta`` and ``collect``: its own frame) and by DuckDB (its Parquet
reader over the table's files, ``df()``). A read paynb refuses because it would not fit
(:data:`paynb.history._store.MEMORY_SHARE` of the memory available) is shown refused,
with the advice it gave; another engine's read whose peak, scaled from the size before,
would not fit in the memory available then is not run, and says so.

**Figures** (item 3), at 1,000,000 and 10,000,000 items (50,000,000 with ``--at-50m``),
DEMO1's as of the store's last day:

- **paynb**: ``compliance.return_rates(History(path, company="DEMO1"))``: the items
  grouped in DuckDB by what the figures read, then the rates from the groups;
- **DuckDB**: the plain grouped query alone (docs/compliance.md's, scoped to the company)
  over the table's current files: the floor paynb's figures are held to (1.3x);
- **Polars**: the same grouping with ``scan_delta`` (lazy) and ``collect``;
- **deltalake**: the same grouping with the table's Arrow dataset (the company's rows
  and the columns read) and Arrow's ``group_by``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks._harness import Config, Row, fmt_bytes, fmt_s

__all__ = ["run"]

COMPANY = "DEMO1"
#: The columns ``columns=`` reads (paynb adds the id).
READ_COLUMNS = ["itemStatus", "amount"]
#: paynb's readers' time and peak memory over deltalake-to-pandas', at most.
READ_TARGET = 1.5
#: Another engine's read is not run when its peak, scaled from the size before, would
#: pass this share of the memory available (the run is to be had alone on the machine:
#: deltalake's whole read of 10,000,000 items, about 15 GiB, fits 24 GiB then).
READ_SHARE = 0.75
TEXTS = ["achTransactionType", "achTransactionSubType", "achEntryClass", "itemStatus",
         "returnReason"]
DAYS = ["sendDate", "achEffectiveDate", "receivedDateTime", "returnDate", "settleDate"]
#: paynb's time over the plain DuckDB query's, and paynb's peak memory, at most.
TIME_TARGET = 1.3
MEMORY_TARGETS = {10_000_000: 2**30, 50_000_000: 2 * 2**30}
#: Seconds each measured process waits before it starts. This machine (a VM) hands the
#: memory a process lets go back to its host within about a second, and a process that
#: touches memory afresh pays several seconds a gigabyte for it; one started at once after
#: another ended reuses its pages and runs up to ten times faster (paynb's ``as_of=0`` at
#: 1M: 0.4-0.5 s right after a run, 3.2-4.7 s after a pause of 1 s or more, every time;
#: deltalake's the same). So every contender starts after the pause: on fresh memory, as
#: a user's first read in a new kernel does.
SETTLE = 3.0


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


# ---------------------------------------------------------------- the reads (item 1)

def _days(month: str) -> tuple[dt.date, dt.date]:
    first = dt.date.fromisoformat(f"{month}-01")
    return first, (first + dt.timedelta(days=32)).replace(day=1) - dt.timedelta(days=1)


def _read_paynb(path: str, reader: str, month: str) -> int:
    from paynb import History

    history = History(path, company=COMPANY if reader == "company" else None)
    if reader == "columns":
        return len(history.ach(columns=READ_COLUMNS))
    if reader == "range":
        return len(history.ach(*_days(month)))
    return len(history.ach(as_of=0 if reader == "as_of" else None))


def _read_deltalake(path: str, reader: str, month: str) -> int:
    from deltalake import DeltaTable

    table = DeltaTable(f"{path}/ach", version=0 if reader == "as_of" else None)
    partitions = {"company": [("company", "=", COMPANY)],
                  "range": [("month", "=", month)]}.get(reader)
    columns = ["achItemId", *READ_COLUMNS] if reader == "columns" else None
    return len(table.to_pyarrow_table(partitions=partitions, columns=columns).to_pandas())


def _read_polars(path: str, reader: str, month: str) -> int:
    import polars as pl

    lazy = pl.scan_delta(f"{path}/ach", version=0 if reader == "as_of" else None)
    if reader == "company":
        lazy = lazy.filter(pl.col("company") == COMPANY)
    elif reader == "range":
        lazy = lazy.filter(pl.col("month") == month)
    elif reader == "columns":
        lazy = lazy.select("achItemId", *READ_COLUMNS)
    return lazy.collect().height


def _read_duckdb(path: str, reader: str, month: str) -> int:
    import duckdb
    from deltalake import DeltaTable

    files = DeltaTable(f"{path}/ach", version=0 if reader == "as_of" else None).file_uris()
    columns = ", ".join(["achItemId", *READ_COLUMNS]) if reader == "columns" else "*"
    where = {"company": f"WHERE company = '{COMPANY}'",
             "range": f"WHERE month = '{month}'"}.get(reader, "")
    return len(duckdb.connect().sql(
        f"SELECT {columns} FROM read_parquet({files!r}, hive_partitioning = true, hive_types "
        f"= {{company: VARCHAR, month: VARCHAR}}) {where}").df())


READERS = {"all": "all companies", "company": f"one company ({COMPANY})",
           "columns": f"columns={READ_COLUMNS}", "range": "a range (one month)",
           "as_of": "as_of=0"}
READ_WITH: dict[str, Callable[[str, str, str], int]] = {
    "paynb": _read_paynb, "deltalake": _read_deltalake, "Polars": _read_polars,
    "DuckDB": _read_duckdb}
#: The engines beside paynb (``--engines`` chooses among them).
ENGINES = ("deltalake", "Polars", "DuckDB")


# ------------------------------------------------------------- the figures (item 3)

def _paynb(path: str, day: str) -> int:
    from paynb import History, compliance

    rates = compliance.return_rates(History(path, company=COMPANY), as_of=day)
    return len(rates)


CONTENDERS: dict[str, Callable[[str, str], int]] = {
    "paynb": _paynb, "DuckDB": _duckdb, "Polars": _polars, "deltalake": _deltalake}
_IMPORTS = {"paynb": ["paynb.compliance", "paynb.history", "pandas", "duckdb", "deltalake",
                      "pyarrow.dataset"],
            "DuckDB": ["duckdb", "deltalake", "pandas"], "Polars": ["polars"],
            "deltalake": ["deltalake", "pyarrow.dataset", "pandas"]}


def _peak() -> int:
    """This process's resident high-water mark (``VmHWM``: its own, where ``ru_maxrss``
    keeps the parent's resident size at the fork)."""
    with open("/proc/self/status", encoding="ascii") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_SELF)
    return used.ru_utime + used.ru_stime


def _one(task: str, name: str, path: str, arg: str) -> dict[str, Any]:
    """One run of contender ``name``, ``task`` ``figures`` or a reader of :data:`READERS`
    (``arg`` the day of the figures, or the reader's month): its figures (a read paynb
    refuses: its message as ``refused``)."""
    import importlib

    from paynb.errors import HistoryError

    began = time.perf_counter()
    for module in _IMPORTS[name]:
        importlib.import_module(module)
    imported, after_imports = time.perf_counter() - began, _peak()
    began, cpu = time.perf_counter(), _cpu()
    figures: dict[str, Any] = {}
    try:
        figures["rows"] = (CONTENDERS[name](path, arg) if task == "figures"
                           else READ_WITH[name](path, task, arg))
    except HistoryError as exc:
        if name != "paynb" or "does not fit in memory" not in str(exc):
            raise
        figures["refused"] = str(exc)
    return {**figures, "seconds": time.perf_counter() - began, "cpu": _cpu() - cpu,
            "peak": _peak(), "imports": after_imports, "import_seconds": imported}


def _spawn(task: str, name: str, path: Path, arg: str, *, apart: bool = True,
           ) -> dict[str, Any]:
    """:func:`_one` in a process of its own (``apart``), or in this one (a quick run)."""
    if not apart:
        return _one(task, name, str(path), arg)
    time.sleep(SETTLE)
    answer = subprocess.run([sys.executable, "-m", "benchmarks.case_scale", task, name,
                             str(path), arg], capture_output=True, text=True)
    if answer.returncode:
        raise RuntimeError(f"{task} {name} at {path}: "
                           f"{answer.stderr.strip().splitlines()[-1:]}")
    figures: dict[str, Any] = json.loads(answer.stdout.strip().splitlines()[-1])
    return figures


def versions() -> str:
    """The versions of what the figures depend on."""
    from importlib.metadata import version

    return ", ".join(f"{name} {version(name)}" for name in (
        "pandas", "pyarrow", "numpy", "deltalake", "duckdb", "polars"))


def _available() -> int:
    from paynb.history._store import available_memory

    return available_memory() or 0


def _median(samples: list[dict[str, Any]], key: str) -> float:
    return statistics.median(s[key] for s in samples)


def _middle_month(path: Path) -> str:
    """The middle one of the store's months (each holds about the same items)."""
    import pyarrow as pa
    from deltalake import DeltaTable

    actions = pa.table(DeltaTable(str(path / "ach")).get_add_actions(flatten=True))
    months = sorted(set(actions.column("partition.month").to_pylist()))
    return str(months[len(months) // 2])


def _reads(cfg: Config, sizes: list[int], paths: dict[int, Path]) -> list[Row]:
    """Item 1: every reader at every size, paynb beside the other engines."""
    out: list[Row] = []
    peaks: dict[tuple[str, str], tuple[int, float]] = {}  # the last size run: rows, peak
    for size in sizes:
        path, month = paths[size], _middle_month(paths[size])
        _warm(path)
        for reader, label in READERS.items():
            samples: dict[str, list[dict[str, Any]]] = {
                name: [] for name in READ_WITH if _runs(cfg, name, "deltalake")}
            skipped: dict[str, str] = {}
            names = list(samples)
            for round_ in range(cfg.rounds):
                # Each round in another order: a process run right after one that let go
                # of gigabytes ran up to ten times slower on this machine.
                for name in names[round_ % len(names):] + names[:round_ % len(names)]:
                    if name in skipped:
                        continue
                    seen = peaks.get((reader, name))
                    need = None if seen is None or reader in ("range", "as_of") \
                        else seen[1] * size / seen[0]
                    if name != "paynb" and need and need > READ_SHARE * _available():
                        skipped[name] = (f"{name} not run: it would need about "
                                         f"{fmt_bytes(need)} (its peak at {seen[0]:,} items, "
                                         f"scaled), {fmt_bytes(_available())} available")
                        continue
                    try:
                        samples[name].append(_spawn(reader, name, path, month,
                                                    apart=not cfg.quick))
                    except RuntimeError as exc:  # the other readers' figures still count
                        skipped[name] = f"{name} failed: {exc}"
            out.append(_said(_read_row(size, reader, label, samples, skipped)))
            for name, runs in samples.items():
                if runs and "refused" not in runs[0]:
                    peaks[(reader, name)] = (size, _median(runs, "peak"))
    return out


def _runs(cfg: Config, name: str, baseline: str) -> bool:
    """Whether engine ``name`` runs: paynb and ``baseline`` always, the others as
    ``--engines`` chooses."""
    return name in ("paynb", baseline) or cfg.engines is None or name in cfg.engines


def _warm(path: Path) -> None:
    """Every file of the store read once, so that no contender pays for reading it from
    disk while the next finds it in the system's cache (the first reader of a cold store,
    paynb, took 10 s where deltalake after it took 0.6 s for the same rows)."""
    for file in path.rglob("*"):
        if file.is_file():
            with file.open("rb") as data:
                while data.read(1 << 24):
                    pass


def _said(row: Row) -> Row:
    """``row``, printed as it is measured (a long run's figures are not lost with it)."""
    print(f"case {row.case}: {row.paynb} | {row.baseline} | "
          f"{'; '.join(row.notes)}", file=sys.stderr, flush=True)
    return row


def _read_row(size: int, reader: str, label: str, samples: dict[str, list[dict[str, Any]]],
              skipped: dict[str, str]) -> Row:
    """One reader at one size: paynb against deltalake-to-pandas, the others in the note."""
    counts = {name: {s["rows"] for s in runs} for name, runs in samples.items()
              if runs and "refused" not in runs[0]}
    differ = len({n for rows in counts.values() for n in rows}) > 1

    def cell(name: str) -> str:
        runs = samples[name]
        if not runs:
            return "not run"
        if "refused" in runs[0]:
            return (f"refused after {fmt_s(_median(runs, 'seconds'))}, "
                    f"peak {fmt_bytes(_median(runs, 'peak'))}")
        return f"{fmt_s(_median(runs, 'seconds'))}, peak {fmt_bytes(_median(runs, 'peak'))}"

    rows = "".join(f" ({n:,} rows)" for n in next(iter(counts.values()), set()))
    notes = [f"{name} {cell(name)} (CPU {fmt_s(_median(runs, 'cpu'))})"
             for name, runs in samples.items() if runs] + list(skipped.values())
    paynb, base = samples["paynb"], samples["deltalake"]
    ratio, met, target = None, None, f"<= {READ_TARGET}x time and peak"
    if paynb and "refused" in paynb[0]:
        notes.append(f"paynb refused the read, with the advice: {paynb[0]['refused']}")
        target = "refused with the advice if it cannot fit"
        met = not base  # refused where deltalake's read would not fit either
    elif paynb and base:
        times = _median(paynb, "seconds") / _median(base, "seconds")
        memory = _median(paynb, "peak") / _median(base, "peak")
        ratio, met = max(times, memory), max(times, memory) <= READ_TARGET
        notes.insert(0, f"paynb over deltalake: time {times:.2f}x, peak {memory:.2f}x "
                        "(the ratio column is the larger)")
    if differ:  # no engine may win by reading less
        notes.insert(0, f"the engines read different rows: {counts}")
        met = False
    return Row(f"13 read {label}, {size:,} items{rows}", cell("paynb"),
               cell("deltalake") + " (deltalake to pandas)", ratio, "", target, met, notes)


def _figures(cfg: Config, rows: int, path: Path) -> list[Row]:
    """Item 3: the compliance figures of a History beside the plain grouped query."""
    from benchmarks._grow import last_day

    day = str(last_day(path))
    samples: dict[str, list[dict[str, Any]]] = {name: [] for name in (
        ("paynb", "DuckDB") if cfg.quick else CONTENDERS) if _runs(cfg, name, "DuckDB")}
    for _ in range(cfg.rounds):
        for name, runs in samples.items():
            runs.append(_spawn("figures", name, path, day))
    floor = _median(samples["DuckDB"], "seconds")
    out = []
    for name, runs in samples.items():
        seconds, peak = _median(runs, "seconds"), _median(runs, "peak")
        ratio = seconds / floor
        target, met = "", None
        if name == "paynb":
            memory = MEMORY_TARGETS.get(rows)
            target = f"<= {TIME_TARGET}x DuckDB" + (
                f", peak <= {fmt_bytes(memory)}" if memory else "")
            met = ratio <= TIME_TARGET and (memory is None or peak <= memory)
        out.append(_said(Row(
            f"13 figures {name}, {rows:,} items", f"{fmt_s(seconds)}, peak {fmt_bytes(peak)}",
            f"{fmt_s(floor)} (DuckDB)", ratio, "", target, met,
            [f"CPU {fmt_s(_median(runs, 'cpu'))}; after imports "
             f"{fmt_bytes(_median(runs, 'imports'))} "
             f"({fmt_s(_median(runs, 'import_seconds'))}, not timed)"] + (
                [f"{COMPANY}'s figures as of {day}; median of {cfg.rounds} processes; "
                 f"{versions()}"] if name == "paynb" else []))))
    return out


def run(cfg: Config) -> list[Row]:
    """The reads at 1M, 3M and 10M items, the figures at 1M and 10M (50M with
    ``--at-50m``); quick: 20,000 items, the reads in this process (a smoke test), the
    figures of paynb and DuckDB's query alone."""
    from benchmarks._grow import grown

    reads = [20_000] if cfg.quick else [1_000_000, 3_000_000, 10_000_000]
    figures = [20_000] if cfg.quick else [1_000_000, 10_000_000]
    if cfg.huge:
        figures.append(50_000_000)
    paths = grown(reads + figures)
    print(f"case 13: load average {os.getloadavg()[0]:.1f}, "
          f"{fmt_bytes(_available())} available", file=sys.stderr, flush=True)
    rows = []
    for size in figures:  # the shorter part first
        rows += _figures(cfg, size, paths[size])
    return rows + _reads(cfg, reads, paths)


if __name__ == "__main__":
    print(json.dumps(_one(*sys.argv[1:5])))
