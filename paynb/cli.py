"""The ``paynb`` command: ``paynb sandbox`` serves the sandbox, ``paynb demo`` adds JupyterLab,
``paynb monitor`` runs the morning checks (for schedulers: cron, systemd, Airflow),
``paynb journal copy`` copies an analyst's journal into the team's, ``paynb history
rebuild`` builds the local history again from the service.

``paynb sandbox`` and ``paynb demo`` announce the sandbox in the discovery file, so
``paynb.connect()`` in a notebook (or any other process) reuses it instead of starting
another. While
JupyterLab starts, ``paynb demo`` runs the quickstart notebook against the sandbox
into a copy, so the first screen shows its tables and chart.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import html
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from paynb import config
from paynb.client import Client
from paynb.errors import (
    HistoryCorruptError,
    HistoryError,
    HistoryLockedError,
    PaynbError,
    PaynbWarning,
    ValidationError,
)
from paynb.journal import Journal, JournalError
from paynb.sandbox import DEMO_ITEMS, ensure_running, serve
from paynb.sandbox.server import (
    announce,
    check_port,
    check_serve_options,
    default_db_path,
    discovery_path,
    withdraw,
)

__all__ = ["DESCRIPTION", "main"]

#: What ``paynb --help`` says first.
DESCRIPTION = ("paynb's commands: the sandbox, the demo (the sandbox with JupyterLab), the "
               "morning run, journals and the local history.")

logger = logging.getLogger("paynb")


def _say(text: str = "") -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


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
    _say(f"port {wanted} is busy; {what} takes a free port instead")
    return 0


def _sandbox_arguments(parser: argparse.ArgumentParser, *, default_items: int) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8000, help="port (0: any free port)")
    parser.add_argument("--seed-items", type=int, default=default_items,
                        help="ACH items of demo data for an empty database")
    parser.add_argument("--seed", type=int, default=1, help="seed of the demo data")
    parser.add_argument("--latency-ms", type=float, default=0.0,
                        help="latency added to every service call")
    parser.add_argument("--error-rate", type=float, default=0.0,
                        help="share of service calls answered 503 (0 to 1)")
    parser.add_argument("--token-ttl", type=float, default=3600.0,
                        help="token lifetime in seconds")


def _start(args: argparse.Namespace, db: str | None):
    check_serve_options(port=args.port, seed_items=args.seed_items, token_ttl=args.token_ttl,
                        latency_ms=args.latency_ms, error_rate=args.error_rate)
    port = _port(args.host, args.port, "the sandbox")
    _say("starting the paynb sandbox" + (f" (data in {db})" if db else " (data in memory)")
         + " ...")
    sb = serve(host=args.host, port=port, db=db, seed=args.seed, seed_items=args.seed_items,
               token_ttl=args.token_ttl, latency_ms=args.latency_ms,
               error_rate=args.error_rate)
    announce(sb)
    creds = sb.credentials
    _say(f"sandbox     {sb.base_url}   (API docs: {sb.base_url}/docs)")
    _say(f"  base URL      {sb.base_url}")
    _say(f"  auth URL      {sb.auth_url}   (token: {sb.auth_url}/connect/token)")
    _say(f"  company code  {sb.company_code}   (user analyst also holds DEMO2)")
    _say(f"  client        {creds.client_id} / {creds.client_secret}")
    _say(f"  user          {creds.username} / {creds.password}")
    return sb


def _stop(sb: object) -> None:
    withdraw(sb)  # type: ignore[arg-type]
    sb.close()  # type: ignore[attr-defined]
    _say("sandbox stopped")


def _wait(lab: subprocess.Popen[bytes] | None = None, log: Path | None = None) -> None:
    """Until Ctrl-C, SIGTERM, or JupyterLab (when given) exits by itself (then the end of
    its ``log`` is shown)."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with contextlib.suppress(KeyboardInterrupt):
        while not stop.wait(0.5):
            if lab is not None and lab.poll() is not None:
                tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
                _say(f"JupyterLab exited (log: {log}):\n{tail}")
                return


