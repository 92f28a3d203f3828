"""Start and find sandboxes: :func:`serve`, :func:`ensure_running`, :class:`Sandbox`."""

from __future__ import annotations

import atexit
import contextlib
import importlib
import json
import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any

from paynb.config import Credentials, Settings
from paynb.errors import ValidationError
from paynb.sandbox.faults import Faults, FaultSettings
from paynb.sandbox.simulate import Simulator

__all__ = ["DEMO_CREDENTIALS", "DEMO_ITEMS", "Credentials", "Sandbox", "default_db_path",
           "discovery_path", "ensure_running", "register_client", "serve"]

logger = logging.getLogger("paynb.sandbox")

#: ACH items in the demo data set (plus RCC, instant and RTP in proportion).
DEMO_ITEMS = 50_000

#: How to sign in to the demo sandbox: the client's own :class:`paynb.Credentials` (one
#: class, so a handle's ``credentials`` go straight to ``paynb.Client``).
DEMO_CREDENTIALS = Credentials("paynb-sandbox", "sandbox-secret", "analyst", "analyst-password")

#: How a handle makes a client (:meth:`Sandbox.connect`): :mod:`paynb.client` registers
#: its :class:`~paynb.Client` here when imported (:func:`register_client`); the sandbox
#: never imports the client, it names the module that registers one (:data:`CLIENT_MODULE`).
_client_factory: Callable[..., Any] | None = None
CLIENT_MODULE = "paynb.client"


def register_client(factory: Callable[..., Any]) -> None:
    """Make ``factory`` (``paynb.Client``) what :meth:`Sandbox.connect` builds."""
    global _client_factory
    _client_factory = factory


class Sandbox:
    """A running sandbox: ``base_url`` and ``auth_url`` (the same server; the token is at
    ``{auth_url}/connect/token``), ``company_code`` (``"DEMO1"``), ``credentials`` and
    ``simulate`` (:class:`~paynb.sandbox.simulate.Simulator`). Use it as a context manager,
    or call :meth:`close`; a handle to another process's sandbox does not stop it."""

    def __init__(self, base_url: str, *, company_code: str = "DEMO1",
                 credentials: Credentials = DEMO_CREDENTIALS, instance_id: str | None = None,
                 _server: Any = None, _thread: threading.Thread | None = None,
                 _store: Any = None):
        self.base_url = base_url.rstrip("/")
        self.auth_url = self.base_url
        self.company_code = company_code
        self.credentials = credentials
        self.instance_id = instance_id
        self.simulate = Simulator(self.base_url, company_code)
        self._server, self._thread, self._store = _server, _thread, _store

    @property
    def owned(self) -> bool:
        """True when this process runs the sandbox (closing it stops the server)."""
        return self._server is not None

    @property
    def store(self) -> Any:
        """The :class:`~paynb.sandbox.store.Store` of an owned sandbox (None otherwise)."""
        return self._store

    def settings(self, *, company_code: str | None = None) -> Settings:
        """The client settings of this sandbox (:class:`paynb.config.Settings`: its
        address, the company, the demo sign-in, ``environment="sandbox"``):
        ``paynb.Client(**sb.settings().client_arguments())`` is :meth:`connect`."""
        sign_in = self.credentials
        return Settings(base_url=self.base_url, auth_url=self.auth_url,
                        company_code=company_code or self.company_code,
                        client_id=sign_in.client_id, client_secret=sign_in.client_secret,
                        username=sign_in.username, password=sign_in.password,
                        environment="sandbox")

    def connect(self, **options: Any) -> Any:
        """A :class:`paynb.Client` signed in to this sandbox (``options`` go to the client;
        ``company_code`` and ``credentials`` default to this handle's, so
        ``connect(company_code="DEMO2")`` is the other demo company)."""
        given = sorted({"base_url", "auth_url"} & set(options))
        if given:
            raise ValidationError.for_argument(
                given[0], f"is this sandbox's own ({self.base_url}); connect() takes the "
                          "client's other options")
        if _client_factory is None:
            # The client registers itself when imported; a handle used before anything
            # imported it brings it in by name (the sandbox never imports it).
            importlib.import_module(CLIENT_MODULE)
        assert _client_factory is not None
        return _client_factory(**self.settings().client_arguments(**options))

    def close(self) -> None:
        """Stop the server (if this process runs it) and close its database."""
        if self._server is None:
            return
        self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._store.close()
        self._server = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return (f"Sandbox(base_url={self.base_url!r}, company_code={self.company_code!r}, "
                f"owned={self.owned})")


