"""The OAuth2 password grant (spec section 5), and keeping its token fresh.

The token is fetched on first use, renewed shortly before ``expires_in``
runs out, and renewed once more when the service answers 401 to a token
paynb still thought valid. The token and the credentials never appear in a
repr, a log line or an exception.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import requests

from paynb._redact import shown_url, url_host
from paynb.errors import AuthenticationError, TransportError

__all__ = ["TOKEN_REQUEST", "PasswordAuth", "gave_up", "never_connected", "no_answer_reason"]

logger = logging.getLogger("paynb.auth")

#: Renew when less than this share of the token's lifetime is left (at most 60 s before).
_RENEW_SHARE = 0.1
_RENEW_MAX_MARGIN = 60.0
# The operating system's words in a connection error ("[Errno 111] Connection refused"),
# without the URL around them (its query string may hold references).
_ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\"()\[\]]+)")
_TLS_FAILED = "the TLS handshake failed"
#: What errors call the token request (:attr:`~paynb.errors.TransportError.request`).
TOKEN_REQUEST = "token request"
#: Statuses of a token request that no OAuth server gave: nothing there (404), or
#: something that takes no POST (405).
_NO_TOKEN_ENDPOINT = frozenset({404, 405})


def no_answer_reason(exc: BaseException) -> str:
    """Why no answer came, in a few words (no URL, no query string)."""
    name = type(exc).__name__
    if isinstance(exc, requests.Timeout):
        return f"timed out ({name})"
    if isinstance(exc, requests.exceptions.SSLError):
        return f"{_TLS_FAILED} ({name})"
    if isinstance(exc, requests.exceptions.ProxyError):
        return f"the proxy did not connect ({name})"
    text = str(exc)
    found = _ERRNO.search(text)
    if found:
        return f"{found.group(1).strip().lower()} ({name})"
    if "Connection aborted" in text or "RemoteDisconnected" in text:
        return f"the connection was dropped without an answer ({name})"
    return name


def never_connected(exc: BaseException) -> bool:
    """Whether ``exc`` (a requests exception) says that no connection to the host was
    made: refused, the host name not resolved, or timed out while connecting. The request
    then never left, so the service cannot have processed it. (A connection dropped or a
    TLS failure may come after the request was written: not counted.)"""
    from urllib3.exceptions import ConnectTimeoutError, NewConnectionError

    if isinstance(exc, requests.exceptions.ConnectTimeout):
        return True
    seen: set[int] = set()
    todo: list[Any] = [exc]
    while todo:
        found = todo.pop()
        if not isinstance(found, BaseException) or id(found) in seen:
            continue
        seen.add(id(found))
        # urllib3's NewConnectionError (refused, and NameResolutionError) is a
        # ConnectTimeoutError: both are raised before anything is written.
        if isinstance(found, ConnectTimeoutError | NewConnectionError):
            return True
        todo += [getattr(found, "reason", None), found.__cause__, found.__context__,
                 *found.args]
    return False


def _advice(reason: str, setting: str, url: str) -> str:
    """What to check after no answer came from ``url`` (for ``reason``)."""
    if reason.startswith(_TLS_FAILED):
        return (f"Check the CA bundle (REQUESTS_CA_BUNDLE, or verify= of the session you "
                f"passed) and that {setting} {url} is the right address.")
    return (f"Check that the VPN or network connection is up, that the proxy (HTTPS_PROXY, "
            f"or proxies= of the session you passed) lets the call through, and that "
            f"{setting} {url} is the right address.")


def gave_up(what: str, method: str, url: str, *, reason: str, attempts: int, seconds: float,
            setting: str, outcome: str = "", connected: bool = True) -> TransportError:
    """The final :class:`TransportError` after ``attempts`` tries without an answer."""
    parts = urlsplit(url)
    host = url_host(url)
    base = f"{parts.scheme}://{host}"
    if parts.path.endswith("/connect/token"):
        # The token URL is auth_url + /connect/token: name auth_url as set, with its path.
        base += parts.path.removesuffix("/connect/token")
    tries = f"{attempts} attempt{'s' if attempts != 1 else ''} over {seconds:.1f} s"
    return TransportError(
        f"no answer from {host} to the {what} ({method} {parts.path}): {reason}; "
        f"{tries}.{outcome} {_advice(reason, setting, base)}",
        method=method, path=parts.path, host=host, request=what, attempts=attempts,
        seconds=seconds, reason=reason, connected=connected)


class PasswordAuth:
    """Bearer tokens from ``{auth_url}/connect/token`` by the password grant.

    Thread-safe: concurrent page fetches share one token and at most one
    renewal runs at a time.
    """

    def __init__(self, auth_url: str, client_id: str, client_secret: str, username: str,
                 password: str, *, session: requests.Session, timeout: float):
        self.auth_url = auth_url.rstrip("/")
        self.token_url = self.auth_url + "/connect/token"
        self._form = {"client_id": client_id, "client_secret": client_secret,
                      "username": username, "password": password, "grant_type": "password"}
        self._session = session
        self._timeout = timeout
        self._lock = threading.Lock()
        self._token: str | None = None
        self._renew_at = 0.0

    def __repr__(self) -> str:
        return (f"PasswordAuth(token_url={shown_url(self.token_url)!r}, "
                f"user={self._form['username']!r})")

    def token(self) -> str:
        """A token valid for a while yet, fetching a new one when needed."""
        with self._lock:
            if self._token is None or time.monotonic() >= self._renew_at:
                self._fetch()
            assert self._token is not None
            return self._token

    def renew(self, stale: str) -> str:
        """A new token after the service refused ``stale`` (unless another thread renewed it)."""
        with self._lock:
            if self._token == stale or self._token is None:
                logger.info("service answered 401; renewing the token once")
                self._fetch()
            assert self._token is not None
            return self._token

    def _fetch(self) -> None:
        started = time.monotonic()
        try:
            response = self._session.post(self.token_url, data=self._form, timeout=self._timeout)
        except requests.RequestException as exc:
            # One attempt: Transport.token() retries, and its final error counts them all.
            raise gave_up(TOKEN_REQUEST, "POST", self.token_url,
                          reason=no_answer_reason(exc), attempts=1,
                          seconds=time.monotonic() - started, setting="auth_url") from None
        answer: Any
        try:
            answer = response.json()
        except ValueError:
            answer = None
        if not isinstance(answer, dict):
            answer = {}
        if response.status_code != 200 or "access_token" not in answer:
            error = answer.get("error")
            description = answer.get("error_description")
            shown = shown_url(self.token_url)
            if error:
                reason = f"{error}" + (f" ({description})" if description else "")
            elif response.status_code == 200:
                reason = "the answer held no access_token"
            else:
                reason = f"HTTP {response.status_code} without an OAuth error code"
            if not error and response.status_code in _NO_TOKEN_ENDPOINT:
                # No OAuth server answered at that address: the address is wrong, not the
                # credentials (an OAuth server refuses those with 400 and an error code).
                reason += (f"; no token endpoint there, so auth_url "
                           f"{shown_url(self.auth_url)} is likely wrong (paynb posts to "
                           f"auth_url + /connect/token), not the credentials")
            raise AuthenticationError(f"token request to {shown} refused: {reason}",
                                      error=error, status=response.status_code, method="POST",
                                      path=urlsplit(self.token_url).path, url=shown,
                                      detail=description if isinstance(description, str)
                                      else None)
        self._token = str(answer["access_token"])
        lifetime = answer.get("expires_in")
        now = time.monotonic()
        try:
            seconds = float(lifetime)
        except (TypeError, ValueError):
            # Lifetime "not shown": keep the token until the service answers 401.
            self._renew_at = float("inf")
        else:
            self._renew_at = now + seconds - min(_RENEW_MAX_MARGIN, seconds * _RENEW_SHARE)
        logger.debug("new token, lifetime %s s", lifetime)
