"""The morning run's HTML report in Chromium: one self-contained page (nothing loaded from
anywhere else), the environment and the company at the top, the findings, the charts
drawn, and no code. ``MONITOR_SCREENSHOT=docs/img/monitor_report.png`` keeps the page's
picture for the docs (docs/monitor.md shows it)."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from paynb import monitor, sandbox

pytestmark = [pytest.mark.browser, pytest.mark.timeout(600)]

CHROMIUM = os.environ.get("PAYNB_CHROMIUM", "/usr/bin/chromium")


def test_the_report_page_stands_alone(tmp_path):
    if not Path(CHROMIUM).exists() or importlib.util.find_spec("playwright") is None:
        pytest.skip(f"needs Chromium at {CHROMIUM} and playwright (scripts/ensure_browser.sh)")
    from playwright.sync_api import sync_playwright

    with sandbox.serve(port=0, seed_items=3000, seed=11) as sb, \
            sb.connect(company_code="DEMO2", journal=tmp_path / "journal.sqlite3") as client:
        report = monitor.run(client, reports=tmp_path / "reports", notify=[])
    assert report.html is not None and report.html.exists()
    page_url = report.html.as_uri()
    refused: list[str] = []

    def only_the_file(route):
        if route.request.url == page_url or route.request.url.startswith("data:"):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.route("**/*", only_the_file)
            page.goto(page_url)
            header = page.locator(".paynb-monitor-header").inner_text()
            findings = page.locator("table.paynb-findings tbody tr").count()
            images = page.eval_on_selector_all(
                "img", "imgs => imgs.map(i => [i.naturalWidth, i.getAttribute('alt')])")
            text = page.locator("body").inner_text()
            code = page.locator(".jp-InputArea, .jp-CodeCell .jp-Editor, pre code").count()
            top = page.evaluate("document.querySelector('.paynb-monitor-header')"
                                ".getBoundingClientRect().top")
            shot = os.environ.get("MONITOR_SCREENSHOT")
            page.screenshot(path=shot or str(tmp_path / "report.png"), full_page=True)
        finally:
            browser.close()
    assert refused == []
    assert "paynb morning run: DEMO2" in header and "sandbox" in header
    assert "BREACH" in header and top < 100  # at the top of the page
    assert findings == len(report.findings)
    assert len(images) == 2 and all(width > 300 and alt for width, alt in images)
    assert code == 0 and "MonitorReport.load" not in text and "run_file" not in text
    assert "unauthorized return rate" in text and "not legal advice" in text
