"""Bulk pre-validation column by column: the fast path of ``check_many`` and ``submit_many``.

One pydantic model per row is about 20 µs: a 100,000-row file waits two seconds. Here each
field's rule runs once per *column* (:mod:`paynb._columns` judges its UTF-8 bytes; listed
values by their distinct combinations), and vouches only for what is *certainly* valid
with no advisory under the models' rules. Every other row is judged by
:func:`paynb.models.check`, so verdicts, messages and wire bodies are the models' by
construction (docs/reference/internals.md names the tests that hold both equal).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from itertools import repeat
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError as PydanticValidationError

from paynb import codes
from paynb import validation as rules
from paynb._columns import Judged, Rule, vouch
from paynb.models import AchItem, Advisory, RccItem, RequestModel, field_errors

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa

__all__ = ["CheckedRows", "check_columns", "check_rows", "columns_of_frame"]

_NAME = Rule("text", required=True, max_length=50)
_OPTIONAL_NAME = Rule("text", max_length=50)
_COMMON = {
    "state": Rule("state", required=True),
    "yourReferenceNumber": Rule("reference", required=True, max_length=50),
    "bankRoutingNumber": Rule("routing", required=True),
    "bankAccountNumber": Rule("characters", required=True, min_length=4, max_length=17,
                              pattern="0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                      "abcdefghijklmnopqrstuvwxyz-"),
    "amount": Rule("amount", required=True),
}


def _free(width: int | None = None) -> Rule:
    # Optional free text: a value longer than its NACHA width is an advisory, so the models
    # judge it (the fast path vouches only for rows without advisories).
    return Rule("text", max_length=width)


#: What the fast path knows, per model. Fields left out here (a sub-type, a transaction
#: code, dates, same-day, IAT addenda ...) send their rows to the models when present.
_RULES: dict[type[RequestModel], dict[str, Rule]] = {
    AchItem: {
        "firstSignerFirstName": _NAME, "firstSignerLastName": _NAME,
        # ^[0-9]{5}(?:[- ][0-9]{4})?$
        "zip": Rule("zip", required=True, pattern="- "),
        **_COMMON,
        "achAccountType": Rule("choice", choices=frozenset(codes.ACH_ACCOUNT_TYPES)),
        # IAT needs its addenda (an error without them, a cross-field rule): the models judge.
        "achEntryClass": Rule("choice", choices=frozenset(codes.ACH_ENTRY_CLASSES) - {"IAT"}),
        "achTransactionType": Rule("choice", required=True,
                                    choices=frozenset(rules.ACH_TRANSACTION_TYPES)),
        "address1": _free(), "address2": _free(), "city": _free(),
        "achIdentificationNumber": _free(15), "achCompanyEntryDescription": _free(10),
        "achCompanyDiscretionaryData": _free(20), "achAddendaText": _free(80),
    },
    RccItem: {
        "firstSignerFirstName": _NAME, "firstSignerLastName": _NAME,
        "secondSignerFirstName": _OPTIONAL_NAME, "secondSignerLastName": _OPTIONAL_NAME,
        "address1": _NAME, "address2": _OPTIONAL_NAME, "city": _NAME,
        "zip": Rule("zip", required=True, pattern=" "),  # ^[0-9]{5}(?: [0-9]{4})?$
        **_COMMON,
    },
}


@dataclass
class CheckedRows:
    """The verdicts of a bulk check: wire bodies of the valid rows, errors of the others
    (per field, as :func:`paynb.models.field_errors` words them), advisories of valid rows."""

    bodies: dict[int, dict[str, Any]]
    errors: dict[int, dict[str, list[str]]]
    advice: list[tuple[int | None, Advisory]]
    #: How many rows the columns vouched for (the rest went through the models).
    fast: int = 0


def _wire_order(model: type[RequestModel]) -> list[str]:
    return [info.alias or name for name, info in model.model_fields.items()]


def _defaults(model: type[RequestModel], names: Iterable[str]) -> dict[str, Any]:
    """The wire values the model fills in for absent fields (``achAccountType`` Checking)."""
    by_wire = {info.alias or name: info for name, info in model.model_fields.items()}
    return {name: by_wire[name].default for name in names
            if by_wire[name].default is not None and not by_wire[name].is_required()}


def check_columns(model: type[RequestModel], columns: Mapping[str, Sequence[Any]],
                  usable: np.ndarray, *, present: Mapping[str, np.ndarray] | None = None,
                  lengths: np.ndarray | None = None
                  ) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The rows the columns vouch for, and which fields each row has.

    ``columns`` holds the values of the fields the fast path knows, ``usable`` the rows
    that have no other field and no value the columns cannot read. ``present`` says
    which rows have each field (default: the values that are not ``None``); with
    ``lengths`` (the number of keys of each row) a row must have no key beyond them.
    """
    import numpy as np

    fast = usable.copy()
    known = np.zeros(len(fast), dtype=np.int64)
    holds: dict[str, np.ndarray] = {}
    for name, rule in _RULES[model].items():
        if name not in columns:
            if rule.required:
                fast[:] = False
            continue
        ok, has = vouch(rule, columns[name])
        has = present[name] if present is not None else has
        holds[name] = has
        known += has
        if rule.required:
            fast &= has
        fast &= ok | ~has
    if lengths is not None:
        # A row with any other key (a field the fast path leaves to the models, a misspelt
        # or snake_case name, a None value) is not vouched for: its length gives it away.
        fast &= lengths == known
    return fast, holds


