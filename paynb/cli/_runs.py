"""``paynb monitor`` (the morning run, for schedulers), ``paynb history rebuild`` and
``paynb journal copy``. What a scheduler reads: the exit status (0 ok, 1 warnings, 2
breach, 3 could not run), one line per company on standard output, problems on standard
error.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import functools
import logging
import os
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import IO, Any

from paynb import config
from paynb.cli._output import err, say, why
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
from paynb.sandbox import ensure_running

__all__ = ["copy_journal", "rebuild_history", "run_monitor"]

logger = logging.getLogger("paynb")


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
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always", PaynbWarning)
        try:
            config.check_names()
            if args.sandbox:
                return None, {}
            settings = config.resolve(args.profile)
            if settings is None:
                raise ValidationError({"profile": ["nothing configured"]}, message=(
                    "nothing to monitor: no profile and no PAYNB_* variables (a scheduler's "
                    "environment is often bare: set PAYNB_PROFILE or give --profile); "
                    "--sandbox runs against the demo sandbox"))
            return settings, config.profile_options(args.profile) \
                if settings.environment not in ("env", "custom") else {}
        finally:
            for warning in said:
                err(f"paynb monitor: warning: {warning.message}")


def _monitor_clients(args: argparse.Namespace
                     ) -> tuple[list[tuple[str, Callable[[], Any]]], dict[str, object]]:
    """``(company, factory)`` for each company to check, and the profile's options."""
    settings, options = _monitor_settings(args)
    if settings is None:
        handle = ensure_running()
        return [(c, functools.partial(handle.connect, company_code=c))
                for c in args.company or ["DEMO1", "DEMO2"]], options
    base = settings.client_arguments()  # the profile's environment, journal, user...
    companies = args.company or _words(options.get("companies")) or [base["company_code"]]
    return [(c, functools.partial(Client, **{**base, "company_code": c}))
            for c in companies], options


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
        err(f"paynb monitor: warning: {' '.join(str(message).split())}")


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


def _failed(command: str, company: str, exc: Exception, what: str, way_out: str = "") -> None:
    """Say that ``command`` could not ``what`` for ``company``; a bug with its traceback."""
    if not isinstance(exc, PaynbError | OSError | ValueError):
        logger.exception("%s: %s failed unexpectedly", command, company)
    err(f"{command}: {company}: could not {what}: {why(exc)}{way_out}")


def run_monitor(args: argparse.Namespace) -> int:
    with _run_output(args.verbose):
        return _monitor(args)


def _monitor(args: argparse.Namespace) -> int:
    try:
        # Lazy: the monitor brings pandas and the run's libraries, which `paynb sandbox`
        # and `paynb demo` do without; and an import that fails here reads as exit 3.
        from paynb import monitor

        monitor.require_extra()
        clients, options = _monitor_clients(args)
        repeat = args.repeat or str(options.get("repeat", monitor.REPEAT))
        monitor.Repeat.parse(repeat, "--repeat" if args.repeat else "the profile's repeat")
    except Exception as exc:  # a configuration problem; 3 whatever it is (see below)
        # paynb's own errors whole: a missing setting's text lists where each can come
        # from, one line each, and never holds a secret.
        err(f"paynb monitor: could not run: "
             f"{f'{type(exc).__name__}: {exc}' if isinstance(exc, PaynbError) else why(exc)}")
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
            _failed("paynb monitor", company, exc, "run", _history_way_out(exc, args))
            failed.append(company)
            statuses.append(monitor.EXIT_FAILED)
            continue
        done.append(report)
        statuses.append(report.status)
        say(f"{company}: {report.level.upper()} (status {report.status}); "
             f"{len(report.news.alerts)} new alert(s)"
             + (f"; report {report.html}" if report.html else ""))
        if report.news.worth_sending and not notify and not args.dry_run:
            say(report.title)
            say(report.message)
        for problem in report.problems:
            err(f"paynb monitor: {company}: {problem}")
    if args.metrics:
        try:
            monitor.write_metrics(args.metrics, done, last_success=last_success, failed=failed)
        except OSError as exc:
            err(f"paynb monitor: the metrics could not be written: {why(exc)}")
            statuses.append(monitor.EXIT_FAILED)
    return max(statuses, default=monitor.EXIT_OK)


def rebuild_history(args: argparse.Namespace) -> int:
    """``paynb history rebuild``: fetch every kind again into the history of each company
    the monitor checks (what ``client.sync(rebuild=True)`` does)."""
    try:
        clients, options = _monitor_clients(args)
    except Exception as exc:
        err(f"paynb history rebuild: could not run: {why(exc)}")
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
            _failed("paynb history rebuild", company, exc, "rebuild")
            status = 3
            continue
        say(f"{company}: history rebuilt in {where} "
             f"({int(summary['written'].sum()):,} item versions written)")
    return status


def copy_journal(args: argparse.Namespace) -> int:
    try:
        with Journal(args.destination) as destination:
            done = destination.copy_from(args.source, dry_run=args.dry_run)
    except JournalError as exc:  # its text never holds a password
        err(f"paynb journal copy: {exc}")
        return 2
    say(str(done))
    return 0
