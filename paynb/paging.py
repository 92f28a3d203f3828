"""Fetch every page of a list: the first page, then the rest concurrently.

When the first answer says how many records there are (``total``), every
remaining page is known and fetched at once on ``max_workers`` threads.
When it does not, pages are fetched in waves of ``max_workers`` until the
first short page. Either way the records come back in page order, cut at
``max_items``. (A record that moved to the next page while paging would be
seen twice: the resources drop such repeats by id.)
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Any

__all__ = ["Page", "fetch_all"]

logger = logging.getLogger("paynb.paging")


@dataclass(frozen=True)
class Page:
    """One page of a list: its records, and the list's ``total`` when the answer gave it."""

    records: list[dict[str, Any]]
    total: int | None = None


def _progress_bar(show: bool | None, pages: int | None, desc: str) -> Any:
    if show is False:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=pages, initial=1, desc=desc, unit="page", leave=False)


def _fetch_pages(fetch: Callable[[int], Page], numbers: range, workers: int,
                 bar: Any) -> list[Page]:
    """Pages ``numbers`` fetched concurrently, in order; the first failure cancels the rest."""
    if len(numbers) == 1 or workers == 1:
        pages = []
        for number in numbers:
            pages.append(fetch(number))
            if bar is not None:
                bar.update(1)
        return pages
    with ThreadPoolExecutor(max_workers=min(workers, len(numbers)),
                            thread_name_prefix="paynb-page") as pool:
        futures = [pool.submit(fetch, number) for number in numbers]
        if bar is not None:
            for future in futures:
                future.add_done_callback(lambda _: bar.update(1))
        wait(futures, return_when=FIRST_EXCEPTION)
        for future in futures:
            if future.done() and future.exception() is not None:
                for other in futures:
                    other.cancel()
                raise future.exception()  # type: ignore[misc]
        return [future.result() for future in futures]


def fetch_all(fetch: Callable[[int], Page], *, page_size: int, max_items: int | None = None,
              max_workers: int = 8, progress: bool | None = None, desc: str = "pages",
              ) -> list[dict[str, Any]]:
    """Every record of a paged list.

    ``fetch(n)`` returns page ``n`` (zero-based) of ``page_size`` records.
    A progress bar (tqdm.auto)
    shows when more than one page is fetched, unless ``progress`` is False.
    """
    first = fetch(0)
    records = list(first.records)
    limit = max_items if max_items is not None else math.inf
    bar = None
    try:
        if len(first.records) >= page_size and len(records) < limit:
            known = first.total
            if known is not None:
                wanted = min(known, limit)
                pages = math.ceil(wanted / page_size)
                bar = _progress_bar(progress, pages, desc) if pages > 1 else None
                for page in _fetch_pages(fetch, range(1, pages), max_workers, bar):
                    records.extend(page.records)
                    if len(page.records) < page_size:
                        break
            else:
                bar = _progress_bar(progress, None, desc)
                start = 1
                while len(records) < limit:
                    wave = range(start, start + max_workers)
                    short = False
                    for page in _fetch_pages(fetch, wave, max_workers, bar):
                        records.extend(page.records)
                        if len(page.records) < page_size:
                            short = True
                            break
                    if short:
                        break
                    start += max_workers
    finally:
        if bar is not None:
            bar.close()
    if max_items is not None:
        del records[max_items:]
    return records

