"""The monitor judges NOCs as the ledger does: the entries to an account as a NOC corrected
it are read too, so that a later entry carrying the correction shows it applied."""

from __future__ import annotations

import pandas as pd

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
