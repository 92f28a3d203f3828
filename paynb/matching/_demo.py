"""A realistic expected ledger for demo items, and what it planted (for the notebook,
the tests and the benchmark)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from paynb.calendar import add_banking_days

__all__ = ["PlantedLedger", "expected_ledger"]

#: Share of the items each kind of ledger line is planted for (the rest: no line, so the
#: item stays unmatched). "combined": two or three ledger lines collected as one item.
SHARES = {"reference": 0.70, "account": 0.10, "amount within": 0.04, "name": 0.04,
          "combined": 0.03, "split": 0.03}
#: The tolerance the "amount within" lines need: ``match(..., amount_tolerance=TOLERANCE)``.
TOLERANCE = "0.50"
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
    """
    rng = np.random.default_rng(seed)
    id_column = "achItemId" if "achItemId" in items.columns else "rccItemId"
    date_column = "sendDate" if "sendDate" in items.columns else "depositDateTime"
    frame = items.reset_index(drop=True)
    n = len(frame)
    ids = frame[id_column].to_numpy()
    accounts = frame["bankAccountNumber"].astype("string").fillna("").to_numpy(dtype=object)
    routing = frame["bankRoutingNumber"].astype("string").to_numpy(dtype=object)
    # Masked items: a made-up number ending in the last four, the same for the same account.
    made_up: dict[tuple[str, str], str] = {}
    accounts = np.array([a if not a.startswith("*") else made_up.setdefault(
        (a, r), f"{rng.integers(10**5, 10**6)}{a[-4:]}") for a, r in zip(accounts, routing,
                                                                       strict=True)],
        dtype=object)
    cents = (frame["amount"].astype("string").str.replace(".", "", regex=False)
             .astype("int64").to_numpy())
    def utc_days(column: str) -> pd.Series:
        # paynb's date columns are zone-less UTC days, its time columns UTC timestamps.
        stamps = pd.to_datetime(frame[column])
        return stamps.dt.tz_convert(None) if stamps.dt.tz is not None else stamps

    when = utc_days(date_column)
    if "receivedDateTime" in frame.columns:
        # Items not sent (yet), W, I or B, have no send date: the ledger expects them on
        # the day they were received.
        when = when.fillna(utc_days("receivedDateTime"))
    dates = when.dt.normalize().to_numpy(dtype="datetime64[D]")
    first = frame["firstSignerFirstName"].astype("string").fillna("").to_numpy(dtype=object)
    last = frame["firstSignerLastName"].astype("string").fillna("").to_numpy(dtype=object)
    refs = frame["yourReferenceNumber"].astype("string").to_numpy(dtype=object)

    lines: list[dict[str, object]] = []
    planted: list[dict[str, object]] = []

    def line(row: int, *, amount: int | None = None, ref: bool = True, name: str | None = None,
             account: str | None = None, shift: int = 0) -> int:
        day = dates[row] if not shift else add_banking_days(dates[row:row + 1], shift)[0]
        lines.append({"Reference": refs[row] if ref else "",
                      "Account": account if account is not None else accounts[row],
                      "Routing": routing[row],
                      "Amount": _text(cents[row] if amount is None else amount),
                      "Date": str(np.datetime64(day, "D")),
                      "Payee": name if name is not None else f"{first[row]} {last[row]}",
                      "Memo": ""})
        return len(lines) - 1

    # Splits first: items sharing an account (and routing) within a banking day or two.
    used = np.zeros(n, dtype=bool)
    order = rng.permutation(n)
    by_account: dict[tuple[str, str], list[int]] = {}
    for row in order.tolist():
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
            total = int(cents[pair].sum())
            at = line(pair[0], amount=total, ref=False)
            lines[at]["Memo"] = "paid in two parts"
            planted.append({"kind": "split", "ledger_rows": (at,),
                            "item_ids": tuple(int(ids[r]) for r in pair)})
            used[pair] = True
            split_budget -= 1
    free = [row for row in order.tolist() if not used[row]]
    kinds = [k for k in SHARES if k != "split"]
    shares = np.array([SHARES[k] for k in kinds])
    counts = np.floor(shares * len(free)).astype(int)
    start = 0
    for kind, count in zip(kinds, counts.tolist(), strict=True):
        for row in free[start:start + count]:
            if kind == "reference":
                rows = (line(row),)
            elif kind == "account":
                rows = (line(row, ref=False, shift=int(rng.integers(-1, 2))),)
            elif kind == "amount within":
                off = int(rng.integers(1, 50)) * (1 if rng.random() < 0.5 else -1)
                if cents[row] + off <= 0:
                    off = abs(off)
                rows = (line(row, ref=False, amount=int(cents[row]) + off),)
            elif kind == "name":
                rows = (line(row, ref=False, account=str(rng.integers(10**7, 10**9)),
                             name=_name_variant(first[row], last[row], rng)),)
            else:  # combined: the item's amount as two or three ledger lines
                if cents[row] < 500:  # too small to split credibly: an ordinary line
                    planted.append({"kind": "reference", "ledger_rows": (line(row),),
                                    "item_ids": (int(ids[row]),)})
                    continue
                # Parts of similar size, none close enough to the whole to pass for it.
                parts = 2 if rng.random() < 0.6 else 3
                shares = rng.uniform(0.8, 1.2, parts)
                amounts = np.floor(shares / shares.sum() * cents[row]).astype(np.int64)
                amounts[-1] = cents[row] - amounts[:-1].sum()
                amounts = amounts.tolist()
                rows = tuple(line(row, ref=False, amount=int(a)) for a in amounts)
            planted.append({"kind": kind, "ledger_rows": rows, "item_ids": (int(ids[row]),)})
        start += count
    extra = [int(ids[row]) for row in free[start:]]
    missing_rows = []
    for _ in range(missing):
        lines.append({"Reference": f"INV-{int(rng.integers(10**5, 10**6))}",
                      "Account": str(rng.integers(10**7, 10**10)), "Routing": "021000021",
                      "Amount": _text(int(rng.integers(500, 500_000))),
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


def _text(cents: int) -> str:
    sign = "-" if cents < 0 else ""
    return f"{sign}{abs(cents) // 100}.{abs(cents) % 100:02d}"


def demo_items(count: int, *, seed: int = 0, mask: bool = True,
               start: str = "2026-06-01") -> pd.DataFrame:
    """``count`` ACH items as the client returns them (a typed, masked frame), made up
    without a sandbox: for tests and the benchmark. About one in ten accounts pays
    twice within a banking day, so splits can be planted; about 2 % of the items are
    returned and 1 % voided."""
    from paynb.frames import to_frame

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
