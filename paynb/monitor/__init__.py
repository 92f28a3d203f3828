"""The morning run: paynb checks each company every day, writes the report, and alerts
only on what is new.

::

    import paynb
    from paynb import monitor

    report = monitor.run(paynb.connect())     # sync, checks, report, notifications
    report.findings, report.status, report.html

or from a scheduler: ``paynb monitor [--company CODE] [--metrics FILE] [--repeat 1d]
[--history PATH]`` (exit status 0 nothing to act on, 1 warnings, 2 a breach or an overdue
NOC, 3 could not run): see docs/monitor.md. The run needs the ``monitor`` extra
(``pip install 'paynb[monitor]'``), loaded when a run starts; the pure parts (the
projection, the findings, what is new, the exit status) need none of it.
"""

from __future__ import annotations

from paynb.journal import MonitorRun, Notified
from paynb.monitor._checks import UNAUTHORIZED, WAITING_BANKING_DAYS
from paynb.monitor._extra import EXTRA_MODULES, require_extra
from paynb.monitor._findings import (
    EXIT_BREACH,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_WARNING,
    KINDS,
    LEVELS,
    Finding,
    exit_status,
    worst_level,
)
from paynb.monitor._metrics import write_metrics
from paynb.monitor._news import REPEAT, News, Repeat, diff, ledger_rows, message
from paynb.monitor._notify import NOTIFY_VARIABLE, Delivery, notify_urls
from paynb.monitor._projection import BASE_BANKING_DAYS, HORIZON_DAYS, Projection, project
from paynb.monitor._render import KEEP, default_reports_folder
from paynb.monitor._report import MonitorReport
from paynb.monitor._run import SYNCED_KINDS, run

__all__ = ["BASE_BANKING_DAYS", "EXIT_BREACH", "EXIT_FAILED", "EXIT_OK", "EXIT_WARNING",
           "EXTRA_MODULES", "HORIZON_DAYS", "KEEP", "KINDS", "LEVELS", "NOTIFY_VARIABLE", "REPEAT",
           "SYNCED_KINDS", "UNAUTHORIZED", "WAITING_BANKING_DAYS", "Delivery", "Finding",
           "MonitorReport", "MonitorRun", "News", "Notified", "Projection", "Repeat",
           "default_reports_folder", "diff", "exit_status", "ledger_rows", "message",
           "notify_urls", "project", "require_extra", "run", "worst_level", "write_metrics"]
