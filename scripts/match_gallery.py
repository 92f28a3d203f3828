"""Render MatchResult.plot() to docs/img/matching/match_result.png (the image of
docs/matching.md).

Usage::

    .venv/bin/python scripts/match_gallery.py [--out docs/img/matching] [--items 50000]

As notebook 09 at the demo's size: the embedded sandbox's seeded demo data (seed 1,
``DEMO_ITEMS`` by default), its ACH items listed through the client, the demo ledger
planted for them (seed 7) and matched as the notebook matches it.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

import paynb
from paynb import sandbox
from paynb.matching import expected_ledger

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "matching")
    parser.add_argument("--items", type=int, default=sandbox.DEMO_ITEMS)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with sandbox.serve(port=0, seed_items=args.items, seed=1) as sb, \
            sb.connect(journal=None) as client:
        items = client.ach.list(progress=False)
    planted = expected_ledger(items, seed=7)
    result = paynb.match(planted.ledger, items, columns=planted.columns,
                         amount_tolerance=planted.amount_tolerance, progress=False)
    fig, ax = plt.subplots(figsize=(8, 4.5), layout="constrained")
    result.plot(ax=ax)
    path = args.out / "match_result.png"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(path)  # noqa: T201  (a command-line tool reports what it wrote)


if __name__ == "__main__":
    main()
