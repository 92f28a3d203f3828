"""The report files of a run: the package's report notebook run by papermill with the
run's data, rendered by nbconvert to one self-contained HTML file (no code, charts
inline, nothing loaded from elsewhere), the compliance workbook beside it, and the
reports folder kept to its retention count."""

from __future__ import annotations

import datetime as dt
import html
import logging
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from paynb.monitor._report import MonitorReport

__all__ = ["KEEP", "NOTEBOOK", "default_reports_folder", "prune", "render", "report_paths"]

logger = logging.getLogger("paynb.monitor")

#: The report notebook papermill runs (parameter ``run_file``: the run's saved report).
NOTEBOOK = Path(__file__).with_name("report.ipynb")
#: Runs kept per company in the reports folder by default.
KEEP = 30
#: Seconds the report notebook may take.
TIMEOUT = 600
#: What the report's kernel process writes itself, in the run's temporary folder.
_KERNEL_LOG = "kernel.log"
_STEM = re.compile(r"^(?P<company>.+)-(?P<stamp>\d{8}-\d{6})(?:-\d+)?$")

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 2em auto;
       max-width: 1100px; padding: 0 1em; color: #1b1b1b; }}
h1 {{ font-size: 1.5em; margin: 0.2em 0; }} h2 {{ font-size: 1.2em; margin-top: 1.6em; }}
table.paynb-table {{ border-collapse: collapse; margin: 0.6em 0; font-size: 0.9em; }}
table.paynb-table th, table.paynb-table td {{ border-bottom: 1px solid #ddd; padding: 0.25em 0.6em;
       text-align: left; vertical-align: top; }}
table.paynb-table th {{ background: #f3f3f3; }}
pre.paynb-message {{ background: #f7f7f7; padding: 0.8em; white-space: pre-wrap; }}
img {{ max-width: 100%; }}
.jp-OutputArea-output {{ overflow-x: auto; }}
.jp-OutputPrompt, .jp-InputPrompt {{ display: none; }}
</style></head>
<body class="paynb-monitor-report">
{body}
</body></html>
"""


def default_reports_folder() -> Path:
    """``reports`` in the user's data folder (beside the journal and the history)."""
    import platformdirs

    return Path(platformdirs.user_data_dir("paynb", appauthor=False)) / "reports"


def report_paths(folder: Path, company: str, started: dt.datetime) -> tuple[Path, Path]:
    """Where a run's HTML report and workbook go: ``<folder>/<company>/<company>-<UTC
    time>.html`` and ``.xlsx`` (a number added if that name is taken)."""
    target = Path(folder) / company
    stem = f"{company}-{started.astimezone(dt.UTC):%Y%m%d-%H%M%S}"
    number = 1
    candidate = stem
    while (target / f"{candidate}.html").exists():
        number += 1
        candidate = f"{stem}-{number}"
    return target / f"{candidate}.html", target / f"{candidate}.xlsx"


def prune(folder: Path, company: str, keep: int) -> list[Path]:
    """Delete the oldest runs of ``company`` beyond the newest ``keep`` (their HTML and
    workbook); returns the files deleted."""
    target = Path(folder) / company
    if not target.is_dir():
        return []
    runs: dict[str, list[Path]] = {}
    for path in target.iterdir():
        found = _STEM.match(path.stem)
        if found and found["company"] == company and path.suffix in (".html", ".xlsx"):
            runs.setdefault(path.stem, []).append(path)
    oldest_first = sorted(runs)  # <company>-<UTC time>[-n]: the names sort by time
    removed = [path for stem in oldest_first[:max(0, len(oldest_first) - keep)]
               for path in runs[stem]]
    for path in removed:
        path.unlink(missing_ok=True)
    return removed


def _tail(log: Path) -> str:
    """The last lines the kernel process wrote, to say why it failed ("" when none)."""
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").strip().splitlines()
    except OSError:
        return ""
    return ("; the kernel said: " + " | ".join(lines[-5:])) if lines else ""


def _body(notebook: Any) -> str:
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(  # type: ignore[no-untyped-call]
        template_name="basic", exclude_input=True, exclude_input_prompt=True,
        exclude_output_prompt=True, exclude_anchor_links=True, embed_images=True)
    body, _ = exporter.from_notebook_node(notebook)
    return str(body)


def _kernel_manager(folder: Path) -> type[Any]:
    """The kernel manager class papermill makes the report's kernel with: the kernel talks
    to this process over local sockets in the private temporary ``folder``, not over TCP
    (which anyone on the machine could reach), and its process writes its own output
    (IPython's start-up warnings, a crash) to ``kernel.log`` there, not to the run's
    standard error. papermill owns the manager it makes: it stops the kernel client's
    channels and the kernel at the end (a manager handed to it leaves the client's
    channels open, which jupyter_client then complains of when the client is collected:
    "Could not destroy zmq context")."""
    from jupyter_client.manager import AsyncKernelManager

    class ReportKernel(AsyncKernelManager):
        def __init__(self, **options: Any) -> None:
            super().__init__(**{**options, "transport": "ipc", "ip": str(folder / "kernel")})

        # (jupyter_client types an async manager's start_kernel as the blocking one's)
        async def start_kernel(self, **options: Any) -> None:  # type: ignore[override]
            with (folder / _KERNEL_LOG).open("ab") as log:  # the kernel keeps its own copy
                await super().start_kernel(**{**options, "stdout": log, "stderr": log})

    return ReportKernel


def render(report: MonitorReport, target: Path) -> Path:
    """Run the report notebook on ``report`` and write the HTML page to ``target``."""
    import nbformat
    import papermill

    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="paynb-monitor-") as folder:
        data = report.save(Path(folder) / "run.pkl")
        executed = Path(folder) / "report.ipynb"
        try:
            papermill.execute_notebook(
                str(NOTEBOOK), str(executed), parameters={"run_file": str(data)},
                kernel_name="python3", progress_bar=False, log_output=False, cwd=folder,
                execution_timeout=TIMEOUT, report_mode=True,
                kernel_manager_class=_kernel_manager(Path(folder)))
        except Exception as exc:
            raise RuntimeError(f"the report notebook could not be run: {type(exc).__name__}: "
                               f"{exc}{_tail(Path(folder) / _KERNEL_LOG)}") from exc
        notebook = nbformat.read(executed, as_version=4)  # type: ignore[no-untyped-call]
    errors = [output for cell in notebook.cells for output in cell.get("outputs", [])
              if output.get("output_type") == "error"]
    if errors:
        raise RuntimeError(f"the report notebook failed: {errors[0].get('ename')}: "
                           f"{errors[0].get('evalue')}")
    page = _PAGE.format(title=html.escape(f"paynb morning run: {report.company}, "
                                          f"{report.as_of:%Y-%m-%d}"), body=_body(notebook))
    partial = target.with_suffix(".html.part")
    partial.write_text(page, encoding="utf-8")
    os.replace(partial, target)
    return target
