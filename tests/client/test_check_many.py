"""``check_many``: the column-by-column bulk check gives the models' verdicts, row for row.

The fast path (:mod:`paynb._checks`) vouches only for rows it is sure of and sends the
rest to the models, so its answer must be the models' own: the same wire bodies (in the
same key order), the same errors per field, the same advisories. Compared on generated
rows that mutate *every* field of the models (fields derived from the models, values from
the bad-input strategies of the reliability tests plus near-valid variants: padded,
re-cased, blank, missing, snake_case, other types), and on a file with 5 % bad rows.
"""

from __future__ import annotations

import datetime as dt
import io
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import pytest
import time_machine
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from benchmarks._data import ach_submissions
from paynb import _checks, _columns, models, validation
from paynb.resources._base import as_mapping
from paynb.resources._bulk import _Rows
from tests._moments import MOMENTS
from tests.reliability.test_bad_input import ACH, RCC, _bad_for

SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

ACH_GOOD = {**ACH, "amount": "125.10", "achAccountType": "Checking", "achEntryClass": "PPD"}
RCC_GOOD = {**RCC, "amount": "19.99"}


def _by_models(model: type[models.RequestModel], rows: list[Any]) -> _checks.CheckedRows:
    """The reference: one model per row, as submit_many checked before the fast path."""
    result = _checks.CheckedRows({}, {}, [])
    _checks._by_model(model, rows, range(len(rows)), result)
    return result


def _assert_same(model: type[models.RequestModel], rows: list[Any]) -> _checks.CheckedRows:
    fast = _checks.check_rows(model, rows)
    slow = _by_models(model, rows)
    assert fast.errors == slow.errors
    assert fast.bodies == slow.bodies
    for n, body in slow.bodies.items():
        assert list(fast.bodies[n]) == list(body), "key order differs from to_wire()"
        assert [type(v) for v in fast.bodies[n].values()] == [type(v) for v in body.values()]
    assert sorted(fast.advice, key=repr) == sorted(slow.advice, key=repr)
    return fast


def _near_values(value: Any) -> list[Any]:
    """Variants of a good value that the models may read differently from the columns."""
    options: list[Any] = [None, "", " ", 0, 1.5, Decimal("0"), True, [value]]
    if isinstance(value, str):
        options += [f" {value}", f"{value} ", value.lower(), value.upper(), value + "\t",
                    value + "\u00a0", "\u2003" + value, "\x1c" + value, value * 3,
                    value * 20, "A" * 50, "A" * 51, "A" * 10, "A" * 11, value + "'",
                    value + "\x01", value + "\x7f", value[:-1],
                    value + "9", f"{value}.5", f"{value}.005", "0.00", "0", "1,250.00",
                    "٣٣", value.replace("0", "٠"), value.replace("1", "¹")]
    return options


def _near(value: Any) -> st.SearchStrategy[Any]:
    return st.sampled_from(_near_values(value))


_OTHER = {"achAccountType": ["Savings", "savings", "PersonalChecking", "Money"],
          "achEntryClass": ["CCD", "IAT", "web", "XYZ"],
          "achTransactionType": ["Credit", "credit"],
          "achTransactionSubType": ["Prenote", "prenote", " ", "Other"],
          "amount": ["0", "0.00", "1", "99999999.99", "100000000.00", "1.", "12.3",
                     Decimal("12.30"), Decimal("1E+2"), Decimal("0.001"), 12, 12.5, 0.1 + 0.2,
                     "-5", "+5", " 5"],
          "achCompanyEntryDescription": ["PAYROLL", "PAYROLL 2026", " ", "RETRY PYMT"],
          "achTransactionCode": [22, 24, 27, 99],
          "sameDayAchRequested": [True, False],
          "achEffectiveDate": ["2020-01-01", "2999-01-01"],
          "state": ["ny", "XX", "N1"],
          "bankRoutingNumber": ["021000022", "121000021", "02100002a", "0210000210"],
          "bankAccountNumber": ["123", "1234", "1" * 17, "1" * 18, "12-34", "12_34", "12 34"],
          "zip": ["12345-6789", "12345 6789", "1234", "123456"]}


def _value(model: type[models.RequestModel], field: str, good: dict[str, Any]
           ) -> st.SearchStrategy[Any]:
    choices = [_bad_for(field, model)]
    if field in good:
        choices.append(_near(good[field]))
    if field in _OTHER:
        choices.append(st.sampled_from(_OTHER[field]))
    return st.one_of(choices)