def check_port(port: Any, name: str = "port") -> None:
    """Raise ``ValueError`` unless ``port`` is a TCP port number (0: any free port)."""
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise ValueError(f"{name} must be a whole number from 0 to 65535 (0: any free port); "
                         f"got {port!r}")


def check_serve_options(*, port: Any, seed_items: Any, token_ttl: Any,
                        latency_ms: Any = 0.0, error_rate: Any = 0.0) -> None:
    """Raise ``ValueError`` naming the first of :func:`serve`'s options out of range
    (``latency_ms`` and ``error_rate`` as :meth:`FaultSettings.validate` checks them)."""
    check_port(port)
    if isinstance(seed_items, bool) or not isinstance(seed_items, int) or seed_items < 0:
        raise ValueError(f"seed_items must be a whole number of at least 0; got {seed_items!r}")
    if isinstance(token_ttl, bool) or not isinstance(token_ttl, int | float) \
            or not token_ttl >= 0:
        raise ValueError(f"token_ttl must be a number of seconds of at least 0; "
                         f"got {token_ttl!r}")
    FaultSettings(latency_ms=latency_ms, error_rate=error_rate).validate()


def serve(*, host: str = "127.0.0.1", port: int = 0, db: str | os.PathLike[str] | None = None,
          seed: int = 1, seed_items: int = 1000, token_ttl: float = 3600.0,
          latency_ms: float = 0.0, error_rate: float = 0.0,
          reads: FaultSettings | None = None, writes: FaultSettings | None = None,
          log_level: str = "warning") -> Sandbox:
    """Start a sandbox in a background thread and return its handle once it answers.

    ``port=0`` picks a free port. ``db`` is a SQLite file (kept between runs; demo data is
    only added to an empty one) or None for memory. ``seed_items`` ACH items of demo data
    (with RCC, instant and RTP in proportion, :mod:`paynb.sandbox.seed`) come from
    ``seed``. ``token_ttl`` is the token lifetime in seconds. ``latency_ms`` and
    ``error_rate`` (share of 503s) apply to reads and writes unless ``reads``/``writes``
    give full :class:`FaultSettings`. Use ``with serve(...) as sb:`` to stop it after.
    """
    import uvicorn

    # Lazy: the server's code brings FastAPI; a client (which imports this module for
    # the handle) never pays for it, and the sandbox loads when one starts here.
    from paynb.sandbox import app as apps
    from paynb.sandbox import seed as seeds
    from paynb.sandbox import store as stores

    check_serve_options(port=port, seed_items=seed_items, token_ttl=token_ttl,
                        latency_ms=latency_ms, error_rate=error_rate)
    base = FaultSettings(latency_ms=latency_ms, error_rate=error_rate)
    for settings in (reads, writes):
        if settings is not None:
            settings.validate()
    store = stores.Store(os.fspath(db) if db else None, seed=seed)
    if store.get_meta("seeded") is None:
        seeds.seed_demo(store, items=seed_items, seed=seed)
        store.set_meta("seeded", json.dumps({"items": seed_items, "seed": seed}))
    if store.get_meta("databaseId") is None:
        # Who the data is: a file database keeps it across restarts (unlike the instance
        # id), so a client's local history of it stays its own (paynb.history).
        store.set_meta("databaseId", uuid.uuid4().hex)
    faults = Faults(reads=reads or FaultSettings(**base.as_dict()),
                    writes=writes or FaultSettings(**base.as_dict()), seed=seed)
    instance_id = uuid.uuid4().hex
    app = apps.create_app(store, config=apps.AppConfig(token_ttl=token_ttl), faults=faults,
                          instance_id=instance_id)

    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted connections only when
    # the socket says proto == IPPROTO_TCP, and without it Nagle + the client's delayed ACK
    # add ~40 ms to every answer on a kept-alive connection (uvicorn writes head and body
    # separately).
    sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET,
                         socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError:
        sock.close()
        store.close()
        raise
    bound_port = sock.getsockname()[1]
    config = uvicorn.Config(app, log_level=log_level, log_config=None, access_log=False,
                            lifespan="off", timeout_keep_alive=30)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]},
                              name=f"paynb-sandbox-{bound_port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            server.should_exit = True
            store.close()
            raise RuntimeError("the sandbox server did not start")
        time.sleep(0.01)
    shown = f"[{host}]" if ":" in host else host
    base_url = f"http://{shown}:{bound_port}"
    logger.info("sandbox listening on %s", base_url)
    return Sandbox(base_url, instance_id=instance_id, _server=server, _thread=thread,
                   _store=store)


