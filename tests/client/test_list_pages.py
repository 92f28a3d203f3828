"""A namespace's list through its public ``listing``: page by page (what the history's sync
reads), and as one frame of raw query parameters (what ``reconcile()`` reads)."""

from __future__ import annotations

import math

import pytest

from paynb.errors import ValidationError
from paynb.paging import Page, iter_pages
from paynb.resources import Listing
from paynb.resources._sending import Outcome


def test_pages_are_the_lists_pages_raw(client):
    listed = client.ach.list(progress=False)
    pages = client.ach.listing.pages(page_size=50)
    assert isinstance(client.ach.listing, Listing) and pages.size == 50
    first = pages(0)
    assert isinstance(first, Page) and first.total == len(listed)
    assert pages.envelope["total"] == len(listed)
    last = math.ceil(len(listed) / 50) - 1
    assert len(pages(last).records) == len(listed) - 50 * last
    walked = [r["achItemId"] for records in iter_pages(pages, page_size=pages.size,
                                                       progress=False) for r in records]
    assert walked == listed["achItemId"].tolist()
    # Raw records, as the service sent them: the account number in full (frames mask it).
    assert not str(first.records[0]["bankAccountNumber"]).startswith("*")
    assert client.ach.listing.pages().size == client.page_size


def test_a_page_shows_no_account_number_of_its_raw_records(client):
    """A page's records stay raw (the history keys accounts by their whole numbers), but
    what a notebook shows of ``pages(0)``, its repr, holds none of them."""
    first = client.ach.listing.pages(page_size=5)(0)
    numbers = [str(record["bankAccountNumber"]) for record in first.records]
    assert len(numbers) == 5 and all(len(number) > 4 for number in numbers)
    assert repr(first) == f"Page(5 records, total={first.total})"
    assert not any(number in repr(first) or number in str(first) for number in numbers)


def test_pages_take_raw_query_parameters_and_the_frame_of_them_is_the_lists(client):
    reference = client.ach.list(page=0, page_size=5)["yourReferenceNumber"].iloc[3]
    page = client.ach.listing.pages([("yourReferenceNumber", reference)])(0)
    assert [r["yourReferenceNumber"] for r in page.records] == [reference]
    framed = client.ach.listing.frame([("yourReferenceNumber", reference)])
    assert framed["yourReferenceNumber"].tolist() == [reference]
    assert framed.columns.tolist() == client.ach.list(page=0, page_size=1).columns.tolist()


def test_a_bad_page_size_is_named(client):
    with pytest.raises(ValidationError, match="page_size"):
        client.ach.listing.pages(page_size=0)


def test_an_outcome_is_read_from_the_answer_of_its_entry():
    reasons = {"itemStatus": "B", "achItemId": 7, "itemStatusDescription": "state blocked"}
    assert Outcome.of(1, reasons, "achItemId") == Outcome(
        1, "blocked", 7, "B", "itemStatusDescription: state blocked")
    assert Outcome.of(2, {"itemStatus": "W", "achItemId": 8}, "achItemId") == (2, "sent", 8, "W",
                                                                               None)
    assert Outcome.of(3, {"status": "Failed", "uniqueId": "u", "errors": ["no"]}, "uniqueId") \
        .state == "rejected"
    assert Outcome.of(4, None, "achItemId") == Outcome(4, "unknown",
                                                       detail="no answer for this item")
