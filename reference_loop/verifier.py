"""Moved to ``reference_loop.verdict.verifier``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.verdict.verifier import (
    FALLBACK_FAILURE_LINES,
    HEAD_LINES,
    MAX_FAILURE_LINES,
    MAX_LINE_CHARS,
    TAIL_LINES,
    VerifyResult,
    extract_failure_lines,
    run_verifier,
)

__all__ = [
    "FALLBACK_FAILURE_LINES",
    "HEAD_LINES",
    "MAX_FAILURE_LINES",
    "MAX_LINE_CHARS",
    "TAIL_LINES",
    "VerifyResult",
    "extract_failure_lines",
    "run_verifier",
]
