"""The sync's index of what the store holds: each stored item's fingerprint, list place and
status by id, read as the sync asks, with the rows it stages noted in; and the
fingerprints themselves. Only the items whose fingerprint changed are written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from paynb.history import _store as st
from paynb.resources import CHANGE_STATUSES, ChangeFeed

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    from deltalake import DeltaTable

__all__ = ["StoredIndex", "fingerprints"]


class StoredIndex:
    """The stored items of ``kind`` of ``company`` in ``table`` (None: none yet) that a
    sync has looked up, and those it has staged since."""

    def __init__(self, store: st.Store, kind: str, company: str,
                 table: DeltaTable | None) -> None:
        import pandas as pd

        self.store, self.kind, self.company, self.table = store, kind, company, table
        self.id_field, self.status_field = st.ID_FIELDS[kind], st.STATUS_FIELDS[kind]
        #: The stored columns a look-up reads.
        self.compared = [self.id_field, "_hash", "_order", *filter(None, [self.status_field])]
        #: Stored rows looked up so far (and rows staged since): _hash, _order, status.
        self.known = pd.DataFrame({"_hash": [], "_order": [], "status": []})
        self.asked: set[Any] = set()

    def lookup(self, ids: Sequence[Any]) -> pd.DataFrame:
        """Fingerprint, list position and status by id of the stored items among ``ids``
        (and of those asked before): the files are pruned by company and by the range of
        ids each holds (the list's order keeps ids together), then the rows are picked."""
        import pandas as pd
        import pyarrow as pa
        import pyarrow.compute as pc

        new = [i for i in dict.fromkeys(ids) if not pd.isna(i) and i not in self.asked]
        self.asked.update(new)
        if not new or self.table is None:
            return self.known
        field = self.id_field
        try:
            wanted = pa.array(new).cast(pa.schema(self.table.schema().to_arrow())
                                        .field(field).type)
        except (pa.ArrowException, TypeError, ValueError):
            return self.known  # ids of another type: none is stored
        bounds = pc.min_max(wanted)
        self._keep(self.scan(self.compared, pc.field(field).isin(wanted), [
            (field, ">=", bounds["min"].as_py()), (field, "<=", bounds["max"].as_py())]))
        return self.known

    def held_in_overlap(self, feed: ChangeFeed) -> int:
        """How many returns the store holds in the overlap of ``feed`` (the day before
        its watermark). The files whose return dates reach that day are read whole (their
        look-up columns): they are the recent items', where the poll's items and the
        list's end lie, so the look-ups that follow need not read them again."""
        import pyarrow.compute as pc

        start, end = feed.start(), feed.mark
        rows = self.scan([*self.compared, "returnDate"], None,
                         [("returnDate", ">=", start), ("returnDate", "<=", end)])
        self._keep(rows)
        return rows.filter((pc.field("returnDate") >= start) & (pc.field("returnDate") <= end)
                           & pc.field(self.status_field).isin(list(CHANGE_STATUSES))).num_rows

    def oldest(self, status: str) -> int | None:
        """The list place of the oldest item the store holds in ``status`` (None: none)."""
        import pyarrow.compute as pc

        found: int | None = pc.min(self.scan(["_order"], pc.field(self.status_field) == status,
                                             [(self.status_field, "=", status)])
                                   .column("_order")).as_py()
        return found

    def scan(self, columns: list[str] | None, condition: Any, files: list[Any]) -> pa.Table:
        """The company's stored rows meeting ``condition``, read from the files that
        ``files`` (conditions on partitions and statistics) selects: a dataset of every
        file costs a sync more than the reads it saves."""
        assert self.table is not None  # (an incremental sync's)
        return self.store.scan(self.kind, self.table, [("company", "=", self.company), *files],
                               columns, condition)

    def note(self, ids: Any, hashes: Any, orders: Any, status: Any) -> None:
        """Keep stored (or staged) rows: later look-ups of these ids compare with them."""
        import pandas as pd

        part = pd.DataFrame({"_hash": hashes, "_order": orders, "status": status},
                            index=pd.Index(ids))
        kept = self.known[~self.known.index.isin(part.index)]
        self.known = part if kept.empty else pd.concat([kept, part])

    def _keep(self, rows: pa.Table) -> None:
        """Keep the stored ``rows`` read (columns :attr:`compared`) for the look-ups."""
        ids = rows.column(self.id_field).to_numpy(zero_copy_only=False)
        self.asked.update(ids.tolist())
        if rows.num_rows:
            self.note(ids, rows.column("_hash").to_numpy(), rows.column("_order").to_numpy(),
                      rows.column(self.status_field).to_numpy(zero_copy_only=False)
                      if self.status_field else None)


#: Mixes a column's name into its values' hashes (FNV's prime).
_PRIME = 0x100000001B3


def fingerprints(table: pa.Table) -> np.ndarray:
    """A 64-bit fingerprint of each row's content, as signed integers.

    The sum over the columns (so their order does not count) of each value's hash mixed
    with its column's name; a null adds nothing (so a column that some batches lack
    does not count where it is empty). paynb's own columns are left out. Texts (and
    decimals, by their text) are hashed once per distinct value, across the columns;
    whole numbers, times and booleans as 64-bit integers, other numbers as floats.
    """
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    rows = table.num_rows
    total = np.zeros(rows, dtype=np.uint64)
    texts = []
    with np.errstate(over="ignore"):
        for name in table.column_names:
            if name in st.HIDDEN:
                continue
            column = table.column(name)
            if pa.types.is_string(column.type) or pa.types.is_decimal(column.type):
                texts.append((name, column.cast(pa.large_string())))
                continue
            # As 64-bit values whatever the nulls (to_numpy makes floats of whole numbers
            # with nulls: the hash would depend on the batch).
            plain = column.fill_null(0.0) if pa.types.is_floating(column.type) else \
                column.cast(pa.int64()).fill_null(0)
            hashed = pd.util.hash_array(plain.to_numpy(), categorize=False)
            total += _mixed([name], hashed, column.is_valid())
        if texts:
            joined = pa.chunked_array([chunk for _, c in texts for chunk in c.chunks],
                                      pa.large_string()).combine_chunks()
            encoded = pc.dictionary_encode(joined)
            distinct = pd.util.hash_array(encoded.dictionary.to_numpy(zero_copy_only=False),
                                          categorize=False)
            codes = encoded.indices.fill_null(0).to_numpy()
            hashed = distinct[codes] if len(distinct) else np.zeros(len(codes), np.uint64)
            total += _mixed([name for name, _ in texts], hashed, joined.is_valid())
    return total.view(np.int64)


def _mixed(names: list[str], hashed: np.ndarray, valid: Any) -> np.ndarray:
    """The part of columns ``names`` (their values one column after another) in each
    row's fingerprint."""
    import numpy as np

    salts = np.array([int.from_bytes(name.encode("utf-8")[:8].ljust(8, b"\0"), "little") | 1
                      for name in names], dtype=np.uint64)
    shape = (len(names), len(hashed) // max(1, len(names)))
    mixed = (hashed.reshape(shape) ^ salts[:, None]) * np.uint64(_PRIME)
    present = np.asarray(valid.to_numpy(zero_copy_only=False), dtype=bool).reshape(shape)
    parts: np.ndarray = np.where(present, mixed, np.uint64(0)).sum(axis=0, dtype=np.uint64)
    return parts
