"""Fixtures shared by every test folder: one served sandbox for the whole session.

``--moment NAME`` (or ``PAYNB_TEST_MOMENT=NAME``) runs the tests with the wall clock moved
to one of tests/_moments.py's moments (or to an ISO 8601 time), ticking on from there, for
the whole session: the sandboxes the fixtures serve are seeded around that day.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import _moments
import pytest
import time_machine

from paynb.client import Client
from paynb.sandbox import Sandbox, serve

#: ACH items of the shared sandbox (with RCC, instant and RTP in proportion).
SEED_ITEMS = 2000


#: Every variable through which paynb finds settings, credentials or the demo sandbox.
_SETTINGS_VARIABLES = ("PAYNB_BASE_URL", "PAYNB_AUTH_URL", "PAYNB_COMPANY_CODE", "PAYNB_CLIENT_ID",
                       "PAYNB_CLIENT_SECRET", "PAYNB_USERNAME", "PAYNB_PASSWORD", "PAYNB_PROFILE")


#: The guards' one notice for a client that has listed nothing: it cannot judge NOCs,
#: returns and reinitiations yet. Tests about the guards assert it (tests/compliance);
#: tests about something else carry the ``guards_unchecked`` mark and ignore exactly it.
_GUARDS_UNCHECKED = "ignore:cannot check NOCs, returns and reinitiations:paynb.errors.GuardWarning"


def pytest_addoption(parser: pytest.Parser) -> None:
    """``--moment``: the whole session at another time (see the module's docstring)."""
    parser.addoption(
        "--moment", default=os.environ.get("PAYNB_TEST_MOMENT") or None,
        help="run with the wall clock moved (ticking) to a moment of tests/_moments.py "
             f"({', '.join(_moments.MOMENTS)}) or an ISO 8601 time; default: "
             "$PAYNB_TEST_MOMENT, else now")


def pytest_configure(config: pytest.Config) -> None:
    """Move the wall clock before any fixture starts a sandbox, if ``--moment`` says so."""
    name = config.getoption("moment")
    if name:
        traveller = time_machine.travel(_moments.moment(name), tick=True)
        traveller.start()
        config.add_cleanup(traveller.stop)


def pytest_report_header(config: pytest.Config) -> str | None:
    """Say which moment the session runs at, so that a failure is read with its day."""
    name = config.getoption("moment")
    return f"paynb: the wall clock moved to {_moments.moment(name).isoformat()}" if name else None


#: Test files (or groups) that take a minute or more, started first when the suite runs
#: in parallel, so that none of them is left alone at the end (measured with
#: ``--durations``; an entry out of date costs time, never a result).
_SLOW_FIRST = ("notebooks", "browser",
               "tests/reliability/test_api_fuzz.py", "tests/reliability/test_fault_runs.py",
               "tests/test_benchmarks_smoke.py")


#: Files whose tests share a session fixture (``notebooks_run``): in one worker.
_TOGETHER = {"tests/test_docs.py": "notebooks", "tests/test_notebooks.py": "notebooks"}


def _group(nodeid: str) -> str:
    """Where a test runs in ``pytest -n N --dist loadgroup`` (``make test``): with the
    tests of its file (a file's module and class fixtures are made once, in one worker),
    the docs and notebook tests together (they share a run of the notebooks), and the
    browser tests all in one worker (one JupyterLab and Chromium at a time)."""
    path = nodeid.split("::", 1)[0]
    return "browser" if path.startswith("tests/browser/") else _TOGETHER.get(path, path)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup`` by :func:`_group`, in the order the workers collected (slow
    files first). Not by ``xdist_group`` marks: pytest-xdist 3.8 groups them by rewriting
    a test's ``_nodeid``, which pytest 9.2's nodeid no longer reads."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class Grouped(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return _group(nodeid)

    config.option.loadscopereorder = False
    return Grouped(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Turn the ``guards_unchecked`` mark into its one warning filter; in a worker of
    ``pytest -n N`` put the slow files first (:data:`_SLOW_FIRST`), each file's order kept."""
    for item in items:
        if item.get_closest_marker("guards_unchecked"):
            item.add_marker(pytest.mark.filterwarnings(_GUARDS_UNCHECKED))
    if hasattr(config, "workerinput"):
        rank = {group: position for position, group in enumerate(_SLOW_FIRST)}
        items.sort(key=lambda item: rank.get(_group(item.nodeid), len(rank)))


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test reads or writes the user's real journal, profiles, credentials, demo sandbox
    or data folder."""
    monkeypatch.setenv("PAYNB_JOURNAL", str(tmp_path / "default-journal.sqlite3"))
    monkeypatch.setenv("PAYNB_CONFIG", str(tmp_path / "no-config.toml"))
    monkeypatch.setenv("PAYNB_SANDBOX_FILE", str(tmp_path / "sandbox.json"))
    monkeypatch.setenv("PAYNB_SANDBOX_DB", str(tmp_path / "sandbox.sqlite3"))
    # The user data folder (the history stores' account-key secrets, the default stores).
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    for name in _SETTINGS_VARIABLES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def sandbox() -> Iterator[Sandbox]:
    """A sandbox served on 127.0.0.1 for the whole session, in memory, seed 1.

    Shared by every test: a test that submits or voids should use reference
    numbers of its own, and a test that changes the clock or faults should
    start its own with :func:`paynb.sandbox.serve`.
    """
    with serve(port=0, seed_items=SEED_ITEMS, seed=1) as sb:
        yield sb


@pytest.fixture(scope="module")
def client(sandbox: Sandbox) -> Iterator[Client]:
    """A client of the shared sandbox without a journal, for tests that read (folders with
    other needs, such as tests/forms and tests/client, define their own)."""
    with sandbox.connect(journal=None) as opened:
        yield opened


@pytest.fixture(scope="session")
def postgres() -> Iterator[Any]:
    """A PostgreSQL server of the session's own (tests/_postgres.py): ``.fresh()`` gives the
    address of a new empty schema, one journal's own. Where none can start here, the
    tests that need it skip, saying why."""
    import _postgres

    reason = _postgres.why_not()
    if reason is not None:
        pytest.skip(f"no PostgreSQL server for the team journal tests: {reason}")
    with _postgres.start() as server:
        yield server


@pytest.fixture(scope="session")
def notebooks_run(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """Every notebook run once against a fresh sandbox (tests/_notebooks.py): judged by
    tests/test_notebooks.py, rendered by tests/test_docs.py's build of the site."""
    import _notebooks

    return _notebooks.run(tmp_path_factory.mktemp("notebooks"))


@pytest.fixture(params=["sqlite", "postgresql"])
def journal_address(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Where a fresh journal lives, once on each database: an SQLite file, and an empty
    schema of the tests' PostgreSQL server."""
    if request.param == "sqlite":
        return str(tmp_path / "journal.sqlite3")
    return str(request.getfixturevalue("postgres").fresh())
