"""Moved to ``reference_loop.process.sandbox``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.process.sandbox import (
    Sandbox,
    SandboxUnavailable,
    make_sandbox,
    sandbox_attempters,
)

__all__ = [
    "Sandbox",
    "SandboxUnavailable",
    "make_sandbox",
    "sandbox_attempters",
]
