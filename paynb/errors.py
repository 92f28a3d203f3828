"""Exceptions raised by paynb.

The tree::

    PaynbError
    ├── AuthenticationError        token refused, or a 401 the renewed token did not cure
    ├── ValidationError            bad input found before anything was sent (per field)
    ├── ApiError                   the service answered with an error status
    │   ├── BadRequestError        400
    │   │   └── BulkRejectedError  400 to an all-or-nothing bulk (or refused before sending)
    │   ├── PermissionDeniedError  403 (a company the user does not hold)
    │   ├── NotFoundError          404
    │   ├── RateLimitError         429
    │   └── ServerError            5xx
    ├── TransportError             no answer: connection refused or dropped, timeout
    ├── ResponseFormatError        an answer paynb cannot read (HTML, broken JSON, ...)
    ├── RouteNotCheckedError       instant send without a recent successful route check
    ├── RouteUnavailableError      the route check said no, or the amount is above its limit
    ├── DuplicateSubmissionError   the journal already holds this reference number
    ├── JournalError               the journal cannot be used (newer schema, server down, ...)
    ├── ApprovalError              an approval refused (prepared by you, decided, expired...)
    ├── SubmissionRefusedError     a NACHA guard refused the entry (paynb.compliance)
    ├── ThresholdExceeded          a return rate over its threshold (compliance.check)
    ├── HistoryError               a local history store cannot be used (paynb.history)
    │   ├── HistoryLockedError     another process is syncing the same store
    │   └── HistoryCorruptError    a table of the store cannot be read
    └── MissingExtraError          a part of paynb needs an extra that is not installed

Warnings (sent anyway, or answered without error, but worth a look)::

    PaynbWarning (UserWarning)
    ├── UnknownValueWarning            a value of an open set paynb does not know (sent as given)
    ├── UnknownCodeWarning             a return or change code in none of NACHA's tables
    ├── ValidationWarning              unusual but not certainly wrong (a past effective date)
    ├── SubmissionNotAcceptedWarning   the service answered 200 with status I or B
    ├── HistoryWarning                 a history's answer is empty or partial for a reason
    │   │                              (no store at the path, a kind never synced, ...)
    │   └── HistoryCompanyWarning      a history read for a company it holds no items of
    └── GuardWarning                   a NACHA guard's warning (paynb.compliance)

No exception text ever holds a password, secret, token, one-time password or
full card number: messages name fields, not values.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "ApiError",
    "ApprovalError",
    "AuthenticationError",
    "BadRequestError",
    "BulkRejectedError",
    "DuplicateSubmissionError",
    "GuardWarning",
    "HistoryCompanyWarning",
    "HistoryCorruptError",
    "HistoryError",
    "HistoryLockedError",
    "HistoryWarning",
    "JournalError",
    "MissingExtraError",
    "NotFoundError",
    "PaynbError",
    "PaynbWarning",
    "PermissionDeniedError",
    "RateLimitError",
    "ResponseFormatError",
    "RouteNotCheckedError",
    "RouteUnavailableError",
    "ServerError",
    "SubmissionNotAcceptedWarning",
    "SubmissionRefusedError",
    "ThresholdExceeded",
    "TransportError",
    "UnknownCodeWarning",
    "UnknownValueWarning",
    "ValidationError",
    "ValidationWarning",
]


class PaynbError(Exception):
    """Base of every error paynb raises."""


class _ServiceAnswer:
    """What an error about one answer of the service carries (one list for every such
    error): the HTTP ``status``, the request ``method``, ``path`` and whole ``url`` (with
    any credentials in it hidden), the problem detail's ``title``, ``detail`` and
    per-field ``errors``, and the scrubbed ``body``."""

    status: int | None
    method: str | None
    path: str | None
    url: str | None
    title: str | None
    detail: str | None
    errors: dict[str, list[str]]
    body: Any

    def _keep_answer(self, **answer: Any) -> None:
        answer["errors"] = answer["errors"] or {}
        answer.setdefault("url", None)
        for name, value in answer.items():
            setattr(self, name, value)


class AuthenticationError(_ServiceAnswer, PaynbError):
    """The token endpoint refused the credentials, or the service kept answering 401.

    ``error`` holds the OAuth error code (``invalid_grant``, ``invalid_client``, ...)
    when the token endpoint gave one. A 401 from the service carries what an
    :class:`ApiError` carries: ``status``, the request ``method``, ``path`` and ``url``,
    and the answer's ``title``, ``detail``, per-field ``errors`` and (scrubbed) ``body``;
    for a token refusal they are ``POST`` and the token endpoint's path and URL, with the
    OAuth ``error_description`` as ``detail``.
    """

    def __init__(self, message: str, *, error: str | None = None, status: int | None = None,
                 method: str | None = None, path: str | None = None,
                 title: str | None = None, detail: str | None = None,
                 errors: dict[str, list[str]] | None = None, body: Any = None,
                 url: str | None = None):
        super().__init__(message)
        self.error = error
        self._keep_answer(status=status, method=method, path=path, title=title,
                          detail=detail, errors=errors, body=body, url=url)


def _format_field_errors(errors: dict[str, list[str]]) -> str:
    return "; ".join(f"{field}: {', '.join(messages)}" for field, messages in errors.items())


#: How to send anyway what paynb's own checks refuse (docs/validation.md).
ESCAPE_HATCH = ("paynb refuses only what is certainly wrong (docs/validation.md); to let "
                "the service judge instead, pass validate=False")


class ValidationError(PaynbError, ValueError):
    """Input that breaks the service's rules, found before anything was sent.

    ``errors`` maps each bad field (wire spelling, e.g. ``bankRoutingNumber`` or
    ``items[3].amount``) to its messages, each naming the rule it breaks. When the
    refusal comes from paynb's checks of a request body (``skippable``), the message
    also says how to send it anyway: ``validate=False``.
    """

    def __init__(self, errors: dict[str, list[str]], *, message: str | None = None,
                 skippable: bool = False):
        self.errors = errors
        text = message or f"invalid input: {_format_field_errors(errors)}"
        super().__init__(f"{text}. {ESCAPE_HATCH}" if skippable else text)

    @classmethod
    def for_argument(cls, argument: str, message: str) -> ValidationError:
        """The error about one argument of a call: ``errors`` is ``{argument: [message]}``
        and the text reads ``<argument> <message>`` (``page_size must be a whole number
        of at least 1``)."""
        return cls({argument: [message]}, message=f"{argument} {message}")


class ApiError(_ServiceAnswer, PaynbError):
    """The service answered with an error status.

    Carries the HTTP ``status``, the request ``method``, ``path`` and ``url`` (the whole
    address asked, ``base_url`` included, credentials in it hidden; never headers or
    bodies), and the problem-detail ``title``, ``detail`` and per-field ``errors`` when
    the answer had them. The message names the whole URL, so that a wrong ``base_url``
    shows: ``404 GET http://127.0.0.1:8000/api/api/v3/AchTransactions/...``.
    """

    def __init__(self, message: str, *, status: int | None, method: str, path: str,
                 title: str | None = None, detail: str | None = None,
                 errors: dict[str, list[str]] | None = None, body: Any = None,
                 url: str | None = None):
        self._keep_answer(status=status, method=method, path=path, title=title,
                          detail=detail, errors=errors, body=body, url=url)
        super().__init__(message)

    def __str__(self) -> str:
        said = "refused before sending" if self.status is None else str(self.status)
        text = f"{said} {self.method} {self.url or self.path}: {self.args[0]}"
        if self.errors:
            text += f" ({_format_field_errors(self.errors)})"
        return text


class BadRequestError(ApiError):
    """400: the service refused the request's data."""


