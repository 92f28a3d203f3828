"""Bad input never reaches the wire; good input is accepted by the service.

Property tests over every request model of :mod:`paynb.models`: a value that breaks a
field's rule makes the client raise :class:`paynb.errors.ValidationError` naming that
field, with no HTTP request sent (a spy on the client's session sees none, not even a
token request); a valid body is accepted by the sandbox. Example counts are modest
to keep CI fast.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paynb import models, sandbox, validation
from paynb.errors import BulkRejectedError, ValidationError
from paynb.sandbox import rules

from . import strategies as s
from .conftest import WireSpy, make_client
from .strategies import ALNUM

pytestmark = pytest.mark.guards_unchecked

EXAMPLES = settings(max_examples=40, deadline=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])
VALID_EXAMPLES = settings(max_examples=12, deadline=None,
                          suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                 HealthCheck.too_slow])

ACH = {"firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "state": "NY",
       "zip": "10001", "yourReferenceNumber": "BAD-ACH", "bankRoutingNumber": "021000021",
       "bankAccountNumber": "000123456789", "achTransactionType": "Debit",
       "amount": Decimal("125.10")}
RCC = {"firstSignerFirstName": "Jane", "firstSignerLastName": "Doe", "address1": "1 Main St",
       "city": "Springfield", "state": "IL", "zip": "62701", "yourReferenceNumber": "BAD-RCC",
       "bankRoutingNumber": "011000015", "bankAccountNumber": "12345678",
       "amount": Decimal("19.99")}
CARD = "4111111111111111"
INSTANT = {"nameOnCard": "JANE DOE", "cardNumber": CARD, "cardExpiration": "12/2035",
           "totPassword": "123456", "amount": 1000, "yourReferenceNumber": "BAD-IC"}
# Token mode of the same model: with INSTANT, every field of InstantCardTransaction.
TOKEN = {"tokenId": "tok_1", "yourSubClientId": "sub-1"}
TOKEN_INSTANT = {**TOKEN, "amount": 1000, "yourReferenceNumber": "BAD-IT"}
RTP = {"name": "Jane Doe", "firstName": "Jane", "lastName": "Doe",
       "routingNumber": "021000021", "accountNumber": "12345678", "amount": 1000,
       "yourReferenceNumber": "BAD-RTP"}

_NAMES = {"firstSignerFirstName", "firstSignerLastName", "secondSignerFirstName",
          "secondSignerLastName", "address1", "address2", "city", "nameOnCard", "name",
          "firstName", "lastName", "tokenId", "yourSubClientId"}


_ACH_ADDRESS = {"address1", "address2", "city"}


def _is_blank(value: Any) -> bool:
    return isinstance(value, str) and not value.strip()


def _bad_for(field: str, model: type[models.RequestModel]) -> st.SearchStrategy[Any]:
    """Values that break the rule of ``field`` in ``model`` (wire spelling).

    Blank text in an optional field is absent, never an error (docs/validation.md), so it
    is not among an optional field's bad values.
    """
    strategy = _bad_value(field, model)
    names = {info.alias or name: info for name, info in model.model_fields.items()}
    if not names[field].is_required():
        strategy = strategy.filter(lambda value: not _is_blank(value))
    return strategy


def _bad_value(field: str, model: type[models.RequestModel]) -> st.SearchStrategy[Any]:
    # An ACH item's address is free text of unshown length, an RCC item's a name-like text.
    if field in _NAMES and not (model is models.AchItem and field in _ACH_ADDRESS):
        return s.bad_name
    by_field: dict[str, st.SearchStrategy[Any]] = {
        "state": s.bad_state,
        "zip": s.bad_rcc_zip if model is models.RccItem else s.bad_ach_zip,
        "yourReferenceNumber": s.bad_reference,
        "bankRoutingNumber": s.bad_routing, "routingNumber": s.bad_routing,
        "bankAccountNumber": s.bad_account, "accountNumber": s.bad_account,
        # Open sets: unknown words pass with a warning; only non-text is refused.
        "achAccountType": s.bad_open_text, "achEntryClass": s.bad_open_text,
        "achTransactionSubType": s.bad_open_text,
        "achPaymentTypeCode": s.bad_width(2),
        "achTransactionType": s.bad_literal(validation.ACH_TRANSACTION_TYPES),
        # The documented optional ACH fields.
        "address1": s.bad_free_text, "address2": s.bad_free_text, "city": s.bad_free_text,
        "achIdentificationNumber": s.bad_free_text,
        "achCompanyEntryDescription": s.bad_free_text,
        "achCompanyDiscretionaryData": s.bad_free_text, "achAddendaText": s.bad_free_text,
        "countryCode": s.bad_country_code,
        "achTransactionDiscretionaryData": s.bad_width(2),
        "achTransactionCode": s.bad_whole, "achCheckNumber": s.bad_whole,
        "sameDayAchRequested": s.bad_flag,
        "sendDate": s.bad_date, "achEffectiveDate": s.bad_date,
        "iatAddenda": s.bad_object,
        "cardNumber": s.bad_card, "cardExpiration": s.bad_expiration,
        "totPassword": s.bad_tot,
        "amount": s.bad_instant_amount if model in (models.InstantCardTransaction,
                                                    models.RtpTransaction) else s.bad_amount,
    }
    return by_field[field]


# What the bulk models' alwaysCommitValid refuses, by construction: pydantic's lax bool
# takes True/False, 0/1 (also as floats) and a few words (yes, no, on, off, t, f, y, n,
# true, false, 1, 0; any case), so anything else.
bad_commit_choice = st.one_of(
    st.none(),
    st.integers().filter(lambda n: n not in (0, 1)),
    st.floats(allow_nan=True).filter(lambda f: f not in (0.0, 1.0)),
    st.sampled_from(["", "maybe", "2", "tru", " yes", "oui", "-1", "None"]),
    st.text(ALNUM, min_size=6, max_size=12),
    st.lists(st.booleans(), max_size=2),
)


def _fields(model: type[models.RequestModel]) -> list[str]:
    return sorted(model.wire_names().values())


@pytest.fixture(scope="module")
def sb() -> Iterator[Any]:
    with sandbox.serve(port=0, seed_items=0, seed=21) as running:
        yield running


@pytest.fixture(scope="module")
def watched(sb: Any) -> Iterator[tuple[Any, WireSpy]]:
    client = make_client(sb, journal=None)
    spy = WireSpy(client.transport.session)
    # Route checks made now so that a send is refused for its data, not for want of one.
    client.instant.check_route(CARD)
    client.instant.check_route(token_id=TOKEN["tokenId"], sub_client_id=TOKEN["yourSubClientId"])
    client.rtp.check_route(RTP["routingNumber"])
    yield client, spy
    client.close()


def _refused(call: Callable[[], Any], spy: WireSpy, field: str, value: Any,
             error: type[Exception] = ValidationError) -> Any:
    """``call()`` raises ``error`` naming ``field``, and nothing went on the wire."""
    spy.reset()
    with pytest.raises(error) as caught:
        call()
    assert spy.calls == [], f"bad {field} reached the wire: {spy.calls}"
    keys = list(caught.value.errors)
    assert any(key == field or key.startswith(field) or key.endswith(f".{field}")
               or key.endswith(field) for key in keys), f"{field} not named in {keys}"
    if isinstance(value, str) and len(value) >= 8 and field in (
            "cardNumber", "bankAccountNumber", "accountNumber", "totPassword"):
        assert value not in str(caught.value), "the message quotes a secret value"
    return caught.value


# -- one property test per request model --------------------------------------------------

@EXAMPLES
@given(data=st.data())
@pytest.mark.parametrize(("model", "base", "kind"), [
    (models.AchItem, ACH, "ach"), (models.RccItem, RCC, "rcc")])
def test_bad_item_fields_never_reach_the_wire(watched: tuple[Any, WireSpy], model: Any,
                                              base: dict[str, Any], kind: str,
                                              data: st.DataObject) -> None:
    client, spy = watched
    field = data.draw(st.sampled_from(_fields(model)), label="field")
    value = data.draw(_bad_for(field, model), label="value")
    body = {**base, field: value}
    _refused(lambda: getattr(client, kind).submit(body), spy, field, value)


def _bad_bulk_items(client: Any, spy: WireSpy, kind: str, rows: list[dict[str, Any]],
                    data: st.DataObject) -> None:
    """One row breaks one of its fields' rules."""
    item_model = models.AchItem if kind == "ach" else models.RccItem
    bad_row = data.draw(st.integers(0, len(rows) - 1), label="row")
    field = data.draw(st.sampled_from(_fields(item_model)), label="item field")
    value = data.draw(_bad_for(field, item_model), label="value")
    rows[bad_row] = {**rows[bad_row], field: value}
    # All or nothing: the whole set is refused, naming the row and the field.
    error = _refused(lambda: getattr(client, kind).submit_many(rows, commit_valid=False),
                     spy, f"items[{bad_row}].{field}", value, BulkRejectedError)
    assert bad_row in error.rows and field in error.rows[bad_row]
    # Commit the valid ones: the bad row alone is answered I without being sent.
    spy.reset()
    only_bad = [rows[bad_row]]
    result = getattr(client, kind).submit_many(only_bad, commit_valid=True)
    assert spy.calls == []
    assert list(result["itemStatus"]) == ["I"] and field in str(result["errors"].iloc[0])


