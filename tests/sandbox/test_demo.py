"""``paynb demo`` end to end: the sandbox, the executed quickstart, JupyterLab, Ctrl-C.

The demo runs as a new user's ``make demo`` does (``python -m paynb.cli demo``), with
HOME in a temporary directory (so paynb's cache, data and journal and Jupyter's
configuration and runtime files land there), free ports, a small seed, a copy of the
quickstart notebook and no browser.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import nbformat
import pytest
import requests
from sandbox_helpers import ACH, Api

from paynb.cli import _serve
from paynb.sandbox import Sandbox

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "notebooks" / "01_quickstart.ipynb"

# A kernel and JupyterLab start on 2 cores shared with other tests: seconds each.
pytestmark = pytest.mark.timeout(180)


@pytest.fixture(autouse=True)
def _ctrl_c_interrupts():
    """Ctrl-C raises KeyboardInterrupt in this process, whatever the parent gave it.

    ``make test &`` in a non-interactive shell starts pytest with SIGINT ignored; these
    tests send it (to the demo, or to this process) and check what it does.
    """
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def _default_sigint() -> None:
    """In a child before exec: SIGINT back to its default, so Python turns it into
    KeyboardInterrupt (an ignored SIGINT stays ignored across exec)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _closed(url: str) -> bool:
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    with socket.socket() as probe:
        return probe.connect_ex((host, int(port))) != 0


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _stop_all(demo: subprocess.Popen[str], home: Path) -> None:
    """After a failure: stop the demo (Ctrl-C, then harder) and a JupyterLab it left.

    JupyterLab runs in its own session, so a demo killed outright would leave it running.
    """
    if demo.poll() is None:
        demo.send_signal(signal.SIGINT)
        try:
            demo.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            demo.kill()
            demo.communicate()
    for server in home.rglob("jpserver-[0-9]*.json"):
        with contextlib.suppress(ProcessLookupError, ValueError, OSError):
            os.kill(json.loads(server.read_text())["pid"], signal.SIGKILL)


def test_demo_serves_the_executed_quickstart_and_stops_on_ctrl_c(tmp_path: Path):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    shutil.copy(QUICKSTART, notebooks)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(tmp_path),
           "BROWSER": "true"}  # were a browser opened after all, it would be `true`
    process = subprocess.Popen(
        [sys.executable, "-m", "paynb.cli", "demo", "--port", "0", "--jupyter-port", "0",
         "--seed-items", "300", "--db", str(tmp_path / "demo.sqlite3"),
         "--notebooks", str(notebooks), "--no-browser"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=tmp_path,
        preexec_fn=_default_sigint)
    lines: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            lines.append(line)
            if "Ctrl-C stops both" in line:
                break
        text = "".join(lines)
        assert "Ctrl-C stops both" in text, text
        sandbox_url = next(line.split()[1] for line in lines if line.startswith("sandbox "))
        lab_url = next(line.split()[1] for line in lines if line.startswith("JupyterLab "))

        # The sandbox answers with a token, with the demo data.
        assert 0 < Api(Sandbox(sandbox_url)).get(ACH).json()["total"] <= 300
        # JupyterLab answers the printed URL (token included) and opens the executed copy.
        assert "/lab/tree/demo-run/01_quickstart.ipynb?token=" in lab_url
        assert requests.get(lab_url, timeout=30).status_code == 200
        base, token = lab_url.split("/lab/", 1)[0], lab_url.rsplit("token=", 1)[1]
        contents = requests.get(f"{base}/api/contents/demo-run/01_quickstart.ipynb",
                                params={"token": token}, timeout=30)
        assert contents.status_code == 200
        assert "executed copy" in text and str(notebooks / "01_quickstart.ipynb") in text

        # The copy ran top to bottom against this sandbox and shows the chart; the
        # original is untouched.
        executed = nbformat.read(notebooks / "demo-run" / "01_quickstart.ipynb", as_version=4)
        code = [cell for cell in executed.cells if cell.cell_type == "code"]
        assert all(cell.execution_count for cell in code)
        outputs = [output for cell in code for output in cell.outputs]
        assert not [output for output in outputs if output.output_type == "error"]
        assert any("image/png" in output.get("data", {}) for output in outputs)
        # no progress bar left over from the run (its widget is gone with that kernel)
        assert not [output for output in outputs
                    if "application/vnd.jupyter.widget-view+json" in output.get("data", {})]
        assert sandbox_url in json.dumps(outputs)  # connect() found the demo's sandbox
        assert (notebooks / "01_quickstart.ipynb").read_bytes() == QUICKSTART.read_bytes()

        servers = list(tmp_path.rglob("jpserver-[0-9]*.json"))
        assert len(servers) == 1
        lab_pid = json.loads(servers[0].read_text())["pid"]
        log = next(line.split(" in ", 1)[1].strip() for line in lines if "log in" in line)
        assert "Jupyter Server" in Path(log).read_text()  # its output goes to the log

        process.send_signal(signal.SIGINT)
        rest, _ = process.communicate(timeout=60)
    finally:
        _stop_all(process, tmp_path)
    assert process.returncode == 0, rest
    assert "JupyterLab stopped" in rest and "sandbox stopped" in rest
    assert _gone(lab_pid)
    assert _closed(sandbox_url) and _closed(lab_url)


def _quickstart_of(folder: Path, source: str) -> None:
    """A one-cell ``01_quickstart.ipynb`` in ``folder``."""
    notebook = nbformat.v4.new_notebook()
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                       "language": "python"}
    notebook.cells = [nbformat.v4.new_code_cell(source)]
    nbformat.write(notebook, folder / "01_quickstart.ipynb")


