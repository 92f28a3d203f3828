"""List, export and poll filters (issue 13): the same filters everywhere, backwards ranges
refused naming both ends, documented parameters sent and the others applied here."""

from __future__ import annotations

import datetime as dt
from urllib.parse import parse_qsl, urlsplit

import pandas as pd
import pytest
import time_machine

from paynb.errors import ValidationError
from paynb.sandbox import serve
from tests._moments import at_every_moment

RANGES = ("returned", "received", "settled")


@pytest.fixture(scope="module")
def client(sandbox):
    with sandbox.connect(journal=None, page_size=500) as opened:
        yield opened


@pytest.fixture
def sent(client, monkeypatch):
    """The query of every request the client sends to the service (token calls left out)."""
    queries: list[tuple[str, list[tuple[str, str]]]] = []
    session = client.transport.session
    send = session.send

    def capture(request, **kwargs):
        parts = urlsplit(request.url)
        if not parts.path.endswith("/connect/token"):
            queries.append((parts.path, parse_qsl(parts.query)))
        return send(request, **kwargs)

    monkeypatch.setattr(session, "send", capture)
    return queries


@pytest.fixture(scope="module")
def ach(client) -> pd.DataFrame:
    return client.ach.list(progress=False)


@pytest.mark.parametrize("stem", RANGES)
def test_a_backwards_range_names_both_arguments_and_sends_nothing(client, sent, stem):
    with pytest.raises(ValidationError) as raised:
        client.ach.list(**{f"{stem}_from": "2026-11-01", f"{stem}_to": "2026-10-01"})
    assert set(raised.value.errors) == {f"{stem}_from", f"{stem}_to"}
    assert f"{stem}_from (2026-11-01) is after {stem}_to (2026-10-01)" in str(raised.value)
    with pytest.raises(ValidationError, match=f"{stem}_from .* {stem}_to"):
        client.ach.export("csv", **{f"{stem}_from": "2026-11-01", f"{stem}_to": "2026-10-01"})
    assert sent == []


def test_backwards_ranges_of_other_kinds_and_of_a_poll(client, sent):
    with pytest.raises(ValidationError, match="received_from .* received_to"):
        client.instant.list(received_from="2026-11-02", received_to="2026-11-01")
    with pytest.raises(ValidationError, match="received_from .* received_to"):
        client.nocs.export(received_from="2026-11-02T10:00", received_to="2026-11-01")
    with pytest.raises(ValidationError, match="since .* until"):
        client.rcc.changes(since="2026-11-02", until="2026-11-01")
    assert sent == []


