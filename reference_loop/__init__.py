"""reference_loop: the reference implementation of the card *carry the failure forward*.

A retry loop (attempt -> verify -> capture the real diff -> revert -> retry) that keeps a list of
per-attempt records and renders every one of them into the next prompt.

It builds on ``chimera_cards`` (cards reach the prompt through its retrieval gate); never the
reverse. The names in ``__all__`` are the public API, loaded on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from chimera_cards import __version__  # one version for the one distribution

_EXPORTS = {
    "LoopError": "reference_loop.errors",
    "RunResult": "reference_loop.run.loop",
    "run_task": "reference_loop.run.loop",
    "make_attempter": "reference_loop.attempters.factory",
    "Task": "reference_loop.tasks.task",
    "resolve_task": "reference_loop.tasks.task",
    "sample_tasks": "reference_loop.tasks.task",
    "run_check": "reference_loop.run.check",
    "load_cards": "reference_loop.core.cards",
    "run_bench": "reference_loop.bench.runner",
    "demo_steps": "reference_loop.demo.steps",
}

# The same names as _EXPORTS, spelled out for tools that read __all__ without running it.
__all__ = [
    "LoopError",
    "RunResult",
    "Task",
    "__version__",
    "demo_steps",
    "load_cards",
    "make_attempter",
    "resolve_task",
    "run_bench",
    "run_check",
    "run_task",
    "sample_tasks",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
