"""Odd answers from the service give clear paynb errors, never a traceback from pandas.

The sandbox always answers well, so these answers are stubbed (``responses``): an HTML
error page, truncated JSON, an empty body, a 200 holding an error object, a wrong
content type, JSON of the wrong shape. Every one must surface as a
:class:`paynb.errors.PaynbError` raised by paynb's own code, and a submission whose
answer cannot be read must stay ``unknown`` in the journal (it may have been stored).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import responses

from paynb.client import Client
from paynb.config import Credentials
from paynb.errors import PaynbError, ResponseFormatError, ServerError

from .faultrun import ach_item

pytestmark = pytest.mark.guards_unchecked

BASE = "https://odd.test"
TOKEN = "odd-access-token-0123456789"
ACH = f"{BASE}/api/v3/AchTransactions/companycode/DEMO1"
SECRET, PASSWORD = "odd-client-secret", "odd-password"

HTML = ("<!DOCTYPE html><html><head><title>502 Bad Gateway</title></head><body>"
        "<h1>Bad Gateway</h1><p>The proxy received an invalid response.</p></body></html>")
RECORD = ('{"achItemId": 1, "yourReferenceNumber": "A", "itemStatus": "W", '
          '"amount": 1.5}')

# (name, status, content type, body)
ODD_ANSWERS = [
    ("html error page", 502, "text/html", HTML),
    ("html page with 200", 200, "text/html", HTML),
    ("truncated json", 200, "application/json", '{"total": 2, "transactions": [' + RECORD),
    ("empty body", 200, "application/json", ""),
    ("whitespace body", 200, "application/json", "  \n"),
    ("200 with an error object", 200, "application/json",
     '{"error": "internal", "message": "database unavailable"}'),
    ("wrong content type", 200, "application/xml", "<transactions><t id='1'/></transactions>"),
    ("json string", 200, "application/json", '"OK"'),
    ("json number", 200, "application/json", "42"),
    ("list of numbers", 200, "application/json", "[1, 2, 3]"),
    ("records not objects", 200, "application/json", '{"transactions": ["a", "b"]}'),
    ("nested garbage", 200, "application/json", '{"transactions": {"a": {"b": [1]}}}'),
    ("null", 200, "application/json", "null"),
    ("bad field types", 200, "application/json",
     '{"transactions": [{"achItemId": "x", "amount": "lots", "returnDate": "soon", '
     '"itemStatus": 7, "receivedDateTime": {"a": 1}}]}'),
    ("problem details 500", 500, "application/problem+json",
     '{"type": "about:blank", "title": "Boom", "status": 500}'),
    ("binary", 200, "application/octet-stream", b"\x00\xff\xfe\x89PNG\r\n"),
]
ODD_IDS = [name for name, *_ in ODD_ANSWERS]
_FOREIGN = ("/pandas/", "/numpy/", "/pyarrow/", "/orjson/")


@pytest.fixture
def stub() -> Iterator[responses.RequestsMock]:
    with responses.RequestsMock(assert_all_requests_are_fired=False) as mock:
        mock.add(responses.POST, f"{BASE}/connect/token",
                 json={"access_token": TOKEN, "expires_in": 3600, "token_type": "Bearer"})
        yield mock


@pytest.fixture
def client(tmp_path: Path) -> Iterator[Client]:
    made = Client(base_url=BASE, auth_url=BASE, company_code="DEMO1",
                  credentials=Credentials("odd-client", SECRET, "odd-user", PASSWORD),
                  journal=tmp_path / "journal.sqlite3", max_retries=1)
    made.transport.sleep = lambda seconds: None  # no waiting between retries
    yield made
    made.close()


def _paynb_error(call: Callable[[], Any]) -> PaynbError | None:
    """The PaynbError ``call()`` raises (None when it returns): never another exception,
    never one raised inside pandas and friends, never one quoting a secret."""
    try:
        call()
    except PaynbError as exc:
        text = "".join(traceback.format_exception(exc))
        assert not any(part in text for part in _FOREIGN), f"traceback from a library:\n{text}"
        for secret in (TOKEN, SECRET, PASSWORD):
            assert secret not in text and secret not in repr(exc)
        return exc
    except Exception as exc:  # the very thing this test is about
        text = "".join(traceback.format_exception(exc))
        pytest.fail(f"not a paynb error: {type(exc).__name__}\n{text}")
    return None


def _stub(stub: responses.RequestsMock, method: str, url: str, status: int,
          content_type: str, body: str | bytes) -> None:
    stub.add(method, url, status=status, content_type=content_type, body=body)


@pytest.mark.parametrize(("name", "status", "content_type", "body"), ODD_ANSWERS, ids=ODD_IDS)
def test_odd_list_answers(stub: responses.RequestsMock, client: Client, name: str,
                          status: int, content_type: str, body: str | bytes) -> None:
    _stub(stub, responses.GET, ACH, status, content_type, body)
    error = _paynb_error(lambda: client.ach.list(progress=False))
    if name in ("empty body", "whitespace body", "null", "bad field types"):
        # An empty answer may fairly read as "no items"; odd values in a record as
        # missing ones. Either way, no foreign traceback (checked above).
        return
    assert error is not None, f"{name}: read as if it were a list"
    if status >= 500:
        assert isinstance(error, ServerError) and error.status == status
        assert "<" not in str(error), "HTML tags are not shown to the analyst"


@pytest.mark.parametrize(("name", "status", "content_type", "body"), ODD_ANSWERS, ids=ODD_IDS)
def test_odd_single_item_answers(stub: responses.RequestsMock, client: Client, name: str,
                                 status: int, content_type: str, body: str | bytes) -> None:
    _stub(stub, responses.GET, f"{ACH}/7", status, content_type, body)
    error = _paynb_error(lambda: client.ach.get(7))
    if name != "bad field types":
        assert error is not None, f"{name}: read as if it were an item"


@pytest.mark.parametrize(("name", "status", "content_type", "body"), ODD_ANSWERS, ids=ODD_IDS)
def test_odd_submission_answers_leave_the_journal_unknown(
        stub: responses.RequestsMock, client: Client, name: str, status: int,
        content_type: str, body: str | bytes) -> None:
    _stub(stub, responses.POST, ACH, status, content_type, body)
    reference = f"ODD-{ODD_IDS.index(name)}"
    error = _paynb_error(lambda: client.ach.submit(ach_item(reference, 1)))
    if name == "bad field types":
        return  # a record came back: odd values, but the service said it stored one
    assert error is not None, f"{name}: read as if the item was stored"
    posts = [c for c in stub.calls if c.request.method == "POST" and "/api/" in c.request.url]
    assert len(posts) == 1, "a submission is sent once, whatever the answer"
    journal = client.journal()
    (state,) = journal.loc[journal["reference"] == reference, "state"]
    # No readable answer: the item may be stored, so the entry waits for reconcile().
    assert state == "unknown"


XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
# Export documents that are not what their content type (or the filetype) says.
ODD_EXPORTS = [
    ("csv", "text/csv", b"\x00\xff\xfe\x89PNG\r\n"),
    ("csv", "application/octet-stream", b"\x00\xff\xfe\x89PNG\r\n"),
    ("csv", "text/csv", b""),
    ("csv", "text/csv", b'achItemId,amount\n1,"never closed\n'),
    ("xlsx", XLSX, b"this is not a zip file"),
    ("xlsx", "application/octet-stream", b"PK\x03\x04 broken zip"),
    ("json", "application/json", b'{"transactions": [{"achItemId": 1'),
    ("json", "application/json", b"[1, 2, 3]"),
]


@pytest.mark.parametrize(("name", "status", "content_type", "body"), ODD_ANSWERS, ids=ODD_IDS)
def test_odd_export_answers(stub: responses.RequestsMock, client: Client, name: str,
                            status: int, content_type: str, body: str | bytes) -> None:
    _stub(stub, responses.GET, f"{ACH}/export/filetype/csv", status, content_type, body)
    _paynb_error(lambda: client.ach.export("csv"))


@pytest.mark.parametrize(("filetype", "content_type", "body"), ODD_EXPORTS)
def test_unreadable_export_documents(stub: responses.RequestsMock, client: Client,
                                     filetype: str, content_type: str, body: bytes) -> None:
    _stub(stub, responses.GET, f"{ACH}/export/filetype/{filetype}", 200, content_type, body)
    _paynb_error(lambda: client.ach.export(filetype))


def test_unreadable_answer_quotes_its_start_with_long_digits_masked(
        stub: responses.RequestsMock, client: Client) -> None:
    _stub(stub, responses.GET, ACH, 200, "text/html",
          "<html><body>card 4111111111111111 declined</body></html>")
    error = _paynb_error(lambda: client.ach.list(progress=False))
    assert isinstance(error, ResponseFormatError)
    assert "declined" in str(error) and "4111111111111111" not in str(error)
