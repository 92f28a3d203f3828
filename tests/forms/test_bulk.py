"""BulkSubmitForm against the sandbox: both alwaysCommitValid choices, uploads, the result."""

from __future__ import annotations

import datetime as dt
import io
import json
from decimal import Decimal
from typing import Any

import pandas as pd
import pytest

from paynb.forms import BulkSubmitForm

pytestmark = pytest.mark.guards_unchecked


@pytest.fixture
def batch(ref: Any) -> pd.DataFrame:
    """Three ACH rows; the third has an apostrophe in its account number (invalid)."""
    base = {"firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
            "zip": "10001", "bankRoutingNumber": "021000021", "achAccountType": "Checking",
            "achTransactionType": "Credit", "achEntryClass": "PPD"}
    rows = [("10.00", "111122223333"), ("20.55", "444455556666"), ("30.25", "7777'8888")]
    return pd.DataFrame([{**base, "yourReferenceNumber": ref(f"b{n}"), "amount": Decimal(a),
                          "bankAccountNumber": account}
                         for n, (a, account) in enumerate(rows)])


def _stored(client: Any, references: list[str]) -> pd.DataFrame:
    listed = client.ach.list(progress=False)
    return listed[listed["yourReferenceNumber"].isin(references)]


def test_commit_valid_stores_the_valid_rows_and_reports_the_invalid(client, batch) -> None:
    form = BulkSubmitForm(client, items=batch)
    assert form.kind.value == "ach"
    assert "paynb-row-invalid" in form.preview.value
    assert "only letters, digits" in form.preview.value
    assert form.preview.value.count("paynb-row-valid") == 2
    # The confirmation names the count and the exact total of what will be paid.
    assert form.confirm.description == ("I confirm: submit 2 ACH items totalling 30.55 "
                                        "(1 invalid row reported, not paid), for company "
                                        "DEMO1 on the sandbox (simulated, nothing is paid)")
    assert form.submit_button.disabled  # until confirmed
    form.submit_button.click()
    assert form.result is None
    form.confirm.value = True
    form.submit_button.click()
    form.submit_button.click()  # a double click sends once

    result = form.result
    assert list(result["row"]) == [1, 2, 3]
    assert list(result["itemStatus"].astype(str)) == ["W", "W", "I"]
    assert "bankAccountNumber" in result["errors"].iloc[2]
    stored = _stored(client, list(batch["yourReferenceNumber"]))
    assert sorted(stored["yourReferenceNumber"]) == sorted(batch["yourReferenceNumber"][:2])
    assert [Decimal(str(a)) for a in stored.sort_values("achItemId")["amount"]] == [
        Decimal("10.00"), Decimal("20.55")]
    assert len(client.journal()) == 2
    assert form.status_text == "Done: 2 of 3 items accepted, 1 invalid (status I): not paid."
    # The result is saved on request (issue 13), one row per input: see the tests below.
    assert [b.layout.display for b in form.save_buttons.values()] == [None, None]


def _widget_state(form: Any) -> str:
    from ipywidgets.embed import dependency_state, embed_data

    # The form's own widgets only: the manager also holds every other test's widgets.
    return json.dumps(embed_data(views=[form.widget],
                                 state=dependency_state([form.widget]))["manager_state"])


def test_blocked_and_invalid_answers_are_not_counted_accepted(client, batch,
                                                               monkeypatch) -> None:
    """The service may answer a row B (blocked, stored but never processed: real-service.md,
    "Statuses"); the sandbox answers W at submission, so its answer is altered here."""
    real = client.ach.submit_many

    def answers_b(*args: Any, **kwargs: Any) -> pd.DataFrame:
        result = real(*args, **kwargs)
        statuses = result["itemStatus"].astype(object)
        statuses.iloc[1] = "B"
        result["itemStatus"] = statuses
        return result

    monkeypatch.setattr(client.ach, "submit_many", answers_b)
    form = BulkSubmitForm(client, items=batch)
    form.confirm.value = True
    form.submit_button.click()
    assert list(form.result["itemStatus"].astype(str)) == ["W", "B", "I"]
    assert form.status_text == ("Done: 1 of 3 items accepted, 1 invalid (status I) and "
                                "1 blocked (status B): not paid.")


def test_the_result_is_never_embedded_in_the_widgets(client, batch, tmp_path) -> None:
    form = BulkSubmitForm(client, items=batch, folder=tmp_path / "saved")
    assert all(b.layout.display == "none" for b in form.save_buttons.values())  # nothing yet
    form.confirm.value = True
    form.submit_button.click()
    assert len(form.result) == 3
    state = _widget_state(form)
    assert "data:text/csv" not in state and "base64" not in state
    assert batch["yourReferenceNumber"].iloc[2] in state  # the result's table is shown
    assert not (tmp_path / "saved").exists()  # and nothing is written until asked


