"""The dates of a side as ``datetime64[D]``: date and time columns, and dates written as text
in the formats docs/matching.md lists, read with explicit formats only (never pandas' guess,
which may read ``03/04/2026`` either way): day or month first is decided for the whole column,
by ``dayfirst=`` or by the one order all its values allow."""

from __future__ import annotations

import datetime as dt
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

__all__ = ["ACCEPTED", "arrow_text", "check_dayfirst", "days_of", "row_label"]

#: What the error for a value that is no date lists.
ACCEPTED = ("2026-11-19 (ISO 8601, a time and zone allowed), 2026/11/19, 20261119, "
            "19.11.2026 or 11/19/2026 (day or month first: dayfirst=), "
            "19 Nov 2026 or Nov 19, 2026")

_ISO = (r"\d{4}-\d{2}-\d{2}"
        r"(?:[T ]\d{2}(?::\d{2}(?::\d{2}(?:[.,]\d+)?)?)?\s*(?:Z|[+-]\d{2}(?::?\d{2})?)?)?")
_YEAR_FIRST = (r"(?P<y>\d{4})(?P<sep>[/.])(?P<m>\d{1,2})(?P=sep)(?P<d>\d{1,2})"
               r"|(?P<cy>\d{4})(?P<cm>\d{2})(?P<cd>\d{2})")
_NUMERIC = (r"(?P<a>\d{1,2})(?P<sep>[./-])(?P<b>\d{1,2})(?P=sep)(?P<year>\d{4}|\d{2})"
            r"(?:[ T]+\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:\s*[AaPp][Mm])?)?")
_NAMED_FORMATS = ("%d %b %Y", "%d %B %Y", "%d-%b-%Y", "%d-%B-%Y", "%d-%b-%y", "%b %d, %Y",
                  "%B %d, %Y", "%b %d %Y", "%B %d %Y")


def check_dayfirst(dayfirst: Any) -> bool | None:
    """``dayfirst=`` checked: True, False or None."""
    if dayfirst is not None and not isinstance(dayfirst, bool):
        raise TypeError(f"dayfirst must be True (19.11.2026), False (11/19/2026) or None "
                        f"(the order the values allow), got {dayfirst!r}")
    return dayfirst


def row_label(frame: pd.DataFrame | pd.Series, position: int) -> str:
    """How an error names row ``position`` of an input: by its index label."""
    label = frame.index[position]
    return f"row {label!r}" if not isinstance(label, int | np.integer) else f"row {label}"


def _error(values: pd.Series, which: str, column: str, position: int, why: str) -> ValueError:
    return ValueError(f"{which} {row_label(values, position)}, column {column!r}: "
                      f"{values.iloc[position]!r} {why}")


def days_of(values: pd.Series, which: str, column: str, dayfirst: bool | None = None
            ) -> np.ndarray:
    """``values`` as ``datetime64[D]`` (UTC days of zoned times); missing stays NaT, and a
    value that is no date is an error naming its row and the formats read."""
    dtype = values.dtype
    if isinstance(dtype, pd.ArrowDtype) and (pa.types.is_timestamp(dtype.pyarrow_dtype)
                                             or pa.types.is_date(dtype.pyarrow_dtype)):
        array = pa.array(values)
        if pa.types.is_timestamp(array.type) and array.type.tz is not None:
            array = array.cast(pa.timestamp(array.type.unit))  # the UTC wall clock
        return pc.cast(array, pa.date32()).to_numpy(zero_copy_only=False).astype(
            "datetime64[D]")
    if isinstance(dtype, pd.DatetimeTZDtype):
        values = values.dt.tz_convert("UTC").dt.tz_localize(None)
        dtype = values.dtype
    if pd.api.types.is_datetime64_dtype(dtype):
        return values.to_numpy().astype("datetime64[D]")
    fast = _iso_days(values)
    if fast is not None:
        return fast
    return _general_days(values, which, column, dayfirst)


