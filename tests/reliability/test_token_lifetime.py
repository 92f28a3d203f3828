"""Tokens: a 2-second token lifetime during a long listing costs renewals, never a failed
call; a changed password or a revoked token gives one clear AuthenticationError after at
most one renewal attempt, never a retry storm.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from paynb import sandbox
from paynb.errors import AuthenticationError
from paynb.sandbox import FaultSettings

from .conftest import WireSpy, make_client, spied_client
from .faultrun import ach_item, service_records

ACH_PATH = "/api/v3/AchTransactions/companycode/DEMO1"


def _token_requests(sb: sandbox.Sandbox) -> dict[str, int]:
    """The sandbox's own count of token requests by outcome ("issued" or the OAuth error)."""
    return sb.simulate.info()["tokenRequests"]


def test_two_second_tokens_during_a_long_listing_are_renewed_without_a_failed_call() -> None:
    # 150 ms added to every read, pages of 10, 2 workers: ~1,000 items are ~100 pages,
    # ~50 rounds of two, so the listing lasts at least 7 s: more than three token
    # lifetimes (paynb renews 10% before the end, after 1.8 s).
    with sandbox.serve(port=0, seed_items=1250, seed=9, token_ttl=2,
                       reads=FaultSettings(latency_ms=150)) as sb:
        truth = [r["achItemId"] for r in service_records(sb)]
        with spied_client(sb, page_size=10, max_workers=2) as (client, spy):
            frame = client.ach.list(progress=False)
        pages = -(-len(truth) // 10)
        assert [int(i) for i in frame["achItemId"]] == truth
        outcomes = spy.outcomes("GET")
        # Every page is answered; paynb renews before expiry, so a 401 can only come
        # from a request delayed past the token's end on a loaded machine, and is then
        # cured by one renewal and one resend.
        assert outcomes[200] == pages and set(outcomes) <= {200, 401}, outcomes
        renewals = spy.token_requests - 1
        print(f"2 s tokens: {pages} pages, {spy.token_requests} token requests "
              f"({renewals} renewals), {outcomes.get(401, 0)} x 401, no failed call")
        assert renewals >= 2
        assert outcomes.get(401, 0) <= renewals
        assert spy.token_requests <= pages // 5, "one token serves several pages"


def test_a_changed_password_gives_one_authentication_error_and_sends_nothing(
        tmp_path: Path) -> None:
    # One-second tokens: the client renews before sending once 0.9 s have passed.
    with sandbox.serve(port=0, seed_items=50, seed=9, token_ttl=1) as sb, \
            spied_client(sb, journal=tmp_path / "j.sqlite3") as (client, spy):
        client.ach.list(progress=False)
        # Changed on the server, tokens kept: the client's token works until it runs out.
        assert sb.simulate.set_password("analyst", "changed-by-the-admin",
                                        revoke_tokens=False) == 0
        time.sleep(1.0)
        spy.reset()
        with pytest.raises(AuthenticationError) as caught:
            client.ach.list(progress=False)
        assert caught.value.error == "invalid_grant"
        assert spy.select() == [("POST", "/connect/token", 400)]
        spy.reset()
        with pytest.raises(AuthenticationError):
            client.ach.submit(ach_item("TOK-PW-2", 1))
        assert spy.select() == [("POST", "/connect/token", 400)]
        assert client.journal().empty
        assert _token_requests(sb) == {"invalid_grant": 2, "issued": 1}


@pytest.mark.parametrize(("changes", "error"), [
    ({"password": "not-the-password"}, "invalid_grant"),
    ({"username": "nobody"}, "invalid_grant"),
    ({"client_secret": "not-the-secret"}, "invalid_client"),
])
def test_wrong_credentials_fail_once_with_the_oauth_error(changes: dict[str, str],
                                                          error: str) -> None:
    with sandbox.serve(port=0, seed_items=0) as sb, \
            spied_client(sb, credentials=changes) as (client, spy):
        for _ in range(2):
            with pytest.raises(AuthenticationError) as caught:
                client.ach.list(progress=False)
            assert caught.value.error == error
        # One token request per call, nothing else: no retries of a refused grant.
        assert spy.token_requests == 2 and spy.select(token=False) == []
        for secret in changes.values():
            assert secret not in str(caught.value)


def test_a_revoked_token_is_renewed_once_then_the_call_succeeds(tmp_path: Path) -> None:
    db = tmp_path / "sandbox.sqlite3"
    first = sandbox.serve(port=0, db=db, seed_items=100, seed=9)
    port = int(first.base_url.rsplit(":", 1)[1])
    with spied_client(first, journal=tmp_path / "j.sqlite3") as (client, spy):
        expected = len(client.ach.list(progress=False))
        # A restarted service has forgotten every token it issued: the client's token,
        # still valid by its own clock, is refused with 401.
        first.close()
        with sandbox.serve(port=port, db=db) as second:
            assert second.base_url == first.base_url
            spy.reset()
            assert len(client.ach.list(progress=False)) == expected
            assert spy.token_requests == 1
            assert 401 in spy.outcomes("GET")
            # The administrator changes the password and revokes the user's tokens: one
            # 401, one renewal attempt (refused), one clear error; no retry storm.
            assert second.simulate.set_password("analyst", "changed-by-the-admin") == 1
            spy.reset()
            with pytest.raises(AuthenticationError) as caught:
                client.ach.list(progress=False)
            assert caught.value.error == "invalid_grant"
            assert "invalid_grant" in str(caught.value)
            assert spy.select() == [("GET", ACH_PATH, 401), ("POST", "/connect/token", 400)]
            assert _token_requests(second) == {"invalid_grant": 1, "issued": 1}
            # A submission then: its POST is refused with 401 before the service handles
            # it, one renewal attempt, the journal says rejected, nothing is stored.
            spy.reset()
            with pytest.raises(AuthenticationError) as again:
                client.ach.submit(ach_item("TOK-PW-1", 1))
            assert again.value.error == "invalid_grant"
            assert spy.select() == [("POST", ACH_PATH, 401), ("POST", "/connect/token", 400)]
            assert _token_requests(second) == {"invalid_grant": 2, "issued": 1}
            assert client.journal()[["reference", "state"]].values.tolist() == [
                ["TOK-PW-1", "rejected"]]
            assert "changed-by-the-admin" not in str(caught.value) + str(again.value)
            second.simulate.set_password("analyst", "analyst-password")
            assert "TOK-PW-1" not in {r["yourReferenceNumber"]
                                      for r in service_records(second)}


def test_tokens_are_fetched_once_for_concurrent_pages() -> None:
    with sandbox.serve(port=0, seed_items=1250, seed=9) as sb:
        client = make_client(sb, page_size=50, max_workers=8)
        spy = WireSpy(client.transport.session)
        try:
            client.ach.list(progress=False)
        finally:
            client.close()
        assert spy.token_requests == 1
