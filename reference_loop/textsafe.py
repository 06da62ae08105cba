"""Moved to ``reference_loop.process.textsafe``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.process.textsafe import visible

__all__ = [
    "visible",
]
