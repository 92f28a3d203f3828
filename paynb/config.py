"""Where a client's settings come from: ``PAYNB_*`` variables, or a named profile
(docs/real-service.md says it all, with examples).

A profile is a table of ``config.toml`` (or a section of ``config.ini``) in the user's
config directory (``PAYNB_CONFIG`` points elsewhere). A profile without
``client_secret`` or ``password`` reads them from the secrets file (``secrets.toml``
beside it, or ``$CREDENTIALS_DIRECTORY/paynb-secrets`` from systemd), else from the OS
keyring (:func:`store_secrets`). Like ssh with a private key, paynb refuses a secrets
file others can read (:func:`check_private`), and warns when a profile file holding a
secret is. ``PAYNB_PROFILE`` names the profile :func:`paynb.connect` uses;
``PAYNB_JOURNAL`` moves the journal (``off`` turns it off); a profile's ``journal``
comes first.
"""

from __future__ import annotations

import configparser
import logging
import os
import shlex
import stat
import tomllib
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from paynb import _env
from paynb._redact import HIDDEN, hide_password
from paynb._warn import user_stacklevel
from paynb.errors import PaynbWarning, ValidationError
from paynb.journal._journal import journal_variable

__all__ = [
    "ENV_VARIABLES",
    "KEYRING_SERVICE",
    "OTHER_VARIABLES",
    "Credentials",
    "Settings",
    "check_names",
    "check_private",
    "config_path",
    "connection_variables_set",
    "from_env",
    "from_profile",
    "profile_names",
    "profile_options",
    "resolve",
    "secrets_path",
    "store_secrets",
]

logger = logging.getLogger("paynb.config")

#: The settings every client needs, and the environment variable of each.
ENV_VARIABLES: dict[str, str] = dict(_env.CONNECTION)
#: The variable naming the profile :func:`paynb.connect` uses (a connection setting too).
PROFILE_VARIABLE = "PAYNB_PROFILE"
#: ``PAYNB_*`` variables that are not connection settings: where paynb keeps its files,
#: and what its tests and scripts read (all of them registered in ``paynb._env``).
OTHER_VARIABLES = frozenset(_env.VARIABLES) - set(ENV_VARIABLES.values()) - {PROFILE_VARIABLE}
SECRETS = ("client_secret", "password")
CREDENTIALS = ("client_id", "client_secret", "username", "password")
KEYRING_SERVICE = "paynb"
#: What a profile's table in the secrets file may hold: its secrets, nothing else.
SECRET_KEYS = (*SECRETS, "notify")
#: The secrets file's name beside the profile file.
SECRETS_FILE = "secrets.toml"
#: Its name among the credentials systemd passes a service (``LoadCredential=``).
SYSTEMD_CREDENTIAL = "paynb-secrets"


