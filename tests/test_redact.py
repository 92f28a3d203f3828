"""paynb._redact: every input and its redacted form, one table per presentation."""

from __future__ import annotations

from decimal import Decimal

import pytest

from paynb import _redact
from paynb.config import Credentials

CARD = "4111111111111111"  # passes the Luhn check
NOT_A_CARD = "4111111111111112"  # 16 digits that fail it

# redact(): what is stored (journal), kept on an exception (ApiError.body) or a result.
REDACTED = [
    ({"password": "hunter2", "amount": "1.00"}, {"amount": "1.00"}),
    ({"totPassword": "123456", "tot_password": "123456", "TOT-PASSWORD": "1"}, {}),
    ({"client_secret": "s", "clientSecret": "s", "access_token": "t", "token": "t"}, {}),
    ({"Authorization": "Bearer x", "apiKey": "k", "cvv": "123", "cardExpiration": "12/30"},
     {}),
    ({"cardNumber": CARD}, {"cardLastFour": "1111"}),
    ({"cardNumber": "4111 1111 1111 1111"}, {"cardLastFour": "1111"}),
    ({"pan": CARD, "cardLastFour": "9999"}, {"cardLastFour": "9999"}),
    ({"bankAccountNumber": "000123456789"}, {"bankAccountNumber": "****6789"}),
    ({"payeeAccountNumber": " 000123456789 "}, {"payeeAccountNumber": "****6789"}),
    ({"accountNumber": "1234"}, {"accountNumber": "****"}),
    ({"accountNumber": None}, {"accountNumber": None}),
    ({"items": [{"accountNumber": "12345678"}]}, {"items": [{"accountNumber": "****5678"}]}),
    ({"note": f"paid with card {CARD}"}, {"note": "paid with card ****1111"}),
    ({"note": "paid with card 4111-1111-1111-1111"}, {"note": "paid with card ****1111"}),
    ({"note": f"id {NOT_A_CARD}"}, {"note": f"id {NOT_A_CARD}"}),
    ({"amount": Decimal("10.10")}, {"amount": "10.10"}),
    ({"amount": float("nan")}, {"amount": None}),
]


@pytest.mark.parametrize(("value", "stored"), REDACTED)
def test_redact(value, stored):
    assert _redact.redact(value) == stored


# preview(): an answer quoted in an error message; long digit runs keep their last four.
PREVIEWED = [
    ("card 4111 1111 1111 1111 refused", "card ************1111 refused"),
    ("card 4111-1111-1111-1111 refused", "card ************1111 refused"),
    ("amex 3782-822463-10005.", "amex ***********0005."),
    ("account 000123456789", "account ********6789"),
    ("on 2026-11-22 at 10 01", "on 2026-11-22 at 10 01"),
    ("<html><body><h1>Bad   gateway</h1></body></html>", "Bad gateway"),
    ("x" * 170, "x" * 160 + "..."),
]


@pytest.mark.parametrize(("text", "shown"), PREVIEWED)
def test_preview(text, shown):
    assert _redact.preview(text) == shown


# hide_numbers(): an answer paynb cannot read at all; secrets and numbers starred out whole.
HIDDEN = [
    ('{"password": "hunter2"}', '{"password": "***"}'),
    ("access_token=eyJsecret&x=1", 'access_token="***"&x=1'),
    ('{"cardNumber": "4111111111111111"}', '{"cardNumber": "***"}'),
    ('{"weird": "4111111111111111"}', '{"weird": "****************"}'),
    ("item 12345 of 1234", "item ***** of 1234"),
]


@pytest.mark.parametrize(("text", "shown"), HIDDEN)
def test_hide_numbers(text, shown):
    assert _redact.hide_numbers(text) == shown


@pytest.mark.parametrize(("value", "shown"), [
    ("000123456789", "****6789"), (" 000123456789 ", "****6789"), ("6789", "****"),
    ("", "****"), (None, "****"), (123456789, "****6789"),
])
def test_last_four(value, shown):
    assert _redact.last_four(value) == shown


@pytest.mark.parametrize(("key", "secret"), [
    ("password", True), ("totPassword", True), ("client_secret", True), ("token", True),
    ("refresh_token", True), ("amount", False), ("cardNumber", False), ("username", False),
])
def test_secret_field_names(key, secret):
    assert _redact.is_secret_field(key) is secret


def test_reprs_hide_secrets():
    credentials = Credentials(client_id="id", client_secret="s3cret", username="ann",
                              password="pa55word")
    assert repr(credentials) == (f"Credentials(client_id='id', client_secret={_redact.HIDDEN}, "
                                 f"username='ann', password={_redact.HIDDEN})")


@pytest.mark.parametrize(("url", "scheme"), [
    ("mailtos://ops:app-pass@smtp.example.com?to=a@example.com", "mailtos"),
    ("json://127.0.0.1:8150/hook", "json"), ("slack://T1/B2/C3/#payments", "slack"),
    ("not a url", "?"), ("://nothing", "?")])
def test_a_notification_url_is_named_by_its_scheme_only(url, scheme):
    assert _redact.url_scheme(url) == scheme


def test_every_part_of_a_notification_url_is_hidden_from_text():
    url = "mailtos://alerts:Pa55-word@smtp.example.com:587?to=ops@example.com"
    slack = "slack://TokenAAA/TokenBBB/TokenCCC/#payments"
    text = (f"login to smtp.example.com:587 as alerts failed (Pa55-word refused) for "
            f"ops@example.com; posted to TokenBBB; {url}")
    hidden = _redact.hide_urls(text, [url, slack])
    for secret in ("Pa55-word", "alerts", "smtp.example.com", "ops", "example.com",
                   "TokenBBB", url):
        assert secret not in hidden
    assert hidden.startswith("login to <hidden>:<hidden> as <hidden> failed (<hidden>")
    assert _redact.hide_urls("nothing secret", []) == "nothing secret"
    # A profile's notify key is a secret field: redact() drops it.
    assert _redact.redact({"notify": [url], "company_code": "ACME"}) == {"company_code": "ACME"}


def test_a_database_address_shows_without_its_password() -> None:
    from paynb._redact import HIDDEN, hide_password

    assert hide_password("postgresql://ana:s3cr@t@db.example.com:5432/paynb") == \
        f"postgresql://ana:{HIDDEN}@db.example.com:5432/paynb"
    assert hide_password("postgresql://ana@db/paynb?sslmode=require&password=s3cret") == \
        f"postgresql://ana@db/paynb?sslmode=require&password={HIDDEN}"
    assert hide_password("host=db password='a b c' user=ana") == \
        f"host=db password={HIDDEN} user=ana"
    assert hide_password("cannot use postgresql://ana:pw@db/x: refused") == \
        f"cannot use postgresql://ana:{HIDDEN}@db/x: refused"
    for unchanged in ("postgresql://ana@db/paynb", "/home/ana/journal.sqlite3", "a@b.example"):
        assert hide_password(unchanged) == unchanged
