"""The documentation site builds in strict mode, offline, and covers every public name."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# The build executes the five notebooks against a fresh sandbox: minutes on a busy machine.
pytestmark = pytest.mark.timeout(900)

_ITEMS = ["list", "get", "changes", "submit", "submit_many", "void", "void_many",
          "void_references", "export"]
_PAYMENTS = ["check_route", "send", "list", "get", "export"]
#: Reference page of each public module, and the names it must document (None: its __all__).
REFERENCE = {
    "paynb": ("reference/paynb", [
        "connect", "Client", "Client.from_env", "Client.journal", "Client.reconcile",
        "RouteCheck", "ExportFile", "ExportFile.save",
        *(f"resources.AchResource.{name}" for name in _ITEMS),
        *(f"resources.RccResource.{name}" for name in _ITEMS),
        *(f"resources.InstantResource.{name}" for name in _PAYMENTS),
        *(f"resources.RtpResource.{name}" for name in _PAYMENTS),
        "resources.NocResource.list", "resources.NocResource.export",
    ]),
    "paynb.config": ("reference/config", None),
    "paynb.errors": ("reference/errors", None),
    "paynb.models": ("reference/models", None),
    "paynb.validation": ("reference/validation", None),
    "paynb.plots": ("reference/plots", None),
    "paynb.forms": ("reference/forms", None),
    "paynb.sandbox": ("reference/sandbox", None),
}
PAGES = ["getting-started", "real-service", "client", "forms", "plots", "sandbox", "journal",
         "safety"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1",
               # Any attempt to reach the internet fails: the build must not need it.
               HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9",
               NO_PROXY="127.0.0.1,localhost")
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--clean",
         "-f", str(ROOT / "mkdocs.yml"), "-d", str(out)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=840,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-6000:]
    assert not re.search(r"^(WARNING|ERROR)\b", log, re.M), log[-6000:]
    return out


def _page(site: Path, name: str) -> str:
    return (site / name / "index.html").read_text(encoding="utf-8")


def test_every_page_is_built(site: Path):
    for name in PAGES:
        assert "<h1" in _page(site, name), name


def test_getting_started_gives_the_two_commands(site: Path):
    page = _page(site, "getting-started")
    text = re.sub(r"<[^>]+>", "", page)
    assert "make demo" in text and "make test" in text


@pytest.mark.parametrize("module", list(REFERENCE))
def test_reference_covers_every_public_name(site: Path, module: str):
    page, names = REFERENCE[module]
    html = _page(site, page)
    for name in names or importlib.import_module(module).__all__:
        assert f'id="{module}.{name}"' in html, f"{module}.{name} is not documented"


def test_docstring_roles_become_links(site: Path):
    html = _page(site, "reference/paynb")
    assert not re.search(r":(class|meth|func|mod|exc):<code>", html)
    assert 'href="../errors/#paynb.errors.ValidationError"' in html


def test_notebooks_are_rendered_executed(site: Path):
    quickstart = _page(site, "notebooks/01_quickstart")
    assert "connect" in quickstart
    assert "<img" in quickstart, "the executed quickstart shows its chart"
    for name in ["02_returns_and_polling", "03_submit_and_void", "04_instant_payments",
                 "05_nocs_and_exports"]:
        assert "jp-OutputArea" in _page(site, f"notebooks/{name}"), name


def test_no_page_loads_anything_from_the_internet(site: Path):
    loaded = re.compile(r'<(?:script|link|img)\b[^>]*(?:src|href)="(https?:)?//', re.I)
    for html in site.rglob("*.html"):
        assert not loaded.search(html.read_text(encoding="utf-8")), html