def arrow_text(values: pd.Series) -> pa.Array:
    """``values`` as one Arrow string array (for pyarrow compute: vectorised, RE2)."""
    array = pa.array(values.astype("string[pyarrow]").array)
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _iso_days(values: pd.Series) -> np.ndarray | None:
    """Text dates all written ``YYYY-MM-DD`` (as exports and ``to_csv`` write them), read
    by Arrow at once; None for anything else."""
    if not (pd.api.types.is_string_dtype(values.dtype) or values.dtype == object):
        return None
    try:
        text = arrow_text(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return None
    if text.null_count == len(text) or not pc.all(
            pc.match_substring_regex(text, r"^\d{4}-\d{2}-\d{2}$")).as_py():
        return None
    try:
        days = pc.cast(text, pa.date32())
    except pa.ArrowInvalid:  # such as 2026-02-30: the general reading names the row
        return None
    return days.to_numpy(zero_copy_only=False).astype("datetime64[D]")


def _general_days(values: pd.Series, which: str, column: str, dayfirst: bool | None
                  ) -> np.ndarray:
    """Dates of any accepted kind, objects and text mixed: each distinct text read once."""
    if isinstance(values.dtype, pd.StringDtype):  # text only, as read_csv gives it
        codes, uniques = pd.factorize(values.str.strip().replace("", None))
    else:
        codes, uniques = _objects_as_text(values, which, column)
    result = np.full(len(values), np.datetime64("NaT"), dtype="datetime64[D]")
    if not len(uniques):
        return result
    days = _text_days(pd.Series(np.asarray(uniques, dtype=object), dtype=object), dayfirst)
    if isinstance(days, tuple):  # (the distinct text that is no date, why)
        where, why = days
        raise _error(values, which, column, int(np.argmax(codes == where)), why)
    present = codes >= 0
    result[present] = days[codes[present]]
    return result


def _objects_as_text(values: pd.Series, which: str, column: str
                     ) -> tuple[np.ndarray, list[str]]:
    """Codes into distinct texts (-1: missing) of a column of objects: text stripped, a
    date or date-time object as its day (a zoned one's UTC day) in ISO 8601."""
    seen: dict[str, int] = {}
    codes = np.full(len(values), -1, dtype=np.int64)
    for position, value in enumerate(values.to_numpy(dtype=object).tolist()):
        if value is None or value is pd.NaT or value is pd.NA or (
                isinstance(value, float) and value != value):
            continue
        if isinstance(value, dt.datetime | np.datetime64):
            stamp = pd.Timestamp(value)
            text = (stamp.tz_convert("UTC") if stamp.tzinfo is not None else stamp
                    ).date().isoformat()
        elif isinstance(value, dt.date):
            text = value.isoformat()
        elif isinstance(value, str):
            text = value.strip()
            if not text:
                continue
        else:
            raise _error(values, which, column, position, f"is not a date (a "
                         f"{type(value).__name__}); dates are read as {ACCEPTED}")
        codes[position] = seen.setdefault(text, len(seen))
    return codes, list(seen)


def _text_days(text: pd.Series, dayfirst: bool | None
               ) -> np.ndarray | tuple[int, str]:
    """The day of each distinct text, or (the position of one that is no date, why)."""
    days = np.full(len(text), np.datetime64("NaT"), dtype="datetime64[D]")
    done = np.zeros(len(text), dtype=bool)
    iso = text.str.fullmatch(_ISO).to_numpy(dtype=bool)
    if iso.any():
        stamps = pd.to_datetime(text[iso], format="ISO8601", utc=True, errors="coerce")
        days[iso] = stamps.dt.tz_localize(None).to_numpy().astype("datetime64[D]")
        done |= iso
    year_first = text.str.extract(f"^(?:{_YEAR_FIRST})$")
    found = year_first["y"].notna() | year_first["cy"].notna()
    if found.any():
        parts = year_first[found]
        days[found.to_numpy()] = _ymd(parts["y"].fillna(parts["cy"]),
                                      parts["m"].fillna(parts["cm"]),
                                      parts["d"].fillna(parts["cd"]))
        done |= found.to_numpy()
    numeric = text.str.extract(f"^(?:{_NUMERIC})$")
    chosen = (numeric["a"].notna() & ~pd.Series(done)).to_numpy()
    if chosen.any():
        answer = _day_month(text, numeric[chosen], chosen, dayfirst)
        if isinstance(answer, tuple):
            return answer
        days[chosen] = answer
        done |= chosen
    for form in _NAMED_FORMATS:
        left = ~done
        if not left.any():
            break
        stamps = pd.to_datetime(text[left], format=form, errors="coerce")
        read = stamps.notna().to_numpy()
        positions = np.flatnonzero(left)[read]
        days[positions] = stamps[read].to_numpy().astype("datetime64[D]")
        done[positions] = True
    bad = np.flatnonzero(~done | np.isnat(days))
    if len(bad):
        return int(bad[0]), f"is not a date; dates are read as {ACCEPTED}"
    return days


def _ymd(year: pd.Series, month: pd.Series, day: pd.Series) -> np.ndarray:
    """Days of number parts (text); NaT where the parts make no date (2026-02-30)."""
    stamps = pd.to_datetime(pd.DataFrame({"year": year.astype(int), "month": month.astype(int),
                                          "day": day.astype(int)}), errors="coerce")
    return stamps.to_numpy().astype("datetime64[D]")


def _day_month(text: pd.Series, parts: pd.DataFrame, chosen: np.ndarray,
               dayfirst: bool | None) -> np.ndarray | tuple[int, str]:
    """Dates written day and month before the year, read in one order for the column."""
    year = parts["year"].astype(int)
    year = year.where(parts["year"].str.len() == 4, year + np.where(year < 69, 2000, 1900))
    year = year.astype(str)
    day_first = _ymd(year, parts["b"], parts["a"])
    month_first = _ymd(year, parts["a"], parts["b"])
    positions = np.flatnonzero(chosen)
    dm_ok, md_ok = ~np.isnat(day_first), ~np.isnat(month_first)
    orders = "day first (19.11.2026)", "month first (11/19/2026)"
    if dayfirst is not None:
        ok, days = (dm_ok, day_first) if dayfirst else (md_ok, month_first)
        if not ok.all():
            return int(positions[np.argmin(ok)]), (
                f"is not a date read {orders[0 if dayfirst else 1]} (dayfirst={dayfirst})")
        return days
    if dm_ok.all() and md_ok.all():
        differ = day_first != month_first
        if differ.any():
            return int(positions[np.argmax(differ)]), (
                "could be day first or month first, and so could every date of the column; "
                "say which: dayfirst=True (19.11.2026) or dayfirst=False (11/19/2026)")
        return day_first
    if dm_ok.all():
        return day_first
    if md_ok.all():
        return month_first
    only_dm, only_md = dm_ok & ~md_ok, md_ok & ~dm_ok
    if only_dm.any() and only_md.any():
        return int(positions[np.argmax(only_md)]), (
            f"is month first while {text.iloc[positions[np.argmax(only_dm)]]!r} is day first: "
            f"a column is read in one order (dayfirst=)")
    return int(positions[np.argmin(dm_ok | md_ok)]), f"is not a date; dates are read as {ACCEPTED}"
