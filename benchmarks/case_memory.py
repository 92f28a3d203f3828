"""Case 3: memory of a million-item frame, paynb's typed frame against ``pd.DataFrame``.

Each side builds its frame from the same wire records in a fresh child process
(``python -m benchmarks.case_memory paynb|baseline N``), so neither inherits the
other's heap. The child resets the kernel's resident high-water mark once the
records exist (``/proc/self/clear_refs``), so the peak it reports is the extra
memory frame building needs on top of the records themselves. tracemalloc would
miss pyarrow's buffers, which come from its own allocator.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from benchmarks._harness import Config, Row, fmt_bytes

__all__ = ["run"]


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def _child(mode: str, n: int) -> dict[str, Any]:
    import gc
    import time

    import pandas as pd

    from benchmarks._data import ach_records
    from benchmarks._paynb import build_frame

    build_frame([])  # import paynb's frame machinery before measuring
    start_kib = _status_kib("VmRSS")
    records = ach_records(n)
    gc.collect()
    before_kib = _status_kib("VmRSS")
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")  # reset VmHWM to the current RSS
        reset = True
    except OSError:
        reset = False
    began = time.perf_counter()
    frame = build_frame(records) if mode == "paynb" else pd.DataFrame(records)
    seconds = time.perf_counter() - began
    peak_kib = _status_kib("VmHWM")
    frame_bytes = int(frame.memory_usage(deep=True).sum())
    del records
    gc.collect()
    after_kib = _status_kib("VmRSS")
    return {"rows": len(frame), "frame_bytes": frame_bytes, "records_kib": before_kib - start_kib,
            "peak_extra_kib": peak_kib - before_kib, "reset": reset, "seconds": seconds,
            "kept_kib": after_kib - start_kib}


def _measure(mode: str, n: int) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "benchmarks.case_memory", mode, str(n)],
                          capture_output=True, text=True, check=False)
    if done.returncode:
        raise RuntimeError(f"memory child {mode} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run(cfg: Config) -> list[Row]:
    """Frame bytes per row and peak build memory for 1,000,000 items, each side once."""
    n = cfg.size(1_000_000, 20_000)
    # Each side in a fresh process; memory is deterministic enough that one run each tells it.
    paynb = _measure("paynb", n)
    base = _measure("baseline", n)
    per_row = paynb["frame_bytes"] / paynb["rows"]
    base_per_row = base["frame_bytes"] / base["rows"]
    kib = 1024
    return [
        Row(f"3 frame bytes/row, {n:,} items", f"{per_row:.0f} B", f"{base_per_row:.0f} B",
            per_row / base_per_row, "", "smaller", per_row < base_per_row,
            [f"frames: paynb {fmt_bytes(paynb['frame_bytes'])}, pd.DataFrame "
             f"{fmt_bytes(base['frame_bytes'])} (memory_usage(deep=True)); the wire records "
             f"themselves take {fmt_bytes(paynb['records_kib'] * kib)} as Python dicts"]),
        Row(f"3 peak memory building, {n:,} items", fmt_bytes(paynb["peak_extra_kib"] * kib),
            fmt_bytes(base["peak_extra_kib"] * kib),
            paynb["peak_extra_kib"] / max(base["peak_extra_kib"], 1), "", "", None,
            [f"resident high-water mark above the records while building (VmHWM"
             f"{'' if paynb['reset'] else ', NOT reset: includes making the records'}); "
             f"build time paynb {paynb['seconds']:.2f} s, pd.DataFrame {base['seconds']:.2f} s"]),
    ]


if __name__ == "__main__":
    print(json.dumps(_child(sys.argv[1], int(sys.argv[2]))))
