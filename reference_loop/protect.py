"""Moved to ``reference_loop.verdict.protect``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.verdict.protect import (
    DEFAULT_PROTECT,
    ProtectedChange,
    check_patterns,
    is_protected,
    protected_changes,
    verify_paths,
)

__all__ = [
    "DEFAULT_PROTECT",
    "ProtectedChange",
    "check_patterns",
    "is_protected",
    "protected_changes",
    "verify_paths",
]
