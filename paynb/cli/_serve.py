"""``paynb sandbox`` serves the sandbox until Ctrl-C; ``paynb demo`` adds JupyterLab.

Both announce the sandbox in the discovery file, so ``paynb.connect()`` in a notebook (or
any other process) reuses it instead of starting another. While JupyterLab starts,
``paynb demo`` runs the quickstart notebook against the sandbox into a copy, so the first
screen shows its tables and chart.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import importlib.util
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

from paynb.cli._output import say, why
from paynb.sandbox import serve
from paynb.sandbox.server import (
    announce,
    check_port,
    check_serve_options,
    default_db_path,
    discovery_path,
    withdraw,
)

__all__ = ["DEMO_RUN", "QUICKSTART", "run_demo", "run_sandbox"]


def _free(host: str, port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def _port(host: str, wanted: int, what: str) -> int:
    # Before the probe: a port out of range is an error, not a busy port.
    check_port(wanted, f"the port of {what}")
    if wanted == 0 or _free(host, wanted):
        return wanted
    say(f"port {wanted} is busy; {what} takes a free port instead")
    return 0


def _start(args: argparse.Namespace, db: str | None):
    check_serve_options(port=args.port, seed_items=args.seed_items, token_ttl=args.token_ttl,
                        latency_ms=args.latency_ms, error_rate=args.error_rate)
    port = _port(args.host, args.port, "the sandbox")
    say("starting the paynb sandbox" + (f" (data in {db})" if db else " (data in memory)")
         + " ...")
    sb = serve(host=args.host, port=port, db=db, seed=args.seed, seed_items=args.seed_items,
               token_ttl=args.token_ttl, latency_ms=args.latency_ms,
               error_rate=args.error_rate)
    announce(sb)
    creds = sb.credentials
    say(f"sandbox     {sb.base_url}   (API docs: {sb.base_url}/docs)")
    say(f"  base URL      {sb.base_url}")
    say(f"  auth URL      {sb.auth_url}   (token: {sb.auth_url}/connect/token)")
    say(f"  company code  {sb.company_code}   (user analyst also holds DEMO2)")
    say(f"  client        {creds.client_id} / {creds.client_secret}")
    say(f"  user          {creds.username} / {creds.password}")
    return sb


def _stop(sb: object) -> None:
    withdraw(sb)  # type: ignore[arg-type]
    sb.close()  # type: ignore[attr-defined]
    say("sandbox stopped")


def _wait(lab: subprocess.Popen[bytes] | None = None, log: Path | None = None) -> None:
    """Until Ctrl-C, SIGTERM, or JupyterLab (when given) exits by itself (then the end of
    its ``log`` is shown)."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with contextlib.suppress(KeyboardInterrupt):
        while not stop.wait(0.5):
            if lab is not None and lab.poll() is not None:
                tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
                say(f"JupyterLab exited (log: {log}):\n{tail}")
                return


def run_sandbox(args: argparse.Namespace) -> int:
    sb = _start(args, args.db)
    say("Ctrl-C stops it.")
    try:
        _wait()
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _stop(sb)
    return 0


def run_demo(args: argparse.Namespace) -> int:
    started = time.monotonic()
    db = Path(args.db) if args.db else default_db_path()
    if args.fresh:
        for suffix in ("", "-wal", "-shm"):
            with contextlib.suppress(FileNotFoundError):
                Path(f"{db}{suffix}").unlink()
    db.parent.mkdir(parents=True, exist_ok=True)
    notebooks = Path(args.notebooks).resolve()
    notebooks.mkdir(parents=True, exist_ok=True)
    # JupyterLab and the kernel write here, not to a pipe nobody reads while the demo
    # runs (a full pipe would block JupyterLab), nor to the terminal.
    log_path = discovery_path().parent / "demo.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    sb = _start(args, str(db))
    lab = None
    try:
        if importlib.util.find_spec("jupyterlab") is None:
            say("JupyterLab is not installed: pip install 'paynb[dev]' (the sandbox runs on).")
            _wait()
            return 1
        jupyter_port = _port(args.host, args.jupyter_port, "JupyterLab") or _any_port(args.host)
        token = secrets.token_urlsafe(16)
        # -P: the working directory stays off sys.path, so a file there named like a
        # standard module (grp.py, say) cannot take its place inside JupyterLab.
        command = [sys.executable, "-P", "-m", "jupyterlab", "--no-browser", f"--ip={args.host}",
                   f"--port={jupyter_port}", "--ServerApp.port_retries=0",
                   f"--ServerApp.root_dir={notebooks}", f"--IdentityProvider.token={token}"]
        if hasattr(os, "geteuid") and os.geteuid() == 0:
            command.append("--allow-root")  # containers often run as root
        with log_path.open("wb") as log:
            # Its own session: a Ctrl-C in the terminal reaches us only, and we stop
            # JupyterLab without its "shut down this server (y/[n])?" prompt.
            lab = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                   env=os.environ.copy(), start_new_session=True)
            # JupyterLab boots while the quickstart runs; which notebook to open is known
            # only afterwards, so the browser is opened here rather than by JupyterLab.
            where = _quickstart(notebooks, log)
        where = f"lab/tree/{where}" if where else "lab"
        _wait_listening(args.host, jupyter_port, lab)
        url = f"http://{args.host}:{jupyter_port}/{where}?token={token}"
        say(f"JupyterLab  {url}")
        say(f"  notebooks in {notebooks}")
        say(f"  log in {log_path}")
        say(f"ready in {time.monotonic() - started:.0f} s. Ctrl-C stops both.")
        if not args.no_browser:
            import webbrowser

            # Nothing opens where there is no browser (e.g. over ssh); a thread, as in
            # JupyterLab, because a text-mode browser would hold the terminal.
            threading.Thread(target=webbrowser.open, args=(_redirect_page(url, log_path.parent),),
                             daemon=True).start()
        _wait(lab, log_path)
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # a second Ctrl-C must not cut cleanup
        if lab is not None and lab.poll() is None:
            lab.terminate()
            try:
                lab.wait(timeout=20)
            except subprocess.TimeoutExpired:
                lab.kill()
            say("JupyterLab stopped")
        _stop(sb)
    return 0


