"""The sandbox's /docs page renders in Chromium with every request to another host refused."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
import requests

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("PAYNB_CHROMIUM", "/usr/bin/chromium")


def test_docs_render_offline(sandbox):
    if not Path(CHROMIUM).exists() or importlib.util.find_spec("playwright") is None:
        pytest.skip(f"needs Chromium at {CHROMIUM} and playwright (scripts/ensure_browser.sh)")
    from playwright.sync_api import sync_playwright

    spec = requests.get(sandbox.base_url + "/openapi.json", timeout=30).json()
    operations = sum(len(methods) for methods in spec["paths"].values())
    refused: list[str] = []

    def only_the_sandbox(route):
        if route.request.url.startswith(sandbox.base_url + "/"):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True,
                                             args=["--no-sandbox", "--disable-gpu"])
        try:
            page = browser.new_page()
            page.set_default_timeout(60_000)
            page.route("**/*", only_the_sandbox)
            page.goto(sandbox.base_url + "/docs")
            page.wait_for_selector(".opblock-summary")
            shown = page.locator(".opblock-summary").count()
            title = page.locator(".info .title").inner_text()
            errors = page.locator(".errors-wrapper").count()
        finally:
            browser.close()
    assert refused == []
    assert (shown, errors) == (operations, 0)
    assert title.startswith("paynb sandbox")
