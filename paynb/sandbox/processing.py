"""The sandbox's business rules: what happens to an item after it is submitted.

Transitions, the void rule, bulk semantics, the processing schedule and the generation
of returns and NOCs, with every number in one :class:`Config`; the store (HTTP
submissions) and :mod:`paynb.sandbox.seed` (the demo data) store what they decide. The
life of an item and the NACHA Operating Rules it follows (return time frames: Article
Three, Subsection 3.8.3.1 and 3.13) are in docs/sandbox.md, "Statuses and business
processing". Every function works on numpy arrays (one element for an HTTP submission,
a million for the demo data), so both paths follow the same rules; :func:`apply_due`
applies what is due by the sandbox clock in SQL, :func:`next_due` says when next.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from paynb.calendar import BUSDAY_CALENDAR
from paynb.codes import (
    EXTENDED_RETURN_CODES,
    EXTENDED_RETURN_DAYS,
    NOC_CODE_TABLE,
    NOC_CODES,
    RETURN_CODE_TABLE,
    RETURN_CODES,
    UNAUTHORIZED_RETURN_CODES,
)
from paynb.sandbox.tables import KINDS, RETURN_ITEM_BASE, sql_list, yyyymmdd

__all__ = ["BLOCKED_MESSAGE", "DAY_MS", "DEBIT_ONLY_RETURN_CODES", "HOUR_MS", "NEVER",
           "RESTRICTED_MESSAGE", "TRANSITIONS", "Config", "Fates", "Schedule", "ach_fates",
           "apply_due", "bulk_stores_anything", "noc_corrected_data", "next_due", "noc_events",
           "rcc_fates", "schedule", "voidable"]

HOUR_MS = 3_600_000
DAY_MS = 24 * HOUR_MS

RESTRICTED_MESSAGE = "State is restricted for this company"
BLOCKED_MESSAGE = "Account is blocked"


@dataclass(frozen=True)
class Config:
    """Every number of the sandbox's business rules (docs/sandbox.md shows them)."""

    #: Business processing (state and account checks) runs this long after receipt.
    processing_delay_ms: int = HOUR_MS
    #: The daily ACH and RCC cut-off, UTC (about 4 pm New York): items received before
    #: a banking day are sent at that day's cut-off.
    cutoff_ms: int = 21 * HOUR_MS
    #: The settlement report is written this long after the cut-off.
    report_delay_ms: int = 30 * 60_000
    #: Returns and NOCs arrive between this hour and 6 hours later (UTC) on banking days.
    event_hour_ms: int = 13 * HOUR_MS
    #: Items for these state codes pass validation but are invalidated (I): territories
    #: and military codes the demo companies do not serve (PR and DC are served).
    restricted_states: frozenset[str] = frozenset({"AS", "GU", "MP", "VI", "AA", "AE", "AP"})
    #: Account numbers starting with this prefix are blocked (B).
    blocked_account_prefix: str = "999"
    #: Share of ACH items returned, by kind of item.
    ach_return_rates: Mapping[str, float] = field(default_factory=lambda: {
        "Debit": 0.045, "Credit": 0.01, "Prenote": 0.02})
    #: Share of RCC items returned after they were deposited.
    rcc_return_rate: float = 0.10
    #: Share of ACH items (not invalidated, blocked or voided) that draw a NOC.
    noc_rate: float = 0.006
    #: How return codes are drawn: code -> weight (percent). Mostly R01, R02, R03.
    return_code_weights: Mapping[str, float] = field(default_factory=lambda: dict(
        R01=46, R02=14, R03=11, R04=4, R05=0.5, R06=1, R07=1, R08=4, R09=5, R10=3, R11=1,
        R12=0.5, R13=0.5, R14=0.5, R15=0.5, R16=2, R17=0.5, R18=0.5, R19=0.5, R20=2,
        R21=0.5, R22=0.5, R23=0.5, R24=0.5, R25=0.5, R26=0.5, R27=0.5, R28=0.5, R29=0.5))
    #: Unauthorized return codes (NACHA's unauthorized return rate, 0.5 % threshold) that
    #: the demo's consumer and corporate debits can meet: R05, R07, R10, R11, R29 (R51 is
    #: for RCK entries, which the demo has none of).
    unauthorized_codes: tuple[str, ...] = tuple(sorted(
        code for code in UNAUTHORIZED_RETURN_CODES if RETURN_CODE_TABLE[code].group == "rdfi"))
    #: How NOC change codes are drawn: code -> weight (percent). Domestic entries only:
    #: no C08 or C14 (IAT), and none of the retired C10-C12.
    noc_code_weights: Mapping[str, float] = field(default_factory=lambda: dict(
        C01=40, C02=15, C03=10, C04=8, C05=8, C06=5, C07=4, C09=4, C13=1))
    #: Banking days from settlement to a return (not of the extended time frame): 1, 2, 3... with
    #: these shares. Most within the two-day return window.
    return_day_shares: tuple[float, ...] = (0.62, 0.30, 0.04, 0.02, 0.02)
    #: Returns with NACHA's extended time frame (R05, R07, R10, R11 ...) come 1 to this
    #: many calendar days after settlement.
    unauthorized_return_days: int = EXTENDED_RETURN_DAYS
    #: NOCs come 1 or 2 banking days after settlement (this share on the first).
    noc_first_day_share: float = 0.6
    #: RCC items return this many banking days after the deposit: (first, count).
    rcc_return_days: tuple[int, int] = (2, 5)
    #: A successful route check allows sends to that card, token or routing number this long.
    route_check_valid_ms: int = 15 * 60_000

    def return_table(self, *, debit: bool = True) -> tuple[list[str], list[float]]:
        """``(codes, cumulative shares)`` of :attr:`return_code_weights`; of a credit or a
        prenote (``debit=False``), without the codes only a debit meets."""
        return _cumulative({code: weight for code, weight in self.return_code_weights.items()
                            if debit or code not in DEBIT_ONLY_RETURN_CODES})

    def noc_table(self) -> tuple[list[str], list[float]]:
        """``(codes, cumulative shares)`` of :attr:`noc_code_weights`."""
        return _cumulative(self.noc_code_weights)


