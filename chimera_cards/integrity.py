"""Moved to ``chimera_cards.util.integrity``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.util.integrity import (
    IntegrityError,
    check_integrity,
    expected_hex,
    is_hex,
    parse_sha256,
    sha256_hex,
    sri,
)

__all__ = [
    "IntegrityError",
    "check_integrity",
    "expected_hex",
    "is_hex",
    "parse_sha256",
    "sha256_hex",
    "sri",
]
