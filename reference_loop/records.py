"""Moved to ``reference_loop.core.records``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.core.records import (
    DEFAULT_PATCH_LIMIT,
    MAX_RECORD_FILES,
    VERDICTS,
    AttemptRecord,
    FailedStep,
    History,
    bound_patch,
    describe_files,
    normalise_patch,
    patch_fingerprint,
    truncation_marker,
)

__all__ = [
    "DEFAULT_PATCH_LIMIT",
    "MAX_RECORD_FILES",
    "VERDICTS",
    "AttemptRecord",
    "FailedStep",
    "History",
    "bound_patch",
    "describe_files",
    "normalise_patch",
    "patch_fingerprint",
    "truncation_marker",
]
