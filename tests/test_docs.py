"""The documentation site builds in strict mode, offline, and covers every public name."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from _notebooks import run_notebooks

ROOT = Path(__file__).resolve().parent.parent

# The session's run of the notebooks, then the build: minutes on a busy machine.
pytestmark = pytest.mark.timeout(900)

_ITEMS = ["list", "get", "changes", "submit", "submit_many", "check_many", "void", "void_many",
          "void_references", "export"]
_PAYMENTS = ["check_route", "send", "list", "get", "export"]
#: The reference page of every public module, the name its members are documented under
#: (a module re-exported by ``paynb`` is documented there, as ``paynb.Client``...), and
#: the names it must document (None: its ``__all__``).
REFERENCE = {
    "paynb": ("reference/paynb", "paynb", [
        "connect", "Client", "Client.from_env", "Client.journal", "Client.reconcile",
        "Client.approvals", "Client.approve", "Client.reject", "DualControl", "Approval",
        "RouteCheck", "ExportFile", "ExportFile.save", "Client.transport", "Transport",
        "Transport.request", "Transport.json",
    ]),
    "paynb.client": ("reference/paynb", "paynb", None),
    "paynb.results": ("reference/paynb", "paynb", None),
    "paynb.resources": ("reference/paynb", "paynb.resources", [
        *(f"AchResource.{name}" for name in _ITEMS),
        *(f"RccResource.{name}" for name in _ITEMS),
        *(f"InstantResource.{name}" for name in _PAYMENTS),
        *(f"RtpResource.{name}" for name in _PAYMENTS),
        "NocResource.list", "NocResource.export", "NocResource.obligations", "NocResource.apply",
    ]),
    "paynb.config": ("reference/config", "paynb.config", None),
    "paynb.errors": ("reference/errors", "paynb.errors", None),
    "paynb.models": ("reference/models", "paynb.models", None),
    "paynb.validation": ("reference/validation", "paynb.validation", None),
    "paynb.plots": ("reference/plots", "paynb.plots", None),
    "paynb.forms": ("reference/forms", "paynb.forms", None),
    "paynb.sandbox": ("reference/sandbox", "paynb.sandbox", None),
    "paynb.frames": ("reference/frames", "paynb.frames", None),
    "paynb.accessor": ("reference/frames", "paynb.accessor", None),
    "paynb.codes": ("reference/codes", "paynb.codes", None),
    "paynb.calendar": ("reference/calendar", "paynb.calendar", None),
    "paynb.journal": ("reference/journal", "paynb.journal", None),
    "paynb.history": ("reference/history", "paynb.history", None),
    "paynb.auth": ("reference/internals", "paynb.auth", None),
    "paynb.transport": ("reference/internals", "paynb.transport", None),
    "paynb.paging": ("reference/internals", "paynb.paging", None),
    "paynb.cli": ("reference/internals", "paynb.cli", None),
    "paynb.reconcile": ("reference/internals", "paynb.reconcile", None),
    "paynb.guards": ("reference/internals", "paynb.guards", None),
    "paynb.nacha": ("reference/internals", "paynb.nacha", None),
    "paynb.compliance": ("reference/compliance", "paynb.compliance", None),
    "paynb.matching": ("reference/matching", "paynb.matching", None),
    "paynb.monitor": ("reference/monitor", "paynb.monitor", None),
}
#: What every form has from its (private) base class, documented on each form.
FORM_MEMBERS = ["result", "widget", "status_text", "client"]


def public_modules() -> list[str]:
    """``paynb`` and every module or subpackage of it whose name has no leading underscore."""
    package = ROOT / "paynb"
    found = ["paynb"]
    for path in sorted(package.iterdir()):
        public = not path.name.startswith(("_", "."))
        if public and (path.suffix == ".py" or (path / "__init__.py").is_file()):
            found.append(f"paynb.{path.stem}")
    return found


PAGES = ["getting-started", "real-service", "client", "forms", "plots", "sandbox", "journal",
         "safety", "compliance", "history", "monitor"]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory, notebooks_run: Any) -> Path:
    """The site built as ``make docs`` builds it, from the session's run of the notebooks
    (tests/_notebooks.py; ``PAYNB_DOCS_NOTEBOOKS``) rather than a run of its own."""
    out = tmp_path_factory.mktemp("site")
    executed = tmp_path_factory.mktemp("notebooks-for-docs")
    run_notebooks.write_for_docs(notebooks_run.executed, executed)
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", PAYNB_DOCS_NOTEBOOKS=str(executed),
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
    # mkdocs' own warnings ("WARNING -  ..."), not what a notebook's kernel prints to
    # stderr as it shuts down (ipykernel's "ERROR:tornado.general:..." races): a cell
    # that fails already fails the build.
    assert not re.search(r"^(WARNING|ERROR)\s+-  ", log, re.M), log[-6000:]
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


def test_every_public_module_has_a_reference_page_in_the_nav():
    """Without a page (and an entry here), a new module would pass unnoticed."""
    assert sorted(REFERENCE) == public_modules()
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page, _prefix, _names in REFERENCE.values():
        assert (ROOT / "docs" / f"{page}.md").is_file(), page
        assert f" {page}.md" in nav, f"{page}.md is not in the nav of mkdocs.yml"


@pytest.mark.parametrize("module", list(REFERENCE))
def test_reference_covers_every_public_name(site: Path, module: str):
    page, prefix, names = REFERENCE[module]
    html = _page(site, page)
    for name in names or importlib.import_module(module).__all__:
        assert f'id="{prefix}.{name}"' in html, f"{module}.{name} is not documented ({page})"


def test_each_form_shows_what_it_inherits(site: Path):
    forms = importlib.import_module("paynb.forms")
    base = importlib.import_module("paynb.forms._base").Form
    html = _page(site, "reference/forms")
    classes = [name for name in forms.__all__
               if isinstance(getattr(forms, name), type) and issubclass(getattr(forms, name), base)]
    assert {"AchForm", "BulkSubmitForm", "VoidForm", "StatusExplorer"} <= set(classes)
    for form in classes:
        for member in FORM_MEMBERS:
            assert f'id="paynb.forms.{form}.{member}"' in html, f"{form}.{member}"
    for form in ("AchForm", "RccForm", "InstantCardForm", "RtpForm"):
        assert f'id="paynb.forms.{form}.reset"' in html, f"{form}.reset"


def test_docstring_roles_become_links(site: Path):
    html = _page(site, "reference/paynb")
    assert not re.search(r":(class|meth|func|mod|exc):<code>", html)
    assert 'href="../errors/#paynb.errors.ValidationError"' in html


def test_notebooks_are_rendered_executed(site: Path):
    quickstart = _page(site, "notebooks/01_quickstart")
    assert "connect" in quickstart
    assert "<img" in quickstart, "the executed quickstart shows its chart"
    for name in ["02_returns_and_polling", "03_submit_and_void", "04_instant_payments",
                 "05_nocs_and_exports", "06_compliance", "08_history"]:
        assert "jp-OutputArea" in _page(site, f"notebooks/{name}"), name


def test_no_page_loads_anything_from_the_internet(site: Path):
    loaded = re.compile(r'<(?:script|link|img)\b[^>]*(?:src|href)="(https?:)?//', re.I)
    for html in site.rglob("*.html"):
        assert not loaded.search(html.read_text(encoding="utf-8")), html
