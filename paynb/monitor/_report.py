"""The outcome of a morning run for one company: :class:`MonitorReport`, its findings and
the frames behind them, shown in a notebook cell, drawn, saved for the report notebook,
and written as the compliance workbook."""

from __future__ import annotations

import datetime as dt
import html
import os
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paynb.compliance import CATEGORIES, WARNING_SHARE
from paynb.monitor._findings import Finding, exit_status, worst_level
from paynb.monitor._news import News, worst_first

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes

    from paynb.monitor._checks import Measured
    from paynb.monitor._notify import Delivery

__all__ = ["MonitorReport"]

_COLORS = {"ok": "#2E7D32", "info": "#455A64", "warning": "#B26A00", "breach": "#C62828"}
_MARKS = {"ok": "ok", "info": "info", "warning": "WARNING", "breach": "BREACH"}
# A projection's levels now, mildest first: the worst rate is drawn first.
_WORSE = ("no entries", "ok", "warning", "over")
#: Extra sheets of the workbook, after the compliance report's.
_SHEETS = ("findings", "noc_obligations", "new_returns", "returns_by_reason",
           "waiting", "unknown_submissions")


def _table(frame: pd.DataFrame, empty: str) -> str:
    if frame is None or frame.empty:
        return f"<p class='paynb-empty'><i>{html.escape(empty)}</i></p>"
    shown = frame.copy()
    for name in shown.columns:
        if str(shown[name].dtype).startswith("datetime64"):
            shown[name] = shown[name].dt.strftime("%Y-%m-%d %H:%M").str.replace(
                " 00:00", "", regex=False)
    return str(shown.to_html(index=False, escape=True, na_rep="", classes="paynb-table",
                             border=0))