def _cmd_sandbox(args: argparse.Namespace) -> int:
    sb = _start(args, args.db)
    _say("Ctrl-C stops it.")
    try:
        _wait()
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        _stop(sb)
    return 0


def _cmd_demo(args: argparse.Namespace) -> int:
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
        if not _has_jupyterlab():
            _say("JupyterLab is not installed: pip install 'paynb[dev]' (the sandbox runs on).")
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
        _say(f"JupyterLab  {url}")
        _say(f"  notebooks in {notebooks}")
        _say(f"  log in {log_path}")
        _say(f"ready in {time.monotonic() - started:.0f} s. Ctrl-C stops both.")
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
            _say("JupyterLab stopped")
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
    _say(f"running {QUICKSTART} against the sandbox ...")
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
        _say(f"  it failed ({_reason(exc)}; details in {log.name})")
        _say(f"  JupyterLab opens the original {original}, without outputs")
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
    _say(f"  done in {time.monotonic() - started:.0f} s; JupyterLab opens the executed copy")
    _say(f"  {copy} (rewritten by every demo; the original is {original})")
    return f"{DEMO_RUN}/{QUICKSTART}"


def _reason(exc: Exception) -> str:
    """One line on why a notebook run failed (a cell's error is many lines of traceback)."""
    name, value = getattr(exc, "ename", None), getattr(exc, "evalue", None)
    if name:
        return f"{name}: {value}"
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"


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


def _has_jupyterlab() -> bool:
    import importlib.util

    return importlib.util.find_spec("jupyterlab") is not None