#: Return codes only a debit entry meets (NACHA Operating Rules, Appendix Four): funds
#: insufficient or uncollected (R01, R09), a payment stopped (R08), and the unauthorized
#: debits (R05, R07, R10, R11, R29, R51). The sandbox returns credits and prenotes with
#: the other codes only.
DEBIT_ONLY_RETURN_CODES = frozenset({"R01", "R05", "R07", "R08", "R09", "R10", "R11", "R29",
                                     "R51"})


def _cumulative(weights: Mapping[str, float]) -> tuple[list[str], list[float]]:
    total = sum(weights.values())
    return list(weights), [c / total for c in itertools.accumulate(weights.values())]


def _pick(table: tuple[list[str], list[float]], u: np.ndarray) -> np.ndarray:
    codes, edges = table
    return np.array(codes, dtype=object)[np.minimum(
        np.searchsorted(edges, u, side="right"), len(codes) - 1)]


#: Statuses an item moves between, and what moves it: :func:`apply_due` applies them.
TRANSITIONS = {
    ("W", "I"): "business processing, a restricted state",
    ("W", "B"): "business processing, a blocked account",
    ("W", "V"): "a void (before the cut-off)",
    ("W", "S"): "the cut-off of the next banking day (sent)",
    ("S", "R"): "a return, on a banking day after settlement",
}


def voidable(status: str) -> bool:
    """The void rule: only an item not yet batched for sending (``W``) can be voided."""
    return status == "W"


