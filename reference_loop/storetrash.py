"""Moved to ``reference_loop.workspace.storetrash``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.workspace.storetrash import TRASH_PREFIX, Removal, discard, sweep

__all__ = [
    "TRASH_PREFIX",
    "Removal",
    "discard",
    "sweep",
]
