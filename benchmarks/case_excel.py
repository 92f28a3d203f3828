"""Case 11: Excel against CSV of the same frames, side by side.

- *write*: paynb's Excel writer (``paynb._excel.write_excel``: columns prepared in
  pandas/Arrow by paynb's rules, amounts as numbers, dates where a column holds only
  midnights, then written in Rust by rustpy-xlsxwriter) against ``DataFrame.to_csv`` of
  the same typed frame of 40,000 ACH items (the demo's size);
- *read*: the document's bytes to paynb's typed frame, as an export is read: fastexcel
  (every cell as text) then the frame builder, against ``read_csv(dtype=str)`` then the
  frame builder;
- *export*: ``client.ach.export("xlsx")`` against ``export("csv")`` of the same 40,000
  items from a sandbox (the sandbox writing the document included).
"""

from __future__ import annotations

import io
import math
from typing import Any

import pandas as pd

from benchmarks._data import ach_records
from benchmarks._harness import Config, Row, fmt_s, interleave
from benchmarks._paynb import paynb_client
from paynb import frames
from paynb._excel import excel_bytes, read_export_sheet

__all__ = ["run"]


def _rows(expected: int) -> Any:
    def check(name: str, result: Any) -> None:
        if isinstance(result, pd.DataFrame) and len(result) != expected:
            raise AssertionError(f"{name} read {len(result)} rows, expected {expected}")
    return check


def _csv_frame(document: bytes) -> pd.DataFrame:
    return frames.to_frame(pd.read_csv(io.BytesIO(document), dtype=str,
                                       keep_default_na=False, na_values=[""]), "ach")


def run(cfg: Config) -> list[Row]:
    """Write, read and export medians, xlsx over CSV."""
    n = cfg.size(40_000, 500)
    frame = frames.to_frame(ach_records(n), "ach")
    cells = f"{n:,} rows x {len(frame.columns)} columns, {int(frame.notna().sum().sum()):,} cells"

    def to_csv() -> bytes:
        out = io.BytesIO()
        frame.to_csv(out, index=False)
        return out.getvalue()

    write = interleave({"xlsx": lambda: excel_bytes({"ach": frame}), "csv": to_csv},
                       cfg.rounds, warmup=cfg.warmup)
    xlsx_document, csv_document = excel_bytes({"ach": frame}), to_csv()
    read = interleave({"xlsx": lambda: frames.to_frame(read_export_sheet(xlsx_document, "ach"),
                                                       "ach"),
                       "csv": lambda: _csv_frame(csv_document)},
                      cfg.rounds, warmup=cfg.warmup, check=_rows(n))
    write_ratio, read_ratio = write["xlsx"] / write["csv"], read["xlsx"] / read["csv"]
    rows = [
        Row(f"11 write {n:,} ACH items: xlsx vs CSV", fmt_s(write["xlsx"]),
            fmt_s(write["csv"]) + " (to_csv)", write_ratio, "", "<= 3x CSV",
            write_ratio <= 3,
            [f"{cells}; xlsx {len(xlsx_document) / 2**20:.1f} MiB, CSV "
             f"{len(csv_document) / 2**20:.1f} MiB; columns prepared in pandas/Arrow, "
             f"cells written in Rust (rustpy-xlsxwriter)"]),
        Row(f"11 read {n:,} ACH items into a typed frame: xlsx vs CSV", fmt_s(read["xlsx"]),
            fmt_s(read["csv"]) + " (read_csv)", read_ratio, "", "<= 2x CSV",
            read_ratio <= 2, ["both then typed by paynb.frames.to_frame; the xlsx read as an "
                              "export is (typed cells where they type alike)"]),
    ]
    rows.append(_export(cfg, n))
    return rows


def _export(cfg: Config, n: int) -> Row:
    from paynb.sandbox.seed import COMPANIES

    share = dict(COMPANIES)["DEMO1"]
    served = cfg.sandboxes.get(math.ceil(n / share * 1.03))
    client = paynb_client(served)
    counts: dict[str, int] = {}

    def same_rows(name: str, result: Any) -> None:
        counts[name] = len(result)
        if len(set(counts.values())) > 1:
            raise AssertionError(f"the exports differ in rows: {counts}")

    try:
        medians = interleave({"xlsx": lambda: client.ach.export("xlsx"),
                              "csv": lambda: client.ach.export("csv")},
                             max(1, min(cfg.rounds, 3)), warmup=cfg.warmup, check=same_rows)
    finally:
        client.close()
    ratio = medians["xlsx"] / medians["csv"]
    return Row(f"11 client.ach.export of {counts['csv']:,} items: xlsx vs CSV",
               fmt_s(medians["xlsx"]), fmt_s(medians["csv"]) + " (csv)", ratio, "", "", None,
               ["both include the sandbox writing the document and paynb typing it"])
