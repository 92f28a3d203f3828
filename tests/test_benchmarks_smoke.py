"""The benchmark harness runs end to end on tiny sizes and prints its table.

A smoke test only: ``--quick`` sizes are far too small to mean anything, and
no timing is asserted (the machine is shared with CI).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_quick_run_prints_one_table_with_every_case(tmp_path: Path) -> None:
    markdown = tmp_path / "results.md"
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick", "--markdown", str(markdown)],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-4000:]
    lines = done.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("case "))
    assert lines[header].split() == ["case", "paynb", "baseline", "ratio", "limit", "target",
                                     "met?"]
    rows = lines[header + 2:lines.index("", header)]
    cases = {row.split()[0] for row in rows}
    assert cases == {str(case) for case in range(1, 14)}
    assert not any("FAILED" in row for row in rows)
    # Every row with a target says whether it was met.
    targeted = [row for row in rows if re.search(r"(<=|<|within|smaller)", row)]
    assert targeted and all(row.rstrip().endswith(("yes", "NO")) for row in targeted)
    assert markdown.read_text().count("\n| ") == len(rows) + 1


def test_unknown_case_is_refused_naming_the_choices() -> None:
    done = subprocess.run([sys.executable, "-m", "benchmarks", "--only", "nine"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0
    assert "unknown case 'nine'" in done.stderr and "list-latency" in done.stderr


def test_the_header_names_the_versions_measured() -> None:
    # Issue 47: the same case moved from 1.5x to 2.0x between two pandas versions.
    import deltalake
    import numpy
    import pandas
    import pyarrow

    from benchmarks.__main__ import machine

    assert (f"pandas {pandas.__version__}, pyarrow {pyarrow.__version__}, "
            f"numpy {numpy.__version__}, deltalake {deltalake.__version__}") in machine()
