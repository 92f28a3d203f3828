"""One morning run for one company: sync, checks, report, notification, ledger."""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from paynb._time import utc_moment
from paynb.errors import ValidationError
from paynb.journal import MonitorRun
from paynb.monitor._checks import WAITING_BANKING_DAYS, measure
from paynb.monitor._extra import require_extra
from paynb.monitor._findings import worst_level
from paynb.monitor._news import REPEAT, Repeat, diff, ledger_rows, message
from paynb.monitor._notify import deliver, notify_urls
from paynb.monitor._render import KEEP, default_reports_folder, prune, render, report_paths
from paynb.monitor._report import MonitorReport

__all__ = ["SYNCED_KINDS", "run"]

logger = logging.getLogger("paynb.monitor")

#: What a run syncs: the kinds its checks read.
SYNCED_KINDS = ("ach", "rcc", "nocs")


def _positive(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValidationError.for_argument(name, "must be a whole number, 1 or more")
    return value


def _synced_at(client: Any, history: Any) -> dt.datetime:
    """The service's time of the history's last sync (what the run measures)."""
    text = history.info().get("syncedAt")
    if not text:
        now: dt.datetime = client.context.clock.now()
        return now
    return utc_moment(text, "the history's syncedAt")


def run(client: Any, *, sync: bool = True, notify: str | Sequence[str] | None = None,
        send: bool = True, reports: str | os.PathLike[str] | None = None,
        report: bool = True, keep: int = KEEP, report_url: str | None = None,
        waiting_days: int = WAITING_BANKING_DAYS, repeat: str = REPEAT,
        progress: bool | None = False) -> MonitorReport:
    """The morning run for the client's company: what ``paynb monitor`` does for each
    company (docs/monitor.md, "What one run does").

    1. Syncs the local history (``client.sync``: ACH, RCC and NOCs).
    2. Checks: the NACHA return rates with a projection, NOC obligations, the returns
       since the previous run, items still ``W`` late, submissions journaled
       ``unknown``, the money still returnable.
    3. Writes the HTML report and the compliance workbook in ``reports/<company>/``,
       keeping the newest ``keep`` runs.
    4. Says what is new to every notification URL (new or worse alerts, a standing
       breach once per ``repeat``, what cleared); the journal's ledger remembers what
       was said and when, once delivered.

    Args:
        client: a :class:`paynb.Client` with a journal (the ledger lives there).
        sync: False to check the history as last synced, without syncing.
        notify: apprise URLs (a string of URLs separated by whitespace, or a list);
            None: ``$PAYNB_NOTIFY``. With none, the message is only on the report (and
            printed by ``paynb monitor``).
        send: False for a dry run: nothing is sent and the ledger is left as it is.
        reports: the reports folder (default: ``reports`` in the user's data folder).
        report: False to write no HTML report and workbook.
        keep: runs kept per company in the reports folder.
        report_url: where the reports folder is served, for the message's link
            (``https://reports.example.com/paynb``); default: the file's path.
        waiting_days: banking days after receipt (or the requested send day) after
            which an item still ``W`` is late.
        repeat: how often a breach that stands is said again (as Alertmanager's
            ``repeat_interval``): ``"1d"`` once per banking day (the default), ``"2d"``,
            ``"4h"``, ``"30m"``, or ``"0"`` for every run (:class:`Repeat`).
        progress: show the sync's progress bars.

    Returns:
        A :class:`MonitorReport`: findings, frames, message, deliveries, files; its
        ``status`` is the exit status (``problems`` lists what went wrong).

    Raises:
        paynb.errors.MissingExtraError: the ``monitor`` extra is not installed.
        paynb.errors.PaynbError: the client has no journal, or the service or the history
            could not be read (a network or configuration problem: ``paynb monitor``
            exits 3).
    """
    require_extra()
    keep = _positive(keep, "keep")
    waiting_days = _positive(waiting_days, "waiting_days")
    interval = Repeat.parse(repeat)
    urls = notify_urls(notify)
    journal = client.context.require_journal()
    ledger = journal.monitor
    company = client.company_code
    started = dt.datetime.now(dt.UTC)
    previous = ledger.last_success(company)
    summary = None
    if sync:
        summary = client.sync(kinds=SYNCED_KINDS, progress=progress)
    history = client.history  # one History, one state of the store, for the whole run
    as_of = _synced_at(client, history)
    measured = measure(client, history, as_of=as_of, since=previous.as_of if previous else None,
                       waiting_days=waiting_days, report=report)
    notified = ledger.notified(company)  # read once: nothing below writes it before the end
    client.context.clock.identify()  # a sandbox reached by its URL is titled the sandbox
    news = diff(measured.findings, notified, as_of=as_of, repeat=interval)
    result = MonitorReport(
        company=company, environment=client.environment.label, service=client.base_url,
        as_of=as_of, started=started, previous=previous.as_of if previous else None,
        findings=measured.findings, news=news, measured=measured, sync=summary)
    folder = Path(reports).expanduser() if reports is not None else default_reports_folder()
    link = None
    if report:
        html, workbook = report_paths(folder, company, started)
        link = report_url.rstrip("/") + "/" + html.relative_to(folder).as_posix() \
            if report_url else str(html)
    result.title, result.message = message(
        company=company, environment=client.environment.label, as_of=as_of,
        findings=measured.findings, news=news, report=link)
    if report:
        try:
            workbook.parent.mkdir(parents=True, exist_ok=True)
            result.workbook = result.to_excel(workbook)
            result.html = render(result, html)
            prune(folder, company, keep)
        except Exception as exc:  # the findings and the message still go out
            logger.error("the report of %s could not be written: %s", company, exc)
            result.problems.append(f"the report could not be written: "
                                   f"{type(exc).__name__}: {exc}")
    delivered = "nothing"
    if send and news.worth_sending:
        if urls:
            result.deliveries = deliver(urls, result.title, result.message,
                                        level=worst_level(news.alerts or news.standing))
            failed = [d for d in result.deliveries if not d.delivered]
            delivered = "failed" if failed else "sent"
            result.problems += [f"{d} (the findings stay new until delivered)"
                                for d in failed]
        else:
            delivered = "printed"
    if send:
        if delivered != "failed":
            ledger.record(company, ledger_rows(measured.findings, news, notified, as_of))
        ledger.record_run(MonitorRun(company, started, as_of, result.status,
                                     None if result.html is None else str(result.html),
                                     delivered))
    return result