class BulkRejectedError(BadRequestError):
    """An all-or-nothing bulk submission refused: nothing was stored.

    ``rows`` maps each rejected input row (0-based, in input order) to its errors.
    ``status`` is 400 when the service refused the set, ``None`` when paynb's own checks
    refused it before anything was sent (the message then starts ``refused before
    sending``).
    """

    def __init__(self, message: str, *, rows: dict[int, dict[str, list[str]]] | None = None,
                 **kwargs: Any):
        self.rows = rows or {}
        super().__init__(message, **kwargs)


class PermissionDeniedError(ApiError):
    """403: the user may not act for this company."""


class NotFoundError(ApiError):
    """404: no such item (or path). A 404 to a path that names no item (a list, an
    export, a submission) means the service has no such path at all: the message then
    says that ``base_url`` is likely wrong."""


class RateLimitError(ApiError):
    """429: too many requests. ``retry_after`` is the wait the service asked for, in seconds."""

    def __init__(self, message: str, *, retry_after: float | None = None, **kwargs: Any):
        self.retry_after = retry_after
        super().__init__(message, **kwargs)


class ServerError(ApiError):
    """5xx: the service failed."""


class TransportError(PaynbError):
    """No answer came: the connection was refused or dropped, or the call timed out.

    ``connected`` is False when no connection to the host was made (refused, the host
    name not resolved, timed out while connecting): the request never left, and the
    journal records a submission ``failed`` (not sent; it may be sent again). Otherwise
    the request may have reached the service, and for a POST the outcome is unknown:
    the journal marks the submission ``unknown`` until
    :meth:`paynb.Client.reconcile` settles it.

    The message names the request that got no answer and its host once, says how
    many attempts were made over how long, and what to check (VPN, proxy, the
    address). The same facts are attributes: ``method``, ``path``, ``host``,
    ``request`` (``token request``, ``list page 3``, ``submission``...),
    ``attempts``, ``seconds`` and ``reason`` (``connection refused (ConnectionError)``).
    """

    def __init__(self, message: str, *, method: str | None = None, path: str | None = None,
                 host: str | None = None, request: str | None = None, attempts: int = 1,
                 seconds: float | None = None, reason: str | None = None,
                 connected: bool = True):
        self.method = method
        self.path = path
        self.host = host
        self.request = request
        self.attempts = attempts
        self.seconds = seconds
        self.reason = reason
        self.connected = connected
        super().__init__(message)


