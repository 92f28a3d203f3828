"""A payroll-sized upload previews with the models' verdicts (issue 19).

The preview checks the rows column by column (``paynb._checks``) and lists the invalid
rows and the first valid ones; the counts and the total cover every row. How fast is
measured in benchmarks/ (the validation case), never asserted here: the machines are
shared.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pandas as pd

from benchmarks._data import ach_submissions
from paynb import models
from paynb.forms import BulkSubmitForm
from paynb.forms.bulk import _PREVIEW_ROWS


def test_a_100000_row_upload_previews_every_rows_verdict(client: Any) -> None:
    rows = ach_submissions(100_000, seed=3, invalid_share=0.05)
    content = pd.DataFrame(rows).to_csv(index=False).encode()
    form = BulkSubmitForm(client, kind="ach")
    form.load_file("payroll.csv", content)
    bad = {n for n, row in enumerate(rows) if models.check(models.AchItem, row)[1]}
    valid, invalid, total, repeats = form._counts()
    assert (valid, invalid, repeats) == (100_000 - len(bad), len(bad), False)
    assert total == sum(Decimal(row["amount"]) for n, row in enumerate(rows) if n not in bad)
    # Every invalid row is listed (up to the cap), with the models' message.
    html = form.preview.value
    assert html.count("paynb-row-invalid") == min(len(bad), _PREVIEW_ROWS)
    assert html.count("paynb-row-valid") + html.count("paynb-row-invalid") == _PREVIEW_ROWS
    assert "paynb-rows-not-shown" in html
    first_bad = min(bad)
    message = next(iter(models.check(models.AchItem, rows[first_bad])[1].values()))[0]
    assert message in html
    assert form._errors[first_bad] == models.check(models.AchItem, rows[first_bad])[1]
