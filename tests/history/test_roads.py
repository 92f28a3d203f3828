"""The history's frames are the lists' frames (issue 43.2): one question (which items does
the service hold, as a frame?), two roads (the local store's readers, the service's list),
one answer, values and dtypes, for every kind, on sandboxes drawn by seed and moment (the
wall clock moved), after changes drawn between two syncs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import time_machine
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paynb.sandbox import serve
from tests._moments import MOMENTS

KINDS = ("ach", "rcc", "instant", "rtp", "nocs")

#: A change of an ACH or RCC item the sandbox can make: the status it is put in.
change = st.tuples(st.sampled_from(["ach", "rcc"]), st.integers(0, 10**6),
                   st.sampled_from(["S", "R", "V", "B"]))


@settings(max_examples=6, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(moment=st.sampled_from(list(MOMENTS)), seed=st.integers(0, 10_000),
       changes=st.lists(change, max_size=6), hours=st.sampled_from([0, 7, 26, 80]))
def test_history_frames_are_the_lists_frames(tmp_path_factory: pytest.TempPathFactory,
                                             moment: str, seed: int,
                                             changes: list[tuple[str, int, str]],
                                             hours: int) -> None:
    path: Path = tmp_path_factory.mktemp("roads")
    with time_machine.travel(MOMENTS[moment], tick=True), \
            serve(port=0, seed_items=120, seed=seed) as sb, \
            sb.connect(journal=None, page_size=40) as client:
        client.sync(path=path, progress=False)
        for kind, pick, status in changes:
            waiting = getattr(client, kind).list(status="W", progress=False)
            if len(waiting):
                item = int(waiting[f"{kind}ItemId"].iloc[pick % len(waiting)])
                sb.simulate.force_status(item, status, kind=kind)
        sb.simulate.advance_clock(hours=hours)
        client.sync(progress=False)
        for kind in KINDS:
            pd.testing.assert_frame_equal(getattr(client.history, kind)(),
                                          getattr(client, kind).list(progress=False), obj=kind)
