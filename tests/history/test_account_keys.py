"""history account keys: keyed BLAKE2b of routing and account, one per record."""

from __future__ import annotations

from hashlib import blake2b

import pandas as pd

from paynb.history._accounts import account_key, account_keys

SECRET = bytes(range(32))


def expected(routing: str, account: str) -> int:
    digest = blake2b(f"{routing}\x1f{account}".encode(), key=SECRET, digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def test_the_key_of_an_account_is_its_keyed_blake2b():
    assert account_key(SECRET, "011000015", " 123456789 ") == expected("011000015", "123456789")
    assert account_key(SECRET, 11000015, 123456789) == expected("11000015", "123456789")
    assert account_key(SECRET, "011000015", "****6789") is None
    assert account_key(SECRET, None, "123456789") is None
    assert account_key(bytes(32), "011000015", "123456789") != expected("011000015", "123456789")


def test_the_keys_of_records_are_each_records_key():
    records = [
        {"bankRoutingNumber": "011000015", "bankAccountNumber": "123456789"},
        {"bankRoutingNumber": "021000021", "bankAccountNumber": "987654321"},
        {"bankRoutingNumber": "011000015", "bankAccountNumber": "123456789"},  # again
        {"bankRoutingNumber": "011000015", "bankAccountNumber": "****6789"},   # masked
        {"bankRoutingNumber": "011000015"},                                    # no account
        {"bankRoutingNumber": ["011000015"], "bankAccountNumber": "1"},        # unhashable
        {"bankRoutingNumber": "0", "bankAccountNumber": "0"},
    ]
    keys = account_keys(records, SECRET)
    assert str(keys.dtype) == "Int64"
    assert [None if key is pd.NA else int(key) for key in keys.tolist()] == [
        expected("011000015", "123456789"), expected("021000021", "987654321"),
        expected("011000015", "123456789"), None, None, None, expected("0", "0")]
    assert account_keys([], SECRET).tolist() == []
