"""The journal: the audit log of submissions and voids, the duplicate guard, and the
other records paynb keeps for its user (polling memory, NOC marks, guard overrides,
match decisions, what the morning run notified), in one SQLite file, or for a team in
one PostgreSQL database (``Journal("postgresql://user@host/database")``, docs/team.md).

Every submission, bulk and void is recorded *before* it is sent (``pending``) and settled
with the service's answer; a live entry of a reference (any state but ``rejected``,
``failed``, ``invalid``, ``blocked``, ``declined``, ``expired``) refuses a second
submission of it with :class:`~paynb.errors.DuplicateSubmissionError`, the check and the
record one locked transaction. Summaries are stored scrubbed (:func:`scrub`). The states,
what is recorded and dual control (:class:`DualControl`, held entries ``awaiting`` an
:class:`Approval`) are in docs/journal.md and docs/team.md.

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
