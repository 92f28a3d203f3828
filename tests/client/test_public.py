"""The public surface: exact names, lazy import, and the signatures DESIGN section 2 fixes."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

import paynb


def test_paynb_all_is_exactly_the_public_names():
    assert sorted(paynb.__all__) == sorted([
        "Client", "Credentials", "ExportFile", "RouteCheck", "__version__", "calendar",
        "compliance", "connect", "errors", "forms", "models", "monitor", "plots", "sandbox",
        "match", "MatchResult", "History", "PaynbError", "PaynbWarning", "DualControl",
        "Approval", "Transport"])


def test_each_public_name_is_the_object_of_its_home_module():
    import importlib

    homes = {"Client": "paynb.client", "connect": "paynb.client",
             "Credentials": "paynb.config", "ExportFile": "paynb.results",
             "RouteCheck": "paynb.results", "match": "paynb.matching",
             "MatchResult": "paynb.matching", "History": "paynb.history",
             "PaynbError": "paynb.errors", "PaynbWarning": "paynb.errors",
             # Dual control's names are the journal's own.
             "DualControl": "paynb.journal", "Approval": "paynb.journal",
             "Transport": "paynb.transport"}
    for name, home in homes.items():
        assert getattr(paynb, name) is getattr(importlib.import_module(home), name), name
    for name in ("calendar", "compliance", "errors", "forms", "models", "monitor", "plots",
                 "sandbox"):
        assert getattr(paynb, name) is importlib.import_module(f"paynb.{name}"), name
    assert set(homes) | {"calendar", "compliance", "errors", "forms", "models", "monitor",
                         "plots", "sandbox", "__version__"} == set(paynb.__all__)
    # One category silences every paynb warning (the guards' included); one catches
    # every paynb error.
    assert issubclass(paynb.errors.GuardWarning, paynb.PaynbWarning)
    assert all(issubclass(getattr(paynb.errors, name), paynb.PaynbError)
               for name in paynb.errors.__all__ if name.endswith("Error"))
    with pytest.raises(AttributeError, match="no attribute 'Resource'"):
        paynb.Resource  # noqa: B018


def test_import_paynb_does_not_import_pandas():
    code = "import sys, paynb; print('pandas' in sys.modules, 'requests' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "False"]


def _signature(func) -> str:
    return str(inspect.signature(func)).replace("'", "")


def test_signatures_of_design_section_2():
    from paynb.client import Client

    client_sig = inspect.signature(Client)
    assert list(client_sig.parameters)[:5] == [
        "base_url", "auth_url", "company_code", "credentials", "session"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in client_sig.parameters.values())
    assert client_sig.parameters["session"].default is None
    for name, default in (("page_size", 200), ("max_workers", 8), ("mask", True)):
        assert client_sig.parameters[name].default == default
        assert client_sig.parameters[name].kind is inspect.Parameter.KEYWORD_ONLY
    from paynb.resources import (
        AchResource,
        InstantResource,
        NocResource,
        RccResource,
        RtpResource,
    )

    for items in (AchResource, RccResource):
        assert _signature(items.list).startswith(
            "(self, status: str | Iterable[str] | None = None, returned_from: Any = None, "
            "returned_to: Any = None, *, received_from: Any = None, received_to: Any = None, "
            "settled_from: Any = None, settled_to: Any = None, page: int | None = None, "
            "page_size: int | None = None, max_items: int | None = None, "
            "progress: bool | None = None)")
        params = inspect.signature(items.submit).parameters
        assert params["allow_duplicate"].default is False and params["validate"].default is True
        assert inspect.signature(items.submit_many).parameters["commit_valid"].default is True
        assert inspect.signature(items.export).parameters["filetype"].default == "csv"
        changes = inspect.signature(items.changes).parameters
        assert (changes["since"].default, changes["until"].default) == ("last", None)
        assert changes["progress"].default is None
        assert changes["progress"].kind is inspect.Parameter.KEYWORD_ONLY
        for name in ("get", "void", "void_many", "void_references"):
            assert callable(getattr(items, name))
    instant = inspect.signature(InstantResource.check_route).parameters
    assert list(instant) == ["self", "card_number", "token_id", "sub_client_id"]
    assert instant["token_id"].kind is inspect.Parameter.KEYWORD_ONLY
    assert list(inspect.signature(RtpResource.check_route).parameters) == ["self",
                                                                           "routing_number"]
    for payments in (InstantResource, RtpResource):
        for name in ("send", "list", "get", "export"):
            assert callable(getattr(payments, name))
    assert callable(NocResource.list) and callable(NocResource.export)
    # Every list and export takes the same filters (issue 13), the exports as keywords.
    filters = ["status", *(f"{stem}_{end}" for stem in ("returned", "received", "settled")
                           for end in ("from", "to"))]
    for resource in (AchResource, RccResource, InstantResource, RtpResource, NocResource):
        assert list(inspect.signature(resource.list).parameters)[1:8] == filters
        export = inspect.signature(resource.export).parameters
        assert list(export)[1:] == ["filetype", *filters]
        assert all(export[name].kind is inspect.Parameter.KEYWORD_ONLY for name in filters)
    assert callable(Client.journal) and callable(Client.reconcile)
    assert callable(Client.from_env)


def test_signatures_of_the_local_history():
    from paynb import Client, History

    sync = inspect.signature(Client.sync).parameters
    assert list(sync)[1:] == ["kinds", "since", "rebuild", "progress", "path", "mask",
                              "storage_options"]
    assert all(sync[name].kind is inspect.Parameter.KEYWORD_ONLY
               for name in ("path", "mask", "storage_options"))
    opened = inspect.signature(History).parameters
    assert list(opened) == ["path", "company", "mask", "storage_options"]
    for reader in (History.ach, History.rcc, History.instant, History.rtp, History.nocs,
                   History.events, History.sql, History.info):
        parameters = inspect.signature(reader).parameters
        assert parameters["as_of"].kind is inspect.Parameter.KEYWORD_ONLY, reader
        assert parameters["as_of"].default is None, reader
    assert list(inspect.signature(History.maintain).parameters) == ["self", "retention_days"]