def _rows(model: type[models.RequestModel], good: dict[str, Any]) -> st.SearchStrategy[Any]:
    fields = sorted(model.wire_names().values())
    snake = {wire: python for python, wire in model.wire_names().items()}

    @st.composite
    def row(draw: Any) -> Any:
        body = dict(good, yourReferenceNumber=f"R{draw(st.integers(0, 10**6))}")
        for _ in range(draw(st.integers(0, 3))):
            field = draw(st.sampled_from(fields))
            how = draw(st.sampled_from(["set", "set", "set", "drop", "snake"]))
            if how == "drop":
                body.pop(field, None)
            elif how == "snake" and field in body:
                body[snake[field]] = body.pop(field)
            else:
                body[field] = draw(_value(model, field, good))
        if draw(st.integers(0, 30)) == 0:
            return draw(st.sampled_from([7, "row", None, []]))
        return body

    return row()


@SETTINGS
@given(data=st.data())
@pytest.mark.parametrize(("model", "good"), [(models.AchItem, ACH_GOOD),
                                             (models.RccItem, RCC_GOOD)])
def test_same_verdicts_as_the_models(model: Any, good: dict[str, Any],
                                     data: st.DataObject) -> None:
    rows = data.draw(st.lists(_rows(model, good), min_size=1, max_size=12), label="rows")
    # Good rows around the mutated ones: the columns then hold mixed values.
    rows = [dict(good, yourReferenceNumber=f"G{n}") if n % 2 else row
            for n, row in enumerate(rows)] + [good]
    _assert_same(model, rows)


@SETTINGS
@given(data=st.data())
@pytest.mark.parametrize(("model", "good", "kind"), [(models.AchItem, ACH_GOOD, "ach"),
                                                     (models.RccItem, RCC_GOOD, "rcc")])
def test_a_frame_is_judged_as_submit_many_reads_it(model: Any, good: dict[str, Any],
                                                   kind: str, data: st.DataObject) -> None:
    rows = data.draw(st.lists(_rows(model, good).filter(lambda r: isinstance(r, dict)),
                              min_size=1, max_size=8), label="rows")
    frame = pd.DataFrame([good, *rows])
    frame_rows = [as_mapping(dict(zip(frame.columns, values, strict=True)), "row")
                  for values in frame.itertuples(index=False)]
    fast = _checks.check_rows(model, frame_rows, bodies=False,
                              frame_columns=_checks.columns_of_frame(model, frame))
    slow = _by_models(model, frame_rows)
    assert fast.errors == slow.errors
    assert sorted(fast.advice, key=repr) == sorted(slow.advice, key=repr)


@pytest.mark.parametrize(("model", "good"), [(models.AchItem, ACH_GOOD),
                                             (models.RccItem, RCC_GOOD)])
def test_every_field_every_variant(model: Any, good: dict[str, Any]) -> None:
    """Each field of the model, alone: every near-valid variant, left out, snake_case; each
    between good rows (a column of one type, read by Arrow) and all in one set (mixed)."""
    rows: list[Any] = []
    for python, field in model.wire_names().items():
        values = [*(_near_values(good[field]) if field in good else [None, "", " ", "x"]),
                  *_OTHER.get(field, [])]
        rows += [dict(good, **{field: value}) for value in values]
        rows.append({k: v for k, v in good.items() if k != field})
        if field in good:
            rows.append({**{k: v for k, v in good.items() if k != field}, python: good[field]})
    for row in rows:
        _assert_same(model, [good, row, good])
    _assert_same(model, [good, *rows, good])


@SETTINGS
@given(data=st.data())
@pytest.mark.parametrize(("model", "good"), [(models.AchItem, ACH_GOOD),
                                             (models.RccItem, RCC_GOOD)])
def test_rows_are_read_as_submit_many_reads_them(model: Any, good: dict[str, Any],
                                                 data: st.DataObject) -> None:
    """check_many's list path: the columns read the rows as given, the models judge the
    others as submit_many reads them (missing values left out, NumPy scalars unwrapped)."""
    odd = st.sampled_from([None, float("nan"), pd.NA, pd.NaT, np.int64(5), np.str_("NY"),
                           np.float64(1.5)])
    rows = data.draw(st.lists(_rows(model, good).filter(lambda r: isinstance(r, dict)),
                              min_size=1, max_size=8), label="rows")
    for row in rows:
        if data.draw(st.booleans()):
            row[data.draw(st.sampled_from(sorted(model.wire_names().values())))] = \
                data.draw(odd)
    records = [good, *rows]
    fast = _checks.check_rows(model, _Rows(len(records), records.__getitem__), raw_rows=records,
                             bodies=False)
    slow = _by_models(model, [as_mapping(row, "row") for row in records])
    assert fast.errors == slow.errors
    assert sorted(fast.advice, key=repr) == sorted(slow.advice, key=repr)