@pytest.mark.parametrize("filetype", ["csv", "xlsx"])
def test_save_writes_the_result_as_shown_and_says_where(client, batch, tmp_path,
                                                         filetype) -> None:
    form = BulkSubmitForm(client, items=batch, folder=tmp_path)
    form.confirm.value = True
    form.submit_button.click()
    form.kind.value = "rcc"  # toggled after sending: the file still holds the ACH result
    form.save_buttons[filetype].click()
    path = form.saved
    assert path is not None and path.parent == tmp_path and path.suffix == f".{filetype}"
    assert path.name.startswith("bulk-ach-result-")
    assert str(path) in form.saved_path.value and str(path) in form.status_text
    assert form.status_text == f"Saved 3 rows to {path}."
    read = (pd.read_csv(path, dtype=str, keep_default_na=False) if filetype == "csv"
            else pd.read_excel(path, dtype=str).fillna(""))
    result = form.result
    assert list(read.columns) == list(result.columns)
    assert read["row"].tolist() == ["1", "2", "3"]
    assert read["yourReferenceNumber"].tolist() == list(batch["yourReferenceNumber"])
    assert read["achItemId"].tolist()[:2] == [str(i) for i in result["achItemId"][:2]]
    assert read["itemStatus"].tolist() == ["W", "W", "I"]
    # exact (an Excel cell holds a number: 10 for 10.00); the invalid row comes back as the
    # service answered it
    assert [Decimal(a) if a else None for a in read["amount"]] == [
        a if pd.notna(a) else None for a in result["amount"]]
    assert [Decimal(a) for a in read["amount"][:2]] == [Decimal("10.00"), Decimal("20.55")]
    if filetype == "csv":
        assert read["amount"].tolist()[:2] == ["10.00", "20.55"]
    # masked as the result shows them: never the full account number
    assert read["bankAccountNumber"].tolist()[:2] == ["****3333", "****6666"]
    assert read["bankAccountNumber"].tolist() == result["bankAccountNumber"].fillna("").tolist()
    assert "111122223333" not in path.read_bytes().decode("latin-1")


def test_all_or_nothing_with_an_invalid_row_sends_nothing(client, batch) -> None:
    form = BulkSubmitForm(client, items=batch)
    form.commit.value = "All or nothing"
    assert form.submit_button.disabled
    assert form.status_text.startswith("All or nothing: 1 invalid row(s)")
    form.confirm.value = True  # hidden, but a click from code must not get past it either
    form.submit_button.click()
    assert form.result is None
    assert _stored(client, list(batch["yourReferenceNumber"])).empty


def test_all_or_nothing_with_valid_rows_stores_them_all(client, batch) -> None:
    form = BulkSubmitForm(client, items=batch.iloc[:2])
    form.commit.value = "All or nothing"
    form.confirm.value = True
    form.submit_button.click()
    assert list(form.result["itemStatus"].astype(str)) == ["W", "W"]
    assert len(_stored(client, list(batch["yourReferenceNumber"]))) == 2


def test_changing_the_choice_withdraws_the_confirmation(client, batch) -> None:
    form = BulkSubmitForm(client, items=batch.iloc[:2])
    form.confirm.value = True
    form.commit.value = "All or nothing"
    assert not form.confirm.value and form.submit_button.disabled


def test_repeated_references_within_the_set_block_it(client, batch) -> None:
    twice = pd.concat([batch.iloc[:1], batch.iloc[:1]])
    form = BulkSubmitForm(client, items=twice)
    assert "repeats row 1" in form.preview.value
    assert form.submit_button.disabled and "repeat" in form.status_text


def test_a_csv_upload_keeps_leading_zeros_and_exact_amounts(client, batch) -> None:
    text = batch.assign(bankRoutingNumber="011000138").to_csv(index=False).encode()
    form = BulkSubmitForm(client)
    assert form.submit_button.disabled and "upload" in form.status_text
    form.upload.value = ({"name": "batch.csv", "type": "text/csv", "size": len(text),
                          "content": memoryview(text),
                          "last_modified": dt.datetime(2026, 11, 1, tzinfo=dt.UTC)},)
    assert [r["bankRoutingNumber"] for r in form._rows] == ["011000138"] * 3
    assert [r["amount"] for r in form._rows] == ["10.00", "20.55", "30.25"]
    assert "30.55" in form.confirm.description


