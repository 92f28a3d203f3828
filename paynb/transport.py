"""HTTP for the client: one pooled ``requests.Session``, a timeout on every call,
retries of reads, and the mapping of error answers to :mod:`paynb.errors`.

Only reads are retried (GET: connection errors, 408, 429 and 5xx, with
exponential backoff and jitter, honouring ``Retry-After`` up to a cap). A POST
or PUT is sent exactly once: a lost answer is reported as
:class:`~paynb.errors.TransportError` so that the journal can mark the
submission ``unknown`` instead of paying twice. The one exception is a 401,
which proves the service refused the call unprocessed: the token is renewed
and the call sent once more, for every method.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import io
import logging
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlencode

import requests
from requests.adapters import HTTPAdapter
from requests.auth import AuthBase

from paynb._json import loads
from paynb._redact import preview, redact, shown_url, url_host
from paynb._sign import is_sandbox_answer
from paynb.auth import TOKEN_REQUEST, PasswordAuth, gave_up, never_connected, no_answer_reason
from paynb.errors import (
    ApiError,
    AuthenticationError,
    BadRequestError,
    NotFoundError,
    PaynbError,
    PermissionDeniedError,
    RateLimitError,
    ResponseFormatError,
    ServerError,
    TransportError,
)
from paynb.results import lookup

__all__ = ["DEFAULT_MAX_RETRIES", "Transport", "describe_request", "make_session", "preview"]

logger = logging.getLogger("paynb.transport")

#: Retries of a read. Under 10% 503s, 5% dropped connections and 2% 429s (17% of
#: requests failing), 3 retries lose a 100-page listing about 8% of the time
#: (100 x 0.17**4); 5 retries, about 0.2% (100 x 0.17**6). Backoff stays capped.
DEFAULT_MAX_RETRIES = 5
RETRY_STATUSES = frozenset({408, 429}) | frozenset(range(500, 600))
_SAFE_METHODS = frozenset({"GET", "HEAD"})

Params = Mapping[str, Any] | Sequence[tuple[str, Any]] | None
#: The error of an answer's status (5xx: ServerError; any other: ApiError).
_ERRORS: dict[int, type[ApiError]] = {400: BadRequestError, 403: PermissionDeniedError,
                                      404: NotFoundError, 429: RateLimitError}


class _Bearer(AuthBase):
    """The bearer token, given to requests as ``auth=``.

    requests replaces an ``Authorization`` header given in ``headers=`` by a ``~/.netrc``
    (or ``$NETRC``) entry for the host, or by the ``auth`` of a session the user passed
    in; an ``auth=`` of the request itself wins over both.
    """

    __slots__ = ("token",)

    def __init__(self, token: str) -> None:
        self.token = token

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        request.headers["Authorization"] = f"Bearer {self.token}"
        return request


def make_session(pool_size: int, session: requests.Session | None = None) -> requests.Session:
    """A session whose connection pool holds ``pool_size`` connections per host.

    ``session``, when given, is configured rather than replaced: its proxies,
    ``verify`` (CA bundle), ``cert`` (mTLS), headers and cookies stay as they are.
    paynb's pooled adapter (no retries of its own: :class:`Transport` retries reads)
    goes on ``http://`` and ``https://`` unless an adapter of the user's own class
    (a subclass of ``HTTPAdapter``, e.g. with its own SSL context) is mounted there;
    adapters mounted on longer prefixes are untouched. ``Accept: application/json`` is
    set unless the user set an Accept header.
    """
    if session is None:
        session = requests.Session()
    adapter = HTTPAdapter(pool_connections=4, pool_maxsize=max(pool_size, 2), max_retries=0)
    for prefix in ("http://", "https://"):
        mounted = session.adapters.get(prefix)
        if mounted is None or type(mounted) is HTTPAdapter:
            session.mount(prefix, adapter)
        else:
            logger.debug("keeping the session's own %s adapter for %s",
                         type(mounted).__name__, prefix)
    if session.headers.get("Accept") in (None, "*/*"):
        session.headers["Accept"] = "application/json"
    return session


def _retry_after(response: requests.Response) -> float | None:
    value = response.headers.get("Retry-After")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())


def _field_errors(raw: Any) -> dict[str, list[str]]:
    """Problem-detail ``errors`` as ``{field: [messages]}``, whatever form they came in."""
    if isinstance(raw, Mapping):
        return {str(key): [preview(str(m)) for m in (value if isinstance(value, list) else [value])]
                for key, value in raw.items()}
    if isinstance(raw, list):
        errors: dict[str, list[str]] = {}
        for entry in raw:
            if isinstance(entry, Mapping):
                key = lookup(entry, "field", "propertyName", "name") or "body"
                message = lookup(entry, "message", "errorMessage", "detail") or str(entry)
                errors.setdefault(str(key), []).append(preview(str(message)))
            else:
                errors.setdefault("body", []).append(preview(str(entry)))
        return errors
    return {}


def api_error(response: requests.Response, method: str, path: str,
              cls: type[ApiError] | None = None, *, url: str | None = None,
              hint: str | None = None, **extra: Any) -> ApiError:
    """The exception for an error answer: problem-detail fields when there are any.

    ``url`` is the whole address asked (shown with credentials hidden,
    :func:`paynb._redact.shown_url`); ``hint`` a sentence appended to the message (what
    is likely wrong).

    The exception keeps the answer as ``body`` after :func:`paynb._redact.redact`
    (secret-named fields dropped, card numbers cut to their last four digits,
    account numbers masked): a service that echoes what it was sent must not put
    a card number into an exception, a traceback or a log.
    """
    status = response.status_code
    body: Any
    try:
        body = loads(response.content) if response.content else None
    except ValueError:
        body = preview(response.text)
    title = detail = None
    errors: dict[str, list[str]] = {}
    if isinstance(body, Mapping):
        title = lookup(body, "title")
        detail = lookup(body, "detail", "message", "error_description")
        errors = _field_errors(lookup(body, "errors"))
        title = preview(str(title)) if title is not None else None
        detail = preview(str(detail)) if detail is not None else None
    if detail or title:
        message = str(detail or title)
    elif isinstance(body, str) and body:
        message = f"{response.reason or 'error'}; the answer was not JSON: {body}"
    else:
        message = response.reason or f"HTTP {status}"
    if hint:
        message = f"{message.rstrip('.')}. {hint}"
    cls = cls or (ServerError if status >= 500 else _ERRORS.get(status, ApiError))
    if cls is RateLimitError:
        extra.setdefault("retry_after", _retry_after(response))
    return cls(message, status=status, method=method, path=path, title=title, detail=detail,
               errors=errors, body=redact(body), url=shown_url(url) if url else None, **extra)


def wrong_base_url(base_url: str) -> str:
    """What a 404 to a path that names no item says: the service has no such path, so
    ``base_url`` is likely wrong (with the address to try when it ends in ``/api``)."""
    text = (f"The service has no such path: base_url {shown_url(base_url)} is likely wrong "
            f"(paynb puts /api/v3/... after it)")
    trimmed = base_url.rstrip("/")
    for tail in ("/api/v3", "/api"):
        if trimmed.lower().endswith(tail):
            text += f"; try {shown_url(trimmed[: -len(tail)])}"
            break
    return text + "."


def describe_request(method: str, path: str, params: Params = None) -> str:
    """What a request is for, in words for log lines and errors: ``token request``,
    ``list page 3``, ``export``, ``read``, ``submission`` or ``void``."""
    if path.endswith("/connect/token"):
        return TOKEN_REQUEST
    if method in _SAFE_METHODS:
        if "/export/" in path:
            return "export"
        pairs = params.items() if isinstance(params, Mapping) else params or ()
        page = next((value for key, value in pairs if key == "page"), None)
        return f"list page {page}" if page is not None else "read"
    if method == "PUT" or "/void" in path.lower():
        return "void"
    return "submission"


class Transport:
    """Sends requests to ``base_url`` with a bearer token; see the module docstring.

    A client's transport is :attr:`paynb.Client.transport`, the one seam below the client
    for tests and for users who need one (a proxy, a recording of the wire). Its
    attributes may be read and set:

    Attributes:
        session: the ``requests.Session`` every call goes through; wrap or replace its
            adapters to record or stub the wire (``session.mount(...)``).
        base_url: the service address the paths are put after.
        auth: the token fetcher (``None``: no bearer token is sent).
        timeout: seconds every HTTP call may take.
        max_retries: retries of a read (and of the token request); 0 turns them off.
        backoff, max_backoff: the first wait between retries (doubling) and its cap.
        max_retry_wait: the longest ``Retry-After`` honoured, in seconds.
        sleep: the function that waits between retries (``time.sleep``); set it to
            ``lambda seconds: None`` to retry without waiting, or to a list's ``append``
            to record the waits.

    :meth:`request` and :meth:`json` send one raw call (retried and mapped to
    :mod:`paynb.errors` as every call of the client is).
    """

    #: The function that waits between retries (an instance may set its own).
    sleep = staticmethod(time.sleep)

    def __init__(self, base_url: str, auth: PasswordAuth | None, *, session: requests.Session,
                 timeout: float = 30.0, max_retries: int = DEFAULT_MAX_RETRIES,
                 backoff: float = 0.25, max_backoff: float = 8.0, max_retry_wait: float = 30.0,
                 owns_session: bool = True):
        if timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self.base_url = base_url.rstrip("/")
        self.auth = auth
        self.session = session
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_retry_wait = max_retry_wait
        #: False for a session the user passed in: it is theirs to close.
        self.owns_session = owns_session
        #: What the service's answers said of it (:mod:`paynb._sign`): ``None`` before the
        #: first answer; ``True`` once one came from the sandbox (``X-Paynb-Sandbox: 1``),
        #: and so it stays; else ``False``, the real service.
        self.sandbox: bool | None = None
        self._asked = False

    def close(self) -> None:
        """Close the pooled connections (of a session paynb made)."""
        if self.owns_session:
            self.session.close()

    def _pause(self, attempt: int, response: requests.Response | None, said: str) -> None:
        """Wait before retry ``attempt + 1`` (what ``response`` asked with ``Retry-After``,
        capped, else the backoff with jitter), logging ``said`` and the wait."""
        asked = _retry_after(response) if response is not None else None
        delay = min(self.max_backoff, self.backoff * 2.0 ** attempt)
        wait = min(asked, self.max_retry_wait) if asked is not None else \
            delay / 2 + random.uniform(0, delay / 2)
        logger.warning("%s; retry %d of %d in %.1f s", said, attempt + 1, self.max_retries, wait)
        self.sleep(wait)

    def token(self, stale: str | None = None) -> str | None:
        """A bearer token (a new one when the service refused ``stale``), ``None`` without
        auth. The token request is retried like a read (it pays nothing): no answer, 408,
        429 or 5xx; each retry line and the final error name the token request and its
        host, not the request that needed the token."""
        if self.auth is None:
            return None
        auth = self.auth
        started = time.monotonic()
        for attempt in range(self.max_retries + 1):
            last = attempt == self.max_retries
            try:
                return auth.renew(stale) if stale else auth.token()
            except TransportError as exc:
                if last:
                    raise gave_up(TOKEN_REQUEST, "POST", auth.token_url,
                                  reason=exc.reason or "no answer", attempts=attempt + 1,
                                  seconds=time.monotonic() - started,
                                  setting="auth_url") from None
                said = f"no answer ({exc.reason})"
            except AuthenticationError as exc:
                if exc.status not in RETRY_STATUSES or last:
                    raise
                said = f"HTTP {exc.status}"
            self._pause(attempt, None, f"token request to {url_host(auth.token_url)}: {said}")
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _send(self, method: str, path: str, params: Params, body: str | None,
              headers: Mapping[str, str] | None) -> requests.Response | requests.RequestException:
        """One request (plus one resend after a 401 and a renewed token).

        No answer returns the requests exception that says why (it is not raised:
        :meth:`request` decides whether to retry, and raises the final TransportError).
        """
        url = self.base_url + path
        all_headers = dict(headers or {})
        if body is not None:
            all_headers["Content-Type"] = "application/json"
        # ':' stays literal, so that times read as the spec writes them
        # (returnDateStart=2026-11-01T00:00:00.000).
        query = urlencode(params, doseq=True, safe=":") if params else None
        token = self.token()
        for renewed in (False, True):
            started = time.perf_counter()
            try:
                response = self.session.request(
                    method, url, params=query,
                    data=body.encode() if body is not None else None,
                    headers=all_headers, timeout=self.timeout, stream=True,
                    auth=_Bearer(token) if token else None)
                _read_body(response)
            except requests.RequestException as exc:
                return exc
            if is_sandbox_answer(response.headers):
                self.sandbox = True
            elif self.sandbox is None:
                self.sandbox = False
            logger.debug("%s %s -> %s in %.3f s", method, path, response.status_code,
                         time.perf_counter() - started)
            if response.status_code != 401 or self.auth is None or renewed:
                break
            assert token is not None
            token = self.token(stale=token)
        if response.status_code == 401:
            refused = api_error(response, method, path, url=url)
            raise AuthenticationError(
                f"{method} {refused.url}: the service refused the token (401) even after "
                f"renewing it: {refused.args[0]}", status=401, method=method, path=path,
                title=refused.title, detail=refused.detail, errors=refused.errors,
                body=refused.body, url=refused.url)
        return response

    def identify(self, path: str) -> bool | None:
        """Whether the service is the sandbox (:attr:`sandbox`); before any answer has said
        it, one ``GET path`` is sent to find out, once (no retry; its status does not
        matter, only its headers do: :mod:`paynb._sign`). ``None``: nothing answered yet
        (the next answer of any call will say)."""
        if self.sandbox is None and not self._asked:
            self._asked = True
            try:
                answer: requests.Response | Exception = self._send("GET", path, None, None,
                                                                   None)
            except PaynbError as exc:
                answer = exc
            if isinstance(answer, requests.Response):
                answer.close()
            else:
                logger.debug("GET %s to find out which service this is: %s", path,
                             type(answer).__name__)
        return self.sandbox

    def request(self, method: str, path: str, *, params: Params = None, body: str | None = None,
                headers: Mapping[str, str] | None = None,
                collection: bool = False) -> requests.Response:
        """Send a request; a 2xx answer is returned, anything else raised as a paynb error.

        ``body`` is JSON text (made with :func:`paynb._json.dumps`). Only GET and
        HEAD are retried. ``collection``: the path names no item (a list, an export, a
        submission), so a 404 means the service has no such path and the error says
        that ``base_url`` is likely wrong (:func:`wrong_base_url`).
        """
        method = method.upper()
        what = describe_request(method, path, params)
        attempts = self.max_retries + 1 if method in _SAFE_METHODS else 1
        started = time.monotonic()
        for attempt in range(attempts):
            last = attempt == attempts - 1
            response = self._send(method, path, params, body, headers)
            if isinstance(response, requests.RequestException):
                reason = no_answer_reason(response)
                if last:
                    connected = not never_connected(response)
                    outcome = "" if method in _SAFE_METHODS else (
                        " The service may or may not have processed it, and paynb does not "
                        "send it again (client.reconcile() finds out)." if connected else
                        " No connection was made, so it never reached the service: nothing "
                        "was sent.")
                    raise gave_up(what, method, self.base_url + path, reason=reason,
                                  attempts=attempt + 1, seconds=time.monotonic() - started,
                                  setting="base_url", outcome=outcome,
                                  connected=connected) from None
                self._pause(attempt, None, f"{what} ({method} {path}) to "
                                           f"{url_host(self.base_url)}: no answer ({reason})")
                continue
            if response.status_code < 400:
                return response
            if response.status_code in RETRY_STATUSES and not last:
                response.close()
                self._pause(attempt, response,
                            f"{what} ({method} {path}): HTTP {response.status_code}")
                continue
            hint = wrong_base_url(self.base_url) if collection and \
                response.status_code == 404 else None
            raise api_error(response, method, path, url=self.base_url + path, hint=hint)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def json(self, method: str, path: str, *, params: Params = None,
             body: str | None = None, collection: bool = False) -> Any:
        """Send a request and parse its JSON answer (``None`` for an empty answer)."""
        response = self.request(method, path, params=params, body=body, collection=collection)
        return parse_json(response, method, path)


def _read_body(response: requests.Response) -> None:
    """Read the body of an answer asked with ``stream=True`` now, as requests would, but in
    as few socket reads as the data allows, and hand it to requests as a file in memory.

    requests reads 10 KiB at a time, and each socket read lets go of the interpreter lock,
    which a thread building frames may then hold for a switch interval (5 ms): a page of
    200 ACH items took 33 reads, read at once 4-5 (benchmarks/RESULTS.md, case 1). A
    connection lost mid-body raises what requests raises for it: no answer (retried).
    """
    from urllib3 import exceptions as urllib3

    raw = response.raw
    if raw is None or not hasattr(raw, "stream"):  # not urllib3's: requests reads it
        response.content  # noqa: B018
        return
    # What requests raises for each, had it read the body itself.
    raised_as: dict[type[Exception], type[Exception]] = {
        urllib3.ProtocolError: requests.exceptions.ChunkedEncodingError,
        urllib3.DecodeError: requests.exceptions.ContentDecodingError,
        urllib3.ReadTimeoutError: requests.exceptions.ConnectionError,
        urllib3.SSLError: requests.exceptions.SSLError}
    try:
        body = raw.read(decode_content=True)
    except tuple(raised_as) as exc:
        raise next(raised_as[kind] for kind in raised_as if isinstance(exc, kind))(exc) from exc
    response.raw = io.BytesIO(body)
    response.content  # noqa: B018 (from memory: no socket read, the lock is kept)


def parse_json(response: requests.Response, method: str, path: str) -> Any:
    """The JSON of an answer, or :class:`ResponseFormatError` quoting the start of it.

    Numbers of more than 15 significant digits come back as exact ``Decimal``
    (:func:`paynb._json.loads`); shorter ones as ``float``, which holds them exactly.
    """
    if not response.content.strip():
        return None
    try:
        return loads(response.content)
    except ValueError:
        raise ResponseFormatError(
            f"{method} {path}: the answer is not JSON "
            f"({response.headers.get('Content-Type', 'no content type')}): "
            f"{preview(response.text)!r}") from None

