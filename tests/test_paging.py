"""paynb.paging.iter_pages: which pages are fetched when, and what comes back."""

from __future__ import annotations

import threading
import time

import pytest

from paynb.paging import Page, iter_pages


def _pages(records: int, page_size: int, *, asked: list[int] | None = None,
           past_end: Exception | None = None, wait_for: dict[int, threading.Event] | None = None):
    """A fetch function over ``records`` numbered rows; ``past_end`` is raised for a page
    after the last one (a service may answer such a page with an error)."""
    lock = threading.Lock()

    def fetch(number: int) -> Page:
        with lock:
            if asked is not None:
                asked.append(number)
        if wait_for is not None:
            if number in wait_for:
                wait_for[number].set()
            if number == 0:
                for event in wait_for.values():
                    # Page 0 answers only once the others were asked for: they ran alongside.
                    assert event.wait(10), "page 0 was fetched alone"
        start = number * page_size
        if past_end is not None and start >= records:
            raise past_end
        return Page([{"n": i} for i in range(start, min(start + page_size, records))], records)

    return fetch


def test_max_items_of_several_pages_fetches_the_first_round_with_page_0():
    events = {n: threading.Event() for n in (1, 2, 3)}
    got = [r["n"] for page in iter_pages(_pages(1000, 100, wait_for=events), page_size=100,
                                         max_items=350, max_workers=8, progress=False)
           for r in page]
    assert got == list(range(350))


def test_the_first_round_is_at_most_max_workers_pages():
    asked: list[int] = []
    started = threading.Event()

    def fetch(number: int) -> Page:
        asked.append(number)
        if number == 0:
            started.wait(0.2)  # give the workers the time to ask for more than they may
            first_round = sorted(asked)
            assert first_round == [0, 1, 2], first_round
        return Page([{"n": number}] * 100, 10_000)

    pages = list(iter_pages(fetch, page_size=100, max_items=1000, max_workers=3, progress=False))
    assert len(pages) == 10


def test_pages_past_the_end_of_a_shorter_list_are_dropped_unread():
    asked: list[int] = []
    fetch = _pages(150, 100, asked=asked, past_end=RuntimeError("page past the end"))
    got = [r["n"] for page in iter_pages(fetch, page_size=100, max_items=1000, max_workers=8,
                                         progress=False) for r in page]
    assert got == list(range(150))
    assert set(asked) >= {0, 1} and set(asked) <= set(range(8))


def test_without_max_items_the_first_page_comes_alone():
    """A list of unknown length: page 0 first (its total says how many follow), so that
    a one-page list costs one request."""
    asked: list[int] = []

    def fetch(number: int) -> Page:
        asked.append(number)
        if number == 0:
            assert asked == [0]
        return Page([{"n": number}] * 10, 10)

    assert len(list(iter_pages(fetch, page_size=100, max_workers=8, progress=False))) == 1
    assert asked == [0]


def test_expected_pages_are_asked_with_page_0_and_the_list_read_whole():
    events = {n: threading.Event() for n in (1, 2, 3, 4)}
    got = [r["n"] for page in iter_pages(_pages(1000, 100, wait_for=events), page_size=100,
                                         max_workers=8, progress=False, expect=5)
           for r in page]
    assert got == list(range(1000))


@pytest.mark.parametrize(("records", "expect"), [(150, 5), (1, 3), (700, 2)])
def test_a_wrong_guess_of_pages_reads_the_list_exactly(records, expect):
    """More pages expected than the list has: the extra ones (asked already) are dropped;
    fewer: the rest are asked once page 0's total says how many."""
    asked: list[int] = []
    fetch = _pages(records, 100, asked=asked, past_end=RuntimeError("page past the end"))
    got = [r["n"] for page in iter_pages(fetch, page_size=100, max_workers=8,
                                         progress=False, expect=expect) for r in page]
    assert got == list(range(records))
    assert set(asked) >= set(range(max(1, -(-records // 100))))
    assert len(asked) == len(set(asked))  # no page twice


@pytest.mark.parametrize("max_items", [0, 1, 100])
def test_max_items_within_the_first_page_fetches_only_it(max_items):
    asked: list[int] = []
    pages = list(iter_pages(_pages(1000, 100, asked=asked), page_size=100,
                            max_items=max_items, max_workers=8, progress=False))
    assert sum(len(p) for p in pages) == max_items
    assert asked == [0]


def test_an_error_on_a_page_that_is_needed_is_raised():
    def fetch(number: int) -> Page:
        if number == 2:
            raise RuntimeError("page 2 failed")
        return Page([{"n": number}] * 100, 1000)

    with pytest.raises(RuntimeError, match="page 2 failed"):
        list(iter_pages(fetch, page_size=100, max_items=500, max_workers=8, progress=False))


def test_decode_runs_in_the_iterating_thread_and_its_error_is_raised_where_the_page_is():
    """With ``decode``, the fetching threads hand over the answers as they came and the
    pages are made of them in the thread that iterates, page after page."""
    fetched_on: dict[int, str] = {}
    decoded_on: list[tuple[int, str]] = []

    def fetch(number: int) -> int:
        fetched_on[number] = threading.current_thread().name
        return number

    def decode(number: int) -> Page:
        decoded_on.append((number, threading.current_thread().name))
        if number == 3:
            raise ValueError("page 3 is not JSON")
        return Page([{"n": number}] * 100, 1000)

    pages = iter_pages(fetch, page_size=100, max_items=1000, max_workers=4, progress=False,
                       decode=decode)
    got = [next(pages)[0]["n"] for _ in range(3)]
    with pytest.raises(ValueError, match="page 3 is not JSON"):
        next(pages)
    assert got == [0, 1, 2]
    here = threading.current_thread().name
    assert decoded_on == [(n, here) for n in range(4)]
    assert all(fetched_on[n].startswith("paynb-page") for n in (1, 2, 3))


def test_idle_is_called_only_while_the_next_page_is_on_its_way():
    """``idle()`` runs before waiting for a page that has not come, never for one that
    is there (work put there overlaps the wait instead of the fetching threads' work)."""
    release = {n: threading.Event() for n in range(1, 4)}
    calls: list[int] = []
    yielded: list[int] = []

    def fetch(number: int) -> Page:
        if number in release:
            assert release[number].wait(10)
        return Page([{"n": number}] * 100, 400)

    def idle() -> None:
        calls.append(len(yielded))
        release[len(yielded)].set()  # the awaited page answers once idle() has run

    for page in iter_pages(fetch, page_size=100, max_items=400, max_workers=4,
                           progress=False, idle=idle):
        yielded.append(page[0]["n"])
    assert yielded == [0, 1, 2, 3]
    assert calls == [1, 2, 3]


def test_idle_is_not_called_for_a_page_already_there():
    done = threading.Event()
    calls: list[str] = []

    def fetch(number: int) -> Page:
        if number == 2:
            done.set()
        return Page([{"n": number}] * 100, 300)

    pages = iter_pages(fetch, page_size=100, max_items=300, max_workers=4, progress=False,
                       idle=lambda: calls.append("idle"))
    assert next(pages)[0]["n"] == 0
    assert done.wait(10)
    time.sleep(0.2)  # pages 1 and 2 are in
    assert [p[0]["n"] for p in pages] == [1, 2]
    assert calls == []
