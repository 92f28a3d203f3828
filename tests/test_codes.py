"""NACHA's code tables (paynb.codes): every code NACHA defines, its group, time frame and
return-rate category, written out here by hand so that a slip in the table shows."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from paynb import codes
from paynb.compliance import CATEGORIES, NEW_AUTHORIZATION_CODES, REINITIATION_CODES
from paynb.compliance._rules import EXTENDED_RETURN_DAYS, STANDARD_RETURN_BANKING_DAYS


def _span(letter: str, first: int, last: int) -> list[str]:
    return [f"{letter}{n:02d}" for n in range(first, last + 1)]


#: Appendix Four, by hand: R01-R39 for RDFIs (and the ACH Operator), R40-R47 ENR, R50-R53
#: RCK, R61, R62, R67-R70 dishonored, R71-R77 contested dishonored, R80-R85 IAT.
RETURN_GROUPS = {
    **dict.fromkeys(_span("R", 1, 39), "rdfi"),
    **dict.fromkeys(_span("R", 40, 47), "enr"),
    **dict.fromkeys(_span("R", 50, 53), "rck"),
    **dict.fromkeys(["R61", "R62", *_span("R", 67, 70)], "dishonored"),
    **dict.fromkeys(_span("R", 71, 77), "contested"),
    **dict.fromkeys(_span("R", 80, 85), "iat"),
}
#: Appendix Five, by hand: C01-C14 (C10-C12 retired) and the refused-NOC codes C61-C69.
NOC_GROUPS = {**dict.fromkeys(_span("C", 1, 14), "change"),
              **dict.fromkeys(_span("C", 61, 69), "refused")}


def test_every_nacha_code_is_in_the_tables_and_no_other():
    assert list(codes.RETURN_CODE_TABLE) == list(RETURN_GROUPS)
    assert {c: r.group for c, r in codes.RETURN_CODE_TABLE.items()} == RETURN_GROUPS
    assert list(codes.NOC_CODE_TABLE) == list(NOC_GROUPS)
    assert {c: n.group for c, n in codes.NOC_CODE_TABLE.items()} == NOC_GROUPS
    assert (len(codes.RETURN_CODE_TABLE), len(codes.NOC_CODE_TABLE)) == (70, 23)
    assert [c for c, n in codes.NOC_CODE_TABLE.items() if n.retired] == ["C10", "C11", "C12"]
    # The named gaps of the old R01-R29 / C01-C13 tables.
    for code in ("R31", "R37", "R38", "R39", "R50", "R51", "R52", "R53", "R61", "R77",
                 "R80", "R85", "C14", "C61", "C69"):
        assert codes.is_known_code(code), code


def test_rate_categories_are_exactly_nachas():
    # NACHA Operating Rules, Subsection 2.17.2, written out by hand.
    assert {"R05", "R07", "R10", "R11", "R29", "R51"} == codes.UNAUTHORIZED_RETURN_CODES
    assert {"R02", "R03", "R04"} == codes.ADMINISTRATIVE_RETURN_CODES
    by_name = {c.name: c.codes for c in CATEGORIES}
    assert by_name == {"unauthorized": {"R05", "R07", "R10", "R11", "R29", "R51"},
                       "administrative": {"R02", "R03", "R04"}, "overall": None}


def test_time_frames():
    frames = {c: r.time_frame for c, r in codes.RETURN_CODE_TABLE.items()}
    extended = {"R05", "R07", "R10", "R11", "R33", "R37", "R38", "R51", "R52", "R53"}
    assert {c for c, f in frames.items() if f == codes.EXTENDED_RETURN} == extended
    assert extended == codes.EXTENDED_RETURN_CODES
    assert frames["R01"] == frames["R29"] == codes.STANDARD_RETURN
    assert frames["R06"] == frames["R31"] == codes.AGREED_RETURN
    assert frames["R23"] == codes.REFUSED_CREDIT_RETURN
    assert {c for c, f in frames.items() if f == codes.OPERATOR_RETURN} == {
        "R13", "R18", "R19", "R25", "R26", "R27", "R28", "R30", "R32", "R34"}
    assert {c for c, f in frames.items() if f == codes.DISHONOR_WINDOW} == {
        c for c, g in RETURN_GROUPS.items() if g == "dishonored"}
    assert {c for c, f in frames.items() if f == codes.CONTEST_WINDOW} == {
        c for c, g in RETURN_GROUPS.items() if g == "contested"}
    assert {c for c, f in frames.items() if f is None} == {
        c for c, g in RETURN_GROUPS.items() if g in ("enr", "iat")}
    assert (codes.STANDARD_RETURN.banking_days, codes.EXTENDED_RETURN.calendar_days) == (2, 60)
    # The compliance figures count with the same numbers.
    assert (STANDARD_RETURN_BANKING_DAYS, EXTENDED_RETURN_DAYS) == (2, 60)
    assert str(codes.STANDARD_RETURN) == "2 banking days after settlement"


def test_guard_codes_come_from_the_table():
    assert NEW_AUTHORIZATION_CODES == ("R02", "R03", "R04", "R05", "R07", "R08", "R10", "R16",
                                       "R29", "R51")
    assert REINITIATION_CODES == ("R01", "R09")


def test_every_code_has_a_meaning_and_a_label():
    for table in (codes.RETURN_CODE_TABLE, codes.NOC_CODE_TABLE):
        for code, row in table.items():
            assert row.code == code and row.meaning and len(row.meaning) <= 62, code
            assert row.label.startswith(f"{code}: {row.meaning}")
    assert codes.RETURN_CODES["R51"] == codes.RETURN_CODE_TABLE["R51"].meaning
    assert codes.NOC_CODES["C14"] == codes.NOC_CODE_TABLE["C14"].meaning
    # A NOC that asks a change names the fields and the words; a refused one asks none.
    for code, noc in codes.NOC_CODE_TABLE.items():
        assert bool(noc.fields) == bool(noc.change) == (noc.group == "change"), code


@pytest.mark.parametrize(("given", "label"), [
    ("R01", "R01: Insufficient funds"),
    (" r51 ", "R51: RCK: check ineligible or RCK entry improper"),
    ("C10", "C10: Incorrect company name (retired)"),
    ("R99", "R99: not a NACHA code paynb knows"),
    ("C99", "C99: not a NACHA code paynb knows"),
    ("X1", "X1: not a NACHA code paynb knows"),
])
def test_code_label(given, label):
    assert codes.code_label(given) == label


def test_code_meaning_of_an_unknown_code():
    assert codes.code_meaning("R99") == codes.UNKNOWN_CODE == "not a NACHA code paynb knows"
    assert codes.code_meaning("c05") == codes.NOC_CODES["C05"]
    assert not codes.is_known_code("R48") and not codes.is_known_code("C15")


def test_the_docs_pages_list_the_tables_as_they_are():
    path = Path(__file__).resolve().parent.parent / "scripts" / "code_tables.py"
    spec = importlib.util.spec_from_file_location("code_tables", path)
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for page, blocks in script.BLOCKS.items():
        text = page.read_text(encoding="utf-8")
        # Stale when it differs from what the script writes: run scripts/code_tables.py.
        assert script.render(text, blocks) == text, page
    listed = (script.DOCS / "codes.md").read_text(encoding="utf-8")
    for code in [*codes.RETURN_CODE_TABLE, *codes.NOC_CODE_TABLE]:
        assert f"| `{code}` |" in listed


def test_the_item_kinds_have_one_home():
    from paynb import codes, frames, journal
    from paynb.frames import _converters
    from paynb.history import _store
    from paynb.resources import AchResource, InstantResource, NocResource, RccResource, RtpResource

    assert frames.KINDS == codes.ITEM_KINDS
    assert set(_converters._SCHEMAS) == set(codes.ITEM_KINDS)
    assert journal.KINDS == codes.PAYMENT_KINDS
    assert sorted(_store.FRAME_KINDS.values()) == sorted(codes.ITEM_KINDS)
    assert _store.KINDS == ("ach", "rcc", "instant", "rtp", "nocs")
    for resource in (AchResource, RccResource, InstantResource, RtpResource, NocResource):
        assert resource.kind in codes.ITEM_KINDS
        assert resource.id_field == codes.ID_FIELDS[resource.kind]
    assert all(codes.KIND_ALIASES[alias] in codes.ITEM_KINDS for alias in codes.KIND_ALIASES)
