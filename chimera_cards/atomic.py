"""Moved to ``chimera_cards.util.atomic``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.util.atomic import WriteError, write_atomic

__all__ = [
    "WriteError",
    "write_atomic",
]