#: An effective date as a user writes it: a day, or a time whose zone puts it on another
#: UTC day than the one it names (late in New York, early in Berlin).
_EFFECTIVE = ["{day}", "{day}T23:50:00-05:00", "{day}T00:10:00+02:00", "{day}T12:00:00Z"]


@SETTINGS
@given(moment=st.sampled_from(list(MOMENTS.values())),
       dates=st.lists(st.tuples(st.integers(-3, 3), st.sampled_from(_EFFECTIVE)),
                      min_size=1, max_size=8))
def test_same_verdicts_on_any_day(moment: dt.datetime, dates: list[tuple[int, str]]) -> None:
    """An effective date before today is an advisory (sent anyway): judged by the clock,
    so the two roads are compared at each moment of tests/_moments.py with dates around
    it, the good rows around them vouched for by the columns."""
    with time_machine.travel(moment, tick=False):
        today = dt.datetime.now(dt.UTC).date()
        rows = [dict(ACH_GOOD, yourReferenceNumber=f"D{n}",
                     achEffectiveDate=form.format(day=today + dt.timedelta(days=days)))
                for n, (days, form) in enumerate(dates)]
        checked = _assert_same(models.AchItem, [ACH_GOOD, *rows, ACH_GOOD])
    past = [n for n, (days, _) in enumerate(dates, 1) if days < -1]
    advised = {n for n, advisory in checked.advice if advisory.field == "achEffectiveDate"}
    assert advised >= set(past)


def test_a_file_with_five_percent_bad_rows() -> None:
    rows = ach_submissions(3000, seed=5, invalid_share=0.05)
    fast = _assert_same(models.AchItem, rows)
    assert 100 < len(fast.errors) < 220
    assert fast.fast == 3000 - len(fast.errors)  # every good row vouched for by the columns


def test_ordinary_rows_take_the_fast_path() -> None:
    rows = [dict(ACH_GOOD, yourReferenceNumber=f"A{n}") for n in range(50)]
    rows[3] = dict(rows[3], achCompanyEntryDescription="PAYROLL", city="New York")
    rows[4] = {k: v for k, v in rows[4].items() if k not in ("achAccountType", "achEntryClass")}
    fast = _assert_same(models.AchItem, rows)
    assert fast.fast == 50
    assert fast.bodies[4]["achAccountType"] == "Checking"  # the model's default


def test_the_whitespace_of_str_strip() -> None:
    spaces = "".join(chr(c) for c in range(0x110000) if chr(c).isspace())
    assert spaces == _columns._PY_SPACE


def test_check_many_frame(client: Any) -> None:
    rows = [dict(ACH_GOOD, yourReferenceNumber=f"CM-{n}") for n in range(4)]
    rows[1]["bankRoutingNumber"] = "021000022"
    rows[2]["achEntryClass"] = "XYZ"
    verdicts = client.ach.check_many(rows)
    assert list(verdicts.columns) == ["valid", "errors", "advisories"]
    assert verdicts["valid"].tolist() == [True, False, True, True]
    assert verdicts.loc[1, "errors"] == {
        "bankRoutingNumber": ["is not a valid ABA routing number (checksum fails)"]}
    assert verdicts.loc[0, "errors"] is None
    assert verdicts.loc[2, "advisories"][0].startswith("achEntryClass: 'XYZ' is not an entry")
    assert verdicts.loc[0, "advisories"] == ()
    frame = pd.DataFrame(rows, index=[10, 11, 12, 13])
    by_frame = client.ach.check_many(frame)
    assert list(by_frame.index) == [10, 11, 12, 13]
    assert by_frame["valid"].tolist() == [True, False, True, True]
    assert client.rcc.check_many([RCC_GOOD, dict(RCC_GOOD, zip="12345-6789")])["valid"] \
        .tolist() == [True, False]


def test_spreadsheet_amounts_say_what_is_wrong(client: Any) -> None:
    """A CSV's amounts: a decimal comma and a currency sign are refused, each saying why
    and how to write it; a thousands comma is read."""
    frame = pd.DataFrame([dict(ACH_GOOD, yourReferenceNumber=f"AM-{n}", amount=amount)
                          for n, amount in enumerate(["12,30", "$1,250.00", "1,250.00",
                                                      "1.234", "abc", "12,5x", "$12,30"])])
    verdicts = client.ach.check_many(frame)
    assert verdicts["valid"].tolist() == [False, False, True, False, False, False, False]
    assert verdicts.loc[0, "errors"] == {"amount": [
        "must be a number with a decimal point, like 12.30: a comma may only separate "
        "thousands (1,250.00)"]}
    assert verdicts.loc[1, "errors"] == {"amount": [
        "must be a number without a currency sign, like 1250.00 or 1,250.00"]}
    assert verdicts.loc[3, "errors"] == {"amount": ["must have at most 2 decimal places"]}
    assert verdicts.loc[4, "errors"] == verdicts.loc[5, "errors"] == {
        "amount": ["must be a number"]}
    assert verdicts.loc[6, "errors"] == verdicts.loc[0, "errors"]


