"""No module of paynb reads a private name (``x._name``) of another module's object.

A module's privates are its own: ``self._x``, ``cls._x`` and ``super()._x`` are always
fine, and so is ``obj._x`` when this same module defines ``_x`` (a method, a class
attribute or ``self._x = ...`` of a class it owns: ``other._fields`` in ``__eq__``).
What is refused is reaching into an object some other module defines, such as a
resource reading ``client._journal``: resources get a
:class:`~paynb.resources._context.ResourceContext` instead, and the layers above use
public names (docs/reference/internals.md). IPython's display hooks (``_repr_html_``,
``_repr_mimebundle_``, ``_ipython_display_``) are a protocol, not privates.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import paynb

PACKAGE = Path(paynb.__file__).parent
_PROTOCOL = re.compile(r"^_(repr_\w+|ipython_\w+)_$")


def _defined_here(tree: ast.Module) -> set[str]:
    """The private names a module defines for objects: functions and methods, class
    attributes and attributes assigned on ``self``/``cls``."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {name for name in names if name.startswith("_")}


def _own(value: ast.expr) -> bool:
    if isinstance(value, ast.Name):
        return value.id in ("self", "cls")
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Name) \
        and value.func.id == "super"


def foreign_privates(source: str) -> list[str]:
    """``line: expression`` of every private name read on another module's object."""
    tree = ast.parse(source)
    mine = _defined_here(tree)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Attribute) or not node.attr.startswith("_"):
            continue
        name = node.attr
        if (name.startswith("__") and name.endswith("__")) or _PROTOCOL.match(name):
            continue
        if _own(node.value) or name in mine:
            continue
        found.append((node.lineno, ast.unparse(node)))
    return [f"{line}: {text}" for line, text in sorted(found)]


def test_the_checker_tells_own_from_foreign() -> None:
    source = (
        "class A:\n"
        "    def __init__(self):\n"
        "        self._x = 1\n"
        "    def _own(self):\n"
        "        return self._x + super()._y\n"
        "    def __eq__(self, other):\n"
        "        return self._x == other._x\n"
        "def f(client, resource):\n"
        "    client._journal.close()\n"
        "    resource.context._marks\n"
        "    return resource._repr_html_()\n")
    assert foreign_privates(source) == ["9: client._journal", "10: resource.context._marks"]


def test_no_module_reads_another_modules_privates() -> None:
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for found in foreign_privates(path.read_text(encoding="utf-8")):
            offences.append(f"{path.relative_to(PACKAGE.parent)}:{found}")
    assert offences == []
