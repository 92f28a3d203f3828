"""paynb.paging.page_progress: each page of a list reported to a callback (forms show it)."""

from __future__ import annotations

import pytest

from paynb.paging import Page, iter_pages, page_progress


def _fetcher(records: int, page_size: int, *, total: bool):
    def fetch(number: int) -> Page:
        start = number * page_size
        rows = [{"n": i} for i in range(start, min(start + page_size, records))]
        return Page(rows, records if total else None)

    return fetch


@pytest.mark.parametrize(("records", "max_items", "expected"), [
    (250, None, [(1, 3), (2, 3), (3, 3)]),
    (250, 120, [(1, 2), (2, 2)]),
    (100, None, [(1, 1)]),  # one full page: total says it is the only one
    (40, None, [(1, 1)]),
    (0, None, [(1, 1)]),
])
def test_pages_done_of_total_when_the_total_is_known(records, max_items, expected):
    seen: list[tuple[int, int | None]] = []
    with page_progress(lambda done, total: seen.append((done, total))):
        got = sum(len(p) for p in iter_pages(_fetcher(records, 100, total=True), page_size=100,
                                            max_items=max_items, max_workers=2, progress=False))
    assert got == min(records, max_items or records)
    assert seen == expected


def test_total_unknown_until_the_last_page():
    seen: list[tuple[int, int | None]] = []
    with page_progress(lambda done, total: seen.append((done, total))):
        list(iter_pages(_fetcher(250, 100, total=False), page_size=100, max_workers=2,
                        progress=False))
    assert seen == [(1, None), (2, None), (3, None)]


def test_no_report_outside_the_block_and_a_bad_callback_is_refused():
    seen: list[tuple[int, int | None]] = []
    with page_progress(lambda done, total: seen.append((done, total))):
        pass
    list(iter_pages(_fetcher(250, 100, total=True), page_size=100, progress=False))
    assert seen == []
    with pytest.raises(TypeError, match="callback"), page_progress("no"):  # type: ignore[arg-type]
        pass


def test_a_client_list_reports_its_pages(sandbox):
    seen: list[tuple[int, int | None]] = []
    with sandbox.connect(journal=None) as client, \
            page_progress(lambda done, total: seen.append((done, total))):
        frame = client.ach.list(page_size=500, progress=False)
    pages = -(-len(frame) // 500)
    assert pages > 1
    assert seen == [(n, pages) for n in range(1, pages + 1)]


_NOTEBOOK_CELL = """
from paynb.paging import Page, iter_pages

def fetch(number):
    start = number * 100
    return Page([{"n": i} for i in range(start, min(start + 100, 250))], 250)

print(sum(len(page) for page in iter_pages(fetch, page_size=100, max_workers=2)))
"""


@pytest.mark.timeout(180)
def test_an_executed_notebook_shows_the_bar_finished(tmp_path):
    """Issue 13: executed notebooks kept the bar's first text (``33%| | 1/3``) for good."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(_NOTEBOOK_CELL)]
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = notebook.cells[0].outputs
    bars = [o for o in outputs if "application/vnd.jupyter.widget-view+json" in o.get("data", {})]
    assert len(bars) == 1
    text = bars[0]["data"]["text/plain"]
    assert "100%" in text and "3/3" in text, text
    assert any(o.get("text") == "250\n" for o in outputs)
