"""paynb.frames: tolerant reading of answers and typed, masked DataFrames."""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
from decimal import Decimal

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paynb import codes, frames
from paynb.errors import ResponseFormatError, UnknownCodeWarning


def ach_record(i: int = 1, **fields):
    record = {
        "achItemId": i, "companyCode": "DEMO1", "yourReferenceNumber": f"REF-{i}",
        "firstSignerFirstName": "Ann", "firstSignerLastName": "Lee", "state": "TX",
        "zip": "75001", "bankRoutingNumber": "021000021", "bankAccountNumber": "123456789",
        "amount": 10.5, "achAccountType": "Checking", "achTransactionType": "Debit",
        "achEntryClass": "PPD", "itemStatus": "W", "itemStatusDescription": "Waiting",
        "returnDate": None, "returnReason": None, "returnMessage": None,
        "receivedDateTime": "2025-06-11T20:50:04.032Z", "sendDate": None, "settleDate": None,
    }
    record.update(fields)
    return record


# --------------------------------------------------------------------------- envelopes

RECORDS = [ach_record(1), ach_record(2)]


@pytest.mark.parametrize("body", [
    RECORDS,
    {"total": 2, "creditAmount": 0, "debitAmount": 21.0, "transactions": RECORDS},
    {"Transactions": RECORDS},
    {"TRANSACTIONS": RECORDS},
    {"items": RECORDS},
    {"Data": RECORDS},
    {"results": RECORDS},
    {"value": RECORDS},
    {"records": RECORDS},
    {"rows": RECORDS},
    {"data": {"items": RECORDS}},
    {"somethingNew": RECORDS, "total": 2},
    json.dumps({"transactions": RECORDS}),
    json.dumps(RECORDS).encode(),
])
def test_extract_records_accepts_usual_envelopes(body):
    assert frames.extract_records(body, method="GET", path="/x") == RECORDS


@pytest.mark.parametrize("key", ["nocs", "achNocs", "AchNocs"])
def test_extract_records_nocs(key):
    nocs = [{"nocId": 1, "changeCode": "C01"}]
    assert frames.extract_records({key: nocs}) == nocs


@pytest.mark.parametrize("body", [
    {"transaction": RECORDS[0]}, {"Transaction": RECORDS[0]}, {"item": RECORDS[0]},
    {"data": RECORDS[0]}, RECORDS[0],
])
def test_single_record_bare_or_wrapped(body):
    assert frames.extract_records(body) == [RECORDS[0]]
    assert frames.extract_record(body) == RECORDS[0]


def test_extract_record_from_a_list_of_one():
    assert frames.extract_record({"transactions": [RECORDS[0]]}) == RECORDS[0]
    assert frames.extract_record([RECORDS[0]]) == RECORDS[0]


@pytest.mark.parametrize("body", [[], {"transactions": []}, {"total": 0},
                                  {"transactions": None, "total": 0}, b"", ""])
def test_empty_answers(body):
    assert frames.extract_records(body) == []


@pytest.mark.parametrize("body", [
    {"message": "hello"}, "not json at all", 42, ["a", "b"], {"total": 3},
    b"<html><body>Bad gateway</body></html>",
])
def test_unknown_shapes_raise_response_format_error(body):
    with pytest.raises(ResponseFormatError) as info:
        frames.extract_records(body, method="GET", path="/api/v3/AchTransactions/companycode/X")
    text = str(info.value)
    assert text.startswith("GET /api/v3/AchTransactions/companycode/X: ")
    assert "the answer began" in text


def test_error_quotes_the_start_masked_and_short():
    body = json.dumps({"weird": "4111111111111111", "password": "hunter2",
                       "access_token": "eyJsecret", "padding": "x" * 500})
    with pytest.raises(ResponseFormatError) as info:
        frames.extract_records(body, method="GET", path="/p")
    text = str(info.value)
    assert "4111111111111111" not in text and "1111" not in text
    assert "hunter2" not in text and "eyJsecret" not in text
    assert '"weird"' in text
    quoted = text.split("the answer began: ", 1)[1]
    assert len(quoted) <= 210