def test_a_csv_read_without_dtype_str_is_told_so(client: Any) -> None:
    """pandas reads a CSV's routing and account numbers as integers by default (their
    leading zeros gone): the message says to read text, not only that it must be text."""
    frame = pd.read_csv(io.StringIO(
        "firstSignerFirstName,firstSignerLastName,state,zip,yourReferenceNumber,"
        "bankRoutingNumber,bankAccountNumber,achTransactionType,amount\n"
        "Jane,Doe,NY,10001,CSV-1,021000021,000123456789,Debit,80.00\n"))
    errors = client.ach.check_many(frame).loc[0, "errors"]
    expected = ["must be text, not a number (a number drops leading zeros: read CSV files "
                "with dtype=str)"]
    assert errors == {"zip": expected, "bankRoutingNumber": expected,
                      "bankAccountNumber": expected}
    assert "21000021" not in repr(errors)   # the value itself is never quoted
    assert client.ach.check_many(pd.read_csv(io.StringIO(
        "zip,bankRoutingNumber\n10001,021000021\n"), dtype=str)).loc[0, "errors"].keys() \
        .isdisjoint({"zip", "bankRoutingNumber"})


_BYTES = st.one_of(
    st.text(alphabet="0123456789.-+ ,eE'\t\x01aZ\u00e9\u00a0\u0663", max_size=14),
    st.text(alphabet="0123456789", min_size=9, max_size=9),  # routing numbers, some valid
    st.sampled_from(["021000021", "021000022", "011000015", "0210000a1", "12345-6789",
                     "12345 6789", "12345+6789", "1234-56789", "12345-678a"]))


@SETTINGS
@given(values=st.lists(st.one_of(_BYTES, st.none()), min_size=1, max_size=40))
# Its checksum sum is 256: under numpy 1.26 (`make test-oldest`) it wrapped round to 0 in
# uint8 and passed (issue 47).
@example(values=["780894794"])
def test_the_byte_checks_are_the_regular_expressions(values: list[str | None]) -> None:
    """Each check on a column's bytes gives, value by value, what its regular expression
    (RE2 in Arrow, as the checks read before) gives."""
    import re

    import pyarrow as pa

    array = pa.array(values, type=pa.string())
    texts = ["" if v is None else v for v in values]
    amounts = _columns._amount_text_ok(array).tolist()
    assert amounts == [bool(re.fullmatch(_columns._AMOUNT_TEXT, v) and re.search("[1-9]", v))
                       for v in texts]
    ascii_texts = [v for v in texts if v.isascii()]
    assert _columns._ascii_text(array, _checks._NAME) is None or ascii_texts == texts
    for rule in (_checks._NAME, _checks._COMMON["yourReferenceNumber"], _checks._free(10)):
        plain = _columns._ascii_text(pa.array(ascii_texts, type=pa.string()), rule)
        if ascii_texts:  # ASCII only: str.strip() strips spaces and controls
            assert plain is not None
            assert plain.tolist() == [
                bool(v) and v == v.strip() and len(v) <= (rule.max_length or 10**9)
                and not re.search(r"[\x00-\x1f\x7f]", v)
                and not (rule.kind == "reference" and "'" in v) for v in ascii_texts]
    account = _checks._COMMON["bankAccountNumber"]
    ok, _ = _columns.vouch(account, values)
    assert ok.tolist() == [v is not None and re.fullmatch(r"[0-9A-Za-z-]{4,17}", v) is not None
                           for v in values]
    routing = _columns._routing_ok(array).tolist()
    assert routing == [re.fullmatch("[0-9]{9}", v) is not None
                       and validation.aba_checksum_ok(v) for v in texts]
    for rule, pattern in ((_checks._RULES[models.AchItem]["zip"], r"[0-9]{5}(?:[- ][0-9]{4})?"),
                          (_checks._RULES[models.RccItem]["zip"], r"[0-9]{5}(?: [0-9]{4})?")):
        ok, _ = _columns.vouch(rule, values)
        assert ok.tolist() == [v is not None and re.fullmatch(pattern, v) is not None
                               for v in values]
