"""``paynb monitor`` on a server without a keyring, as cron runs it: a profile without
its secrets, the secrets in a file beside it whose permissions are checked, the whole
error text when something is missing, and no secret in anything the run prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from paynb import sandbox

from .conftest import secretless_profile, secrets_file
from .test_cli import _cron

pytestmark = pytest.mark.timeout(600)
CREDS = sandbox.DEMO_CREDENTIALS
#: The keyring of a machine without a desktop session (keyring's own "fail" backend).
NO_KEYRING = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}


def test_a_scheduled_run_takes_its_secrets_from_a_private_file(tmp_path: Path) -> None:
    with sandbox.serve(port=0, seed_items=1500, seed=3) as sb:
        config = secretless_profile(tmp_path / "config.toml", sb, "DEMO1")
        secrets = tmp_path / "secrets.toml"
        said: list[str] = []

        def run() -> tuple[int, str]:
            done = _cron(tmp_path, "--profile", "ops", "--no-report", "--no-sync",
                         config=config, **NO_KEYRING)
            said.extend([done.stdout, done.stderr])
            return done.returncode, done.stderr

        # Nothing anywhere: the whole text, each secret with every place it can come from.
        status, error = run()
        assert status == 3
        assert error.startswith("paynb monitor: could not run: ValidationError: profile 'ops' "
                                f"of {config} lacks client_secret, password. Each can come "
                                "from:\n  - client_secret: ")
        assert f"\n  - password: the key 'password' of profile 'ops' in {config}, or the " \
               f"key 'password' of table [ops] in the secrets file {secrets}" in error
        # A secrets file others can read: refused, naming the file and the fix.
        secrets_file(secrets, sb, mode=0o644)
        status, error = run()
        assert status == 3
        assert f"the secrets file {secrets} has mode 0644" in error
        assert f"Fix it with: chmod 600 {secrets}" in error
        secrets.chmod(0o600)
        status, error = run()
        assert status in (0, 1, 2), error
        # (--no-sync on a new store: the run warns that no history is synced; nothing else)
        assert "could not run" not in error and "secrets file" not in error
        assert "holds client_secret" not in error
        # The secrets in the profile file itself, readable by others: run, and warned.
        config.write_text(config.read_text() + secrets.read_text().split("\n", 1)[1])
        secrets.unlink()
        config.chmod(0o644)
        status, error = run()
        assert status in (0, 1, 2), error
        assert (f"paynb monitor: warning: profile 'ops' of {config} holds client_secret, "
                f"password, and the file has mode 0644") in error
        assert f"chmod 600 {config}" in error
    for text in said:
        assert CREDS.client_secret not in text and CREDS.password not in text