def test_extract_record_refuses_many_and_none():
    with pytest.raises(ResponseFormatError, match="expected one record, the answer holds 2"):
        frames.extract_record(RECORDS, method="GET", path="/p")
    with pytest.raises(ResponseFormatError, match="no record"):
        frames.extract_record({"message": "x"})


def test_list_metadata_any_casing_exact_amounts():
    meta = frames.list_metadata({"Total": "3", "CreditAmount": 0.1, "DEBIT_AMOUNT": 0.2,
                                 "transactions": []})
    assert meta == {"total": 3, "creditAmount": Decimal("0.1"), "debitAmount": Decimal("0.2")}
    assert meta["creditAmount"] + meta["debitAmount"] == Decimal("0.3")
    assert frames.list_metadata(RECORDS) == {}
    bulk = frames.list_metadata({"total": 2, "validCount": 1, "invalidCount": 1,
                                 "transactions": []})
    assert bulk == {"total": 2, "validCount": 1, "invalidCount": 1}


# --------------------------------------------------------------------------- names

@pytest.mark.parametrize(("raw", "expected"), [
    ("ItemStatus", "itemStatus"), ("itemStatus", "itemStatus"), ("ITEMSTATUS", "itemStatus"),
    ("item_status", "itemStatus"), ("ReturnDate", "returnDate"), ("AchItemId", "achItemId"),
    ("ACHItemId", "achItemId"), ("ID", "id"), ("SomeNewField", "someNewField"),
    ("HTTPCode", "httpCode"), ("new_field_name", "newFieldName"),
])
def test_camel_case(raw, expected):
    assert frames.camel_case(raw) == expected


def test_pascal_case_records_give_the_same_frame():
    pascal = [{key[0].upper() + key[1:]: value for key, value in r.items()} for r in RECORDS]
    pd.testing.assert_frame_equal(frames.to_frame(pascal, "ach"), frames.to_frame(RECORDS, "ach"))


def test_generic_id_and_status_names_find_their_column():
    df = frames.to_frame([{"ItemId": 7, "Status": "r", "ReturnDate": "2026-01-02"}], "ach")
    assert df["achItemId"].tolist() == [7]
    assert df["itemStatus"].tolist() == ["R"]
    assert df["itemStatusName"].tolist() == ["Returned"]


def test_two_spellings_of_one_field_merge():
    df = frames.to_frame([{"itemStatus": "W"}, {"ItemStatus": "B"}], "ach")
    assert df["itemStatus"].tolist() == ["W", "B"]
    assert list(df.columns).count("itemStatus") == 1


# --------------------------------------------------------------------------- schema

@pytest.mark.parametrize("kind", frames.KINDS)
def test_same_columns_and_dtypes_for_0_and_n_rows(kind):
    empty = frames.to_frame([], kind)
    assert len(empty) == 0
    sample = {
        "ach": [ach_record(i, itemStatus=s) for i, s in enumerate("WSRIBV" * 3)],
        "rcc": [{"rccItemId": 1, "amount": 1, "itemStatus": "S", "depositDateTime": "2026-01-01",
                 "returnReason": "R02"}],
        "instant": [{"uniqueId": "u1", "cardLastFour": "1111", "amount": 5, "status": "Failed",
                     "completedDateTime": "2025-06-11T20:50:04.032Z"}],
        "rtp": [{"uniqueId": "u2", "accountNumber": "000123456789", "amount": 7,
                 "status": "Success"}],
        "noc": [{"nocId": 3, "achItemId": 9, "changeCode": "C02", "correctedData": "021000021",
                 "nocDate": "2026-02-03T00:00:00.000"}],
    }[kind]
    full = frames.to_frame(sample, kind)
    assert list(full.columns) == list(empty.columns)
    assert full.dtypes.to_dict() == empty.dtypes.to_dict()
    assert frames.empty_frame(kind).dtypes.to_dict() == empty.dtypes.to_dict()


