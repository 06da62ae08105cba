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
    "RunResult": "reference_loop._run.loop",
    "run_task": "reference_loop._run.loop",
    "make_attempter": "reference_loop._attempters.factory",
    "Task": "reference_loop._tasks.task",
    "resolve_task": "reference_loop._tasks.task",
    "sample_tasks": "reference_loop._tasks.task",
    "run_check": "reference_loop._run.check",
    "load_cards": "reference_loop._core.cards",
    "run_bench": "reference_loop._bench.runner",
    "demo_steps": "reference_loop._demo.steps",
    "load_tasks": "reference_loop._bench.runner",
    "parse_arms": "reference_loop._bench.runner",
    "format_table": "reference_loop._bench.report",
    "write_plot": "reference_loop._bench.report",
    "parse_edit": "reference_loop._attempters.edits",
    "apply_edit": "reference_loop._attempters.edits",
    "paired_compare": "reference_loop._bench.stats",
    "mcnemar_exact_p": "reference_loop._bench.stats",
    "newcombe_paired_interval": "reference_loop._bench.stats",
    "run_demo": "reference_loop._demo.steps",
    "EventLog": "reference_loop._core.events",
    "LoopOptions": "reference_loop._run.loop",
    "Workspace": "reference_loop._workspace.core",
    "run_verifier": "reference_loop._verdict.verifier",
}

# The same names as _EXPORTS, spelled out for tools that read __all__ without running it.
__all__ = [
    "EventLog",
    "LoopError",
    "LoopOptions",
    "RunResult",
    "Task",
    "Workspace",
    "__version__",
    "apply_edit",
    "demo_steps",
    "format_table",
    "load_cards",
    "load_tasks",
    "make_attempter",
    "mcnemar_exact_p",
    "newcombe_paired_interval",
    "paired_compare",
    "parse_arms",
    "parse_edit",
    "resolve_task",
    "run_bench",
    "run_check",
    "run_demo",
    "run_task",
    "run_verifier",
    "sample_tasks",
    "write_plot",
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
