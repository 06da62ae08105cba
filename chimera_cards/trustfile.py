"""Moved to ``chimera_cards.review.trustfile``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from chimera_cards.review.trustfile import (
    TrustFile,
    TrustFileError,
    apply_trust_file,
    format_trust_file,
    parse_trust_file,
    read_trust_file,
    store_trust_file,
    write_trust_file,
)

__all__ = [
    "TrustFile",
    "TrustFileError",
    "apply_trust_file",
    "format_trust_file",
    "parse_trust_file",
    "read_trust_file",
    "store_trust_file",
    "write_trust_file",
]