def test_a_failing_quickstart_opens_the_original_and_says_why(tmp_path: Path, capsys,
                                                            monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))  # the kernel's IPython files
    _quickstart_of(tmp_path, "raise RuntimeError('no service here')")
    (tmp_path / "demo-run").mkdir()
    (tmp_path / "demo-run" / "01_quickstart.ipynb").write_text("{}")  # an earlier demo's
    with (tmp_path / "demo.log").open("wb") as log:
        opened = _serve._quickstart(tmp_path, log)
    assert opened == "01_quickstart.ipynb"
    said = capsys.readouterr().out
    assert "RuntimeError: no service here" in said
    assert f"opens the original {tmp_path / '01_quickstart.ipynb'}" in said
    assert not (tmp_path / "demo-run" / "01_quickstart.ipynb").exists()
    assert "no service here" in (tmp_path / "demo.log").read_text()
    # Ctrl-C still stops the demo afterwards (nbclient swaps the handler during a run)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_ctrl_c_while_the_quickstart_runs_stops_the_demo(tmp_path: Path, monkeypatch):
    """nbclient takes Ctrl-C itself during a run (it shuts the kernel down) and the run then
    fails with another error: the demo must stop, not open the original and carry on."""
    monkeypatch.setenv("HOME", str(tmp_path))
    _quickstart_of(tmp_path, "import time\ntime.sleep(30)")
    # Whether it lands while the kernel starts or while the cell runs, the same must happen.
    ctrl_c = threading.Timer(3, os.kill, (os.getpid(), signal.SIGINT))
    ctrl_c.start()
    with (tmp_path / "demo.log").open("wb") as log, pytest.raises(KeyboardInterrupt):
        _serve._quickstart(tmp_path, log)
    ctrl_c.join()
    # and a later Ctrl-C (while the demo waits) is a KeyboardInterrupt again
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_the_browser_is_sent_a_private_page_not_the_token(tmp_path: Path) -> None:
    url = "http://127.0.0.1:8888/lab/tree/demo-run/01_quickstart.ipynb?token=abc&x=1"
    address = _serve._redirect_page(url, tmp_path)
    page = tmp_path / "demo-open.html"
    assert address == page.as_uri() and "token" not in address
    assert stat.S_IMODE(page.stat().st_mode) == 0o600
    assert 'content="0;url=http://127.0.0.1:8888/lab/tree/demo-run/01_quickstart.ipynb' \
           '?token=abc&amp;x=1"' in page.read_text()
    _serve._redirect_page(url.replace("abc", "def"), tmp_path)  # a second demo replaces it
    assert "token=def" in page.read_text()
