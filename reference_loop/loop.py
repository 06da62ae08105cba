"""Moved to ``reference_loop.run.loop``.

This path re-exports that module's public names so old imports keep working.
"""

from __future__ import annotations

from reference_loop.run.loop import (
    DEFAULT_MAX_ATTEMPTS,
    ON_REPEAT,
    PROTECTED_STEP,
    LoopOptions,
    RunResult,
    compose_prompt,
    run_loop,
    run_task,
)

__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "ON_REPEAT",
    "PROTECTED_STEP",
    "LoopOptions",
    "RunResult",
    "compose_prompt",
    "run_loop",
    "run_task",
]
