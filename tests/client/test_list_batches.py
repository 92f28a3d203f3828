"""A long list's frame is built in batches while pages arrive; the last batches are small
(little left to build after the last page) and the frame is the one of all records at once."""

from __future__ import annotations

import pandas as pd

from paynb import frames
from paynb.resources import _listing


def test_batches_shrink_at_the_end_and_give_the_same_frame(sandbox, monkeypatch):
    with sandbox.connect(journal=None, max_workers=2) as client:
        monkeypatch.setattr(_listing, "FRAME_BATCH", 10_000)
        whole = client.ach.list(page_size=50, max_items=1500, progress=False)
        sizes: list[int] = []
        frame_of = frames.to_frame

        def counted(records, *args, **kwargs):
            sizes.append(len(records))
            return frame_of(records, *args, **kwargs)

        monkeypatch.setattr(frames, "to_frame", counted)
        monkeypatch.setattr(_listing, "FRAME_BATCH", 400)
        batched = client.ach.list(page_size=50, max_items=1500, progress=False)
    assert len(whole) == 1500
    pd.testing.assert_frame_equal(batched, whole)
    # At most 400 records a batch (at least a round of pages, 2 workers x 50 records, when
    # built while the next page was awaited), and in the last 400 to come batches of a
    # round. Which batches are built early depends on when the pages come.
    assert sum(sizes) == 1500
    done = 0
    for size in sizes[:-1]:
        if 1500 - done - size < 400:
            assert size in (100, 150, 200, 250, 300, 350, 400), sizes
        else:
            assert 100 <= size <= 400, sizes
        done += size
    assert sizes[-1] <= 100, sizes


def _batches(events: list[str], total: int) -> _listing._Batches:
    def build(records):
        events.append(f"build {len(records)}")
        return pd.DataFrame({"n": [r["n"] for r in records]})

    return _listing._Batches(build, expected=lambda: total, last_batch=1600)


def test_a_round_of_pages_is_built_while_the_next_page_is_awaited():
    events: list[str] = []
    batches = _batches(events, 20_000)
    page = 0
    for _ in range(7):  # 1,400 records: less than a round of 8 pages, nothing built yet
        batches.add([{"n": page * 200 + i} for i in range(200)])
        page += 1
    batches.idle()
    assert events == []
    batches.add([{"n": page * 200 + i} for i in range(200)])
    page += 1
    assert events == []  # a round waiting: not a full batch, and pages keep coming
    batches.idle()
    assert events == ["build 1600"]  # the next page is awaited: the round is built
    while page < 28:  # without idle moments, full batches of 4,000
        batches.add([{"n": page * 200 + i} for i in range(200)])
        page += 1
    assert events == ["build 1600", "build 4000"]
    while page < 100:  # idle after every page: a round at a time, and the rest at the end
        batches.add([{"n": page * 200 + i} for i in range(200)])
        page += 1
        batches.idle()
    frame = batches.result()
    assert events[2:] == ["build 1600"] * 9
    assert frame["n"].tolist() == list(range(20_000))
