"""Settings: PAYNB_* variables, profiles in the config file, secrets from the keyring."""

from __future__ import annotations

import logging

import pytest

import paynb
from paynb import config
from paynb.errors import ValidationError

ENV = {"PAYNB_BASE_URL": "https://svc.test", "PAYNB_AUTH_URL": "https://auth.test",
       "PAYNB_COMPANY_CODE": "ACME1", "PAYNB_CLIENT_ID": "nb", "PAYNB_CLIENT_SECRET": "s3cret",
       "PAYNB_USERNAME": "jane", "PAYNB_PASSWORD": "pa55word"}


def test_from_env_reads_the_seven_variables(monkeypatch):
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    client = paynb.Client.from_env(journal=None)
    assert (client.base_url, client.auth_url, client.company_code) == (
        "https://svc.test", "https://auth.test", "ACME1")
    assert client.environment == "env"
    assert "s3cret" not in repr(client) and "pa55word" not in client._repr_html_()


def test_from_env_names_every_missing_variable(monkeypatch):
    monkeypatch.setenv("PAYNB_BASE_URL", "https://svc.test")
    monkeypatch.setenv("PAYNB_USERNAME", "jane")
    with pytest.raises(ValidationError) as caught:
        paynb.Client.from_env()
    assert set(caught.value.errors) == {"PAYNB_AUTH_URL", "PAYNB_COMPANY_CODE",
                                        "PAYNB_CLIENT_ID", "PAYNB_CLIENT_SECRET",
                                        "PAYNB_PASSWORD"}
    assert config.from_env({}) is None


PROFILES = """
[default]
base_url = "https://svc.test"
auth_url = "https://auth.test"
company_code = "ACME1"
client_id = "nb"
username = "jane"

[uat]
base_url = "https://uat.svc.test"
auth_url = "https://uat.auth.test"
company_code = "ACME2"
client_id = "nb"
client_secret = "in-file-secret"
username = "jane"
password = "in-file-password"
"""


@pytest.fixture
def profiles(tmp_path, monkeypatch):
    path = tmp_path / "config.toml"
    path.write_text(PROFILES)
    monkeypatch.setenv("PAYNB_CONFIG", str(path))
    return path


@pytest.fixture
def keyring_store(monkeypatch):
    import keyring

    store = {}
    monkeypatch.setattr(keyring, "get_password", lambda service, name: store.get((service, name)))
    monkeypatch.setattr(keyring, "set_password",
                        lambda service, name, value: store.__setitem__((service, name), value))
    return store


def test_profile_secrets_come_from_the_keyring(profiles, keyring_store):
    config.store_secrets("default", client_secret="kr-secret", password="kr-password")
    assert keyring_store == {("paynb", "default:client_secret"): "kr-secret",
                             ("paynb", "default:password"): "kr-password"}
    settings = config.from_profile()
    assert (settings.client_secret, settings.password) == ("kr-secret", "kr-password")
    assert "kr-secret" not in repr(settings) and "kr-password" not in repr(settings)
    assert config.profile_names() == ["default", "uat"]


def test_connect_prefers_a_named_profile_then_env_then_default(profiles, keyring_store,
                                                               monkeypatch):
    config.store_secrets("default", client_secret="kr-secret", password="kr-password")
    uat = paynb.connect("uat", journal=None)
    assert (uat.environment, uat.company_code) == ("uat", "ACME2")
    default = paynb.connect(journal=None)
    assert (default.environment, default.base_url) == ("default", "https://svc.test")
    for name, value in ENV.items():
        monkeypatch.setenv(name, value)
    assert paynb.connect(journal=None).environment == "env"
    monkeypatch.setenv("PAYNB_PROFILE", "uat")
    assert paynb.connect(journal=None).environment == "uat"  # a named profile wins


def test_an_incomplete_or_unknown_profile_is_named(profiles, keyring_store):
    with pytest.raises(ValidationError) as caught:
        config.from_profile("default")  # no secrets anywhere
    assert set(caught.value.errors) == {"client_secret", "password"}
    with pytest.raises(ValidationError, match="'prod' is not in"):
        paynb.connect("prod")