@dataclass(frozen=True)
class Credentials:
    """The password-grant credentials of one user: ``client_id``, ``client_secret``,
    ``username`` and ``password``.

    One object, so that a client secret and a password cannot be swapped by
    position. The repr shows the client id and the user name only: the client
    secret and the password never show. Build it directly (``paynb.Credentials(
    client_id=..., client_secret=getpass(), username=..., password=getpass())``),
    or with :meth:`from_env`, :meth:`from_profile` or :meth:`from_keyring`.
    """

    client_id: str
    client_secret: str
    username: str
    password: str

    def __post_init__(self) -> None:
        bad = [name for name in CREDENTIALS
               if not isinstance(getattr(self, name), str) or not getattr(self, name).strip()]
        if bad:
            raise ValidationError({name: ["must be a non-empty string"] for name in bad})

    def __repr__(self) -> str:
        return (f"Credentials(client_id={self.client_id!r}, client_secret={HIDDEN}, "
                f"username={self.username!r}, password={HIDDEN})")

    __str__ = __repr__

    def as_dict(self) -> dict[str, str]:
        """The four values by name (secrets included: hand them only to the token request)."""
        return {name: getattr(self, name) for name in CREDENTIALS}

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Credentials:
        """From ``PAYNB_CLIENT_ID``, ``PAYNB_CLIENT_SECRET``, ``PAYNB_USERNAME`` and
        ``PAYNB_PASSWORD``; an error names every one that is missing."""
        environ = os.environ if environ is None else environ
        values = {name: environ.get(ENV_VARIABLES[name]) for name in CREDENTIALS}
        return cls(**_required(values, CREDENTIALS, where="the environment", profile=None))

    @classmethod
    def from_keyring(cls, profile: str, *, client_id: str, username: str) -> Credentials:
        """``client_id`` and ``username`` as given, the client secret and password from the
        OS keyring entries of ``profile`` (what :func:`store_secrets` wrote)."""
        values = {"client_id": client_id, "username": username,
                  **{secret: _keyring_secret(profile, secret) for secret in SECRETS}}
        return cls(**_required(values, CREDENTIALS, where=f"the keyring for profile {profile!r}",
                               profile=profile, keyring_checked=True))

    @classmethod
    def from_profile(cls, name: str | None = None, *, path: Path | None = None) -> Credentials:
        """The credentials of profile ``name`` (secrets from the file or the keyring)."""
        settings = from_profile(name, path=path)
        if settings is None:
            raise ValidationError({"profile": [f"no profile in {path or config_path()}"]})
        return settings.credentials


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
    #: The profile's journal (a file path or a ``postgresql://`` address), if it names one.
    journal: str | None = None
    #: Who acts (the profile's ``user``), if it names someone: else the OS user.
    user: str | None = None
    #: The profile's ``dual_control`` table, if it has one (see :class:`paynb.DualControl`).
    dual_control: Mapping[str, Any] | None = None

    def __repr__(self) -> str:
        extra = "" if self.journal is None else f", journal={hide_password(self.journal)!r}"
        extra += "" if self.user is None else f", user={self.user!r}"
        extra += "" if self.dual_control is None else f", dual_control={self.dual_control!r}"
        return (f"Settings(base_url={self.base_url!r}, auth_url={self.auth_url!r}, "
                f"company_code={self.company_code!r}, client_id={self.client_id!r}, "
                f"username={self.username!r}, environment={self.environment!r}{extra})")

    @property
    def credentials(self) -> Credentials:
        """The four credentials as one :class:`Credentials`."""
        return Credentials(**{name: getattr(self, name) for name in CREDENTIALS})

    def client_arguments(self, **options: Any) -> dict[str, Any]:
        """The keyword arguments of :class:`paynb.Client` these settings give:
        ``base_url``, ``auth_url``, ``company_code``, ``credentials``, ``environment``,
        and the profile's ``journal``, ``user`` and ``dual_control`` when it has them;
        ``options`` go over them."""
        arguments: dict[str, Any] = {
            "base_url": self.base_url, "auth_url": self.auth_url,
            "company_code": self.company_code, "credentials": self.credentials,
            "environment": self.environment}
        if self.journal is not None and "journal" not in options:
            _journal_beside_variable(self.journal, self.environment)
            arguments["journal"] = self.journal
        for name in ("user", "dual_control"):
            if getattr(self, name) is not None:
                arguments[name] = getattr(self, name)
        return {**arguments, **options}


def _journal_beside_variable(journal: str, profile: str) -> None:
    """Warn when ``PAYNB_JOURNAL`` names another journal than the profile's: the profile's
    is used (a stray variable must not take an analyst off the team's shared guard)."""
    variable = journal_variable()
    if variable and variable != journal:
        warnings.warn(f"PAYNB_JOURNAL ({hide_password(variable)}) is not used: profile "
                      f"{profile!r} names its journal, {hide_password(journal)}; pass "
                      "journal=... to use another", UserWarning, stacklevel=4)


def _sources(name: str, profile: str | None, *, keyring_checked: bool = False) -> str:
    """Where setting ``name`` can come from, in words."""
    key = f"the key {name!r} of profile {profile or '<name>'!r} in {config_path()}"
    # A profile's settings come from its file (and secrets stores), never the variables.
    where = [key] if profile else [f"the environment variable {ENV_VARIABLES[name]}", key]
    if name in SECRETS:
        table = profile or "<profile>"
        where.append(f"the key {name!r} of table [{table}] in the secrets file "
                     f"{secrets_path()} (readable by its owner only: chmod 600; the way on "
                     "a machine without a keyring, such as a server running paynb monitor)")
        call = f"paynb.config.store_secrets({table!r}, {name}=getpass.getpass())"
        held = f"the keyring holds none for profile {profile!r}; " if keyring_checked else ""
        where.append(f"the OS keyring ({held}store it with {call})")
    return f"{name}: " + ", or ".join(where)


