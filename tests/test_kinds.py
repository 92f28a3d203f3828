"""Each kind is known once (paynb._kinds): the frames, the sandbox, the history, the
resources and the forms read the registry, and no other module of paynb spells which field
identifies which kind."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from paynb import _kinds, frames
from paynb._kinds import KINDS, kind_of
from paynb.history import _store
from paynb.resources import AchResource, InstantResource, NocResource, RccResource, RtpResource
from paynb.sandbox.tables import KINDS as TABLES

PACKAGE = Path(__file__).resolve().parents[1] / "paynb"


@pytest.mark.parametrize("name", list(KINDS))
def test_a_frame_has_the_kinds_fields_in_the_registrys_order(name) -> None:
    columns = list(frames.empty_frame(name).columns)
    fields = KINDS[name].field_names
    assert [c for c in columns if c in fields] == list(fields)


@pytest.mark.parametrize("name", list(KINDS))
def test_the_sandbox_keeps_the_fields_the_service_sends_in_its_order(name) -> None:
    kind = KINDS[name]
    table = TABLES[name]
    assert table.fields == kind.wire
    assert table.id_field == kind.id_field
    assert table.timestamps == kind.timestamps
    assert table.booleans == frozenset(kind.names_of("flag"))


def test_the_history_lays_out_its_tables_by_the_registry() -> None:
    assert tuple(kind.table for kind in KINDS.values()) == _store.KINDS
    for kind in KINDS.values():
        assert _store.FRAME_KINDS[kind.table] == kind.name
        assert _store.ID_FIELDS[kind.table] == kind.id_field
        assert _store.STATUS_FIELDS[kind.table] == kind.status_field
        assert _store.MONTH_FIELDS[kind.table] == kind.month_field
    assert _store.RETURN_KINDS == ("ach", "rcc")


def test_a_resource_names_its_kind_and_the_registry_gives_the_rest() -> None:
    for resource in (AchResource, RccResource, InstantResource, RtpResource, NocResource):
        kind = KINDS[resource.kind]
        assert (resource.id_field, resource.status_field) == (kind.id_field, kind.status_field)


@pytest.mark.parametrize(("spelling", "name"), [
    ("ACH", "ach"), ("nocs", "noc"), ("ACH NOCs", "noc"), ("instant_rtp", "rtp"),
    ("Card", "instant"), ("r-c-c", "rcc")])
def test_a_kind_is_found_by_any_of_its_spellings(spelling, name) -> None:
    assert kind_of(spelling).name == name


def test_an_unknown_kind_is_refused_naming_the_kinds() -> None:
    with pytest.raises(ValueError, match="kind must be one of ach, rcc, instant, rtp, noc"):
        kind_of("wire")


def test_a_field_of_an_unknown_type_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown field type 'money!' of amount"):
        _kinds.Field("amount", "money!")


#: The modules of paynb that still spell a kind's id field, at most: the registry itself,
#: and code that reads one field of one kind's records as data (a NOC's ``achItemId``,
#: the sandbox building a record). Lower it when a module stops; never raise it.
MOST_MODULES = {"achItemId": 15, "rccItemId": 3, "nocId": 12}


@pytest.mark.parametrize("field", sorted(MOST_MODULES))
def test_few_modules_spell_a_kinds_id_field(field) -> None:
    spelled = re.compile(rf"""["']{field}["']""")
    naming = sorted(str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
                    if spelled.search(path.read_text(encoding="utf-8")))
    assert "_kinds.py" in naming
    assert len(naming) <= MOST_MODULES[field], naming
