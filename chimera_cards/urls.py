"""Moved to ``chimera_cards.util.urls``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.util.urls import DEFAULT_TIMEOUT, is_url

__all__ = [
    "DEFAULT_TIMEOUT",
    "is_url",
]
