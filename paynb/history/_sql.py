"""The SQL views of a history (:meth:`paynb.History.sql` and ``connect``): DuckDB over the
tables' committed Parquet files, one in-memory database per process."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from paynb.history import _store as st

if TYPE_CHECKING:
    from deltalake import DeltaTable

#: No rows of a table (its columns): made once, the same for every History.
empty = functools.cache(st.empty)


@functools.cache
def _database(process: int) -> Any:
    """The DuckDB database of ``process``'s SQL connections: each :meth:`History.connect`
    is a cursor of it (views and settings of its own), and they share its cache of
    Parquet footers (a Delta table's files never change). Per process: a database is not
    shared across a fork."""
    import duckdb

    database = duckdb.connect()
    database.execute("SET parquet_metadata_cache = true")
    return database


@functools.lru_cache(maxsize=256)
def _one_schema(files: tuple[str, ...]) -> bool:
    """Whether the Parquet ``files`` all hold the same columns, of the same types: DuckDB
    then reads them as one schema, else by name (twice the time of a query, and of its
    planning). Known once per set of files: a committed file never changes (a store made
    anew has files of other names)."""
    with _database(os.getpid()).cursor() as connection:
        ((schemas,),) = connection.sql(
            "SELECT count(DISTINCT columns) FROM (SELECT string_agg(name || ' ' || type, "
            f"', ' ORDER BY name) AS columns FROM parquet_schema({_listed(files)}) "
            "GROUP BY file_name)").fetchall()
    return bool(schemas == 1)


def _listed(files: Iterable[str]) -> str:
    """``files`` as an SQL list of texts."""
    return f"[{', '.join(map(st.quoted, files))}]"


def parquet_source(store: st.Store, name: str, table: DeltaTable) -> str | None:
    """DuckDB's reading of ``table`` (named ``name``, of ``store``) from its committed
    Parquet files, its partitions as columns (a ``FROM`` clause's source); None when
    DuckDB's own reader cannot read them as Delta does (:meth:`Store.parquet_files`)."""
    files = store.parquet_files(name, table)
    if not files:
        return None
    hive = ", ".join(f"{c}: VARCHAR" for c in (
        st.EVENT_PARTITIONS if name == st.EVENTS else st.PARTITIONS))
    by_name = "" if len(files) == 1 or _one_schema(tuple(files)) else ", union_by_name = true"
    return (f"read_parquet({_listed(files)}, hive_partitioning = true, "
            f"hive_types = {{{hive}}}{by_name})")


def cursor() -> Any:
    """A new cursor of the process's database, its times in UTC."""
    connection = _database(os.getpid()).cursor()
    connection.execute("SET TimeZone = 'UTC'")  # (a cursor's own setting)
    return connection


def views(store: st.Store, tables: Mapping[str, DeltaTable | None], company: str | None,
          ) -> Any:
    """A cursor of the process's database with a view of each of ``tables`` (of
    ``store``; None: not made yet, its columns), of ``company``'s rows only when given."""
    scope = f" WHERE company = {st.quoted(company)}" if company else ""
    connection = cursor()
    try:
        for name, table in tables.items():  # a table not there yet: its columns
            source = None if table is None else parquet_source(store, name, table)
            if source is None:
                connection.register(f"{name}_data", empty(name) if table is None
                                    else table.to_pyarrow_dataset())
                source = f"{name}_data"
            hidden = "" if name == st.EVENTS else " EXCLUDE (" + ", ".join(
                f'"{c}"' for c in st.INTERNAL) + ") "
            connection.execute(f"CREATE TEMP VIEW {name} AS SELECT *{hidden} FROM "
                               f"{source}{scope}")
    except BaseException:
        connection.close()
        raise
    return connection