def test_ach_dtypes_follow_the_team_schema():
    df = frames.to_frame([ach_record(1)], "ach")
    assert str(df["achItemId"].dtype) == "Int64"
    assert isinstance(df["itemStatus"].dtype, pd.CategoricalDtype)
    assert df["itemStatus"].cat.ordered
    assert tuple(df["itemStatus"].cat.categories) == codes.STATUS_ORDER
    assert str(df["returnDate"].dtype) == "datetime64[ns, UTC]"  # an instant (issue 32.1)
    assert str(df["receivedDateTime"].dtype) == "datetime64[ns, UTC]"
    assert df["amount"].dtype == pd.ArrowDtype(pa.decimal128(18, 2))
    columns = list(df.columns)
    assert columns.index("itemStatusName") == columns.index("itemStatus") + 1
    assert columns.index("returnReasonDescription") == columns.index("returnReason") + 1


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="kind must be one of"):
        frames.to_frame([], "wire")


def test_kind_aliases():
    assert list(frames.to_frame([], "nocs").columns) == list(frames.to_frame([], "noc").columns)


# --------------------------------------------------------------------------- values

def test_exact_amounts_sum():
    df = frames.to_frame([ach_record(1, amount=0.1), ach_record(2, amount=0.2)], "ach")
    assert df["amount"].sum() == Decimal("0.30")
    assert df["amount"].astype("float64").tolist() == [0.1, 0.2]


@pytest.mark.parametrize("amounts", [
    [0.1, 0.2, None], ["0.1", "0.2", None], [Decimal("0.1"), Decimal("0.2"), None],
    [0.1, "0.2", None], [Decimal("0.10"), 0.2, None],
])
def test_amounts_of_any_json_type_are_exact(amounts):
    df = frames.to_frame([ach_record(i, amount=a) for i, a in enumerate(amounts)], "ach")
    assert df["amount"].dtype == pd.ArrowDtype(pa.decimal128(18, 2))
    assert df["amount"].tolist()[:2] == [Decimal("0.10"), Decimal("0.20")]
    assert df["amount"].isna().tolist() == [False, False, True]


def test_large_and_integer_amounts():
    df = frames.to_frame([ach_record(1, amount=12345678901.99), ach_record(2, amount=7)], "ach")
    assert df["amount"].tolist() == [Decimal("12345678901.99"), Decimal("7.00")]


@pytest.mark.parametrize("amounts", [[0.125, 1.5], ["0.125", "1.5"], [Decimal("0.125"), 1]])
def test_more_than_two_decimals_widen_the_scale_never_round(amounts, caplog):
    with caplog.at_level(logging.WARNING, logger="paynb"):
        df = frames.to_frame([ach_record(i, amount=a) for i, a in enumerate(amounts)], "ach")
    assert df["amount"].dtype.pyarrow_dtype.scale == 3
    assert df["amount"].iloc[0] == Decimal("0.125")
    assert "3 decimals" in caplog.text


def test_timestamps_of_every_form():
    values = ["2025-06-11T20:50:04.032Z", "2026-11-01T00:00:00.000", "2026-11-01",
              "2025-06-11T15:50:04.032-05:00", None]
    df = frames.to_frame([ach_record(i, receivedDateTime=v, returnDate=v)
                          for i, v in enumerate(values)], "ach")
    got = df["receivedDateTime"].tolist()
    assert got[0] == pd.Timestamp("2025-06-11T20:50:04.032", tz="UTC")
    assert got[1] == pd.Timestamp("2026-11-01", tz="UTC")
    assert got[2] == pd.Timestamp("2026-11-01", tz="UTC")
    assert got[3] == got[0]
    assert pd.isna(got[4])
    # Every time field reads the same instants, UTC, time of day and all.
    assert str(df["returnDate"].dtype) == "datetime64[ns, UTC]"
    assert df["returnDate"].tolist()[:4] == got[:4]


def test_unreadable_timestamps_are_empty_and_logged(caplog):
    with caplog.at_level(logging.WARNING, logger="paynb"):
        df = frames.to_frame([ach_record(1, returnDate="yesterday")], "ach")
    assert df["returnDate"].isna().all()
    assert "returnDate" in caplog.text


