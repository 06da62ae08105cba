"""Moved to ``chimera_cards.scan.pystatements``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.scan.pystatements import TopLevel, first_line, parse_spanning, top_level

__all__ = [
    "TopLevel",
    "first_line",
    "parse_spanning",
    "top_level",
]
