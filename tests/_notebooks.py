"""One run of every notebook for the session: tests/test_notebooks.py judges it and
tests/test_docs.py builds the site from it (the ``notebooks_run`` fixture of
tests/conftest.py), instead of each running the notebooks again.

The kernels reach a sandbox served for the run (never the user's demo sandbox, profile
or journal, see ``scripts/run_notebooks.py``) and no other place: any attempt to reach
the internet fails, as in the docs build.
"""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
_spec = importlib.util.spec_from_file_location("run_notebooks",
                                               ROOT / "scripts" / "run_notebooks.py")
assert _spec and _spec.loader
run_notebooks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run_notebooks)

#: Small, so the run stays fast; still enough returns and NOCs for every cell to work.
SEED_ITEMS = 1000

#: What drives a sandbox rather than uses it (the simulation calls: a forced status, a
#: NOC, the clock moved): a notebook does that only to a sandbox it serves itself.
SIMULATIONS = ("force_status", "create_noc", "advance_clock")

#: The proxies of an offline machine: loopback only.
OFFLINE = {"HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9",
           "NO_PROXY": "127.0.0.1,localhost"}


def run(workdir: Path) -> types.SimpleNamespace:
    """Every notebook run once against one fresh sandbox (a few at a time, for speed), as
    the long-running sandbox a user's environment gives (announced by PAYNB_SANDBOX_FILE),
    with the simulation calls made to it recorded; each kernel with a temporary folder
    of its own in ``workdir``."""
    simulated: list[tuple[str, tuple[Any, ...]]] = []
    with run_notebooks.served_sandbox(workdir, seed_items=SEED_ITEMS) as (sb, env):
        for name in SIMULATIONS:
            setattr(sb.store, name, _recording(getattr(sb.store, name), name, simulated))
        executed = run_notebooks.execute_many(run_notebooks.notebook_paths(),
                                              env={**env, **OFFLINE}, cwd=workdir)
    return types.SimpleNamespace(executed=executed, workdir=workdir, simulated=simulated)


def _recording(call: Any, name: str, calls: list[tuple[str, tuple[Any, ...]]]) -> Any:
    """``call``, which first notes its ``name`` and arguments in ``calls``."""
    def recorded(*args: Any, **kwargs: Any) -> Any:
        calls.append((name, args))
        return call(*args, **kwargs)

    return recorded
