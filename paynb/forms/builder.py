"""Widgets generated from the request models of :mod:`paynb.models` (docs/forms.md).

One builder serves every form: :class:`FieldSet` makes one :class:`FieldWidget` per
field of a model, the widget following the field's type, its label, help and
placeholder taken from the field. Validation is the model's own
(:func:`paynb.models.check`), so a form, the client and the sandbox can never disagree.
A field shows its error only once touched (or when the form asks for every error); the
form's status line names every missing or wrong field from the start.
"""

from __future__ import annotations

import datetime as dt
import html
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal
from typing import Any, Literal

import ipywidgets as widgets

from paynb.models import RequestModel, check

__all__ = ["FieldSet", "FieldWidget", "Looks"]

# Wide enough for the longest title with its "(optional)" on one line.
_LABEL_WIDTH = "230px"
_INPUT_WIDTH = "260px"


def _unwrap(annotation: Any) -> tuple[Any, bool]:
    """The field's core type, and whether ``None`` is allowed (``X | None``)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        core, _ = _unwrap(args[0]) if len(args) == 1 else (annotation, False)
        return core, True
    if origin is typing.Annotated:
        return _unwrap(typing.get_args(annotation)[0])
    return annotation, False


def _nested_model(annotation: Any) -> type[RequestModel] | None:
    """The request model a field holds (``IatAddenda | None``), else ``None``."""
    core, _ = _unwrap(annotation)
    return core if isinstance(core, type) and issubclass(core, RequestModel) else None


class Looks:
    """The layouts and styles the field rows of one form share.

    Each widget's state is saved with the notebook, its layout and style included (a
    layout alone is about a kilobyte): one model per look for all the rows, not one per
    row, keeps a form of thirty fields a few dozen kilobytes instead of hundreds. A
    shared layout is never changed through one widget (a row is hidden by giving it a
    layout of its own, see :attr:`FieldWidget.visible`).
    """

    def __init__(self) -> None:
        self.label = widgets.Layout(width=_LABEL_WIDTH)
        self.input = widgets.Layout(width=_INPUT_WIDTH)
        self.error = widgets.Layout(min_width="0")
        # The help line starts under the input, past the label's width.
        self.help = widgets.Layout(margin=f"0 0 0 {_LABEL_WIDTH}")
        self.line = widgets.Layout()
        self.row = widgets.Layout()
        self._styles: dict[type, Any] = {}
        self.html = self.style(widgets.HTML)

    def style(self, widget_type: type[widgets.Widget]) -> Any:
        """The style shared by the inputs of ``widget_type`` (a text box's, a dropdown's...)."""
        klass = widget_type.class_traits()["style"].klass
        if klass not in self._styles:
            self._styles[klass] = klass()
        return self._styles[klass]


class FieldWidget:
    """One model field as a row of widgets: label, input, error message, help text.

    ``wire`` is the service's camelCase name (dotted inside a nested model:
    ``iatAddenda.transactionTypeCode``); the row carries the CSS class
    ``paynb-field-<wire>`` (dots as hyphens). :attr:`value` reads the input as the
    model wants it (``None`` for an empty optional input) and can be set from code.

    The input exists from the start (it holds the value); the rest of the row (label,
    error, help) is built the first time :attr:`row` (or one of its parts) is asked for,
    so that a field nobody looks at (a collapsed section, the IAT addenda of a PPD entry)
    costs one widget, not eight, in the notebook's saved state. ``looks`` are the
    layouts and styles shared with the other rows of the form.
    """

    def __init__(self, model: type[RequestModel], name: str, *, prefix: str = "",
                 group: str = "", looks: Looks | None = None) -> None:
        self.looks = looks or Looks()
        info = model.model_fields[name]
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        self.name = name
        self.wire = prefix + (info.alias or name)
        #: Whether the model puts the field in the collapsed "More fields" section.
        self.more = bool(extra.get("more"))
        self.title = (f"{group}: " if group else "") + (info.title or name)
        self.description = info.description or ""
        self.secret = bool(extra.get("secret"))
        #: Whether the model lets the field be left out.
        self.optional = not info.is_required()
        self._required = not self.optional
        self.touched = False
        core, self.nullable = _unwrap(info.annotation)
        self.choices: tuple[Any, ...] = ()
        default = None if info.is_required() else info.default
        suggestions = [str(value) for value in extra.get("suggestions") or ()]
        text = {"value": "" if default is None else str(default),
                "placeholder": str(extra.get("placeholder") or ""), "continuous_update": True}
        if typing.get_origin(core) is Literal:
            self.kind = "choice"
            self.choices = typing.get_args(core)
            options: list[tuple[str, Any]] = [(str(c), c) for c in self.choices]
            if self.nullable or default is None:
                options.insert(0, ("—", None))
            kind: type[widgets.ValueWidget] = widgets.Dropdown
            arguments: dict[str, Any] = {"options": options, "value": default}
        elif core is bool:
            self.kind = "bool"
            kind, arguments = widgets.Checkbox, {"value": bool(default), "indent": False}
        elif core is dt.datetime:
            self.kind = "date"
            kind, arguments = widgets.DatePicker, {"value": default}
        elif suggestions:
            # An open set: the known values are offered, any other may be typed.
            self.kind = "text"
            self.choices = tuple(suggestions)
            kind = widgets.Combobox
            arguments = {**text, "options": suggestions, "ensure_option": False}
        else:
            # Decimal stays text: a FloatText would turn 0.1 into 0.1000000000000000055.
            self.kind = "decimal" if core is Decimal else "text"
            kind = widgets.Password if self.secret else widgets.Text
            arguments = text
        self.input: widgets.ValueWidget = kind(**arguments, layout=self.looks.input,
                                               style=self.looks.style(kind))
        self.input.tooltip = self.description or None
        self.input.add_class("paynb-input")
        self._initial = self.input.value
        self._row: widgets.VBox | None = None
        self._visible = True
        self._hidden: widgets.Layout | None = None
        self._error_html = ""
        self.input.observe(self._on_input, names="value")

    # -- the row, built when first shown --------------------------------------------------

    @property
    def row(self) -> widgets.VBox:
        """The row: label, input and error on a line, the help text under the input."""
        if self._row is None:
            looks = self.looks
            self._label = widgets.HTML(layout=looks.label, style=looks.html)
            self._error = widgets.HTML(self._error_html, layout=looks.error,
                                       style=looks.html).add_class("paynb-error")
            self._help = widgets.HTML(
                f'<span class="paynb-help" style="color:#666;font-size:85%">'
                f"{html.escape(self.description)}</span>" if self.description else "",
                layout=looks.help, style=looks.html)
            line = widgets.HBox([self._label, self.input, self._error], layout=looks.line)
            self._row = widgets.VBox([line, self._help] if self.description else [line],
                                     layout=looks.row if self._visible else self._hidden_layout())
            self._row.add_class("paynb-field")
            self._row.add_class(f"paynb-field-{self.wire.replace('.', '-')}")
            self._draw_label()
        return self._row

    @property
    def label(self) -> widgets.HTML:
        """The label: the title, and "(optional)" when the field may be left empty."""
        _ = self.row
        return self._label

    @property
    def error(self) -> widgets.HTML:
        """Where the field's error shows."""
        _ = self.row
        return self._error

    @property
    def help(self) -> widgets.HTML:
        """The help text under the input (the field's description)."""
        _ = self.row
        return self._help

    def _hidden_layout(self) -> widgets.Layout:
        if self._hidden is None:
            self._hidden = widgets.Layout(display="none")
        return self._hidden

    def _draw_label(self) -> None:
        if self._row is None:
            return  # drawn when the row is built
        marker = ("" if self._required else
                  ' <span class="paynb-optional" style="color:#666;font-size:90%">'
                  "(optional)</span>")
        self._label.value = (f'<span style="white-space:nowrap"><b>{html.escape(self.title)}</b>'
                             f"{marker}</span>")

    @property
    def required(self) -> bool:
        """Whether the field must be filled in: the model's verdict, unless the form
        overrides it for its current mode (:meth:`FieldSet.require`). The label follows."""
        return self._required

    @required.setter
    def required(self, value: bool) -> None:
        self._required = bool(value)
        self._draw_label()

    def _on_input(self, _change: Mapping[str, Any]) -> None:
        self.touched = True

    @property
    def value(self) -> Any:
        """The input as the model reads it: text stripped, ``None`` when left empty."""
        raw = self.input.value
        if self.kind in ("text", "decimal"):
            return raw.strip() or None
        if self.kind == "bool" and self.nullable and not raw:
            return None  # an optional flag left unticked is not sent
        return raw

    @value.setter
    def value(self, value: Any) -> None:
        if self.kind in ("text", "decimal"):
            value = "" if value is None else str(value)
        self.input.value = value

    @property
    def disabled(self) -> bool:
        """Whether the input is read-only."""
        return bool(self.input.disabled)

    @disabled.setter
    def disabled(self, value: bool) -> None:
        self.input.disabled = value

    @property
    def visible(self) -> bool:
        """Whether the row is shown (a hidden field is not sent)."""
        return self._visible

    @visible.setter
    def visible(self, value: bool) -> None:
        self._visible = bool(value)
        if self._row is not None:  # the shared layout, or one of its own to hide it
            self._row.layout = self.looks.row if self._visible else self._hidden_layout()

    def show_error(self, messages: Iterable[str]) -> None:
        """Show ``messages`` beside the input (none: clear it)."""
        text = "; ".join(messages)
        self._error_html = (f'<span style="color:#b00020">&#9888; {html.escape(text)}</span>'
                            if text else "")
        if self._row is not None:
            self._error.value = self._error_html
        (self.input.add_class if text else self.input.remove_class)("paynb-invalid")

    def reset(self) -> None:
        """Back to the initial value, untouched, with no message."""
        self.input.value = self._initial
        self.touched = False
        self.show_error(())


