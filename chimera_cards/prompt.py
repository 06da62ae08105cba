"""Moved to ``chimera_cards.cards.prompt``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.cards.prompt import LEVELS, render_card

__all__ = [
    "LEVELS",
    "render_card",
]
