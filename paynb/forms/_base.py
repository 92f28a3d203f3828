"""What every paynb form shares: layout, status line, result area, the action guard.

A form is a plain object composed of child widgets; its :attr:`Form.widget` is the box a
cell displays, results are written into widgets (never printed) and :attr:`Form.result`
holds the last outcome. An action runs through :meth:`Form._guarded`: while it runs the
form is busy and a second click is ignored in Python, not only in the browser. The
environment header and the confirmation tick are described in docs/forms.md.
"""

from __future__ import annotations

import datetime as dt
import functools
import html
import logging
import re
import threading
from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pandas as pd
import pyarrow as pa

from paynb._excel import write_excel
from paynb._redact import last_four as last_four  # the forms show accounts and cards by it
from paynb.errors import ApiError, PaynbError, ResponseFormatError, TransportError

__all__ = ["Form"]

logger = logging.getLogger("paynb.forms")

_LEVEL_COLORS = {"info": "#333", "ok": "#1b7f3b", "warn": "#a15c00", "error": "#b00020"}
# Header colours: the real service must not look like the sandbox at a glance.
_ENV_STYLES = {
    True: ("paynb-env-sandbox", "#e8f1fb", "#1d4f91"),
    False: ("paynb-env-real", "#fde8e8", "#8a1c1c"),
}


def escape(value: Any) -> str:
    """``value`` as HTML text."""
    return html.escape("" if value is None else str(value))


def table_box() -> widgets.HTML:
    """An HTML widget for a :func:`table_html` table: as wide as the form and no wider
    (a flex child would otherwise grow to its content and run past the form's edge)."""
    return widgets.HTML("", layout=widgets.Layout(width="100%", min_width="0"))


def button(description: str, css: str, *, style: str = "", icon: str = "",
           visible: bool = True) -> widgets.Button:
    """A button as wide as its text, with the CSS class ``css``."""
    layout = widgets.Layout(width="auto", display=None if visible else "none")
    return widgets.Button(description=description, button_style=style, icon=icon,
                          layout=layout).add_class(css)


def tick(description: str, css: str, *, visible: bool = True) -> widgets.Checkbox:
    """An unticked checkbox as wide as its text, with the CSS class ``css``."""
    layout = widgets.Layout(width="auto", display=None if visible else "none")
    return widgets.Checkbox(value=False, indent=False, description=description,
                            layout=layout).add_class(css)


def table_html(frame: Any, *, max_rows: int = 200, nowrap: bool = False) -> str:
    """A DataFrame as an escaped HTML table (the first ``max_rows`` rows, and how many more).

    The table scrolls sideways inside the form rather than running past its edge;
    ``nowrap`` keeps every cell on one line (a timestamp split over two lines is hard to read).
    """
    shown = frame.head(max_rows)
    wrap = "white-space:nowrap;" if nowrap else ""
    # width 0 + min-width 100%: the box takes the form's width instead of the table's
    # (which would widen the widget's own content box, clipped, and so never scroll).
    text = (f'<div class="paynb-table-scroll" '
            f'style="overflow-x:auto;width:0;min-width:100%;{wrap}">'
            + shown.to_html(index=False, escape=True, na_rep="", border=0,
                            classes="paynb-table")
            + "</div>")
    if len(frame) > max_rows:
        text += f"<p>… and {len(frame) - max_rows} more rows (all in <code>form.result</code>)</p>"
    return text


