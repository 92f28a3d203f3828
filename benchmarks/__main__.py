"""``python -m benchmarks [--quick] [--only CASE[,CASE]] [--rounds N] [--markdown PATH]
[--at-50m]``."""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import traceback
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import metadata

from benchmarks import (
    case_compliance,
    case_excel,
    case_history,
    case_import,
    case_list,
    case_match,
    case_memory,
    case_monitor,
    case_plots,
    case_sandbox,
    case_scale,
    case_validation,
)
from benchmarks._harness import Config, Row, render

CASES: dict[str, tuple[str, Callable[[Config], list[Row]]]] = {
    "1": ("list-latency", case_list.run_latency_bound),
    "2": ("list-cpu", case_list.run_cpu_bound),
    "2f": ("frames", case_list.run_frames),
    "3": ("memory", case_memory.run),
    "4": ("import", case_import.run),
    "5": ("validation", case_validation.run),
    "6": ("plots", case_plots.run),
    "7": ("sandbox", case_sandbox.run),
    "8": ("compliance", case_compliance.run),
    "9": ("match", case_match.run),
    "10": ("history", case_history.run),
    "11": ("excel", case_excel.run),
    "12": ("monitor", case_monitor.run),
    "13": ("scale", case_scale.run),
}


def _select(only: str | None) -> list[str]:
    if not only:
        return list(CASES)
    by_name = {name: key for key, (name, _) in CASES.items()}
    chosen = []
    for part in only.split(","):
        key = by_name.get(part.strip(), part.strip())
        if key not in CASES:
            names = ", ".join(f"{k} ({n})" for k, (n, _) in CASES.items())
            raise SystemExit(f"--only: unknown case {part!r}; choose from {names}")
        chosen.append(key)
    return chosen


#: The libraries whose version moves the figures (issue 47: case 8's ratio went from 1.5x to
#: 2.0x between pandas 2.3 and 3.1), printed beside them.
MEASURED_WITH = ("pandas", "pyarrow", "numpy", "deltalake")


def versions() -> str:
    """``pandas 3.1.1, pyarrow 26.0.1, ...``: the installed versions of :data:`MEASURED_WITH`
    (read from the installed metadata: nothing is imported)."""
    found = []
    for name in MEASURED_WITH:
        try:
            found.append(f"{name} {metadata.version(name)}")
        except metadata.PackageNotFoundError:
            found.append(f"{name} not installed")
    return ", ".join(found)


def machine() -> str:
    """One line about the machine and the versions measured."""
    memory = ""
    try:
        with open("/proc/meminfo") as info:
            kib = int(info.readline().split()[1])
        memory = f", {kib / 1024 / 1024:.0f} GiB RAM"
    except OSError:
        pass
    return (f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {os.cpu_count()} CPUs{memory}; "
            f"Python {platform.python_version()}; {versions()}; "
            f"{platform.platform()}")


def main(argv: list[str] | None = None) -> int:
    """Run the chosen cases and print one table; exit 1 if a case failed to run, 2 if a
    figure missed its target (a ``FAIL`` line each; not with ``--quick``)."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes and one round: a smoke test, not a measurement")
    parser.add_argument("--only", metavar="CASE[,CASE]",
                        help="cases by number or name: " + ", ".join(
                            f"{k}={n}" for k, (n, _) in CASES.items()))
    parser.add_argument("--rounds", type=int, help="interleaved rounds per case (default 5)")
    parser.add_argument("--markdown", metavar="PATH", help="also write the table as Markdown")
    parser.add_argument("--at-50m", action="store_true",
                        help="case 13 also at 50,000,000 items (a grown store of GBs)")
    parser.add_argument("--engines", metavar="NAME[,NAME]",
                        help="case 13: the other engines to run beside paynb "
                             f"({', '.join(case_scale.ENGINES)}; default all); its "
                             "baselines, deltalake for the reads and DuckDB for the "
                             "figures, always run")
    args = parser.parse_args(argv)
    engines = None
    if args.engines is not None:
        engines = frozenset(name.strip() for name in args.engines.split(",") if name.strip())
        if unknown := engines - set(case_scale.ENGINES):
            parser.error(f"--engines: {', '.join(sorted(unknown))} is not one of "
                         f"{', '.join(case_scale.ENGINES)}")
    cfg = Config(quick=args.quick, rounds=args.rounds or (1 if args.quick else 5),
                 huge=args.at_50m, engines=engines)
    rows: list[Row] = []
    failed = False
    began, load = time.perf_counter(), os.getloadavg()[0]
    try:
        for key in _select(args.only):
            name, run = CASES[key]
            print(f"case {key} ({name}) ...", file=sys.stderr, flush=True)
            case_began = time.perf_counter()
            try:
                rows += run(cfg)
            except Exception as exc:  # one broken case must not hide the others' figures
                failed = True
                traceback.print_exc()
                rows.append(Row(f"{key} {name}", f"FAILED: {type(exc).__name__}: {exc}"[:70]))
            print(f"case {key} done in {time.perf_counter() - case_began:.1f} s",
                  file=sys.stderr, flush=True)
    finally:
        cfg.sandboxes.close()
    header = machine() + f"; {cfg.rounds} rounds{' (quick)' if cfg.quick else ''}; " \
        f"took {time.perf_counter() - began:.0f} s; load average (1 minute) " \
        f"{load:.1f} at the start, {os.getloadavg()[0]:.1f} at the end"
    print(header)
    print(render(rows))
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(header + "\n\n" + render(rows, markdown=True) + "\n")
    if failed:
        return 1
    # A figure past its target fails the run, loudly (quick sizes measure nothing).
    missed = [row for row in rows if row.met is False]
    for row in missed:
        ratio = "" if row.ratio is None else f" (ratio {row.ratio:.3g})"
        print(f"FAIL {row.case}: {row.paynb} vs {row.baseline}{ratio}, target {row.target}",
              file=sys.stderr)
    return 2 if missed and not cfg.quick else 0


if __name__ == "__main__":
    raise SystemExit(main())
