"""Bulk submission of ACH and RCC items: rows read and checked, requests of at most
:data:`BULK_CHUNK` items sent one after the other, each settled with its answers."""

from __future__ import annotations

import logging
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, cast

from paynb._checks import check_rows, columns_of_frame
from paynb._warn import user_stacklevel
from paynb.errors import BadRequestError, BulkRejectedError, ValidationError
from paynb.models import Advisory, RequestModel
from paynb.resources._base import as_mapping, frame_rows
from paynb.resources._sending import Delivery, id_of

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["BULK_CHUNK", "check_many", "rows_of", "send_bulk", "warn_advisories"]

logger = logging.getLogger("paynb.resources")

#: Largest bulk request sent at once (the sandbox takes at most 1000 items).
BULK_CHUNK = 1000
_ROW_KEY = re.compile(r"^(?:items)?\[(\d+)\]\.?(.*)$")
#: Distinct advisories of one bulk submission warned about one by one; the rest are counted.
_MAX_BULK_WARNINGS = 10


def warn_advisories(advice: list[tuple[int | None, Advisory]]) -> None:
    """One warning per distinct advisory, naming the rows it applies to (bulk)."""
    grouped: dict[tuple[str, str, type[Warning]], list[int]] = {}
    for row, advisory in advice:
        rows = grouped.setdefault((advisory.field, advisory.message, advisory.category), [])
        if row is not None:
            rows.append(row)
    for number, ((field, message, category), rows) in enumerate(grouped.items()):
        if number == _MAX_BULK_WARNINGS:
            warnings.warn(f"{len(grouped) - number} more kinds of advisories; see "
                          "client.<kind>.check_many()", category, stacklevel=user_stacklevel())
            break
        where = f" (rows {', '.join(map(str, rows[:20]))}{', ...' if len(rows) > 20 else ''})" \
            if rows else ""
        warnings.warn(f"{field}: {message}{where}; sent anyway (docs/validation.md)", category,
                      stacklevel=user_stacklevel())


def _tell(on_chunk: Callable[[int, int], None] | None, answered: int, requests: int) -> None:
    # The caller's progress display must not break a submission half sent.
    if on_chunk is None:
        return
    try:
        on_chunk(answered, requests)
    except Exception:
        logger.exception("bulk: the on_chunk callback failed (the submission goes on)")


def _records_of(items: Any) -> list[Any]:
    """The rows of a DataFrame or of a list of mappings/models, as given."""
    if hasattr(items, "to_dict") and hasattr(items, "columns"):
        return cast("list[Any]", items.to_dict("records"))
    if isinstance(items, Mapping | str | bytes) or not isinstance(items, Iterable):
        raise ValidationError.for_argument("items", "must be a DataFrame or a list of mappings")
    return list(items)


def rows_of(items: Any) -> list[dict[str, Any]]:
    """The rows of a DataFrame (:func:`frame_rows`) or of a list of mappings/models
    (:func:`as_mapping`), as plain dicts."""
    if hasattr(items, "to_dict") and hasattr(items, "columns"):
        return frame_rows(items)
    return [as_mapping(record, f"items[{n}]") for n, record in enumerate(_records_of(items))]


class _Rows(Sequence[dict[str, Any]]):
    """Rows read as ``submit_many`` reads them (:func:`as_mapping`), each built only when
    asked for (the column checks need only the rows they leave to the models)."""

    def __init__(self, count: int, row: Callable[[int], Any]) -> None:
        self._count = count
        self._row = row

    def __len__(self) -> int:
        return self._count

    def __getitem__(self, n: Any) -> Any:
        return as_mapping(self._row(n), f"items[{n}]")


def _errors_by_row(errors: Mapping[str, list[str]]) -> dict[int, dict[str, list[str]]]:
    """``{"items[3].amount": [...]}`` (or ``[3].amount``) as ``{3: {"amount": [...]}}``."""
    rows: dict[int, dict[str, list[str]]] = {}
    for key, messages in errors.items():
        match = _ROW_KEY.match(key.strip())
        if match is None:
            continue
        rows.setdefault(int(match.group(1)), {}).setdefault(match.group(2) or "item", []) \
            .extend(messages)
    return rows


