"""On a failing browser test, keep what the page showed: a screenshot and the server log."""

from __future__ import annotations

import tempfile
from pathlib import Path

import labdriver
import pytest


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    if report.when not in ("setup", "call") or not report.failed:
        return report
    labs = [v for v in getattr(item, "funcargs", {}).values() if isinstance(v, labdriver.Lab)]
    if labs:
        lab = labs[0]
        folder = Path(tempfile.gettempdir()) / "paynb-browser-failures"
        folder.mkdir(exist_ok=True)
        shot = folder / f"{item.name}.png"
        try:
            lab.page.screenshot(path=str(shot), full_page=True)
            where = f"screenshot of the page: {shot}"
        except Exception as exc:  # the page may be gone; the log still helps
            where = f"no screenshot ({type(exc).__name__})"
        report.sections.append(("JupyterLab", f"{where}\nserver log:\n{lab.log_tail()}"))
    return report
