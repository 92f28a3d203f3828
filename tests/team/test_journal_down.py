"""The team's journal down (its PostgreSQL server stopped): reading never needs it.

``paynb.connect('team')`` warns and connects; lists, gets, the local history and plots
work; what must be journaled (a submission, a void, a NOC mark, reconcile()) refuses,
naming the journal and its address without its password, and sends nothing. Once the
server is back the same client journals again. A settle lost while the server was away
is recorded by ``client.reconcile()`` as soon as it is back, as its warning says."""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

import paynb
from paynb import sandbox
from paynb.errors import JournalError, PaynbWarning

from .conftest import Wire

pytestmark = pytest.mark.timeout(600)


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    """A PostgreSQL server of this module's own, which its tests stop and start."""
    import _postgres

    reason = _postgres.why_not()
    if reason is not None:
        pytest.skip(f"no PostgreSQL server: {reason}")
    with _postgres.start() as running:
        yield running


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    with sandbox.serve(port=0, seed_items=300, seed=44) as running:
        yield running


def _item(reference: str) -> dict[str, Any]:
    return {"firstSignerFirstName": "Dana", "firstSignerLastName": "Down", "state": "NY",
            "zip": "10001", "yourReferenceNumber": reference,
            "bankRoutingNumber": "021000021", "bankAccountNumber": "44001122",
            "achTransactionType": "Debit", "amount": Decimal("12.34")}


def _team_profile(tmp_path: Path, sb: Any, journal: str,
                  monkeypatch: pytest.MonkeyPatch) -> None:
    creds = sb.credentials
    config = tmp_path / "config.toml"
    config.write_text(
        f'[team]\nbase_url = "{sb.base_url}"\nauth_url = "{sb.auth_url}"\n'
        f'company_code = "{sb.company_code}"\nclient_id = "{creds.client_id}"\n'
        f'client_secret = "{creds.client_secret}"\nusername = "{creds.username}"\n'
        f'password = "{creds.password}"\njournal = "{journal}"\n')
    config.chmod(0o600)
    monkeypatch.setenv("PAYNB_CONFIG", str(config))
    monkeypatch.delenv("PAYNB_JOURNAL")  # the profile names the team's


def test_with_the_journal_down_reading_works_and_journaling_refuses(
        server: Any, sb: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import _postgres

    # An item waiting to be voided whatever the hour: the seeded ones have all left
    # waiting after the day's cutoff (CI failed at 21:00 UTC for want of one).
    with sb.connect() as own:
        own.ach.list(progress=False), own.nocs.list(progress=False)  # what the guard reads
        waiting = int(own.ach.submit(_item("DOWN-0"))["achItemId"])
    _team_profile(tmp_path, sb, server.fresh(), monkeypatch)
    said: list[str] = []
    server.stop()
    try:
        with pytest.warns(PaynbWarning, match="Reading does not need the journal") as warned:
            client = paynb.connect("team")
        said += [str(w.message) for w in warned]
        assert said[0].startswith(
            f"cannot use the journal postgresql://{_postgres.USER}:<hidden>@127.0.0.1:"
            f"{server.port}/")
        wire = Wire()
        wire.watch(client)
        items = client.ach.list(progress=False)
        assert len(items) > 100
        one = client.ach.get(int(items["achItemId"].iloc[0]))
        assert one["achItemId"] == items["achItemId"].iloc[0]
        client.sync(kinds=("ach", "nocs"), path=tmp_path / "history", progress=False)
        assert len(client.history.ach()) == len(items)
        paynb.plots.status_summary(items)
        assert items.set_index("achItemId").loc[waiting, "itemStatus"] == "W"
        noc = int(client.nocs.list(progress=False)["nocId"].iloc[0])
        for journaled in (lambda: client.ach.submit(_item("DOWN-1")),
                          lambda: client.ach.void(waiting),
                          lambda: client.nocs.apply(noc),
                          client.reconcile, client.journal):
            with pytest.raises(JournalError) as refused:
                journaled()
            said.append(str(refused.value))
            assert str(refused.value).startswith(
                f"cannot use the journal postgresql://{_postgres.USER}:<hidden>@")
        assert wire.writes() == []  # nothing was sent without its journal entry
    finally:
        server.start()
    # Back: the same client journals again.
    sent = client.ach.submit(_item("DOWN-2"))
    assert list(client.journal()["reference"]) == ["DOWN-2"]
    assert client.ach.void(int(sent["achItemId"]))["itemStatus"] == "V"
    client.close()
    for text in said:
        assert _postgres.PASSWORD not in text


def test_a_settle_lost_while_the_journal_is_down_is_recorded_once_it_is_back(
        server: Any, sb: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The server stops after the entry is reserved, while the request is on its way:
    the answer cannot be recorded. Right after the restart, reconcile() records it."""
    _team_profile(tmp_path, sb, server.fresh(), monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the journal is up: no warning
        client = paynb.connect("team")
    session = client.transport.session
    original = session.send

    def send(request: Any, **kwargs: Any) -> Any:
        if request.method == "POST" and "connect/token" not in request.url:
            server.stop()  # the reservation is in; the database goes away now
        return original(request, **kwargs)

    session.send = send
    try:
        with pytest.warns(PaynbWarning) as warned:
            row = client.ach.submit(_item("LOST-1"))
    finally:
        session.send = original
        server.start()
    (warning,) = [str(w.message) for w in warned if "could not record" in str(w.message)]
    assert "client.reconcile() records them as soon as the journal can be used again" \
        in warning
    assert "once they have been pending for 10 minutes" in warning
    # Another client sees a pending entry it cannot tell from one still being sent.
    with paynb.connect("team") as other:
        assert list(other.journal()["state"]) == ["pending"]
        assert other.reconcile().empty
    settled = client.reconcile()
    assert [tuple(r) for r in settled[["reference", "was", "state", "item_id"]]
            .itertuples(index=False)] == [("LOST-1", "pending", "sent", str(row["achItemId"]))]
    assert list(client.journal()["state"]) == ["sent"]
    client.close()
