"""Moved to ``reference_loop.plugins.commands``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.plugins.commands import register_commands

__all__ = [
    "register_commands",
]
