"""What differs between the pandas versions paynb supports (``pandas>=2.2``), settled once:
pandas' default ``str`` dtype, ``StringDtype("pyarrow_numpy")`` by its pandas 2.2 name."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["string_dtype"]


@functools.cache
def string_dtype() -> pd.StringDtype:
    """pandas' ``str`` dtype: text in Arrow, a missing value NaN (the same on pandas 2.2)."""
    # pandas on the call, not on import: the history's reader, which the client imports,
    # needs no pandas until it reads.
    import numpy as np
    import pandas as pd

    try:
        return pd.StringDtype(na_value=np.nan)
    except TypeError:  # pandas 2.2: the same dtype, by its older name
        return pd.StringDtype("pyarrow_numpy")
