"""paynb's import graph: no cycle among its modules, and few lazy imports, each saying why.

The layers themselves are import-linter's (``make lint``, ``pyproject.toml``); these tests
see what it does not: a cycle through imports inside functions and under
``TYPE_CHECKING`` (grimp's graph counts both), and imports made by name.
"""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "paynb"
#: Lazy imports of paynb's own modules allowed (issue 33: only where they keep the client
#: or ``import paynb`` light, each with its reason).
MAX_LAZY = 10


def _cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_no_import_cycle_among_paynb_modules():
    graph = grimp.build_graph("paynb", exclude_type_checking_imports=False)
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    graph = grimp.ImportGraph()
    for name in ("pkg", "pkg.a", "pkg.b", "pkg.c"):
        graph.add_module(name)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.c")
    graph.add_import(importer="pkg.c", imported="pkg.a")
    assert _cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports_paynb(node: ast.AST, package: str) -> bool:
    if isinstance(node, ast.Import):
        return any(alias.name.startswith("paynb") for alias in node.names)
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").startswith("paynb")
    return False


def _by_name(node: ast.AST) -> str | None:
    """The module a call imports by name (``importlib.import_module(...)``,
    ``OnFirstUse(...)``), as written; None for any other node."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in ("import_module", "OnFirstUse"):
        return None
    return ast.unparse(node.args[0]) if node.args else ""


def lazy_imports() -> list[tuple[str, int, str]]:
    """Each place where paynb imports one of its own modules other than at the top of a
    module: ``(module, line, what)``; a function's imports together count once."""
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        if module == "paynb._lazy":  # the helper itself, not a use of it
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = [child.lineno for child in ast.walk(node)
                         if _imports_paynb(child, module)]
                if lines:
                    found.append((module, min(lines), f"imports inside {node.name}()"))
            named = _by_name(node)
            if named is not None:
                found.append((module, node.lineno, f"imports {named} by name"))
    # A function holding an import by name is one place, not two.
    seen: set[tuple[str, int]] = set()
    places = []
    for module, line, what in sorted(found, key=lambda f: (f[0], f[1])):
        near = {(module, n) for n in range(line - 12, line + 12)}
        if "by name" in what and near & seen:
            continue
        seen.add((module, line))
        places.append((module, line, what))
    return places


def test_lazy_imports_of_paynb_modules_are_few():
    places = lazy_imports()
    assert len(places) <= MAX_LAZY, "\n".join(f"{m}:{n} {w}" for m, n, w in places)


def test_each_lazy_import_says_why():
    """A comment (or the docstring of the module's lazy helper) within the few lines
    before the import gives its reason."""
    silent = []
    for module, line, what in lazy_imports():
        path = ROOT / (module.replace(".", "/") + ".py")
        if not path.exists():
            path = ROOT / module.replace(".", "/") / "__init__.py"
        text = path.read_text(encoding="utf-8").splitlines()
        around = text[max(0, line - 8):line + 3]
        if not any("#" in row or "Lazy" in row or "lazy" in row for row in around):
            silent.append(f"{module}:{line} {what}")
    assert silent == []


def _layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"]
                    if c["type"] == "layers")
    return [{name.strip(" ()") for part in layer.split("|") for name in part.split(":")}
            for layer in contract["layers"]]


def _layer_of(module: str, layers: list[set[str]]) -> int:
    child = module.split(".")[1]
    return next(n for n, layer in enumerate(layers) if child in layer)


def test_modules_imported_on_first_use_sit_below_their_users():
    """``OnFirstUse("paynb.x")`` hides an import from import-linter: it must go down."""
    layers = _layers()
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "OnFirstUse":
                target = ast.literal_eval(node.args[0])
                assert _layer_of(target, layers) > _layer_of(module, layers), (module, target)


def test_the_lazy_import_finder_sees_an_import_inside_a_function():
    source = "def f():\n    from paynb import frames\n    return frames\n"
    tree = ast.parse(source)
    function = tree.body[0]
    assert isinstance(function, ast.FunctionDef)
    assert any(_imports_paynb(child, "paynb.x") for child in ast.walk(function))
    assert _by_name(ast.parse("importlib.import_module('paynb.client')").body[0].value) \
        == "'paynb.client'"


#: The longest a module of paynb may be (issue 45: a module longer than this mixed jobs).
MAX_MODULE_LINES = 600


def test_no_module_is_longer_than_its_one_job_needs():
    lengths = {str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
               for path in PACKAGE.rglob("*.py")}
    assert {path: n for path, n in lengths.items() if n > MAX_MODULE_LINES} == {}
    assert max(lengths.values()) > MAX_MODULE_LINES // 2  # (the files were read)