def _bad_commit_choice(client: Any, spy: WireSpy, kind: str, rows: list[dict[str, Any]],
                       data: st.DataObject) -> None:
    """alwaysCommitValid is not a yes or no: the client's ``commit_valid`` carries it."""
    value = data.draw(bad_commit_choice, label="alwaysCommitValid")
    model = models.AchBulkRequest if kind == "ach" else models.RccBulkRequest
    _, errors = models.check(model, {"alwaysCommitValid": value, "items": rows})
    assert list(errors) == ["alwaysCommitValid"]
    _refused(lambda: getattr(client, kind).submit_many(rows, commit_valid=value), spy,
             "commit_valid", value)


_BULK_FIELDS = {"items": _bad_bulk_items, "alwaysCommitValid": _bad_commit_choice}


@EXAMPLES
@given(data=st.data())
@pytest.mark.parametrize(("model", "base", "kind"), [
    (models.AchBulkRequest, ACH, "ach"), (models.RccBulkRequest, RCC, "rcc")])
def test_bad_bulk_rows_never_reach_the_wire(watched: tuple[Any, WireSpy], model: Any,
                                            base: dict[str, Any], kind: str,
                                            data: st.DataObject) -> None:
    client, spy = watched
    assert sorted(_BULK_FIELDS) == _fields(model), "a bulk field without a bad-value case"
    rows = [dict(base, yourReferenceNumber=f"BULK-{n}") for n in range(3)]
    field = data.draw(st.sampled_from(_fields(model)), label="field")
    _BULK_FIELDS[field](client, spy, kind, rows, data)


