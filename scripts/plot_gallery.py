"""Render every paynb.plots chart to docs/img/plots/*.png (the images of docs/plots.md).

Usage::

    .venv/bin/python scripts/plot_gallery.py [--out docs/img/plots] [--items 20000]

The data are sandbox-like demo items: when the embedded sandbox can be served,
its seeded ACH items and NOCs are listed through the client; otherwise (or with
``--synthetic``) the same kind of records is drawn here from a fixed seed, so the
images are reproducible.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from paynb import frames, plots
from paynb.sandbox import processing

logger = logging.getLogger("paynb.gallery")

ROOT = Path(__file__).resolve().parent.parent


def synthetic_records(n: int, seed: int = 7) -> tuple[list[dict], list[dict]]:
    """ACH records and NOCs shaped like the sandbox's, over the last 16 weeks."""
    rng = np.random.default_rng(seed)
    end = pd.Timestamp("2026-11-20T00:00:00Z")
    received = end - pd.to_timedelta(rng.uniform(0, 112, n), unit="D")
    # Returns creep up over the period (a trend worth seeing) and avoid weekends.
    age = (end - received) / pd.Timedelta(days=112)
    u = rng.uniform(size=n)
    status = np.where(u < 0.05 + 0.07 * (1 - age), "R",
                      np.where(u < 0.14, "I", np.where(u < 0.17, "B", np.where(
                          u < 0.22, "V", np.where(u < 0.55, "S", "W")))))
    lag = pd.to_timedelta(rng.integers(1, 6, n), unit="D")
    return_date = received + lag
    weekend = return_date.day_of_week >= 5
    return_date = return_date.where(~weekend, return_date + pd.Timedelta(days=2))
    # The sandbox's own draws of return and change codes (paynb.sandbox.processing.Config).
    config = processing.Config()
    reasons = list(config.return_code_weights)
    weights = np.array(list(config.return_code_weights.values()), dtype=float)
    reason = rng.choice(reasons, n, p=weights / weights.sum())
    amounts = np.round(rng.lognormal(5, 1, n), 2)
    kinds = rng.choice(["Debit", "Credit"], n, p=[0.7, 0.3])
    records = []
    for i in range(n):
        returned = status[i] in "RIB"
        records.append({
            "achItemId": i + 1, "companyCode": "DEMO1", "yourReferenceNumber": f"DEMO-{i + 1:06d}",
            "bankAccountNumber": f"{1000000 + i * 7919 % 9000000}", "amount": float(amounts[i]),
            "achTransactionType": str(kinds[i]), "itemStatus": str(status[i]),
            "returnDate": return_date[i].isoformat() if returned else None,
            "returnReason": str(reason[i]) if status[i] == "R" else None,
            "receivedDateTime": received[i].isoformat(),
        })
    noc_weights = np.array(list(config.noc_code_weights.values()), dtype=float)
    noc_codes = rng.choice(list(config.noc_code_weights), max(1, n // 50),
                           p=noc_weights / noc_weights.sum())
    nocs = [{"nocId": i + 1, "achItemId": i * 37 + 1, "changeCode": str(c),
             "nocDate": (end - pd.Timedelta(days=int(i % 100))).isoformat()}
            for i, c in enumerate(noc_codes)]
    return records, nocs


def sandbox_frames(items: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """ACH items and NOCs listed from a freshly seeded embedded sandbox."""
    from paynb import sandbox

    with sandbox.serve(port=0, seed_items=items) as sb:
        client = sb.connect(journal=None)
        return client.ach.list(progress=False), client.nocs.list(progress=False)


def render(ach: pd.DataFrame, nocs: pd.DataFrame, out: Path) -> list[Path]:
    """Draw each chart and save it; returns the files written."""
    out.mkdir(parents=True, exist_ok=True)
    returns = ach[ach["itemStatus"].isin(plots.RETURN_STATUSES)]
    charts = {
        "status_summary": lambda ax: plots.status_summary(ach, ax),
        "status_summary_amount_by_type": lambda ax: plots.status_summary(
            returns, ax, by="achTransactionType", value="amount"),
        "return_trend": lambda ax: plots.return_trend(ach, freq="W", ax=ax),
        "return_trend_reasons_line": lambda ax: plots.return_trend(
            ach, freq="M", by="returnReason", kind="line", top=4, ax=ax),
        "return_rate": lambda ax: plots.return_rate(ach, freq="W", ax=ax),
        "return_reasons": lambda ax: plots.return_reasons(ach, top=8, ax=ax),
        "noc_reasons": lambda ax: plots.return_reasons(nocs, top=8, ax=ax),
        "returns_calendar": lambda ax: plots.returns_calendar(ach, ax=ax),
        "empty": lambda ax: plots.return_trend(frames.empty_frame("ach"), ax=ax),
    }
    sizes = {"return_reasons": (8, 4.6), "noc_reasons": (8, 4.6), "returns_calendar": (10, 3.6),
             "empty": (6, 3)}
    written = []
    for name, draw in charts.items():
        fig, ax = plt.subplots(figsize=sizes.get(name, (8, 4.2)), layout="constrained")
        try:
            draw(ax)
            path = out / f"{name}.png"
            fig.savefig(path, dpi=100)
            written.append(path)
        finally:
            plt.close(fig)
    return written


def main() -> None:
    """Render the gallery."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "plots")
    parser.add_argument("--items", type=int, default=20_000, help="ACH items to seed")
    parser.add_argument("--synthetic", action="store_true", help="do not use the sandbox")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    ach = nocs = None
    if not args.synthetic:
        try:
            ach, nocs = sandbox_frames(args.items)
            logger.info("data: %d ACH items, %d NOCs from the sandbox", len(ach), len(nocs))
        except Exception as error:  # the gallery still renders without a working sandbox
            logger.warning("sandbox unavailable (%s); using synthetic records", error)
    if ach is None or ach.empty:
        records, noc_records = synthetic_records(args.items)
        ach, nocs = frames.to_frame(records, "ach"), frames.to_frame(noc_records, "noc")
        logger.info("data: %d synthetic ACH items, %d NOCs", len(ach), len(nocs))
    for path in render(ach, nocs, args.out):
        logger.info("wrote %s", path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


if __name__ == "__main__":
    main()
