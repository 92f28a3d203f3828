"""Execute the notebooks in ``notebooks/`` against a fresh sandbox of their own.

Used by ``tests/test_notebooks.py`` (every notebook must run top to bottom), by the
documentation build (``scripts/docs_hooks.py`` renders the executed copies) and by hand::

    .venv/bin/python scripts/run_notebooks.py --out /tmp/executed [--seed-items 2000] [01 03]

The notebooks call ``paynb.connect()`` and nothing else to find the service. Here that
must reach a sandbox started for this run, never the user's own demo sandbox, profile or
journal: the kernels get an environment whose ``PAYNB_*`` variables point at the fresh
sandbox, whose configuration file does not exist (no profile applies) and whose journal
is a file in a temporary directory.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import json
import os
import re
import sys
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

#: Seeded items of the sandbox a run gets: enough for every chart to show something,
#: small enough to seed in a second or two.
DEFAULT_SEED_ITEMS = 2000

#: Variables of the caller that would send the kernels elsewhere than the fresh sandbox.
_FOREIGN = ("PAYNB_BASE_URL", "PAYNB_AUTH_URL", "PAYNB_COMPANY_CODE", "PAYNB_CLIENT_ID",
            "PAYNB_CLIENT_SECRET", "PAYNB_USERNAME", "PAYNB_PASSWORD", "PAYNB_PROFILE")


def notebook_paths(names: Sequence[str] = ()) -> list[Path]:
    """The notebooks in order; ``names`` keeps those whose file name contains one of them."""
    paths = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    if names:
        paths = [p for p in paths if any(name in p.name for name in names)]
    return paths


@contextlib.contextmanager
def fresh_sandbox(workdir: Path, *,
                  seed_items: int = DEFAULT_SEED_ITEMS) -> Iterator[dict[str, str]]:
    """:func:`served_sandbox`'s environment alone."""
    with served_sandbox(workdir, seed_items=seed_items) as (_, env):
        yield env


@contextlib.contextmanager
def served_sandbox(workdir: Path, *, seed_items: int = DEFAULT_SEED_ITEMS
                   ) -> Iterator[tuple[Any, dict[str, str]]]:
    """Serve a sandbox of its own; yield it and the environment in which
    ``paynb.connect()`` finds it.

    The sandbox is announced in a discovery file of its own (``PAYNB_SANDBOX_FILE``), so
    ``paynb.connect()`` in a kernel takes exactly the path a new user's takes: no profile,
    no ``PAYNB_*`` settings, so it reuses the announced sandbox and says it is the sandbox.
    ``workdir`` receives the discovery file, the (absent) configuration file, the journals
    and the database a kernel would create should it not find the sandbox.
    """
    from unittest import mock

    from paynb import sandbox
    from paynb.sandbox.server import announce

    env = {name: value for name, value in os.environ.items() if name not in _FOREIGN}
    env.update({
        "PAYNB_SANDBOX_FILE": str(workdir / "sandbox.json"),
        "PAYNB_SANDBOX_DB": str(workdir / "sandbox.sqlite3"),
        "PAYNB_CONFIG": str(workdir / "no-config.toml"),
        "PAYNB_JOURNAL": str(workdir / "journal.sqlite3"),
        # The user data folder: default history stores and their account-key secrets.
        "XDG_DATA_HOME": str(workdir / "data"),
    })
    with sandbox.serve(port=0, seed_items=seed_items) as sb:
        with mock.patch.dict(os.environ, {"PAYNB_SANDBOX_FILE": env["PAYNB_SANDBOX_FILE"]}):
            announce(sb)
        yield sb, env


def temp_folder(path: Path, cwd: Path) -> Path:
    """The temporary folder (``TMPDIR``) of the kernel that runs notebook ``path`` in
    ``cwd``: each notebook its own, so that what one leaves behind is seen."""
    return cwd / f"{path.stem}.tmp"


def execute(path: Path, *, env: dict[str, str], cwd: Path,
            timeout: int = 180) -> nbformat.NotebookNode:
    """Run one notebook top to bottom in a fresh kernel; raise on the first failing cell.

    The kernel is the ``python3`` kernel of the running interpreter (the venv's), started
    with ``env`` and working in ``cwd`` (files the notebook writes land there). The
    notebook comes back as JupyterLab saves it: with the state of every widget the
    kernel made (shown or not), which :func:`size_problem` judges.
    """
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(cwd)}},
        allow_errors=False,
    )
    temp = temp_folder(path, cwd)
    temp.mkdir(parents=True, exist_ok=True)
    client.execute(env={**env, "PAYNB_JOURNAL": str(cwd / f"{path.stem}.journal.sqlite3"),
                        "TMPDIR": str(temp)})
    return notebook


_WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
_WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
_MODEL_REFERENCE = re.compile(r"IPY_MODEL_([0-9a-f]+)")