class ResponseFormatError(PaynbError):
    """The service answered something paynb cannot read; the message quotes its start."""


class RouteNotCheckedError(PaynbError):
    """An instant payment was refused before sending: no recent successful route check."""


class RouteUnavailableError(PaynbError):
    """The route check said the rail is not supported or not reachable, or the amount
    is above the rail's limit. Nothing was sent."""


class DuplicateSubmissionError(PaynbError):
    """The journal already holds a submission with this reference number for this company.

    Nothing was sent. ``previous`` describes the earlier submission; pass
    ``allow_duplicate=True`` to send anyway.
    """

    def __init__(self, message: str, *, reference_number: str,
                 previous: dict[str, Any] | None = None):
        self.reference_number = reference_number
        self.previous = previous or {}
        super().__init__(message)


class JournalError(PaynbError):
    """The journal cannot be used: a file or database written by a newer paynb, a file
    that is not a journal, a PostgreSQL server that refuses or does not answer. The
    message names the journal (a database address without its password). Also raised
    where a journal is needed and ``PAYNB_JOURNAL=off`` turned it off."""


class ApprovalError(PaynbError):
    """A payment held for a second person (dual control) cannot be approved or rejected:
    there is no such approval, it is another company's, it was already decided or has
    expired, or the person approving it is the one who prepared it. Nothing was sent.
    ``approval`` is the :class:`~paynb.journal.Approval` when there is one."""

    def __init__(self, message: str, *, approval: Any = None):
        self.approval = approval
        super().__init__(message)


class PaynbWarning(UserWarning):
    """Base of every warning paynb gives: something worth a look, nothing refused."""


class UnknownValueWarning(PaynbWarning):
    """A value of an open set (account type, entry class, sub-type, payment type code,
    transaction code) that paynb does not know: sent as given, the service decides."""


