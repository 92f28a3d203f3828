"""`make demo` installs the demo's needs only (the `demo` extra); `make test` the dev extra."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]


def _names(requirements: list[str]) -> set[str]:
    return {re.split(r"[<>=!~ ;]", requirement, maxsplit=1)[0] for requirement in requirements}


def test_the_demo_extra_is_the_sandbox_jupyterlab_history_and_monitor():
    demo = _names(EXTRAS["demo"])
    # history (deltalake, DuckDB) because notebook 08 syncs and queries after `make demo`,
    # monitor (papermill, apprise...) because notebook 10 runs the morning run
    assert demo == {"paynb[sandbox]", "paynb[history]", "paynb[monitor]", "jupyterlab",
                    "nbclient"}
    # none of the development toolchain (browser driver, fuzzers, docs builder, test runner)
    assert not demo & {"playwright", "schemathesis", "hypothesis", "mkdocs-material", "pytest",
                       "ruff"}
    # the dev extra holds everything the demo needs, so `make test` serves `make demo` too
    assert "paynb[demo]" in _names(EXTRAS["dev"])


def _rule(makefile: str, target: str) -> str:
    """The rule of ``target``: its line of prerequisites and its recipe."""
    match = re.search(rf"^{re.escape(target)}:[^\n]*(?:\n\t[^\n]*)*", makefile, re.M)
    assert match, target
    return match.group()


def _prerequisites(makefile: str, target: str) -> list[str]:
    return _rule(makefile, target).split("\n", 1)[0].split(":", 1)[1].split()


def test_make_demo_installs_the_demo_extra_and_make_test_the_dev_extra():
    makefile = (ROOT / "Makefile").read_text()
    assert _prerequisites(makefile, "demo") == ["$(DEMO_STAMP)"]
    assert "-e '.[demo]'" in _rule(makefile, "$(DEMO_STAMP)")
    dev = _rule(makefile, "$(STAMP)")
    assert "-e '.[dev]'" in dev and "$(DEMO_STAMP)" in dev  # a dev install is a demo one too
    assert _prerequisites(makefile, "test") == ["lint"]
    assert _prerequisites(makefile, "lint") == ["$(STAMP)"]


def test_every_dependency_has_the_lower_bound_make_test_oldest_installs():
    # Issue 47: `make test-oldest` installs each dependency at its lower bound (uv's
    # lowest-direct resolution); a dependency without one would be tested at a version
    # nobody chose, and an analyst's environment could hold an older one still.
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    for requirement in [*project["dependencies"], *EXTRAS["sandbox"], *EXTRAS["history"]]:
        assert ">=" in requirement, requirement
    makefile = (ROOT / "Makefile").read_text()
    assert "--resolution lowest-direct" in makefile.split("define oldest_venv", 1)[1]
    assert "$(OLDEST_VENV),--extra sandbox)" in _rule(makefile, "$(OLDEST_STAMP)")
    assert "--extra sandbox --extra history)" in _rule(makefile, "$(HISTORY_STAMP)")
    assert _prerequisites(makefile, "test-oldest") == ["$(OLDEST_STAMP)", "$(HISTORY_STAMP)"]
    ci = (ROOT / ".ci" / "run").read_text().split()
    assert ci.index("test-oldest") > ci.index("test")  # CI runs it, after the suite


#: Modules paynb imports that a declared distribution pins exactly: pydantic holds
#: pydantic-core at one version, so a floor of ours would be a second, conflicting pin.
PINNED_BY = {"pydantic_core": "pydantic"}


def _third_party_imports() -> dict[str, set[str]]:
    """Top-level module -> the files of paynb/ importing it (inside functions too)."""
    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "paynb").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in sys.stdlib_module_names and top not in ("paynb", "__future__"):
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def _normal(name: str) -> str:
    """A distribution's name as PyPI compares names, without its extras."""
    return re.sub(r"[-_.]+", "-", name.split("[")[0]).lower()


def test_every_third_party_import_of_paynb_is_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {_normal(name) for name in _names(project["dependencies"])}
    for requirements in EXTRAS.values():
        declared |= {_normal(name) for name in _names(requirements)}
    distributions = importlib.metadata.packages_distributions()
    undeclared = {}
    for module, files in _third_party_imports().items():
        names = [PINNED_BY[module]] if module in PINNED_BY else distributions.get(module, [module])
        if not {_normal(name) for name in names} & declared:
            undeclared[module] = sorted(files)
    assert undeclared == {}


def test_openpyxl_is_for_the_tests_only():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "openpyxl" not in _names(project["dependencies"])
    assert "openpyxl" not in _third_party_imports()
    assert "openpyxl" in _names(EXTRAS["dev"])
