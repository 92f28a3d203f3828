"""The submission guards read the local history store (``client.sync()``): a client that has
listed nothing is still refused where the store shows a closed account, an overdue NOC or
a third reinitiation. The store masks account numbers and matches accounts by a keyed
hash whose secret lives outside the store's folder; an old store, or a copy without its
secret, warns once and is not used for matching."""

from __future__ import annotations

import datetime as dt
import os
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from paynb import frames
from paynb import sandbox as paynb_sandbox
from paynb.compliance import GuardWarning, check_entries
from paynb.errors import SubmissionRefusedError, ValidationError
from paynb.guards import STORE_DAYS
from paynb.history import History

ROUTING = "021000021"


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    with paynb_sandbox.serve(port=0, seed_items=30, seed=11) as served:
        yield served


def account() -> str:
    return f"6{uuid.uuid4().int % 10**11:011d}"


def body(number: str, amount: str = "40.00", **extra: Any) -> dict[str, Any]:
    return {"firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
            "zip": "10001", "yourReferenceNumber": f"HS-{uuid.uuid4().hex[:10]}",
            "bankRoutingNumber": ROUTING, "bankAccountNumber": number,
            "achTransactionType": "Debit", "amount": amount, **extra}


def sent(sb: Any, number: str, **extra: Any) -> int:
    """An entry to ``number``, sent by a client that is then gone."""
    with sb.connect(journal=None) as other, warnings.catch_warnings():
        warnings.simplefilter("ignore", GuardWarning)
        return int(other.ach.submit(body(number, **extra))["achItemId"])


def synced(sb: Any, path: Path, **options: Any) -> Path:
    with sb.connect(journal=None) as syncer:
        syncer.sync(path=path, kinds=["ach", "nocs"], progress=False, **options)
    return path


def fresh(sb: Any, path: Path, tmp_path: Path) -> Any:
    """A client that has listed nothing, reading the store at ``path``."""
    client = sb.connect(journal=tmp_path / f"j-{uuid.uuid4().hex[:6]}.sqlite")
    client.history_folder = path   # as client.sync(path=...) remembers it
    return client


def count(sb: Any) -> int:
    with sb.connect(journal=None) as counter:
        return len(counter.ach.list(progress=False))


def test_a_guard_refuses_by_the_store_alone_and_nothing_reaches_the_sandbox(sb, tmp_path):
    number = account()
    closed = sent(sb, number)
    sb.simulate.force_status(closed, "R", code="R03")
    store = synced(sb, tmp_path / "store")
    before = count(sb)
    with fresh(sb, store, tmp_path) as client, warnings.catch_warnings():
        warnings.simplefilter("error", GuardWarning)   # history is there: no "cannot check"
        with pytest.raises(SubmissionRefusedError, match="returned R03") as refused:
            client.ach.submit(body(number))
        checked = refused.value.verdicts[0].checked
        now = sb.simulate.now()
        since = (now - dt.timedelta(days=STORE_DAYS)).date()
        assert f"history store {store} (ACH items received {since:%Y-%m-%d} to " in checked
        assert "nothing: this client has seen no ACH items" in checked
        assert count(sb) == before
        # Another account is not held by this one's history.
        assert check_entries(client, body(account())).iloc[0]["verdict"] == "ok"


def test_the_store_holds_keys_but_no_number_and_its_secret_lives_elsewhere(sb, tmp_path):
    number = account()
    sent(sb, number)
    store = synced(sb, tmp_path / "store")
    key_id = History(store).info()["accountKey"]["id"]
    secret = Path(os.environ["XDG_DATA_HOME"]) / "paynb" / "history-keys" / f"{key_id}.key"
    assert secret.stat().st_mode & 0o777 == 0o600 and len(secret.read_bytes()) == 32
    assert not any(p.name.endswith(".key") for p in store.rglob("*"))
    keys = set()
    for file in (store / "ach").rglob("*.parquet"):
        table = pq.ParquetFile(file).read()
        keys.update(table.column("_accountKey").to_pylist())
        for name in table.column_names:
            assert all(number not in str(v) for v in table.column(name).to_pylist()), name
    assert None not in keys and len(keys) > 1
    assert all(number not in log.read_text() for log in store.rglob("_delta_log/*.json"))
    # The frames stay those of the lists: the key is not one of their columns.
    with fresh(sb, store, tmp_path) as client:
        assert "_accountKey" not in client.history.ach().columns