def test_an_xlsx_upload_of_rcc_items(client, ref) -> None:
    rows = pd.DataFrame([{
        "firstSignerFirstName": "Sam", "firstSignerLastName": "Lee", "address1": "1 Main St",
        "city": "Springfield", "state": "IL", "zip": "62701", "yourReferenceNumber": ref("x"),
        "bankRoutingNumber": "021000021", "bankAccountNumber": "000987654321",
        "amount": "49.99", "notes": "ignored column"}])
    buffer = io.BytesIO()
    rows.to_excel(buffer, index=False)
    form = BulkSubmitForm(client)
    form.load_file("rcc.xlsx", buffer.getvalue())
    assert form.kind.value == "rcc"  # guessed from the RCC-only columns
    assert "Columns ignored" in form.preview.value and "notes" in form.preview.value
    form.confirm.value = True
    form.submit_button.click()
    stored = client.rcc.get(int(form.result["rccItemId"].iloc[0]))
    assert stored["bankAccountNumber"].endswith("4321")
    assert Decimal(str(stored["amount"])) == Decimal("49.99")


def test_a_file_that_is_not_csv_or_xlsx_is_refused(client) -> None:
    form = BulkSubmitForm(client)
    form.load_file("items.pdf", b"%PDF")
    assert "Could not read items.pdf" in form.status_text


def test_a_reference_already_in_the_journal_asks_before_sending(client, batch) -> None:
    first = BulkSubmitForm(client, items=batch.iloc[:1])
    first.confirm.value = True
    first.submit_button.click()
    again = BulkSubmitForm(client, items=batch.iloc[:2])
    again.confirm.value = True
    again.submit_button.click()
    assert again.result is None
    assert "used" in again.output.value or "submitted before" in again.output.value
    assert not again.anyway_button.disabled
    again.anyway_button.click()
    assert list(again.result["itemStatus"].astype(str)) == ["W", "W"]
    assert len(_stored(client, list(batch["yourReferenceNumber"][:2]))) == 3


def test_the_upload_button_and_preview_fit_the_form(client, batch) -> None:
    form = BulkSubmitForm(client, batch)
    # Sized to its text ("Upload CSV/XLSX" in full), not the default short width.
    assert form.upload.description == "Upload CSV/XLSX"
    assert form.upload.layout.width == "auto" and form.upload.layout.min_width == "170px"
    # The preview may shrink to the form's width (a flex child grows to its content).
    assert form.preview.layout.width == "100%" and form.preview.layout.min_width == "0"


def test_a_set_sent_in_several_requests_shows_each_chunk(client, batch, ref,
                                                         monkeypatch) -> None:
    # Requests of 2 items instead of 1,000: five rows go out in three requests.
    monkeypatch.setattr("paynb.resources._bulk.BULK_CHUNK", 2)
    rows = pd.concat([batch.iloc[:2]] * 3, ignore_index=True).iloc[:5]
    rows["yourReferenceNumber"] = [ref(f"chunk{n}") for n in range(5)]
    form = BulkSubmitForm(client, items=rows)
    seen: list[str] = []
    form.status.observe(lambda _change: seen.append(form.status_text), names="value")
    form.confirm.value = True
    form.submit_button.click()

    assert [line for line in seen if "chunk" in line] == [
        "Submitting 5 rows: chunk 1 of 3 on its way (0 answered)…",
        "Submitting 5 rows: chunk 2 of 3 on its way (1 answered)…",
        "Submitting 5 rows: chunk 3 of 3 on its way (2 answered)…",
        "Submitting 5 rows: all 3 chunks answered, reading the results…",
    ]
    assert form.status_text == "Done: 5 of 5 items accepted."
    assert len(_stored(client, list(rows["yourReferenceNumber"]))) == 5


def test_a_set_sent_in_one_request_shows_no_chunks(client, batch) -> None:
    form = BulkSubmitForm(client, items=batch)
    seen: list[str] = []
    form.status.observe(lambda _change: seen.append(form.status_text), names="value")
    form.confirm.value = True
    form.submit_button.click()
    assert "Submitting 3 rows…" in seen
    assert not [line for line in seen if "chunk" in line]


def test_a_failing_progress_callback_does_not_stop_a_set_half_sent(client, batch, ref,
                                                                   monkeypatch, caplog) -> None:
    # The hook the form uses: whatever the caller's display does, every chunk goes out.
    monkeypatch.setattr("paynb.resources._bulk.BULK_CHUNK", 1)
    rows = batch.iloc[:2].assign(yourReferenceNumber=[ref("cb0"), ref("cb1")])

    def broken(answered: int, requests: int) -> None:
        raise RuntimeError("display gone")

    result = client.ach.submit_many(rows, on_chunk=broken)
    assert list(result["itemStatus"].astype(str)) == ["W", "W"]
    assert "on_chunk callback failed" in caplog.text
    assert set(client.journal()["state"]) == {"sent"}
