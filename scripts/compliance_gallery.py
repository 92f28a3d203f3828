"""Render the compliance charts to docs/img/compliance/*.png (the images of docs/compliance.md).

Usage::

    .venv/bin/python scripts/compliance_gallery.py [--out docs/img/compliance] [--items 20000]

The items are the embedded sandbox's seeded demo data (seed 1), listed through the
client, measured as of the sandbox's today.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

from paynb import plots, sandbox

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "compliance")
    parser.add_argument("--items", type=int, default=20_000)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with sandbox.serve(port=0, seed_items=args.items, seed=1) as sb, \
            sb.connect(journal=None) as client:
        items = client.ach.list(progress=False)
    charts = {
        "return_rate_thresholds.png": lambda ax: plots.return_rate_thresholds(items, ax),
        "unauthorized_rate.png": lambda ax: plots.return_rate_thresholds(
            items, ax, category="unauthorized"),
        "return_exposure.png": lambda ax: plots.return_exposure(items, ax),
    }
    for name, draw in charts.items():
        fig, ax = plt.subplots(figsize=(10, 4.5), layout="constrained")
        draw(ax)
        fig.savefig(args.out / name, dpi=96)
        plt.close(fig)


if __name__ == "__main__":
    main()
