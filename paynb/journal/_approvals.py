"""Dual control's queue: the payments that need a second person (the policy,
:class:`~paynb.journal.DualControl`, says which), held in the journal (their entries
``awaiting``, so their references stay claimed, with the request exactly as prepared)
until another analyst approves them, someone rejects them, or they expire.
:class:`ApprovalQueue` is the queue (``journal.approvals``), :class:`Approvals` a list
of it and :class:`Approval` one waiting payment; what it protects and what not is
:data:`HONESTY`.
"""

from __future__ import annotations

import builtins
import html
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from paynb._json import dumps
from paynb._redact import last_four, redact
from paynb.errors import ApprovalError
from paynb.journal._common import name, parse_stamp, stamp
from paynb.journal._db import Connection, Table

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["APPROVAL_STATES", "HONESTY", "SUPPLIED_AT_APPROVAL", "TABLES", "Approval",
           "ApprovalQueue", "Approvals"]

#: What an approval goes through: waiting, then approved (and sent), rejected or expired.
APPROVAL_STATES = ("awaiting", "approved", "rejected", "expired")

#: What dual control in paynb does not do, said wherever the queue is shown.
HONESTY = ("paynb holds these payments; the service does not enforce dual control: anyone "
           "holding its credentials can send without paynb. What paynb gives is a shared "
           "guard and the record of who prepared and who approved each payment.")

_HONESTY = f"<p class='paynb-approvals-honesty'><small>{html.escape(HONESTY)}</small></p>"

#: The key of a held item's summary that lists the arguments its approver must give
#: :meth:`paynb.Client.approve` (``["tot_password"]``: a one-time password is not kept).
SUPPLIED_AT_APPROVAL = "suppliedAtApproval"

#: The table of approvals, by the schema version that added it.
TABLES = {3: ("""
CREATE TABLE IF NOT EXISTS approvals (
    id          {ID},
    created     TEXT NOT NULL,
    expires     TEXT NOT NULL,
    company     TEXT NOT NULL,
    kind        TEXT NOT NULL,
    operation   TEXT NOT NULL,
    batch       INTEGER NOT NULL,
    prepared_by TEXT NOT NULL,
    why         TEXT NOT NULL,
    items       INTEGER NOT NULL,
    total       TEXT,
    summary     TEXT,
    request     TEXT,
    state       TEXT NOT NULL,
    decided_by  TEXT,
    decided_at  TEXT,
    reason      TEXT
)""", "CREATE INDEX IF NOT EXISTS approvals_state ON approvals (state, company)")}


def _ago(delta: timedelta) -> str:
    seconds = max(int(delta.total_seconds()), 0)
    if seconds < 90:
        return f"{seconds} s"
    if seconds < 90 * 60:
        return f"{seconds // 60} min"
    if seconds < 48 * 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    return f"{seconds // 86400} days"


