"""Explore item statuses: pick a kind, statuses and a return-date range, see the items,
their status counts and the plots of :mod:`paynb.plots`; save them as CSV or XLSX (never
embedded in the notebook, see :meth:`paynb.forms._base.Form._downloads`)."""

from __future__ import annotations

import datetime as dt
import io
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import pandas as pd

from paynb import plots
from paynb._kinds import KINDS
from paynb.codes import STATUS_NAMES, STATUS_ORDER, code_meaning
from paynb.forms._base import (
    Form,
    button,
    data_grid,
    escape,
    grid_frame,
    money_renderers,
    pages_said,
)
from paynb.paging import page_progress

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = ["StatusExplorer"]

logger = logging.getLogger("paynb.forms")

#: kind -> the columns shown in the table beside its id (paynb._kinds knows the rest).
_SHOWN: dict[str, tuple[str, ...]] = {
    "ach": ("yourReferenceNumber", "itemStatus", "itemStatusName", "amount",
            "achTransactionType", "receivedDateTime", "returnDate", "returnReason",
            "returnReasonDescription"),
    "rcc": ("yourReferenceNumber", "itemStatus", "itemStatusName", "amount", "depositDateTime",
            "returnDate", "returnReason", "returnReasonDescription"),
    "instant": ("yourReferenceNumber", "nameOnCard", "cardLastFour", "amount", "status",
                "statusDescription", "receivedDateTime"),
    "rtp": ("yourReferenceNumber", "name", "amount", "status", "statusDescription",
            "receivedDateTime"),
    "noc": ("achItemId", "yourReferenceNumber", "changeCode", "changeReason", "correctedData",
            "nocDate"),
}
#: kind -> (label, client resource, columns shown in the table, column counted)
_KINDS: dict[str, tuple[str, str, tuple[str, ...], str]] = {
    name: (kind.title, kind.table, (kind.id_field, *_SHOWN[name]),
           kind.status_field or "changeCode")
    for name, kind in KINDS.items()}
_FILTERED = {"ach", "rcc"}  # the kinds whose list takes status and return-date filters
_DESCRIPTION = {"description_width": "100px"}  # "Returned from" in full, the pickers aligned
#: The most rows the table holds: a widget's data is saved with the notebook, so a list of
#: tens of thousands would make it large (``form.result`` and a saved file have them all).
GRID_ROWS = 1_000