def discovery_path() -> Path:
    """Where a running demo sandbox announces itself (``PAYNB_SANDBOX_FILE`` overrides)."""
    import platformdirs

    return Path(os.environ.get("PAYNB_SANDBOX_FILE")
                or Path(platformdirs.user_cache_dir("paynb")) / "sandbox.json")


def default_db_path() -> Path:
    """The demo sandbox's SQLite file (``PAYNB_SANDBOX_DB`` overrides)."""
    import platformdirs

    return Path(os.environ.get("PAYNB_SANDBOX_DB")
                or Path(platformdirs.user_data_dir("paynb")) / "sandbox.sqlite3")


def announce(sandbox: Sandbox) -> None:
    """Write the discovery file for ``sandbox`` so other processes reuse it."""
    path = discovery_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {"base_url": sandbox.base_url, "auth_url": sandbox.auth_url,
            "company_code": sandbox.company_code, "instance_id": sandbox.instance_id,
            "pid": os.getpid()}
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(data))
    temporary.replace(path)


def withdraw(sandbox: Sandbox) -> None:
    """Remove the discovery file if it still announces ``sandbox``."""
    path = discovery_path()
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text()).get("instance_id") == sandbox.instance_id:
            path.unlink()


def _announced() -> Sandbox | None:
    """The sandbox the discovery file names, if it still answers as that instance."""
    import requests

    try:
        data = json.loads(discovery_path().read_text())
        # A dead sandbox refuses the connection at once; a busy one (a long list being
        # served on a loaded machine) answers late, and is not to be replaced by another
        # announced over it: that one would stop with the process that started it.
        answer = requests.get(data["base_url"] + "/sandbox/info", timeout=(2, 30)).json()
    except (OSError, ValueError, KeyError, TypeError, requests.RequestException):
        return None
    if answer.get("instanceId") != data.get("instance_id"):
        return None
    return Sandbox(data["base_url"], company_code=data.get("company_code", "DEMO1"),
                   instance_id=data.get("instance_id"))


@contextlib.contextmanager
def _startup_lock():
    """Only one process at a time decides whether to start the demo sandbox."""
    path = discovery_path().with_suffix(".lock")
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as handle:
        try:
            import fcntl
        except ImportError:  # Windows: no advisory locks; a rare double start is harmless
            yield
            return
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


_embedded: Sandbox | None = None
_embedded_lock = threading.Lock()


def ensure_running(*, seed_items: int = DEMO_ITEMS, seed: int = 1) -> Sandbox:
    """A handle to the demo sandbox: the one announced in the discovery file if it
    answers, else one started now in a background thread of this process (data in
    :func:`default_db_path`; ``seed_items`` and ``seed`` seed it once, when it is new)
    and announced for others."""
    global _embedded
    with _embedded_lock:
        if _embedded is not None and _embedded.owned:
            return _embedded
        with _startup_lock():
            found = _announced()
            if found is not None:
                return found
            db = default_db_path()
            db.parent.mkdir(parents=True, exist_ok=True)
            logger.info("starting the paynb sandbox (data in %s)", db)
            _embedded = serve(db=db, seed_items=seed_items, seed=seed)
            announce(_embedded)
            atexit.register(_stop_embedded, _embedded)
            return _embedded


def _stop_embedded(sandbox: Sandbox) -> None:
    withdraw(sandbox)
    sandbox.close()