def check_many(model: type[RequestModel], items: Any) -> pd.DataFrame:
    """The verdict of each row of ``items`` (see :meth:`ItemResource.check_many
    <paynb.resources._items.ItemResource.check_many>`)."""
    import numpy as np
    import pandas as pd

    if hasattr(items, "to_dict") and hasattr(items, "columns"):
        keys = list(items.columns)
        checked = check_rows(model, _Rows(len(items), lambda n: dict(zip(
            keys, items.iloc[n].tolist(), strict=True))), bodies=False,
            frame_columns=columns_of_frame(model, items))
        index = items.index
    else:
        records = _records_of(items)
        checked = check_rows(model, _Rows(len(records), records.__getitem__),
                             raw_rows=records, bodies=False)
        index = pd.RangeIndex(len(records))
    n = len(index)
    # Tuples: one shared empty tuple for the (many) rows without advisories.
    advice: list[tuple[str, ...]] = [()] * n
    for row, advisory in checked.advice:
        if row is not None:
            advice[row] = (*advice[row], f"{advisory.field}: {advisory.message}")
    errors = [checked.errors.get(row) for row in range(n)]
    valid = np.fromiter((fields is None for fields in errors), dtype=bool, count=n)
    return pd.DataFrame({"valid": valid, "errors": errors, "advisories": advice}, index=index)


def _match(chunk: list[dict[str, Any]], records: list[dict[str, Any]]
           ) -> list[dict[str, Any] | None]:
    """The answer entry of each body of ``chunk``: by position, else by reference number."""
    if len(records) == len(chunk):
        return list(records)
    logger.warning("bulk answer holds %d entries for %d items; matching by reference",
                   len(records), len(chunk))
    by_reference: dict[Any, dict[str, Any]] = {}
    for record in records:
        by_reference.setdefault(id_of(record, "yourReferenceNumber"), record)
    return [by_reference.get(body.get("yourReferenceNumber")) for body in chunk]


def send_bulk(delivery: Delivery, bodies: list[dict[str, Any]], rows: Sequence[int],
              post: Callable[[dict[str, Any]], list[dict[str, Any]]], *, commit_valid: bool,
              on_chunk: Callable[[int, int], None] | None = None,
              ) -> list[dict[str, Any] | None]:
    """Send ``bodies`` (``delivery.entries``' in order, when journaled) in requests of at
    most :data:`BULK_CHUNK` (``post(request_body)``: the records answered), each settled
    with its answers; the answer of each body. A request refused as a whole with
    ``commit_valid=False`` raises :class:`~paynb.errors.BulkRejectedError` naming the
    bodies it refused by their ``rows`` (each body's row in the caller's input)."""
    results: list[dict[str, Any] | None] = [None] * len(bodies)
    chunks = [range(start, min(start + BULK_CHUNK, len(bodies)))
              for start in range(0, len(bodies), BULK_CHUNK)]
    _tell(on_chunk, 0, len(chunks))
    for number, positions in enumerate(chunks):
        chunk = [bodies[p] for p in positions]
        entries = [delivery.entries[p] for p in positions] if delivery.entries else []
        body = {"alwaysCommitValid": commit_valid, "items": chunk}
        try:
            records = delivery.call(entries, lambda: post(body))  # noqa: B023 (called at once)
        except BaseException as exc:
            if number:
                logger.warning("bulk: %d of %d requests were answered before this one "
                               "failed; see client.journal()", number, len(chunks))
            if isinstance(exc, BadRequestError) and not commit_valid:
                refused = {rows[positions[k]]: fields
                           for k, fields in _errors_by_row(exc.errors).items() if k < len(chunk)}
                raise BulkRejectedError(
                    str(exc.args[0]), rows=refused, status=exc.status, method=exc.method,
                    path=exc.path, title=exc.title, detail=exc.detail, errors=exc.errors,
                    body=exc.body) from None
            raise
        matched = _match(chunk, records)
        for p, record in zip(positions, matched, strict=True):
            results[p] = record
        if entries:
            delivery.answered(entries, matched)
        _tell(on_chunk, number + 1, len(chunks))
    return results
