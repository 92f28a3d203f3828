"""A realistic expected ledger for demo items, and what it planted (for the notebook,
the tests and the benchmark)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd

from paynb.calendar import add_banking_days
from paynb.frames import to_frame
from paynb.matching._columns import ITEM_COLUMNS, amount_cents
from paynb.matching._dates import days_of
from paynb.matching._rules import banking_index

__all__ = ["PlantedLedger", "expected_ledger"]

#: Share of the items each kind of ledger line is planted for (the rest: no line, so the
#: item stays unmatched). "combined": two or three ledger lines collected as one item.
SHARES = {"reference": 0.70, "account": 0.10, "amount within": 0.04, "name": 0.04,
          "combined": 0.03, "split": 0.03}
#: The tolerance the "amount within" lines need: ``match(..., amount_tolerance=TOLERANCE)``.
TOLERANCE = "0.50"
#: The date window the planted matches are unambiguous for: ``match(..., date_window=2)``,
#: the default.
DATE_WINDOW = 2
#: The columns of the generated ledger, as ``match(..., columns=COLUMNS)`` wants them.
COLUMNS = {"reference": "Reference", "account": "Account", "routing": "Routing",
           "amount": "Amount", "date": "Date", "name": "Payee"}


@dataclass
class PlantedLedger:
    """The ledger and what was planted in it."""

    #: The expected ledger: ``Reference, Account, Routing, Amount`` (text with two
    #: decimals, as an export holds it), ``Date``, ``Payee``, ``Memo``.
    ledger: pd.DataFrame
    #: One row per planted match: ``kind`` (reference, account, amount within, name,
    #: split, combined), ``ledger_rows`` and ``item_ids`` (tuples).
    planted: pd.DataFrame
    #: Ledger rows planted with no item (money expected that never came).
    missing_items: list[int] = field(default_factory=list)
    #: Items with no ledger line (the ids).
    extra_items: list[int] = field(default_factory=list)
    #: The ``columns`` mapping for :func:`paynb.match`.
    columns: dict[str, str] = field(default_factory=lambda: dict(COLUMNS))
    #: The ``amount_tolerance`` the fuzzy "amount within" lines need.
    amount_tolerance: str = TOLERANCE
    #: The ``date_window`` the planted matches are unambiguous for.
    date_window: int = DATE_WINDOW

    def missed(self, result: Any) -> pd.DataFrame:
        """The rows of :attr:`planted` that ``result`` (a :class:`paynb.MatchResult`) does
        not hold as one match of exactly those ledger rows and items: empty when it found
        every planted match.

        A match is compared as sets of rows, so that a split's ledger line, which
        ``result.matched`` repeats beside each of its items, counts once."""
        found = found_matches(result)
        hit = [(frozenset(rows), frozenset(ids)) in found for rows, ids in
               zip(self.planted["ledger_rows"], self.planted["item_ids"], strict=True)]
        return self.planted[~np.array(hit, dtype=bool)]


def found_matches(result: Any) -> set[tuple[frozenset[Any], frozenset[Any]]]:
    """Each match of ``result`` as (its expected rows, its item ids), both as sets."""
    matched = result.matched
    sizes = matched.groupby("match_id")["match_id"].transform("size").to_numpy()
    single = matched[sizes == 1]
    found = {(frozenset((e,)), frozenset((i,))) for e, i in
             zip(single["expected_row"].tolist(), single["item_id"].tolist(), strict=True)}
    for _, group in matched[sizes > 1].groupby("match_id"):
        found.add((frozenset(group["expected_row"].tolist()),
                   frozenset(group["item_id"].tolist())))
    return found


def _name_variant(first: str, last: str, rng: np.random.Generator) -> str:
    """How a billing system might spell the same person: "SMITH, JOHN", "Smith John"."""
    return [f"{last.upper()}, {first.upper()}", f"{last} {first}", f"{first} {last}."][
        int(rng.integers(0, 3))]


def expected_ledger(items: pd.DataFrame, *, seed: int = 0, missing: int = 5) -> PlantedLedger:
    """An expected ledger for ``items`` (a paynb ACH or RCC frame), with what it planted.

    Most items get a line with the same reference, account, amount and date; some a
    line without reference (found by account, amount and date), some one whose amount
    is off by a few cents or whose account is out of date with the payee spelled
    another way (found only by the fuzzy rules), some two or three lines collected as
    one item (combined), and, where several items share an account within the date
    window, one line paid as several items (split). Some items get no line, and
    ``missing`` lines have no item. When the items are masked, the ledger's account
    numbers end in the items' last four digits and the rest is made up.

    Every planted match is unambiguous by construction for ``paynb.match`` with the
    ledger's ``columns``, ``amount_tolerance`` and ``date_window``: no other item on a
    line's account key (as the matcher sees it) within the window and tolerance, no row
    the sum search could use beside a split or combination, an amount and account key of
    its own for a line found by name. A planned line that would not be gets its item's
    reference instead (still planted, as a reference match). Items with no reference, or
    one shared with another item, get no line.
    """
    rng = np.random.default_rng(seed)
    id_column = next(c for c in ITEM_COLUMNS["id"] if c in items.columns)
    date_column = "sendDate" if "sendDate" in items.columns else "depositDateTime"
    frame = items.reset_index(drop=True)
    n = len(frame)
    ids = frame[id_column].to_numpy()
    accounts = frame["bankAccountNumber"].astype("string").fillna("").to_numpy(dtype=object)
    routing = frame["bankRoutingNumber"].astype("string").to_numpy(dtype=object)
    masked = any(a.startswith("*") for a in accounts)
    # Masked items: a made-up number ending in the last four, the same for the same account.
    made_up: dict[tuple[str, str], str] = {}
    accounts = np.array([a if not a.startswith("*") else made_up.setdefault(
        (a, r), f"{rng.integers(10**5, 10**6)}{a[-4:]}") for a, r in zip(accounts, routing,
                                                                       strict=True)],
        dtype=object)
    cents = amount_cents(frame, "amount", "items")
    dates = days_of(frame[date_column], "items", date_column)
    if "receivedDateTime" in frame.columns:
        # Items not sent (yet), W, I or B, have no send date: the ledger expects them on
        # the day they were received.
        unsent = np.isnat(dates)
        dates[unsent] = days_of(frame["receivedDateTime"], "items", "receivedDateTime")[unsent]
    first = frame["firstSignerFirstName"].astype("string").fillna("").to_numpy(dtype=object)
    last = frame["firstSignerLastName"].astype("string").fillna("").to_numpy(dtype=object)
    refs = frame["yourReferenceNumber"].astype("string").to_numpy(dtype=object)
    # What the matcher compares: the account key (last four when masked) and routing.
    item_keys = np.array([_key(a, r, masked) for a, r in zip(accounts, routing, strict=True)],
                         dtype=object)
    texts = pd.Series(refs, dtype="string")
    referenced = ((texts.str.strip() != "").fillna(False)
                  & ~texts.duplicated(keep=False)).to_numpy(dtype=bool)

    # The plan: per planted match, its kind, its items and its lines (not written yet).
    plan: list[dict[str, object]] = []

    def spec(row: int, *, amount: int | None = None, ref: bool = True,
             name: str | None = None, account: str | None = None, shift: int = 0,
             memo: str = "") -> dict[str, object]:
        day = dates[row] if not shift else add_banking_days(dates[row:row + 1], shift)[0]
        return {"row": row, "Reference": refs[row] if ref else "",
                "Account": account if account is not None else accounts[row],
                "Routing": routing[row],
                "cents": int(cents[row] if amount is None else amount), "Date": day,
                "Payee": name if name is not None else f"{first[row]} {last[row]}",
                "Memo": memo}

    # Splits first: items sharing an account (and routing) within a banking day or two.
    used = ~referenced  # an item without a usable reference gets no line
    order = rng.permutation(n)
    by_account: dict[tuple[str, str], list[int]] = {}
    for row in order.tolist():
        if not used[row]:
            by_account.setdefault((accounts[row], routing[row]), []).append(row)
    split_budget = int(round(SHARES["split"] * n))
    for rows in by_account.values():
        if split_budget <= 0:
            break
        rows = sorted(rows, key=lambda r: dates[r])
        # Not with a zero amount (a prenote): "paid in two parts" of which one is nothing
        # is the one item the ledger line matches exactly, not a split.
        if len(rows) >= 2 and abs(int((dates[rows[1]] - dates[rows[0]]).astype(int))) <= 1 \
                and cents[rows[:2]].min() > 0:
            pair = rows[:2]
            plan.append({"kind": "split", "rows": pair, "lines": [
                spec(pair[0], amount=int(cents[pair].sum()), ref=False,
                     memo="paid in two parts")]})
            used[pair] = True
            split_budget -= 1
    free = [row for row in order.tolist() if not used[row]]
    kinds = [k for k in SHARES if k != "split"]
    shares = np.array([SHARES[k] for k in kinds])
    counts = np.floor(shares * len(free)).astype(int)
    taken_keys = set(item_keys.tolist())
    start = 0
    for kind, count in zip(kinds, counts.tolist(), strict=True):
        for row in free[start:start + count]:
            if kind == "reference":
                lines = [spec(row)]
            elif kind == "account":
                lines = [spec(row, ref=False, shift=int(rng.integers(-1, 2)))]
            elif kind == "amount within":
                off = int(rng.integers(1, 50)) * (1 if rng.random() < 0.5 else -1)
                if cents[row] + off <= 0:
                    off = abs(off)
                lines = [spec(row, ref=False, amount=int(cents[row]) + off)]
            elif kind == "name":
                account = _free_account(rng, routing[row], masked, taken_keys)
                lines = [spec(row, ref=False, account=account,
                              name=_name_variant(first[row], last[row], rng))] \
                    if account is not None else [spec(row)]
            else:  # combined: the item's amount as two or three ledger lines
                if cents[row] < 500:  # too small to split credibly: an ordinary line
                    plan.append({"kind": "reference", "rows": [row], "lines": [spec(row)]})
                    continue
                # Parts of similar size, none close enough to the whole to pass for it.
                parts = 2 if rng.random() < 0.6 else 3
                weights = rng.uniform(0.8, 1.2, parts)
                amounts = np.floor(weights / weights.sum() * cents[row]).astype(np.int64)
                amounts[-1] = cents[row] - amounts[:-1].sum()
                lines = [spec(row, ref=False, amount=int(a)) for a in amounts.tolist()]
            plan.append({"kind": kind, "rows": [row], "lines": lines})
        start += count
    extra = [int(ids[row]) for row in free[start:]] + [int(ids[row]) for row in
                                                         np.flatnonzero(~referenced)]
    _make_unambiguous(plan, item_keys, banking_index(dates), cents, masked,
                      tolerance=int(Decimal(TOLERANCE) * 100), window=DATE_WINDOW, spec=spec)

    lines: list[dict[str, object]] = []
    planted: list[dict[str, object]] = []
    for entry in plan:
        at = []
        for line in entry["lines"]:  # type: ignore[attr-defined]
            lines.append({"Reference": line["Reference"], "Account": line["Account"],
                          "Routing": line["Routing"], "Amount": _text(line["cents"]),
                          "Date": str(np.datetime64(line["Date"], "D")),
                          "Payee": line["Payee"], "Memo": line["Memo"]})
            at.append(len(lines) - 1)
        planted.append({"kind": entry["kind"], "ledger_rows": tuple(at),
                        "item_ids": tuple(int(ids[r]) for r in entry["rows"])})  # type: ignore[attr-defined]
    missing_rows = []
    # Not the amount of any item (the name rule would compare it with the item's).
    item_amounts = set(cents.tolist())
    item_refs = set(refs[referenced].tolist())
    for _ in range(missing):
        # On an account key no item has, so it cannot compete for one.
        account = _free_account(rng, "021000021", masked, taken_keys,
                                digits=int(rng.integers(8, 11)))
        reference = _outside(item_refs, lambda: f"INV-{int(rng.integers(10**5, 10**6))}")
        amount = _outside(item_amounts, lambda: int(rng.integers(500, 500_000)))
        lines.append({"Reference": reference, "Account": account or "",
                      "Routing": "021000021", "Amount": _text(amount),
                      "Date": str(dates.max() if n else np.datetime64("2026-01-02")),
                      "Payee": "Unknown Payee", "Memo": "no payment yet"})
        missing_rows.append(len(lines) - 1)
    ledger = pd.DataFrame(lines, columns=["Reference", "Account", "Routing", "Amount", "Date",
                                          "Payee", "Memo"])
    # The billing system's order, not the service's.
    shuffle = rng.permutation(len(ledger))
    ledger = ledger.iloc[shuffle].reset_index(drop=True)
    new_row = np.empty(len(shuffle), dtype=np.int64)
    new_row[shuffle] = np.arange(len(shuffle))
    planted_frame = pd.DataFrame(planted, columns=["kind", "ledger_rows", "item_ids"])
    planted_frame["ledger_rows"] = [tuple(int(new_row[r]) for r in rows)
                                    for rows in planted_frame["ledger_rows"]]
    return PlantedLedger(ledger=ledger, planted=planted_frame,
                         missing_items=[int(new_row[r]) for r in missing_rows],
                         extra_items=extra)


def _key(account: str, routing: str, masked: bool) -> str:
    """The account key the matcher compares (see paynb.matching._columns)."""
    digits = "".join(c for c in str(account) if c.isdigit())
    return f"{digits[-4:].rjust(4, '0') if masked else digits.lstrip('0')}|{routing}"


def _free_account(rng: np.random.Generator, routing: str, masked: bool, taken: set[str],
                  digits: int = 9) -> str | None:
    """A made-up account number whose key no item has (None when none is found)."""
    for _ in range(200):
        account = str(int(rng.integers(10 ** (digits - 1), 10 ** digits)))
        key = _key(account, routing, masked)
        if key not in taken:
            taken.add(key)
            return account
    return None


def _outside(avoid: set[Any], draw: Callable[[], Any]) -> Any:
    """The first value ``draw()`` gives that is not in ``avoid``."""
    return next(value for value in iter(draw, None) if value not in avoid)


def _make_unambiguous(plan: list[dict[str, Any]], item_keys: np.ndarray, item_days: np.ndarray,
                      cents: np.ndarray, masked: bool, *, tolerance: int, window: int,
                      spec: Any) -> None:
    """Give every planned match that another row could compete for its reference lines
    instead (see :func:`expected_ledger`); in place.

    A line without reference competes, in the account passes, with every item on its
    key dated within the window whose amount is within the tolerance of its own; in the
    name pass, with every item still open then with its amount in the window; in the
    sum search, with every row on its key in the window still open then. Replacing a
    plan by reference lines only removes rows from those passes, so one round of checks
    (joins over all lines at once) is enough.
    """
    kinds = np.array([entry["kind"] for entry in plan], dtype=object)
    first_row = np.array([entry["rows"][0] for entry in plan], dtype=np.int64)
    second_row = np.array([entry["rows"][1] if len(entry["rows"]) > 1 else -1
                           for entry in plan], dtype=np.int64)
    summed = np.isin(kinds, ["split", "combined"])
    # Rows open when the sum search runs: items of splits and combinations and items
    # nobody planted; open when the name rule runs: those and the items found by name.
    planned = np.zeros(len(item_keys), dtype=bool)
    in_sums = np.zeros(len(item_keys), dtype=bool)
    for entry, is_sum in zip(plan, summed.tolist(), strict=True):
        planned[entry["rows"]] = True
        in_sums[entry["rows"]] |= is_sum
    in_sums |= ~planned
    open_at_names = in_sums.copy()
    open_at_names[first_row[kinds == "name"]] = True
    lines = pd.DataFrame([(index, _key(line["Account"], line["Routing"], masked), line["Date"],
                           line["cents"]) for index, entry in enumerate(plan)
                          if entry["kind"] != "reference" for line in entry["lines"]],
                         columns=["plan", "key", "date", "cents"])
    lines["day"] = banking_index(lines["date"].to_numpy(dtype="datetime64[D]"))
    lines["kind"] = kinds[lines["plan"].to_numpy()]
    items = pd.DataFrame({"item": np.arange(len(item_keys)), "key": item_keys,
                          "day": item_days, "cents": cents, "in_sums": in_sums,
                          "open_at_names": open_at_names})
    bad = np.zeros(len(plan), dtype=bool)

    def own(pairs: pd.DataFrame) -> np.ndarray:
        plan_of = pairs["plan"].to_numpy()
        return ((pairs["item"].to_numpy() == first_row[plan_of])
                | (pairs["item"].to_numpy() == second_row[plan_of]))

    # The account passes and the sum search, on the line's key.
    pairs = lines.merge(items, on="key", suffixes=("", "_i"))
    near = (pairs["day_i"] - pairs["day"]).abs().to_numpy() <= window
    close = near & ((pairs["cents_i"] - pairs["cents"]).abs().to_numpy() <= tolerance)
    fuzzy = pairs["kind"].isin(["account", "amount within"]).to_numpy()
    is_sum = pairs["kind"].isin(["split", "combined"]).to_numpy()
    # Only its own item may be close (none for the lines of splits and combinations), and
    # no other open row of the sum search may be near a sum's line.
    conflict = (close & ~(fuzzy & own(pairs))) | (is_sum & near & pairs["in_sums"].to_numpy()
                                                   & ~own(pairs))
    bad[pairs["plan"].to_numpy()[conflict]] = True
    # A line of any kind but name has its own item on its key.
    keyed = np.zeros(len(plan), dtype=bool)
    keyed[pairs["plan"].to_numpy()] = True
    bad |= ~keyed & (kinds != "name") & (kinds != "reference")
    # The name rule compares amounts on any account: a line found by name needs its item
    # to be the only open one with its amount in the window, and no sum's line with it; a
    # sum's line needs no open item with its amount in the window.
    same = lines[lines["kind"].isin(["name", "split", "combined"]).to_numpy()].merge(
        items[items["open_at_names"].to_numpy()], on="cents", suffixes=("", "_i"))
    same = same[(same["day_i"] - same["day"]).abs().to_numpy() <= window]
    names = same[(same["kind"] == "name").to_numpy()]
    bad[names.loc[~own(names), "plan"].to_numpy()] = True
    bad[same.loc[(same["kind"] != "name").to_numpy(), "plan"].to_numpy()] = True
    sum_amounts = set(lines.loc[lines["kind"].isin(["split", "combined"]).to_numpy(),
                                "cents"].tolist())
    name_lines = lines[(lines["kind"] == "name").to_numpy()]
    bad[name_lines.loc[name_lines["cents"].isin(sum_amounts).to_numpy(), "plan"].to_numpy()] \
        = True
    # The sum search from the items' side: only its own lines on the key nearby.
    sum_items = pd.DataFrame([(index, row) for index, entry in enumerate(plan)
                              if summed[index] for row in entry["rows"]],
                             columns=["plan", "item"])
    sum_items["key"] = item_keys[sum_items["item"].to_numpy(dtype=np.int64)]
    sum_items["day"] = item_days[sum_items["item"].to_numpy(dtype=np.int64)]
    other = sum_items.merge(lines[lines["kind"].isin(["split", "combined"]).to_numpy()],
                            on="key", suffixes=("", "_l"))
    other = other[((other["day_l"] - other["day"]).abs().to_numpy() <= window)
                  & (other["plan_l"] != other["plan"]).to_numpy()]
    bad[other["plan"].to_numpy()] = True

    for index in np.flatnonzero(bad & (kinds != "reference")).tolist():
        rows = plan[index]["rows"]
        plan[index] = {"kind": "reference", "rows": rows[:1], "lines": [spec(rows[0])]}
        plan.extend({"kind": "reference", "rows": [row], "lines": [spec(row)]}
                    for row in rows[1:])


def _text(cents: int) -> str:
    return str(Decimal(cents).scaleb(-2))


def demo_items(count: int, *, seed: int = 0, mask: bool = True,
               start: str = "2026-06-01") -> pd.DataFrame:
    """``count`` ACH items as the client returns them (a typed, masked frame), made up
    without a sandbox: for tests and the benchmark. About one in ten accounts pays
    twice within a banking day, so splits can be planted; about 2 % of the items are
    returned and 1 % voided."""
    rng = np.random.default_rng(seed)
    base = np.datetime64(start, "D")
    accounts = rng.integers(10**7, 10**12, count)
    repeat = np.flatnonzero(rng.random(count) < 0.1)
    accounts[repeat[1::2]] = accounts[repeat[0::2][:len(repeat[1::2])]]
    days = add_banking_days(base + rng.integers(0, 120, count).astype("timedelta64[D]"), 0)
    days[repeat[1::2]] = days[repeat[0::2][:len(repeat[1::2])]]
    cents = rng.lognormal(9.5, 1.2, count).astype(np.int64) + 100
    status = np.where(rng.random(count) < 0.02, "R", "S").astype(object)
    status[rng.random(count) < 0.01] = "V"
    first = np.array("James Mary Robert Patricia John Jennifer Michael Linda Carlos Maria Wei "
                     "Aisha Omar Priya Hiroshi Olga Kwame Fatima".split(), dtype=object)
    last = np.array("Smith Johnson Williams Brown Jones Garcia Miller Davis Rodriguez Lee "
                    "Nguyen Patel Kim Chen Okafor Schmidt Martin Clark".split(), dtype=object)
    routing = np.array(["021000021", "026009593", "121000248", "011000138", "031176110"],
                       dtype=object)
    records = pd.DataFrame({
        "achItemId": np.arange(1, count + 1),
        "companyCode": "DEMO1",
        "yourReferenceNumber": [f"DEMO1-ACH-{i:07d}" for i in range(1, count + 1)],
        "firstSignerFirstName": first[rng.integers(0, len(first), count)],
        "firstSignerLastName": last[rng.integers(0, len(last), count)],
        "bankRoutingNumber": routing[(accounts % len(routing)).astype(int)],
        "bankAccountNumber": accounts.astype(str),
        "amount": [_text(c) for c in cents.tolist()],
        "achTransactionType": "Debit",
        "itemStatus": status,
        "returnReason": np.where(status == "R", "R01", None),
        "sendDate": pd.DatetimeIndex(days).strftime("%Y-%m-%d"),
    })
    return to_frame(records, "ach", mask=mask)
