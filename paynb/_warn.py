"""Where a paynb warning points: the caller's line outside paynb.

A fixed ``stacklevel`` is right for one call path only: the same guard warning is
raised from ``client.ach.submit``, ``submit_many`` and the forms at different depths,
and one level too many points past the notebook cell (``sys:1``, or a line of
IPython's own). So the level is counted: every frame in paynb's folder, up to the
first one that is not.
"""

from __future__ import annotations

import inspect  # (already imported by dataclasses: no cost)
import os

__all__ = ["user_stacklevel"]

# As the code objects name their files (the path imported, not resolved).
_PACKAGE = os.path.dirname(__file__) + os.sep


def user_stacklevel() -> int:
    """The ``stacklevel`` for a ``warnings.warn`` made by the function calling this
    one that points at the first frame outside paynb (the user's code)."""
    level = 0
    frame = inspect.currentframe()
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        level += 1
        frame = frame.f_back
    return level
