"""Answers of the service -> typed, masked pandas DataFrames.

Two steps, both tolerant of whatever the real service sends (the spec leaves
most response shapes "not shown"):

1. :func:`extract_records` finds the records in a decoded answer: a bare JSON
   array, or an object holding them under any of the usual keys
   (``transactions``, ``items``, ``data``, ``results``, ``value``, ``nocs`` ...,
   any casing), or a single record, bare or wrapped (``transaction``).
   :func:`extract_record` does the same for answers of one item, and
   :func:`list_metadata` returns the list's totals (``total``,
   ``creditAmount``, ``debitAmount`` ...).
2. :func:`to_frame` turns records into an analyst-ready DataFrame whose columns
   and dtypes depend only on the kind (``ach``, ``rcc``, ``instant``, ``rtp``,
   ``noc``), never on the number of rows nor on the values (a time column is
   ``datetime64[ns, UTC]`` whether the service sends midnights or times of day):

   - names in camelCase as the service spells them (``ItemStatus``,
     ``item_status`` -> ``itemStatus``); every field paynb does not know is kept
     as its own column after the known ones;
   - ids (``achItemId``, ``rccItemId``, ``nocId``) nullable ``Int64`` (read from
     numbers or digits; a column holding an id that is no 64-bit integer stays text,
     with a warning), ``uniqueId`` a string. A generic ``itemId``/``id`` becomes the
     kind's id and, for ACH and RCC, a bare ``status`` becomes ``itemStatus``;
   - ``itemStatus`` an ordered categorical over :data:`paynb.codes.STATUS_ORDER`
     with ``itemStatusName`` beside it. Codes are read in any casing and full
     names (``"Returned"``) become their code. A code paynb does not know is
     **kept**: it is appended to the categories (after the known ones, in
     alphabetical order) and its ``itemStatusName`` is missing, and a warning
     is logged. Instant and RTP ``status`` is a categorical over
     :data:`INSTANT_STATUSES`, extended the same way. An instant card's
     ``cardBrand`` is a categorical over :data:`CARD_BRANDS` (read in any
     casing), extended with any other brand without a warning;
   - times read from ``2025-06-11T20:50:04.032Z``, the spec's zone-less
     ``2026-11-01T00:00:00.000`` (read as UTC), date-only values (midnight UTC) and
     explicit offsets. Values that are no timestamp, or lie outside 1677-2262 (like
     .NET's "no date" ``0001-01-01``), are empty, with a warning. **The rule:** every
     time the service sends is kept as the instant it is, in UTC: one dtype,
     ``datetime64[ns, UTC]``, for every time column (``settleDate``, ``returnDate``,
     ``sendDate``, ``receivedDateTime``, a NOC's ``nocDate`` ...) whatever the records
     hold, so an empty answer and a full one have the same dtypes and nothing of what
     was sent is dropped (neither a time of day nor a zone). A column whose values are
     all midnight **prints as dates** (``2026-11-23``), in the repr, the notebook's
     table and Excel, without changing the data (:class:`UtcInstants`); a column with
     one time of day in it prints its times (``2026-11-23 15:30:00+00:00``). The
     columns keep ``.dt``, arithmetic and comparisons with ``"2026-11-23"`` or a
     ``Timestamp``; ``.dt.date`` gives the UTC days;
   - ACH and RCC ``amount`` exact, as pyarrow ``decimal128(18, 2)``. Amounts with
     more than two decimals are never rounded: the column then gets the scale they
     need (``decimal128(16 + scale, scale)``) and a warning is logged. Instant card
     and RTP ``amount`` is the wire integer as sent, nullable ``Int64``: its unit is
     not stated by the service (cents or dollars?), so it is not shown as dollars;
     ``df.attrs["amountUnit"]`` says so (:data:`INSTANT_AMOUNT_UNIT`);
   - ``returnReasonDescription`` beside ``returnReason`` (R01...), and
     ``changeReason`` filled from the NOC code (C01...) where the service left it
     out, from the tables of :mod:`paynb.codes`; a code in none of them reads
     ``not a NACHA code paynb knows``, with one
     :class:`~paynb.errors.UnknownCodeWarning` per frame;
   - card numbers only as their last four digits (``cardLastFour``; a
     ``cardNumber`` field is always dropped), account numbers masked as
     ``****6789`` unless ``mask=False`` (also the account part of a NOC's
     ``correctedData``, and any unknown field whose name ends in ``AccountNumber``);
   - unknown fields typed from their values: integers ``Int64``, booleans
     ``boolean``, texts ``str``, ISO texts in a field named ``...Date``/``...Time``
     timestamps, numbers in a field named ``...Amount`` exact decimals; lists and
     objects are kept as they are (``object``).

The conversion works column by column in Arrow (and numpy): the known text fields of
the records are read by Arrow in one pass straight into the ``large_string`` arrays pandas
keeps its text in, the other fields by item getters, and dates, amounts, categoricals,
meanings and masks are computed on whole columns; a column holding anything unexpected
is read value by value instead, with the same result. A typed frame costs no more than a
plain ``pd.DataFrame(records)`` of the same records (benchmarks/RESULTS.md, case 2).
"""

from __future__ import annotations

import paynb.accessor  # noqa: F401  (df.paynb on every frame, the client's included)
from paynb.codes import INSTANT_STATUSES
from paynb.frames._columns import (
    CARD_BRANDS,
    UtcInstants,
    noc_ledger_frame,
    unknown_codes_told_once,
    utc_instants,
)
from paynb.frames._converters import INSTANT_AMOUNT_UNIT, KINDS
from paynb.frames._envelopes import camel_case, extract_record, extract_records, list_metadata

# For the history (which imports the frames on first use), not public: its tables' form.
from paynb.frames._readers import as_stored as as_stored
from paynb.frames._readers import columns_of as columns_of
from paynb.frames._readers import delta_types as delta_types
from paynb.frames._readers import empty_frame, to_frame, typed_columns_to_read_as_text
from paynb.frames._readers import from_stored as from_stored

__all__ = [
    "CARD_BRANDS",
    "INSTANT_AMOUNT_UNIT",
    "INSTANT_STATUSES",
    "KINDS",
    "UtcInstants",
    "camel_case",
    "empty_frame",
    "extract_record",
    "extract_records",
    "list_metadata",
    "noc_ledger_frame",
    "to_frame",
    "typed_columns_to_read_as_text",
    "unknown_codes_told_once",
    "utc_instants",
]
