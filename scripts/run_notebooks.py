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
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

#: Seeded items of the sandbox a run gets: enough for every chart to show something,
#: small enough to seed in a second or two.
DEFAULT_SEED_ITEMS = 2000

#: Variables of the caller that would send the kernels elsewhere.
_FOREIGN = ("PAYNB_PROFILE",)


def notebook_paths(names: Sequence[str] = ()) -> list[Path]:
    """The notebooks in order; ``names`` keeps those whose file name contains one of them."""
    paths = sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
    if names:
        paths = [p for p in paths if any(name in p.name for name in names)]
    return paths


@contextlib.contextmanager
def fresh_sandbox(workdir: Path, *,
                  seed_items: int = DEFAULT_SEED_ITEMS) -> Iterator[dict[str, str]]:
    """Serve a sandbox of its own; yield the environment that points ``paynb.connect()`` at it.

    ``workdir`` receives the (absent) configuration file and the journals.
    """
    from paynb import sandbox

    with sandbox.serve(port=0, seed_items=seed_items) as sb:
        credentials = sb.credentials
        env = {name: value for name, value in os.environ.items() if name not in _FOREIGN}
        env.update({
            "PAYNB_BASE_URL": sb.base_url,
            "PAYNB_AUTH_URL": sb.auth_url,
            "PAYNB_COMPANY_CODE": sb.company_code,
            "PAYNB_CLIENT_ID": credentials.client_id,
            "PAYNB_CLIENT_SECRET": credentials.client_secret,
            "PAYNB_USERNAME": credentials.username,
            "PAYNB_PASSWORD": credentials.password,
            "PAYNB_CONFIG": str(workdir / "no-config.toml"),
            "PAYNB_JOURNAL": str(workdir / "journal.sqlite3"),
            # Progress bars would only add noise to stored outputs.
            "TQDM_DISABLE": "1",
        })
        yield env


def execute(path: Path, *, env: dict[str, str], cwd: Path,
            timeout: int = 180) -> nbformat.NotebookNode:
    """Run one notebook top to bottom in a fresh kernel; raise on the first failing cell.

    The kernel is the ``python3`` kernel of the running interpreter (the venv's), started
    with ``env`` and working in ``cwd`` (files the notebook writes land there).
    """
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(cwd)}},
        allow_errors=False,
    )
    client.execute(env={**env, "PAYNB_JOURNAL": str(cwd / f"{path.stem}.journal.sqlite3")})
    return notebook


def execute_all(paths: Sequence[Path], out_dir: Path, *,
                seed_items: int = DEFAULT_SEED_ITEMS) -> list[Path]:
    """Execute ``paths`` against one fresh sandbox; write the executed copies to ``out_dir``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="paynb-notebooks-") as tmp:
        workdir = Path(tmp)
        with fresh_sandbox(workdir, seed_items=seed_items) as env:
            for path in paths:
                notebook = execute(path, env=env, cwd=workdir)
                target = out_dir / path.name
                nbformat.write(notebook, target)
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