def test_status_codes_names_and_unknown_codes(caplog):
    statuses = ["W", "r", "Blocked", None, "Q"]
    with caplog.at_level(logging.WARNING, logger="paynb"):
        df = frames.to_frame([ach_record(i, itemStatus=s) for i, s in enumerate(statuses)], "ach")
    assert df["itemStatus"].tolist()[:3] == ["W", "R", "B"]
    assert pd.isna(df["itemStatus"].iloc[3])
    assert df["itemStatus"].iloc[4] == "Q"  # kept, appended after the known codes
    assert list(df["itemStatus"].cat.categories) == [*codes.STATUS_ORDER, "Q"]
    names = df["itemStatusName"].tolist()
    assert names[:3] == ["Waiting", "Returned", "Blocked"]
    assert pd.isna(names[3]) and pd.isna(names[4])
    assert "Q" in caplog.text


def test_return_and_change_codes_explained():
    with pytest.warns(UnknownCodeWarning) as caught:
        df = frames.to_frame([ach_record(1, itemStatus="R", returnReason="R01"),
                              ach_record(2, itemStatus="R", returnReason="R99"),
                              ach_record(3, itemStatus="R", returnReason=" r99"),
                              ach_record(4, itemStatus="R", returnReason="R48"),
                              ach_record(5, itemStatus="S")], "ach")
    assert df["returnReasonDescription"].tolist()[:4] == [
        codes.RETURN_CODES["R01"], *["not a NACHA code paynb knows"] * 3]
    assert pd.isna(df["returnReasonDescription"].iloc[4])
    # One warning for the frame, naming each unknown code once; the codes are kept.
    assert len(caught) == 1 and caught[0].message.codes == ("R48", "R99")
    assert caught[0].message.column == "returnReason"
    assert str(caught[0].message).startswith("returnReason: R48, R99 are not NACHA return codes")
    assert caught[0].filename == __file__  # it points at the caller's line
    assert df["returnReason"].tolist()[1:4] == ["R99", " r99", "R48"]
    with pytest.warns(UnknownCodeWarning, match="changeCode: C99 is not a NACHA change code"):
        nocs = frames.to_frame([{"nocId": 1, "changeCode": "C05"},
                                {"nocId": 2, "changeCode": "C02", "changeReason": "Given"},
                                {"nocId": 3, "changeCode": "C99"},
                                {"nocId": 4, "changeCode": "C61"}], "noc")
    assert nocs["changeReason"].tolist() == [codes.NOC_CODES["C05"], "Given",
                                             "not a NACHA code paynb knows",
                                             "Refused NOC: misrouted"]


def test_known_codes_do_not_warn(recwarn):
    frames.to_frame([ach_record(i, itemStatus="R", returnReason=code)
                     for i, code in enumerate(codes.RETURN_CODE_TABLE, 1)], "ach")
    frames.to_frame([{"nocId": i, "changeCode": code}
                     for i, code in enumerate(codes.NOC_CODE_TABLE, 1)], "noc")
    assert not [w for w in recwarn if issubclass(w.category, UnknownCodeWarning)]


def test_ids_nullable_integers_from_numbers_or_text():
    df = frames.to_frame([ach_record(1), ach_record("22"), ach_record(None)], "ach")
    assert df["achItemId"].tolist()[:2] == [1, 22]
    assert pd.isna(df["achItemId"].iloc[2])
    assert str(df["achItemId"].dtype) == "Int64"


def test_account_numbers_masked_unless_asked():
    records = [ach_record(1, bankAccountNumber="123456789"), ach_record(2, bankAccountNumber="12")]
    assert frames.to_frame(records, "ach")["bankAccountNumber"].tolist() == ["****6789", "****"]
    unmasked = frames.to_frame(records, "ach", mask=False)
    assert unmasked["bankAccountNumber"].tolist() == ["123456789", "12"]
    rtp = frames.to_frame([{"uniqueId": "u", "accountNumber": "000111222333"}], "rtp")
    assert rtp["accountNumber"].tolist() == ["****2333"]


