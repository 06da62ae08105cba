"""Moved to ``chimera_cards.scan.textruns``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.scan.textruns import RunGate

__all__ = [
    "RunGate",
]
