"""The journal's entry ledger: every submission, bulk row and void, recorded before it
is sent (``pending``, or ``awaiting`` a second person) and settled with its answer; the
duplicate guard; approving a held call; reading the entries. :class:`Ledger` is the base
of the :class:`~paynb.journal.Journal` façade, which gives it its connection."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from paynb._redact import mask_card_numbers, redact
from paynb.errors import DuplicateSubmissionError
from paynb.journal._approvals import Approval, ApprovalQueue
from paynb.journal._common import KINDS, chunks, name, parse_stamp, placeholders, scalar, stamp
from paynb.journal._db import Connection, Database, entries_lock

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COLUMNS", "LIVE", "NOT_ACCEPTED", "OPERATIONS", "STALE_PENDING", "STATES",
           "SUBMISSIONS", "TABLES", "VOIDS_BY_ID", "Ledger", "scrub"]


logger = logging.getLogger("paynb.journal")

#: Operations the journal records; those in :data:`SUBMISSIONS` are guarded against duplicates.
OPERATIONS = ("submit", "submit_many", "send", "void", "void_many", "void_references")
SUBMISSIONS = frozenset({"submit", "submit_many", "send"})
#: Entry states, in the order an entry usually goes through them. ``awaiting``: held for a
#: second person (dual control), not sent; it ends ``pending`` (approved, about to be
#: sent), ``declined`` (rejected) or ``expired`` (never approved in time).
STATES = ("awaiting", "pending", "sent", "rejected", "unknown", "failed", "invalid",
          "blocked", "declined", "expired")
# States after which the same reference may be submitted again: nothing was stored, or
# what was stored will never move money (answered I or B), or it was never sent.
_RETRYABLE = ("rejected", "failed", "invalid", "blocked", "declined", "expired")
#: States of a submission that claims its reference (the duplicate guard's).
LIVE = ("awaiting", "pending", "sent", "unknown")
#: The state of a submission the service stored with item status ``I`` or ``B`` (it will
#: never be processed), by that status: what a submission's answer and reconcile record.
NOT_ACCEPTED = {"I": "invalid", "B": "blocked"}
#: Voids recorded by item id (their reference is the id); the others go by reference number.
VOIDS_BY_ID = frozenset({"void", "void_many"})

#: A copy of a value that is safe to store (:func:`paynb._redact.redact`: the one rule
#: for what a secret looks like, shared with the transport, errors and results).
scrub = redact

#: The entries table, by the schema version that added it.
TABLES = {1: ("""
CREATE TABLE IF NOT EXISTS entries (
    id              {ID},
    batch           INTEGER,
    created         TEXT NOT NULL,
    updated         TEXT NOT NULL,
    company         TEXT NOT NULL,
    kind            TEXT NOT NULL,
    operation       TEXT NOT NULL,
    reference       TEXT,
    state           TEXT NOT NULL,
    item_id         {ANY},
    item_status     TEXT,
    detail          TEXT,
    summary         TEXT,
    allow_duplicate INTEGER NOT NULL DEFAULT 0,
    guard           INTEGER NOT NULL DEFAULT 0
)""", "CREATE INDEX IF NOT EXISTS entries_reference ON entries (company, kind, reference)",
    "CREATE INDEX IF NOT EXISTS entries_state ON entries (state, company)",
    # The duplicate guard as a rule of the database: one live guarded submission of a
    # reference per company and kind (the live states of version 1; 3 adds 'awaiting').
    "CREATE UNIQUE INDEX IF NOT EXISTS entries_guard ON entries (company, kind, reference)"
    " WHERE guard = 1 AND state IN ('pending', 'sent', 'unknown')"),
    # 3: who made each entry, and entries held for a second person are live too.
    3: ("ALTER TABLE entries ADD COLUMN by TEXT",
        "DROP INDEX IF EXISTS entries_guard",
        "CREATE UNIQUE INDEX IF NOT EXISTS entries_guard ON entries (company, kind, reference)"
        f" WHERE guard = 1 AND state IN {LIVE!r}")}


#: The columns of an entry as read (a copy adds ``guard``).
COLUMNS = ("id", "batch", "created", "by", "updated", "company", "kind", "operation",
           "reference", "state", "item_id", "item_status", "detail", "summary",
           "allow_duplicate")
_SELECT = f"SELECT {', '.join(COLUMNS)} FROM entries"


def _entry(row: Sequence[Any]) -> dict[str, Any]:
    entry = dict(zip(COLUMNS, row, strict=True))
    item = entry["item_id"]
    # A PostgreSQL column holds one type: ids are kept as text there and a whole number
    # comes back as the int SQLite keeps.
    if isinstance(item, str) and item.isdigit() and str(int(item)) == item:
        entry["item_id"] = int(item)
    entry["when"] = parse_stamp(entry.pop("created"))
    entry["updated"] = parse_stamp(entry["updated"])
    entry["summary"] = json.loads(entry["summary"]) if entry["summary"] else None
    entry["allow_duplicate"] = bool(entry["allow_duplicate"])
    return {"id": entry.pop("id"), "when": entry.pop("when"), **entry}


#: Seconds after which an entry still ``pending`` is taken for one whose process stopped
#: between recording it and its answer, and :meth:`Journal.unknown_entries` hands it to
#: ``reconcile()``: sooner, another process may still be sending it.
STALE_PENDING = 600.0


class Ledger:
    """The entries of a journal and the duplicate guard: the base of
    :class:`~paynb.journal.Journal`, which gives it the connection, who writes
    (:attr:`user`) and the queue of held calls (:attr:`approvals`)."""

    _db: Database
    user: str
    approvals: ApprovalQueue

    def reserve(self, company: str, kind: str, operation: str,
                references: Iterable[str | int | None], *, allow_duplicate: bool = False,
                summary: Mapping[str, Any] | Sequence[Mapping[str, Any] | None] | None = None,
                by: str | None = None) -> list[int]:
        """Record one ``pending`` entry per reference, before anything is sent; returns
        the entry ids, in the order of ``references``.

        ``references`` are the ``yourReferenceNumber`` values of a submission (``submit``,
        ``submit_many``, ``send``), or the item ids (``void``, ``void_many``) or reference
        numbers (``void_references``) of a void. ``summary`` is one mapping for every
        entry, or one mapping (or ``None``) per reference, stored scrubbed (:func:`scrub`).
        ``by`` is who acts (default: :attr:`user`). A submission of a reference with a live
        entry (:data:`LIVE`) for this company and kind, or given twice, is refused with
        :class:`~paynb.errors.DuplicateSubmissionError` (``previous``: the earlier entry),
        nothing recorded, unless ``allow_duplicate``; voids are never refused.
        """
        ids, _ = self._record(company, kind, operation, references, state="pending",
                              allow_duplicate=allow_duplicate, summary=summary, by=by)
        return ids

    def hold(self, company: str, kind: str, operation: str,
             references: Iterable[str | int | None], *, why: str,
             summary: Sequence[Mapping[str, Any]], request: Mapping[str, Any],
             expires_after: timedelta, total: Decimal | None = None,
             allow_duplicate: bool = False, by: str | None = None) -> Approval:
        """Hold a call that needs a second person (dual control): nothing is sent. Its
        entries are recorded ``awaiting``, claiming their references as :meth:`reserve`
        would, and the approval with ``request`` (what :meth:`paynb.Client.approve` sends
        as prepared; erased once decided), ``why`` (the rule that asked for a second
        person), ``summary`` (one mapping per reference) and ``total``, in one
        transaction. Returns the :class:`~paynb.journal.Approval`."""
        if isinstance(summary, Mapping):
            raise TypeError("summary holds one mapping per reference")
        _, approval = self._record(
            company, kind, operation, references, state="awaiting",
            allow_duplicate=allow_duplicate, summary=list(summary), by=by,
            approval={"why": name(why, "why"), "summaries": list(summary),
                      "request": request, "expires_after": expires_after, "total": total})
        assert approval is not None
        return self.approvals.get(approval)

    def _record(self, company: str, kind: str, operation: str,
                references: Iterable[str | int | None], *, state: str,
                allow_duplicate: bool, summary: Any, by: str | None,
                approval: Mapping[str, Any] | None = None) -> tuple[list[int], int | None]:
        """:meth:`reserve` and :meth:`hold` (with the ``approval``): entry ids, approval id."""
        company = name(company, "company")
        kind = name(kind, "kind", KINDS)
        operation = name(operation, "operation", OPERATIONS)
        who = name(by, "by") if by is not None else self.user
        if isinstance(references, str | bytes):
            raise TypeError("references must be a list of reference numbers, not one string")
        given = list(references)
        refs = [None if ref is None else str(ref) for ref in given]
        summaries = _per_entry(summary, len(refs))
        if not refs:
            if approval is not None:
                raise ValueError("references: a held call holds at least one")
            return [], None
        guarded = operation in SUBMISSIONS and not allow_duplicate
        if guarded:
            _refuse_repeats(company, kind, refs)
        now = stamp()
        repeated: dict[str, dict[str, Any]] = {}
        held: int | None = None
        try:
            with self._db.write() as conn:
                # SQLite: the file's write lock already; PostgreSQL: an advisory lock.
                conn.lock(entries_lock(company, kind))
                # Held entries whose approval ran out free their references first.
                ApprovalQueue.expire(conn, company)
                if operation in SUBMISSIONS:
                    repeated = self._guard(conn, company, kind, refs,
                                           allow_duplicate=allow_duplicate)
                ids: list[int] = []
                for ref, original, one_summary in zip(refs, given, summaries, strict=True):
                    (entry_id,) = conn.execute(
                        "INSERT INTO entries (batch, created, by, updated, company, kind,"
                        " operation, reference, state, item_id, summary, allow_duplicate,"
                        " guard) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
                        (ids[0] if ids else None, now, who, now, company, kind, operation, ref,
                         state, self._db.item_id(scalar(original))
                         if operation in VOIDS_BY_ID else None,
                         one_summary, int(allow_duplicate), int(guarded and ref is not None)),
                    ).fetchone()
                    ids.append(int(entry_id))
                conn.execute("UPDATE entries SET batch = id WHERE id = ?", (ids[0],))
                if approval is not None:
                    held = ApprovalQueue.insert(
                        conn, company=company, kind=kind, operation=operation, batch=ids[0],
                        by=who, **approval)
        except self._db.IntegrityError:
            # Only the unique guard index can fail here, and the check above should have
            # caught it: say what is there (the transaction is rolled back: nothing kept).
            with self._db.reading() as conn:
                self._guard(conn, company, kind, refs, allow_duplicate=False)
            raise
        if repeated:
            logger.warning("journal: %d %s reference(s) of %s submitted again with "
                           "allow_duplicate=True (first: %s)", len(repeated), kind, company,
                           next(ref for ref in refs if ref in repeated))
        logger.debug("journal: %s %d %s %s entries for %s (batch %d)",
                     "reserved" if held is None else f"held (approval {held})", len(ids),
                     kind, operation, company, ids[0])
        return ids, held

    def _blocking(self, conn: Connection, company: str, kind: str,
                  refs: Sequence[str | None], *, besides: int | None = None
                  ) -> dict[str, dict[str, Any]]:
        """The latest blocking submission entry of each of ``refs`` that has one (not
        counting the entries of batch ``besides``: a held call's own)."""
        wanted = sorted({ref for ref in refs if ref is not None})
        found: dict[str, dict[str, Any]] = {}
        other = "" if besides is None else " AND batch != ?"
        for chunk in chunks(wanted):
            rows = conn.execute(
                f"{_SELECT} WHERE company = ? AND kind = ? AND reference IN"
                f" ({placeholders(len(chunk))}) AND operation IN"
                f" ({placeholders(len(SUBMISSIONS))}) AND state NOT IN"
                f" ({placeholders(len(_RETRYABLE))}){other} ORDER BY id",
                (company, kind, *chunk, *sorted(SUBMISSIONS), *_RETRYABLE,
                 *(() if besides is None else (besides,))),
            ).fetchall()
            for row in rows:
                entry = _entry(row)
                found[entry["reference"]] = entry
        return found

    def _guard(self, conn: Connection, company: str, kind: str, refs: Sequence[str | None],
               *, allow_duplicate: bool, besides: int | None = None
               ) -> dict[str, dict[str, Any]]:
        """The duplicate guard: raises :class:`~paynb.errors.DuplicateSubmissionError`
        when one of ``refs`` is blocked (:meth:`_blocking`) unless ``allow_duplicate``;
        returns what blocks them (the repeats ``allow_duplicate`` lets through)."""
        found = self._blocking(conn, company, kind, refs, besides=besides)
        if not found or allow_duplicate:
            return found
        first = next(ref for ref in refs if ref in found)
        previous = found[first]
        others = len(found) - 1
        more = f" (and {others} more of these references)" if others else ""
        item = f", item {previous['item_id']}" if previous["item_id"] is not None else ""
        who = f" by {previous['by']}" if previous["by"] else ""
        state = ("awaiting approval by another analyst" if previous["state"] == "awaiting"
                 else previous["state"])
        raise DuplicateSubmissionError(
            f"{kind} reference {first!r} of company {company} is already in the journal: "
            f"{previous['operation']}{who} at {previous['when']:%Y-%m-%d %H:%M:%S} UTC, "
            f"{state}{item}{more}. Nothing was sent; pass allow_duplicate=True "
            "to send it again.",
            reference_number=first, previous=previous)

    def approve(self, approval_id: int, *, by: str, company: str,
                allow_duplicate: bool = False) -> tuple[Approval, dict[str, Any], list[int]]:
        """Approve ``approval_id`` as ``by``, in one transaction: refused unless it waits,
        is of ``company`` and was prepared by someone else (:meth:`ApprovalQueue.refusal`);
        a reference someone else submitted meanwhile (with ``allow_duplicate=True``, which
        the held claim does not stop) refuses it with
        :class:`~paynb.errors.DuplicateSubmissionError`, leaving it waiting, unless
        ``allow_duplicate`` (or it was prepared with it). Marks it ``approved``, its
        entries ``pending`` and erases the stored request. Returns the approval, its
        request as prepared and its entry ids, in order."""
        by = name(by, "by")
        with self._db.write() as conn:
            found, batch = self.approvals.waiting(conn, approval_id, company=company, by=by)
            said = None
            if found.operation in SUBMISSIONS:
                conn.lock(entries_lock(found.company, found.kind))
                guarded = [row[0] for row in conn.execute(
                    "SELECT reference FROM entries WHERE batch = ? AND guard = 1 ORDER BY id",
                    (batch,)).fetchall()]
                repeated = self._guard(conn, found.company, found.kind, guarded,
                                       allow_duplicate=allow_duplicate, besides=batch)
                if repeated:
                    logger.warning("journal: approval %d sends %d %s reference(s) of %s "
                                   "again with allow_duplicate=True (first: %s)", found.id,
                                   len(repeated), found.kind, found.company,
                                   next(iter(repeated)))
                    said = "allow_duplicate=True"
            approved, request, ids = self.approvals.decide(
                conn, found, batch, state="approved", by=by, entries="pending",
                detail=f"approved by {by} (approval {found.id}){f', {said}' if said else ''}")
        assert request is not None  # kept until decided, and it was waiting
        return approved, json.loads(request, parse_float=Decimal), ids

    def duplicates(self, company: str, kind: str,
                   references: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Which of ``references`` :meth:`reserve` would refuse, each with the earlier entry
        (to show or drop the repeats of a bulk before submitting it)."""
        company = name(company, "company")
        kind = name(kind, "kind", KINDS)
        with self._db.reading() as conn:
            return self._blocking(conn, company, kind, [str(ref) for ref in references])

    def previous(self, company: str, kind: str, reference: str) -> dict[str, Any] | None:
        """The entry that blocks a new submission of ``reference``, or ``None``."""
        return self.duplicates(company, kind, [reference]).get(str(reference))

    def settle(self, entry_id: int, state: str, *, item_id: str | int | None = None,
               item_status: str | None = None, detail: str | None = None) -> None:
        """Record the outcome of entry ``entry_id``: its new ``state`` and, when known, the
        service's item id and status and a short ``detail`` (an error message, never a
        secret). Values left ``None`` keep what the entry had."""
        self.settle_many([(entry_id, state, item_id, item_status, detail)])

    def settle_many(self, outcomes: Iterable[Sequence[Any]]) -> None:
        """Settle many entries in one transaction: ``outcomes`` holds tuples
        ``(entry_id, state[, item_id[, item_status[, detail]]])`` as for :meth:`settle`.
        Raises ``KeyError`` (and changes nothing) when an entry id is not in the journal."""
        now = stamp()
        rows = []
        for outcome in outcomes:
            if not 2 <= len(outcome) <= 5:
                raise ValueError("each outcome is (entry_id, state[, item_id[, item_status"
                                 "[, detail]]])")
            entry_id, state, item_id, item_status, detail = (*outcome, None, None, None)[:5]
            name(state, "state", STATES)
            rows.append((state, now, self._db.item_id(scalar(item_id)),
                         None if item_status is None else str(item_status),
                         None if detail is None else mask_card_numbers(str(detail)),
                         state in LIVE, int(entry_id)))
        if not rows:
            return
        with self._db.write() as conn:
            cursor = conn.executemany(
                "UPDATE entries SET state = ?, updated = ?,"
                " item_id = COALESCE(?, item_id),"
                " item_status = COALESCE(?, item_status),"
                " detail = COALESCE(?, detail),"
                # An entry coming back to life beside another live submission of the same
                # reference (say a 'failed' one found sent after all) is a duplicate that
                # happened: record it, and let it leave the unique guard.
                " guard = CASE WHEN ? AND guard = 1 AND EXISTS (SELECT 1 FROM entries o"
                "   WHERE o.company = entries.company AND o.kind = entries.kind"
                "   AND o.reference = entries.reference AND o.guard = 1"
                f"  AND o.state IN {LIVE!r} AND o.id != entries.id) THEN 0 ELSE guard END"
                " WHERE id = ?",
                rows,
            )
            if cursor.rowcount != len(rows):
                ids = sorted({row[-1] for row in rows})
                known = {found for chunk in chunks(ids) for (found,) in conn.execute(
                    f"SELECT id FROM entries WHERE id IN ({placeholders(len(chunk))})",
                    chunk).fetchall()}
                missing = [entry_id for entry_id in ids if entry_id not in known]
                if missing:
                    raise KeyError(f"no journal entry {missing[0]}"
                                   + (f" (and {len(missing) - 1} more)" if len(missing) > 1
                                      else ""))
        logger.debug("journal: settled %d entries", len(rows))

    def entries(self, company: str | None = None, kind: str | None = None,
                state: str | Iterable[str] | None = None, *, operation: str | None = None,
                reference: str | None = None) -> list[dict[str, Any]]:
        """Entries, oldest first, filtered by company, kind, state (one or several),
        operation and reference. Each is a dict: ``id, when`` (UTC datetime of the
        reservation), ``batch`` (id of the first entry of the same call), ``by`` (who
        made it; ``None`` for entries made before schema 3), ``updated, company, kind,
        operation, reference, state, item_id, item_status, detail, summary,
        allow_duplicate``."""
        clauses: list[str] = []
        params: list[Any] = []
        for column, value, choices in (("company", company, None), ("kind", kind, KINDS),
                                       ("operation", operation, OPERATIONS),
                                       ("reference", reference, None)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(name(value, column, choices) if column != "reference"
                              else str(value))
        if state is not None:
            states = [state] if isinstance(state, str) else list(state)
            clauses.append(f"state IN ({placeholders(len(states))})")
            params.extend(name(one, "state", STATES) for one in states)
        where = f" WHERE {' AND '.join(clauses)}" if clauses else ""
        return [_entry(row) for row in self._db.read(f"{_SELECT}{where} ORDER BY id", params)]

    def unknown_entries(self, company: str | None = None, *,
                        stale_after: float | None = STALE_PENDING) -> list[dict[str, Any]]:
        """Entries whose outcome is not known, oldest first: state ``unknown``, and
        ``pending`` entries older than ``stale_after`` seconds (their process stopped
        between recording and answer; ``None`` leaves pending entries out). These are what
        :meth:`paynb.Client.reconcile` looks up in the service."""
        found = self.entries(company, state=("unknown", "pending"))
        now = datetime.now(UTC)
        return [entry for entry in found if entry["state"] == "unknown"
                or (stale_after is not None
                    and (now - entry["when"]).total_seconds() > stale_after)]

    def frame(self, company: str | None = None, kind: str | None = None,
              state: str | Iterable[str] | None = None, *, operation: str | None = None,
              reference: str | None = None) -> pd.DataFrame:
        """:meth:`entries` as a typed DataFrame: ``when``/``updated`` UTC timestamps,
        ``state`` categorical in :data:`STATES` order, ids nullable integers, the same
        columns when empty."""
        import pandas as pd

        found = self.entries(company, kind, state, operation=operation, reference=reference)
        types = {"id": "Int64", "when": "datetime64[ns, UTC]", "by": "string", "batch": "Int64",
                 "updated": "datetime64[ns, UTC]", "company": "string",
                 "kind": pd.CategoricalDtype(KINDS), "operation": pd.CategoricalDtype(OPERATIONS),
                 "reference": "string", "state": pd.CategoricalDtype(STATES),
                 "item_id": "string", "item_status": "string", "detail": "string",
                 "summary": "object", "allow_duplicate": "bool"}
        return pd.DataFrame.from_records(found, columns=list(types)).astype(types)


def _refuse_repeats(company: str, kind: str, refs: Sequence[str | None]) -> None:
    seen: set[str | None] = set()
    for ref in refs:
        if ref is not None and ref in seen:
            raise DuplicateSubmissionError(
                f"{kind} reference {ref!r} of company {company} appears more than once in this "
                "submission. Nothing was sent; pass allow_duplicate=True to send it anyway.",
                reference_number=ref)
        seen.add(ref)


def _per_entry(summary: Mapping[str, Any] | Sequence[Mapping[str, Any] | None] | None,
               count: int) -> list[str | None]:
    """The scrubbed JSON summary of each entry."""
    if summary is None or isinstance(summary, Mapping) or hasattr(summary, "to_wire"):
        text = None if summary is None else json.dumps(scrub(summary), ensure_ascii=False)
        return [text] * count
    summaries = list(summary)
    if len(summaries) != count:
        raise ValueError(f"summary has {len(summaries)} entries for {count} references")
    return [None if one is None else json.dumps(scrub(one), ensure_ascii=False)
            for one in summaries]
