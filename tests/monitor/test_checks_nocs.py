"""The monitor judges NOCs as the ledger does: the entries to an account as a NOC corrected
it are read too, so that a later entry carrying the correction shows it applied."""

from __future__ import annotations

import pandas as pd
import pytest

from paynb.monitor._checks import _corrected_accounts


def test_the_accounts_as_corrected_are_read_too() -> None:
    about = pd.DataFrame({"achItemId": [1, 2, 3, 4],
                          "bankRoutingNumber": ["021000021"] * 4,
                          "bankAccountNumber": ["111", "222", "333", "****4444"]})
    nocs = pd.DataFrame({"achItemId": [1, 2, 3, 4, 9],
                         "changeCode": ["C01", "C02", "C05", "C01", "C01"],
                         "correctedData": ["999", "011000015", "37", "****5555", "888"]})
    accounts = _corrected_accounts(nocs, about)
    # C01: the new account; C02: the new routing number; C05 changes neither (the same
    # account is read already); a masked correction or an unknown entry gives nothing.
    assert accounts.to_dict("records") == [
        {"bankRoutingNumber": "021000021", "bankAccountNumber": "999"},
        {"bankRoutingNumber": "011000015", "bankAccountNumber": "222"}]


@pytest.mark.parametrize(("account", "code", "corrected", "later"), [
    # C01, a new account: the next entry goes there.
    ("555000111", "C01", "555000999", {"bankAccountNumber": "555000999"}),
    # C05, the transaction code of a savings account: the next entry to the same account
    # says Savings (the entries' account type is read, not only their numbers).
    ("555000222", "C05", "37", {"achAccountType": "Savings"}),
])
def test_a_store_of_whole_numbers_reads_the_later_entries_to_a_corrected_account(
        sandbox, tmp_path, account, code, corrected, later) -> None:
    import datetime as dt
    from decimal import Decimal

    from paynb import monitor

    def item(reference: str, **fields: str) -> dict:
        return {"firstSignerFirstName": "Noc", "firstSignerLastName": "Later", "state": "NY",
                "zip": "10001", "yourReferenceNumber": reference,
                "bankRoutingNumber": "021000021", "bankAccountNumber": account,
                "achTransactionType": "Debit", "amount": Decimal("15.00"), **fields}

    with sandbox.connect(journal=tmp_path / "j.sqlite3", mask=False) as client:
        client.sync(path=tmp_path / "history", kinds=monitor.SYNCED_KINDS, progress=False)
        first = client.ach.submit(item("NOC-WHOLE-A"))
        # A NOC of three weeks ago (its six banking days long past).
        noc = sandbox.simulate.create_noc(
            int(first["achItemId"]), change_code=code, corrected_data=corrected,
            date=dt.datetime.now(dt.UTC) - dt.timedelta(days=21))
        run = monitor.run(client, report=False, notify=[])
        key = f"noc:{noc['nocId']}"
        assert key in {f.key for f in run.findings}  # overdue: nothing sent there yet
        # A later entry to the account as corrected: the change made (late).
        client.ach.submit(item("NOC-WHOLE-B", **later))
        run = monitor.run(client, report=False, notify=[])
        assert key not in {f.key for f in run.findings}
        assert client.history.masked is False
