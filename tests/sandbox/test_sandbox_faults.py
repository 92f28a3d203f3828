"""Faults on demand: 503, 429 with Retry-After, dropped connections (also after commit)."""

from __future__ import annotations

import pytest
import requests
from sandbox_helpers import ACH, Api, ach_item

from paynb.errors import BadRequestError
from paynb.sandbox import FaultSettings


@pytest.fixture(autouse=True)
def _no_faults_left(own):
    yield
    own.simulate.clear_faults()


def test_scripted_503_then_normal(own, own_api):
    own.simulate.script_fault("503", on="reads")
    answer = own_api.get(ACH)
    assert answer.status_code == 503
    assert answer.headers["content-type"] == "application/problem+json"
    assert own_api.get(ACH).status_code == 200


def test_scripted_429_has_retry_after(own, own_api):
    own.simulate.set_faults(reads=FaultSettings(retry_after=7))
    own.simulate.script_fault("429")
    answer = own_api.get(ACH)
    assert answer.status_code == 429
    assert answer.headers["retry-after"] == "7"


def test_dropped_read(own, own_api):
    own.simulate.script_fault("drop", on="reads")
    with pytest.raises(requests.ConnectionError):
        own_api.get(ACH)
    assert own_api.get(ACH).status_code == 200


@pytest.mark.parametrize(("fault", "stored"), [("drop", 0), ("drop_after_commit", 1)])
def test_dropped_write_before_or_after_commit(own, own_api, fault, stored):
    """A drop after commit loses the answer, not the item; a plain drop stores nothing."""
    item = ach_item()
    own.simulate.script_fault(fault, on="writes")
    with pytest.raises(requests.ConnectionError):
        own_api.post(ACH, item)
    found = own_api.get(ACH, params={"yourReferenceNumber": item["yourReferenceNumber"]})
    assert found.json()["total"] == stored


def test_script_applies_to_its_direction_only(own, own_api):
    own.simulate.script_fault("503", count=2, on="writes")
    assert own_api.get(ACH).status_code == 200
    assert len(own.simulate.get_faults()["scripted"]) == 2
    assert own_api.post(ACH, ach_item()).status_code == 503
    assert own_api.post(ACH, ach_item()).status_code == 503
    assert own_api.post(ACH, ach_item()).status_code == 200


def test_random_faults_by_rate(own, own_api):
    with own.simulate.faults(reads=FaultSettings(error_rate=1.0)):
        assert {own_api.get(ACH).status_code for _ in range(5)} == {503}
        assert own_api.post(ACH, ach_item()).status_code == 200  # writes untouched
    assert own_api.get(ACH).status_code == 200
    with own.simulate.faults(writes={"rate_limit_rate": 1.0, "retry_after": 2}):
        answer = own_api.post(ACH, ach_item())
        assert (answer.status_code, answer.headers["retry-after"]) == (429, "2")


def test_random_mix_is_seeded(own, own_api):
    def outcomes() -> list[int]:
        own.simulate.set_faults(reads={"error_rate": 0.3, "rate_limit_rate": 0.3}, seed=42)
        return [own_api.get(ACH, params={"pageSize": 1}).status_code for _ in range(20)]

    first = outcomes()
    assert first == outcomes()
    assert set(first) == {200, 429, 503}


def test_faults_spare_token_docs_and_simulation(own):
    own.simulate.set_faults(reads=FaultSettings(error_rate=1.0),
                            writes=FaultSettings(drop_rate=1.0))
    api = Api(own)  # the token endpoint still answers
    assert api.get(ACH).status_code == 503
    assert requests.get(own.base_url + "/openapi.json", timeout=30).status_code == 200
    assert own.simulate.get_faults()["reads"]["error_rate"] == 1.0


def test_latency_setting_is_reported(own, own_api):
    own.simulate.set_faults(reads=FaultSettings(latency_ms=5))
    assert own.simulate.get_faults()["reads"]["latency_ms"] == 5
    assert own_api.get(ACH, params={"pageSize": 1}).status_code == 200


@pytest.mark.parametrize("settings", [{"error_rate": 2}, {"drop_rate": -0.1},
                                      {"latency_ms": "slow"}, {"colour": "red"},
                                      {"error_rate": 0.6, "drop_rate": 0.6}])
def test_bad_fault_settings(own, settings):
    with pytest.raises(BadRequestError) as caught:
        own.simulate.set_faults(reads=settings)
    assert "reads" in caught.value.errors


def test_fault_settings_validate_in_python():
    with pytest.raises(ValueError, match="error_rate"):
        FaultSettings(error_rate=1.5).validate()