def test_noc_corrected_account_masked_routing_kept():
    nocs = frames.to_frame([
        {"nocId": 1, "changeCode": "C01", "correctedData": "987654321"},
        {"nocId": 2, "changeCode": "C03", "correctedData": "021000021   987654321"},
        {"nocId": 3, "changeCode": "C02", "correctedData": "021000021"},
    ], "noc")
    assert nocs["correctedData"].tolist() == ["****4321", "021000021   ****4321", "021000021"]


def test_card_numbers_only_last_four_even_unmasked():
    records = [{"uniqueId": "a", "cardNumber": "4111 1111 1111 1234", "amount": 5},
               {"uniqueId": "b", "cardLastFour": "9876", "amount": 6}]
    for mask in (True, False):
        df = frames.to_frame(records, "instant", mask=mask)
        assert "cardNumber" not in df.columns
        assert df["cardLastFour"].tolist() == ["1234", "9876"]
        assert "4111" not in df.to_string()
    ach = frames.to_frame([ach_record(1, cardNumber="4111111111111111")], "ach")
    assert "cardNumber" not in ach.columns and ach["cardLastFour"].tolist() == ["1111"]


def test_instant_status_categorical():
    df = frames.to_frame([{"uniqueId": "a", "status": "success"},
                          {"uniqueId": "b", "status": "Failed"},
                          {"uniqueId": "c", "status": "Pending"}], "instant")
    assert df["status"].tolist() == ["Success", "Failed", "Pending"]
    assert list(df["status"].cat.categories) == ["Success", "Failed", "Pending"]


def test_unknown_fields_kept_as_typed_columns():
    df = frames.to_frame([ach_record(1, newFlag=True, BatchNumber=12, traceId="t1",
                                     effectiveDate="2026-01-05", feeAmount=0.25,
                                     errors={"amount": ["bad"]})], "ach")
    tail = list(df.columns)[-6:]
    assert set(tail) == {"newFlag", "batchNumber", "traceId", "effectiveDate", "feeAmount",
                         "errors"}
    assert str(df["batchNumber"].dtype) == "Int64"
    assert str(df["newFlag"].dtype) == "boolean"
    assert str(df["effectiveDate"].dtype) == "datetime64[ns, UTC]"
    assert df["feeAmount"].iloc[0] == Decimal("0.25")
    assert df["errors"].iloc[0] == {"amount": ["bad"]}
    assert df["traceId"].iloc[0] == "t1"


def test_records_with_different_keys():
    df = frames.to_frame([{"achItemId": 1}, {"achItemId": 2, "extra": "x"}], "ach")
    assert df["achItemId"].tolist() == [1, 2]
    assert df["extra"].isna().tolist() == [True, False]


def test_frame_from_an_export_dataframe():
    export = pd.DataFrame({"AchItemId": ["1", "2"], "Amount": ["10.10", "0.20"],
                           "ItemStatus": ["R", "W"], "ReturnDate": ["2026-11-01", None],
                           "BankAccountNumber": ["123456789", "987654321"]})
    df = frames.to_frame(export, "ach")
    assert df["achItemId"].tolist() == [1, 2]
    assert df["amount"].sum() == Decimal("10.30")
    assert df["bankAccountNumber"].tolist() == ["****6789", "****4321"]
    assert df.dtypes.to_dict() == frames.empty_frame("ach").dtypes.to_dict()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.decimals(min_value=-10**11, max_value=10**11, places=2, allow_nan=False,
                            allow_infinity=False), min_size=1, max_size=40))
def test_json_amounts_are_exact_whatever_the_values(amounts):
    body = "[" + ",".join(f'{{"achItemId": {i}, "amount": {a}}}' for i, a in
                          enumerate(amounts)) + "]"
    df = frames.to_frame(frames.extract_records(body), "ach")  # json.loads gives floats
    assert df["amount"].dtype == pd.ArrowDtype(pa.decimal128(18, 2))
    assert df["amount"].tolist() == amounts
    assert df["amount"].sum() == sum(amounts)


