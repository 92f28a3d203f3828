"""Case 4: import time in fresh processes, ``import paynb`` against ``import pandas``.

Each import runs in a new interpreter (nothing cached in ``sys.modules``) and
times itself with ``perf_counter`` around the import statement, so interpreter
start-up, which both pay alike, is left out. Rounds alternate paynb, pandas.
"""

from __future__ import annotations

import statistics
import subprocess
import sys

from benchmarks._harness import Config, Row, fmt_s

__all__ = ["run"]

_STATEMENTS = {
    "import paynb": "import paynb",
    "first use: paynb.Client": "import paynb; paynb.Client",
    "import pandas": "import pandas",
}


def _time_import(statement: str) -> float:
    code = ("import time; t = time.perf_counter(); " + statement +
            "; print(time.perf_counter() - t)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    return float(done.stdout.strip().splitlines()[-1])


def run(cfg: Config) -> list[Row]:
    """``import paynb`` must stay light: heavy modules load on first use."""
    rounds = 1 if cfg.quick else cfg.rounds * 2
    samples: dict[str, list[float]] = {name: [] for name in _STATEMENTS}
    for statement in _STATEMENTS.values() if cfg.warmup else ():  # warm the OS file cache
        _time_import(statement)
    for _ in range(rounds):
        for name, statement in _STATEMENTS.items():
            samples[name].append(_time_import(statement))
    med = {name: statistics.median(values) for name, values in samples.items()}
    pandas = med["import pandas"]
    rows = []
    for name in ("import paynb", "first use: paynb.Client"):
        ratio = med[name] / pandas
        target = "<= 1.2x pandas" if name == "import paynb" else ""
        rows.append(Row(f"4 {name}", fmt_s(med[name]), fmt_s(pandas) + " (import pandas)",
                        ratio, "", target, ratio <= 1.2 if target else None))
    rows[-1].notes.append("the client needs pandas, requests and pydantic, so its first use costs "
                          "at least an import of pandas; shown for information")
    return rows
