"""What a resource namespace is given to work with: :class:`ResourceContext`.

The client builds one context and hands it to each of its namespaces (``client.ach``,
``.rcc``, ``.instant``, ``.rtp``, ``.nocs``). A resource reads the service through
``context.transport``, records in ``context.journal`` (or none), keeps its polling
watermarks through the context, and takes its options (company, page size, workers,
masking) from it: it never reaches into the client object.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from paynb.errors import PaynbError
from paynb.journal import DualControl, Journal, current_user
from paynb.transport import Transport

__all__ = ["ResourceContext"]


@dataclass(frozen=True, eq=False)
class ResourceContext:
    """The narrow view of a client that its resources work with.

    Args:
        transport: the HTTP transport (token, retries of reads, answers decoded).
        company_code: the company every call acts for.
        journal: the journal, or ``None`` (``Client(journal=None)``): nothing recorded.
        page_size: records per page of a list.
        max_workers: pages fetched at the same time.
        mask: account numbers shown as ``****6789`` in frames.
        user: who acts, recorded with every journal entry (default: the OS user).
        dual_control: which calls need a second person (``None``: none), held in the
            journal until another analyst approves them.
    """

    transport: Transport
    company_code: str
    journal: Journal | None = None
    page_size: int = 200
    max_workers: int = 8
    mask: bool = True
    user: str = field(default_factory=current_user)
    dual_control: DualControl | None = None
    # Polling state kept here when there is no journal to keep it (mutated, never rebound).
    _marks: dict[str, dt.datetime] = field(default_factory=dict, init=False, repr=False)
    _seen: dict[str, set[Any]] = field(default_factory=dict, init=False, repr=False)

    def require_journal(self) -> Journal:
        """The journal; :class:`~paynb.errors.PaynbError` when the client has none."""
        if self.journal is None:
            raise PaynbError("this client was made with journal=None: nothing is recorded")
        return self.journal

    # ------------------------------------------------------------------ polling state

    def watermark(self, kind: str) -> dt.datetime | None:
        """The newest change ``changes()`` reported for ``kind`` (None before the first)."""
        if self.journal is None:
            return self._marks.get(kind)
        return self.journal.polling.watermark(self.company_code, kind)

    def set_watermark(self, kind: str, when: dt.datetime) -> None:
        """Remember ``when`` as the watermark of ``kind``."""
        if self.journal is None:
            self._marks[kind] = when
        else:
            self.journal.polling.set_watermark(self.company_code, kind, when)

    def seen_changes(self, kind: str, keys: list[Any]) -> set[Any]:
        """Those of ``keys`` (id, status, date) already reported for ``kind``."""
        if self.journal is None:
            return {key for key in keys if key in self._seen.get(kind, set())}
        return self.journal.polling.seen_changes(self.company_code, kind, keys)

    def mark_seen(self, kind: str, keys: list[Any]) -> None:
        """Remember ``keys`` as reported for ``kind``."""
        if self.journal is None:
            self._seen.setdefault(kind, set()).update(keys)
        elif keys:
            self.journal.polling.mark_seen(self.company_code, kind, keys)
