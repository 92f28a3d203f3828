"""The sandbox's exports: a list's records as the csv, json or xlsx document of the
service's ``/export`` endpoints. Every cell holds what the JSON holds: times as their ISO
text, numbers as numbers, an object (``iatAddenda``) as its JSON text, never a formula.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from paynb._xlsx import Sheet, write_workbook
from paynb.sandbox.tables import Kind, record_names
from paynb.sandbox.wire import dumps

__all__ = ["document"]


def document(kind: Kind, records: list[dict[str, Any]], filetype: str) -> bytes:
    """``records`` (wire records of ``kind``) as a ``csv``, ``json`` or ``xlsx`` document."""
    names = list(records[0]) if records else record_names(kind)
    if filetype == "json":
        return dumps(records)
    for record in records:
        # A cell holds text: an object (iatAddenda) goes in as its JSON.
        for name in kind.objects:
            if record[name] is not None:
                record[name] = dumps(record[name]).decode()
    if filetype == "csv":
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\r\n")
        writer.writerow(names)
        writer.writerows([r[n] for n in names] for r in records)
        return out.getvalue().encode("utf-8")
    # One sheet with a plain header row, by paynb's Arrow-to-xlsx writer (constant memory).
    import pyarrow as pa

    table = pa.table({name: pa.array([record[name] for record in records]) for name in names})
    book = io.BytesIO()
    write_workbook(book, {kind.name: Sheet(table)}, header=False)
    return book.getvalue()