def _missing_error(missing: list[str], *, where: str, profile: str | None,
                   keyring_checked: bool = False, given: list[str] | None = None
                   ) -> ValidationError:
    """One error naming every missing setting and where each can come from (its fields
    are the variable names when the settings came from the environment)."""
    said = (f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} set, so paynb connects "
            "to the real service and will not fall back to the sandbox; but "
            if given else "")
    label = ENV_VARIABLES if profile is None else {name: name for name in ENV_VARIABLES}
    lines = "\n".join(f"  - {_sources(name, profile, keyring_checked=keyring_checked)}"
                      for name in missing)
    message = (f"{said}{where} lacks {', '.join(label[name] for name in missing)}. "
               f"Each can come from:\n{lines}")
    if profile is None:
        message += (f"\nA profile holds all seven settings (the variables are then not "
                    f"used): name it with {PROFILE_VARIABLE} or paynb.connect('<name>').")
    return ValidationError({label[name]: ["is not set"] for name in missing}, message=message)


def _required(values: Mapping[str, Any], names: Iterable[str], **where: Any) -> dict[str, Any]:
    """The values of ``names`` as text; one error naming every one missing (``where``:
    :func:`_missing_error`'s words for where they were looked for)."""
    missing = [name for name in names if not values.get(name)]
    if missing:
        raise _missing_error(missing, **where)
    return {name: str(values[name]) for name in names}


def connection_variables_set(environ: Mapping[str, str] | None = None) -> list[str]:
    """The connection settings set in the environment (any of them means "not the sandbox")."""
    environ = os.environ if environ is None else environ
    return [name for name in (*ENV_VARIABLES.values(), PROFILE_VARIABLE) if environ.get(name)]


def check_names(environ: Mapping[str, str] | None = None) -> None:
    """Refuse to go on while a ``PAYNB_*`` variable paynb does not know is set.

    Such a variable means its user meant to configure something (``PAYNB_BASEURL`` for
    ``PAYNB_BASE_URL``): going on would connect where they did not mean, the sandbox
    perhaps. The :class:`~paynb.errors.ValidationError` names each one with the known
    variable it most resembles, and lists the known ones.
    """
    unknown = _env.unknown_names(environ)
    if not unknown:
        return
    errors = {name: ["is not a paynb variable" + (f" (did you mean {close}?)" if close else "")]
              for name, close in ((name, _env.closest(name)) for name in unknown)}
    said = "; ".join(f"{name} {messages[0]}" for name, messages in errors.items())
    raise ValidationError(errors, message=(
        f"{said}. paynb stops here rather than go on without it. Correct or unset "
        f"{'it' if len(unknown) == 1 else 'them'}; the PAYNB_* variables paynb reads are "
        f"{', '.join(_env.VARIABLES)} (docs/real-service.md)"))


def from_env(environ: Mapping[str, str] | None = None) -> Settings | None:
    """Settings from the ``PAYNB_*`` variables; ``None`` when none of the seven is set.

    When some are set and others are not, raises one
    :class:`~paynb.errors.ValidationError` naming each missing variable and
    where else it can come from (never ``None``: a half-set environment is a
    configuration for the real service, not the sandbox).
    """
    environ = os.environ if environ is None else environ
    given = [variable for variable in ENV_VARIABLES.values() if environ.get(variable)]
    if not given:
        return None
    values = {name: environ.get(variable) for name, variable in ENV_VARIABLES.items()}
    return Settings(**_required(values, ENV_VARIABLES, where="the environment", profile=None,
                                given=given), environment="env")


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
    document = _toml(path)
    return {name: table for name, table in document.items() if isinstance(table, dict)}


