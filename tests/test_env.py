"""Every PAYNB_* variable read anywhere in the project is registered in paynb._env (issue 32.5)."""

from __future__ import annotations

import re
from pathlib import Path

from paynb import _env

ROOT = Path(__file__).resolve().parent.parent
_NAME = re.compile(r"\bPAYNB_[A-Z][A-Z0-9_]*[A-Z0-9]\b")
#: Names the tests set on purpose to see them refused (misspellings of known ones).
_DELIBERATELY_UNKNOWN = {"PAYNB_BASEURL", "PAYNB_PASSWROD", "PAYNB_ZZZ", "PAYNB_JOURNL"}
_WHERE = ["paynb", "scripts", "benchmarks", "tests", "notebooks", "Makefile", ".ci",
          "README.md", "docs"]


def _files() -> list[Path]:
    found: list[Path] = []
    for where in _WHERE:
        path = ROOT / where
        if path.is_file():
            found.append(path)
        elif path.is_dir():
            found += [p for p in path.rglob("*") if p.is_file() and p.suffix in (
                ".py", ".sh", ".md", ".ipynb", ".toml", "") and "__pycache__" not in p.parts]
    return found


def test_every_paynb_variable_in_the_project_is_registered() -> None:
    used: dict[str, set[str]] = {}
    for path in _files():
        for name in _NAME.findall(path.read_text(errors="replace")):
            used.setdefault(name, set()).add(str(path.relative_to(ROOT)))
    missing = {name: sorted(where) for name, where in used.items()
               if name not in _env.VARIABLES and name not in _DELIBERATELY_UNKNOWN}
    assert not missing, f"register these in paynb/_env.py (VARIABLES): {missing}"
    # And the registry holds nothing that nothing reads.
    assert set(_env.VARIABLES) <= set(used)


def test_the_docs_list_every_variable() -> None:
    text = (ROOT / "docs" / "real-service.md").read_text()
    assert [name for name in _env.VARIABLES if f"`{name}`" not in text] == []


def test_unknown_names_compare_the_prefix_in_any_case() -> None:
    assert _env.unknown_names({"paynb_journal": "x", "PAYNB_JOURNAL": "y", "HOME": "/"}) == [
        "paynb_journal"]
    assert _env.closest("PAYNB_BASEURL") == "PAYNB_BASE_URL"
    assert _env.closest("PAYNB_ZZZ") is None