def test_one_day_is_a_range_not_a_backwards_one(client, ach):
    # A bare date as the end takes in the whole day: items submitted late that day count.
    day = ach["receivedDateTime"].dt.date.iloc[len(ach) // 2]
    expected = ach[ach["receivedDateTime"].dt.date == day]
    got = client.ach.list(received_from=day, received_to=day.isoformat(), progress=False)
    assert got["achItemId"].tolist() == expected["achItemId"].tolist()
    # A time of day as the end is that instant: the day before it, plus nothing after.
    end = pd.Timestamp(day, tz="UTC") - pd.Timedelta(milliseconds=1)
    before = client.ach.list(received_to=end.to_pydatetime(), progress=False)
    assert before["receivedDateTime"].max() < pd.Timestamp(day, tz="UTC")
    assert len(before) == (ach["receivedDateTime"] < pd.Timestamp(day, tz="UTC")).sum()


def _received_month(client, ach: pd.DataFrame) -> pd.DataFrame:
    """Items received in a month of the sandbox's history and settled from its fifth day,
    filtered by the client; asserted to be those of ``ach`` that pass the filters."""
    start = ach["receivedDateTime"].quantile(0.5).normalize()
    end = start + pd.Timedelta(days=29)
    settled = start + pd.Timedelta(days=4)
    got = client.ach.list(received_from=start.date().isoformat(),
                          received_to=end.date().isoformat(),
                          settled_from=settled.date().isoformat(), progress=False)
    received = ach["receivedDateTime"]
    expected = ach[(received >= start) & (received < end + pd.Timedelta(days=1))
                   & ach["settleDate"].notna()
                   & (ach["settleDate"].dt.date >= settled.date())]
    assert len(expected) > 0
    assert got["achItemId"].tolist() == expected["achItemId"].tolist()
    return got


def test_received_and_settled_are_applied_here_and_not_sent(client, ach, sent):
    # A month of the sandbox's history, whatever day the sandbox was seeded on.
    _received_month(client, ach)
    names = {name for _, query in sent for name, _ in query}
    assert names == {"page", "pageSize"}


@at_every_moment
def test_received_and_settled_on_any_day(moment: dt.datetime) -> None:
    with time_machine.travel(moment, tick=True), serve(port=0, seed_items=300, seed=2) as sb, \
            sb.connect(journal=None, page_size=500) as client:
        _received_month(client, client.ach.list(progress=False))


def test_documented_filters_are_sent(client, sent):
    client.ach.list(status="R", returned_from="2026-09-01", returned_to="2026-10-01",
                    progress=False)
    query = sent[0][1]
    assert ("itemStatus", "R") in query
    assert ("returnDateStart", "2026-09-01T00:00:00.000") in query
    assert ("returnDateEnd", "2026-10-01T00:00:00.000") in query


def test_exports_take_the_list_filters(client, sent):
    listed = client.ach.list(status=["R", "B"], returned_from="2026-09-01", progress=False)
    assert len(listed) > 0
    for filetype in ("csv", "json", "xlsx"):
        exported = client.ach.export(filetype, status=["R", "B"], returned_from="2026-09-01")
        assert exported["achItemId"].tolist() == listed["achItemId"].tolist(), filetype
    path, query = sent[-1]
    assert path.endswith("/export/filetype/xlsx")
    assert ("itemStatus", "R") in query and ("itemStatus", "B") in query


def test_export_filters_are_applied_even_when_the_service_ignores_them(client, monkeypatch):
    # The spec does not say exports honour the list parameters: paynb narrows the rows too.
    original = client.transport.request

    def ignoring(method, path, *, params=None, **kwargs):
        return original(method, path, **kwargs)

    monkeypatch.setattr(client.transport, "request", ignoring)
    exported = client.ach.export("csv", status="R")
    assert len(exported) > 0
    assert set(exported["itemStatus"].astype(str)) == {"R"}


def test_filters_need_a_readable_export(client, sent):
    with pytest.raises(ValidationError, match="filetype"):
        client.ach.export("pdf", status="R")
    assert sent == []


def test_instant_lists_filter_status_and_dates_here(client, sent):
    every = client.instant.list(progress=False)
    failed = client.instant.list(status="failed", progress=False)
    assert len(failed) == (every["status"] == "Failed").sum() > 0
    assert set(failed["status"].astype(str)) == {"Failed"}
    late = client.rtp.list(settled_from="2026-10-01", progress=False)
    assert (late["completedDateTime"] >= pd.Timestamp("2026-10-01", tz="UTC")).all()
    exported = client.instant.export("json", status="Success")
    assert set(exported["status"].astype(str)) == {"Success"}
    assert all(name in {"page", "pageSize"} for _, query in sent for name, _ in query)


def test_a_filter_a_kind_has_no_field_for_is_an_error(client, sent):
    with pytest.raises(ValidationError, match="returned_from .*no such date"):
        client.instant.list(returned_from="2026-10-01")
    with pytest.raises(ValidationError, match="status .*no status"):
        client.nocs.list(status="R")
    with pytest.raises(ValidationError, match="status"):
        client.rtp.list(status="R")
    with pytest.raises(ValidationError, match="status"):
        client.ach.changes(status="W")
    assert sent == []


def test_nocs_filter_by_the_day_they_came(client):
    every = client.nocs.list(progress=False)
    if every.empty:
        pytest.skip("the shared sandbox holds no NOCs")
    day = every["nocDate"].dt.date.iloc[0]
    got = client.nocs.list(received_from=day, received_to=day, progress=False)
    assert got["nocId"].tolist() == every.loc[every["nocDate"].dt.date == day, "nocId"].tolist()


def test_changes_narrowed_by_status_leave_the_rest_for_the_next_poll(sandbox):
    with sandbox.connect(journal=None) as poller:
        returned = poller.ach.changes(status="R")
        assert set(returned["itemStatus"].astype(str)) == {"R"}
        rest = poller.ach.changes()
        assert len(rest) > 0 and "R" not in set(rest["itemStatus"].astype(str))
