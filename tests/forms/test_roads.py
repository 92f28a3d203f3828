"""The forms judge what is typed as the client judges what they send (issue 43.2).

One question (is this payment valid, and what is wrong with it?), two roads: a form's
fields checked as typed (:meth:`paynb.forms.builder.FieldSet.check`, the models per
item) and the client's ``check_many`` (the column-by-column check, the models for the
rows it cannot vouch for). On every row a user can type (fields drawn among good values,
near-valid ones and wrong ones), the form's verdict is the client's on the row the form
would send: valid or not, the same errors per field, the same advisories.
"""

from __future__ import annotations

import io
from typing import Any

import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paynb.forms import AchForm, BulkSubmitForm, RccForm
from tests.client.test_check_many import ACH_GOOD, RCC_GOOD, _near_values

SETTINGS = settings(max_examples=25, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


def _typed(good: dict[str, Any], fields: list[str]) -> st.SearchStrategy[dict[str, str]]:
    """Text as typed into ``fields``: mostly the good value, else a variant of it."""

    def variants(wire: str) -> list[str]:
        value = good.get(wire, "")
        return [v for v in _near_values(str(value)) if isinstance(v, str)]

    return st.fixed_dictionaries({
        wire: st.one_of(st.just(str(good.get(wire, ""))), st.just(str(good.get(wire, ""))),
                        st.sampled_from(variants(wire)))
        for wire in fields})


def _verdicts(form: Any, typed: dict[str, str]) -> tuple[Any, Any]:
    """The form's verdict on ``typed``, and the client's on what the form would send."""
    for wire, text in typed.items():
        form.fields[wire].value = text
    item, errors = form.fields.check()
    advice = sorted(f"{a.field}: {a.message}" for a in item.advisories()) if item else []
    theirs = form.resource.check_many([form.fields.values()]).iloc[0]
    return ((item is not None, errors, advice),
            (bool(theirs["valid"]), theirs["errors"] or {}, sorted(theirs["advisories"])))


def _text_fields(form: Any, good: dict[str, Any]) -> list[str]:
    return [f.wire for f in form.fields if f.kind in ("text", "decimal") and f.visible
            and f.wire in good]


@SETTINGS
@given(data=st.data())
def test_the_ach_form_judges_as_the_client(client: Any, data: st.DataObject) -> None:
    form = AchForm(client)
    good = {k: v for k, v in ACH_GOOD.items() if k not in ("achAccountType",
                                                           "achEntryClass")}
    mine, theirs = _verdicts(form, data.draw(_typed(good, _text_fields(form, good))))
    assert mine == theirs


@SETTINGS
@given(data=st.data())
def test_the_rcc_form_judges_as_the_client(client: Any, data: st.DataObject) -> None:
    form = RccForm(client)
    mine, theirs = _verdicts(form, data.draw(_typed(RCC_GOOD, _text_fields(form, RCC_GOOD))))
    assert mine == theirs


@settings(SETTINGS, max_examples=15)
@given(data=st.data())
def test_the_bulk_form_judges_each_row_as_the_client(client: Any,
                                                     data: st.DataObject) -> None:
    good = {k: str(v) for k, v in ACH_GOOD.items()}
    fields = sorted(set(good) - {"yourReferenceNumber"})
    rows = data.draw(st.lists(_typed(good, fields), min_size=1, max_size=6))
    # Each row its own reference: a repeated one is a rule of the form's alone (a file
    # that pays twice), which a check of each row cannot see.
    rows = [dict(row, yourReferenceNumber=f"B{n}") for n, row in enumerate(rows)]
    content = pd.DataFrame(rows).to_csv(index=False).encode()
    form = BulkSubmitForm(client, kind="ach")
    form.load_file("rows.csv", content)
    # The file as pandas reads it, a blank cell no value (as the form documents it).
    read = pd.read_csv(io.BytesIO(content), dtype=str)
    read = read.map(lambda v: None if isinstance(v, str) and not v.strip() else v)
    theirs = client.ach.check_many(read)
    assert form._errors == [e or {} for e in theirs["errors"]]
