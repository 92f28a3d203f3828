"""Case 9: matching 100,000 expected lines against 100,000 items (about 5 % exceptions).

paynb runs ``paynb.match`` with every pass (reference, account + amount + date, the
fuzzy rules, splits and combinations) on a ledger read back from CSV (floats, as
``read_csv`` gives them); the baseline is the hand-written ``pandas.merge`` on the
reference number, which finds only the exact matches. Both report the share of the
planted matches they find; paynb must find every one.
"""

from __future__ import annotations

import io

import pandas as pd

import paynb
from benchmarks._harness import Config, Row, fmt_s, interleave

__all__ = ["run"]


def _merge(expected: pd.DataFrame, items: pd.DataFrame) -> pd.DataFrame:
    return expected.merge(items[["achItemId", "yourReferenceNumber", "amount"]],
                          left_on="Reference", right_on="yourReferenceNumber", how="inner")


def run(cfg: Config) -> list[Row]:
    """Median time of both, the share of planted matches each finds, the ratio."""
    from paynb.matching._demo import demo_items, found_matches

    n = cfg.size(100_000, 2_000)
    items = demo_items(n, seed=8)
    planted = paynb.matching.expected_ledger(items, seed=9, missing=n // 100)
    buffer = io.StringIO()
    planted.ledger.to_csv(buffer, index=False)
    buffer.seek(0)
    expected = pd.read_csv(buffer, dtype={"Reference": "string", "Account": "string",
                                          "Routing": "string"})
    wanted = {(frozenset(p.ledger_rows), frozenset(p.item_ids))
              for p in planted.planted.itertuples()}
    found: dict[str, float] = {}
    counts: dict[str, int] = {}

    def share(name: str, result: object) -> None:
        if name == "paynb":
            got = found_matches(result)
        else:
            frame = result  # type: ignore[assignment]
            got = {(frozenset((int(e),)), frozenset((int(i),))) for e, i in
                   zip(frame["row"], frame["achItemId"], strict=True)}
        found[name] = len(wanted & got) / len(wanted)
        counts[name] = len(wanted & got)
        if name == "paynb":
            # The generator plants only unambiguous matches: paynb must find every one.
            assert len(wanted & got) == len(wanted), (
                f"paynb.match found {len(wanted & got):,} of {len(wanted):,} planted matches")

    expected_rows = expected.assign(row=range(len(expected)))
    med = interleave({
        "paynb": lambda: paynb.match(expected, items, columns=planted.columns,
                                     amount_tolerance=planted.amount_tolerance,
                                     date_window=planted.date_window, progress=False),
        "baseline": lambda: _merge(expected_rows, items),
    }, cfg.rounds, warmup=cfg.warmup, check=share)
    ratio = med["paynb"] / med["baseline"]
    met = ratio <= 3 and found["paynb"] == 1.0
    return [Row(f"9 match {n:,} expected vs {n:,} items", fmt_s(med["paynb"]),
                fmt_s(med["baseline"]) + " (merge on reference)", ratio, "",
                "<= 3x merge, every planted match", met,
                [f"planted matches found: paynb {counts['paynb']:,} ({found['paynb']:.2%}), "
                 f"merge {counts['baseline']:,} ({found['baseline']:.1%}); "
                 f"{len(wanted):,} planted, "
                 f"{len(planted.missing_items):,} lines without item, "
                 f"{len(planted.extra_items):,} items without line"])]