def _choices_of_rows(model: type[RequestModel], rows: Sequence[dict[str, Any]],
                     names: list[str]) -> dict[str, Judged]:
    """The fields of a closed list of values (states, the known spellings of the open sets)
    judged by the distinct combinations of their values: one set of tuples built in C
    instead of a column of text per field; a row's own verdict is looked up only for a
    value off the list. Empty when some row lacks one of them or holds an unhashable value
    (the Arrow columns then judge them)."""
    import numpy as np

    listed = {name: rules.US_STATES if _RULES[model][name].kind == "state"
              else _RULES[model][name].choices
              for name in names if _RULES[model][name].kind in ("state", "choice")}
    if not listed:
        return {}
    get = itemgetter(*listed)
    n = len(rows)
    every = np.ones(n, dtype=bool)
    judged = {}
    try:
        combinations = set(map(get, rows))
        if len(listed) == 1:
            combinations = {(value,) for value in combinations}
        for position, (name, allowed) in enumerate(listed.items()):
            off = {values[position] for values in combinations} - allowed
            ok = every
            if off:
                ok = ~np.fromiter(map(off.__contains__, map(itemgetter(name), rows)),
                                  dtype=bool, count=n)
            judged[name] = Judged(ok, every)
    except (KeyError, TypeError):  # (TypeError: also a value whose == is no bool, pd.NA)
        return {}
    return judged


def _arrow_columns(model: type[RequestModel], rows: Sequence[dict[str, Any]],
                   lengths: np.ndarray) -> dict[str, pa.Array] | None:
    """The fields the fast path knows, read by Arrow straight from the dicts as text (no
    Python list per column); ``None`` when some value is no text (the lists below then)."""
    import pyarrow as pa

    names = list(_RULES[model])
    if (lengths == len(rows[0])).all():
        # Rows of one size: those with the first row's fields hold nothing else (the
        # others fail the length check of check_columns and go to the models).
        names = [name for name in names if name in rows[0]]
    columns: dict[str, Any] = _choices_of_rows(model, rows, names)
    names = [name for name in names if name not in columns]
    try:
        table = pa.array(rows, type=pa.struct([(name, pa.string()) for name in names]))
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return None
    for name, array in zip(names, table.flatten(), strict=True):
        if array.null_count < len(array):  # a field no row has stays out
            columns[name] = array
    return columns


def _columns_of_rows(model: type[RequestModel], rows: Sequence[Any]
                     ) -> tuple[dict[str, Any], np.ndarray, np.ndarray]:
    """The columns of the fields the fast path knows (read by Arrow when every row is a dict
    of text values, else lists), the rows it may vouch for (dicts), and each row's number
    of keys."""
    import numpy as np

    n = len(rows)
    if set(map(type, rows)) == {dict}:  # the usual case, at C speed
        lengths = np.fromiter(map(len, rows), dtype=np.int64, count=n)
        read = _arrow_columns(model, rows, lengths)
        if read is not None:
            return read, np.ones(n, dtype=bool), lengths
        usable = np.ones(n, dtype=bool)
        dicts = rows
    else:
        usable = np.fromiter((type(row) is dict for row in rows), dtype=bool, count=n)
        dicts = [row if type(row) is dict else {} for row in rows]
    first = dicts[0]
    lengths = np.fromiter(map(len, dicts), dtype=np.int64, count=n)
    columns: dict[str, list[Any]] = {}
    same_shape = bool((lengths == len(first)).all())
    for name in _RULES[model]:
        if name in first:
            # A field of the first row is read from every row in C; a row without it
            # makes that column take the slower way.
            try:
                columns[name] = list(map(itemgetter(name), dicts))
            except KeyError:
                columns[name] = [row.get(name) for row in dicts]
                same_shape = False
    if not same_shape:
        # Rows of other shapes: the fields no row of the first's shape has.
        for name in _RULES[model]:
            if name not in columns and any(map(dict.__contains__, dicts, repeat(name))):
                columns[name] = [row.get(name) for row in dicts]
    return columns, usable, lengths


