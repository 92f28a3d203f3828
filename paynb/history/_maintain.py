"""Housekeeping of a history (:meth:`paynb.History.maintain`): compaction and vacuum."""

from __future__ import annotations

from typing import Any

from paynb.history import _store as st


def maintained(store: st.Store, retention_days: int, never_synced: bool) -> Any:
    """Compact and vacuum every table of ``store`` (nothing where ``never_synced``): one
    row per table, as :meth:`paynb.History.maintain` returns them."""
    import pandas as pd

    rows = []
    if not never_synced:  # (nothing is made where there is no store)
        with store.locked(), store.writing():
            for name, table in store.tables().items():
                kept = st.state(table)
                # A table made before a setting of new tables came in gets it now
                # (its log checkpointed as a new one's is).
                wanted = st.created(name)["configuration"]
                held = table.metadata().configuration
                if any(held.get(key) != value for key, value in wanted.items()):
                    table.alter.set_table_properties(
                        wanted, raise_if_not_exists=False,
                        commit_properties=st.commit_properties(kept))
                before = st.file_sizes(table)
                # Only files under half the target size are merged, a partition's
                # only when it holds several of them.
                done = table.optimize.compact(target_size=st.TARGET_FILE_BYTES // 2,
                                              writer_properties=st.writer(),
                                              commit_properties=st.commit_properties(kept))
                going = table.vacuum(retention_hours=retention_days * 24, dry_run=True,
                                     enforce_retention_duration=False)
                sizes = table.to_pyarrow_dataset().filesystem.get_file_info(going)
                table.vacuum(retention_hours=retention_days * 24, dry_run=False,
                             enforce_retention_duration=False,
                             commit_properties=st.commit_properties(kept))
                after = st.file_sizes(table)
                rows.append({"table": name, "files_before": len(before),
                             "bytes_before": sum(before), "files_after": len(after),
                             "bytes_after": sum(after),
                             "files_compacted": int(done.get("numFilesRemoved", 0)),
                             "files_written": int(done.get("numFilesAdded", 0)),
                             "files_removed": len(going),
                             "bytes_removed": sum(max(0, f.size or 0) for f in sizes),
                             "version": table.version()})
    return pd.DataFrame(rows, columns=[
        "table", "files_before", "bytes_before", "files_after", "bytes_after",
        "files_compacted", "files_written", "files_removed", "bytes_removed", "version"])
