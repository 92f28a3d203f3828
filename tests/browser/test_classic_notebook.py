"""The forms in Jupyter Notebook 7, the classic notebook's successor, in headless Chromium.

Issue 4 asks for forms that work in JupyterLab and in the classic notebook interface.
``test_jupyterlab.py`` covers JupyterLab; here ``jupyter notebook`` (package
``notebook>=7``) serves a one-cell notebook that connects to a sandbox of its own and
shows an ``AchForm``. The form must render (no "Error displaying widget"), start with
its submit button disabled and a status line naming what is missing, and react to
typing in the page. Same driver, same skip rule as the JupyterLab tests.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import labdriver
import pytest

pytestmark = pytest.mark.browser

playwright_api = pytest.importorskip(
    "playwright.sync_api",
    reason="BROWSER TESTS SKIPPED: the playwright package is not installed")
expect = playwright_api.expect

CELL = """import paynb
client = paynb.connect()
form = paynb.forms.AchForm(client)
form"""


@pytest.fixture(scope="module")
def notebook() -> Iterator[labdriver.Lab]:
    """Notebook 7 with the one-cell form notebook opened and run."""
    pytest.importorskip("notebook.app", reason="the notebook package (>=7) is not installed")
    try:
        with labdriver.running_lab(["01_quickstart.ipynb"], seed_items=50,
                                   app="notebook") as running:
            running.open(running.write_notebook("ach_form.ipynb", [CELL]))
            running.run_all()
            yield running
    except labdriver.BrowserUnavailable as exc:
        message = f"BROWSER TESTS SKIPPED: {exc}"
        warnings.warn(message, stacklevel=1)
        pytest.skip(message)


def test_ach_form_renders_and_reacts_in_notebook_7(notebook: labdriver.Lab):
    page = notebook.page
    # The page is Notebook 7's, not JupyterLab's.
    assert "/notebooks/ach_form.ipynb" in page.url
    expect(page.locator("#jp-main-statusbar")).to_have_count(0)

    form = page.locator(".paynb-form-ach")
    expect(form).to_have_count(1)
    submit = form.locator("button.paynb-submit")
    status = form.locator(".paynb-status")
    expect(submit).to_be_visible()
    expect(submit).to_be_disabled()
    expect(status).to_be_visible()
    expect(status).to_contain_text("Missing: First name, Last name")
    text = notebook.notebook_text()
    for problem in ("Error displaying widget", "Failed to load model class",
                    "Traceback (most recent call last)"):
        assert problem not in text, f"{problem!r} in the notebook:\n{notebook.log_tail()}"
    assert "SANDBOX" in text  # connect() found the test's own sandbox, and said so

    # Typing reaches the kernel: the filled fields leave the status line's missing list.
    form.locator(".paynb-field-firstSignerFirstName input").fill("Ada")
    form.locator(".paynb-field-firstSignerLastName input").fill("Lovelace")
    expect(status).not_to_contain_text("First name")
    expect(status).not_to_contain_text("Last name")
    expect(status).to_contain_text("Missing: State, Zip")
    expect(submit).to_be_disabled()