def columns_of_frame(model: type[RequestModel], frame: pd.DataFrame
                     ) -> tuple[dict[str, Any], np.ndarray, dict[str, np.ndarray]]:
    """The columns of a DataFrame for :func:`check_columns`: a missing cell is an absent field
    (as ``submit_many`` reads a row), a column named otherwise than a known wire name sends
    the rows that fill it to the models."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    usable = np.ones(len(frame), dtype=bool)
    columns: dict[str, Any] = {}
    present: dict[str, np.ndarray] = {}
    rules_of = _RULES[model]
    for key in frame.columns:
        column = frame[key]
        filled = column.notna().to_numpy()
        if key in rules_of and key not in columns:
            if isinstance(column.dtype, pd.StringDtype) and column.dtype.storage == "pyarrow":
                # Text held by Arrow already (pandas' default str): its array, not a list.
                array = pa.array(column)
                if isinstance(array, pa.ChunkedArray):
                    array = array.combine_chunks()
                columns[key] = array.cast(pa.string())
            else:
                columns[key] = column.tolist()
            present[key] = filled
        else:
            usable &= ~filled
    return columns, usable, present


def _bodies(model: type[RequestModel], rows: Sequence[dict[str, Any]], rows_fast: np.ndarray,
            present: Mapping[str, np.ndarray]) -> dict[int, dict[str, Any]]:
    """The wire bodies of the vouched rows, as ``model(...).to_wire()`` writes them: the row's
    fields in the model's order (a vouched row has no other), the model's defaults for
    absent ones, the amount as the ``Decimal`` the model makes of it."""
    import numpy as np

    order = [name for name in _wire_order(model) if name in present]
    bodies: dict[int, dict[str, Any]] = {}
    index = np.flatnonzero(rows_fast)
    if not len(index):
        return bodies
    # Rows with the same fields present share one key order: one template per group, its
    # values read from each row by one itemgetter (a dict's update keeps the template's order).
    pattern = np.zeros(len(index), dtype=np.int64)
    for bit, name in enumerate(order):
        pattern |= present[name][index].astype(np.int64) << bit
    for code in np.unique(pattern):
        numbers = index[pattern == code].tolist()
        names = [name for bit, name in enumerate(order) if code >> bit & 1]
        defaults = _defaults(model, (n for n in _RULES[model] if n not in names))
        template = {n: defaults.get(n) for n in _wire_order(model)
                    if n in names or n in defaults}
        get = itemgetter(*names, "amount")  # (a tuple even of one name)
        for n, values in zip(numbers, map(get, map(rows.__getitem__, numbers)), strict=True):
            body = template.copy()
            body.update(zip(names, values, strict=False))  # (all but the amount's copy)
            body["amount"] = Decimal(values[-1])
            bodies[n] = body
    return bodies


def _by_model(model: type[RequestModel], rows: Sequence[Any], numbers: Iterable[int],
              result: CheckedRows) -> None:
    """Rows judged one model at a time: what the columns did not vouch for."""
    validate = model.model_validate
    for n in numbers:
        try:
            item = validate(rows[n])
        except PydanticValidationError as exc:
            # A row that is not an object at all is reported under "item".
            result.errors[n] = {"item" if key == "body" else key: messages
                                for key, messages in field_errors(exc).items()}
        else:
            result.bodies[n] = item.to_wire()
            result.advice.extend((n, advisory) for advisory in item.advisories())


def check_rows(model: type[RequestModel], rows: Sequence[Any], *,
               frame_columns: tuple[dict[str, Any], np.ndarray, dict[str, np.ndarray]]
               | None = None, raw_rows: Sequence[Any] | None = None,
               bodies: bool = True) -> CheckedRows:
    """Every row judged as ``model`` judges it alone (as one ``model.model_validate(row)``
    per row, faster when most rows are plain dicts with wire names): bodies, errors per
    field, advisories.
    ``frame_columns`` (from :func:`columns_of_frame`) are the rows' values column by
    column when the caller has them (text columns may be Arrow arrays: only with
    ``bodies=False``); ``rows[n]`` is then read only for the rows the models judge.
    ``raw_rows`` are the rows as given when ``rows`` cleans each one on reading
    (``submit_many``'s reading drops missing values and unwraps NumPy scalars, which
    changes nothing in a row the columns vouch for: text, ``Decimal`` or ``int`` values
    of known fields only). ``bodies=False`` leaves out the wire bodies of the rows
    the columns vouch for (a check that sends nothing does not need them).
    """
    import numpy as np

    result = CheckedRows({}, {}, [])
    if model in _RULES and len(rows):
        if frame_columns is not None:
            assert not bodies, "bodies are built from lists of values, not a frame's columns"
            columns, usable, given = frame_columns
            fast, present = check_columns(model, columns, usable, present=given)
        else:
            columns, usable, lengths = _columns_of_rows(
                model, rows if raw_rows is None else raw_rows)
            fast, present = check_columns(model, columns, usable, lengths=lengths)
        if bodies:
            result.bodies = _bodies(model, rows if raw_rows is None else raw_rows, fast,
                                    present)
        result.fast = int(fast.sum())
        slow = np.flatnonzero(~fast).tolist()
    else:
        slow = range(len(rows))
    _by_model(model, rows, slow, result)
    return result