def test_no_usable_keyring_is_not_an_error(profiles, monkeypatch, caplog):
    import keyring

    def broken(service, name):
        raise RuntimeError("no backend")

    monkeypatch.setattr(keyring, "get_password", broken)
    with caplog.at_level(logging.DEBUG, logger="paynb"), pytest.raises(ValidationError):
        config.from_profile("default")
    assert "keyring unavailable" in caplog.text


GOOD = {"base_url": "https://svc.test", "auth_url": "https://auth.test",
        "company_code": "ACME1"}
CREDS = paynb.Credentials(client_id="nb", client_secret="s", username="jane", password="p")


def test_bad_client_arguments_are_named():
    with pytest.raises(ValidationError, match="base_url"):
        paynb.Client(**{**GOOD, "base_url": "svc.test"}, credentials=CREDS, journal=None)
    with pytest.raises(ValidationError, match="company_code"):
        paynb.Client(**{**GOOD, "company_code": " "}, credentials=CREDS, journal=None)
    with pytest.raises(ValidationError, match="max_workers"):
        paynb.Client(**GOOD, credentials=CREDS, max_workers=0, journal=None)
    with pytest.raises(ValidationError, match="timeout"):
        paynb.Client(**GOOD, credentials=CREDS, timeout=0, journal=None)
    with pytest.raises(ValidationError, match="credentials must be a paynb.Credentials"):
        paynb.Client(**GOOD, credentials=("nb", "s", "jane", "p"), journal=None)
    with pytest.raises(ValidationError, match="session must be a requests.Session"):
        paynb.Client(**GOOD, credentials=CREDS, session="https://proxy", journal=None)


def test_the_default_journal_follows_paynb_journal(monkeypatch, tmp_path):
    monkeypatch.setenv("PAYNB_JOURNAL", str(tmp_path / "j.sqlite3"))
    assert paynb.Client(**GOOD, credentials=CREDS)._journal.path == tmp_path / "j.sqlite3"
    monkeypatch.setenv("PAYNB_JOURNAL", "off")
    assert paynb.Client(**GOOD, credentials=CREDS)._journal is None


def test_a_profile_names_its_journal_and_it_comes_before_paynb_journal(monkeypatch, tmp_path):
    shared = tmp_path / "team.sqlite3"
    path = tmp_path / "config.toml"
    path.write_text('[team]\nbase_url = "https://svc.test"\nauth_url = "https://auth.test"\n'
                    'company_code = "ACME1"\nclient_id = "nb"\nclient_secret = "s"\n'
                    f'username = "jane"\npassword = "p"\njournal = "{shared}"\n')
    monkeypatch.setenv("PAYNB_CONFIG", str(path))
    monkeypatch.delenv("PAYNB_JOURNAL")
    assert paynb.connect("team")._journal.path == shared
    # A stray PAYNB_JOURNAL must not take an analyst off the team's journal: said, not used.
    monkeypatch.setenv("PAYNB_JOURNAL", str(tmp_path / "mine.sqlite3"))
    with pytest.warns(UserWarning, match="PAYNB_JOURNAL .* is not used: profile 'team' "
                                         "names its journal"):
        client = paynb.connect("team")
    assert client._journal.path == shared
    # An explicit journal= is the caller's choice.
    assert paynb.connect("team", journal=None)._journal is None
    path.write_text(path.read_text().replace(f'journal = "{shared}"', "journal = 3"))
    with pytest.raises(ValidationError, match="team.journal"):
        paynb.connect("team")


def test_profiles_in_ini_form(tmp_path, monkeypatch, keyring_store):
    path = tmp_path / "config.ini"
    path.write_text("[desk]\nbase_url = https://svc.test\nauth_url = https://auth.test\n"
                    "company_code = ACME9\nclient_id = nb\nclient_secret = s\nusername = jane\n"
                    "password = p\n")
    monkeypatch.setenv("PAYNB_CONFIG", str(path))
    client = paynb.connect("desk", journal=None)
    assert (client.environment, client.company_code) == ("desk", "ACME9")
