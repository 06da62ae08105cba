"""Running the loop: attempt, verify, capture the diff, revert, retry; the card's checks.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from reference_loop.run.check import CheckResult, attempt_one_only, run_check
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

# public name -> the module that defines it
_EXPORTS = {
    "CheckResult": "reference_loop.run.check",
    "DEFAULT_MAX_ATTEMPTS": "reference_loop.run.loop",
    "LoopOptions": "reference_loop.run.loop",
    "ON_REPEAT": "reference_loop.run.loop",
    "PROTECTED_STEP": "reference_loop.run.loop",
    "RunResult": "reference_loop.run.loop",
    "attempt_one_only": "reference_loop.run.check",
    "compose_prompt": "reference_loop.run.loop",
    "run_check": "reference_loop.run.check",
    "run_loop": "reference_loop.run.loop",
    "run_task": "reference_loop.run.loop",
}

__all__ = [
    "DEFAULT_MAX_ATTEMPTS",
    "ON_REPEAT",
    "PROTECTED_STEP",
    "CheckResult",
    "LoopOptions",
    "RunResult",
    "attempt_one_only",
    "compose_prompt",
    "run_check",
    "run_loop",
    "run_task",
]


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next look-up is a plain attribute
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