def display_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` for reading in the table: timestamps as UTC text without the zone suffix,
    a column of midnights (a date-only field such as ``returnDate``) as dates alone.
    The values in ``form.result`` are left as they are."""
    shown = frame.copy()
    for column in shown.columns:
        values = shown[column]
        if not pd.api.types.is_datetime64_any_dtype(values.dtype):
            continue
        # The frames' rule (paynb.frames.UtcInstants): a column of midnights shows dates.
        utc = values.dt.tz_convert("UTC") if values.dt.tz is not None else values
        present = utc.dropna()
        dates_only = bool(len(present)) and bool((present == present.dt.normalize()).all())
        text = utc.dt.strftime("%Y-%m-%d" if dates_only else "%Y-%m-%d %H:%M:%S")
        shown[column] = text.where(utc.notna(), "")
    return shown


def _plot_figure(frame: pd.DataFrame, kind: str) -> Figure | None:
    """The plots of ``frame`` on a Figure outside pyplot (nothing to close, nothing shown
    twice in the notebook); ``None`` without matplotlib or when a plot cannot be drawn.

    ACH and RCC: items per status and the return trend (when some have a return date);
    instant card and RTP: the count and the amount per status; NOC: the change codes.
    """
    try:
        from matplotlib.figure import Figure
    except ImportError:
        return None
    try:
        if kind == "noc":
            fig = Figure(figsize=(11, 0.9 + 0.4 * min(frame["changeCode"].nunique() + 1, 12)),
                         layout="constrained")
            plots.return_reasons(frame, top=10, ax=fig.subplots())
            return fig
        fig = Figure(figsize=(11, 3.8), layout="constrained")
        if kind in _FILTERED:
            returns = frame[frame["returnDate"].notna()]
            left, right = fig.subplots(1, 2) if len(returns) else (fig.subplots(), None)
            plots.status_summary(frame, ax=left)
            if right is not None:
                plots.return_trend(returns, ax=right)
        else:
            left, right = fig.subplots(1, 2)
            plots.status_summary(frame, ax=left)
            plots.status_summary(frame, ax=right, value="amount")
    except (AttributeError, KeyError, TypeError, ValueError):
        # A plot helper missing or unable to draw this data: the counts table still says it.
        logger.warning("status plots could not be drawn", exc_info=True)
        return None
    return fig


class StatusExplorer(Form):
    """Items of one kind (ACH, RCC, instant card, RTP, NOC) filtered by status and
    return date, as a table with status counts and plots below it.

    ``form.result`` is the DataFrame last loaded (all its rows), ``form.figure`` the
    matplotlib Figure of its plots (None when nothing was drawn), ``form.grid`` an
    :class:`ipydatagrid.DataGrid` of its first :data:`GRID_ROWS` rows as the frame shows
    them (click a header to sort or filter). *Save CSV* / *Save XLSX* write
    ``form.result`` to a new file in ``folder`` (default: the kernel's working folder);
    ``form.saved`` is the path last written. Nothing else of the data is embedded.
    """

    title = "Status explorer"
    css_name = "explorer"

    def __init__(self, client: Any, *, kind: str = "ach", load: bool = True,
                 folder: str | Path | None = None) -> None:
        super().__init__(client)
        self._loaded_kind = kind
        self.kind = widgets.Dropdown(options=[(v[0], k) for k, v in _KINDS.items()],
                                     value=kind, description="Kind").add_class("paynb-field-kind")
        self.statuses = widgets.SelectMultiple(
            options=[(f"{code} {STATUS_NAMES[code]}", code) for code in STATUS_ORDER],
            value=(), rows=len(STATUS_ORDER), description="Status")
        self.statuses.add_class("paynb-field-itemStatus")
        self.returned_from = widgets.DatePicker(description="Returned from", style=_DESCRIPTION)
        self.returned_from.add_class("paynb-field-returnDateStart")
        self.returned_to = widgets.DatePicker(description="Returned to", style=_DESCRIPTION)
        self.returned_to.add_class("paynb-field-returnDateEnd")
        self.refresh_button = button("Refresh", "paynb-submit", style="primary",
                                     icon="refresh").add_class("paynb-refresh")
        self.refresh_button.on_click(self._guarded(self._load, "Loading…"))
        self._downloads(lambda: f"{self._loaded_kind}-items", folder)
        self.grid = data_grid(pd.DataFrame(), "paynb-explorer-grid", height="320px")
        """The table of the rows loaded (the first :data:`GRID_ROWS`), sortable and
        filterable."""
        self._show(self.grid, False)
        self.counts = widgets.HTML("").add_class("paynb-counts")
        # Scaled down to the form's width rather than running past it.
        self.plot = widgets.Image(format="png", layout=widgets.Layout(
            display="none", max_width="100%", height="auto")).add_class("paynb-plot")
        self.figure: Figure | None = None
        # In a narrow notebook the date pickers move under the statuses, not past the edge.
        self.filters = widgets.HBox([self.statuses, widgets.VBox([self.returned_from,
                                                                  self.returned_to])],
                                    layout=widgets.Layout(flex_flow="row wrap"))
        for widget in (self.kind, self.statuses, self.returned_from, self.returned_to):
            widget.observe(self._changed, names="value")
        self._assemble(self.kind, self.filters, self.refresh_button)
        # The table first, then the counts and the plots below it.
        self.widget.children = (*self.widget.children, self.grid, self.downloads, self.counts,
                                self.plot)
        self._refresh()
        if load:
            self.refresh_button.click()

    def _range(self) -> tuple[dt.date | None, dt.datetime | None]:
        start, end = self.returned_from.value, self.returned_to.value
        # "Returned to" a day includes that whole day.
        last = dt.datetime.combine(end, dt.time(23, 59, 59, 999000)) if end else None
        return start, last

    def _refresh(self) -> None:
        filtered = self.kind.value in _FILTERED
        self._show(self.filters, filtered)
        start, end = self.returned_from.value, self.returned_to.value
        backwards = filtered and start is not None and end is not None and start > end
        self.refresh_button.disabled = self.busy or backwards
        self._report(
            (backwards, "'Returned from' is after 'Returned to': no item can match.", "warn"),
            (True, "Choose the filters and click Refresh.", "info"))

    def _load(self) -> None:
        kind = self.kind.value
        label, attribute, columns, counted = _KINDS[kind]
        resource = getattr(self.client, attribute)
        # A tqdm bar has no place in a widget: the status line says how many pages are in.
        with page_progress(pages_said(self._say, f"Loading {label} items")):
            if kind in _FILTERED:
                start, end = self._range()
                frame = resource.list(list(self.statuses.value) or None, start, end, progress=False)
            else:
                frame = resource.list(progress=False)
        self.result = frame
        self._loaded_kind = kind
        shown = [c for c in columns if c in frame.columns]
        table = display_frame((frame[shown] if shown else frame).head(GRID_ROWS))
        more = (f" The table holds the first {GRID_ROWS:,} of {len(frame):,} rows: narrow "
                "the filters to see others." if len(frame) > GRID_ROWS else "")
        self.output.value = ("<p style='margin:0.2em 0;color:#666'>Times in UTC; click a "
                             "column's header to sort or filter; every column and row is in "
                             f"<code>form.result</code> and in a saved file.{escape(more)}</p>")
        self.grid.data = grid_frame(table)
        self.grid.renderers = money_renderers(table)
        self._show(self.grid, bool(len(frame)))
        self._offer_save(bool(len(frame)))
        self.counts.value = self._counts_html(frame, counted)
        self.figure = _plot_figure(frame, kind) if len(frame) else None
        png = io.BytesIO()
        if self.figure is not None:
            self.figure.savefig(png, format="png", dpi=90)
        self.plot.value = png.getvalue()
        self._show(self.plot, self.figure is not None)
        self._announce(f"{len(frame):,} {label} item{'s' if len(frame) != 1 else ''} loaded "
                       f"at {dt.datetime.now():%H:%M:%S}.", "ok")

    @staticmethod
    def _counts_html(frame: pd.DataFrame, column: str) -> str:
        if column not in frame.columns or frame.empty:
            return ""
        counts = frame[column].astype("string").fillna("(none)").value_counts()
        nocs = column == "changeCode"
        meanings = {code: code_meaning(code) if nocs else STATUS_NAMES.get(code, "")
                    for code in counts.index if code != "(none)"}
        rows = "".join(
            f"<tr><td>{escape(code)}</td><td>{escape(meanings.get(code, ''))}</td>"
            f"<td style='text-align:right'>{count:,}</td></tr>"
            for code, count in counts.items())
        heading = "change code" if nocs else "status"
        return (f"<table class='paynb-table paynb-counts-table'><tr><th>{heading}</th>"
                f"<th></th><th>{'NOCs' if nocs else 'items'}</th></tr>{rows}</table>")
