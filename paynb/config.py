"""Where a client's settings come from: ``PAYNB_*`` variables, or a named profile.

A profile is a table in ``config.toml`` under the user's config directory
(``platformdirs.user_config_dir("paynb")``; ``PAYNB_CONFIG`` points elsewhere)::

    [default]                      # used by paynb.connect() when no profile is named
    base_url = "https://payments.example.com"
    auth_url = "https://login.example.com"
    company_code = "ACME1"
    client_id = "acme-notebooks"
    username = "jane"
    # client_secret and password: better in the OS keyring than here, see below

    [uat]
    base_url = "https://uat.payments.example.com"
    ...

The same tables in INI form (``config.ini``, ``[default]`` sections with
``key = value`` lines) are read too.

Secrets need not sit in the file nor in a notebook: a profile without
``client_secret`` or ``password`` reads them from the OS keyring (service
``paynb``, names ``<profile>:client_secret`` and ``<profile>:password``), which
:func:`store_secrets` writes. ``PAYNB_PROFILE`` names the profile
:func:`paynb.connect` uses; ``PAYNB_JOURNAL`` moves the journal file (``off``
turns it off).
"""

from __future__ import annotations

import configparser
import logging
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from paynb.errors import ValidationError

__all__ = [
    "ENV_VARIABLES",
    "KEYRING_SERVICE",
    "Settings",
    "config_path",
    "from_env",
    "from_profile",
    "profile_names",
    "store_secrets",
]

logger = logging.getLogger("paynb.config")

#: The settings every client needs, and the environment variable of each.
ENV_VARIABLES: dict[str, str] = {
    "base_url": "PAYNB_BASE_URL",
    "auth_url": "PAYNB_AUTH_URL",
    "company_code": "PAYNB_COMPANY_CODE",
    "client_id": "PAYNB_CLIENT_ID",
    "client_secret": "PAYNB_CLIENT_SECRET",
    "username": "PAYNB_USERNAME",
    "password": "PAYNB_PASSWORD",
}
SECRETS = ("client_secret", "password")
KEYRING_SERVICE = "paynb"


@dataclass(frozen=True)
class Settings:
    """Everything needed to build a :class:`paynb.Client`. Secrets never show in the repr."""

    base_url: str
    auth_url: str
    company_code: str
    client_id: str
    client_secret: str = field(repr=False)
    username: str
    password: str = field(repr=False)
    environment: str = "custom"

    def client_arguments(self) -> dict[str, str]:
        """The positional settings of :class:`paynb.Client`, by name."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name in ENV_VARIABLES}


def _complete(values: Mapping[str, Any], *, environment: str, where: str,
              labels: Mapping[str, str] | None = None) -> Settings:
    labels = labels or {name: name for name in ENV_VARIABLES}
    missing = [labels[name] for name in ENV_VARIABLES if not values.get(name)]
    if missing:
        raise ValidationError({label: ["is not set"] for label in missing},
                              message=f"{where} lacks {', '.join(missing)}")
    return Settings(**{name: str(values[name]) for name in ENV_VARIABLES},
                    environment=environment)


def from_env(environ: Mapping[str, str] | None = None) -> Settings | None:
    """Settings from the ``PAYNB_*`` variables; ``None`` when ``PAYNB_BASE_URL`` is not set.

    Raises :class:`~paynb.errors.ValidationError` naming each variable that is
    missing when some are set and others are not.
    """
    environ = os.environ if environ is None else environ
    if not environ.get(ENV_VARIABLES["base_url"]):
        return None
    values = {name: environ.get(variable) for name, variable in ENV_VARIABLES.items()}
    return _complete(values, environment="env", where="environment", labels=ENV_VARIABLES)


def config_path(environ: Mapping[str, str] | None = None) -> Path:
    """The profile file: ``PAYNB_CONFIG``, else ``config.toml`` (or, when only that
    exists, ``config.ini``) in the user's config directory."""
    environ = os.environ if environ is None else environ
    if environ.get("PAYNB_CONFIG"):
        return Path(environ["PAYNB_CONFIG"]).expanduser()
    import platformdirs

    folder = Path(platformdirs.user_config_dir("paynb"))
    toml, ini = folder / "config.toml", folder / "config.ini"
    return ini if ini.is_file() and not toml.is_file() else toml


def _read_profiles(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    if path.suffix.lower() in (".ini", ".cfg"):
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(path, encoding="utf-8")
        except configparser.Error as exc:
            raise ValidationError({str(path): [f"is not valid INI ({exc})"]}) from None
        return {name: dict(parser[name]) for name in parser.sections()}
    with path.open("rb") as handle:
        try:
            document = tomllib.load(handle)
        except tomllib.TOMLDecodeError as exc:
            raise ValidationError({str(path): [f"is not valid TOML ({exc})"]}) from None
    return {name: table for name, table in document.items() if isinstance(table, dict)}


def profile_names(path: Path | None = None) -> list[str]:
    """Names of the profiles in the config file (empty when there is no file)."""
    return sorted(_read_profiles(path or config_path()))


def _keyring_secret(profile: str, name: str) -> str | None:
    try:
        import keyring

        return keyring.get_password(KEYRING_SERVICE, f"{profile}:{name}")
    except Exception as exc:  # no usable keyring backend is a normal setup, not an error
        logger.debug("keyring unavailable for %s:%s (%s)", profile, name, type(exc).__name__)
        return None


def from_profile(name: str | None = None, *, path: Path | None = None) -> Settings | None:
    """Settings of profile ``name`` (default: ``PAYNB_PROFILE``, else ``default``).

    Returns ``None`` when no profile was asked for by name and the file has no
    ``default`` profile; raises :class:`~paynb.errors.ValidationError` when a
    named profile is missing or incomplete.
    """
    path = path or config_path()
    asked = name or os.environ.get("PAYNB_PROFILE")
    profiles = _read_profiles(path)
    chosen = asked or "default"
    if chosen not in profiles:
        if asked:
            known = ", ".join(sorted(profiles)) or "none"
            raise ValidationError({"profile": [f"{asked!r} is not in {path} (profiles: {known})"]})
        return None
    values = dict(profiles[chosen])
    for secret in SECRETS:
        if not values.get(secret):
            values[secret] = _keyring_secret(chosen, secret)
    return _complete(values, environment=chosen, where=f"profile {chosen!r} of {path}")


def store_secrets(profile: str, *, client_secret: str | None = None,
                  password: str | None = None) -> None:
    """Put a profile's client secret and/or password in the OS keyring (not in any file)."""
    import keyring

    for name, value in (("client_secret", client_secret), ("password", password)):
        if value:
            keyring.set_password(KEYRING_SERVICE, f"{profile}:{name}", value)