class FieldSet:
    """The widgets of one request model's fields, and their validation.

    ``exclude`` leaves fields out (a form may supply them itself through ``extra`` of
    :meth:`check`). Fields are keyed by wire name: ``fields["bankRoutingNumber"]``.
    """

    def __init__(self, model: type[RequestModel], *, exclude: Iterable[str] = ()) -> None:
        skip = set(exclude)
        self.model = model
        #: The layouts and styles the rows share.
        self.looks = Looks()
        self.fields: dict[str, FieldWidget] = {}
        #: Titles of the nested models by wire name (``{"iatAddenda": "IAT addenda"}``).
        self.groups: dict[str, str] = {}
        self._add(model, skip, prefix="", group="")

    def _add(self, model: type[RequestModel], skip: set[str], *, prefix: str, group: str) -> None:
        for name, info in model.model_fields.items():
            wire = info.alias or name
            if name in skip or wire in skip:
                continue
            nested = _nested_model(info.annotation)
            if nested is not None:
                title = info.title or wire
                self.groups[prefix + wire] = title
                self._add(nested, set(), prefix=f"{prefix}{wire}.",
                          group=f"{group}: {title}" if group and title != group else title)
                continue
            self.fields[prefix + wire] = FieldWidget(model, name, prefix=prefix, group=group,
                                                     looks=self.looks)

    def __getitem__(self, wire: str) -> FieldWidget:
        return self.fields[wire]

    def __iter__(self) -> typing.Iterator[FieldWidget]:
        return iter(self.fields.values())

    def rows(self, names: Iterable[str] | None = None) -> list[widgets.Widget]:
        """The row widgets of ``names`` (all fields when ``None``), in that order (built
        now if they were not)."""
        chosen = self.fields if names is None else names
        return [self.fields[name].row for name in chosen]

    def in_group(self, group: str) -> list[str]:
        """Wire names of the fields of the nested model ``group`` (``"iatAddenda"``)."""
        return [wire for wire in self.fields if wire.startswith(group + ".")]

    def main(self) -> list[str]:
        """Wire names of the fields shown open: not ``more``, not in a nested model."""
        return [wire for wire, field in self.fields.items() if not field.more and "." not in wire]

    def more(self) -> list[str]:
        """Wire names of the fields of the collapsed "More fields" section."""
        return [wire for wire, field in self.fields.items() if field.more and "." not in wire]

    def observe(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` after every change of any input."""
        for field in self:
            field.input.observe(lambda _change: callback(), names="value")

    def require(self, wires: Iterable[str]) -> None:
        """Make exactly ``wires`` required among the fields the model leaves optional
        (the model's required fields stay required): a form calls it when its mode
        decides which optional fields the request needs."""
        chosen = set(wires)
        unknown = chosen - set(self.fields)
        if unknown:
            raise ValueError(f"wires names no field of {self.model.__name__}: "
                             f"{', '.join(sorted(unknown))}")
        for field in self:
            field.required = not field.optional or field.wire in chosen

    def values(self) -> dict[str, Any]:
        """Wire name to value of every visible field that is filled in; the fields of a
        nested model as one object (``{"iatAddenda": {"transactionTypeCode": ...}}``),
        present when any of them is filled in."""
        data: dict[str, Any] = {}
        for field in self:
            if not field.visible or field.value is None:
                continue
            *parents, last = field.wire.split(".")
            target = data
            for parent in parents:
                target = target.setdefault(parent, {})
            target[last] = field.value
        return data

    def check(self, extra: Mapping[str, Any] | None = None
              ) -> tuple[RequestModel | None, dict[str, list[str]]]:
        """Validate the inputs (plus ``extra`` wire-named values) with the model's rules;
        a visible field required by the form's mode (:meth:`require`) and left empty is
        "is required" even where the model would name it only after the other fields pass."""
        data = self.values()
        data.update(extra or {})
        item, errors = check(self.model, data)
        missing = {f.wire: ["is required"] for f in self
                   if f.required and f.optional and f.visible and f.wire not in data}
        if not missing:
            return item, errors
        return None, {**{k: v for k, v in errors.items() if k not in missing}, **missing}

    def show(self, errors: Mapping[str, list[str]], *, everywhere: bool = False) -> None:
        """Put each field's messages beside it: on touched fields, or on all of them."""
        for field in self:
            shown = field.touched or everywhere
            field.show_error(errors.get(field.wire, ()) if shown else ())
            if everywhere:
                field.touched = True

    def problems(self, errors: Mapping[str, list[str]]) -> str:
        """One line naming what is missing and what is wrong, by label."""
        missing, wrong = [], []
        for wire, messages in errors.items():
            field = self.fields.get(wire)
            if messages == ["is required"] or (field and field.value is None):
                missing.append(self.title(wire))
            else:
                wrong.append(f"{self.title(wire)} ({'; '.join(messages)})")
        return ". ".join(f"{what}: {', '.join(titles)}" for what, titles in
                         (("Missing", missing), ("To fix", wrong)) if titles)

    def title(self, wire: str) -> str:
        """The label of the field ``wire``, or the title of the nested model it names."""
        field = self.fields.get(wire)
        return field.title if field else self.groups.get(wire, wire)

    def service_errors(self, errors: Mapping[str, list[str]]
                       ) -> tuple[dict[str, list[str]], list[str]]:
        """The service's 400 field errors as messages per field of this set (keys like
        ``$.Amount`` or ``BankRoutingNumber`` matched ignoring case), and the rest as text."""
        by_name = {wire.split(".")[-1].lower(): wire for wire in reversed(self.fields)}
        on_fields: dict[str, list[str]] = {}
        elsewhere: list[str] = []
        for key, messages in errors.items():
            wire = by_name.get(key.split(".")[-1].lower())
            if wire:
                on_fields.setdefault(wire, []).extend(messages)
            else:
                elsewhere.append(f"{key}: {'; '.join(messages)}")
        return on_fields, elsewhere

    def clear(self, *, secrets_only: bool = False) -> None:
        """Empty the inputs (or only the secret ones, after sending)."""
        for field in self:
            if field.secret or not secrets_only:
                field.reset()