@EXAMPLES
@given(data=st.data())
def test_bad_instant_card_fields_never_reach_the_wire(watched: tuple[Any, WireSpy],
                                                      data: st.DataObject) -> None:
    client, spy = watched
    fields = _fields(models.InstantCardTransaction)
    assert sorted(set(INSTANT) | set(TOKEN_INSTANT)) == fields, "a field in neither mode"
    field = data.draw(st.sampled_from(fields), label="field")
    base = data.draw(st.sampled_from([b for b in (INSTANT, TOKEN_INSTANT) if field in b]),
                     label="mode")
    value = data.draw(_bad_for(field, models.InstantCardTransaction), label="value")
    body = {**base, field: value}
    _refused(lambda: client.instant.send(body), spy, field, value)


@EXAMPLES
@given(data=st.data())
def test_bad_rtp_fields_never_reach_the_wire(watched: tuple[Any, WireSpy],
                                             data: st.DataObject) -> None:
    client, spy = watched
    field = data.draw(st.sampled_from(_fields(models.RtpTransaction)), label="field")
    value = data.draw(_bad_for(field, models.RtpTransaction), label="value")
    body = {**RTP, field: value}
    _refused(lambda: client.rtp.send(body), spy, field, value)


@EXAMPLES
@given(card=s.bad_card, token=s.bad_name, which=st.sampled_from(["tokenId",
                                                                 "yourSubClientId"]))
