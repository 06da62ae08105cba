"""Moved to ``chimera_cards.importer.update``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.importer.update import UpdateResult, origins, outdated, refetch_args, update

__all__ = [
    "UpdateResult",
    "origins",
    "outdated",
    "refetch_args",
    "update",
]