@dataclass
class MonitorReport:
    """One company's morning run: what was found, what was new, what was sent.

    Attributes:
        company: the company code.
        environment: where the run looked, as the client's repr says it
            (``sandbox (simulated, nothing is paid)``, ``REAL SERVICE <host> (...)``).
        service: the service's address.
        as_of: the service's time measured (the sync's).
        started: when the run started (UTC, this machine's clock).
        previous: ``as_of`` of the previous successful run (None: the first).
        findings: every :class:`~paynb.monitor.Finding`, worst first.
        news: what is new against the notification ledger (:class:`News`).
        measured: the frames behind the findings (``rates``, ``nocs``, ``new_returns``,
            ``returns_by_reason``, ``waiting``, ``unknown``, ``exposure``, ``rolling``,
            ``projections``, ``compliance``: the :class:`paynb.compliance.ComplianceReport`).
        sync: the sync's summary (one row per kind), None when the run did not sync.
        title, message: the notification's title and body.
        deliveries: what became of each notification (none sent: empty).
        html, workbook: the report's files (None when not written).
        problems: what went wrong (a report that could not be rendered, a delivery that
            failed); any makes the exit status 3.
    """

    company: str
    environment: str
    service: str
    as_of: dt.datetime
    started: dt.datetime
    previous: dt.datetime | None
    findings: list[Finding]
    news: News
    measured: Measured
    sync: Any = None
    title: str = ""
    message: str = ""
    deliveries: list[Delivery] = field(default_factory=list)
    html: Path | None = None
    workbook: Path | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def level(self) -> str:
        """The worst level found (``ok``, ``info``, ``warning`` or ``breach``)."""
        return worst_level(self.findings)

    @property
    def status(self) -> int:
        """The exit status of this company's run (see :func:`paynb.monitor.exit_status`)."""
        return exit_status(self.findings, failed=bool(self.problems))

    @property
    def delivered(self) -> bool:
        """Whether every notification sent was delivered (True when none was sent)."""
        return all(d.delivered for d in self.deliveries)

    def frames(self) -> dict[str, pd.DataFrame]:
        """The frames behind the findings, by the name of their sheet in the workbook."""
        import pandas as pd

        findings = pd.DataFrame([{"level": f.level, "kind": f.kind, "key": f.key,
                                  "finding": f.title, "new": f.key in self._new_keys()}
                                 for f in self.findings],
                                columns=["level", "kind", "key", "finding", "new"])
        m = self.measured
        return {"findings": findings, "rates": m.rates, "noc_obligations": m.nocs,
                "new_returns": m.new_returns, "returns_by_reason": m.returns_by_reason,
                "waiting": m.waiting, "unknown_submissions": m.unknown,
                "exposure_by_day": m.exposure}

    def _new_keys(self) -> set[str]:
        return {f.key for f in self.news.alerts}

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Keep the report in a file (pickle) for the report notebook; see :meth:`load`."""
        path = Path(path)
        with path.open("wb") as handle:
            pickle.dump(self, handle, protocol=pickle.HIGHEST_PROTOCOL)
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> MonitorReport:
        """A report kept by :meth:`save` (only files this machine's paynb wrote: a pickle
        runs code when read)."""
        with Path(path).open("rb") as handle:
            report = pickle.load(handle)
        if not isinstance(report, cls):
            raise TypeError(f"{path} does not hold a MonitorReport")
        return report

    def to_excel(self, path: str | os.PathLike[str], /) -> Path:
        """The compliance workbook (:meth:`paynb.compliance.ComplianceReport.to_excel`) with
        the run's sheets added: findings, NOC obligations, new returns and their reasons,
        items still waiting, submissions with no answer."""
        frames = self.frames()
        return Path(self.measured.compliance.to_excel(
            path, sheets={name: frames[name] for name in _SHEETS}))

    def plot_rates(self, ax: Axes | None = None) -> Axes:
        """The three rates over the last 90 days as a share of their thresholds, and each
        one's projection ahead (dashed) until it crosses, or 60 days (a rate over its
        threshold already: 60 days). The worst rate first (its lines are the Axes' first
        two, and the legend's first entry). Returns the Axes."""
        import matplotlib.pyplot as plt
        import pandas as pd
        from matplotlib.ticker import PercentFormatter

        if ax is None:
            _, ax = plt.subplots(figsize=(10, 4.2))
        colors = {"unauthorized": "#C44E52", "administrative": "#8172B3",
                  "overall": "#4C72B0"}
        rolling = self.measured.rolling
        top = 100.0
        projections = self.measured.projections
        for category in sorted(CATEGORIES, key=lambda c: -_WORSE.index(
                projections[c.name].level_now)):
            rows = rolling[rolling["category"] == category.name]
            values = rows["rate"].astype("float64") / category.threshold * 100
            ax.plot(rows["date"], values, color=colors[category.name], lw=1.6,
                    label=f"{category.name} (threshold {category.threshold:.1%})")
            path = projections[category.name].path
            if path:
                days = pd.to_datetime([day for day, _ in path])
                ahead = [float("nan") if rate is None else rate / category.threshold * 100
                         for _, rate in path]
                ax.plot(days, ahead, color=colors[category.name], lw=1.2, ls="--")
                top = max(top, *(v for v in ahead if v == v), 0)
            top = max(top, float(values.max()) if len(values.dropna()) else 0)
        ax.axhspan(WARNING_SHARE * 100, 100, color="#F2C14E", alpha=0.25,
                   label=f"warning ({WARNING_SHARE:.0%} of threshold)")
        ax.axhline(100, color="#C62828", lw=1.2, ls="--", label="threshold")
        ax.axvline(pd.Timestamp(self.as_of.date()), color="#707070", lw=0.8)
        ax.set_ylim(0, top * 1.15)
        ax.yaxis.set_major_formatter(PercentFormatter(decimals=0))
        ax.set_ylabel("Share of threshold")
        ax.set_title(f"{self.company}: 60-day return rates; dashed: at the last 14 banking "
                     "days' pace")
        ax.legend(loc="upper left", fontsize="small")
        ax.figure.autofmt_xdate()
        return ax

    def plot_exposure(self, ax: Axes | None = None) -> Axes:
        """Debits still returnable per settlement day (standard and extended windows)."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(10, 3.6))
        table = self.measured.exposure
        if table.empty:
            ax.set_title("Nothing returnable")
            return ax
        standard = table["standard_amount"].astype("float64").to_numpy()
        extended = table["unauthorized_amount"].astype("float64").to_numpy()
        extended = extended * (table["standard_count"].to_numpy() == 0)
        ax.bar(table["settleDate"], standard, color="#64B5CD", label="standard window")
        ax.bar(table["settleDate"], extended, bottom=standard, color="#C44E52",
               label="extended (unauthorized) window only")
        ax.set_ylabel("Amount")
        ax.set_title(f"{self.company}: debits still returnable, by settlement day")
        ax.legend(loc="upper left", fontsize="small")
        ax.figure.autofmt_xdate()
        return ax

    def header_html(self) -> str:
        """The top of the report: environment, company, day, worst level, what is new."""
        level = self.level
        where = f"{self.environment}: {self.service}"
        since = f"{self.previous:%Y-%m-%d %H:%M} UTC" if self.previous else "none (first run)"
        return (
            f"<div class='paynb-monitor-header paynb-level-{level}' style='border-left:6px "
            f"solid {_COLORS[level]};padding:0.3em 0.8em'>"
            f"<h1>paynb morning run: {html.escape(self.company)}</h1>"
            f"<p><b>{html.escape(where)}</b></p>"
            f"<p>As of {self.as_of:%Y-%m-%d %H:%M} UTC (the service's time); previous run "
            f"{since}. Worst level: <b style='color:{_COLORS[level]}'>{_MARKS[level]}</b>; "
            f"{len(self.news.alerts)} new alert(s), {self._standing()} standing "
            f"breach(es).</p></div>")

    def _standing(self) -> int:
        """Breaches notified before that still stand, said again this run or not."""
        return sum(f.level == "breach" for f in [*self.news.standing, *self.news.held])

    def findings_html(self) -> str:
        """Every finding, worst first, the new ones marked."""
        new = self._new_keys()
        rows = []
        for finding in worst_first(self.findings):
            mark = "NEW " if finding.key in new else ""
            rows.append(f"<tr class='paynb-level-{finding.level}'><td style='color:"
                        f"{_COLORS[finding.level]};font-weight:bold'>{_MARKS[finding.level]}"
                        f"</td><td>{mark}</td><td>{html.escape(finding.title)}</td></tr>")
        return ("<table class='paynb-table paynb-findings'><thead><tr><th>level</th>"
                "<th></th><th>finding</th></tr></thead><tbody>" + "".join(rows)
                + "</tbody></table>")

    def message_html(self) -> str:
        """The notification as sent (channels named by scheme only)."""
        sent = "".join(f"<li>{html.escape(str(d))}</li>" for d in self.deliveries)
        return (f"<pre class='paynb-message'>{html.escape(self.title)}\n\n"
                f"{html.escape(self.message)}</pre>" + (f"<ul>{sent}</ul>" if sent else ""))

    def section_html(self, name: str) -> str:
        """One table of the report: ``rates``, ``nocs``, ``new_returns``,
        ``returns_by_reason``, ``waiting``, ``unknown`` or ``exposure``."""
        m = self.measured
        if name == "rates":
            columns = ["category", "returns", "entries", "rate", "threshold", "level",
                       "projected_warning", "projected_over"]
            shown = m.rates[columns].copy()
            shown["rate"] = shown["rate"].map(lambda v: "" if v != v else f"{v:.2%}")
            shown["threshold"] = shown["threshold"].map(lambda v: f"{v:.1%}")
            return _table(shown, "no rates")
        if name == "nocs":
            columns = ["nocId", "changeCode", "changeReason", "yourReferenceNumber",
                       "bankAccountNumber", "received", "dueDate", "state"]
            return _table(m.nocs[columns] if not m.nocs.empty else m.nocs,
                          "No NOC overdue or due within two banking days.")
        tables = {"new_returns": (m.new_returns, "No return came in."),
                  "returns_by_reason": (m.returns_by_reason, "No return came in."),
                  "waiting": (m.waiting, "No item waits past its cut-off."),
                  "unknown": (m.unknown, "No submission waits for reconcile().")}
        if name in tables:
            return _table(*tables[name])
        if name == "exposure":
            total = m.exposure_total
            return (f"<p>Standard window (any return code): <b>{total['standard_amount']:,.2f}"
                    f"</b> in {total['standard_count']:,} debits; extended window "
                    f"(unauthorized, consumer entries): <b>{total['unauthorized_amount']:,.2f}"
                    f"</b> in {total['unauthorized_count']:,} debits. The two overlap.</p>")
        raise ValueError(f"name must be a section of the report; got {name!r}")

    def _repr_html_(self) -> str:
        return (self.header_html() + self.findings_html() + "<h3>Message</h3>"
                + self.message_html() + (f"<p>Report: {html.escape(str(self.html))}</p>"
                                         if self.html else ""))

    def __repr__(self) -> str:
        lines = [f"MonitorReport {self.company} ({self.environment}) as of "
                 f"{self.as_of:%Y-%m-%d %H:%M} UTC: {self.level}, status {self.status}"]
        lines += [f"  {finding}" for finding in worst_first(self.findings)
                  if finding.level != "ok"][:20]
        lines += [f"  problem: {p}" for p in self.problems]
        return "\n".join(lines)

