"""Every code of NACHA's tables goes through the sandbox (a forced return, a NOC made by its
simulation endpoints) and comes back in the client's frames with its meaning; a code in no
table comes back as such, with one warning for the list."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sandbox_helpers import ACH, Api, ach_item

from paynb import codes, frames
from paynb.client import Client
from paynb.errors import UnknownCodeWarning
from paynb.sandbox import Sandbox, serve

RETURNS = [*codes.RETURN_CODE_TABLE, "R99"]
CHANGES = [*codes.NOC_CODE_TABLE, "C99"]


@pytest.fixture(scope="module")
def empty() -> Iterator[Sandbox]:
    with serve(port=0, seed_items=0, seed=3) as sb:
        yield sb


@pytest.fixture(scope="module")
def reader(empty: Sandbox) -> Client:
    # Small pages: the list is built in several batches, and still warns once.
    return empty.connect(journal=None, page_size=10)


@pytest.fixture(scope="module")
def item_ids(empty: Sandbox) -> list[int]:
    api = Api(empty)
    ids = [api.post(ACH, ach_item()).json()["transaction"]["achItemId"]
           for _ in range(len(RETURNS) + 2)]
    empty.simulate.advance_clock(days=3)  # sent and settled
    return ids


def test_every_return_code_comes_back_with_its_meaning(empty, reader, item_ids, monkeypatch):
    # R99 first and last: in the first batch of the list and in a later one.
    for item_id, code in zip(item_ids, ["R99", *RETURNS], strict=False):
        record = empty.simulate.force_status(item_id, "R", code=code)
        assert record["returnReason"] == code
        assert record["returnMessage"] == codes.RETURN_CODES.get(code, "")
    # The list's frame built in batches of a few pages, as a long list's is.
    monkeypatch.setattr("paynb.resources._listing.FRAME_BATCH", 20)
    built = []
    to_frame = frames.to_frame
    monkeypatch.setattr(frames, "to_frame", lambda *a, **k: built.append(1) or to_frame(*a, **k))
    with pytest.warns(UnknownCodeWarning) as caught:
        items = reader.ach.list(status="R", progress=False)
    assert len(items) == len(RETURNS) + 1 and len(built) > 1
    meanings = dict(zip(items["returnReason"], items["returnReasonDescription"], strict=True))
    assert meanings == {**codes.RETURN_CODES, "R99": "not a NACHA code paynb knows"}
    # One warning: R99 named once, for the whole list.
    unknown = [w for w in caught if issubclass(w.category, UnknownCodeWarning)]
    assert [w.message.codes for w in unknown] == [("R99",)]


def test_every_change_code_comes_back_with_its_meaning(empty, reader, item_ids):
    noc_item = item_ids[-1]
    made = {code: empty.simulate.create_noc(noc_item, change_code=code) for code in CHANGES}
    assert made["C07"]["correctedData"].count(" ") == 2  # routing, account, transaction code
    assert made["C14"]["correctedData"] == "IAT"
    assert made["C61"]["correctedData"] == made["C99"]["correctedData"] == ""
    with pytest.warns(UnknownCodeWarning, match="C99"):
        nocs = reader.nocs.list(progress=False)
    reasons = dict(zip(nocs["changeCode"], nocs["changeReason"], strict=True))
    assert reasons == {**codes.NOC_CODES, "C99": "not a NACHA code paynb knows"}

