"""A PostgreSQL server of the tests' own: ``initdb`` and ``pg_ctl`` in a temporary folder,
on 127.0.0.1 and a free port, password authentication (SCRAM) like a team's server.

PostgreSQL refuses to run as root, so as root the server runs as the ``postgres``
system user (else ``nobody``), which owns the folder. Where the server binaries or
psycopg are missing, :func:`start` says why, and the tests that need a server skip
with that reason (``-ra`` lists it).
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

#: The role the tests connect as, and its password (a secret the scans look for).
USER = "paynb_team"
PASSWORD = "pg-s3cret-" + secrets.token_hex(6)
DATABASE = "paynb"


def _binaries() -> Path | None:
    """The folder of ``initdb`` and ``pg_ctl``: on PATH, else the newest Debian/Ubuntu one."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).parent
    folders = sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                     key=lambda folder: int(Path(folder).parent.name)
                     if Path(folder).parent.name.isdigit() else 0)
    for folder in reversed(folders):
        if (Path(folder) / "initdb").exists() and (Path(folder) / "pg_ctl").exists():
            return Path(folder)
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _runner() -> tuple[list[str], str | None]:
    """The command prefix that runs a server binary, and the user it runs as (``None``:
    this process's own, when it is not root)."""
    if os.geteuid() != 0:
        return [], None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        runner = shutil.which("runuser")
        if runner:
            return [runner, "-u", name, "--"], name
        setpriv = shutil.which("setpriv")
        if setpriv:
            return [setpriv, f"--reuid={name}", f"--regid={pwd.getpwnam(name).pw_gid}",
                    "--init-groups"], name
    raise RuntimeError("running as root, with neither runuser nor setpriv to start "
                       "PostgreSQL as another user (it refuses to run as root)")


@dataclass
class Server:
    """A running server: addresses for :func:`paynb.journal.Journal`, one schema each.
    :meth:`stop` and :meth:`start` take it away and bring it back (a team's database
    down for a while)."""

    port: int
    folder: Path
    #: The ``pg_ctl`` command's start (runner, binary, data folder) and its start options.
    control: tuple[list[str], str] = ([], "")

    def stop(self) -> None:
        """Stop the server now: its connections are cut (``fast``: what was committed is
        kept, which ``immediate`` would not promise with this server's ``fsync=off``)."""
        subprocess.run([*self.control[0], "-m", "fast", "-w", "stop"],
                       check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        """Start it again, on the same port, with the same data."""
        subprocess.run([*self.control[0], "-l", str(self.folder / "server.log"), "-w",
                        "-t", "60", "-o", self.control[1], "start"],
                       check=True, capture_output=True, timeout=120)

    @property
    def admin(self) -> str:
        """The address of the test database as its owner."""
        return f"postgresql://{USER}:{PASSWORD}@127.0.0.1:{self.port}/{DATABASE}"

    def fresh(self) -> str:
        """The address of a new, empty schema of the test database: one journal's own
        (the address's ``search_path`` option picks it)."""
        import psycopg

        schema = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        return f"{self.admin}?options=-csearch_path%3D{schema}"


def why_not() -> str | None:
    """Why no server can be started here (``None``: it can)."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        return "psycopg is not installed (pip install -e '.[dev]' installs it)"
    if _binaries() is None:
        return ("PostgreSQL's initdb and pg_ctl are neither on PATH nor in "
                "/usr/lib/postgresql/*/bin: install the postgresql server package")
    return None


@contextmanager
def start() -> Iterator[Server]:
    """Start a server in a temporary folder; stopped and removed on leaving."""
    binaries = _binaries()
    assert binaries is not None, why_not()
    prefix, user = _runner()
    # Not under pytest's own temporary folder: it is private to this process's user.
    folder = Path(tempfile.mkdtemp(prefix="paynb-pg-"))
    data, log, pwfile = folder / "data", folder / "server.log", folder / "pw"
    pwfile.write_text(PASSWORD + "\n")
    if user is not None:
        entry = pwd.getpwnam(user)
        for path in (folder, pwfile):
            os.chown(path, entry.pw_uid, entry.pw_gid)
    port = _free_port()
    try:
        subprocess.run([*prefix, str(binaries / "initdb"), "-D", str(data), "-U", USER,
                        f"--pwfile={pwfile}", "--auth-host=scram-sha-256",
                        "--auth-local=scram-sha-256", "-E", "UTF8", "--no-sync"],
                       check=True, capture_output=True, timeout=120)
        options = (f"-h 127.0.0.1 -p {port} -k {folder} -c fsync=off "
                   "-c synchronous_commit=off -c full_page_writes=off")
        subprocess.run([*prefix, str(binaries / "pg_ctl"), "-D", str(data), "-l", str(log),
                        "-w", "-t", "60", "-o", options, "start"],
                       check=True, capture_output=True, timeout=120)
    except subprocess.CalledProcessError as exc:
        detail = (exc.stderr or b"").decode(errors="replace")
        if log.exists():
            detail += log.read_text(errors="replace")
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(f"PostgreSQL did not start: {detail.strip()[-2000:]}") from None
    server = Server(port=port, folder=folder,
                    control=([*prefix, str(binaries / "pg_ctl"), "-D", str(data)], options))
    try:
        import psycopg

        with psycopg.connect(server.admin.rsplit("/", 1)[0] + "/postgres",
                             autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {DATABASE}")
        yield server
    finally:
        subprocess.run([*prefix, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate",
                        "-w", "stop"], capture_output=True, timeout=120)
        shutil.rmtree(folder, ignore_errors=True)
