"""docs/safety.md names, for each promise, the tests that prove it: those tests exist."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_REFERENCE = re.compile(r"(tests/[\w/]+\.py)?::(test_\w+)")


def _references() -> list[tuple[str, str]]:
    found = []
    for line in (ROOT / "docs" / "safety.md").read_text().splitlines():
        current = None
        for path, name in _REFERENCE.findall(line):
            current = path or current  # "::test_x" continues the file named before it
            assert current, f"a test name without its file: {line}"
            found.append((current, name))
    return found


def test_every_test_named_in_safety_md_exists() -> None:
    references = _references()
    assert len(references) >= 40
    missing = [f"{path}::{name}" for path, name in references
               if not (ROOT / path).is_file()
               or not re.search(rf"^def {name}\(", (ROOT / path).read_text(), re.MULTILINE)]
    assert not missing, "docs/safety.md names tests that do not exist:\n" + "\n".join(missing)


def test_every_reliability_test_is_named_in_safety_md() -> None:
    named = {name for _, name in _references()}
    here = Path(__file__).parent
    tests = {name for path in here.glob("test_*.py") if path.name != Path(__file__).name
             for name in re.findall(r"^def (test_\w+)\(", path.read_text(), re.MULTILINE)}
    assert not tests - named, f"not in docs/safety.md: {sorted(tests - named)}"
