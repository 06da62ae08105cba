"""Moved to ``reference_loop.workspace.gitstore``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.workspace.gitstore import (
    PackWriter,
    StoredTree,
    TreeChanged,
    name_ok,
    store_file,
    store_tree,
    write_index,
)

__all__ = [
    "PackWriter",
    "StoredTree",
    "TreeChanged",
    "name_ok",
    "store_file",
    "store_tree",
    "write_index",
]
