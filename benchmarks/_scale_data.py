"""A synced ACH history grown to millions of items by replication, for case 13 (issue 46).

Syncing millions of items from the sandbox would take an hour. So a small store is
synced from the sandbox for both demo companies (paynb's schema, partitions and commit
state) and its rows are copied: a chunk at a time, 80 % DEMO1's and 20 % DEMO2's rows
drawn at random, every time of a row moved by the chunk's own shift (so the copies
spread over months, each month about :data:`ITEMS_PER_MONTH` items), fresh ids, each
company's list places (``_order``) continuing, written with paynb's writer settings and
the seed's commit state. Only the ACH table is grown (the figures read no other).

Grown stores are kept under the temporary folder by size (``paynb-scale-<rows>``) and
reused: growing ten million rows takes minutes.
"""

from __future__ import annotations

import datetime as dt
import tempfile
import warnings
from pathlib import Path
from typing import Any

__all__ = ["grown", "last_day"]

SHARES = {"DEMO1": 0.8, "DEMO2": 0.2}
#: Rows written per commit, and how many of them a month of the grown table holds.
CHUNK = 250_000
ITEMS_PER_MONTH = 250_000
#: The grown items' first chunk is received from this day on (one month a chunk).
START = dt.datetime(2024, 1, 1, tzinfo=dt.UTC)


def _seed(folder: Path, items: int) -> Path:
    from paynb.sandbox import serve

    with serve(port=0, seed_items=items, seed=1) as sb, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the guards' notice of a client with no history
        for company in SHARES:
            with sb.connect(company_code=company, journal=None) as client:
                client.sync(path=folder, kinds="ach", progress=False)
    return folder


def _grow(seed: Path, target: Path, rows: int) -> None:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    from deltalake import DeltaTable, write_deltalake

    from paynb.history import _store as st

    source = DeltaTable(str(seed / "ach"))
    kept = st.state(source)
    template = source.to_pyarrow_table()
    by_company = {c: template.filter(pc.field("company") == c) for c in SHARES}
    low = pc.min(template.column("receivedDateTime")).as_py()
    times = [f.name for f in template.schema if pa.types.is_timestamp(f.type)]
    rng = np.random.default_rng(46)
    orders = dict.fromkeys(SHARES, 0)
    done, chunk_number = 0, 0
    while done < rows:
        size = min(CHUNK, rows - done)
        month = START + dt.timedelta(days=30 * chunk_number * CHUNK / ITEMS_PER_MONTH)
        shift = pa.scalar(int((month - low).total_seconds() * 1e6), pa.duration("us"))
        parts = []
        for company, share in SHARES.items():
            base = by_company[company]
            part = base.take(pa.array(rng.integers(0, base.num_rows, round(size * share))))
            part = part.set_column(part.schema.get_field_index("_order"), "_order", pa.array(
                np.arange(orders[company], orders[company] + part.num_rows)))
            orders[company] += part.num_rows
            parts.append(part)
        chunk = pa.concat_tables(parts).combine_chunks()
        for name in times:
            at = chunk.schema.get_field_index(name)
            chunk = chunk.set_column(at, chunk.schema.field(at), pc.add(chunk.column(name), shift))
        chunk = chunk.set_column(
            chunk.schema.get_field_index("achItemId"), "achItemId",
            pa.array(np.arange(done + 1, done + 1 + chunk.num_rows)).cast(
                chunk.schema.field("achItemId").type))
        chunk = chunk.set_column(chunk.schema.get_field_index("month"), "month",
                                 st.months(chunk.column("receivedDateTime")))
        first = done == 0
        write_deltalake(str(target / "ach"), chunk, mode="overwrite" if first else "append",
                        partition_by=list(st.PARTITIONS), writer_properties=st.writer(),
                        commit_properties=st.commit_properties(kept),
                        **(st.created("ach") if first else {}))
        done += chunk.num_rows
        chunk_number += 1


def grown(rows: int, seed_items: int = 2_000) -> Path:
    """The folder of a store of ``rows`` grown ACH items (made the first time)."""
    import shutil

    folder = Path(tempfile.gettempdir()) / f"paynb-scale-{rows}"
    done = folder / "grown"
    if done.exists():
        return folder
    shutil.rmtree(folder, ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="paynb-scale-seed-") as seed:
        _grow(_seed(Path(seed), seed_items), folder, rows)
    done.write_text(f"{rows}\n")
    return folder


def last_day(folder: Path) -> Any:
    """The last received day of a grown store: the figures are measured as of it."""
    import duckdb
    from deltalake import DeltaTable

    files = DeltaTable(str(folder / "ach")).file_uris()
    return duckdb.sql(f"SELECT max(receivedDateTime)::date FROM read_parquet({files!r})"
                      ).fetchall()[0][0]
