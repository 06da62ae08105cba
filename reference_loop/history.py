"""Moved to ``reference_loop.core.history``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.core.history import (
    DEFAULT_BUDGET,
    HEADING,
    LAST_HEADING,
    MODES,
    NONE_TEXT,
    OUTPUT_TAIL_LINES,
    SHORT_PATCH_CHARS,
    UNBOUNDED,
    check_mode,
    join_numbers,
    mentions,
    records_shown,
    render,
    render_fitted,
)

__all__ = [
    "DEFAULT_BUDGET",
    "HEADING",
    "LAST_HEADING",
    "MODES",
    "NONE_TEXT",
    "OUTPUT_TAIL_LINES",
    "SHORT_PATCH_CHARS",
    "UNBOUNDED",
    "check_mode",
    "join_numbers",
    "mentions",
    "records_shown",
    "render",
    "render_fitted",
]
