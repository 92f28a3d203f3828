"""Keys of ``DataFrame.attrs`` that one part of paynb sets and another reads.

A frame read from a local history (:class:`paynb.History`) says what the store held
when it was read, so that what is measured from it later (the compliance figures) can
say when it asks about days the store cannot know of: before the store's ``since``, or
after its last sync. ``attrs`` follow a frame through filtering and column selection;
``pd.concat`` keeps them only where every part has the same (a history frame joined
with a fresh poll has none: it is current).
"""

from __future__ import annotations

__all__ = ["HISTORY"]

HISTORY = "paynb.history"
"""``{"path", "kind", "since", "syncedAt"}`` of the store a frame was read from: ISO
texts (UTC), ``since`` None where the store keeps every item; with several companies,
the latest ``since`` and the earliest ``syncedAt`` among them."""
