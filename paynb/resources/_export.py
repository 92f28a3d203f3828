"""A kind's export document: downloaded, its format sniffed, read into the list's frame."""

from __future__ import annotations

import email.message
import io
import re
from typing import TYPE_CHECKING, Any

from paynb.errors import ResponseFormatError, ValidationError
from paynb.resources._listing import Filters, Listing, frames
from paynb.results import ExportFile
from paynb.transport import parse_json, preview

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["export"]

_FILETYPE = re.compile(r"[A-Za-z0-9]{1,16}")
_READABLE_EXPORTS = ("csv", "json", "xlsx")


def _filename(disposition: str | None) -> str | None:
    if not disposition:
        return None
    message = email.message.Message()
    message["content-disposition"] = disposition
    return message.get_filename()


def _export_format(content_type: str, filetype: str) -> str | None:
    kind = content_type.split(";")[0].strip().lower()
    if "csv" in kind:
        return "csv"
    if kind.endswith("json"):
        return "json"
    if "spreadsheetml" in kind or "ms-excel" in kind:
        return "xlsx"
    if kind in ("", "application/octet-stream", "text/plain") and filetype in _READABLE_EXPORTS:
        return filetype
    return None


def export(listing: Listing, filetype: Any, filters: Filters) -> pd.DataFrame | ExportFile:
    """The export document of ``listing``'s kind (see :meth:`paynb.resources.Resource.export`):
    a frame of a readable document, narrowed by ``filters``, else the file itself."""
    if filters.local and isinstance(filetype, str) and \
            filetype.lower() not in _READABLE_EXPORTS:
        raise ValidationError.for_argument(
            "filetype", f"must be one of {', '.join(_READABLE_EXPORTS)} when "
                        f"filters are given (paynb applies them to the document's rows)")
    if not isinstance(filetype, str) or not _FILETYPE.fullmatch(filetype):
        raise ValidationError.for_argument(
            "filetype", "must be a short word of letters and digits, like 'csv'")
    kind = listing.kind
    path = f"{listing.path}/export/filetype/{filetype}"
    response = kind.context.transport.request("GET", path, params=filters.params or None,
                                              headers={"Accept": "*/*"}, collection=True)
    content_type = response.headers.get("Content-Type", "")
    name = _filename(response.headers.get("Content-Disposition")) or \
        f"{kind.kind}-export.{filetype}"
    form = _export_format(content_type, filetype.lower())
    if form is None:
        if filters.local:
            raise ResponseFormatError(
                f"GET {path}: the export came as {content_type or 'an unnamed type'}, "
                f"not csv, json or xlsx, so the filters could not be applied to it")
        return ExportFile(content=response.content, name=name, content_type=content_type)
    import pandas as pd

    from paynb._excel import read_export_sheet  # pandas, fastexcel: with the first export

    data: Any
    if form == "json":
        data = frames.extract_records(parse_json(response, "GET", path),
                                      method="GET", path=path)
    else:
        try:
            if form == "csv":
                data = pd.read_csv(io.BytesIO(response.content), dtype=str,
                                   keep_default_na=False, na_values=[""])
            else:
                data = read_export_sheet(response.content, kind.kind)
        except Exception as exc:  # pandas/fastexcel raise many kinds on a broken document
            raise ResponseFormatError(
                f"GET {path}: the export is not a readable {form} document "
                f"({type(exc).__name__}): {preview(response.text)!r}") from None
    return listing.narrow(listing.frame_of(data), filters)
