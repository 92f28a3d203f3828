"""A long list's frame is built in batches while pages arrive; the last batches are small
(little left to build after the last page) and the frame is the one of all records at once."""

from __future__ import annotations

import pandas as pd

from paynb.resources import _base


def test_batches_shrink_at_the_end_and_give_the_same_frame(sandbox, monkeypatch):
    with sandbox.connect(journal=None, max_workers=2) as client:
        monkeypatch.setattr(_base, "FRAME_BATCH", 10_000)
        whole = client.ach.list(page_size=50, max_items=1500, progress=False)
        sizes: list[int] = []
        frame_of = _base.Resource._frame

        def counted(self, records):
            sizes.append(len(records))
            return frame_of(self, records)

        monkeypatch.setattr(_base.Resource, "_frame", counted)
        monkeypatch.setattr(_base, "FRAME_BATCH", 400)
        batched = client.ach.list(page_size=50, max_items=1500, progress=False)
    assert len(whole) == 1500
    pd.testing.assert_frame_equal(batched, whole)
    # 400 records a batch, then (the last 400 to come) batches of a round of pages:
    # 2 workers x 50 records.
    assert sizes == [400, 400, 350, 100, 100, 100, 50]