def test_an_overdue_noc_in_the_store_refuses_and_names_its_due_day(sb, tmp_path):
    number = account()
    item = sent(sb, number)
    noc = sb.simulate.create_noc(item, change_code="C01", corrected_data="55511122")
    store = synced(sb, tmp_path / "store")
    received = dt.datetime.fromisoformat(noc["nocDate"].replace("Z", "+00:00")).date()
    from paynb import calendar

    sixth = calendar.add_banking_days(calendar.next_banking_day(received).date(), 6).date()
    with fresh(sb, store, tmp_path) as client:
        on_time = check_entries(client, body(number), as_of=sixth).iloc[0]
        assert on_time["verdict"] == "warning" and f"due {sixth:%Y-%m-%d}" in \
            on_time["warnings"][0]
        late = check_entries(client, body(number), as_of=sixth + dt.timedelta(days=1)).iloc[0]
        assert late["rules"] == ["noc-overdue"]
        assert f"NOC {noc['nocId']} (C01" in late["reasons"][0]
        # Applied in the journal: the store's NOC no longer holds the account.
        client.nocs.apply(noc["nocId"])
        assert check_entries(client, body(number),
                             as_of=sixth + dt.timedelta(days=1)).iloc[0]["allowed"]


def test_a_noc_only_the_store_still_holds_can_be_marked(sb, tmp_path, monkeypatch):
    noc = sb.simulate.create_noc(sent(sb, account()), change_code="C01",
                                 corrected_data="55511122")
    store = synced(sb, tmp_path / "store")
    with fresh(sb, store, tmp_path) as client:
        held = len(client.history.nocs())
        # The service keeps NOCs for a while only: this one has left its list.
        monkeypatch.setattr(type(client.nocs), "list",
                            lambda self, **options: frames.empty_frame("noc"))
        assert client.nocs.apply(noc["nocId"])["noc_id"] == str(noc["nocId"])
        with pytest.raises(ValidationError, match=f"'-1' is not the id of a NOC: the service "
                                                  f"lists 0 NOCs of company \\w+ and its "
                                                  f"history store {held:,}, none"):
            client.nocs.apply(-1)


def test_reinitiations_are_counted_from_the_store(sb, tmp_path):
    number = account()
    original = sent(sb, number)
    sb.simulate.force_status(original, "R", code="R01")
    store = synced(sb, tmp_path / "store")
    with fresh(sb, store, tmp_path) as client:
        first = check_entries(client, body(number)).iloc[0]
        assert first["changes"] == {"achCompanyEntryDescription": "RETRY PYMT"}
        assert "reinitiation 1 of 2" in first["notes"][0]
    for code in ("R01", "R09"):
        retry = sent(sb, number, achCompanyEntryDescription="RETRY PYMT")
        sb.simulate.force_status(retry, "R", code=code)
    synced(sb, store)   # an incremental sync brings the two returned retries
    with fresh(sb, store, tmp_path) as client:
        third = check_entries(client, body(number)).iloc[0]
        assert third["rules"] == ["reinitiation-limit"]
        assert "reinitiated 2 times" in third["reasons"][0]


def test_the_store_is_read_back_to_the_window_only(sb, tmp_path):
    """An entry received more than STORE_DAYS (210) days before the day judged is not read."""
    number = account()
    closed = sent(sb, number)
    sb.simulate.force_status(closed, "R", code="R02")
    store = synced(sb, tmp_path / "store")
    received = sb.simulate.now()
    with fresh(sb, store, tmp_path) as client:
        inside = received + dt.timedelta(days=STORE_DAYS - 1)
        assert check_entries(client, body(number), as_of=inside).iloc[0]["rules"] == \
            ["returned-account"]
        outside = received + dt.timedelta(days=STORE_DAYS + 1)
        found = check_entries(client, body(number), as_of=outside).iloc[0]
        assert found["allowed"]
        assert f"received {received + dt.timedelta(days=1):%Y-%m-%d} to" in found["checked"]


def _without_keys(store: Path) -> None:
    """A store as a paynb that kept no account keys wrote it (its ACH table's last
    commit names no key)."""
    from deltalake import DeltaTable

    from paynb.history._store import commit_properties, state

    table = DeltaTable(str(store / "ach"))
    kept = state(table)
    del kept["accountKey"]
    table.create_write_transaction([], mode="append", schema=table.schema(),
                                   partition_by=["company", "month"],
                                   commit_properties=commit_properties(kept))


