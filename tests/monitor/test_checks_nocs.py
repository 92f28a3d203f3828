"""The monitor judges NOCs as the ledger does, on the same evidence: every NOC, the entry it
is about whatever its age, and the entries to its account before and after correction;
in a masked store the accounts are told apart by the keyed hashes of their numbers."""

from __future__ import annotations

import datetime as dt
import secrets

import pandas as pd
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from paynb import compliance, frames
from paynb.history._accounts import Wanted, arrow_condition, number_keys, read_evidence
from paynb.monitor._checks import _nocs
from paynb.nacha import NUMBER_KEY, entries_of, ledger, noc_accounts

UTC = dt.UTC
BASE = dt.datetime(2026, 9, 1, 14, 0, tzinfo=UTC)
ROUTINGS = ("021000021", "011000015")
NUMBERS = ("5550001001", "5550002002", "5550003003")
#: What each change code's corrected data holds, as the sandbox writes it (values
#: separated by blanks: paynb.sandbox.processing.noc_corrected_data).
LAYOUTS = {"C01": "{number}", "C02": "{routing}", "C03": "{routing} {number}",
           "C05": "{code}", "C06": "{number} {code}", "C07": "{routing} {number} {code}",
           "C09": "ID{day}", "C61": ""}

entry_draw = st.fixed_dictionaries({
    "routing": st.sampled_from(ROUTINGS), "number": st.sampled_from(NUMBERS),
    "day": st.integers(0, 90), "status": st.sampled_from("SSSSRVW"),
    "type": st.sampled_from(["Checking", "Savings"]), "id": st.sampled_from(["", "ID3", "ID7"])})
noc_draw = st.fixed_dictionaries({
    "about": st.integers(0, 30), "code": st.sampled_from(sorted(LAYOUTS)),
    "routing": st.sampled_from(ROUTINGS), "number": st.sampled_from(NUMBERS),
    "code_to": st.sampled_from(["27", "37"]), "after": st.integers(0, 12)})


def _raw(entries: list[dict], nocs: list[dict]) -> tuple[list[dict], list[dict]]:
    """Raw records (as the service sends them) of the drawn entries and NOCs."""
    items = [{"achItemId": 1000 + n, "companyCode": "A", "bankRoutingNumber": e["routing"],
              "bankAccountNumber": e["number"], "itemStatus": e["status"],
              "achAccountType": e["type"], "achTransactionType": "Debit",
              "achIdentificationNumber": e["id"] or None, "amount": 10,
              "receivedDateTime": (BASE + dt.timedelta(days=e["day"], minutes=n)).isoformat()}
             for n, e in enumerate(entries)]
    records = []
    for n, noc in enumerate(nocs):
        about = items[noc["about"] % len(items)]
        day = int(about["receivedDateTime"][8:10]) + noc["after"]
        data = LAYOUTS[noc["code"]].format(number=noc["number"], routing=noc["routing"],
                                           code=noc["code_to"], day=day)
        records.append({"nocId": 50 + n, "achItemId": about["achItemId"], "companyCode": "A",
                        "changeCode": noc["code"], "correctedData": data or None,
                        "nocDate": (dt.datetime.fromisoformat(about["receivedDateTime"])
                                    + dt.timedelta(days=noc["after"], hours=3)).isoformat()})
    return items, records


def _stored(records: list[dict], kind: str, masked: bool, secret: bytes) -> pd.DataFrame:
    """The records as a history store keeps them: masked or not, with the company and the
    keyed hashes of the account numbers."""
    frame = frames.to_frame(records, kind, mask=masked)
    frame["company"] = "A"
    frame[NUMBER_KEY] = number_keys(records, secret, kind)
    return frame


def _judged(rows: list[dict]) -> dict[str, tuple]:
    """Each NOC's state, due day, next entry and correcting entry, ledger rows and frame
    rows alike."""
    def moment(value: object) -> int | None:
        return None if value is None or pd.isna(value) else pd.Timestamp(value).value

    def day(value: object) -> str | None:
        return None if value is None or pd.isna(value) else str(pd.Timestamp(value).date())

    def text(value: object) -> str | None:
        return None if value is None or pd.isna(value) else str(value)

    return {str(row["nocId"]): (str(row["state"]), day(row["dueDate"]),
                                moment(row["nextEntry"]), text(row["appliedEntryId"]),
                                moment(row["appliedAt"])) for row in rows}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow],
          phases=[Phase.explicit, Phase.reuse, Phase.generate])
@given(entries=st.lists(entry_draw, min_size=1, max_size=14),
       nocs=st.lists(noc_draw, min_size=1, max_size=6), masked=st.booleans(),
       today=st.integers(0, 110))
