"""Case 8: NACHA return rates over 1,000,000 items, against a hand-written pandas groupby.

The baseline is what an analyst writes without paynb for the same figures: debit
entries and debit returns per company code in the 60 days ending on the as-of day,
returns split into unauthorized (R05 R07 R10 R11 R29 R51), administrative (R02
R03 R04) and all codes, each divided by the entries. Both sides start from the
typed frame the client returns, and a check makes sure they count the same.
The rolling series (a year of days) is measured against one ``return_rates`` call.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from benchmarks._data import ach_records
from benchmarks._harness import Config, Row, fmt_s, interleave
from benchmarks._paynb import build_frame

__all__ = ["run"]

AS_OF = pd.Timestamp("2026-11-21")
_UNAUTHORIZED = ["R05", "R07", "R10", "R11", "R29", "R51"]
_ADMINISTRATIVE = ["R02", "R03", "R04"]


def baseline(frame: pd.DataFrame) -> pd.DataFrame:
    """Returns and entries per company and category, with plain pandas."""
    lo, hi = AS_OF - pd.Timedelta(days=59), AS_OF
    status = frame["itemStatus"].astype(str)
    debit = frame["achTransactionType"].eq("Debit") & frame["amount"].ne(0).fillna(True) \
        & frame["achTransactionSubType"].ne("Prenote").fillna(True)
    sent = frame["sendDate"].dt.tz_localize(None).dt.floor("D")
    originated = sent.fillna(frame["receivedDateTime"].dt.tz_localize(None).dt.floor("D"))
    entry = debit & (status.isin(["S", "R"]) | (frame["sendDate"].notna()
                                                 & ~status.isin(["V", "I", "B"])))
    entries = (entry & originated.between(lo, hi)).groupby(frame["companyCode"]).sum()
    returned_on = frame["returnDate"].dt.tz_localize(None).dt.floor("D")
    returned = frame[debit & status.eq("R") & returned_on.between(lo, hi)]
    reason = returned["returnReason"]
    table = pd.DataFrame({
        "unauthorized": reason.isin(_UNAUTHORIZED),
        "administrative": reason.isin(_ADMINISTRATIVE),
        "overall": True,
    }).groupby(returned["companyCode"]).sum()
    table = table.reindex(entries.index, fill_value=0)
    return table.div(entries, axis=0)


def run(cfg: Config) -> list[Row]:
    """``return_rates`` against the baseline, and a year of ``rolling_return_rates``."""
    from paynb import compliance

    n = cfg.size(1_000_000, 20_000)
    frame = build_frame(ach_records(n))

    def ours() -> Any:
        return compliance.return_rates(frame, as_of=AS_OF, by="companyCode")

    def rolling() -> Any:
        return compliance.rolling_return_rates(frame, start=AS_OF - pd.Timedelta(days=364),
                                               end=AS_OF, by="companyCode")

    expected = baseline(frame)

    def check(name: str, result: Any) -> None:
        if name != "paynb":
            return
        for row in result.to_dict("records"):
            want = expected.loc[row["companyCode"], row["category"]]
            if abs(row["rate"] - want) > 1e-12:
                raise AssertionError(f"paynb {row['category']} {row['rate']} != {want}")

    rates = interleave({"paynb": ours, "baseline": lambda: baseline(frame)}, cfg.rounds,
                       warmup=cfg.warmup, check=check)
    series = interleave({"rolling": rolling, "once": ours}, cfg.rounds, warmup=cfg.warmup)
    ratio = rates["paynb"] / rates["baseline"]
    rolling_ratio = series["rolling"] / series["once"]
    return [
        Row(f"8 return_rates, {n:,} items", fmt_s(rates["paynb"]), fmt_s(rates["baseline"]),
            ratio, "<= 1.5x", "<= 1.5x baseline", ratio <= 1.5,
            ["baseline: hand-written pandas (masks, groupby per company) for the same three "
             "rates; both from the typed frame, checked equal"]),
        Row(f"8 rolling_return_rates, 365 days, {n:,} items", fmt_s(series["rolling"]),
            fmt_s(series["once"]), rolling_ratio, "< 2x", "< 2x one return_rates call",
            rolling_ratio < 2,
            ["baseline column: one return_rates call on the same frame"]),
    ]
