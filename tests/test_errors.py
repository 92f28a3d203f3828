"""Every exception and warning paynb defines lives in paynb/errors.py, and the tree its
docstring draws is the one the classes form."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import paynb
from paynb import errors


def test_no_exception_or_warning_class_is_defined_outside_errors_py():
    outside = []
    for module in pkgutil.walk_packages(paynb.__path__, "paynb."):
        loaded = importlib.import_module(module.name)
        outside += [f"{module.name}.{name}" for name, cls in vars(loaded).items()
                    if inspect.isclass(cls) and issubclass(cls, BaseException)
                    and cls.__module__ == module.name and module.name != "paynb.errors"]
    # The sandbox's server code turns its own into HTTP problem details (a user never
    # sees them raised).
    assert sorted(outside) == [
        "paynb.sandbox.routers._common.Problem",
        "paynb.sandbox.store.VoidError",
    ]


def _tree(text: str) -> dict[str, str]:
    """``{class: parent}`` as a box-drawing tree of the docstring says."""
    parents: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    for line in text.splitlines():
        match = re.match(r"^(\s*)((?:[│ ]   |    )*)(?:[├└]── )?([A-Z]\w+)(?:\s|$)", line)
        if match is None or not line.strip() or line.strip().startswith(("Warnings", "No ")):
            continue
        name = match.group(3)
        depth = len(line) - len(line.lstrip(" │├└─"))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        if stack:
            parents[name] = stack[-1][1]
        stack.append((depth, name))
    return parents


@pytest.mark.parametrize("root", ["PaynbError", "PaynbWarning"])
def test_the_docstring_tree_is_the_class_tree(root):
    assert errors.__doc__ is not None
    drawn = _tree(errors.__doc__)
    defined = {name: cls for name, cls in vars(errors).items()
               if inspect.isclass(cls) and issubclass(cls, getattr(errors, root))
               and cls.__module__ == "paynb.errors" and not name.startswith("_")}
    drawn_here = {name for name in drawn if name in defined and name != root}
    assert drawn_here == set(defined) - {root}
    for name in drawn_here:
        parent = getattr(errors, drawn[name])
        # Its first base in paynb's tree is the parent drawn.
        first = next(base for base in defined[name].__mro__[1:]
                     if base.__module__ == "paynb.errors" and not base.__name__.startswith("_"))
        assert first is parent, name
    assert set(defined) <= set(errors.__all__)


def test_for_argument_names_the_argument():
    error = errors.ValidationError.for_argument("page_size", "must be a whole number")
    assert error.errors == {"page_size": ["must be a whole number"]}
    assert str(error) == "page_size must be a whole number"
    assert isinstance(error, ValueError)


def test_moved_classes_are_still_where_users_found_them():
    from paynb import compliance, journal

    assert compliance.GuardWarning is errors.GuardWarning
    assert compliance.ThresholdExceeded is errors.ThresholdExceeded
    assert journal.JournalError is errors.JournalError
    assert issubclass(errors.GuardWarning, errors.PaynbWarning)