@pytest.mark.parametrize("values", [["0001-01-01T00:00:00"], ["0001-01-01T00:00:00", None],
                                    ["9999-12-31T23:59:59.9999999Z", "2026-11-01"]])
def test_timestamps_outside_the_nanosecond_range_are_empty(values):
    df = frames.to_frame([ach_record(i, settleDate=v) for i, v in enumerate(values)], "ach")
    assert str(df["settleDate"].dtype) == "datetime64[ns, UTC]"
    assert df["settleDate"].isna().iloc[0]
    if len(values) > 1 and values[1]:
        assert df["settleDate"].iloc[1] == pd.Timestamp("2026-11-01", tz="UTC")


def test_space_separated_timestamps():
    df = frames.to_frame([ach_record(1, receivedDateTime="2026-11-01 10:00:00",
                                     sendDate="2026-11-01 10:00:00")], "ach")
    assert df["receivedDateTime"].iloc[0] == pd.Timestamp("2026-11-01T10:00:00", tz="UTC")
    assert df["sendDate"].iloc[0] == pd.Timestamp("2026-11-01T10:00:00", tz="UTC")


# --------------------------------------------------------------------------- never crash

_FIELDS = sorted({name for kind in frames.KINDS for name in frames.empty_frame(kind).columns}
                 | {"cardNumber", "ItemStatus", "someExtra", "extraDate"})
_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=3), inner,
                                                                  max_size=2),
    max_leaves=3)
_VALUES = _JSON | st.sampled_from([
    "2025-06-11T20:50:04.032Z", "2026-11-01T00:00:00.000", "2026-11-01", "0001-01-01T00:00:00",
    "", "R01", "C01", "w", "Returned", "12.345", "1,200.50", "4111111111111111"])


@settings(max_examples=60, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(_FIELDS), _VALUES, max_size=8), max_size=5),
       st.sampled_from(frames.KINDS), st.booleans())
def test_any_json_values_give_a_frame_with_the_kinds_columns(records, kind, mask):
    df = frames.to_frame(records, kind, mask=mask)
    empty = frames.empty_frame(kind)
    assert list(df.columns[: len(empty.columns)]) == list(empty.columns)
    assert len(df) == len(records)
    assert "cardNumber" not in df.columns


@settings(max_examples=60, deadline=None)
@given(_JSON)
def test_any_answer_gives_records_or_response_format_error(body):
    try:
        records = frames.extract_records(body, method="GET", path="/p")
    except ResponseFormatError as error:
        assert str(error).startswith("GET /p: ")
    else:
        assert all(isinstance(record, dict) for record in records)


# --------------------------------------------------------------------------- sandbox records

@pytest.mark.parametrize(("resource", "kind"), [
    ("ach", "ach"), ("rcc", "rcc"), ("instant", "instant"), ("rtp", "rtp"), ("nocs", "noc"),
])
def test_sandbox_lists_have_the_same_columns_and_dtypes_for_0_and_n_rows(client, resource, kind):
    # Every field the sandbox sends must be a known column of the kind: an unknown one
    # would be a column of the frame with rows only (an analyst's code breaks on 0 rows).
    listing = getattr(client, resource)
    full = listing.list(page=0, page_size=200)
    empty = listing.list(page=100_000, page_size=200)
    assert len(full) > 0 and len(empty) == 0
    assert list(full.columns) == list(empty.columns) == list(frames.empty_frame(kind).columns)
    assert full.dtypes.to_dict() == empty.dtypes.to_dict()


def test_card_brand_categorical_known_in_any_casing_others_kept_quietly(caplog):
    with caplog.at_level(logging.WARNING, logger="paynb.frames"):
        df = frames.to_frame([{"uniqueId": "a", "cardBrand": "VISA"},
                              {"uniqueId": "b", "cardBrand": "amex"},
                              {"uniqueId": "c", "cardBrand": "JCB"},
                              {"uniqueId": "d"}], "instant")
    assert df["cardBrand"].tolist()[:3] == ["Visa", "American Express", "JCB"]
    assert pd.isna(df["cardBrand"].iloc[3])
    assert list(df["cardBrand"].cat.categories) == [*frames.CARD_BRANDS, "JCB"]
    assert list(frames.empty_frame("instant")["cardBrand"].cat.categories) == list(
        frames.CARD_BRANDS)
    assert not caplog.records


