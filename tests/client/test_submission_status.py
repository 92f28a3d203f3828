"""A submission answered 200 with status I or B warns and is journaled truthfully.

The sandbox answers a good single submission W, so the service's 200-with-I/B answer
(real-service.md, "Statuses") is stubbed here; the bulk case runs against the sandbox
in test_sandbox.py.
"""

from __future__ import annotations

import warnings

import pytest

from paynb.compliance import GuardWarning
from paynb.errors import SubmissionNotAcceptedWarning

pytestmark = pytest.mark.guards_unchecked

ACH = "https://svc.test/api/v3/AchTransactions/companycode/DEMO1"


def ach_record(item_id, **extra):
    record = {"achItemId": item_id, "yourReferenceNumber": f"R{item_id}", "amount": 1.5,
              "itemStatus": "W", "bankAccountNumber": "000123456789"}
    record.update(extra)
    return record


@pytest.mark.parametrize(("status", "state", "name"), [("B", "blocked", "Blocked"),
                                                      ("I", "invalid", "Invalid")])
def test_a_single_item_answered_i_or_b_warns_and_is_not_journaled_sent(
        stub, stub_client, make_ach, status, state, name):
    answer = ach_record(71, yourReferenceNumber="ST-1", itemStatus=status,
                        itemStatusDescription="Restricted state", returnReason="R16",
                        returnMessage="Account frozen")
    stub.post(ACH, json={"transaction": answer})
    with pytest.warns(SubmissionNotAcceptedWarning) as caught:
        row = stub_client.ach.submit(make_ach("ST-1"))
    assert str(row["itemStatus"]) == status
    (warning,) = [w.message for w in caught if isinstance(w.message, SubmissionNotAcceptedWarning)]
    assert warning.status == status and warning.item_id == 71
    assert warning.reference_number == "ST-1"
    assert warning.reasons == {"itemStatusDescription": "Restricted state",
                               "returnReason": "R16", "returnMessage": "Account frozen"}
    text = str(warning)
    for said in (f"status {status} ({name})", "Restricted state", "R16", "Account frozen",
                 "will not be processed"):
        assert said in text
    assert "000123456789" not in text
    (entry,) = stub_client._journal.entries("DEMO1")
    assert (entry["state"], entry["item_status"], str(entry["item_id"])) == (state, status, "71")
    assert "Restricted state" in entry["detail"]
    # Nothing will move: the same reference may be sent again, corrected, without asking.
    stub.replace("POST", ACH, json={"transaction": ach_record(72, yourReferenceNumber="ST-1")})
    with warnings.catch_warnings():
        warnings.simplefilter("error", SubmissionNotAcceptedWarning)
        again = stub_client.ach.submit(make_ach("ST-1"))
    assert str(again["itemStatus"]) == "W"


def test_a_waiting_answer_gives_no_warning(stub, stub_client, make_ach):
    stub.post(ACH, json={"transaction": ach_record(73, yourReferenceNumber="ST-2")})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # The guards' one notice that this fresh client has no history to check against
        # is not about the answer.
        warnings.filterwarnings("ignore", category=GuardWarning)
        stub_client.ach.submit(make_ach("ST-2"))
    (entry,) = stub_client._journal.entries("DEMO1")
    assert entry["state"] == "sent"
