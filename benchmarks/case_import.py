"""Case 4: import time in fresh processes, ``import paynb`` against ``import pandas``.

Each import runs in a new interpreter (nothing cached in ``sys.modules``) and
times itself with ``perf_counter`` around the import statement, so interpreter
start-up, which both pay alike, is left out. Rounds alternate paynb, pandas.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys

from benchmarks._harness import Config, Row, fmt_s

__all__ = ["run"]

_STATEMENTS = {
    "import paynb": "import paynb",
    "first use: paynb.Client": "import paynb; paynb.Client",
    # A client built (from the environment, so the statement does not depend on the
    # constructor's signature); it connects to nothing until its first request.
    "first use: a client built": "import paynb; paynb.Client.from_env(journal=None)",
    "import pandas": "import pandas",
}
_ENV = {"PAYNB_BASE_URL": "http://127.0.0.1:9", "PAYNB_AUTH_URL": "http://127.0.0.1:9",
        "PAYNB_COMPANY_CODE": "DEMO1", "PAYNB_CLIENT_ID": "id", "PAYNB_CLIENT_SECRET": "secret",
        "PAYNB_USERNAME": "user", "PAYNB_PASSWORD": "password"}


def _time_import(statement: str) -> float:
    code = ("import time; t = time.perf_counter(); " + statement +
            "; print(time.perf_counter() - t)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env={**os.environ, **_ENV})
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
    targets = {"import paynb": 1.2, "first use: paynb.Client": 1.1,
               "first use: a client built": 1.1}
    for name, limit in targets.items():
        ratio = med[name] / pandas
        rows.append(Row(f"4 {name}", fmt_s(med[name]), fmt_s(pandas) + " (import pandas)",
                        ratio, "", f"<= {limit}x pandas", ratio <= limit))
    rows[-1].notes.append("a client needs requests and pydantic; pandas and pyarrow load with "
                          "the first frame, the models' validators on the first check")
    return rows