def test_open_sets_are_categoricals_that_keep_unknown_values_quietly(caplog):
    records = [{"achItemId": 1, "achEntryClass": "PPD", "achAccountType": "Checking",
                "achTransactionSubType": " "},
               {"achItemId": 2, "achEntryClass": "XYZ", "achAccountType": "Brokerage",
                "achTransactionSubType": "Prenote", "achTransactionCode": 28}]
    with caplog.at_level("WARNING", logger="paynb.frames"):
        df = frames.to_frame(records, "ach")
    assert not caplog.records  # an open set: a new value is no surprise
    assert list(df["achEntryClass"].astype(object)) == ["PPD", "XYZ"]
    assert "XYZ" in df["achEntryClass"].cat.categories
    assert df["achEntryClassDescription"].iloc[0].startswith("Prearranged Payment")
    assert pd.isna(df["achEntryClassDescription"].iloc[1])
    assert df["achAccountType"].iloc[1] == "Brokerage"
    assert pd.isna(df["achTransactionSubType"].iloc[0])  # a single blank: ordinary item
    assert df["achTransactionCodeDescription"].tolist()[1] == "Checking debit prenote"


def test_documented_fields_left_out_still_have_their_typed_columns():
    df = frames.to_frame([{"achItemId": 1, "itemStatus": "W"}] * 3, "ach")
    empty = frames.empty_frame("ach")
    assert df.dtypes.to_dict() == empty.dtypes.to_dict()
    assert df["sameDayAchRequested"].isna().all() and str(df["merchantId"].dtype) == "Int64"
    assert str(df["achEffectiveDate"].dtype) == "datetime64[ns, UTC]"
# --------------------------------------------------------------------------- dates and units
# (issue 13: date-only fields showed as 2026-11-23 00:00:00+00:00; instant amounts as dollars)

def test_every_time_is_the_utc_instant_sent_and_midnights_print_as_dates():
    # Issue 32.1: settleDate lost its time of day, sendDate its zone.
    df = frames.to_frame([
        ach_record(1, settleDate="2026-11-23T00:00:00.000", sendDate="2026-11-22T00:00:00Z",
                   returnDate="2026-11-24", achEffectiveDate="2025-06-11T18:25:21.435Z"),
        ach_record(2, settleDate=None, sendDate=None, returnDate=None),
    ], "ach")
    for name in ("settleDate", "sendDate", "returnDate", "achEffectiveDate", "receivedDateTime"):
        assert str(df[name].dtype) == "datetime64[ns, UTC]", name
    # Nothing dropped: an effective date sent with a time keeps it.
    assert df["achEffectiveDate"].iloc[0] == pd.Timestamp("2025-06-11T18:25:21.435Z")
    # All midnight: shown as dates, in the repr, the HTML table, to_string and CSV.
    assert df["settleDate"].to_string() == "0   2026-11-23\n1          NaT"
    shown = df[["sendDate", "settleDate", "returnDate"]]
    assert "00:00:00" not in repr(shown) and "00:00:00" not in shown._repr_html_()
    assert "<td>2026-11-23</td>" in shown._repr_html_()
    # pandas 2 prints the milliseconds to six places (.435000), pandas 3 as sent (.435).
    assert re.search(r"2025-06-11 18:25:21\.435(000)?\+00:00",
                     df[["achEffectiveDate"]].to_string())
    # ... and they stay so through what analysts do with a frame.
    for changed in (df.head(1), df.sort_values("achItemId", ascending=False),
                    pd.concat([df, df]), df[df["achItemId"] > 0].copy(),
                    df.merge(df[["achItemId"]], on="achItemId")):
        assert "00:00:00" not in changed[["settleDate"]].to_string()
    # Still datetimes for analysis: .dt, comparisons with text, arithmetic, the UTC day.
    assert df["settleDate"].dt.day_name().iloc[0] == "Monday"
    assert (df["settleDate"] >= "2026-11-23").tolist() == [True, False]
    assert (df["settleDate"] - df["sendDate"]).iloc[0] == pd.Timedelta(days=1)
    assert df["settleDate"].dt.date.iloc[0] == dt.date(2026, 11, 23)
    assert (df["settleDate"] > df["receivedDateTime"]).iloc[0]  # one dtype: comparable


