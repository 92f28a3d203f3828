"""The journal: the audit log of submissions and voids, the duplicate guard, and the
other records paynb keeps for its user (polling memory, NOC marks, guard overrides,
match decisions, what the morning run notified), in one SQLite file, or for a team in
one PostgreSQL database (``Journal("postgresql://user@host/database")``, docs/team.md).

Every submission, bulk and void is recorded *before* it is sent (state ``pending``)
and settled with the service's answer afterwards:

- ``sent``      the service accepted it (item id and status recorded);
- ``rejected``  the service refused it (400): nothing was stored, it may be sent again;
- ``failed``    it never left (an error before sending): it may be sent again;
- ``unknown``   it left but no answer came back: it may or may not be stored, so it
  blocks a second submission until :meth:`paynb.Client.reconcile` settles it;
- ``invalid``   the service answered with status ``I``: the item is stored but invalid
  and will not be processed (no money moves); it may be sent again, corrected;
- ``blocked``   the service answered with status ``B`` (state, routing or account
  restrictions): stored and locked, no money moves; it may be sent again.

A submission of a reference number that the same company already has in the journal
for the same kind, in any state but ``rejected``, ``failed``, ``invalid`` or ``blocked``,
is refused with
:class:`~paynb.errors.DuplicateSubmissionError` unless the caller allows it. The check
and the record are one transaction that holds a lock from the check on (SQLite's
``BEGIN IMMEDIATE``; on PostgreSQL an advisory lock per company and kind), so two
threads, processes or machines sharing the journal cannot both pass it; a unique
partial index guards the same rule.

Nothing secret is stored: summaries go through :func:`scrub` (passwords, secrets,
tokens and one-time passwords dropped, card numbers reduced to their last four digits,
account numbers masked). Only a payment held for a second person keeps, until it is
decided, what is needed to send it as prepared (accounts, a card's number; never a
one-time password, which its approver gives).

Every record says who made it (``by``: the journal's or the client's ``user``). Calls
that need a second person (dual control, :class:`DualControl`) are held as entries
``awaiting`` with an :class:`Approval` (``journal.approvals``) until another analyst
approves them (sent exactly as prepared), someone rejects them (``declined``) or they
expire (``expired``); neither of the last two is ever sent.

The package: :class:`Journal` (``_journal``: opening, the default journal) stands on the
entry ledger (``_ledger``: entries, the duplicate guard, approving); one module per other
table, each owning its statements (``_approvals``, ``_polling``, ``_nocs``, ``_overrides``,
``_decisions``, ``_monitor``), all on the one connection of ``_db`` (SQLite or
PostgreSQL, one schema, versioned and brought up to date on opening); ``_copy`` copies
one journal into another (:meth:`Journal.copy_from`); the dual-control policy is
``_dual_control``'s.
"""

from paynb.errors import JournalError
from paynb.journal._approvals import (
    APPROVAL_STATES,
    HONESTY,
    SUPPLIED_AT_APPROVAL,
    Approval,
    ApprovalQueue,
    Approvals,
)
from paynb.journal._common import KINDS, current_user
from paynb.journal._copy import JournalCopy
from paynb.journal._decisions import MATCH_ACTIONS, MatchDecisions
from paynb.journal._dual_control import DualControl
from paynb.journal._journal import SCHEMA_VERSION, Journal
from paynb.journal._ledger import (
    NOT_ACCEPTED,
    OPERATIONS,
    STALE_PENDING,
    STATES,
    SUBMISSIONS,
    VOIDS_BY_ID,
    scrub,
)
from paynb.journal._monitor import MonitorLedger, MonitorRun, Notified
from paynb.journal._nocs import NocMarks
from paynb.journal._overrides import GuardOverrides
from paynb.journal._polling import Polling

__all__ = ["APPROVAL_STATES", "HONESTY", "KINDS", "MATCH_ACTIONS", "NOT_ACCEPTED", "OPERATIONS",
           "SCHEMA_VERSION", "STALE_PENDING", "STATES", "SUBMISSIONS", "SUPPLIED_AT_APPROVAL",
           "VOIDS_BY_ID", "Approval", "ApprovalQueue", "Approvals", "DualControl",
           "GuardOverrides", "Journal", "JournalCopy", "JournalError", "MatchDecisions",
           "MonitorLedger", "MonitorRun", "NocMarks", "Notified", "Polling", "current_user",
           "scrub"]
