"""report(): the figures, the HTML view and the Excel evidence file."""

from __future__ import annotations

from decimal import Decimal

import openpyxl
import pandas as pd
import pytest

from paynb import compliance

from .conftest import debit, filler, frame

AS_OF = "2026-11-23"


def items() -> pd.DataFrame:
    """DEMO1 over the unauthorized threshold since 2026-11-20; DEMO2 fine."""
    records = filler(197, "2026-11-02", settle="2026-11-20")
    records += [debit("2026-11-02", "R", returned="2026-11-20", reason="R10",
                      settle="2026-11-03"),
                debit("2026-11-02", "R", returned="2026-11-20", reason="R01",
                      settle="2026-11-03")]
    records += filler(50, "2026-11-02", company="DEMO2", settle="2026-11-23", amount=2.5)
    return frame(records)


@pytest.fixture
def report():
    return compliance.report(items(), as_of=AS_OF)


def test_figures(report):
    rates = report.rates
    demo1 = rates[rates["companyCode"] == "DEMO1"]
    assert list(demo1["level"]) == ["over", "ok", "ok"]
    breaches = report.breaches.set_index(["companyCode", "category"])
    assert breaches.loc[("DEMO1", "unauthorized"), "days_since_last_breach"] == 0
    assert breaches.loc[("DEMO1", "unauthorized"), "days_over"] == 4  # 20th to 23rd
    assert breaches.loc[("DEMO1", "unauthorized"), "last_breach"] == pd.Timestamp(AS_OF)
    assert pd.isna(breaches.loc[("DEMO2", "overall"), "days_since_last_breach"])
    total = report.exposure_total.set_index("companyCode")
    # DEMO1: 197 debits of 10.00 settled 11-20 (deadline Tue 11-24); DEMO2: 50 of 2.50.
    assert total.loc["DEMO1", "standard_amount"] == Decimal("1970.00")
    assert total.loc["DEMO1", "standard_count"] == 197
    assert total.loc["DEMO2", "unauthorized_amount"] == Decimal("125.00")
    top = report.top_reasons
    assert top[top["category"] == "overall"]["returnReason"].tolist() == ["R01", "R10"]


def test_html_marks_each_rate(report):
    html = report._repr_html_()
    assert "Return rates as of 2026-11-23" in html
    assert html.count("✖ over") == 1 and html.count("✔ ok") == 5
    assert "not legal advice" in html
    assert "R10: Customer says the debit is not authorized (1)" in html  # code and meaning


def test_excel_evidence(report, tmp_path):
    path = report.to_excel(tmp_path / "evidence.xlsx")
    book = openpyxl.load_workbook(path)
    assert book.sheetnames == ["rates", "breaches", "exposure_total", "exposure_by_day",
                               "top_reasons", "notes"]
    total = book["exposure_total"]
    header = [c.value for c in total[1]]
    amount = total.cell(2, header.index("standard_amount") + 1)
    assert amount.value == 1970 and amount.number_format == "#,##0.00"
    rates = book["rates"]
    rate = rates.cell(2, [c.value for c in rates[1]].index("rate") + 1)
    assert rate.value == pytest.approx(1 / 199) and rate.number_format == "0.00%"
    notes = "\n".join(str(c.value) for row in book["notes"].iter_rows() for c in row)
    assert "Subsection 2.17.2" in notes and "Subsection 3.13" in notes
    assert "not legal advice" in notes


def test_report_of_a_client_lists_its_items(sandbox, tmp_path):
    with sandbox.connect(journal=None) as client:
        report = compliance.report(client, progress=False)
    assert "sandbox" in report.source and "DEMO1" in report.source
    assert set(report.rates["companyCode"]) == {"DEMO1"}
    assert len(report.rates) == 3
    assert report.to_excel(tmp_path / "sandbox.xlsx").is_file()


def test_report_refuses_other_things():
    with pytest.raises(TypeError, match="a paynb Client or a DataFrame"):
        compliance.report([1, 2, 3])


def test_report_of_nothing_and_of_all_items_together(tmp_path):
    empty = compliance.report(frame([]), as_of=AS_OF)
    assert empty.rates.empty and empty.exposure_total.empty
    assert "2026-09-25 to 2026-11-23" in empty._repr_html_()
    assert empty.to_excel(tmp_path / "empty.xlsx").is_file()
    together = compliance.report(items(), as_of=AS_OF, by=None)
    assert list(together.rates["returns"]) == [1, 0, 2]
    assert list(together.rates["entries"]) == [249, 249, 249]
    total = together.exposure_total.iloc[0]
    assert total["standard_amount"] == Decimal("2095.00")  # 1970.00 + 125.00
    assert str(together.exposure_total["standard_amount"].dtype).startswith("decimal128")