def _toml(path: Path) -> dict[str, Any]:
    """The TOML document in ``path``; an error naming the file when it is not TOML."""
    with path.open("rb") as handle:
        try:
            return tomllib.load(handle)
        except tomllib.TOMLDecodeError as exc:
            raise ValidationError({str(path): [f"is not valid TOML ({exc})"]}) from None


def secrets_path(environ: Mapping[str, str] | None = None) -> Path:
    """The secrets file: ``$CREDENTIALS_DIRECTORY/paynb-secrets`` when systemd passed the
    service that credential (``LoadCredential=paynb-secrets:/etc/paynb/secrets.toml``),
    else ``secrets.toml`` beside the profile file (:func:`config_path`)."""
    environ = os.environ if environ is None else environ
    credentials = environ.get("CREDENTIALS_DIRECTORY")
    if credentials and (Path(credentials) / SYSTEMD_CREDENTIAL).is_file():
        return Path(credentials) / SYSTEMD_CREDENTIAL
    return config_path(environ).parent / SECRETS_FILE


def _mode(path: Path) -> tuple[int, int] | None:
    """The permission bits and owner of ``path``; ``None`` where files have no POSIX
    permissions (Windows: its ACLs are the user profile's, private by default)."""
    if os.name == "nt":
        return None
    found = path.stat()
    return stat.S_IMODE(found.st_mode), found.st_uid


def check_private(path: Path) -> None:
    """Refuse ``path`` as a secrets file when anyone but its owner may read or change it.

    The rule is libpq's for its key files, as ssh's for a private key: a file of one's
    own must give its group and others nothing (``chmod 600``); a file owned by root
    may be read by its group (``0640``: how systemd's credentials and a ``root:paynb``
    file are laid out), nothing more. Raises :class:`~paynb.errors.ValidationError`
    naming the file, its mode and the ``chmod`` that fixes it.
    """
    found = _mode(path)
    if found is None:
        return
    mode, owner = found
    too_open = mode & (0o037 if owner == 0 else 0o077)
    if too_open:
        fix = f"chmod 600 {shlex.quote(str(path))}"
        raise ValidationError({str(path): [f"is open to others (mode {mode:04o})"]}, message=(
            f"the secrets file {path} has mode {mode:04o}: people other than its owner have "
            f"access to it, so paynb does not use it (as ssh refuses such a private key). "
            f"Fix it with: {fix}"))


def _secrets(profile: str) -> dict[str, Any]:
    """The table of ``profile`` in the secrets file (empty when there is no file or no
    such table), once the file's permissions pass :func:`check_private`."""
    path = secrets_path()
    if not path.is_file():
        return {}
    check_private(path)
    table = _toml(path).get(profile, {})
    if not isinstance(table, dict):
        raise ValidationError({f"{path} [{profile}]": ["must be a table of secrets"]})
    other = sorted(set(table) - set(SECRET_KEYS))
    if other:
        raise ValidationError({f"{path} [{profile}].{key}": ["is not a secret"] for key in other},
                              message=(f"the secrets file {path} holds {', '.join(other)} for "
                                       f"profile {profile!r}: it holds only "
                                       f"{', '.join(SECRET_KEYS)}; the other settings "
                                       f"belong in {config_path()}"))
    return dict(table)


def _warn_if_readable(path: Path, profile: str, table: Mapping[str, Any]) -> None:
    """Warn when ``profile`` holds a secret in ``path`` and people other than its owner
    can read the file (mode ``0644``, the usual default)."""
    held = [key for key in SECRET_KEYS if table.get(key)]
    found = _mode(path) if held else None
    if found is None or not found[0] & 0o044:
        return
    warnings.warn(PaynbWarning(
        f"profile {profile!r} of {path} holds {', '.join(held)}, and the file has mode "
        f"{found[0]:04o}: others on this machine can read it. Fix it with: chmod 600 "
        f"{shlex.quote(str(path))} (or move the secrets to {secrets_path()}, mode 0600)"),
        stacklevel=user_stacklevel())


def profile_names(path: Path | None = None) -> list[str]:
    """Names of the profiles in the config file (empty when there is no file)."""
    # A section "team.dual_control" of an INI file belongs to profile "team".
    return sorted(name for name in _read_profiles(path or config_path())
                  if not name.endswith(".dual_control"))


