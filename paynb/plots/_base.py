"""What the charts of :mod:`paynb.plots` share: the statuses and colours they know, and
the helpers that check a frame, name its columns in words and count its returns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from paynb import models
from paynb._charts import CURRENCY
from paynb._time import utc_moment
from paynb.codes import (
    EXTENDED_RETURN_DAYS,
    RETURN_STATUSES,
    STATUS_COLORS,
    STATUS_NAMES,
    STATUS_ORDER,
    is_known_code,
    normalise_code,
)

if TYPE_CHECKING:
    from matplotlib.axes import Axes

__all__ = ["CURRENCY", "INSTANT_COLORS", "LOG_SCALE_BELOW", "RETURN_STATUSES", "RETURN_WINDOW_DAYS"]

INSTANT_COLORS: dict[str, str] = {"Success": "#55A868", "Failed": "#C44E52"}
"""Colours of instant card and RTP statuses (item statuses: `paynb.codes.STATUS_COLORS`)."""
LOG_SCALE_BELOW = 0.02
"""The status chart turns logarithmic when its smallest bar is under this share of its
largest: below it a linear bar is a sliver no reader sees."""
RETURN_WINDOW_DAYS = EXTENDED_RETURN_DAYS
"""Days after settlement within which a return can still come: the extended return
deadline of unauthorized consumer debits (R05, R07, R10, R11, R37...: NACHA Operating Rules,
Article Three, 60 calendar days after the settlement date; :data:`paynb.codes.EXTENDED_RETURN`);
most returns come within two banking days. The return-rate chart shades the periods
younger than this as immature."""
_IMMATURE_COLOR = "#B0B0B0"
OTHER_COLOR = "#A0A0A0"
FREQS = {"D": "day", "W": "week", "M": "month", "Q": "quarter", "Y": "year"}
SUBMISSION_DATES = ("receivedDateTime", "depositDateTime", "sendDate")
#: Columns holding NACHA codes: labelled with their meanings, unknown codes in "other".
CODE_COLUMNS = ("returnReason", "changeCode")
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def require(df: pd.DataFrame, *columns: str) -> None:
    if not isinstance(df, pd.DataFrame):
        raise TypeError(f"df must be a pandas DataFrame, not {type(df).__name__}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"df has no column {', '.join(map(repr, missing))}; "
                         "pass a DataFrame from the paynb client")


def status_column(df: pd.DataFrame) -> str:
    require(df)
    for name in ("itemStatus", "status"):
        if name in df.columns:
            return name
    raise ValueError("df has no column 'itemStatus' or 'status'; "
                     "pass a DataFrame from the paynb client")


def status_color(status: Any) -> str:
    return STATUS_COLORS.get(status) or INSTANT_COLORS.get(status) or OTHER_COLOR


def status_label(status: Any) -> str:
    name = STATUS_NAMES.get(status)
    return f"{name} ({status})" if name else str(status)


def check_freq(freq: str) -> str:
    if not isinstance(freq, str) or freq.upper() not in FREQS:
        raise ValueError(f"freq must be one of {', '.join(FREQS)}; got {freq!r}")
    return freq.upper()


def naive_utc(dates: pd.Series) -> pd.Series:
    """UTC times without their zone: how paynb's date columns already are (see frames)."""
    return dates.dt.tz_convert("UTC").dt.tz_localize(None) if dates.dt.tz is not None else dates


def periods_of(dates: pd.Series, freq: str) -> pd.Series:
    """Each UTC date's period (a naive UTC PeriodIndex-backed Series)."""
    return naive_utc(dates).dt.to_period(freq)


#: The docs' words for the columns a chart may group by that no request form names.
_COLUMN_WORDS = {"itemStatus": "status", "status": "status", "returnReason": "return reason",
                 "changeCode": "change code", "companyCode": "company", "kind": "kind",
                 "cardBrand": "card brand", "itemSource": "source",
                 "reportStatus": "report status", "requestReturnStatus": "return request status"}


def words(column: str) -> str:
    """A column in words, as the docs and forms name it: ``achTransactionType`` ->
    ``transaction type`` (the label of the request field), ``companyCode`` -> ``company``;
    a column paynb does not know stays as it is."""
    if column in _COLUMN_WORDS:
        return _COLUMN_WORDS[column]
    for model in (models.AchItem, models.RccItem, models.InstantCardTransaction,
                  models.RtpTransaction):
        for name, info in model.model_fields.items():
            if (info.alias or name) == column and info.title:
                title = info.title
                # "Transaction type" -> "transaction type"; "IAT type" keeps its capitals.
                return title if title[1:2].isupper() else title[:1].lower() + title[1:]
    return column


def heading(column: str) -> str:
    """A column in words as an axis or legend heading: ``Transaction type``."""
    text = words(column)
    return text[:1].upper() + text[1:]


