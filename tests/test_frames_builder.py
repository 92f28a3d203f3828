"""The column-wise frame builder (issue 19) against the builder it replaced.

``tests/_frames_reference.py`` is ``paynb.frames`` as it was before: on random wire
records (answers parsed by ``paynb._json.loads``, as the client parses them) both must
give the same frame, bit for bit -- columns and their order, dtypes (categories and their
order, Arrow types), every value, ``attrs`` -- and log the same warnings.
"""

from __future__ import annotations

import json
import logging
from decimal import Decimal
from pathlib import Path
from typing import Any

import _frames_reference as reference
import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paynb import _json, codes, frames

# Random records hold many codes in no NACHA table; their one warning per frame is
# tested in tests/test_frames.py.
pytestmark = pytest.mark.filterwarnings("ignore::paynb.errors.UnknownCodeWarning")


class _Number:
    """A JSON number written exactly as given (``1e2``, ``0.10``, 20 digits)."""

    def __init__(self, text: str):
        self.text = text


def _encode(value: Any) -> str:
    if isinstance(value, _Number):
        return value.text
    if isinstance(value, dict):
        return "{" + ",".join(f"{json.dumps(k)}:{_encode(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ",".join(_encode(v) for v in value) + "]"
    return json.dumps(value)


def _wire(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records as the client reads them: JSON text parsed by paynb._json.loads (floats,
    or every non-integer number a Decimal when one has more than 15 digits)."""
    return _json.loads(_encode(records).encode())


_NUMBERS = st.sampled_from(["0.10", "1e2", "1E2", "-0.0", "0", "12.5", "10.005", "2.50",
                            "99999999999999.99", "12345678901234567.89", "1e-7",
                            "123456789012345678901234", "7", "-3.25", "1.0"]).map(_Number)
_TIMES = st.sampled_from([
    "2025-06-11T20:50:04.032Z", "2026-11-01T00:00:00.000", "2026-11-01", "2026-11-23T15:30:00",
    "2026-11-23T23:30:00-05:00", "2026-11-23 10:00:00", "0001-01-01T00:00:00",
    "9999-12-31T00:00:00Z", "not a date", "", "2026-02-30", "1969-12-31T23:59:59.999Z",
    "1900-01-01T12:00:00", "2262-04-11T23:47:16.854775807Z", "2026-11-23T00:00:00.000"])
_CODES = st.sampled_from([*codes.STATUS_ORDER, "w", "Returned", "returned", "Q", "ZZ", " R ",
                          "Success", "failed", "Pending", "Visa", "amex", "Diners", "R01",
                          "r03", "C01", "C03", "C99", "X", "Checking", "Savings", "Brokerage",
                          "PPD", "ccd", "IAT", "Prenote", " ", "27", "22"])
_TEXT = st.text(max_size=12) | st.sampled_from([
    "123456789", " 000123456789 ", "12", "4111111111111111", "4111-1111-1111-1111",
    "021000021 123456789", "021000021", "DEMO1", "true", "no", "1"])
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner,
                                                                  max_size=2),
    max_leaves=3)
_VALUES = (st.none() | _NUMBERS | _TIMES | _CODES | _TEXT | st.integers(-(2**64), 2**64)
           | st.booleans() | _JSON)
#: Per kind, its documented fields, what frames read besides them, other spellings and
#: fields paynb does not know (typed from their values).
_EXTRA_FIELDS = ["ItemStatus", "item_status", "id", "itemId", "status", "cardNumber",
                 "someExtra", "extraDate", "feeAmount", "payeeBackupAccountNumber",
                 "createdAt", "nested", "ACHITEMID"]
_FIELDS = {kind: [name for name, _ in reference._SCHEMAS[kind]] + _EXTRA_FIELDS
           for kind in frames.KINDS}


@st.composite
def _records(draw: st.DrawFn, kind: str) -> list[dict[str, Any]]:
    """Records of one kind: typed like the field they fill most of the time, anything at
    times; either every record holding the same fields (the usual answer) or each its own."""
    fields = draw(st.lists(st.sampled_from(_FIELDS[kind]), min_size=1, max_size=10,
                           unique=True))
    by_field = {name: draw(st.sampled_from([_NUMBERS, _TIMES, _CODES, _TEXT, _VALUES]))
                for name in fields}
    same_fields = draw(st.booleans())
    records = []
    for _ in range(draw(st.integers(0, 6))):
        present = fields if same_fields else draw(st.lists(st.sampled_from(fields),
                                                           unique=True))
        records.append({name: draw(by_field[name]) for name in present})
    return records


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _built(build: Any, records: Any, kind: str, mask: bool) -> tuple[Any, list[str]]:
    handler = _Warnings()
    logger = logging.getLogger("paynb.frames")
    logger.addHandler(handler)
    try:
        try:
            frame: Any = build(records, kind, mask=mask)
        except Exception as error:  # both must fail the same way too
            frame = (type(error), str(error))
    finally:
        logger.removeHandler(handler)
    return frame, handler.messages


def _cell(value: Any) -> Any:
    """A value with its exact type (NaN, None, NA and NaT told apart; 1 and 1.0 and True)."""
    if isinstance(value, float) and value != value:
        return ("nan",)
    if isinstance(value, Decimal):
        return ("Decimal", str(value))
    if isinstance(value, dict):
        return ("dict", [(k, _cell(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_cell(v) for v in value])
    return (type(value).__name__, repr(value))


def assert_same_frame(new: pd.DataFrame, old: pd.DataFrame) -> None:
    assert list(new.columns) == list(old.columns)
    assert list(new.dtypes) == list(old.dtypes)
    for name in new.columns:
        a, b = new[name].array, old[name].array
        assert type(a) is type(b), name
        if isinstance(a, pd.Categorical):
            assert list(a.categories) == list(b.categories) and a.ordered == b.ordered, name
            assert np.array_equal(a.codes, b.codes), name
        elif hasattr(a, "_pa_array"):  # Arrow-backed: the Arrow type and values
            assert a._pa_array.type == b._pa_array.type, name
            assert a._pa_array.to_pylist() == b._pa_array.to_pylist(), name
        elif new[name].dtype == object:
            assert [_cell(v) for v in a] == [_cell(v) for v in b], name
    pd.testing.assert_frame_equal(new, old, check_exact=True)
    assert new.attrs == old.attrs


def _compare(records: list[dict[str, Any]], kind: str, mask: bool) -> None:
    new, new_warnings = _built(frames.to_frame, records, kind, mask)
    old, old_warnings = _built(reference.to_frame, records, kind, mask)
    if isinstance(old, tuple) or isinstance(new, tuple):
        assert new == old
    else:
        assert_same_frame(new, old)
    assert new_warnings == old_warnings


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), st.sampled_from(frames.KINDS), st.booleans())
def test_the_builder_gives_the_reference_frame_on_random_wire_records(data, kind, mask):
    records = data.draw(_records(kind))
    _compare(_wire(records), kind, mask)


_DOCUMENTED = json.loads((Path(__file__).parent / "fixtures" / "real_service.json").read_text())


@pytest.mark.parametrize("kind", frames.KINDS)
@pytest.mark.parametrize("mask", [True, False])
def test_no_records_and_documented_records(kind, mask):
    _compare([], kind, mask)
    record = _DOCUMENTED["records"].get(kind)
    if record is not None:
        _compare(_wire([record, {**record, "amount": _Number("12345678901234567.89")}]),
                 kind, mask)


def test_a_large_uniform_answer_and_a_ragged_one():
    """Thousands of rows: the column-wise paths (Arrow text, categoricals, masks) at size."""
    from benchmarks._data import ach_records

    records = ach_records(3000)
    _compare(records, "ach", True)
    ragged = [{k: v for k, v in r.items() if v is not None} for r in records]
    ragged[7]["newField"] = [1, 2]
    ragged[8]["itemStatus"] = "Q"
    _compare(ragged, "ach", True)
    _compare(ragged, "ach", False)


@pytest.mark.parametrize(("resource", "kind"), [
    ("ach", "ach"), ("rcc", "rcc"), ("instant", "instant"), ("rtp", "rtp"), ("nocs", "noc"),
])
def test_sandbox_lists_give_the_reference_frames(sandbox, client, resource, kind):
    """The listing's own path (pages fetched, parsed, framed in batches while later pages
    come, joined) gives the frame the previous builder made of the same wire records."""
    from paynb.sandbox.queries import ListQuery

    records: list[dict[str, Any]] = []
    for page in range(1000):
        body = sandbox.store.list_json(kind, sandbox.company_code,
                                       ListQuery(page=page, page_size=1000))
        batch = _json.loads(body)["transactions"]
        records += batch
        if len(batch) < 1000:
            break
    assert records
    listing = getattr(client, resource)
    one_page = listing.list(page=0, page_size=1000, progress=False)
    assert_same_frame(_without_envelope(one_page), reference.to_frame(records[:1000], kind))
    old, old_warnings = _built(reference.to_frame, records, kind, True)
    whole, new_warnings = _built(lambda r, k, mask: listing.list(progress=False), None, kind,
                                 True)
    pd.testing.assert_frame_equal(whole, old, check_exact=True)
    assert list(whole.dtypes) == list(old.dtypes)
    assert new_warnings == old_warnings == []


def _without_envelope(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with the list envelope's totals (which ``list()`` adds) left out of attrs."""
    frame = frame.copy()
    for key in ("total", "creditAmount", "debitAmount"):
        frame.attrs.pop(key, None)
    return frame



