"""Fetch every page of a list: the first page, then the rest concurrently
(:func:`iter_pages`), in order, each as soon as it is there, so the caller can work while
later pages are on the way. (A record that moved to the next page while paging would be
seen twice: the resources drop such repeats by id.)

Inside ``with page_progress(callback):`` every paged list of that thread (or context)
also reports each page to ``callback(pages_done, pages_total)``, so that a form can say
how far a long load is.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

__all__ = ["Page", "iter_pages", "page_progress"]

logger = logging.getLogger("paynb.paging")

#: The callback of the innermost ``page_progress`` block of this context, if any.
_page_listener: ContextVar[Callable[[int, int | None], Any] | None] = ContextVar(
    "paynb_page_listener", default=None)


@contextmanager
def page_progress(callback: Callable[[int, int | None], Any]) -> Iterator[None]:
    """Within the block, every paged list (``client.ach.list()`` ...) of this thread calls
    ``callback(pages_done, pages_total)`` after each page it has fetched; ``pages_total``
    is None while the service has not said how many records there are. The progress bar
    is unaffected."""
    if not callable(callback):
        raise TypeError("callback must be callable: callback(pages_done, pages_total)")
    token = _page_listener.set(callback)
    try:
        yield
    finally:
        _page_listener.reset(token)


@dataclass(frozen=True)
class Page:
    """One page of a list: its records, and the list's ``total`` when the answer gave it.

    The records are raw, as the service sent them (account numbers whole: the history
    keys accounts by them); the repr, what a notebook shows of a page, counts them only.
    """

    records: list[dict[str, Any]]
    total: int | None = None

    def __repr__(self) -> str:
        return f"Page({len(self.records)} records, total={self.total})"


class _NotebookBar:
    """A notebook (ipywidgets) tqdm bar whose output ends in its final state: a notebook
    keeps the text a widget had when first displayed (``0%| | 1/201``), which is what shows
    where widgets are not run (GitHub, a docs page); so once closed, the bar's output (a
    display id) is replaced by the final bar, which stays as a record of the load.
    """

    def __init__(self, bar: Any) -> None:
        from IPython.display import display

        self.bar = bar
        self.handle = display(bar.container, display_id=True)

    def update(self, n: int = 1) -> None:
        self.bar.update(n)

    def close(self) -> None:
        self.bar.close()
        if self.handle is not None:
            self.handle.update(self.bar.container)


def _progress_bar(show: bool | None, pages: int | None, desc: str) -> Any:
    if show is False:
        return None
    from tqdm.auto import tqdm

    options = {"total": pages, "initial": 1, "desc": desc, "unit": "page"}
    try:
        from tqdm.notebook import tqdm as notebook_tqdm
    except ImportError:  # no ipywidgets: tqdm.auto is the terminal bar
        notebook_tqdm = None
    if notebook_tqdm is not None and issubclass(tqdm, notebook_tqdm):
        return _NotebookBar(tqdm(**options, leave=True, display=False))
    # In a terminal the finished bar is removed, as tqdm does it.
    return tqdm(**options, leave=False)


def _pages_total(first: Page, page_size: int, remaining: float) -> int | None:
    """How many pages the list takes, as known after its first page (None: not known)."""
    if len(first.records) < page_size or remaining <= 0:
        return 1
    if first.total is None:
        return None
    return max(1, math.ceil(min(first.total, len(first.records) + remaining) / page_size))


def iter_pages(fetch: Callable[[int], Any], *, page_size: int, max_items: int | None = None,
               max_workers: int = 8, progress: bool | None = None, desc: str = "pages",
               decode: Callable[[Any], Page] | None = None,
               idle: Callable[[], Any] | None = None, expect: int = 1,
               ) -> Iterator[list[dict[str, Any]]]:
    """The records of every page of a paged list, page after page, in order.

    ``fetch(n)`` returns page ``n`` (zero-based) of ``page_size`` records. When the first
    answer says how many records there are (``total``), exactly the remaining pages are
    fetched, ``max_workers`` at a time; when it does not, pages are fetched
    ``max_workers`` ahead until the first short page. When ``max_items`` already says
    that several pages are wanted, up to ``max_workers`` of them are asked with the first
    (a page past the end of a shorter list is then dropped unread). A progress bar
    (tqdm.auto) shows when more than one page is fetched, unless ``progress`` is False.

    With ``decode``, ``fetch(n)`` returns the page as it came (an HTTP answer) and
    ``decode(answer)`` makes the :class:`Page` of it in the thread that iterates, as
    each page is reached: the fetching threads then only send requests and read
    answers, and go on to the next request at once (parsing in them would hold the
    interpreter lock between one answer and the next request); an answer that cannot
    be decoded raises where its page is reached, as an error of ``fetch`` does.

    ``idle()``, when given, is called (in the thread that iterates) whenever the next
    page has not come yet, just before waiting for it: work done there holds the
    interpreter lock while the fetching threads wait on the network rather than while
    they have answers to read and requests to send.

    ``expect``: how many pages the caller expects (a guess, such as the number a poll
    had the last time): up to ``max_workers`` of them are asked with page 0, not after
    its answer, which saves that round trip when the guess holds. Pages past the end
    of a shorter list are dropped (those already asked cost a request each).
    """
    read: Callable[[Any], Page] = decode or (lambda page: page)
    listener = _page_listener.get()
    # max_items asking for several pages (or the pages expected): the first round fetches
    # them with page 0, which saves the round trip of page 0 alone.
    wanted = max(1, expect) if max_items is None else max(1, math.ceil(max_items / page_size))
    pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="paynb-page")
    pending: deque[Future[Page]] = deque(
        pool.submit(fetch, number) for number in range(1, min(wanted, max_workers)))
    following = len(pending) + 1
    bar = None
    try:
        first = read(fetch(0))
        remaining = max_items if max_items is not None else math.inf
        records = first.records[:remaining] if max_items is not None else first.records
        remaining -= len(records)
        pages = _pages_total(first, page_size, remaining)
        if listener is not None:
            listener(1, pages)
        yield records
        if pages == 1:
            return
        # With a total, exactly the pages holding it (up to max_items) are fetched;
        # without one, pages are fetched until the first short page.
        last = None if pages is None else pages - 1
        if last is not None:
            while len(pending) > last:  # early pages past the end of a shorter list
                pending.pop().cancel()
            following = min(following, last + 1)
        bar = _progress_bar(progress, None if last is None else last + 1, desc)
        # Known pages are all queued at once (the pool runs max_workers of them); unknown
        # ones are kept two rounds ahead, so that fetching goes on while the caller works.
        ahead = math.inf if last is not None else 2 * max_workers
        while True:
            while len(pending) < ahead and (last is None or following <= last):
                pending.append(pool.submit(fetch, following))
                following += 1
            if not pending:
                return
            future = pending.popleft()
            if idle is not None and not future.done():
                idle()
            page = read(future.result())
            if bar is not None:
                bar.update(1)
            if listener is not None:
                listener(following - len(pending), None if last is None else last + 1)
            records = page.records[:remaining] if max_items is not None else page.records
            remaining -= len(records)
            yield records
            if len(page.records) < page_size or remaining <= 0:
                return
    finally:
        # On an error or an interrupt (Ctrl-C in a notebook) return at once: queued
        # pages are dropped, the few running ones end on their own in the background.
        pool.shutdown(wait=False, cancel_futures=True)
        if bar is not None:
            bar.close()
