"""Moved to ``reference_loop.workspace.gitindex``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.workspace.gitindex import (
    EMPTY_EWAH,
    Index,
    NewEntry,
    Rewritten,
    encode_entry,
    read_index,
    rewrite_index,
    split_index_over,
    split_part,
)

__all__ = [
    "EMPTY_EWAH",
    "Index",
    "NewEntry",
    "Rewritten",
    "encode_entry",
    "read_index",
    "rewrite_index",
    "split_index_over",
    "split_part",
]
