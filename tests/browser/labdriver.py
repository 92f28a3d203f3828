"""JupyterLab in headless Chromium against a sandbox of its own: the machinery shared by
``tests/browser/test_jupyterlab.py``, ``tests/browser/test_classic_notebook.py`` (the same
with ``app="notebook"``: Jupyter Notebook 7) and ``scripts/screenshots.py``.

:func:`running_lab` serves a fresh sandbox (announced the way ``paynb.connect()`` finds
it, see ``scripts/run_notebooks.py``), copies the notebooks into a temporary directory,
starts ``jupyter lab`` there on 127.0.0.1 with a random token and an environment in
which the kernels reach that sandbox with a temporary journal, and launches Debian's
Chromium through playwright (never a downloaded browser). On exit every kernel is shut
down, the server stopped and the browser closed.

The browser needs no network: the background-networking flags keep Chromium from
dialling out (connections it tries would be refused on a closed network and slow it).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import requests

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ROOT / "notebooks"

#: Where Debian's package puts Chromium; ``PAYNB_CHROMIUM`` points elsewhere.
CHROMIUM = os.environ.get("PAYNB_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]

#: Seconds any one wait in the page may take (a cold kernel on 2 busy cores is slow).
WAIT_MS = 60_000
#: How long a Run All is given to mark its first cell queued before it is given again
#: (the page marks it at once when the command reaches a kernel).
_RUN_BEGINS_MS = 10_000

#: JupyterLab settings for a quiet, fully rendered page: no news or update toasts,
#: every cell in the DOM (no windowing) so widgets far down the notebook render.
_LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings":
        {"checkForUpdates": False, "fetchNews": "false"},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings":
        {"windowingMode": "none"},
}


#: The notebook panel in view (other tabs stay in the page, hidden).
PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"


class BrowserUnavailable(RuntimeError):
    """Chromium or playwright is missing or cannot start here (the reason is the message)."""


def _run_notebooks_module() -> Any:
    spec = importlib.util.spec_from_file_location("run_notebooks",
                                                  ROOT / "scripts" / "run_notebooks.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def browser_problem() -> str | None:
    """Why the browser tests cannot run here, or ``None`` when they can."""
    if not Path(CHROMIUM).exists():
        return (f"Chromium is not installed at {CHROMIUM} (scripts/ensure_browser.sh installs "
                "Debian's package when run as root with apt-get)")
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is not installed (pip install -e '.[dev]')"
    return None


@dataclass
class Lab:
    """A running JupyterLab with its sandbox and browser page."""

    url: str
    token: str
    notebook_dir: Path
    sandbox_url: str
    page: Any
    log: Path
    #: Which interface serves the page: ``"lab"`` (JupyterLab) or ``"notebook"``
    #: (Jupyter Notebook 7, the classic notebook's successor).
    app: str = "lab"

    def client(self) -> Any:
        """A paynb client of the same sandbox as the kernels (without a journal)."""
        from paynb.sandbox import Sandbox

        return Sandbox(self.sandbox_url).connect(journal=None)

    def log_tail(self, lines: int = 40) -> str:
        """The end of the JupyterLab server's log (kernel errors land there)."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    # -- notebooks --------------------------------------------------------------------

    def open(self, name: str) -> Any:
        """Open notebook ``name``, wait until all its cells are shown and its kernel is
        idle; returns the page."""
        cells = len(nbformat.read(self.notebook_dir / name, as_version=4).cells)
        page = self.page
        path = "lab/tree" if self.app == "lab" else "notebooks"
        page.goto(f"{self.url}/{path}/{name}?token={self.token}")
        # JupyterLab shows an empty cell before the file's content arrives: wait for all.
        page.wait_for_function(
            "n => document.querySelectorAll("
            f"'{PANEL} .jp-Notebook .jp-Cell').length === n",
            arg=cells, timeout=WAIT_MS)
        self.wait_idle()
        return page

    def wait_idle(self) -> None:
        """Wait until the status bar says the notebook's Python kernel is idle (Notebook 7
        has no status bar: there the toolbar's kernel indicator says it)."""
        if self.app == "notebook":
            # The indicator says "idle" before any kernel exists: ask the server as well.
            self.page.wait_for_function(
                """async ([panel, token]) => {
                    const shown = document.querySelector(
                        `${panel} .jp-Notebook-ExecutionIndicator`)?.dataset.status;
                    const kernels = await (await fetch(`/api/kernels?token=${token}`)).json();
                    return shown === 'idle' && kernels.length > 0
                        && kernels.every(k => k.execution_state === 'idle');
                }""", arg=[PANEL, self.token], timeout=WAIT_MS, polling=200)
            return
        self.page.wait_for_function(
            "() => /Python 3.*\\|\\s*Idle/.test("
            "document.querySelector('#jp-main-statusbar')?.innerText || '')", timeout=WAIT_MS)

    def run_all(self, *, timeout_ms: int = 150_000) -> None:
        """Run > Run All Cells, then wait until no cell is queued or running and the
        kernel idles. Raises ``AssertionError`` naming the cells that did not run
        (a failing cell stops the run)."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        page = self.page
        # The run has begun once the first code cell is no longer "[ ]": the page marks a
        # queued cell at once.
        begun = f"""() => !/\\[\\s\\]/.test(document.querySelector(
            '{PANEL} .jp-CodeCell .jp-InputPrompt')?.textContent ?? '[ ]')"""
        deadline = time.monotonic() + WAIT_MS / 1000
        self._click_run_all()
        while True:
            left = int((deadline - time.monotonic()) * 1000)
            try:
                page.wait_for_function(begun, timeout=max(1, min(_RUN_BEGINS_MS, left)))
                break
            except PlaywrightTimeout:
                if left <= _RUN_BEGINS_MS:
                    raise
            # Still "[ ]": the command reached no kernel. The click was dropped (a loaded
            # page), or the page's kernel connection was not ready (Run All then does
            # nothing, silently). Once the kernel idles, if nothing began, it is given again.
            page.keyboard.press("Escape")  # a menu left open
            self.wait_idle()
            if not page.evaluate(begun):
                import warnings

                warnings.warn("Run All began no cell within "
                              f"{_RUN_BEGINS_MS // 1000} s: given again", stacklevel=2)
                self._click_run_all()
        page.wait_for_function(
            f"""() => ![...document.querySelectorAll('{PANEL} .jp-CodeCell .jp-InputPrompt')]
                    .some(p => p.textContent.includes('[*]'))""", timeout=timeout_ms)
        self.wait_idle()
        prompts = self.page.locator(
            f"{PANEL} .jp-CodeCell .jp-InputPrompt").all_inner_texts()
        not_run = [n for n, text in enumerate(prompts) if not re.search(r"\[\d+\]", text)]
        assert prompts and not not_run, (
            f"code cells {not_run} of {len(prompts)} did not run; the notebook shows:\n"
            + self.notebook_text()[-3000:])

    def _click_run_all(self) -> None:
        """Run > Run All Cells, with the notebook focused (the menu acts on the notebook
        that has the focus)."""
        page = self.page
        page.locator(f"{PANEL} .jp-Cell .jp-InputPrompt").first.click()
        page.locator(".lm-MenuBar-itemLabel", has_text=re.compile(r"^Run$")).click()
        run_all = page.locator(".lm-Menu-item[data-command='runmenu:run-all']")
        # A menu runs an item on mouse-up only once the pointer has made it active; a
        # click that lands first is dropped (seen in Notebook 7): hover, wait, click.
        run_all.hover()
        page.locator(".lm-Menu-item.lm-mod-active[data-command='runmenu:run-all']").wait_for()
        run_all.click()

    def run_all_rendering(self, name: str, selector: str, *, wait_ms: int = 30_000) -> None:
        """:meth:`run_all` on the open notebook ``name``, then wait for ``selector`` (its
        first widget) to render.

        Once in some fifteen fresh runs of the suite, JupyterLab showed none of a run's
        widgets, with no error on the page, while the same notebook rendered them in
        every run after (2026-11-27). So when the first widget has not appeared, the page
        is opened again and the notebook run again, once, with a warning naming the
        miss; a second miss fails as before.
        """
        import warnings

        from playwright.sync_api import TimeoutError as PlaywrightTimeout

        self.run_all()
        try:
            self.page.locator(selector).first.wait_for(timeout=wait_ms)
            return
        except PlaywrightTimeout:
            warnings.warn(f"JupyterLab rendered no {selector} after running {name}: the "
                          "page is opened and the notebook run again, once", stacklevel=2)
        self.open(name)
        self.run_all()

    def cell(self, source_contains: str) -> Any:
        """The code cell whose source contains ``source_contains``."""
        return self.page.locator(f"{PANEL} .jp-CodeCell").filter(
            has=self.page.locator(".jp-InputArea", has_text=source_contains)).first

    def notebook_text(self) -> str:
        """Everything the open notebook shows, as text."""
        return self.page.locator(f"{PANEL} .jp-Notebook").inner_text()

    def write_notebook(self, name: str, cells: Sequence[str]) -> str:
        """Write a notebook of code ``cells`` into the notebook directory; returns its name."""
        notebook = nbformat.v4.new_notebook()
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                           "language": "python"}
        notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
        nbformat.write(notebook, self.notebook_dir / name)
        return name


def _write_settings(settings_dir: Path) -> None:
    for relative, values in _LAB_SETTINGS.items():
        path = settings_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


def _wait_for_server(url: str, token: str, process: subprocess.Popen[bytes], log: Path,
                     *, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"jupyter lab exited ({process.returncode}):\n"
                               + log.read_text(errors="replace")[-3000:])
        with contextlib.suppress(requests.RequestException):
            if requests.get(f"{url}/api/status", params={"token": token},
                            timeout=2).status_code == 200:
                return
        time.sleep(0.2)  # polling a starting server: there is no event to wait on
    raise RuntimeError("jupyter lab did not answer within "
                       f"{timeout:.0f} s:\n" + log.read_text(errors="replace")[-3000:])


def _stop_server(url: str, token: str, process: subprocess.Popen[bytes]) -> None:
    """Shut every kernel down through the API, then stop the server (its group if need be)."""
    with contextlib.suppress(requests.RequestException, ValueError):
        headers = {"Authorization": f"token {token}"}
        for kernel in requests.get(f"{url}/api/kernels", headers=headers, timeout=5).json():
            requests.delete(f"{url}/api/kernels/{kernel['id']}", headers=headers, timeout=15)
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)


@contextlib.contextmanager
def _jupyter_lab(notebook_dir: Path, env: dict[str, str], workdir: Path, *, app: str = "lab"
                 ) -> Iterator[tuple[str, str, Path]]:
    port, token = _free_port(), secrets.token_hex(16)
    url = f"http://127.0.0.1:{port}"
    settings_dir = workdir / "lab-settings"
    _write_settings(settings_dir)
    server_env = {
        **env,
        "JUPYTER_CONFIG_DIR": str(workdir / "jupyter-config"),
        "JUPYTER_RUNTIME_DIR": str(workdir / "jupyter-runtime"),
        "IPYTHONDIR": str(workdir / "ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
    }
    log = workdir / "jupyterlab.log"
    command = [
        str(Path(sys.executable).with_name("jupyter")), app, "--no-browser",
        "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={notebook_dir}",
        "--ServerApp.terminals_enabled=False",
    ]
    if app == "lab":
        command += [
            f"--LabApp.user_settings_dir={settings_dir}",
            f"--LabApp.workspaces_dir={workdir / 'lab-workspaces'}",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.news_url=None", "--LabApp.extension_manager=readonly",
        ]
    else:  # Jupyter Notebook 7 reads the same settings files; it has no news or updates
        command += [
            f"--JupyterNotebookApp.user_settings_dir={settings_dir}",
            f"--JupyterNotebookApp.workspaces_dir={workdir / 'lab-workspaces'}",
        ]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # CI containers run as root
        command.append("--allow-root")
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=notebook_dir, env=server_env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_for_server(url, token, process, log)
        yield url, token, log
    finally:
        _stop_server(url, token, process)


@contextlib.contextmanager
def _browser(workdir: Path, *, viewport: tuple[int, int]) -> Iterator[Any]:
    problem = browser_problem()
    if problem:
        raise BrowserUnavailable(problem)
    from playwright.sync_api import Error, expect, sync_playwright

    # expect() waits 5 s by default: too short for a kernel round trip on 2 busy cores.
    expect.set_options(timeout=WAIT_MS)

    with sync_playwright() as playwright:
        try:
            context = playwright.chromium.launch_persistent_context(
                str(workdir / "chromium-profile"), executable_path=CHROMIUM, headless=True,
                args=CHROMIUM_ARGS, viewport={"width": viewport[0], "height": viewport[1]})
        except Error as exc:
            raise BrowserUnavailable(f"Chromium at {CHROMIUM} does not start: "
                                     f"{str(exc).splitlines()[0]}") from exc
        try:
            page = context.pages[0] if context.pages else context.new_page()
            page.set_default_timeout(WAIT_MS)
            yield page
        finally:
            context.close()


@contextlib.contextmanager
def running_lab(notebooks: Sequence[str] = (), *, seed_items: int = 1000,
                viewport: tuple[int, int] = (1400, 1000), app: str = "lab") -> Iterator[Lab]:
    """A fresh sandbox, JupyterLab on a temporary copy of ``notebooks`` (file names in
    ``notebooks/``; all of them when empty) and a Chromium page, torn down on exit.
    ``app="notebook"`` serves Jupyter Notebook 7 (``jupyter notebook``) instead.

    Raises :class:`BrowserUnavailable` before starting anything when the browser
    cannot run here.
    """
    problem = browser_problem()
    if problem:
        raise BrowserUnavailable(problem)
    run_notebooks = _run_notebooks_module()
    with tempfile.TemporaryDirectory(prefix="paynb-lab-") as tmp:
        workdir = Path(tmp)
        notebook_dir = workdir / "notebooks"
        notebook_dir.mkdir()
        for path in sorted(NOTEBOOKS.glob("*.ipynb")):
            if not notebooks or path.name in notebooks:
                shutil.copy(path, notebook_dir / path.name)
        with run_notebooks.fresh_sandbox(workdir, seed_items=seed_items) as env:
            sandbox_url = json.loads(Path(env["PAYNB_SANDBOX_FILE"]).read_text())["base_url"]
            with _jupyter_lab(notebook_dir, env, workdir, app=app) as (url, token, log), \
                    _browser(workdir, viewport=viewport) as page:
                yield Lab(url=url, token=token, notebook_dir=notebook_dir,
                          sandbox_url=sandbox_url, page=page, log=log, app=app)
