"""Moved to ``reference_loop.run.check``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.run.check import CheckResult, attempt_one_only, run_check

__all__ = [
    "CheckResult",
    "attempt_one_only",
    "run_check",
]
