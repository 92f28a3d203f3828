"""Finding the records in an answer of the service: envelopes, one record, list totals,
and the camelCase names of fields."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Mapping
from typing import Any

from paynb._coerce import parse_decimal
from paynb._kinds import KINDS as KIND_REGISTRY
from paynb._redact import hide_numbers
from paynb.errors import ResponseFormatError
from paynb.frames._converters import _CONSUMED

#: Keys under which an answer may hold its list of records (compared lower-cased).
_LIST_KEYS = (
    "transactions", "items", "data", "results", "result", "value", "values", "records",
    "rows", "nocs", "achnocs", "content", "entries", "elements", "list", "payload",
    "achtransactions", "rcctransactions", "instanttransactions", "instantrtptransactions",
)
#: Keys under which an answer may hold one record.
_SINGLE_KEYS = ("transaction", "item", "data", "record", "result", "value", "noc", "payload")
#: A mapping holding one of these (normalised) names is a record, not an envelope.
_RECORD_MARKERS = frozenset({
    "achitemid", "rccitemid", "uniqueid", "nocid", "itemid", "itemstatus",
    "yourreferencenumber", "changecode",
})
_SNIPPET_LENGTH = 200


# --------------------------------------------------------------------------- names

def camel_case(name: str) -> str:
    """The camelCase spelling of a field name: ``ItemStatus``, ``item_status`` and
    ``ITEM_STATUS`` -> ``itemStatus``, ``ACHItemId`` -> ``achItemId``, ``ID`` -> ``id``.

    A name paynb knows (any field of any kind) gets the service's exact spelling
    whatever its casing (``ACHITEMID`` -> ``achItemId``).
    """
    known = _KNOWN_NAMES.get(_fold(name))
    if known is not None:
        return known
    parts = [part for part in re.split(r"[\s_\-]+", name.strip()) if part]
    if not parts:
        return name
    if len(parts) > 1:
        return parts[0].lower() + "".join(p[:1].upper() + p[1:].lower() for p in parts[1:])
    word = parts[0]
    if word.isupper():
        return word.lower()
    leading = re.match(r"[A-Z]+", word)
    if leading is None:
        return word
    run = leading.end()
    # "ACHItemId": the last capital of a run starts the next word.
    cut = run if run == 1 else run - 1
    return word[:cut].lower() + word[cut:]


def _fold(name: str) -> str:
    return re.sub(r"[\s_\-]", "", name).lower()


#: The service's spelling of every field paynb knows, by its folded name (see _fold).
_KNOWN_NAMES: dict[str, str] = {_fold(name): name for kind in KIND_REGISTRY.values()
                                for name in kind.field_names}
_KNOWN_NAMES.update({_fold(n): n for n in (
    *_CONSUMED, "cardLastFour", "total", "creditAmount", "debitAmount", "validCount",
    "invalidCount", "errors", "itemId", "uniqueId", "pageSize", "page")})


# --------------------------------------------------------------------------- envelopes

def _snippet(body: Any) -> str:
    if isinstance(body, bytes | bytearray):
        text = bytes(body[: _SNIPPET_LENGTH * 4]).decode("utf-8", errors="replace")
    elif isinstance(body, str):
        text = body[: _SNIPPET_LENGTH * 4]
    else:
        try:
            text = json.dumps(body, default=str)[: _SNIPPET_LENGTH * 4]
        except (TypeError, ValueError):
            text = repr(body)[: _SNIPPET_LENGTH * 4]
    text = hide_numbers(" ".join(text.split()))
    return text if len(text) <= _SNIPPET_LENGTH else text[:_SNIPPET_LENGTH] + "..."


def _format_error(why: str, body: Any, method: str | None, path: str | None
                  ) -> ResponseFormatError:
    where = " ".join(part for part in (method, path) if part)
    prefix = f"{where}: " if where else ""
    return ResponseFormatError(f"{prefix}{why}; the answer began: {_snippet(body)!r}")


def _decode(body: Any, method: str | None, path: str | None) -> Any:
    if isinstance(body, bytes | bytearray | str):
        if not (body.strip() if isinstance(body, str) else bytes(body).strip()):
            return None
        try:
            return json.loads(body)
        except ValueError:
            raise _format_error("the answer is not JSON", body, method, path) from None
    return body


def _looks_like_record(obj: Mapping[str, Any]) -> bool:
    return any(isinstance(key, str) and _fold(key) in _RECORD_MARKERS for key in obj)


def _lower_keys(obj: Mapping[str, Any]) -> dict[str, str]:
    return {key.lower(): key for key in obj if isinstance(key, str)}


def _records_in(obj: Any, depth: int = 0) -> list[dict[str, Any]] | None:
    """The records held by ``obj``, or None when it holds no recognisable records."""
    if isinstance(obj, list):
        if all(isinstance(item, dict) for item in obj):
            return obj
        return None
    if not isinstance(obj, dict):
        return None
    keys = _lower_keys(obj)
    for key in _LIST_KEYS:
        if key not in keys:
            continue
        value = obj[keys[key]]
        if value is None:
            return []
        if isinstance(value, list) or (isinstance(value, dict) and depth < 2):
            found = _records_in(value, depth + 1)
            if found is not None:
                return found
    for key in _SINGLE_KEYS:
        value = obj.get(keys.get(key, "\0"))
        if isinstance(value, dict) and _looks_like_record(value):
            return [value]
    if _looks_like_record(obj):
        return [obj]
    # An unknown envelope key: accept it when exactly one value is a list of records.
    lists = [v for v in obj.values() if isinstance(v, list) and v
             and all(isinstance(item, dict) for item in v)]
    if len(lists) == 1:
        return lists[0]
    # {"total": 0} and the like: an empty list whose key was left out.
    counts = [obj[keys[k]] for k in ("total", "count", "totalcount") if k in keys]
    if counts and all(c == 0 for c in counts) and not lists:
        return []
    return None


def extract_records(body: Any, *, method: str | None = None, path: str | None = None
                    ) -> list[dict[str, Any]]:
    """The records of a list answer (or of any answer holding records).

    ``body`` is the decoded JSON (or its text or bytes). Accepted: a bare array; an
    object with the records under ``transactions``, ``items``, ``data``,
    ``results``, ``value``, ``records``, ``rows``, ``nocs``, ``achNocs`` ... in any
    casing (also one level deeper, like ``{"data": {"items": [...]}}``); a single
    record, bare or wrapped (``transaction``, ``item``, ``data``); an empty
    answer or ``{"total": 0}`` (no records).

    ``method`` and ``path`` only name the request in the error message.

    Raises:
        ResponseFormatError: the answer holds no recognisable records; the message
            quotes its first 200 characters with long digit runs and secrets masked.
    """
    data = _decode(body, method, path)
    if data is None:
        return []
    records = _records_in(data)
    if records is None:
        raise _format_error("no records found in the answer", body, method, path)
    return records


def extract_record(body: Any, *, method: str | None = None, path: str | None = None
                   ) -> dict[str, Any]:
    """The single record of an answer about one item (get, submit, void).

    Accepted: a bare record; a record wrapped in ``transaction``, ``item``,
    ``data``, ``record`` ... (any casing); a list or envelope holding exactly one.

    Raises:
        ResponseFormatError: no record, or more than one; the message quotes the
            start of the answer (masked).
    """
    data = _decode(body, method, path)
    if isinstance(data, dict):
        keys = _lower_keys(data)
        for key in _SINGLE_KEYS:
            value = data.get(keys.get(key, "\0"))
            if isinstance(value, dict):
                return value
        if _looks_like_record(data):
            return data
    records = _records_in(data) if data is not None else None
    if records is not None and len(records) == 1:
        return records[0]
    why = "no record found in the answer" if not records else (
        f"expected one record, the answer holds {len(records)}")
    raise _format_error(why, body, method, path)


def list_metadata(body: Any) -> dict[str, Any]:
    """The scalar fields beside the records of a list answer, named in camelCase.

    For the service's lists that is ``{"total": int, "creditAmount": Decimal,
    "debitAmount": Decimal}``; bulk answers add ``validCount`` and
    ``invalidCount``. Fields that are absent are absent from the result (a bare
    array gives ``{}``). Counts become ``int``, amounts exact ``Decimal``.
    """
    data = _decode(body, None, None)
    if not isinstance(data, dict):
        return {}
    meta: dict[str, Any] = {}
    for key, value in data.items():
        if not isinstance(key, str) or isinstance(value, list | dict):
            continue
        name = camel_case(key)
        if value is not None and name.lower().endswith("amount"):
            value = parse_decimal(value, currency_sign=True)
        elif (value is not None and (name.lower().endswith("count") or name == "total")
              and not isinstance(value, bool)):
            with contextlib.suppress(TypeError, ValueError):
                value = int(value)
        meta[name] = value
    return meta

