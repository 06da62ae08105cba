"""Moved to ``reference_loop.cli.demo``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.cli.demo import demo

__all__ = [
    "demo",
]