@dataclass(frozen=True)
class Approval:
    """One payment (or bulk, or void) held for a second person.

    ``state`` is ``awaiting`` (until :meth:`paynb.Client.approve` by another person sends
    it exactly as prepared), ``approved``, ``rejected`` or ``expired`` (never sent).
    ``summary`` holds what was prepared without secrets (accounts masked), ``total`` the
    sum of its amounts, ``why`` the rule that asked for a second person.
    """

    id: int
    when: datetime
    expires: datetime
    company: str
    kind: str
    operation: str
    prepared_by: str
    why: str
    items: int
    total: Decimal | None
    summary: tuple[Mapping[str, Any], ...]
    state: str
    decided_by: str | None = None
    decided_at: datetime | None = None
    reason: str | None = None

    @property
    def age(self) -> timedelta:
        """How long it has been waiting (or waited)."""
        return (self.decided_at or datetime.now(UTC)) - self.when

    @property
    def references(self) -> list[str]:
        """The reference numbers (or item ids, for a void by id) it holds."""
        return [str(one.get("yourReferenceNumber", one.get("itemId", ""))) for one in self.summary]

    @property
    def approver_supplies(self) -> tuple[str, ...]:
        """The arguments its approver must give :meth:`paynb.Client.approve`: ``tot_password``
        for an instant card payment prepared with a one-time password (paynb does not keep
        it: one-time, and a secret); empty for the others."""
        return tuple(dict.fromkeys(argument for one in self.summary
                                   for argument in one.get(SUPPLIED_AT_APPROVAL) or ()))

    @property
    def accounts(self) -> list[str]:
        """The accounts it pays or debits, masked (``****6789``; cards by their last four)."""
        return list(dict.fromkeys(
            last_four("0000" + str(value)) if key == "cardLastFour" else str(value)
            for one in self.summary for key, value in one.items()
            if value and (key == "cardLastFour" or key.lower().endswith("accountnumber"))))

    def _what(self) -> str:
        noun = "item" if self.items == 1 else "items"
        total = f" of {self.total:,}" if self.total is not None else ""
        return f"{self.kind} {self.operation}{total} ({self.items} {noun})"

    def _status(self) -> str:
        if self.state == "awaiting":
            left = self.expires - datetime.now(UTC)
            return (f"awaiting approval by another analyst; expires in {_ago(left)}"
                    if left > timedelta(0) else "expired (not yet marked)")
        return self._decided() + (f": {self.reason}" if self.reason else "")

    def _decided(self) -> str:
        who = f" by {self.decided_by}" if self.decided_by else ""
        when = f" at {self.decided_at:%Y-%m-%d %H:%M:%S} UTC" if self.decided_at else ""
        return f"{self.state}{who}{when}"

    def __repr__(self) -> str:
        return (f"<paynb approval {self.id}, company {self.company}: {self._what()}, "
                f"prepared by {self.prepared_by} {_ago(self.age)} ago, {self._status()}. "
                f"Why: {self.why}. {HONESTY}>")

    def _repr_html_(self) -> str:
        return self.to_html()

    def to_html(self, *, note: bool = True) -> str:
        """The approval as an HTML table (what a notebook shows); ``note`` adds what dual
        control in paynb protects and what not (:data:`HONESTY`)."""
        rows = [("approval", str(self.id)), ("what", self._what()),
                ("references", ", ".join(self.references[:10])),
                ("accounts", ", ".join(self.accounts[:10])),
                ("prepared by", f"{self.prepared_by}, {_ago(self.age)} ago"),
                ("why", self.why), ("state", self._status())]
        if self.approver_supplies and self.state == "awaiting":
            rows.append(("approver gives", ", ".join(self.approver_supplies)))
        body = "".join(f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                       f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
                       for k, v in rows)
        return f"<div class='paynb-approval'><table>{body}</table>{_HONESTY if note else ''}</div>"


class Approvals(Sequence[Approval]):
    """A list of :class:`Approval` (what :meth:`paynb.Client.approvals` returns), shown as
    a table with who prepared each, what, totals, masked accounts and age, and what dual
    control in paynb protects and what not (:data:`HONESTY`)."""

    def __init__(self, approvals: Sequence[Approval]) -> None:
        self._approvals = list(approvals)

    def __len__(self) -> int:
        return len(self._approvals)

    def __getitem__(self, index: Any) -> Any:
        return self._approvals[index]

    def to_frame(self) -> pd.DataFrame:
        """One row per approval: ``id, when, age, company, kind, operation, items, total,
        accounts, references, prepared_by, why, state, expires, decided_by, decided_at,
        reason``."""
        import pandas as pd

        columns = ["id", "when", "age", "company", "kind", "operation", "items", "total",
                   "accounts", "references", "prepared_by", "why", "state", "expires",
                   "decided_by", "decided_at", "reason"]
        rows = [{**vars(a), "age": a.age, "accounts": ", ".join(a.accounts),
                 "references": ", ".join(a.references)} for a in self._approvals]
        frame = pd.DataFrame.from_records(rows, columns=columns)
        return frame.astype({"id": "Int64", "items": "Int64",
                             "when": "datetime64[ns, UTC]", "expires": "datetime64[ns, UTC]",
                             "decided_at": "datetime64[ns, UTC]",
                             "age": "timedelta64[ns]"})

    def __repr__(self) -> str:
        if not self._approvals:
            return f"<paynb approvals: none. {HONESTY}>"
        return "\n".join([f"<paynb approvals: {len(self)}", *(
            f"  {a.id}: {a._what()}, {', '.join(a.accounts[:3]) or 'no account'}, "
            f"prepared by {a.prepared_by} {_ago(a.age)} ago, {a._status()}"
            for a in self._approvals), f"{HONESTY}>"])

    def _repr_html_(self) -> str:
        frame = self.to_frame()[["id", "age", "kind", "operation", "items", "total",
                                 "accounts", "references", "prepared_by", "why", "state"]]
        frame["age"] = [_ago(a.age) for a in self._approvals]
        table = frame.to_html(index=False, escape=True, na_rep="", border=0,
                              classes="paynb-table")
        return f"<div class='paynb-approvals'>{table}{_HONESTY}</div>"


_COLUMNS = ("id", "created", "expires", "company", "kind", "operation", "prepared_by", "why",
            "items", "total", "summary", "state", "decided_by", "decided_at", "reason")