QUICKSTART = "01_quickstart.ipynb"
#: Folder of the executed copy, inside the notebooks folder (git-ignored).
DEMO_RUN = "demo-run"
#: ``PAYNB_*`` variables a kernel of the executed copy keeps: where the demo sandbox is
#: announced and stored, and the journal. The others (profile, service address,
#: credentials) would send it elsewhere than the demo's sandbox.
_KEPT = ("PAYNB_SANDBOX_FILE", "PAYNB_SANDBOX_DB", "PAYNB_JOURNAL")
_WIDGET = "application/vnd.jupyter.widget-view+json"


def _redirect_page(url: str, folder: Path) -> str:
    """A ``file://`` address of a page, readable by its owner only, that sends the browser
    on to ``url``: as JupyterLab does, so the token is not on the browser's command line,
    where other users of the machine can read it."""
    page = folder / "demo-open.html"
    with contextlib.suppress(FileNotFoundError):
        page.unlink()
    fd = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(f'<!DOCTYPE html><meta http-equiv="refresh" content="0;url={html.escape(url)}">'
                  f'<a href="{html.escape(url)}">JupyterLab</a>\n')
    return page.as_uri()


def _quickstart(notebooks: Path, log: IO[bytes]) -> str:
    """Run the quickstart against the demo sandbox into ``demo-run/`` so the first screen
    shows its tables and chart (the stored notebook has no outputs and is left as is).

    Returns the notebook JupyterLab opens, relative to ``notebooks`` ("" for none): the
    executed copy, or the original when the run failed.
    """
    original = notebooks / QUICKSTART
    if not original.exists():
        return ""
    copy = notebooks / DEMO_RUN / QUICKSTART
    copy.parent.mkdir(exist_ok=True)
    copy.unlink(missing_ok=True)  # a copy from an earlier demo would show stale data
    say(f"running {QUICKSTART} against the sandbox ...")
    started = time.monotonic()
    env = {name: value for name, value in os.environ.items()
           if not name.startswith("PAYNB_") or name in _KEPT}
    # No profile applies, so paynb.connect() takes the announced demo sandbox.
    env["PAYNB_CONFIG"] = str(copy.parent / "no-config.toml")
    client = None
    # nbclient swaps these for handlers of its own during a run; an interrupted run
    # leaves them in place.
    handlers = {number: signal.getsignal(number) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        import nbformat
        from nbclient import NotebookClient

        notebook = nbformat.read(original, as_version=4)
        client = NotebookClient(notebook, timeout=120, kernel_name="python3",
                                store_widget_state=False,
                                resources={"metadata": {"path": str(copy.parent)}})
        client.execute(env=env, stdout=log, stderr=log)
    except BaseException as exc:
        # During a run nbclient takes Ctrl-C (and SIGTERM) itself: it shuts the kernel
        # down, which fails the run with some other error (only that signal handler sets
        # the attribute below). The demo must stop then.
        if getattr(client, "_async_cleanup_kernel_future", None) is not None:
            raise KeyboardInterrupt from exc
        if not isinstance(exc, Exception):
            raise
        # Whatever else failed, the user still gets the notebook.
        log.write(f"running {original} failed: {exc!r}\n".encode())
        say(f"  it failed ({_reason(exc)}; details in {log.name})")
        say(f"  JupyterLab opens the original {original}, without outputs")
        return QUICKSTART
    finally:
        signal.set_wakeup_fd(-1)  # its event loop's, closed by now
        for number, handler in handlers.items():
            signal.signal(number, handler)
    # A widget (the list's progress bar) lived in the kernel that ran the copy, which is
    # gone: JupyterLab would show only its text, a bar stuck at a few percent.
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs = [output for output in cell.outputs
                            if _WIDGET not in output.get("data", {})]
    nbformat.write(notebook, copy)
    say(f"  done in {time.monotonic() - started:.0f} s; JupyterLab opens the executed copy")
    say(f"  {copy} (rewritten by every demo; the original is {original})")
    return f"{DEMO_RUN}/{QUICKSTART}"


def _reason(exc: Exception) -> str:
    """One line on why a notebook run failed (a cell's error is many lines of traceback)."""
    name = getattr(exc, "ename", None)
    return f"{name}: {getattr(exc, 'evalue', None)}" if name else why(exc)


def _wait_listening(host: str, port: int, lab: subprocess.Popen[bytes]) -> None:
    """Until JupyterLab accepts connections (at most a minute), so the URL works when shown."""
    for _ in range(240):
        if lab.poll() is not None:
            return
        with socket.socket() as probe:
            probe.settimeout(0.25)
            if probe.connect_ex((host, port)) == 0:
                return
        threading.Event().wait(0.25)


def _any_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]