def test_an_old_masked_store_warns_once_and_rebuild_mends_it(sb, tmp_path):
    number = account()
    closed = sent(sb, number)
    sb.simulate.force_status(closed, "R", code="R04")
    store = synced(sb, tmp_path / "store")
    _without_keys(store)
    with fresh(sb, store, tmp_path) as client:
        with pytest.warns(GuardWarning, match=r"kept no account keys.*sync\(rebuild=True\)"):
            found = check_entries(client, body(number)).iloc[0]
        assert found["allowed"] and "(it cannot match accounts)" in found["checked"]
        with warnings.catch_warnings():
            warnings.simplefilter("error", GuardWarning)
            check_entries(client, body(number))   # told once
        client.sync(rebuild=True, kinds=["ach", "nocs"], progress=False)
        assert check_entries(client, body(number)).iloc[0]["rules"] == ["returned-account"]


def test_a_copy_without_its_secret_warns_and_an_unmasked_store_uses_the_numbers(sb, tmp_path):
    number = account()
    closed = sent(sb, number)
    sb.simulate.force_status(closed, "R", code="R07")
    store = synced(sb, tmp_path / "store")
    key_id = History(store).info()["accountKey"]["id"]
    (Path(os.environ["XDG_DATA_HOME"]) / "paynb" / "history-keys" / f"{key_id}.key").unlink()
    with fresh(sb, store, tmp_path) as client, \
            pytest.warns(GuardWarning, match="secret is not on this machine"):
        found = check_entries(client, body(number)).iloc[0]
        assert found["allowed"]
        # the no-history warning names the remedy the store needs, not a plain sync
        assert found["warnings"][0].endswith(
            "or client.sync(rebuild=True) for its history store, which cannot match accounts)")
    whole = synced(sb, tmp_path / "whole", mask=False)
    _without_keys(whole)
    with fresh(sb, whole, tmp_path) as client:
        found = check_entries(client, body(number)).iloc[0]
        assert found["rules"] == ["returned-account"]
        assert "returned R07" in found["reasons"][0]


def test_warnings_point_at_the_callers_line(sb, tmp_path):
    """Whatever the call's depth in paynb (submit, submit_many), a guard warning and an
    advisory point at the line that called paynb, not past it (``sys:1``)."""
    with fresh(sb, tmp_path / "no-store", tmp_path) as client:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            client.ach.submit(body(account(), achAccountType="Brokerage"))
            client.ach.submit_many([body(account(), achAccountType="Brokerage")])
        told = {(w.category.__name__, w.filename) for w in caught}
        assert {name for name, _ in told} >= {"GuardWarning", "UnknownValueWarning"}
        assert {filename for _, filename in told} == {__file__}


def test_a_sandbox_judges_by_its_own_default_store_never_another_sandboxs(sb, tmp_path):
    """Every sandbox client once defaulted to one store (``history/sandbox``): a private
    sandbox's guards read the demo sandbox's items and refused by them."""
    number = account()
    closed = sent(sb, number)
    sb.simulate.force_status(closed, "R", code="R03")
    with sb.connect(journal=None) as syncer:
        syncer.sync(kinds=["ach", "nocs"], progress=False)   # the default store
        store = syncer.history.path
        assert check_entries(syncer, body(number)).iloc[0]["rules"] == ["returned-account"]
    with paynb_sandbox.serve(port=0, seed_items=5, seed=3) as other:
        with other.connect(journal=None) as client, warnings.catch_warnings():
            warnings.simplefilter("ignore", GuardWarning)   # no history here: cannot check
            found = check_entries(client, body(number)).iloc[0]
            assert found["allowed"] and found["rules"] == []
            assert str(store) not in found["checked"]
            assert client.history.path != store
        # Pointed at the other sandbox's store, the guards say so rather than judge by it.
        with other.connect(journal=None) as client:
            client.history_folder = store
            with pytest.warns(GuardWarning, match=f"history at {store} was synced from "
                                                  "sandbox .*, not from this client's sandbox"):
                found = check_entries(client, body(number)).iloc[0]
            assert found["allowed"]