def integer_amounts(df: pd.DataFrame) -> bool:
    """Whether the amounts are whole numbers in the service's unit (instant card, RTP)."""
    return bool(df.attrs.get("amountUnit")) or (
        "amount" in df.columns and pd.api.types.is_integer_dtype(df["amount"].dtype))


def amount_label(df: pd.DataFrame) -> str:
    """The amount axis: ``Amount (USD)``, or the instant kinds' unstated unit."""
    return ("Amount (wire integer, unit not stated)" if integer_amounts(df)
            else f"Amount ({CURRENCY})")


def money(number: float, whole: bool) -> str:
    """An amount for a label: ``1,234.50``, or ``1,234`` for whole-number units."""
    return f"{number:,.0f}" if whole else f"{number:,.2f}"


def code_groups(codes: pd.Series) -> pd.Series:
    """Return or change codes for grouping: trimmed and upper-cased, a code in no NACHA
    table "other" (it is summed there; its frame warned of it)."""
    codes_of = {value: normalise_code(value) for value in codes.dropna().unique()}
    return codes.map({value: (key if is_known_code(key) else "other") if key else None
                      for value, key in codes_of.items()})


def float_amounts(df: pd.DataFrame) -> pd.Series:
    """Amounts as floats for drawing (exact decimals stay in the frame)."""
    require(df, "amount")
    amount = df["amount"]
    if isinstance(amount.dtype, pd.ArrowDtype):
        import pyarrow as pa

        # pyarrow casts decimals in compiled code; pandas' astype goes through
        # Decimal objects, about 100 times slower on a million rows.
        floats = pa.chunked_array(pa.array(amount.array)).cast(pa.float64())
        return pd.Series(floats.to_numpy(), index=amount.index, name="amount")
    return amount.astype("float64")


def ordered(values: Sequence[Any]) -> list[Any]:
    """Statuses in lifecycle order, then any others alphabetically."""
    rank = {s: i for i, s in enumerate((*STATUS_ORDER, *INSTANT_COLORS))}
    return sorted(values, key=lambda s: (rank.get(s, len(rank)), str(s)))


def returned_rows(df: pd.DataFrame) -> pd.DataFrame:
    """Rows that were returned, invalidated or blocked, with a return date."""
    status = status_column(df)
    require(df, "returnDate")
    picked = df["returnDate"].notna() & df[status].isin(RETURN_STATUSES)
    return df.loc[picked, [status, "returnDate", *(
        c for c in ("returnReason",) if c in df.columns)]]


def as_of_moment(as_of: Any) -> pd.Timestamp:
    """The moment the data describes, as a zone-less UTC Timestamp (default: now)."""
    moment = pd.Timestamp.now(tz="UTC") if as_of is None else utc_moment(as_of, "as_of")
    return pd.Timestamp(moment).tz_localize(None)


def shade_immature(ax: Axes, periods: pd.PeriodIndex, open_until: pd.DatetimeIndex,
                    as_of: pd.Timestamp, xlabel: str, why: str) -> int:
    """Shade the periods whose counts can still grow (``open_until`` after ``as_of``) and
    add a note under the chart; returns how many periods are shaded."""
    immature = np.asarray(open_until > as_of)
    if not immature.any():
        ax.set_xlabel(xlabel)
        return 0
    first = int(np.argmax(immature))
    start = periods[first].start_time
    end = periods[-1].end_time
    # A collection, not a patch: ax.patches stay the bars, one per count.
    shade = ax.fill_between([start, end], 0, 1, transform=ax.get_xaxis_transform(),
                            color=_IMMATURE_COLOR, alpha=0.25, zorder=0, linewidth=0)
    shade.set_gid("paynb-immature")
    # Upright along the shade: it fits a single narrow period and never runs into the legend.
    ax.text(start + (end - start) / 2, 0.97, "immature", transform=ax.get_xaxis_transform(),
            ha="center", va="top", rotation=90, fontsize="small", color="#555555",
            gid="paynb-immature-label")
    days = int(np.ceil((open_until[-1] - as_of) / pd.Timedelta(days=1)))
    # Short lines: the note sits under the chart, centred like the axis label.
    ax.set_xlabel(f"{xlabel}\nShaded: immature, returns can still come for "
                  f"{days} more day{'s' if days != 1 else ''}\n({why}): these values will rise.")
    return int(immature.sum())


def top_values(series: pd.Series, top: int) -> pd.Series:
    """Values beyond the ``top`` most frequent become "other" (as "other" itself is)."""
    counts = series[series != "other"].value_counts()
    if len(counts) <= top:
        return series
    keep = set(counts.index[:top])
    return series.where(series.isin(keep) | series.isna(), "other")