def _err(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def _words(value: object) -> list[str]:
    """A profile value that lists things: a TOML list, or text separated by commas or
    whitespace (INI)."""
    if value is None:
        return []
    if isinstance(value, list):
        return [str(v).strip() for v in value if str(v).strip()]
    return [part for part in str(value).replace(",", " ").split() if part]


def _monitor_settings(args: argparse.Namespace) -> tuple[Any, dict[str, object]]:
    """The connection settings (``None`` with ``--sandbox``) and the profile's options.

    What the configuration warns of (a profile holding a secret that others can read) is
    said on standard error whatever else is quieted: cron mails it to who can fix it."""
    import warnings

    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", PaynbWarning)
        try:
            return _monitor_configuration(args)
        finally:
            for warning in said:
                _err(f"paynb monitor: warning: {warning.message}")


def _monitor_configuration(args: argparse.Namespace) -> tuple[Any, dict[str, object]]:
    config.check_names()
    if args.sandbox:
        return None, {}
    named = args.profile or os.environ.get(config.PROFILE_VARIABLE)
    settings = config.from_profile(named) if named else (
        config.from_env() or config.from_profile())
    if settings is None:
        raise ValidationError({"profile": ["nothing configured"]}, message=(
            "nothing to monitor: no profile and no PAYNB_* variables (a scheduler's "
            "environment is often bare: set PAYNB_PROFILE or give --profile); "
            "--sandbox runs against the demo sandbox"))
    return settings, config.profile_options(named) if settings.environment not in (
        "env", "custom") else {}


def _monitor_clients(args: argparse.Namespace, settings: Any,
                     options: dict[str, object]) -> list[tuple[str, Callable[[], Any]]]:
    """``(company, factory)`` for each company to check."""
    if settings is None:
        handle = ensure_running()
        companies = args.company or ["DEMO1", "DEMO2"]
        return [(c, functools.partial(handle.connect, company_code=c)) for c in companies]
    base = settings.client_arguments()  # the profile's environment, journal, user...
    companies = args.company or _words(options.get("companies")) or [base["company_code"]]
    return [(c, functools.partial(Client, **{**base, "company_code": c})) for c in companies]


def _why(exc: BaseException) -> str:
    """One line saying why a company's run could not be done (no secret: paynb's errors
    never hold one; others are named by type and first line)."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"


class _Shown(logging.Filter):
    """What a scheduled run writes on standard error besides its own lines: paynb's
    warnings and everyone's errors. The libraries' chatter (apprise's and jupyter's info
    and debug lines, their warnings) waits for ``--verbose``; ``paynb.monitor``'s own
    lines are the report's problems, which the command writes once each."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno >= logging.ERROR:
            return not record.name.startswith("paynb.monitor")
        return record.levelno >= logging.WARNING and record.name.split(".")[0] == "paynb" \
            and not record.name.startswith("paynb.monitor")


def _paynb_warning(message: Warning | str, category: type[Warning], filename: str,
                   lineno: int, file: IO[str] | None = None, line: str | None = None) -> None:
    """A warning as a scheduled run shows it: paynb's on one line, the libraries' not."""
    if issubclass(category, PaynbWarning):
        _err(f"paynb monitor: warning: {' '.join(str(message).split())}")


@contextlib.contextmanager
def _run_output(verbose: bool) -> Iterator[None]:
    """Standard error of ``paynb monitor``: one line per company from the command, and
    real errors; with ``verbose``, every library's log lines from INFO on and every
    warning."""
    root = logging.getLogger()
    level, shown = root.level, _Shown()
    with warnings.catch_warnings():
        if verbose:
            root.setLevel(logging.INFO)
        else:
            warnings.showwarning = _paynb_warning
            for handler in root.handlers:
                handler.addFilter(shown)
        try:
            yield
        finally:
            root.setLevel(level)
            for handler in root.handlers:
                handler.removeFilter(shown)


def _history_way_out(exc: BaseException, args: argparse.Namespace) -> str:
    """The command line's way out of a history error, whose text names the Python one
    (``client.sync(rebuild=True)``, ``client.sync(path=...)``): a table that cannot be
    read is built again by ``paynb history rebuild``; a store of another service, or a
    folder that cannot be written, needs a folder of the run's own."""
    if not isinstance(exc, HistoryError) or isinstance(exc, HistoryLockedError):
        return ""
    elsewhere = ("`paynb monitor --history PATH` gives the run a folder of its own "
                 "(docs/monitor.md, \"Where the history lives\").")
    if not isinstance(exc, HistoryCorruptError):
        return f" From the command line: {elsewhere}"
    command = ["paynb history rebuild", *(["--sandbox"] if args.sandbox else []),
               *(["--profile", args.profile] if args.profile else []),
               *(["--history", args.history] if args.history else [])]
    return (f" From the command line: `{' '.join(command)}` builds it again from the "
            f"service, or {elsewhere}")


def _cmd_monitor(args: argparse.Namespace) -> int:
    with _run_output(args.verbose):
        return _monitor(args)


def _monitor(args: argparse.Namespace) -> int:
    import datetime as dt

    try:
        # Lazy: the monitor brings pandas and the run's libraries, which `paynb sandbox`
        # and `paynb demo` do without; and an import that fails here reads as exit 3.
        from paynb import monitor

        monitor.require_extra()
        settings, options = _monitor_settings(args)
        clients = _monitor_clients(args, settings, options)
        repeat = args.repeat or str(options.get("repeat", monitor.REPEAT))
        monitor.Repeat.parse(repeat, "--repeat" if args.repeat else "the profile's repeat")
    except Exception as exc:  # a configuration problem; 3 whatever it is (see below)
        # paynb's own errors whole: a missing setting's text lists where each can come
        # from, one line each, and never holds a secret.
        _err(f"paynb monitor: could not run: "
             f"{f'{type(exc).__name__}: {exc}' if isinstance(exc, PaynbError) else _why(exc)}")
        if args.metrics:  # up 0, not an earlier run's 1, for Prometheus to read
            # (the monitor as imported above: none when the import itself failed)
            imported = sys.modules.get("paynb.monitor")
            with contextlib.suppress(Exception):
                if imported is not None:
                    imported.write_metrics(args.metrics, [], failed=args.company or ())
        return 3  # monitor.EXIT_FAILED (the import itself may be what failed)
    notify = monitor.notify_urls(os.environ.get(monitor.NOTIFY_VARIABLE)
                                 or options.get("notify") or "")
    reports_folder = args.reports or options.get("reports")
    reports_folder = None if reports_folder is None else str(reports_folder)
    history = args.history or options.get("history")
    keep = args.keep if args.keep is not None else int(str(options.get("keep", monitor.KEEP)))
    report_url = args.report_url or options.get("report_url")
    done, failed, statuses = [], [], []
    last_success: dict[str, dt.datetime | None] = {}
    for company, factory in clients:
        try:
            with factory() as client:
                if history:
                    client.history_folder = str(history)
                ledger_before = None
                if client.context.journal is not None:
                    ledger_before = client.context.journal.monitor.last_success(company)
                last_success[company] = ledger_before.started if ledger_before else None
                report = monitor.run(
                    client, sync=not args.no_sync, notify=notify, send=not args.dry_run,
                    reports=reports_folder, report=not args.no_report, keep=keep,
                    report_url=str(report_url) if report_url else None,
                    waiting_days=args.waiting_days, repeat=repeat)
        except Exception as exc:
            # Whatever it was (a bug included), a scheduler must read 3, could not run,
            # not the 1 of a traceback, which would pass for "warnings".
            if not isinstance(exc, PaynbError | OSError | ValueError):
                logger.exception("paynb monitor: %s failed unexpectedly", company)
            _err(f"paynb monitor: {company}: could not run: {_why(exc)}"
                 + _history_way_out(exc, args))
            failed.append(company)
            statuses.append(monitor.EXIT_FAILED)
            continue
        done.append(report)
        statuses.append(report.status)
        _say(f"{company}: {report.level.upper()} (status {report.status}); "
             f"{len(report.news.alerts)} new alert(s)"
             + (f"; report {report.html}" if report.html else ""))
        if report.news.worth_sending and not notify and not args.dry_run:
            _say(report.title)
            _say(report.message)
        for problem in report.problems:
            _err(f"paynb monitor: {company}: {problem}")
    if args.metrics:
        try:
            monitor.write_metrics(args.metrics, done, last_success=last_success, failed=failed)
        except OSError as exc:
            _err(f"paynb monitor: the metrics could not be written: {_why(exc)}")
            statuses.append(monitor.EXIT_FAILED)
    return max(statuses, default=monitor.EXIT_OK)


def _cmd_history_rebuild(args: argparse.Namespace) -> int:
    """``paynb history rebuild``: fetch every kind again into the history of each company
    the monitor checks (what ``client.sync(rebuild=True)`` does)."""
    try:
        settings, options = _monitor_settings(args)
        clients = _monitor_clients(args, settings, options)
    except Exception as exc:
        _err(f"paynb history rebuild: could not run: {_why(exc)}")
        return 3
    history = args.history or options.get("history")
    status = 0
    for company, factory in clients:
        try:
            with factory() as client:
                summary = client.sync(rebuild=True, progress=False,
                                      path=str(history) if history else None)
                where = client.history.path
        except Exception as exc:
            if not isinstance(exc, PaynbError | OSError | ValueError):
                logger.exception("paynb history rebuild: %s failed unexpectedly", company)
            _err(f"paynb history rebuild: {company}: could not rebuild: {_why(exc)}")
            status = 3
            continue
        _say(f"{company}: history rebuilt in {where} "
             f"({int(summary['written'].sum()):,} item versions written)")
    return status


def _cmd_journal_copy(args: argparse.Namespace) -> int:
    try:
        with Journal(args.destination) as destination:
            done = destination.copy_from(args.source, dry_run=args.dry_run)
    except JournalError as exc:  # its text never holds a password
        _err(f"paynb journal copy: {exc}")
        return 2
    _say(str(done))
    return 0


def _group(commands: Any, name: str, text: str) -> Any:
    """The subcommands of command ``name`` (``paynb journal copy``, ``paynb history
    rebuild``)."""
    return commands.add_parser(name, help=text).add_subparsers(dest=f"{name}_command",
                                                                required=True)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``paynb`` console script."""
    parser = argparse.ArgumentParser(prog="paynb", description=DESCRIPTION)
    commands = parser.add_subparsers(dest="command", required=True)
    sandbox = commands.add_parser("sandbox", help="serve the sandbox until Ctrl-C")
    _sandbox_arguments(sandbox, default_items=DEMO_ITEMS)
    sandbox.add_argument("--db", default=None, help="SQLite file (default: in memory)")
    sandbox.set_defaults(run=_cmd_sandbox)
    demo = commands.add_parser("demo", help="the sandbox with demo data and JupyterLab")
    _sandbox_arguments(demo, default_items=DEMO_ITEMS)
    demo.add_argument("--db", default=None, help="SQLite file (default: the demo database)")
    demo.add_argument("--fresh", action="store_true", help="start from new demo data")
    demo.add_argument("--jupyter-port", type=int, default=8888, help="JupyterLab port")
    demo.add_argument("--notebooks", default="notebooks", help="folder JupyterLab opens")
    demo.add_argument("--no-browser", action="store_true",
                      help="only print JupyterLab's URL (else a browser opens it, if there is one)")
    demo.set_defaults(run=_cmd_demo)
    watch = commands.add_parser(
        "monitor", help="the morning run: sync, checks, report, notifications "
                        "(exit 0 ok, 1 warnings, 2 breach or overdue NOC, 3 could not run)")
    watch.add_argument("--profile", help="the profile (default: PAYNB_PROFILE, else the "
                                         "PAYNB_* variables, else the default profile)")
    watch.add_argument("--company", action="append",
                       help="a company to check (repeatable; default: the profile's "
                            "companies, else its company_code)")
    watch.add_argument("--sandbox", action="store_true",
                       help="run against the demo sandbox (DEMO1 and DEMO2)")
    watch.add_argument("--reports", help="the reports folder (default: reports in the "
                                         "user's data folder)")
    watch.add_argument("--keep", type=int, help="runs kept per company (default 30)")
    watch.add_argument("--report-url", help="where the reports folder is served, for the "
                                            "message's link")
    watch.add_argument("--no-report", action="store_true", help="write no HTML report")
    watch.add_argument("--no-sync", action="store_true",
                       help="check the history as last synced")
    watch.add_argument("--dry-run", action="store_true",
                       help="send nothing and leave the notification ledger as it is")
    watch.add_argument("--waiting-days", type=int, default=1,
                       help="banking days after which an item still W is late (default 1)")
    watch.add_argument("--metrics", metavar="FILE",
                       help="write Prometheus metrics to FILE (node_exporter's textfile "
                            "collector)")
    watch.add_argument("--repeat", metavar="INTERVAL",
                       help="how often a breach that stands is said again: 1d once per "
                            "banking day (default), 2d, 4h, 30m, or 0 for every run")
    watch.add_argument("--history", metavar="PATH",
                       help="the local history's folder (default: history/<service> in "
                            "the user's data folder)")
    watch.add_argument("-v", "--verbose", action="store_true",
                       help="show the libraries' log lines and warnings on standard error")
    watch.set_defaults(run=_cmd_monitor)
    rebuild = _group(commands, "history", "work on the local history").add_parser(
        "rebuild", help="fetch everything again into the history of each company the "
                        "monitor checks (client.sync(rebuild=True))")
    rebuild.add_argument("--profile", help="the profile (as for paynb monitor)")
    rebuild.add_argument("--company", action="append", help="a company (repeatable)")
    rebuild.add_argument("--sandbox", action="store_true", help="the demo sandbox")
    rebuild.add_argument("--history", metavar="PATH", help="the history's folder")
    rebuild.set_defaults(run=_cmd_history_rebuild)
    copy = _group(commands, "journal", "work on journals").add_parser(
        "copy", help="copy a journal into another (an analyst's own SQLite journal into the "
                     "team's PostgreSQL one); a second copy adds nothing")
    copy.add_argument("source", help="the journal to copy: a file, or a postgresql:// address")
    copy.add_argument("destination", help="the journal to copy into (created if missing): a "
                                          "file, or a postgresql:// address")
    copy.add_argument("--dry-run", action="store_true",
                      help="say what would be copied, write nothing")
    copy.set_defaults(run=_cmd_journal_copy)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr)
    try:
        return args.run(args)
    except KeyboardInterrupt:  # Ctrl-C before the wait began; cleanup already ran
        return 130
    except (OSError, ValueError) as exc:
        _say(f"paynb {args.command}: {exc}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
