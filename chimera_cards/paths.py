"""Moved to ``chimera_cards.util.paths``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.util.paths import LinkEscapeError, check_link_inside, write_atomic_inside

__all__ = [
    "LinkEscapeError",
    "check_link_inside",
    "write_atomic_inside",
]