def profile_options(name: str | None = None, *, path: Path | None = None) -> dict[str, Any]:
    """The keys of profile ``name`` (default: ``PAYNB_PROFILE``, else ``default``) other
    than the connection settings: what other parts of paynb read from a profile, such as
    the morning run's ``companies``, ``notify`` (secret: notification URLs, from the
    secrets file when the profile has none), ``reports``, ``keep``, ``report_url``,
    ``repeat`` (how long after a standing breach was last notified it is said again) and
    ``history`` (the history store's folder) (docs/monitor.md). Empty when there is no
    such profile."""
    chosen = name or os.environ.get(PROFILE_VARIABLE) or "default"
    path = path or config_path()
    table = _read_profiles(path).get(chosen, {})
    _warn_if_readable(path, chosen, table)
    options = {key: value for key, value in table.items() if key not in ENV_VARIABLES}
    if table and not options.get("notify"):
        notify = _secrets(chosen).get("notify")
        if notify:
            options["notify"] = notify
    return options


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
    _warn_if_readable(path, chosen, values)
    # The profile's own keys first, then the secrets file, then the keyring.
    stored = _secrets(chosen) if any(not values.get(s) for s in SECRETS) else {}
    values.update({secret: stored[secret] for secret in SECRETS
                   if not values.get(secret) and stored.get(secret)})
    looked_up = [secret for secret in SECRETS if not values.get(secret)]
    for secret in looked_up:
        values[secret] = _keyring_secret(chosen, secret)
    settings = Settings(**_required(values, ENV_VARIABLES, where=f"profile {chosen!r} of {path}",
                                    profile=chosen, keyring_checked=bool(looked_up)),
                        environment=chosen)
    journal, user = values.get("journal"), values.get("user")
    if journal is not None and (not isinstance(journal, str) or not journal.strip()):
        raise ValidationError({f"{chosen}.journal": ["must be a file path or a "
                                                     "postgresql:// address"]})
    if user is not None and (not isinstance(user, str) or not user.strip()):
        raise ValidationError({f"{chosen}.user": ["must be the name of who acts"]})
    # TOML: a [name.dual_control] table inside the profile; INI: a section of that name.
    control = values.get("dual_control", profiles.get(f"{chosen}.dual_control"))
    if control is not None and not isinstance(control, Mapping):
        raise ValidationError({f"{chosen}.dual_control": ["must be a table of settings"]})
    return replace(settings, journal=journal.strip() if journal else None,
                   user=user.strip() if user else None,
                   dual_control=dict(control) if control is not None else None)


def resolve(profile: str | None = None) -> Settings | None:
    """The settings :func:`paynb.connect` and ``paynb monitor`` use: the named ``profile``
    (or the one ``PAYNB_PROFILE`` names), else the ``PAYNB_*`` variables, else the
    ``default`` profile; ``None`` when none of them is configured."""
    named = profile or os.environ.get(PROFILE_VARIABLE)
    return from_profile(named) if named else (from_env() or from_profile())


def store_secrets(profile: str, *, client_secret: str | None = None,
                  password: str | None = None) -> None:
    """Put a profile's client secret and/or password in the OS keyring (not in any file).

    Raises :class:`~paynb.errors.ValidationError` when the machine has no usable keyring
    (a server without a desktop session: ``NoKeyringError``), saying where the secrets
    go there instead: the secrets file (:func:`secrets_path`)."""
    import keyring
    import keyring.errors

    for name, value in (("client_secret", client_secret), ("password", password)):
        if value:
            try:
                keyring.set_password(KEYRING_SERVICE, f"{profile}:{name}", value)
            except keyring.errors.KeyringError as exc:
                path = secrets_path()
                raise ValidationError({"keyring": [f"is not usable ({type(exc).__name__})"]},
                                      message=(
                    f"this machine has no usable keyring ({type(exc).__name__}), so the "
                    f"secrets of profile {profile!r} cannot be stored there. Put them in the "
                    f"secrets file {path}, readable by you alone: a table [{profile}] with "
                    f"client_secret and password; create it with: install -m 600 /dev/null "
                    f"{shlex.quote(str(path))} (docs/real-service.md)")) from None
