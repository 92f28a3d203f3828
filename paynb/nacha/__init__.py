"""The NACHA rules paynb applies, as pure functions over evidence: the NOC correction
ledger (NACHA 2.12.1) and the submission guards' verdicts (2.12.1, 2.12.4).

Nothing here talks to a service or holds a client: the records, the marks and the moment
are given. Below the resources in the layers, so that the resources, the guard service
(:mod:`paynb.guards`), the compliance reports and the monitor all read one copy.
The public faces are :func:`paynb.compliance.noc_obligations`,
:func:`paynb.compliance.check_entries` and ``client.nocs.obligations()``.

paynb helps monitor these rules; it is not legal advice.
"""

from __future__ import annotations

from paynb.nacha._evidence import (
    ACCOUNT_FIELDS,
    ENTRY_FIELDS,
    GUARD_FIELDS,
    NOC_FIELDS,
    NUMBER_KEY,
    Entry,
    account_key,
    applied_marks_of,
    as_of_time,
    entries_of,
    get,
    present,
    records_of,
)
from paynb.nacha._ledger import (
    DUE_SOON_DAYS,
    LEDGER_COLUMNS,
    NOC_CHANGES,
    NOC_DUE_DAYS,
    NOC_STATES,
    SETTLED_STATES,
    Correction,
    accounts_of,
    corrected_fields,
    joined_evidence,
    ledger,
    noc_accounts,
    parse_corrected_data,
)
from paynb.nacha._verdicts import (
    MAX_REINITIATIONS,
    NEW_AUTHORIZATION_CODES,
    NEW_AUTHORIZATION_OVERRIDES,
    REINITIATION_CODES,
    REINITIATION_DAYS,
    RETRY_DESCRIPTION,
    AccountHistory,
    Verdict,
    judge,
)

__all__ = ["ACCOUNT_FIELDS", "DUE_SOON_DAYS", "ENTRY_FIELDS", "GUARD_FIELDS", "LEDGER_COLUMNS",
           "MAX_REINITIATIONS", "NEW_AUTHORIZATION_CODES", "NEW_AUTHORIZATION_OVERRIDES",
           "NOC_CHANGES", "NOC_DUE_DAYS", "NOC_FIELDS", "NOC_STATES", "NUMBER_KEY",
           "REINITIATION_CODES", "REINITIATION_DAYS", "RETRY_DESCRIPTION", "SETTLED_STATES",
           "AccountHistory", "Correction", "Entry", "Verdict", "account_key", "accounts_of",
           "applied_marks_of", "as_of_time", "corrected_fields", "entries_of", "get",
           "joined_evidence", "judge", "ledger", "noc_accounts", "parse_corrected_data", "present",
           "records_of"]
