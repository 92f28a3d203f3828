"""mkdocs hooks (see ``hooks:`` in mkdocs.yml): the executed notebooks, readable docstrings.

The notebooks are stored without outputs in ``notebooks/``, outside ``docs/``. Before
mkdocs-jupyter looks at the files, this hook executes them against a fresh sandbox of
their own (``scripts/run_notebooks.py``) and adds the executed copies as
``notebooks/<name>.ipynb`` pages. Set ``PAYNB_DOCS_NOTEBOOKS`` to a directory of copies
executed earlier (``run_notebooks.py --out DIR``) to render those instead.

The docstrings use Sphinx roles (``:class:`~paynb.errors.ValidationError```) and ``::``
before literal blocks, which the Google-style parser leaves as text. Each role becomes a
cross-reference that mkdocs-autorefs resolves when the target is documented (else plain
code), and a trailing ``::`` becomes ``:``.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from mkdocs.config.defaults import MkDocsConfig
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File, Files

sys.path.insert(0, str(Path(__file__).resolve().parent))

# run_notebooks is a sibling script, importable once its folder is on the path.
import run_notebooks

log = logging.getLogger("mkdocs.hooks.paynb")

#: Seeded ACH items of the sandbox the docs' notebooks run against: more than the tests
#: use, so that the weekly charts have something to show in every week.
DOCS_SEED_ITEMS = 10_000

_root: Path | None = None


def _executed_root() -> Path:
    """A directory holding ``notebooks/<name>.ipynb`` executed, made once per mkdocs process."""
    global _root
    if _root is None:
        root = Path(tempfile.mkdtemp(prefix="paynb-docs-"))
        target = root / "notebooks"
        given = os.environ.get("PAYNB_DOCS_NOTEBOOKS")
        if given:
            shutil.copytree(given, target)
        else:
            log.info("executing the notebooks against a fresh sandbox")
            run_notebooks.execute_all(run_notebooks.notebook_paths(), target,
                                    seed_items=DOCS_SEED_ITEMS)
        _root = root
    return _root


# Before mkdocs-jupyter's own on_files (default priority 0), so it wraps these pages too.
@event_priority(50)
def on_files(files: Files, config: MkDocsConfig) -> Files:
    # A real File with its own src_dir, not File.generated(): mkdocs-jupyter's wrapper
    # finds the source path of a file only through src_dir.
    root = _executed_root()
    for notebook in run_notebooks.notebook_paths():
        uri = f"notebooks/{notebook.name}"
        if not (root / uri).is_file():
            log.warning("no executed copy of %s", notebook.name)
            continue
        files.append(File(uri, src_dir=str(root), dest_dir=config.site_dir,
                          use_directory_urls=config.use_directory_urls))
    return files


_ROLE = re.compile(r":(?:class|meth|func|mod|attr|exc|data|obj):<code>(~?)([\w.]+)</code>")


def _reference(match: re.Match[str]) -> str:
    short, target = match.groups()
    text = target.rsplit(".", 1)[-1] if short else target
    if "." not in target:  # a bare method name: nothing to resolve it against
        return f"<code>{text}</code>"
    return f'<autoref identifier="{target}" optional><code>{text}</code></autoref>'


def on_page_content(html: str, **kwargs: object) -> str:
    return _ROLE.sub(_reference, html).replace("::</p>", ":</p>")


def on_shutdown() -> None:
    if _root is not None:
        shutil.rmtree(_root, ignore_errors=True)
