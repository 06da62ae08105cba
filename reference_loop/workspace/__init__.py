"""The attempt workspace: snapshot, diff and restore of a task's folder.

One contract (``core.Workspace``), two engines (``engines``): ``git`` stages through git's own
plumbing (``staging``) and is complete on its own; ``fast`` puts the hand-written index and pack
path (``fast``, ``gitindex``, ``gitstore``) in front of it. ``privategit`` (the private store),
``scan`` (passes over the directories) and ``restore`` (writing the snapshot back) serve both.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from reference_loop.workspace.core import DEFAULT_IGNORE, Workspace
    from reference_loop.workspace.engines import DEFAULT_ENGINE, ENGINE_ENV, ENGINES, engine_name
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
    from reference_loop.workspace.gitio import BIG_FILE_BYTES
    from reference_loop.workspace.gitstore import (
        PackWriter,
        StoredTree,
        TreeChanged,
        name_ok,
        store_file,
        store_tree,
        write_index,
    )
    from reference_loop.workspace.records import Diff, FileChange
    from reference_loop.workspace.storetrash import TRASH_PREFIX, Removal, discard, sweep

# public name -> the module that defines it
_EXPORTS = {
    "BIG_FILE_BYTES": "reference_loop.workspace.gitio",
    "DEFAULT_ENGINE": "reference_loop.workspace.engines",
    "DEFAULT_IGNORE": "reference_loop.workspace.core",
    "Diff": "reference_loop.workspace.records",
    "EMPTY_EWAH": "reference_loop.workspace.gitindex",
    "ENGINES": "reference_loop.workspace.engines",
    "ENGINE_ENV": "reference_loop.workspace.engines",
    "FileChange": "reference_loop.workspace.records",
    "Index": "reference_loop.workspace.gitindex",
    "NewEntry": "reference_loop.workspace.gitindex",
    "PackWriter": "reference_loop.workspace.gitstore",
    "Removal": "reference_loop.workspace.storetrash",
    "Rewritten": "reference_loop.workspace.gitindex",
    "StoredTree": "reference_loop.workspace.gitstore",
    "TRASH_PREFIX": "reference_loop.workspace.storetrash",
    "TreeChanged": "reference_loop.workspace.gitstore",
    "Workspace": "reference_loop.workspace.core",
    "discard": "reference_loop.workspace.storetrash",
    "encode_entry": "reference_loop.workspace.gitindex",
    "engine_name": "reference_loop.workspace.engines",
    "name_ok": "reference_loop.workspace.gitstore",
    "read_index": "reference_loop.workspace.gitindex",
    "rewrite_index": "reference_loop.workspace.gitindex",
    "split_index_over": "reference_loop.workspace.gitindex",
    "split_part": "reference_loop.workspace.gitindex",
    "store_file": "reference_loop.workspace.gitstore",
    "store_tree": "reference_loop.workspace.gitstore",
    "sweep": "reference_loop.workspace.storetrash",
    "write_index": "reference_loop.workspace.gitstore",
}

__all__ = [
    "BIG_FILE_BYTES",
    "DEFAULT_ENGINE",
    "DEFAULT_IGNORE",
    "EMPTY_EWAH",
    "ENGINES",
    "ENGINE_ENV",
    "TRASH_PREFIX",
    "Diff",
    "FileChange",
    "Index",
    "NewEntry",
    "PackWriter",
    "Removal",
    "Rewritten",
    "StoredTree",
    "TreeChanged",
    "Workspace",
    "discard",
    "encode_entry",
    "engine_name",
    "name_ok",
    "read_index",
    "rewrite_index",
    "split_index_over",
    "split_part",
    "store_file",
    "store_tree",
    "sweep",
    "write_index",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