def _flat(record: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    for key, value in record.items():
        if isinstance(value, Mapping):
            yield from _flat(value, f"{prefix}{key}.")
        else:
            yield f"{prefix}{key}", value


def record_html(record: Mapping[str, Any]) -> str:
    """A record (dict or Series, nested dicts flattened) as a two-column table, empties left out."""
    rows = "".join(
        f"<tr><th style='text-align:left;padding-right:1em'>{escape(key)}</th>"
        f"<td>{escape(value)}</td></tr>"
        for key, value in _flat(record)
        if value is not None and str(value) not in ("", "nan", "NaT", "<NA>", "None"))
    return f"<table class='paynb-record'>{rows}</table>"


_JOURNAL_INTERNALS = frozenset({"id", "batch", "updated", "company", "kind", "allow_duplicate"})


def previous_html(previous: Mapping[str, Any]) -> str:
    """The journal's entry of an earlier submission, without its bookkeeping columns."""
    return record_html({k: v for k, v in previous.items() if k not in _JOURNAL_INTERNALS})


#: The file types the forms' *Save* buttons write.
SAVE_TYPES = ("csv", "xlsx")


def save_frame(frame: pd.DataFrame, folder: Path, stem: str, filetype: str, *,
               when: dt.datetime | None = None) -> Path:
    """Write ``frame`` to a new file ``<stem>-<YYYYmmdd-HHMMSS>.<filetype>`` in ``folder``
    and return its path; an existing file is never overwritten (a second save in the same
    second gets ``-2``, ``-3``...).

    Times are written in UTC without their zone (Excel has no zones); amounts exactly as
    the frame holds them in CSV, as numbers with two decimals in Excel (the rules of
    :func:`paynb._excel.write_excel`); account numbers as masked as the frame has them.
    """
    if filetype not in SAVE_TYPES:
        raise ValueError(f"filetype must be one of {', '.join(SAVE_TYPES)}; got {filetype!r}")
    folder.mkdir(parents=True, exist_ok=True)
    base = f"{stem}-{(when or dt.datetime.now()):%Y%m%d-%H%M%S}"
    for number in range(1, 1000):
        path = folder / f"{base}{'' if number == 1 else f'-{number}'}.{filetype}"
        try:
            handle = path.open("xb")  # exclusive: never overwrite a file already there
        except FileExistsError:
            continue
        with handle:
            if filetype == "csv":
                _utc_without_zone(frame).to_csv(handle, index=False)
            else:
                write_excel(handle, {stem: frame})
        return path
    raise FileExistsError(f"no free file name for {base}.{filetype} in {folder}")


def _utc_without_zone(frame: pd.DataFrame) -> pd.DataFrame:
    written = frame.copy()
    for column in written.columns:
        if isinstance(written[column].dtype, pd.DatetimeTZDtype):
            written[column] = written[column].dt.tz_convert("UTC").dt.tz_localize(None)
    return written


def _is_decimal(dtype: Any) -> bool:
    return isinstance(dtype, pd.ArrowDtype) and pa.types.is_decimal(dtype.pyarrow_dtype)


def grid_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` as a data grid can show it: amounts as numbers (for sorting and a two-decimal
    format; the result keeps the exact decimals), times as UTC text, categories as text."""
    shown = frame.copy()
    for column in shown.columns:
        values = shown[column]
        dtype = values.dtype
        if _is_decimal(dtype):
            shown[column] = values.astype("float64")
        elif isinstance(dtype, pd.DatetimeTZDtype) or pd.api.types.is_datetime64_dtype(dtype):
            shown[column] = values.dt.strftime("%Y-%m-%d").fillna("")
        elif not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
            shown[column] = values.astype("string").fillna("").astype(object)
    return shown.reset_index(drop=True)


def money_renderers(frame: pd.DataFrame) -> dict[str, Any]:
    """Renderers showing ``frame``'s decimal columns right-aligned with two decimals."""
    from ipydatagrid import TextRenderer

    return {column: TextRenderer(format=",.2f", horizontal_alignment="right")
            for column, dtype in frame.dtypes.items() if _is_decimal(dtype)}


def data_grid(frame: pd.DataFrame, css: str, *, height: str = "220px") -> Any:
    """A sortable, filterable :class:`ipydatagrid.DataGrid` of ``frame`` (rows selectable)."""
    from ipydatagrid import DataGrid

    return DataGrid(grid_frame(frame), selection_mode="row", base_column_size=110,
                    renderers=money_renderers(frame),
                    layout=widgets.Layout(height=height, width="100%")).add_class(css)


class PagedGrid:
    """A :func:`data_grid` holding one page of a frame, with *Find* over all its rows and
    *Previous* / *Next*.

    A grid's data is saved with the notebook (its widget state), so a grid of every row
    of a large frame makes the notebook megabytes large; a page of :attr:`page_rows`
    keeps it small whatever the frame's length. The grid sorts and filters the page it
    shows; :attr:`find` keeps the rows whose text holds what is typed (any column, any
    case) and goes back to the first page. :attr:`page` is the frame of the rows shown.
    """

    #: Rows per page.
    page_rows = 100

    def __init__(self, frame: pd.DataFrame, css: str, *, height: str = "220px") -> None:
        self.grid = data_grid(frame.head(0), css, height=height)
        self.find = widgets.Text(value="", placeholder="text in any column",
                                 description="Find", continuous_update=False,
                                 layout=widgets.Layout(width="260px")).add_class("paynb-grid-find")
        self.previous_button = button("Previous", "paynb-grid-previous", icon="chevron-left")
        self.next_button = button("Next", "paynb-grid-next", icon="chevron-right")
        self.position = widgets.HTML("").add_class("paynb-grid-position")
        self.widget = widgets.VBox([
            widgets.HBox([self.find, self.previous_button, self.next_button, self.position],
                         layout=widgets.Layout(align_items="center")),
            self.grid]).add_class(css + "-pages")
        self.find.observe(lambda _change: self._turn(0), names="value")
        self.previous_button.on_click(lambda _button: self._turn(self._start - self.page_rows))
        self.next_button.on_click(lambda _button: self._turn(self._start + self.page_rows))
        self._on_page: list[Callable[[], None]] = []
        self.show(frame)

    def on_page(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` whenever other rows are shown."""
        self._on_page.append(callback)

    def show(self, frame: pd.DataFrame) -> None:
        """Show ``frame`` (the frame brought up to date), on the page shown before if it
        still has rows, with the same *Find*."""
        self.frame = frame
        self._shown = shown = grid_frame(frame)
        # One lower-case text per row, to find in (all columns, as the grid shows them).
        self._text = (shown.astype("string").fillna("").agg(" ".join, axis=1).str.lower()
                      if len(shown.columns) and len(shown) else pd.Series([], dtype="string"))
        self._turn(getattr(self, "_start", 0))

    def _turn(self, start: int) -> None:
        term = self.find.value.strip().lower()
        chosen = self._text.str.contains(term, regex=False).to_numpy(dtype=bool) if term else None
        found = self._shown if chosen is None else self._shown[chosen]
        last = max(0, (len(found) - 1) // self.page_rows * self.page_rows)
        self._start = min(max(0, start), last)
        end = self._start + self.page_rows
        self.grid.data = found.iloc[self._start:end].reset_index(drop=True)
        self.page = (self.frame if chosen is None else self.frame[chosen]).iloc[self._start:end]
        self.previous_button.disabled = self._start == 0
        self.next_button.disabled = end >= len(found)
        of = f" found among {len(self.frame):,}" if chosen is not None else ""
        rows = (f"rows {self._start + 1:,}-{min(end, len(found)):,} of {len(found):,}"
                if len(found) else "no rows")
        self.position.value = f"<span style='margin-left:0.5em'>{rows}{of}</span>"
        for callback in self._on_page:
            callback()


def money(amount: Decimal) -> str:
    """An exact amount with thousands separators: ``1,234.50``."""
    return f"{amount:,.2f}" if amount == amount.quantize(Decimal("0.01")) else f"{amount:,}"


def describe_error(exc: PaynbError) -> str:
    """What went wrong, in words for the status line (exception texts hold no secrets)."""
    unknown = "If this was a submission its outcome is unknown: run client.reconcile() " \
        "before trying again."
    if isinstance(exc, TransportError):
        if not exc.connected:  # its message says that nothing was sent
            return f"The service could not be reached ({exc})."
        return f"No answer from the service ({exc}). {unknown}"
    if isinstance(exc, ResponseFormatError):
        return f"An answer paynb cannot read ({exc}). {unknown}"
    if isinstance(exc, ApiError):
        return f"The service refused: {exc.detail or exc.title or exc.args[0]} (HTTP {exc.status})"
    return str(exc)


class Form:
    """Base of the paynb forms: a box of widgets with a status line and a result area.

    Subclasses build their child widgets, call :meth:`_assemble`, and implement
    :meth:`_refresh`, the one validation routine that sets every button's
    ``disabled`` and the status line.
    """

    title = ""
    css_name = ""

    def __init__(self, client: Any) -> None:
        self.client = client
        """The :class:`paynb.Client` the form acts through."""
        self.result: Any = None
        """The last outcome (a pandas Series or DataFrame), for the next cell."""
        self.status = widgets.HTML("").add_class("paynb-status")
        """The status line (HTML); :attr:`status_text` reads it as plain text."""
        self.output = table_box().add_class("paynb-result")
        """The result area (HTML): the stored item, the answer's table..."""
        self.busy = False
        """True while an action runs (its buttons are then disabled)."""
        self._lock = threading.Lock()
        self._notice: tuple[str, str] | None = None
        self.widget = widgets.VBox()
        """The box a notebook cell displays (``display(form.widget)`` shows it anywhere)."""

    @property
    def environment(self) -> Any:
        """Where the form acts: the client's :class:`~paynb.client.Environment`."""
        return self.client.environment

    @property
    def where(self) -> str:
        """``company DEMO1 on the sandbox (simulated, nothing is paid)``, or ``company
        ACME1 on the REAL SERVICE payments.example.com (profile prod)``: the end of every
        confirmation."""
        return f"company {self.client.company_code} on the {self.environment.label}"

    def _env_header(self) -> widgets.HTML:
        """The header naming the environment and the company (red for the real service);
        a form with no client (a view of a result) says that it acts nowhere."""
        if self.client is None:
            css, style = "paynb-env-none", "padding:0.3em 0.6em"
            text = "<b>No client</b>: this view sends nothing"
        else:
            css, background, color = _ENV_STYLES[bool(self.environment.is_sandbox)]
            style = (f"background:{background};color:{color};padding:0.3em 0.6em;"
                     f"border-left:6px solid {color}")
            text = (f"<b>{escape(self.environment.label)}</b> &middot; company "
                    f"<b>{escape(self.client.company_code)}</b>")
        return widgets.HTML(f'<div style="{style}">{text}</div>').add_class(
            "paynb-env-header").add_class(css)

    def _confirmation(self, on_change: Callable[..., None]) -> widgets.Checkbox:
        """The tick an action waits for (``on_change`` runs when it is ticked or not);
        its text is set with :meth:`_confirm_text`."""
        box = tick("", "paynb-confirm")
        box.observe(on_change, names="value")
        return box

    def _confirm_text(self, what: str) -> str:
        """``I confirm: <what>, for company DEMO1 on the sandbox (...)``."""
        return f"I confirm: {what}, for {self.where}"

    def _assemble(self, *children: widgets.Widget) -> None:
        header = widgets.HTML(f"<h3 style='margin:0.2em 0'>{escape(self.title)}</h3>")
        self.widget.children = (header, self._env_header(), *children, self.status, self.output)
        self.widget.add_class("paynb-form").add_class(f"paynb-form-{self.css_name}")

    @staticmethod
    def _show(widget: widgets.Widget, visible: bool) -> None:
        widget.layout.display = None if visible else "none"

    def _say(self, text: str, level: str = "info") -> None:
        """Write the status line (``level``: info, ok, warn or error)."""
        color = _LEVEL_COLORS[level]
        self.status.value = (f'<span class="paynb-status-{level}" style="color:{color}">'
                             f"{escape(text)}</span>")

    def _announce(self, text: str, level: str) -> None:
        """A status message that stays until the user changes something."""
        self._notice = (text, level)
        self._say(text, level)

    @property
    def status_text(self) -> str:
        """The status line as plain text."""
        return html.unescape(re.sub(r"<[^>]+>", "", self.status.value))

    def _report(self, *steps: tuple[bool, str, str]) -> None:
        """Write the status line: nothing while busy (the busy text stays), else the last
        notice, else the text of the first ``(condition, text, level)`` step that holds."""
        if self.busy:
            return
        said = self._notice or next((step[1:] for step in steps if step[0]), None)
        if said:
            self._say(*said)

    def _refresh(self) -> None:
        """Validate, set the buttons' ``disabled`` and the status line."""
        raise NotImplementedError

    def _changed(self, *_args: Any) -> None:
        """An input changed: drop the last notice and validate again."""
        self._notice = None
        self._refresh()

    def _held(self, approval: Any) -> None:
        """Show a call held for a second person (dual control): nothing was sent yet."""
        self.result = approval
        self.output.value = (f"<p class='paynb-awaiting-approval'><b>Awaiting approval by "
                             f"another analyst</b>: nothing was sent yet.</p>"
                             f"{approval._repr_html_()}")
        self._announce(f"Awaiting approval by another analyst (approval {approval.id}: "
                       f"{approval.why}). Nothing was sent yet: another analyst approves it "
                       f"in ApprovalsForm, or with client.approve({approval.id}).", "warn")

    def _guarded(self, action: Callable[[], None],
                 busy_text: str | Callable[[], str]) -> Callable[..., None]:
        """A click handler running ``action`` at most once at a time, with the form busy
        and ``busy_text`` (or what it returns) in the status line meanwhile."""

        def handler(*_args: Any) -> None:
            if not self._lock.acquire(blocking=False):
                logger.info("%s: ignored a click while busy", type(self).__name__)
                return
            try:
                self.busy = True
                self._refresh()
                self._say(busy_text() if callable(busy_text) else busy_text, "info")
                action()
            except PaynbError as exc:
                self._announce(describe_error(exc), "error")
            except Exception as exc:
                # ipywidgets would only log it: say it where the user looks, then log it.
                logger.exception("%s: the action failed", type(self).__name__)
                self._announce(f"Unexpected error ({type(exc).__name__}); details are in the "
                               "paynb log.", "error")
            finally:
                self.busy = False
                self._lock.release()
                self._refresh()

        return handler

    def _downloads(self, stem: Callable[[], str], folder: str | Path | None) -> widgets.HBox:
        """The *Save CSV* / *Save XLSX* buttons (hidden until :meth:`_offer_save`) writing
        ``form.result`` to ``<stem()>-<time>`` in ``folder`` (default: the working folder).
        Never embedded in the widgets: their state is saved with the notebook, which would
        grow and carry (masked) customer data wherever it is shared."""
        self.folder = Path(folder) if folder is not None else None
        """Where *Save CSV* / *Save XLSX* write (``None``: the working folder)."""
        self.saved: Path | None = None
        """The path of the file last saved."""
        self._save_stem = stem
        self.save_buttons = {
            filetype: button(f"Save {filetype.upper()}", f"paynb-save-{filetype}",
                             icon="download", visible=False)
            for filetype in SAVE_TYPES}
        """The *Save* buttons by file type (``"csv"``, ``"xlsx"``)."""
        for filetype, save in self.save_buttons.items():
            save.on_click(self._guarded(functools.partial(self._save, filetype),
                                        f"Saving {filetype.upper()}…"))
        self.saved_path = widgets.HTML("").add_class("paynb-saved")
        self.downloads = widgets.HBox([*self.save_buttons.values(), self.saved_path],
                                      layout=widgets.Layout(flex_flow="row wrap",
                                                            align_items="center"))
        self.downloads.add_class("paynb-downloads")
        return self.downloads

    def _offer_save(self, visible: bool) -> None:
        """Show the *Save* buttons (or hide them) and forget the path last shown."""
        self.saved_path.value = ""
        for save in self.save_buttons.values():
            self._show(save, visible)

    def _save(self, filetype: str) -> None:
        frame = self.result
        if frame is None or not len(frame):
            self._announce("Nothing to save yet.", "warn")
            return
        folder = self.folder if self.folder is not None else Path.cwd()
        try:
            path = save_frame(frame, folder, self._save_stem(), filetype)
        except OSError as exc:
            self._announce(f"Could not save in {folder}: {exc}", "error")
            return
        self.saved = path
        self.saved_path.value = (f"<span style='margin-left:0.5em'>Saved {len(frame):,} rows "
                                 f"to <code>{escape(path)}</code></span>")
        self._announce(f"Saved {len(frame):,} rows to {path}.", "ok")

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def __repr__(self) -> str:
        # Never the inputs' values: some of them are secrets.
        return f"<{type(self).__name__}: {self.status_text or 'ready'}>"


def pages_said(say: Callable[[str, str], None], doing: str) -> Callable[[int, int | None], None]:
    """A :func:`paynb.paging.page_progress` callback writing how far a list has come to a
    form's status line: "Loading ACH items… page 3 of 12" (or "… 3 pages" while the
    number of pages is not known)."""

    def said(done: int, total: int | None) -> None:
        so_far = f"page {done:,} of {total:,}" if total is not None else \
            f"{done:,} page{'s' if done != 1 else ''}"
        say(f"{doing}… {so_far}", "info")

    return said