def bulk_stores_anything(invalid: int, commit_valid: bool) -> bool:
    """Bulk semantics: a bulk with invalid items stores nothing unless ``alwaysCommitValid``
    (then the valid items are stored and the invalid ones are answered as I)."""
    return commit_valid or not invalid


def _days(ms: Any) -> np.ndarray:
    return (np.asarray(ms, dtype=np.int64) // DAY_MS).astype("datetime64[D]")


def _ms(days: np.ndarray) -> np.ndarray:
    return days.astype(np.int64) * DAY_MS


def _offset(days: np.ndarray, n: Any, roll: Literal["forward", "backward"]) -> np.ndarray:
    return np.busday_offset(days, np.asarray(n, dtype=np.int64), roll=roll,
                            busdaycal=BUSDAY_CALENDAR)


def _none(like: np.ndarray) -> np.ndarray:
    """An object array of None shaped like ``like``: the "no code" of np.where."""
    return np.full(like.shape, None, dtype=object)


def _later(days: np.ndarray, requested: Any) -> np.ndarray:
    """``days``, or the requested epoch ms (-1: none) rolled to a banking day when later."""
    if requested is None:
        return days
    wanted = np.asarray(requested, dtype=np.int64)
    later = _offset(_days(np.maximum(wanted, 0)), 0, "forward")
    return np.where((wanted >= 0) & (later > days), later, days)


@dataclass(frozen=True)
class Schedule:
    """When items are sent and settle (epoch ms arrays): ``send`` is the cut-off moment,
    ``effective`` and ``settle`` midnight UTC of those banking days."""

    send: np.ndarray
    effective: np.ndarray
    settle: np.ndarray


def schedule(config: Config, received: Any, *, requested_send: Any = None,
             requested_effective: Any = None, same_day: Any = False) -> Schedule:
    """The processing schedule: sent at the cut-off of the first banking day after the day
    of receipt (or of the requested send date, if later); effective and settled the next
    banking day (the same day for same-day ACH), or on a later requested effective date
    (rolled forward to a banking day). Requested dates may hold -1 for "none"."""
    received = np.asarray(received, dtype=np.int64)
    send_day = _offset(_days(received), 1, "backward")  # strictly after the day of receipt
    send_day = _later(send_day, requested_send)
    same = np.broadcast_to(np.asarray(same_day, dtype=bool), send_day.shape)
    effective = _later(np.where(same, send_day, _offset(send_day, 1, "forward")),
                       requested_effective)
    return Schedule(_ms(send_day) + config.cutoff_ms, _ms(effective), _ms(effective))


@dataclass(frozen=True)
class Fates:
    """What business processing will do to each item: ``status`` ("" for nothing, I, B or
    R), when (``at``, epoch ms), the return ``code`` (None for I and B) and ``message``."""

    status: np.ndarray
    at: np.ndarray
    code: np.ndarray
    message: np.ndarray

    def rows(self, ids: np.ndarray) -> list[tuple[Any, ...]]:
        """``(status, at, code, message, id)`` of the items that have a fate."""
        chosen = np.flatnonzero(self.status != "")
        return list(zip(*(column[chosen].tolist() for column in (
            self.status, self.at, self.code, self.message, ids)), strict=True))


def _event_at(config: Config, days: np.ndarray, u: np.ndarray) -> np.ndarray:
    return _ms(days) + config.event_hour_ms + (u * 6 * HOUR_MS).astype(np.int64)


def _return_days(config: Config, settle: np.ndarray, extended: np.ndarray,
                 u: np.ndarray) -> np.ndarray:
    """Banking days of returns: 1, 2... banking days after settlement by the configured
    shares; of the extended time frame 1 to 60 calendar days after, rolled back to one."""
    settle_day = _days(settle)
    edges = np.cumsum(config.return_day_shares) / sum(config.return_day_shares)
    steps = 1 + np.minimum(np.searchsorted(edges, u, side="right"), len(edges) - 1)
    standard = _offset(settle_day, steps, "forward")
    late = settle_day + (1 + (u * config.unauthorized_return_days).astype(np.int64))
    late = np.maximum(_offset(late, 0, "backward"), _offset(settle_day, 1, "forward"))
    return np.where(extended, late, standard)


def _checks(config: Config, states: np.ndarray, accounts: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    restricted = np.isin(states, list(config.restricted_states))
    blocked = ~restricted & np.char.startswith(accounts.astype(str),
                                               config.blocked_account_prefix)
    return restricted, blocked


def _fates(config: Config, restricted: np.ndarray, blocked: np.ndarray,
           returned: np.ndarray, code: np.ndarray, received: np.ndarray,
           return_at: np.ndarray) -> Fates:
    status = np.where(restricted, "I", np.where(blocked, "B", np.where(returned, "R", "")))
    at = np.where(returned & ~restricted & ~blocked, return_at,
                  received + config.processing_delay_ms)
    code = np.where(status == "R", code, _none(code))
    messages = np.array([RETURN_CODES.get(c, "") if c else "" for c in code.tolist()],
                        dtype=object)
    message = np.where(status == "I", RESTRICTED_MESSAGE,
                       np.where(status == "B", BLOCKED_MESSAGE, messages))
    return Fates(status.astype(object), at.astype(np.int64), code, message.astype(object))


def ach_fates(config: Config, *, kinds: np.ndarray, states: np.ndarray,
              accounts: np.ndarray, received: np.ndarray, settle: np.ndarray,
              u: np.ndarray, unauthorized_rate: Any = 0.0) -> Fates:
    """The fates of ACH items (``kinds``: Debit, Credit or Prenote; ``u``: ``(5, n)`` draws
    of rate, code, day, hour, scenario): restricted state -> I, blocked account -> B (an
    hour after receipt); else returned with probability ``ach_return_rates[kind]`` (not
    with a :data:`DEBIT_ONLY_RETURN_CODES` code unless a debit), and a debit also returned
    unauthorized with probability ``unauthorized_rate`` (the demo's compliance scenario)."""
    restricted, blocked = _checks(config, states, accounts)
    rates = np.array([config.ach_return_rates[k] for k in kinds.tolist()], dtype=float)
    returned = ~restricted & ~blocked & (u[0] < rates)
    code = np.where(kinds == "Debit", _pick(config.return_table(), u[1]),
                    _pick(config.return_table(debit=False), u[1]))
    extra = (~restricted & ~blocked & ~returned & (kinds == "Debit")
             & (u[4] < np.asarray(unauthorized_rate)))
    unauthorized_codes = np.array(config.unauthorized_codes, dtype=object)
    code = np.where(extra, unauthorized_codes[(u[1] * len(unauthorized_codes)).astype(int)],
                    code)
    returned |= extra
    days = _return_days(config, settle, np.isin(code, list(EXTENDED_RETURN_CODES)), u[2])
    return _fates(config, restricted, blocked, returned, code, received,
                  _event_at(config, days, u[3]))


def rcc_fates(config: Config, *, states: np.ndarray, accounts: np.ndarray,
              received: np.ndarray, deposit: np.ndarray, u: np.ndarray) -> Fates:
    """The fates of RCC items (``u``: 4 rows of draws): I or B as ACH, else returned with
    probability ``rcc_return_rate`` 2 to 6 banking days after the deposit."""
    restricted, blocked = _checks(config, states, accounts)
    returned = ~restricted & ~blocked & (u[0] < config.rcc_return_rate)
    code = _pick(config.return_table(), u[1])
    first, span = config.rcc_return_days
    days = _offset(_days(deposit), first + (u[2] * span).astype(np.int64), "forward")
    return _fates(config, restricted, blocked, returned, code, received,
                  _event_at(config, days, u[3]))


def noc_events(config: Config, *, eligible: np.ndarray, settle: np.ndarray,
               u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(at, code)`` of the NOC each eligible item draws (``at`` -1 and code None for
    none): probability ``noc_rate``, 1 or 2 banking days after settlement. ``u``: 3 rows."""
    chosen = eligible & (u[0] < config.noc_rate)
    steps = np.where(u[2] < config.noc_first_day_share, 1, 2)
    at = _event_at(config, _offset(_days(settle), steps, "forward"), u[2])
    code = _pick(config.noc_table(), u[1])
    return np.where(chosen, at, -1), np.where(chosen, code, _none(code))


#: Valid routing numbers that corrected data of a NOC may name.
_CORRECTED_ROUTING = ("021000021", "026009593", "121000248", "031176110", "111000025")


#: An entry's transaction code, and the one of the same direction (credit, debit,
#: prenote) to the other account type (checking <-> savings): what a C05 corrects it to.
_OTHER_ACCOUNT_CODE = {"22": "32", "23": "33", "27": "37", "28": "38",
                       "32": "22", "33": "23", "37": "27", "38": "28"}


def noc_corrected_data(code: str, u: float, *, transaction_code: Any = None,
                       savings: bool = False) -> str:
    """The corrected data a NOC of ``code`` carries, in the NACHA layout: the values of
    the fields its :data:`paynb.codes.NOC_CODE_TABLE` row names, in that order, separated
    by blanks (C05: the entry's ``transaction_code`` to the other account type, the same
    direction, 27 to 37; by ``savings`` when the code is none of those). C13, C61-C69 and
    a code in no table carry none. Synthetic, fixed by the draw ``u``."""
    noc = NOC_CODE_TABLE.get(code)
    if noc is None:
        return ""
    account = f"{int(u * 10**10):010d}"
    values = {
        "bankAccountNumber": account,
        "bankRoutingNumber": _CORRECTED_ROUTING[min(int(u * len(_CORRECTED_ROUTING)),
                                                    len(_CORRECTED_ROUTING) - 1)],
        "achTransactionCode": _OTHER_ACCOUNT_CODE.get(
            str(transaction_code), "27" if savings else "37"),
        "individualName": "DOE JANE",
        "receivingDfiIdentification": f"NWBKGB2L{account[:3]}",
        "achIdentificationNumber": f"ID{account[:6]}",
        "companyName": "ACME PAYROLL",
        "companyIdentification": f"1{account[:9]}",
        "achEntryClass": "IAT",
        "addenda": "",
    }
    return " ".join(value for field in noc.fields if (value := values[field]))


#: The sandbox time of "no event planned".
NEVER = 2**62
#: When the next business event is due, each query served by a partial index.
_NEXT_DUE = (
    "SELECT MIN(_fate_at) FROM ach WHERE _fate_status IS NOT NULL",
    "SELECT MIN(_fate_at) FROM rcc WHERE _fate_status IS NOT NULL",
    "SELECT MIN(_send_at) FROM ach WHERE itemStatus = 'W'",
    "SELECT MIN(_send_at) FROM rcc WHERE itemStatus = 'W'",
    "SELECT MIN(_noc_at) FROM ach WHERE _noc_at IS NOT NULL",
)


def apply_due(db: sqlite3.Connection, now: int, config: Config, *,
              new_noc: Callable[[str], tuple[int, int, float]]) -> dict[str, int]:
    """Apply every business event due by ``now`` (sandbox time, epoch ms) to the tables on
    ``db``, in the caller's transaction, in the order they happen to one item: checks (I,
    B), the cut-off (S), returns (R), NOCs; returns how many rows changed, by kind.
    ``new_noc(company)`` gives a new NOC's id, its ``_seq`` and its corrected data's draw."""
    changed = {"ach": 0, "rcc": 0, "noc": 0}
    for table in ("ach", "rcc"):
        changed[table] += _apply_fates(db, table, now, ("I", "B"), "W")
        changed[table] += _send(db, table, now, config)
        changed[table] += _apply_fates(db, table, now, ("R",), "S")
    changed["noc"] += _emit_nocs(db, now, new_noc)
    return changed


def next_due(db: sqlite3.Connection) -> int:
    """The sandbox time of the next business event on ``db``'s tables (:data:`NEVER`
    when none is planned)."""
    return min((due for (due,) in (db.execute(query).fetchone() for query in _NEXT_DUE)
                if due is not None), default=NEVER)


def _send(db: sqlite3.Connection, table: str, now: int, config: Config) -> int:
    """W -> S at the cut-off: the planned dates become the record's."""
    ach = table == "ach"
    return db.execute(
        f"UPDATE {table} SET itemStatus = 'S', sendDate = _send_at, "
        "depositDateTime = _send_at, apiReportDateTime = _send_at + ?, "
        "settleDate = _settle_at, reportStatus = 'Sent'"
        + (", achEffectiveDate = _effective_at, settlementReportFileName = 'SETTLE_' || "
           f"companyCode || '_' || {yyyymmdd('_settle_at')} || '.csv'" if ach else "")
        + " WHERE itemStatus = 'W' AND _send_at <= ?",
        (config.report_delay_ms, now)).rowcount


def _apply_fates(db: sqlite3.Connection, table: str, now: int, fates: tuple[str, ...],
                 current: str) -> int:
    """``current`` -> one of ``fates``, for the items whose fate is due."""
    kind = KINDS[table]
    files = (", returnFileName = CASE WHEN _fate_status = 'R' THEN 'RET_' || companyCode "
             f"|| '_' || {yyyymmdd('_fate_at')} || '.ach' END, returnReportFileName = "
             "CASE WHEN _fate_status = 'R' THEN 'RETRPT_' || companyCode || '_' || "
             f"{yyyymmdd('_fate_at')} || '.csv' END" if table == "ach" else "")
    return db.execute(
        f"UPDATE {table} SET itemStatus = _fate_status, "
        f"returnDate = _fate_at - _fate_at % {DAY_MS}, returnReason = _fate_code, "
        "returnMessage = _fate_message, returnItemId = CASE WHEN _fate_status = 'R' THEN "
        f"{kind.pk} + {RETURN_ITEM_BASE} END, reportStatus = CASE WHEN _fate_status = 'R' "
        f"THEN 'Returned' ELSE reportStatus END{files}, _fate_status = NULL, _fate_at = NULL "
        f"WHERE _fate_status IS NOT NULL AND _fate_at <= ? AND _fate_status IN "
        f"{sql_list(fates)} AND itemStatus = ?", (now, current)).rowcount


def _emit_nocs(db: sqlite3.Connection, now: int,
               new_noc: Callable[[str], tuple[int, int, float]]) -> int:
    """The NOCs due: one row each in ``noc``, the ACH item's plan cleared."""
    due = db.execute(
        "SELECT achItemId, companyCode, yourReferenceNumber, _noc_code, _noc_at, "
        "achAccountType, achTransactionCode FROM ach WHERE _noc_at IS NOT NULL "
        "AND _noc_at <= ? AND itemStatus IN ('S', 'R')", (now,)).fetchall()
    for ach_id, company, reference, code, at, account_type, transaction_code in due:
        noc_id, seq, u = new_noc(company)
        db.execute(
            "INSERT INTO noc (nocId, companyCode, _seq, achItemId, yourReferenceNumber, "
            "changeCode, changeReason, correctedData, nocDate) VALUES (?,?,?,?,?,?,?,?,?)",
            (noc_id, company, seq, ach_id, reference, code, NOC_CODES.get(code),
             noc_corrected_data(code, u, transaction_code=transaction_code,
                                savings=account_type == "Savings"), at))
    db.execute("UPDATE ach SET _noc_at = NULL, _noc_code = NULL "
               "WHERE _noc_at IS NOT NULL AND _noc_at <= ?", (now,))
    return len(due)
