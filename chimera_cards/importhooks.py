"""Moved to ``chimera_cards.importer.hooks``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.importer.hooks import APPROVALS_FILENAME, approvals

__all__ = [
    "APPROVALS_FILENAME",
    "approvals",
]
