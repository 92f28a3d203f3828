"""Settings: PAYNB_* variables, profiles in the config file, secrets from the keyring."""

from __future__ import annotations

import logging
import warnings

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
    path.chmod(0o600)  # profile uat holds secrets
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
    path.chmod(0o600)
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
    path.chmod(0o600)
    monkeypatch.setenv("PAYNB_CONFIG", str(path))
    client = paynb.connect("desk", journal=None)
    assert (client.environment, client.company_code) == ("desk", "ACME9")


# ---------------------------------------------------------------- a machine without a keyring

@pytest.fixture
def no_keyring(monkeypatch):
    """The keyring of a server without a desktop session: every call fails."""
    import keyring
    import keyring.backends.fail

    previous = keyring.get_keyring()
    keyring.set_keyring(keyring.backends.fail.Keyring())
    monkeypatch.delenv("CREDENTIALS_DIRECTORY", raising=False)
    yield
    keyring.set_keyring(previous)


def _private(path, text, mode=0o600):
    path.write_text(text)
    path.chmod(mode)
    return path


def test_a_secrets_file_serves_a_machine_without_a_keyring(profiles, no_keyring, sandbox,
                                                           caplog):
    creds = sandbox.credentials
    profiles.write_text(
        f'[ops]\nbase_url = "{sandbox.base_url}"\nauth_url = "{sandbox.auth_url}"\n'
        f'company_code = "DEMO1"\nclient_id = "{creds.client_id}"\n'
        f'username = "{creds.username}"\n')
    # store_secrets cannot work here: the error says where the secrets go instead.
    with pytest.raises(ValidationError) as refused:
        config.store_secrets("ops", client_secret=creds.client_secret, password=creds.password)
    secrets = profiles.parent / "secrets.toml"
    assert config.secrets_path() == secrets
    assert "NoKeyringError" in str(refused.value) and str(secrets) in str(refused.value)
    assert f"install -m 600 /dev/null {secrets}" in str(refused.value)
    # The error for the missing secrets lists the secrets file among the places.
    with pytest.raises(ValidationError) as missing:
        config.from_profile("ops")
    assert f"the key 'password' of table [ops] in the secrets file {secrets}" in str(
        missing.value)
    assert "PAYNB_PASSWORD" not in str(missing.value)  # a profile does not read variables
    _private(secrets, f'[ops]\nclient_secret = "{creds.client_secret}"\n'
                      f'password = "{creds.password}"\nnotify = ["json://127.0.0.1:9/x"]\n')
    with caplog.at_level(logging.DEBUG, logger="paynb"):
        client = paynb.connect("ops", journal=None)
        assert client.environment == "ops" and len(client.ach.list(max_items=3)) == 3
    assert config.profile_options("ops")["notify"] == ["json://127.0.0.1:9/x"]
    shown = " ".join([repr(client), repr(config.from_profile("ops")), caplog.text,
                      str(refused.value), str(missing.value)])
    assert creds.client_secret not in shown and creds.password not in shown
    # Only secrets belong there: another key is named, not silently used.
    _private(secrets, secrets.read_text() + 'base_url = "https://elsewhere.test"\n')
    with pytest.raises(ValidationError, match="holds base_url for profile 'ops'"):
        config.from_profile("ops")


def test_a_secrets_file_others_can_read_is_refused_with_the_fix(profiles, no_keyring):
    secrets = _private(profiles.parent / "secrets.toml",
                       '[default]\nclient_secret = "file-secret"\npassword = "file-password"\n',
                       mode=0o644)
    with pytest.raises(ValidationError) as refused:
        config.from_profile("default")
    text = str(refused.value)
    assert f"the secrets file {secrets} has mode 0644" in text
    assert f"Fix it with: chmod 600 {secrets}" in text
    assert "file-secret" not in text and "file-password" not in text
    secrets.chmod(0o600)
    assert config.from_profile("default").password == "file-password"
    # Group access is refused in a file of one's own; a file owned by root may be read by
    # its group (libpq's rule: systemd's credentials are laid out so).
    secrets.chmod(0o640)
    if secrets.stat().st_uid == 0:
        assert config.from_profile("default").password == "file-password"
    else:
        with pytest.raises(ValidationError, match="mode 0640"):
            config.from_profile("default")


def test_systemd_credentials_are_the_secrets_file(profiles, no_keyring, tmp_path, monkeypatch):
    passed = tmp_path / "credentials"
    passed.mkdir()
    _private(passed / "paynb-secrets",
             '[default]\nclient_secret = "sd-secret"\npassword = "sd-password"\n', mode=0o400)
    monkeypatch.setenv("CREDENTIALS_DIRECTORY", str(passed))
    assert config.secrets_path() == passed / "paynb-secrets"
    assert config.from_profile("default").client_secret == "sd-secret"


def test_a_profile_holding_a_secret_others_can_read_is_warned(profiles, keyring_store):
    profiles.chmod(0o644)
    with pytest.warns(paynb.errors.PaynbWarning) as said:
        config.from_profile("uat")
    (warning,) = [w for w in said if "holds" in str(w.message)]
    assert str(warning.message).startswith(
        f"profile 'uat' of {profiles} holds client_secret, password, and the file has mode "
        f"0644: others on this machine can read it. Fix it with: chmod 600 {profiles}")
    assert "in-file-secret" not in str(warning.message)
    profiles.chmod(0o600)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        config.from_profile("uat")
        # A profile without a secret in the file is no one's concern at 0644.
        config.store_secrets("default", client_secret="kr", password="kr")
        profiles.chmod(0o644)
        config.from_profile("default")
