"""VoidForm against the sandbox: preview first, non-voidable items flagged, then the void."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from paynb.forms import VoidForm

pytestmark = pytest.mark.guards_unchecked


@pytest.fixture
def submitted(client: Any, ref: Any) -> list[Any]:
    """Three fresh ACH items (status W); the second one already voided (status V)."""
    items = [client.ach.submit({
        "firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
        "zip": "10001", "yourReferenceNumber": ref(f"v{n}"), "bankRoutingNumber": "021000021",
        "bankAccountNumber": "000123456789", "achTransactionType": "Debit",
        "amount": Decimal("12.34")}) for n in range(3)]
    client.ach.void(int(items[1]["achItemId"]))
    return items


def _status(client: Any, item: Any) -> str:
    return str(client.ach.get(int(item["achItemId"]))["itemStatus"])


def test_void_by_ids_flags_the_non_voidable_and_voids_the_rest(client, submitted) -> None:
    ids = [int(i["achItemId"]) for i in submitted]
    form = VoidForm(client, items=ids)  # fetches and shows what will be voided
    assert form.by.value == "ids"
    checks = list(form.targets["check"])
    assert checks[0] == checks[2] == "can be voided"
    assert checks[1].startswith("cannot be voided: status V (Voided)")
    assert "cannot be voided" in form.preview.value
    assert form.confirm.description == ("I confirm: void 2 ACH items (1 cannot be voided "
                                        "and will be left alone), for company DEMO1 on the "
                                        "sandbox (simulated, nothing is paid)")
    assert form.void_button.disabled
    form.void_button.click()  # not confirmed: nothing happens
    assert _status(client, submitted[0]) == "W"

    form.confirm.value = True
    form.void_button.click()
    form.void_button.click()  # a double click voids once
    assert [_status(client, i) for i in submitted] == ["V", "V", "V"]
    result = form.result
    assert list(result["outcome"])[0] == "voided" and list(result["outcome"])[2] == "voided"
    assert result["outcome"].iloc[1].startswith("not voided")
    assert list(result["statusBefore"]) == ["W", "V", "W"]
    assert list(result["itemStatus"]) == ["V", "V", "V"]
    assert form.status_text == "Voided 2 of 3 items."
    assert form.void_button.disabled


def test_void_one_id(client, submitted) -> None:
    form = VoidForm(client, items=int(submitted[0]["achItemId"]))
    form.confirm.value = True
    form.void_button.click()
    assert _status(client, submitted[0]) == "V"
    assert list(form.result["outcome"]) == ["voided"]


def test_void_by_typed_reference_numbers(client, submitted) -> None:
    form = VoidForm(client)
    form.by.value = "refs"
    first, last = submitted[0]["yourReferenceNumber"], submitted[2]["yourReferenceNumber"]
    form.entry.value = f"{first},\n{last}"  # pasted: commas and new lines
    assert form.void_button.disabled and "Show what will be voided" in form.status_text
    form.fetch_button.click()
    assert list(form.targets["canVoid"]) == [True, True]
    form.confirm.value = True
    form.void_button.click()
    assert _status(client, submitted[0]) == _status(client, submitted[2]) == "V"
    assert _status(client, submitted[1]) == "V"  # it was voided before


def test_void_the_rows_of_a_dataframe(client, submitted) -> None:
    listed = client.ach.list(progress=False)
    mine = listed[listed["yourReferenceNumber"].isin(
        [i["yourReferenceNumber"] for i in submitted])]
    form = VoidForm(client, items=mine)
    assert form.kind.value == "ach" and form.by.value == "ids"
    assert int(form.targets["canVoid"].sum()) == 2


def test_unknown_ids_and_bad_input(client, submitted) -> None:
    form = VoidForm(client)
    form.entry.value = "abc 12"
    assert form.fetch_button.disabled and "Not item ids: abc" in form.status_text
    form.entry.value = f"{int(submitted[0]['achItemId'])} 987654321"
    form.fetch_button.click()
    assert list(form.targets["check"]) == ["can be voided", "not found"]


def test_an_edit_after_the_preview_asks_for_a_new_one(client, submitted) -> None:
    form = VoidForm(client, items=[int(submitted[0]["achItemId"])])
    form.confirm.value = True
    form.entry.value = str(int(submitted[2]["achItemId"]))
    assert form.targets is None and form.void_button.disabled
    form.void_button.click()
    assert _status(client, submitted[0]) == _status(client, submitted[2]) == "W"


def test_many_ids_are_matched_in_one_read_of_the_list(client, submitted) -> None:
    ids = [int(i["achItemId"]) for i in submitted] + list(range(900001, 900030))
    form = VoidForm(client, items=ids)
    assert list(form.targets["check"])[:3] == [
        "can be voided", "cannot be voided: status V (Voided); only Waiting (W) items can be "
        "voided", "can be voided"]
    assert set(form.targets["check"][3:]) == {"not found"}
    assert form.confirm.description.startswith("I confirm: void 2 ACH items")


def test_reading_the_list_says_how_many_pages_are_in(client, submitted) -> None:
    form = VoidForm(client)
    form.by.value = "refs"
    form.entry.value = str(submitted[0]["yourReferenceNumber"])
    said: list[str] = []
    form.status.observe(lambda _change: said.append(form.status_text), names="value")
    form.fetch_button.click()
    assert list(form.targets["canVoid"]) == [True]
    pages = -(-len(client.ach.list(progress=False)) // client.page_size)
    assert pages > 1
    assert [text for text in said if "page" in text] == [
        f"Reading the ACH list… page {n} of {pages}" for n in range(1, pages + 1)]