def test_a_time_of_day_in_a_column_shows_in_the_whole_column():
    df = frames.to_frame([ach_record(1, returnDate="2026-11-24T15:30:00Z",
                                     sendDate="2026-11-22T00:00:00Z"),
                          ach_record(2, returnDate="2026-11-25T00:00:00Z")], "ach")
    assert df["returnDate"].tolist() == [pd.Timestamp("2026-11-24T15:30Z"),
                                         pd.Timestamp("2026-11-25T00:00Z")]
    assert df["returnDate"].to_string() == ("0   2026-11-24 15:30:00+00:00\n"
                                            "1   2026-11-25 00:00:00+00:00")
    rcc = frames.to_frame([{"rccItemId": 1, "depositDateTime": "2026-11-20T00:00:00.000"}], "rcc")
    timed = frames.to_frame([{"rccItemId": 1, "depositDateTime": "2026-11-20T09:12:00Z"}], "rcc")
    assert timed["depositDateTime"].dtype == rcc["depositDateTime"].dtype  # one dtype
    assert timed["depositDateTime"].iloc[0] == pd.Timestamp("2026-11-20T09:12Z")


def test_utc_instants_makes_a_column_built_elsewhere_print_the_same_way():
    plain = pd.Series(pd.to_datetime(["2026-11-19", None], utc=True), name="due")
    assert "00:00:00" in plain.to_string()  # pandas' own UTC column
    shown = frames.utc_instants(plain)
    assert shown.to_string() == "0   2026-11-19\n1          NaT"
    assert shown.name == "due" and str(shown.dtype) == "datetime64[ns, UTC]"
    pd.testing.assert_series_equal(shown, plain.astype("datetime64[ns, UTC]"))
    naive = frames.utc_instants(pd.Series(pd.to_datetime(["2026-11-19 10:00"])))
    assert naive.iloc[0] == pd.Timestamp("2026-11-19T10:00Z")  # zone-less is UTC


@pytest.mark.parametrize("kind", ["instant", "rtp"])
def test_instant_amounts_are_the_wire_integer_with_their_unit_stated(kind):
    df = frames.to_frame([{"uniqueId": "a", "amount": 1500}, {"uniqueId": "b", "amount": None},
                          {"uniqueId": "c", "amount": "2051"}], kind)
    assert str(df["amount"].dtype) == "Int64"
    assert df["amount"].tolist()[::2] == [1500, 2051]
    assert "1500.00" not in df.to_string()
    assert "not stated" in df.attrs["amountUnit"]
    assert str(frames.empty_frame(kind)["amount"].dtype) == "Int64"
    # ACH amounts are dollars and cents, and say nothing of a unit
    assert "amountUnit" not in frames.to_frame([ach_record(1)], "ach").attrs


def test_instant_amounts_with_fractions_stay_exact_with_a_warning(caplog):
    df = frames.to_frame([{"uniqueId": "a", "amount": 15.25}], "instant")
    assert df["amount"].tolist() == [Decimal("15.25")]
    assert "not whole numbers" in caplog.text


def test_a_noc_date_keeps_the_time_it_carries_in_the_dtype_of_an_empty_frame():
    # A NOC made "now" (the sandbox's simulate.create_noc) must not change the column's
    # dtype: a frame of NOCs keeps the dtype of an empty one; its time is kept.
    df = frames.to_frame([{"nocId": 1, "nocDate": "2026-11-23T13:59:18.123Z"}], "noc")
    assert df["nocDate"].tolist() == [pd.Timestamp("2026-11-23T13:59:18.123Z")]
    assert df.dtypes.to_dict() == frames.empty_frame("noc").dtypes.to_dict()
