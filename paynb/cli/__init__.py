"""The ``paynb`` command: this module reads the command line; ``paynb.cli._serve`` does
``paynb sandbox`` and ``paynb demo``, ``paynb.cli._runs`` ``paynb monitor``, ``paynb
history rebuild`` and ``paynb journal copy``.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from typing import Any

from paynb.cli import _runs, _serve
from paynb.cli._output import say
from paynb.sandbox import DEMO_ITEMS

__all__ = ["DESCRIPTION", "main"]

#: What ``paynb --help`` says first.
DESCRIPTION = ("paynb's commands: the sandbox, the demo (the sandbox with JupyterLab), the "
               "morning run, journals and the local history.")


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
    sandbox.set_defaults(run=_serve.run_sandbox)
    demo = commands.add_parser("demo", help="the sandbox with demo data and JupyterLab")
    _sandbox_arguments(demo, default_items=DEMO_ITEMS)
    demo.add_argument("--db", default=None, help="SQLite file (default: the demo database)")
    demo.add_argument("--fresh", action="store_true", help="start from new demo data")
    demo.add_argument("--jupyter-port", type=int, default=8888, help="JupyterLab port")
    demo.add_argument("--notebooks", default="notebooks", help="folder JupyterLab opens")
    demo.add_argument("--no-browser", action="store_true",
                      help="only print JupyterLab's URL (else a browser opens it, if there is one)")
    demo.set_defaults(run=_serve.run_demo)
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
    watch.set_defaults(run=_runs.run_monitor)
    rebuild = _group(commands, "history", "work on the local history").add_parser(
        "rebuild", help="fetch everything again into the history of each company the "
                        "monitor checks (client.sync(rebuild=True))")
    rebuild.add_argument("--profile", help="the profile (as for paynb monitor)")
    rebuild.add_argument("--company", action="append", help="a company (repeatable)")
    rebuild.add_argument("--sandbox", action="store_true", help="the demo sandbox")
    rebuild.add_argument("--history", metavar="PATH", help="the history's folder")
    rebuild.set_defaults(run=_runs.rebuild_history)
    copy = _group(commands, "journal", "work on journals").add_parser(
        "copy", help="copy a journal into another (an analyst's own SQLite journal into the "
                     "team's PostgreSQL one); a second copy adds nothing")
    copy.add_argument("source", help="the journal to copy: a file, or a postgresql:// address")
    copy.add_argument("destination", help="the journal to copy into (created if missing): a "
                                          "file, or a postgresql:// address")
    copy.add_argument("--dry-run", action="store_true",
                      help="say what would be copied, write nothing")
    copy.set_defaults(run=_runs.copy_journal)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s",
                        stream=sys.stderr)
    try:
        return args.run(args)
    except KeyboardInterrupt:  # Ctrl-C before the wait began; cleanup already ran
        return 130
    except (OSError, ValueError) as exc:
        say(f"paynb {args.command}: {exc}")
        return 2