def test_bad_route_checks_never_reach_the_wire(watched: tuple[Any, WireSpy], card: Any,
                                               token: Any, which: str) -> None:
    client, spy = watched
    _refused(lambda: client.instant.check_route(card), spy, "cardNumber", card)
    given_token = {"token_id": "tok_1", "sub_client_id": "sub-1"}
    given_token["token_id" if which == "tokenId" else "sub_client_id"] = token
    _refused(lambda: client.instant.check_route(**given_token), spy, which, token)


@EXAMPLES
@given(refs=st.lists(s.bad_reference.filter(lambda v: isinstance(v, str)), min_size=1,
                     max_size=3),
       ids=st.lists(s.bad_item_id, min_size=1, max_size=3))
def test_bad_voids_never_reach_the_wire(watched: tuple[Any, WireSpy], refs: list[str],
                                        ids: list[Any]) -> None:
    client, spy = watched
    _refused(lambda: client.ach.void_references(["OK-1", *refs]), spy, "reference_numbers",
             refs[0])
    for kind, field in (("ach", "achItemIds"), ("rcc", "rccItemIds")):
        spy.reset()
        with pytest.raises(ValidationError) as caught:
            getattr(client, kind).void_many([1, *ids])
        assert spy.calls == []
        assert any(key.startswith((field, "item_ids")) for key in caught.value.errors)
    for call in (lambda: client.ach.void_references([]), lambda: client.rcc.void_many([])):
        spy.reset()
        with pytest.raises(ValidationError):
            call()
        assert spy.calls == []


# -- valid bodies are accepted -------------------------------------------------------------

_serial = itertools.count()


def _reference(prefix: str) -> st.SearchStrategy[str]:
    # Unique per example (hypothesis may replay one), so no reference is seen twice.
    return st.text(s.ALNUM + "-_/ .", min_size=0, max_size=20).map(
        lambda text: f"{prefix}{next(_serial)}-{text}".strip()[:50])


_valid_ach = st.fixed_dictionaries({
    "firstSignerFirstName": s.valid_name, "firstSignerLastName": s.valid_name,
    "state": s.valid_state, "zip": s.valid_ach_zip, "yourReferenceNumber": _reference("VA"),
    "bankRoutingNumber": s.valid_routing, "bankAccountNumber": s.valid_account,
    "achTransactionType": st.sampled_from(validation.ACH_TRANSACTION_TYPES),
    "amount": s.valid_amount,
}, optional={"achAccountType": st.sampled_from(validation.ACH_ACCOUNT_TYPES),
             # IAT needs its addenda: tests/test_validation_policy.py sends those.
             "achEntryClass": st.sampled_from([c for c in validation.ACH_ENTRY_CLASSES
                                               if c != "IAT"])})
_prenote = _valid_ach.map(lambda item: {**item, "achTransactionType": "Debit",
                                        "achTransactionSubType": "Prenote",
                                        "amount": Decimal(0)})
_valid_rcc = st.fixed_dictionaries({
    "firstSignerFirstName": s.valid_name, "firstSignerLastName": s.valid_name,
    "address1": s.valid_name, "city": s.valid_name, "state": s.valid_state,
    "zip": s.valid_rcc_zip, "yourReferenceNumber": _reference("VR"),
    "bankRoutingNumber": s.valid_routing, "bankAccountNumber": s.valid_account,
    "amount": s.valid_amount,
}, optional={"secondSignerFirstName": s.valid_name, "secondSignerLastName": s.valid_name,
             "address2": s.valid_name})
# Visa cards outside the unreachable 400000 range (paynb.sandbox.rules.CARD_RANGES).
_valid_card = s._digits(14, 14).filter(lambda d: not d.startswith("00000")).map(
    lambda d: s.luhn_complete("4" + d))
_reachable_rtp = sorted(n for n, bank in rules.RTP_BANKS.items() if bank.reachable)


def _same_amount(recorded: Any, sent: Decimal) -> None:
    assert Decimal(str(recorded)) == sent


@VALID_EXAMPLES
@given(item=st.one_of(_valid_ach, _prenote))
def test_valid_ach_items_are_accepted(watched: tuple[Any, WireSpy], item: dict[str, Any]
                                      ) -> None:
    client, _ = watched
    stored = client.ach.submit(item)
    assert stored["itemStatus"] == "W"
    assert stored["yourReferenceNumber"] == item["yourReferenceNumber"]
    _same_amount(stored["amount"], item["amount"])


