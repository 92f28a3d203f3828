"""The client is the composition root: what it wires below it never holds the client."""

from __future__ import annotations

import inspect
import types
from typing import Any

from paynb.client import Client
from paynb.guards import GuardService
from paynb.history import HistoryPlace
from paynb.resources import ResourceContext


def _reaches(start: Any, target: Any) -> list[str]:
    """The paths (attribute by attribute) from ``start`` to ``target`` through paynb's own
    objects (anything defined in a ``paynb`` module, and the containers they hold)."""
    found: list[str] = []
    seen: set[int] = set()
    todo: list[tuple[Any, str]] = [(start, type(start).__name__)]
    while todo:
        obj, path = todo.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        if obj is target:
            found.append(path)
            continue
        if isinstance(obj, types.MethodType):
            todo.append((obj.__self__, f"{path}.__self__"))
            continue
        if isinstance(obj, dict):
            todo += [(value, f"{path}[{key!r}]") for key, value in obj.items()]
            continue
        if isinstance(obj, list | tuple | set | frozenset):
            todo += [(value, f"{path}[]") for value in obj]
            continue
        module = inspect.getmodule(type(obj))
        if module is None or not module.__name__.startswith("paynb"):
            continue
        attributes = getattr(obj, "__dict__", {})
        todo += [(value, f"{path}.{name}") for name, value in attributes.items()]
    return found


def test_no_resource_holds_the_client(stub_client: Client) -> None:
    for name in ("ach", "rcc", "instant", "rtp", "nocs"):
        resource = getattr(stub_client, name)
        assert not hasattr(resource, "client")
        assert resource.context is stub_client.context
        # Through its context, the guards, the records they judge by and the history
        # store they read, a resource reaches everything it works with, never the client.
        assert _reaches(resource, stub_client) == [], name


def test_neither_the_guards_nor_the_history_place_hold_the_client(stub_client: Client
                                                                   ) -> None:
    guards = stub_client.context.guard
    assert isinstance(guards, GuardService)
    assert _reaches(guards, stub_client) == []
    place = stub_client._history
    assert isinstance(place, HistoryPlace)
    assert _reaches(place, stub_client) == []
    # The guards read the client's store through its place (a bound method of the place).
    assert guards._store.__self__ is place


def test_the_context_is_the_one_the_client_made(stub_client: Client) -> None:
    context = stub_client.context
    assert isinstance(context, ResourceContext)
    assert context.clock.sandbox is False
    assert stub_client.ach.seen is context.seen.ach
    assert stub_client.nocs.seen is context.seen.noc
    assert stub_client.rcc.seen is None
    assert repr(stub_client.ach) == "<AchResource of company DEMO1>"