class UnknownCodeWarning(PaynbWarning):
    """The service sent a return code or change code that is in none of the tables of
    :mod:`paynb.codes` (a typo at the service, or a code newer than paynb): the code is
    kept, its meaning reads ``not a NACHA code paynb knows``, it counts in no return-rate
    category but the overall one, and charts sum it under "other". Given once per frame.

    ``column`` is the column holding it (``returnReason``, ``changeCode``), ``codes``
    the unknown codes found there.
    """

    def __init__(self, message: str, *, column: str = "", codes: tuple[str, ...] = ()):
        self.column = column
        self.codes = codes
        super().__init__(message)


class HistoryWarning(PaynbWarning):
    """A local history (:mod:`paynb.history`) answered, but its answer is empty or partial
    for a reason the reader should know: no store at the path (a mistyped folder), a kind
    never synced, a start before the store's own, a table that did not exist yet at
    ``as_of``, a store converted from an earlier paynb. The message names the store."""


class HistoryCompanyWarning(HistoryWarning):
    """A history opened for a company it holds no items of (its frames are empty)."""


class ValidationWarning(PaynbWarning):
    """Input that is unusual but not certainly wrong (an effective date in the past, text
    longer than its NACHA field): sent as given."""


class SubmissionNotAcceptedWarning(PaynbWarning):
    """The service answered a submission 200 but with status ``I`` (invalid) or ``B``
    (blocked): the item is stored and will not be processed. Only ``W`` means it goes
    ahead.

    ``status`` is the item's status, ``reasons`` the service's reason fields
    (``itemStatusDescription``, ``returnReason``, ``returnMessage``, ``errors``),
    ``reference_number`` and ``item_id`` name the item.
    """

    def __init__(self, message: str, *, status: str, reasons: dict[str, Any] | None = None,
                 reference_number: Any = None, item_id: Any = None):
        self.status = status
        self.reasons = reasons or {}
        self.reference_number = reference_number
        self.item_id = item_id
        super().__init__(message)


class GuardWarning(PaynbWarning):
    """A submission guard's warning (:mod:`paynb.compliance`): an open NOC not yet due, a
    masked account number, or no history to check an entry against. A
    :class:`PaynbWarning`, so ``warnings.filterwarnings("ignore",
    category=paynb.PaynbWarning)`` covers it with every other paynb warning."""


class HistoryError(PaynbError):
    """A problem with a local history store (:mod:`paynb.history`): one synced from
    another service, an unreadable or missing table, a store that is not one."""


class HistoryLockedError(HistoryError):
    """Another process is syncing the same history store."""


class HistoryCorruptError(HistoryError):
    """A table of the history store cannot be read."""


class SubmissionRefusedError(PaynbError):
    """A submission guard (:mod:`paynb.compliance`) refused one or more entries before
    anything was sent: an overdue NOC on the account, a last entry returned for a reason
    that needs a new authorization, or a reinitiation over NACHA's limits.

    ``verdicts`` holds one :class:`paynb.compliance.Verdict` per refused entry (its
    ``row`` is the entry's position in a bulk submission, ``reasons`` what the rule says).
    """

    def __init__(self, message: str, *, verdicts: list[Any] | None = None):
        self.verdicts = verdicts or []
        super().__init__(message)


class ThresholdExceeded(PaynbError):
    """Raised by :func:`paynb.compliance.check` with ``raise_on``: a return rate is over
    its threshold (or its warning level). ``alerts`` holds every
    :class:`~paynb.compliance.ReturnRateAlert` found; the message joins theirs."""

    def __init__(self, alerts: list[Any]):
        self.alerts = alerts
        super().__init__("; ".join(alert.message for alert in alerts))


class MissingExtraError(PaynbError, ImportError):
    """A part of paynb needs packages of an extra that is not installed. The message names
    the extra and the command that installs it (``pip install 'paynb[monitor]'``);
    ``extra`` is its name and ``missing`` the packages not found."""

    def __init__(self, message: str, *, extra: str, missing: list[str] | None = None):
        self.extra = extra
        self.missing = missing or []
        super().__init__(message)