_SELECT = f"SELECT {', '.join(_COLUMNS)} FROM approvals"


def _row(conn: Connection, approval_id: int, extra: str) -> Any:
    """Approval ``approval_id``'s row with its column ``extra`` last (``None``: none)."""
    return conn.execute(f"SELECT {', '.join(_COLUMNS)}, {extra} FROM approvals WHERE id = ?",
                        (int(approval_id),)).fetchone()


def _approval(row: Sequence[Any]) -> Approval:
    values = dict(zip(_COLUMNS, row, strict=True))
    return Approval(
        id=int(values["id"]), when=parse_stamp(values["created"]),  # type: ignore[arg-type]
        expires=parse_stamp(values["expires"]),  # type: ignore[arg-type]
        company=values["company"], kind=values["kind"], operation=values["operation"],
        prepared_by=values["prepared_by"], why=values["why"], items=int(values["items"]),
        total=None if values["total"] is None else Decimal(values["total"]),
        summary=tuple(json.loads(values["summary"]) if values["summary"] else ()),
        state=values["state"], decided_by=values["decided_by"],
        decided_at=parse_stamp(values["decided_at"]), reason=values["reason"])


class ApprovalQueue(Table):
    """The payments held for a second person: ``journal.approvals``.

    Holding a payment (:meth:`paynb.journal.Journal.hold`) records its entries
    ``awaiting`` and its request here; :meth:`paynb.journal.Journal.approve` (by another
    person, through :meth:`waiting` and :meth:`decide`) and :meth:`reject` decide it;
    one whose time ran out is marked ``expired`` (with its entries) whenever the queue
    is read or a reference is reserved.
    """

    @staticmethod
    def insert(conn: Connection, *, company: str, kind: str, operation: str, batch: int,
               by: str, why: str, summaries: Sequence[Mapping[str, Any]],
               total: Decimal | None, request: Mapping[str, Any],
               expires_after: timedelta) -> int:
        """Record a held call (its entries ``batch`` are recorded ``awaiting``)."""
        now = datetime.now(UTC)
        (approval,) = conn.execute(
            "INSERT INTO approvals (created, expires, company, kind, operation, batch,"
            " prepared_by, why, items, total, summary, request, state) VALUES"
            " (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'awaiting') RETURNING id",
            (stamp(now), stamp(now + expires_after), company, kind, operation, batch,
             name(by, "by"), why, len(summaries), None if total is None else str(total),
             json.dumps(redact(list(summaries)), ensure_ascii=False), dumps(request)),
        ).fetchone()
        return int(approval)

    @staticmethod
    def expire(conn: Connection, company: str | None = None) -> int:
        """Mark every waiting approval whose time ran out ``expired``, and its entries
        (which free their references); returns how many."""
        now = stamp()
        where = " AND company = ?" if company is not None else ""
        params: tuple[Any, ...] = (now, *((company,) if company is not None else ()))
        batches = [row[0] for row in conn.execute(
            f"SELECT batch FROM approvals WHERE state = 'awaiting' AND expires <= ?{where}",
            params).fetchall()]
        if not batches:
            return 0
        conn.execute("UPDATE approvals SET state = 'expired', decided_at = expires,"
                     f" request = NULL WHERE state = 'awaiting' AND expires <= ?{where}",
                     params)
        conn.executemany("UPDATE entries SET state = 'expired', updated = ?,"
                         " detail = 'not sent: its approval expired'"
                         " WHERE batch = ? AND state = 'awaiting'",
                         [(now, batch) for batch in batches])
        return len(batches)

    def get(self, approval_id: int) -> Approval:
        """One approval by its id; ``KeyError`` when there is none."""
        return self._read(approval_id, "batch", KeyError)[0]

    def _read(self, approval_id: int, extra: str,
              missing: type[Exception] = ApprovalError) -> tuple[Approval, Any]:
        """An approval and its column ``extra``, those whose time ran out marked first;
        ``missing`` when there is none."""
        with self._db.write() as conn:
            self.expire(conn)
            row = _row(conn, approval_id, extra)
        if row is None:
            raise missing(f"no approval {approval_id} in the journal")
        return _approval(row[:-1]), row[-1]

    def list(self, company: str | None = None,
             state: str | Sequence[str] | None = "awaiting") -> Approvals:
        """The approvals of ``company`` (all companies when ``None``) in ``state`` (one
        or several of :data:`APPROVAL_STATES`; ``None``: every state), oldest first.
        Those whose time ran out are marked ``expired`` first."""
        states = [state] if isinstance(state, str) else list(state or APPROVAL_STATES)
        for one in states:
            name(one, "state", APPROVAL_STATES)
        clauses = [f"state IN ({', '.join('?' * len(states))})"]
        params: list[Any] = list(states)
        if company is not None:
            clauses.append("company = ?")
            params.append(name(company, "company"))
        with self._db.write() as conn:
            self.expire(conn, company)
            rows = conn.execute(f"{_SELECT} WHERE {' AND '.join(clauses)} ORDER BY id",
                                params).fetchall()
        return Approvals([_approval(row) for row in rows])

    @staticmethod
    def refusal(found: Approval, *, company: str, by: str | None = None
                ) -> ApprovalError | None:
        """Why ``found`` cannot be decided now for ``company`` (and approved by ``by``,
        when given), or ``None``."""
        if found.company != company:
            return ApprovalError(f"approval {found.id} is company {found.company}'s, not "
                                 f"{company}'s: decide it with a client of that company",
                                 approval=found)
        if found.state != "awaiting":
            return ApprovalError(f"approval {found.id} was {found._decided()}: it is no longer "
                                 "waiting. Nothing was sent.", approval=found)
        # One person by any case or blanks of the name.
        if by is not None and found.prepared_by.strip().casefold() == by.strip().casefold():
            return ApprovalError(
                f"approval {found.id} was prepared by {found.prepared_by}: another analyst "
                "must approve it (dual control). Nothing was sent.", approval=found)
        return None

    def peek(self, approval_id: int) -> tuple[Approval, dict[str, Any] | None]:
        """An approval and its request as prepared (``None`` once decided), without
        deciding anything: what an approver checks before
        :meth:`paynb.journal.Journal.approve`."""
        found, request = self._read(approval_id, "request")
        return found, None if request is None else json.loads(request, parse_float=Decimal)

    def waiting(self, conn: Connection, approval_id: int, *, company: str,
                by: str | None = None) -> tuple[Approval, int]:
        """Inside a write transaction: approval ``approval_id``, which must be waiting,
        of ``company`` (and, when ``by`` approves, prepared by someone else), and the
        batch of its entries."""
        self.expire(conn, company)
        row = _row(conn, approval_id, "batch")
        if row is None:
            raise ApprovalError(f"no approval {approval_id} in the journal")
        found = _approval(row[:-1])
        refusal = self.refusal(found, company=company, by=by)
        if refusal is not None:
            raise refusal
        return found, int(row[-1])

    @staticmethod
    def decide(conn: Connection, found: Approval, batch: int, *, state: str, by: str,
               entries: str, detail: str, reason: str | None = None
               ) -> tuple[Approval, str | None, builtins.list[int]]:
        """Inside the write transaction that found it :meth:`waiting`: mark ``found``
        ``state`` by ``by`` (with ``reason``), its entries (the ``batch``) ``entries``
        with ``detail``, and erase its stored request; refused when someone else decided
        it meanwhile. Returns the decided approval, the request as it was stored and the
        entry ids, in order."""
        now = stamp()
        done = conn.execute("UPDATE approvals SET state = ?, decided_by = ?, decided_at = ?,"
                            " reason = ? WHERE id = ? AND state = 'awaiting'",
                            (state, by, now, reason, found.id))
        if done.rowcount != 1:  # another was first (PostgreSQL: after our read)
            raise ApprovalError(f"approval {found.id} was decided by someone else just "
                                "now. Nothing was sent.", approval=found)
        (request,) = conn.execute("SELECT request FROM approvals WHERE id = ?",
                                  (found.id,)).fetchone()
        conn.execute("UPDATE approvals SET request = NULL WHERE id = ?", (found.id,))
        ids = [row[0] for row in conn.execute(
            "SELECT id FROM entries WHERE batch = ? AND state = 'awaiting' ORDER BY id",
            (batch,)).fetchall()]
        conn.execute("UPDATE entries SET state = ?, updated = ?, detail = ?"
                     " WHERE batch = ? AND state = 'awaiting'", (entries, now, detail, batch))
        return (replace(found, state=state, decided_by=by, decided_at=parse_stamp(now),
                        reason=reason), request, ids)

    def reject(self, approval_id: int, *, by: str, company: str, reason: str) -> Approval:
        """Reject ``approval_id`` (anyone may, the preparer too): never sent; its entries
        become ``declined``, which frees their references."""
        by = name(by, "by")
        reason = name(reason, "reason")
        with self._db.write() as conn:
            found, batch = self.waiting(conn, approval_id, company=company)
            rejected, _, _ = self.decide(conn, found, batch, state="rejected", by=by,
                                         reason=reason, entries="declined",
                                         detail=f"not sent: rejected by {by}: {reason}")
        return rejected