@pytest.mark.parametrize("mask", [True, False])
def test_the_history_reads_back_the_frame_the_records_give(mask):
    """One typing (issue 45): records framed whole, stored as the history stores them
    and read back in Arrow chunks, as Delta gives them, are the frame of the records,
    masked on reading when the store keeps numbers whole; a field no row holds is not
    read back (the store's columns are those of every sync)."""
    from benchmarks._data import ach_records

    records = [{k: v for k, v in r.items() if v is not None} for r in ach_records(3000)]
    records[7]["newField"] = [1, {"a": 2}]
    records[8]["itemStatus"] = "Q"
    records[9]["returnReason"] = "R99"
    records[10]["traceNumber"] = 12
    records[11]["feeAmount"] = 1.25
    kept: set[str] = set()
    stored = frames.as_stored(frames.to_frame(records, "ach", mask=False), kept)
    stored = pa.concat_tables([stored.slice(0, 1234), stored.slice(1234)]).append_column(
        "unheld", pa.nulls(len(records), pa.string()))
    read = frames.from_stored(stored, "ach", mask=mask, json_columns=kept)
    # (a missing nested object reads back None where the records' frame has NaN)
    pd.testing.assert_frame_equal(read, frames.to_frame(records, "ach", mask=mask),
                                  check_exact=True)
    narrow = frames.from_stored(stored.select(frames.columns_of(["itemStatusName"])), "ach",
                                mask=mask, only=["itemStatusName"])
    assert narrow["itemStatusName"].equals(read["itemStatusName"])
