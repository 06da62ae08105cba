"""Moved to ``reference_loop.core.signature``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.core.signature import (
    MAX_SIGNATURE_CHARS,
    MAX_SIGNATURE_LINES,
    failure_signature,
    normalise,
)

__all__ = [
    "MAX_SIGNATURE_CHARS",
    "MAX_SIGNATURE_LINES",
    "failure_signature",
    "normalise",
]