def drop_unseen_widgets(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Keep the saved state of the widgets an output shows (and of what they hold), drop
    the rest: nbclient saves every widget a kernel ever made, including forms that a cell
    built only to read their status line, which no reader of the documentation can see.
    (A notebook saved in JupyterLab keeps them all: the size limit applies before this.)"""
    saved = notebook.metadata.get("widgets", {}).get(_WIDGET_STATE)
    if not saved:
        return notebook
    states = saved.get("state", {})
    pending = [output["data"][_WIDGET_VIEW]["model_id"]
               for cell in notebook.cells for output in cell.get("outputs", [])
               if _WIDGET_VIEW in output.get("data", {})]
    shown: set[str] = set()
    while pending:
        model = pending.pop()
        if model in shown or model not in states:
            continue
        shown.add(model)
        pending.extend(_MODEL_REFERENCE.findall(json.dumps(states[model])))
    saved["state"] = {model: state for model, state in states.items() if model in shown}
    return notebook


#: An executed notebook is committed, shared and rendered: past this size something embeds
#: data (rows in a widget's state, say) that belongs in a file, or builds widgets by the
#: thousand. Judged as JupyterLab saves it, every widget's state included, at the demo's
#: size too (the long tests, tests/test_notebooks.py).
MAX_EXECUTED_BYTES = 1_000_000


def size_problem(notebook: nbformat.NotebookNode) -> str | None:
    """Why an executed notebook is too big or embeds data, or None when it is fine."""
    text = nbformat.writes(notebook)
    size = len(text.encode())
    if size >= MAX_EXECUTED_BYTES:
        return f"{size / 1e6:.2f} MB executed (the limit is {MAX_EXECUTED_BYTES / 1e6:.0f} MB)"
    if "data:text/csv" in text:
        return "embeds a CSV document (a data: link) in its outputs or widget state"
    return None


_WIDGET = "application/vnd.jupyter.widget-view+json"
_PROGRESS_BAR = re.compile(r"\d+%\|")
_WIDGET_NOTE = (
    '<p class="paynb-widget-note"><em>An interactive form shows here when the notebook runs '
    "in JupyterLab; see the Forms page for what it looks like and does.</em></p>"
)


def for_docs(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Make widget outputs readable on a static page.

    A widget has no static rendering (its text fallback is a long ``VBox(children=...)``
    repr), so a form's output becomes a short note; a progress bar, which a live notebook
    removes once done, is dropped.
    """
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        outputs = []
        for output in cell.outputs:
            data = output.get("data", {})
            if _WIDGET in data:
                if _PROGRESS_BAR.search(str(data.get("text/plain", ""))):
                    continue
                output = nbformat.v4.new_output("display_data", data={"text/html": _WIDGET_NOTE,
                                                                      "text/plain": "(form)"})
            outputs.append(output)
        cell.outputs = outputs
    return notebook


def execute_many(paths: Sequence[Path], *, env: dict[str, str], cwd: Path,
                 workers: int = 3, timeout: int = 180
                 ) -> dict[Path, nbformat.NotebookNode | Exception]:
    """Run several notebooks at once, each in its own kernel: the executed notebook of each
    path, or the exception its run raised. ``timeout``: the seconds a cell may take.

    Most of a run is waiting (a kernel starting, the sandbox answering), so a few at a time
    finish sooner than one after the other, even on two cores.
    """
    def run(path: Path) -> nbformat.NotebookNode | Exception:
        try:
            return execute(path, env=env, cwd=cwd, timeout=timeout)
        except Exception as exc:  # reported per notebook by the caller
            return exc

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(zip(paths, pool.map(run, paths), strict=True))


def execute_all(paths: Sequence[Path], out_dir: Path, *,
                seed_items: int = DEFAULT_SEED_ITEMS) -> list[Path]:
    """Execute ``paths`` against one fresh sandbox; write copies fit for the docs to ``out_dir``.

    Raises the first failure, naming its notebook.
    """
    with tempfile.TemporaryDirectory(prefix="paynb-notebooks-") as tmp:
        workdir = Path(tmp)
        with fresh_sandbox(workdir, seed_items=seed_items) as env:
            results = execute_many(paths, env=env, cwd=workdir)
    return write_for_docs(results, out_dir)


def write_for_docs(results: dict[Path, nbformat.NotebookNode | Exception], out_dir: Path
                   ) -> list[Path]:
    """Write copies fit for the docs of :func:`execute_many`'s ``results`` to ``out_dir``
    (the notebooks given are left as they are). Raises the first failure, naming its
    notebook."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for path, result in results.items():
        if isinstance(result, Exception):
            raise RuntimeError(f"{path.name} failed") from result
        problem = size_problem(result)
        if problem:
            raise RuntimeError(f"{path.name}: {problem}")
        target = out_dir / path.name
        nbformat.write(for_docs(drop_unseen_widgets(copy.deepcopy(result))), target)
        written.append(target)
    return written


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help="run only notebooks whose name contains these")
    parser.add_argument("--out", type=Path, required=True, help="directory for executed copies")
    parser.add_argument("--seed-items", type=int, default=DEFAULT_SEED_ITEMS)
    args = parser.parse_args(argv)
    for target in execute_all(notebook_paths(args.names), args.out, seed_items=args.seed_items):
        print(target)  # noqa: T201  (a command-line tool reports what it wrote)
    return 0


if __name__ == "__main__":
    sys.exit(main())
