"""The OAuth2 password grant (spec section 5), and keeping its token fresh.

The token is fetched on first use, renewed shortly before ``expires_in``
runs out, and renewed once more when the service answers 401 to a token
paynb still thought valid. The token and the credentials never appear in a
repr, a log line or an exception.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any
from urllib.parse import urlsplit

import requests

from paynb.errors import AuthenticationError, TransportError

__all__ = ["PasswordAuth"]

logger = logging.getLogger("paynb.auth")

#: Renew when less than this share of the token's lifetime is left (at most 60 s before).
_RENEW_SHARE = 0.1
_RENEW_MAX_MARGIN = 60.0


class PasswordAuth:
    """Bearer tokens from ``{auth_url}/connect/token`` by the password grant.

    Thread-safe: concurrent page fetches share one token and at most one
    renewal runs at a time.
    """

    def __init__(self, auth_url: str, client_id: str, client_secret: str, username: str,
                 password: str, *, session: requests.Session, timeout: float):
        self.token_url = auth_url.rstrip("/") + "/connect/token"
        self._form = {
            "client_id": client_id,
            "client_secret": client_secret,
            "username": username,
            "password": password,
            "grant_type": "password",
        }
        self._session = session
        self._timeout = timeout
        self._lock = threading.Lock()
        self._token: str | None = None
        self._renew_at = 0.0

    def __repr__(self) -> str:
        return f"PasswordAuth(token_url={self.token_url!r}, user={self._form['username']!r})"

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
        try:
            response = self._session.post(self.token_url, data=self._form, timeout=self._timeout)
        except requests.RequestException as exc:
            raise TransportError(f"token endpoint unreachable ({type(exc).__name__})",
                                 method="POST", path="/connect/token") from None
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
            if error:
                reason = f"{error}" + (f" ({description})" if description else "")
            elif response.status_code == 200:
                reason = "the answer held no access_token"
            else:
                reason = f"HTTP {response.status_code} without an OAuth error code"
            raise AuthenticationError(f"token request refused: {reason}", error=error,
                                      status=response.status_code, method="POST",
                                      path=urlsplit(self.token_url).path,
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
