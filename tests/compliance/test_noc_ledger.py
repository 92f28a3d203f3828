"""The NOC correction ledger, frame level: corrected data read per change code, due dates
hand-computed on the Fed calendar (a Saturday holiday not moved), states at their edges."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pandas as pd
import pytest

from paynb import frames
from paynb.compliance import NOC_CHANGES, Correction, noc_obligations, parse_corrected_data
from paynb.errors import ValidationError

ROUTING, ACCOUNT = "021000021", "000123456789"


def item(item_id: int, received: str, *, account: str = ACCOUNT, status: str = "S",
         **extra: Any) -> dict[str, Any]:
    return {"achItemId": item_id, "firstSignerFirstName": "Jane", "firstSignerLastName": "Doe",
            "state": "NY", "zip": "10001", "bankRoutingNumber": ROUTING,
            "bankAccountNumber": account, "achAccountType": "Checking", "achEntryClass": "PPD",
            "achTransactionType": "Debit", "amount": "25.00", "itemStatus": status,
            "receivedDateTime": received, **extra}


def noc(noc_id: int, item_id: int, date: str, code: str = "C01",
        data: str = "999888777") -> dict[str, Any]:
    return {"nocId": noc_id, "achItemId": item_id, "yourReferenceNumber": f"R{item_id}",
            "changeCode": code, "correctedData": data, "nocDate": date}


# Receipt Monday 2026-06-29. Banking days after it: Tue 6-30 (1), Wed 7-1 (2), Thu 7-2 (3),
# Fri 7-3 (4: Independence Day falls on Saturday 7-4 and is NOT moved to Friday), Mon 7-6
# (5), Tue 7-7 (6). A calendar that moved the holiday to Friday would say 7-8.
RECEIPT = "2026-06-29T15:00:00Z"
SIXTH = pd.Timestamp("2026-07-07", tz="UTC")


@pytest.mark.parametrize(("as_of", "state"), [
    ("2026-07-02", "open"),       # 3 banking days left (7-3, 7-6, 7-7)
    ("2026-07-03", "due soon"),   # 2 left: the Friday before the Saturday holiday counts
    ("2026-07-07", "due soon"),   # the sixth banking day itself: still in time
    ("2026-07-08", "overdue"),    # the day after
])
def test_the_sixth_banking_day_across_a_saturday_holiday(as_of: str, state: str) -> None:
    ledger = noc_obligations([noc(1, 10, RECEIPT)], items=[item(10, "2026-06-25T10:00:00Z")],
                             as_of=as_of)
    row = ledger.iloc[0]
    assert row["sixthBankingDay"] == SIXTH
    assert row["dueDate"] == SIXTH
    assert row["state"] == state


def test_the_days_paynb_computes_print_as_dates() -> None:
    # Issue 32.1: they printed 2026-07-07 00:00:00+00:00.
    ledger = noc_obligations([noc(1, 10, RECEIPT)], items=[item(10, "2026-06-25T10:00:00Z")],
                             as_of="2026-07-02")
    days = ledger[["sixthBankingDay", "dueDate"]]
    assert days.to_string() == ("  sixthBankingDay    dueDate\n"
                                "0      2026-07-07 2026-07-07")
    assert str(days["dueDate"].dtype) == "datetime64[ns, UTC]"  # compares with any time
    assert (days["dueDate"] > ledger["received"]).all()
    assert "15:00:00+00:00" in ledger[["received"]].to_string()  # the NOC's own time


def test_a_later_next_entry_moves_the_due_date() -> None:
    items = [item(10, "2026-06-25T10:00:00Z"),
             item(11, "2026-07-01T09:00:00Z", status="V"),               # voided: never sent
             item(12, "2026-07-02T09:00:00Z", account="000999999999"),   # another account
             item(13, "2026-07-10T09:00:00Z"),                           # the next entry
             item(14, "2026-07-20T09:00:00Z")]
    row = noc_obligations([noc(1, 10, RECEIPT)], items=items, as_of="2026-07-09").iloc[0]
    assert row["nextEntry"] == pd.Timestamp("2026-07-10T09:00:00Z")
    assert row["dueDate"] == pd.Timestamp("2026-07-10", tz="UTC")
    assert row["state"] == "due soon"
    assert noc_obligations([noc(1, 10, RECEIPT)], items=items,
                           as_of="2026-07-11").iloc[0]["state"] == "overdue"


def test_an_earlier_next_entry_leaves_the_six_banking_days() -> None:
    items = [item(10, "2026-06-25T10:00:00Z"), item(13, "2026-07-01T09:00:00Z")]
    row = noc_obligations([noc(1, 10, RECEIPT)], items=items, as_of="2026-07-01").iloc[0]
    assert row["nextEntry"] == pd.Timestamp("2026-07-01T09:00:00Z")
    assert row["dueDate"] == SIXTH


def test_a_noc_received_on_a_saturday_counts_from_monday() -> None:
    # Saturday 2026-07-04 -> Monday 7-6 received; six banking days later: Tuesday 7-14.
    row = noc_obligations([noc(1, 10, "2026-07-04T12:00:00Z")], items=[item(10, "2026-07-01")],
                          as_of="2026-07-06").iloc[0]
    assert row["dueDate"] == pd.Timestamp("2026-07-14", tz="UTC")


def test_applied_marks_and_the_masked_account() -> None:
    when = dt.datetime(2026, 7, 8, 9, tzinfo=dt.UTC)
    ledger = noc_obligations([noc(1, 10, RECEIPT), noc(2, 10, RECEIPT, "C05", "32")],
                             items=[item(10, "2026-06-25")], as_of="2026-07-20",
                             applied={1: {"by": "ana", "when": when}})
    # Marked on 8 July, a day after its sixth banking day: applied, but late.
    assert list(ledger["state"]) == ["applied late", "overdue"]
    assert ledger.loc[0, "appliedBy"] == "ana"
    assert ledger.loc[0, "appliedAt"] == pd.Timestamp(when)
    assert set(ledger["bankAccountNumber"]) == {"****6789"}
    assert ACCOUNT not in ledger.to_string() and "999888777" not in ledger.to_string()
    assert ledger.loc[0, "mustChange"] == "account number to ****8777"
    assert ledger.loc[1, "mustChange"] == "transaction code to 32 (savings credit)"
    assert ledger["state"].dtype == pd.CategoricalDtype(
        ["open", "due soon", "overdue", "applied", "applied late", "no change"], ordered=True)


@pytest.mark.parametrize(("as_of", "states"), [
    ("2026-06-28", []),                       # the day before the NOC: not received yet
    ("2026-06-29", ["open"]),                 # its own day
    ("2026-07-07", ["due soon"]),             # its sixth banking day, the mark a day later
    ("2026-07-08", ["applied late"]),         # the day of the mark (09:00 UTC): a day late
    ("2026-07-09", ["applied late"]),
])
def test_a_past_as_of_judges_the_ledger_as_it_stood_that_day(as_of: str,
                                                                states: list[str]) -> None:
    applied = {1: {"by": "ana", "when": dt.datetime(2026, 7, 8, 9, tzinfo=dt.UTC)}}
    ledger = noc_obligations([noc(1, 10, RECEIPT)], items=[item(10, "2026-06-25")],
                             as_of=as_of, applied=applied)
    assert list(ledger["state"]) == states
    assert list(ledger.columns)[:2] == ["nocId", "achItemId"]  # an empty ledger keeps them


def test_the_corrected_record_is_offered_in_full_but_shown_masked() -> None:
    ledger = noc_obligations([noc(1, 10, RECEIPT, "C03", "011000015 000555666777")],
                             items=[item(10, "2026-06-25")], as_of="2026-07-01")
    correction = ledger.loc[0, "correction"]
    assert isinstance(correction, Correction)
    record = correction.to_dict()
    assert record["bankRoutingNumber"] == "011000015"
    assert record["bankAccountNumber"] == "000555666777"
    assert record["firstSignerLastName"] == "Doe" and record["zip"] == "10001"
    assert set(correction.changed) == {"bankAccountNumber", "bankRoutingNumber"}
    assert "000555666777" not in str(correction) and "****6777" in str(correction)
    assert "000555666777" not in ledger.to_string()
    assert "000555666777" not in ledger.to_csv()


def test_a_masked_noc_frame_gives_no_correction_and_says_why() -> None:
    nocs = frames.to_frame([noc(1, 10, RECEIPT)], "noc")   # masked, as client.nocs.list()
    row = noc_obligations(nocs, items=[item(10, "2026-06-25")], as_of="2026-07-01").iloc[0]
    assert row["correction"] is None
    assert "not readable" in row["mustChange"]
    # the remedy named is one that exists (a list takes no mask= argument)
    assert "client.nocs.obligations()" in row["mustChange"]
    assert "a client made with mask=False" in row["mustChange"]


@pytest.mark.parametrize(("code", "data", "expected"), [
    ("C01", "999888777", {"bankAccountNumber": "999888777"}),
    ("C02", "011000015", {"bankRoutingNumber": "011000015"}),
    ("C03", "011000015 000555", {"bankRoutingNumber": "011000015", "bankAccountNumber": "000555"}),
    # NACHA layout: routing 1-9, three blanks, account from 13.
    ("C03", "011000015   000555666777     ",
     {"bankRoutingNumber": "011000015", "bankAccountNumber": "000555666777"}),
    ("C05", "32", {"achTransactionCode": "32"}),
    ("C06", "000555666777 32", {"bankAccountNumber": "000555666777", "achTransactionCode": "32"}),
    # NACHA layout: account 1-17, three blanks, transaction code 21-22.
    ("C06", "000555666777        37",
     {"bankAccountNumber": "000555666777", "achTransactionCode": "37"}),
    ("C07", "011000015 000555666777 27", {"bankRoutingNumber": "011000015",
                                          "bankAccountNumber": "000555666777",
                                          "achTransactionCode": "27"}),
    # NACHA layout: routing 1-9, account 10-26, transaction code 27-28.
    ("C07", "011000015000555666777     32", {"bankRoutingNumber": "011000015",
                                              "bankAccountNumber": "000555666777",
                                              "achTransactionCode": "32"}),
    ("C09", "ID123456", {"achIdentificationNumber": "ID123456"}),
    ("C04", "DOE JANE", {"individualName": "DOE JANE"}),
    ("C10", "ACME PAYROLL", {"companyName": "ACME PAYROLL"}),
    ("C01", "****8777", {}),   # masked: cannot correct anything
    ("C99", "x", {}),
])
def test_corrected_data_is_read_per_change_code(code: str, data: str,
                                                 expected: dict[str, str]) -> None:
    assert parse_corrected_data(code, data) == expected


def test_every_known_change_code_is_spelled_out() -> None:
    from paynb.codes import NOC_CODE_TABLE, NOC_CODES

    changes = [c for c, n in NOC_CODE_TABLE.items() if n.group == "change"]
    assert list(NOC_CHANGES) == changes == [f"C{n:02d}" for n in range(1, 15)]
    ledger = noc_obligations([noc(n, 10, RECEIPT, code, "X") for n, code in
                              enumerate([*NOC_CODES, "C99"], 1)], items=[item(10, "2026-06-25")],
                             as_of="2026-07-01")
    assert ledger["mustChange"].notna().all()
    assert (ledger["mustChange"].str.len() > 5).all()
    assert ledger["changeReason"].tolist() == [*NOC_CODES.values(), "not a NACHA code paynb knows"]
    refused = ledger[ledger["changeCode"].str.startswith("C6")]
    assert len(refused) == 9 and (refused["state"] == "no change").all()
    assert refused["dueDate"].isna().all() and refused["sixthBankingDay"].isna().all()
    assert refused["mustChange"].iloc[0] == ("nothing: C61: Refused NOC: misrouted, a notice "
                                             "the ODFI sent back to the bank")
    unknown = ledger[ledger["changeCode"] == "C99"].iloc[0]
    assert unknown["mustChange"] == "C99: not a NACHA code paynb knows: see the NOC"
    # Not known, so not excused: it keeps the six banking days, the analyst looks.
    assert unknown["state"] == "open" and pd.notna(unknown["dueDate"])


def test_without_items_the_account_is_unknown_but_the_dates_are_there() -> None:
    row = noc_obligations([noc(1, 10, RECEIPT)], as_of="2026-07-08").iloc[0]
    assert pd.isna(row["bankAccountNumber"]) and row["state"] == "overdue"


def test_bad_arguments_name_themselves() -> None:
    with pytest.raises(ValidationError, match="as_of"):
        noc_obligations([], as_of="not a date")
    with pytest.raises(ValidationError, match="nocs"):
        noc_obligations("C01")
    with pytest.raises(ValidationError, match="due_soon"):
        noc_obligations([], due_soon=-1)
    assert list(noc_obligations([]).columns)[:3] == ["nocId", "achItemId", "yourReferenceNumber"]


def test_the_same_dtypes_with_zero_or_some_rows() -> None:
    empty = noc_obligations([])
    some = noc_obligations(frames.to_frame([noc(1, 10, RECEIPT)], "noc", mask=False),
                           items=frames.to_frame([item(10, "2026-06-25T10:00:00Z")], "ach",
                                                 mask=False), as_of="2026-07-01")
    assert empty.dtypes.to_dict() == some.dtypes.to_dict()
    assert str(some["dueDate"].dtype) == "datetime64[ns, UTC]"


# ------------------------------------------------- the change made, as later entries show it

NEW = "000555666777"


@pytest.mark.parametrize(("code", "data", "later"), [
    ("C01", NEW, {"account": NEW}),                                       # the new account
    ("C02", "011000015", {"bankRoutingNumber": "011000015"}),
    ("C03", f"011000015 {NEW}", {"bankRoutingNumber": "011000015", "account": NEW}),
    ("C05", "37", {"achAccountType": "Savings"}),                         # same account
    ("C06", f"{NEW} 37", {"account": NEW, "achAccountType": "Savings"}),
    ("C09", "CUST777", {"achIdentificationNumber": "CUST777"}),
    ("C04", "SMITH JANE", {"firstSignerLastName": "Smith"}),              # the name's words
])
def test_a_later_entry_carrying_the_correction_shows_it_applied(
        code: str, data: str, later: dict[str, Any]) -> None:
    items = [item(10, "2026-06-25T10:00:00Z"), item(11, "2026-07-02T09:00:00Z", **later)]
    row = noc_obligations([noc(1, 10, RECEIPT, code, data)], items=items,
                          as_of="2026-07-20").iloc[0]
    assert row["state"] == "applied"
    assert row["appliedEntryId"] == 11 and pd.isna(row["appliedBy"])
    assert row["appliedAt"] == pd.Timestamp("2026-07-02T09:00:00Z")


def test_a_later_entry_that_carries_only_part_of_the_correction_is_not_enough() -> None:
    items = [item(10, "2026-06-25T10:00:00Z"),
             item(11, "2026-07-02T09:00:00Z", account=NEW),                 # still checking
             item(12, "2026-06-28T09:00:00Z", account=NEW, achAccountType="Savings")]  # before
    row = noc_obligations([noc(1, 10, RECEIPT, "C06", f"{NEW} 37")], items=items,
                          as_of="2026-07-20").iloc[0]
    assert row["state"] == "overdue" and pd.isna(row["appliedEntryId"])


def test_an_entry_to_the_old_data_after_the_sixth_day_then_the_correction_is_late() -> None:
    items = [item(10, "2026-06-25T10:00:00Z"),
             item(11, "2026-07-09T09:00:00Z"),                  # the old account, day 8
             item(12, "2026-07-14T09:00:00Z", account=NEW)]     # corrected, five days later
    nocs = [noc(1, 10, RECEIPT, "C01", NEW)]
    row = noc_obligations(nocs, items=items, as_of="2026-07-20").iloc[0]
    # Due before the next entry (9 July, after the sixth banking day); made on the 14th.
    assert row["dueDate"] == pd.Timestamp("2026-07-09", tz="UTC")
    assert (row["state"], row["appliedEntryId"]) == ("applied late", 12)
    # As it stood on the 10th, the correcting entry had not come: overdue then.
    assert noc_obligations(nocs, items=items, as_of="2026-07-10").iloc[0]["state"] == "overdue"


def test_a_mark_and_an_entry_the_earlier_says_when() -> None:
    items = [item(10, "2026-06-25T10:00:00Z"), item(11, "2026-07-02T09:00:00Z", account=NEW)]
    marked = {1: {"by": "ana", "when": dt.datetime(2026, 7, 15, tzinfo=dt.UTC)}}
    row = noc_obligations([noc(1, 10, RECEIPT, "C01", NEW)], items=items, as_of="2026-07-20",
                          applied=marked).iloc[0]
    assert (row["state"], row["appliedBy"], row["appliedEntryId"]) == ("applied", "ana", 11)
    assert row["appliedAt"] == pd.Timestamp("2026-07-02T09:00:00Z")
