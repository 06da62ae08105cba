"""The benchmark: arms, paired runs and statistics.

The names in ``__all__`` are loaded on first use (PEP 562), so importing one module of this
package never imports its siblings.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time: this package loads lazily
if TYPE_CHECKING:
    from reference_loop.bench.runner import (
        ARMS,
        BASELINE,
        DEFAULT_ARMS,
        DEFAULT_ATTEMPTER,
        MODEL_STEPS,
        STOP_GRACE,
        Arm,
        ArmSummary,
        AttempterSettings,
        AttemptPoint,
        BenchResult,
        BenchStopped,
        RunOutcome,
        check_attempters,
        format_table,
        load_tasks,
        machine_info,
        outcome_from_result,
        parse_arms,
        repeat_flags,
        run_bench,
        run_one,
        summarise_arm,
        summarise_bench,
        write_plot,
    )
    from reference_loop.bench.stats import (
        PairedComparison,
        mcnemar_exact_p,
        newcombe_paired_interval,
        paired_compare,
        wilson_interval,
    )

# public name -> the module that defines it
_EXPORTS = {
    "ARMS": "reference_loop.bench.runner",
    "Arm": "reference_loop.bench.runner",
    "ArmSummary": "reference_loop.bench.runner",
    "AttemptPoint": "reference_loop.bench.runner",
    "AttempterSettings": "reference_loop.bench.runner",
    "BASELINE": "reference_loop.bench.runner",
    "BenchResult": "reference_loop.bench.runner",
    "BenchStopped": "reference_loop.bench.runner",
    "DEFAULT_ARMS": "reference_loop.bench.runner",
    "DEFAULT_ATTEMPTER": "reference_loop.bench.runner",
    "MODEL_STEPS": "reference_loop.bench.runner",
    "PairedComparison": "reference_loop.bench.stats",
    "RunOutcome": "reference_loop.bench.runner",
    "STOP_GRACE": "reference_loop.bench.runner",
    "check_attempters": "reference_loop.bench.runner",
    "format_table": "reference_loop.bench.runner",
    "load_tasks": "reference_loop.bench.runner",
    "machine_info": "reference_loop.bench.runner",
    "mcnemar_exact_p": "reference_loop.bench.stats",
    "newcombe_paired_interval": "reference_loop.bench.stats",
    "outcome_from_result": "reference_loop.bench.runner",
    "paired_compare": "reference_loop.bench.stats",
    "parse_arms": "reference_loop.bench.runner",
    "repeat_flags": "reference_loop.bench.runner",
    "run_bench": "reference_loop.bench.runner",
    "run_one": "reference_loop.bench.runner",
    "summarise_arm": "reference_loop.bench.runner",
    "summarise_bench": "reference_loop.bench.runner",
    "wilson_interval": "reference_loop.bench.stats",
    "write_plot": "reference_loop.bench.runner",
}

__all__ = [
    "ARMS",
    "BASELINE",
    "DEFAULT_ARMS",
    "DEFAULT_ATTEMPTER",
    "MODEL_STEPS",
    "STOP_GRACE",
    "Arm",
    "ArmSummary",
    "AttemptPoint",
    "AttempterSettings",
    "BenchResult",
    "BenchStopped",
    "PairedComparison",
    "RunOutcome",
    "check_attempters",
    "format_table",
    "load_tasks",
    "machine_info",
    "mcnemar_exact_p",
    "newcombe_paired_interval",
    "outcome_from_result",
    "paired_compare",
    "parse_arms",
    "repeat_flags",
    "run_bench",
    "run_one",
    "summarise_arm",
    "summarise_bench",
    "wilson_interval",
    "write_plot",
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