@VALID_EXAMPLES
@given(item=_valid_rcc)
def test_valid_rcc_items_are_accepted(watched: tuple[Any, WireSpy], item: dict[str, Any]
                                      ) -> None:
    client, _ = watched
    stored = client.rcc.submit(item)
    assert stored["itemStatus"] == "W"
    _same_amount(stored["amount"], item["amount"])


@VALID_EXAMPLES
@given(items=st.lists(_valid_ach, min_size=1, max_size=5), commit=st.booleans())
def test_valid_bulks_are_accepted(watched: tuple[Any, WireSpy], items: list[dict[str, Any]],
                                  commit: bool) -> None:
    client, _ = watched
    result = client.ach.submit_many(items, commit_valid=commit)
    assert list(result["itemStatus"]) == ["W"] * len(items)
    for (_, row), item in zip(result.iterrows(), items, strict=True):
        _same_amount(row["amount"], item["amount"])


_valid_token = s.valid_name.filter(lambda t: not t.strip().startswith("tok_un"))


@VALID_EXAMPLES
@given(card=_valid_card, amount=st.integers(1, 5_000_000), name=s.valid_name,
       expiration=s.valid_expiration, tot=s.valid_tot, reference=_reference("VI"),
       token=st.one_of(st.none(), st.tuples(_valid_token, s.valid_name)))
def test_valid_instant_card_payments_are_accepted(watched: tuple[Any, WireSpy], card: str,
                                                  amount: int, name: str, expiration: str,
                                                  tot: str, reference: str,
                                                  token: tuple[str, str] | None) -> None:
    client, _ = watched
    common = {"totPassword": tot, "amount": amount, "yourReferenceNumber": reference}
    if token is None:  # card mode
        check = client.instant.check_route(card)
        body = {"nameOnCard": name, "cardNumber": card, "cardExpiration": expiration}
    else:
        check = client.instant.check_route(token_id=token[0], sub_client_id=token[1])
        body = {"tokenId": token[0], "yourSubClientId": token[1]}
    assert check.supported and check.reachable
    sent = client.instant.send({**body, **common})
    assert sent["status"] in ("Success", "Failed") and sent["uniqueId"]
    assert sent["cardLastFour"] == (card[-4:] if token is None else check.raw["cardLastFour"])


@VALID_EXAMPLES
@given(routing=st.sampled_from(_reachable_rtp), first=s.valid_name, last=s.valid_name,
       account=s.valid_account, amount=st.integers(1, 500_000), reference=_reference("VP"))
def test_valid_rtp_payments_are_accepted(watched: tuple[Any, WireSpy], routing: str,
                                         first: str, last: str, account: str, amount: int,
                                         reference: str) -> None:
    client, _ = watched
    assert client.rtp.check_route(routing).ok
    sent = client.rtp.send({"firstName": first, "lastName": last, "routingNumber": routing,
                            "accountNumber": account, "amount": amount,
                            "yourReferenceNumber": reference})
    assert sent["status"] in ("Success", "Failed") and sent["uniqueId"]


@VALID_EXAMPLES
@given(token=_valid_token, sub_client=s.valid_name,
       items=st.lists(_valid_ach, min_size=1, max_size=3))
def test_valid_route_checks_and_voids_are_accepted(watched: tuple[Any, WireSpy], token: str,
                                                   sub_client: str,
                                                   items: list[dict[str, Any]]) -> None:
    client, _ = watched
    assert client.instant.check_route(token_id=token, sub_client_id=sub_client).ok
    stored = client.ach.submit_many(items)
    ids = [int(i) for i in stored["achItemId"]]
    voided = client.ach.void_many(ids[:1])
    assert list(voided["itemStatus"]) == ["V"]
    if len(ids) > 1:
        refs = list(stored["yourReferenceNumber"][1:])
        by_reference = client.ach.void_references(refs)
        assert sorted(by_reference["yourReferenceNumber"]) == sorted(refs)
        assert set(by_reference["itemStatus"]) == {"V"}
