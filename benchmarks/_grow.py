"""A synced ACH history grown to millions of items by replication (issue 46).

Syncing millions of items from the sandbox takes an hour; reading them back takes
seconds. So a small store is synced from the sandbox for both demo companies (paynb's
schema, partitions, layout and commit state), and its rows are copied to the size
wanted: each copy with fresh ids and dates (its received times spread over its own
slice of time, every other time of a row moved with its received time), 80 % of the
rows DEMO1's and 20 % DEMO2's, the ids in the order of the received times, each
company's list places (``_order``) from 0 in id order, as a backfill writes them. The
rows are written a slice of time at a time, in id order, with paynb's writer settings
and table configuration; the last commit carries the state a sync would (counts by
status, next list place, watermark), and the events table one event per item.

Grown stores are kept (:func:`grown`) under ``$BENCH_DATA`` (default: the
temporary folder), one folder per size, and reused: growing ten million rows takes many
minutes. Growing the largest size asked for also keeps the smaller ones on the way: a
store of the first N rows is the big one as it stood after N rows were committed, kept
as a copy (its Parquet files hard links; its logs copied).

``python -m benchmarks._grow PATH ROWS`` makes one (``--seed-items``: the store synced
first, default 2,000 items).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

__all__ = ["grow", "grown", "last_day", "seed_store"]

#: Items a month of the grown table holds (the copies' received times are spread so).
ITEMS_PER_MONTH = 250_000
#: Rows written per transaction.
CHUNK = 250_000
SHARES = {"DEMO1": 0.8, "DEMO2": 0.2}


def seed_store(folder: Path, items: int = 2_000, seed: int = 1) -> Path:
    """A store of ``items`` sandbox items synced for both demo companies."""
    from paynb.sandbox import serve

    with serve(port=0, seed_items=items, seed=seed) as sb, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the guards' notice of a client with no history
        for company in SHARES:
            with sb.connect(company_code=company, journal=None) as client:
                client.sync(path=folder, kinds="ach", progress=False)
    return folder


def _times(table: Any) -> list[str]:
    import pyarrow as pa

    return [f.name for f in table.schema if pa.types.is_timestamp(f.type)
            and f.name not in ("_seenAt",)]


def grow(seed: Path, target: Path, rows: int, *, start: dt.datetime | None = None,
         stops: Iterable[int] = (), at_stop: Callable[[int], None] | None = None) -> Path:
    """Write at ``target`` a store of ``rows`` ACH items copied from the store ``seed``
    (see the module's description); returns ``target``. ``at_stop(n)`` is called once
    the first ``n`` rows are committed, for each ``n`` of ``stops``."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    from deltalake import DeltaTable, write_deltalake

    from paynb.history import _store as st

    source = DeltaTable(str(seed / "ach"))
    kept = st.state(source)
    template = source.to_pyarrow_table()
    by_company = {c: template.filter(pc.field("company") == c) for c in SHARES}
    received = template.column("receivedDateTime")
    low = pc.min(received).as_py()
    span = max((pc.max(received).as_py() - low).total_seconds(), 1.0)
    start = start or dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    times = _times(template)
    rng = np.random.default_rng(46)
    orders = dict.fromkeys(SHARES, 0)
    counts: dict[str, dict[str, int]] = {c: {} for c in SHARES}
    next_id = 1
    target.mkdir(parents=True, exist_ok=True)
    done = 0
    ends = sorted({n for n in stops if 0 < n < rows} | {rows})
    while done < rows:
        size = min(CHUNK, next(n for n in ends if n > done) - done)
        # This chunk's slice of time: a month holds ITEMS_PER_MONTH items.
        month_seconds = 30 * 86_400 * size / ITEMS_PER_MONTH
        parts = []
        for company, share in SHARES.items():
            base = by_company[company]
            picks = rng.integers(0, base.num_rows, int(round(size * share)))
            parts.append(base.take(pa.array(picks)))
        chunk = pa.concat_tables(parts)
        # New received times: this chunk's slice of time, each row where its seed row
        # lay in the seed's span (plus a little noise: no two copies alike).
        old = chunk.column("receivedDateTime")
        offset = (pc.subtract(old, pa.scalar(low, old.type)).cast(pa.int64()).to_numpy(
            zero_copy_only=False) / 1e6) / span
        offset = np.clip(offset + rng.uniform(-0.01, 0.01, len(offset)), 0, 0.9999)
        slice_start = start + dt.timedelta(seconds=30 * 86_400 * done / ITEMS_PER_MONTH)
        new = pa.array((np.datetime64(slice_start.replace(tzinfo=None), "us")
                        + (offset * month_seconds * 1e6).astype("timedelta64[us]")),
                       pa.timestamp("us", "UTC"))
        shift = pc.subtract(new, old.combine_chunks())
        for name in times:
            at = chunk.schema.get_field_index(name)
            chunk = chunk.set_column(at, chunk.schema.field(at),
                                     pc.add(chunk.column(name).combine_chunks(), shift))
        chunk = chunk.take(pc.sort_indices(chunk, [("receivedDateTime", "ascending")]))
        ids = np.arange(next_id, next_id + chunk.num_rows, dtype=np.int64)
        next_id += chunk.num_rows
        chunk = chunk.set_column(chunk.schema.get_field_index("achItemId"), "achItemId",
                                 pa.array(ids).cast(chunk.schema.field("achItemId").type))
        company = chunk.column("company").to_numpy(zero_copy_only=False)
        order = np.zeros(chunk.num_rows, dtype=np.int64)
        for name in SHARES:
            mine = company == name
            order[mine] = np.arange(orders[name], orders[name] + int(mine.sum()))
            orders[name] += int(mine.sum())
            for status, n in zip(*np.unique(chunk.column("itemStatus").to_numpy(
                    zero_copy_only=False)[mine].astype(str), return_counts=True), strict=True):
                counts[name][status] = counts[name].get(status, 0) + int(n)
        chunk = chunk.set_column(chunk.schema.get_field_index("_order"), "_order",
                                 pa.array(order))
        chunk = chunk.set_column(chunk.schema.get_field_index("month"), "month",
                                 st.months(chunk.column("receivedDateTime")))
        # As a backfill writes: the rows in list order (per company, id order).
        chunk = chunk.take(pc.sort_indices(chunk, [("company", "ascending"),
                                                   ("_order", "ascending")]))
        done += chunk.num_rows
        state = {**kept, "companies": {name: {
            **kept["companies"][name], "counts": counts[name], "nextOrder": orders[name],
            "watermark": pc.max(chunk.column("returnDate")).as_py().isoformat()
            if chunk.column("returnDate").null_count < chunk.num_rows else None}
            for name in SHARES}}
        first = done == chunk.num_rows
        write_deltalake(str(target / "ach"), chunk, mode="overwrite" if first else "append",
                        partition_by=list(st.PARTITIONS), writer_properties=st.writer(),
                        commit_properties=st.commit_properties(state),
                        **(st.created("ach") if first else {}))
        events = st.event_rows("ach", "", chunk.column("achItemId").cast(pa.string()),
                               chunk.column("itemStatus"), chunk.column("_seenAt"))
        events = events.set_column(4, "company", chunk.column("company"))
        write_deltalake(str(target / "events"), events, mode="overwrite" if first else "append",
                        partition_by=list(st.EVENT_PARTITIONS), writer_properties=st.writer(),
                        commit_properties=st.commit_properties({k: v for k, v in state.items()
                                                                if k != "companies"}),
                        **(st.created(st.EVENTS) if first else {}))
        if at_stop is not None and done in ends and done < rows:
            at_stop(done)
    return target


def _data() -> Path:
    return Path(os.environ.get("BENCH_DATA") or tempfile.gettempdir())


def _kept(folder: Path, into: Path) -> None:
    """A copy of the store ``folder`` as it stands: its data files hard links (a Delta
    table never rewrites one), its logs copied (a later commit rewrites
    ``_last_checkpoint``)."""
    def link(source: str, target: str) -> None:
        if f"{os.sep}_delta_log{os.sep}" in source:
            shutil.copy2(source, target)
        else:
            os.link(source, target)

    shutil.copytree(folder, into, copy_function=link)


def grown(sizes: Iterable[int], seed_items: int = 2_000) -> dict[int, Path]:
    """A store of each of ``sizes`` rows (grown the first time, then kept and reused:
    see the module's description): size -> its folder."""
    wanted = sorted(set(sizes))
    folders = {n: _data() / f"paynb-grown-{n}" for n in wanted}
    missing = [n for n in wanted if not (folders[n] / "grown").exists()]
    if missing:
        for n in missing:
            shutil.rmtree(folders[n], ignore_errors=True)
        largest = missing[-1]

        def keep(n: int) -> None:
            if n in missing:
                _kept(folders[largest], folders[n])
                (folders[n] / "grown").write_text(f"{n}\n")

        with tempfile.TemporaryDirectory(prefix="paynb-grow-seed-") as seed:
            grow(seed_store(Path(seed), seed_items), folders[largest], largest,
                 stops=missing, at_stop=keep)
        (folders[largest] / "grown").write_text(f"{largest}\n")
    return folders


def last_day(folder: Path) -> dt.date:
    """The last received day of the store at ``folder`` (the figures are measured as of
    it)."""
    import pyarrow.compute as pc
    from deltalake import DeltaTable

    received = DeltaTable(str(folder / "ach")).to_pyarrow_dataset().to_table(
        columns=["receivedDateTime"]).column("receivedDateTime")
    last: dt.datetime = pc.max(received).as_py()
    return last.date()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("path", type=Path)
    parser.add_argument("rows", type=int)
    parser.add_argument("--seed-items", type=int, default=2_000)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="paynb-grow-"))
    try:
        grow(seed_store(folder / "seed", args.seed_items), args.path, args.rows)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