def test_the_run_judges_every_noc_as_the_ledger_of_everything_does(entries, nocs, masked,
                                                                    today) -> None:
    """The run's evidence (read from a store, masked or not) gives the ledger the
    state, due date, next entry and correcting entry of each NOC that the ledger gives
    from every record in full (:func:`paynb.compliance.noc_obligations`)."""
    items, records = _raw(entries, nocs)
    as_of = BASE + dt.timedelta(days=today)
    expected = compliance.noc_obligations(records, items=items, as_of=as_of)
    secret = secrets.token_bytes(32)
    tables = {"ach": pa.Table.from_pandas(_stored(items, "ach", masked, secret)),
              "nocs": pa.Table.from_pandas(_stored(records, "noc", masked, secret))}

    def read(name: str, fields: tuple[str, ...], wanted: Wanted = ()) -> list[dict]:
        table = tables[name] if not wanted else tables[name].filter(arrow_condition(wanted))
        return table.select([f for f in (*fields, NUMBER_KEY)
                             if f in table.column_names]).to_pylist()

    evidence, related = read_evidence(read)
    rows = ledger(evidence, entries_of(related), as_of=as_of, applied={}, as_it_stood=True)
    assert _judged(rows) == _judged(expected.to_dict("records"))
    findings, due = _nocs(evidence, related, {}, "A", as_of)
    wanted = expected[expected["state"].isin(["overdue", "due soon"])]
    assert {f.key for f in findings} == {f"noc:{n}" for n in wanted["nocId"]}
    assert sorted(due["nocId"].astype(str)) == sorted(wanted["nocId"].astype(str))


def test_the_accounts_read_are_the_nocs_own_and_as_corrected() -> None:
    about = [{"achItemId": n, "bankRoutingNumber": "021000021", "bankAccountNumber": number}
             for n, number in ((1, "111111"), (2, "222222"), (3, "333333"))]
    nocs = pd.DataFrame({"achItemId": [1, 2, 3, 9], "changeCode": ["C01", "C02", "C05", "C01"],
                         "correctedData": ["999999", "011000015", "37", "888888"]})
    # C01: the new account; C02: the new routing number; C05 changes neither; a NOC of
    # an entry not read gives nothing.
    assert noc_accounts(nocs, entries_of(about)) == {
        ("021000021", "111111"), ("021000021", "999999"), ("021000021", "222222"),
        ("011000015", "222222"), ("021000021", "333333")}
    # Masked: a number is told by its key; a masked C01 without a key names no account.
    masked = [{**row, "bankAccountNumber": "****" + row["bankAccountNumber"][-4:],
               NUMBER_KEY: 70 + row["achItemId"]} for row in about]
    keyed = nocs.assign(correctedData=["****9999", "011000015", "37", "****8888"],
                        **{NUMBER_KEY: [7, None, None, 8]})
    assert noc_accounts(keyed, entries_of(masked)) == {
        ("021000021", ("#", 71)), ("021000021", ("#", 7)), ("021000021", ("#", 72)),
        ("011000015", ("#", 72)), ("021000021", ("#", 73))}
    assert noc_accounts(keyed.drop(columns=NUMBER_KEY), entries_of(masked)) == {
        ("021000021", ("#", 71)), ("021000021", ("#", 72)), ("011000015", ("#", 72)),
        ("021000021", ("#", 73))}


@pytest.mark.parametrize(("account", "code", "corrected", "later"), [
    # C01, a new account: the next entry goes there.
    ("555000111", "C01", "555000999", {"bankAccountNumber": "555000999"}),
    # C05, the transaction code of a savings account: the next entry to the same account
    # says Savings (the entries' account type is read, not only their numbers).
    ("555000222", "C05", "37", {"achAccountType": "Savings"}),
])
@pytest.mark.parametrize("mask", [False, True])
def test_a_store_reads_the_later_entries_to_a_corrected_account(
        sandbox, tmp_path, account, code, corrected, later, mask) -> None:
    from decimal import Decimal

    from paynb import monitor

    def item(reference: str, **fields: str) -> dict:
        return {"firstSignerFirstName": "Noc", "firstSignerLastName": "Later", "state": "NY",
                "zip": "10001", "yourReferenceNumber": reference,
                "bankRoutingNumber": "021000021", "bankAccountNumber": account,
                "achTransactionType": "Debit", "amount": Decimal("15.00"), **fields}

    # (the sandbox is shared: an account of its own for each case)
    account, suffix = f"{account}{int(mask)}", f"{code}-{'M' if mask else 'W'}"
    later = {name: f"{value}{int(mask)}" if name == "bankAccountNumber" else value
             for name, value in later.items()}
    corrected = f"{corrected}{int(mask)}" if code == "C01" else corrected
    with sandbox.connect(journal=tmp_path / "j.sqlite3", mask=mask) as client:
        client.sync(path=tmp_path / "history", kinds=monitor.SYNCED_KINDS, progress=False)
        first = client.ach.submit(item(f"NOC-LATER-A-{suffix}"))
        # A NOC of three weeks ago (its six banking days long past).
        noc = sandbox.simulate.create_noc(
            int(first["achItemId"]), change_code=code, corrected_data=corrected,
            date=dt.datetime.now(UTC) - dt.timedelta(days=21))
        run = monitor.run(client, report=False, notify=[])
        key = f"noc:{noc['nocId']}"
        assert key in {f.key for f in run.findings}  # overdue: nothing sent there yet
        # A later entry to the account as corrected: the change made (late).
        client.ach.submit(item(f"NOC-LATER-B-{suffix}", **later))
        run = monitor.run(client, report=False, notify=[])
        assert key not in {f.key for f in run.findings}
        assert client.history.masked is mask
