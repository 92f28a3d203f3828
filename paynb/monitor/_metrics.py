"""Prometheus metrics of a run, in the text format node_exporter's textfile collector
reads (written with prometheus-client's ``write_to_textfile``: a temporary file renamed
into place, so the collector never reads half a file)."""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paynb.compliance import CATEGORIES, WARNING_SHARE

if TYPE_CHECKING:
    from paynb.monitor._report import MonitorReport

__all__ = ["write_metrics"]

logger = logging.getLogger("paynb.monitor")
_UP = "paynb_monitor_up"
_LAST_SUCCESS = "paynb_monitor_last_success_timestamp_seconds"


def _earlier(path: str | os.PathLike[str]) -> dict[str, dict[str, float]]:
    """What an earlier run wrote to ``path``: ``{metric: {company: value}}`` of the
    metrics labelled by company alone (empty when there is no such file, or it cannot be
    read)."""
    from prometheus_client.parser import text_string_to_metric_families

    try:
        text = Path(path).read_text(encoding="utf-8")
        families = list(text_string_to_metric_families(text))
    except (OSError, ValueError) as exc:
        logger.debug("no earlier metrics in %s (%s)", path, exc)
        return {}
    return {family.name: {sample.labels["company"]: sample.value for sample in family.samples
                          if set(sample.labels) == {"company"}}
            for family in families}


def write_metrics(path: str | os.PathLike[str], reports: Sequence[MonitorReport], *,
                  last_success: dict[str, dt.datetime | None] | None = None,
                  failed: Sequence[str] = (), now: dt.datetime | None = None) -> Path:
    """Write the metrics of ``reports`` (one per company) to ``path``.

    A report whose run succeeded (no ``problems``) is the company's last success (its
    ``..._seconds_since_last_success`` 0). ``failed`` names companies whose run could not
    be completed (``paynb_monitor_up`` 0, status 3). For those and for runs with
    problems, ``last_success`` gives when the company's last successful run started;
    a company it does not give keeps the time ``path`` held, so that an alert on it
    still fires when the journal cannot be read. ``now`` (default: the current time) is
    what the seconds since are counted to. A run that could not start (no report, no
    company in ``failed``) marks every company of the earlier file failed, or writes
    ``paynb_monitor_up{company=""} 0``: the file never keeps an earlier ``up`` of 1.
    """
    from prometheus_client import CollectorRegistry, Gauge, write_to_textfile

    now = now or dt.datetime.now(dt.UTC)
    registry = CollectorRegistry()

    def gauge(name: str, text: str, labels: Sequence[str] = ("company",)) -> Any:
        return Gauge(name, text, list(labels), registry=registry)

    up = gauge(_UP, "1 when the company's run completed, 0 when it could not")
    status = gauge("paynb_monitor_status", "exit status of the company's run (0-3)")
    rate = gauge("paynb_return_rate", "NACHA return rate over the 60 days ending on the "
                 "day measured (fraction)", ("company", "category"))
    threshold = gauge("paynb_return_rate_threshold", "NACHA threshold of the rate (fraction)",
                      ("company", "category"))
    warning = gauge("paynb_return_rate_warning", "level from which the rate warns "
                    "(fraction)", ("company", "category"))
    returns = gauge("paynb_return_rate_returns", "returns in the rate's window",
                    ("company", "category"))
    entries = gauge("paynb_return_rate_entries", "debit entries in the rate's window",
                    ("company", "category"))
    overdue = gauge("paynb_noc_overdue", "NOC obligations past their due date")
    due_soon = gauge("paynb_noc_due_soon", "NOC obligations due within two banking days")
    new_returns = gauge("paynb_new_returns", "returns that came in since the last run")
    new_unauthorized = gauge("paynb_new_unauthorized_returns",
                             "unauthorized returns that came in since the last run")
    waiting = gauge("paynb_items_waiting_late", "items still W past their cut-off")
    unknown = gauge("paynb_submissions_unknown", "submissions waiting for reconcile()")
    exposure = gauge("paynb_return_exposure", "money still returnable (standard window)")
    undelivered = gauge("paynb_monitor_notifications_failed",
                        "notifications of the run that could not be delivered")
    success = gauge(_LAST_SUCCESS, "when the company's last successful run started "
                    "(Unix time)")
    since = gauge("paynb_monitor_seconds_since_last_success",
                  "seconds from the start of the company's last successful run to now "
                  "(0 when this run succeeded)")
    written = _earlier(path)
    if not reports and not failed:
        failed = list(written.get(_UP, {})) or [""]
    earlier = written.get(_LAST_SUCCESS, {})
    last_success = {**{company: dt.datetime.fromtimestamp(value, dt.UTC)
                       for company, value in earlier.items()},
                    **{company: when for company, when in (last_success or {}).items()
                       if when is not None}}
    for report in reports:
        company, measured = report.company, report.measured
        up.labels(company).set(1)
        status.labels(company).set(report.status)
        for category in CATEGORIES:
            row = measured.rates[measured.rates["category"] == category.name].iloc[0]
            value = row["rate"]
            rate.labels(company, category.name).set(float(value) if value == value else 0.0)
            threshold.labels(company, category.name).set(category.threshold)
            warning.labels(company, category.name).set(category.threshold * WARNING_SHARE)
            returns.labels(company, category.name).set(int(row["returns"]))
            entries.labels(company, category.name).set(int(row["entries"]))
        states = measured.nocs["state"].astype(str) if not measured.nocs.empty else []
        overdue.labels(company).set(int(sum(s == "overdue" for s in states)))
        due_soon.labels(company).set(int(sum(s == "due soon" for s in states)))
        new_returns.labels(company).set(len(measured.new_returns))
        new_unauthorized.labels(company).set(int(measured.new_returns["unauthorized"].sum())
                                             if len(measured.new_returns) else 0)
        waiting.labels(company).set(len(measured.waiting))
        unknown.labels(company).set(len(measured.unknown))
        exposure.labels(company).set(float(measured.exposure_total["standard_amount"]))
        undelivered.labels(company).set(sum(not d.delivered for d in report.deliveries))
        if not report.problems:
            last_success[company] = report.started
    succeeded = {report.company for report in reports if not report.problems}
    for company in [*(r.company for r in reports), *failed]:
        if company in failed:
            up.labels(company).set(0)
            status.labels(company).set(3)
        last = last_success.get(company)
        if last is not None:
            success.labels(company).set(last.timestamp())
            since.labels(company).set(0.0 if company in succeeded
                                      else max(0.0, (now - last).total_seconds()))
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_to_textfile(str(target), registry)
    return target
