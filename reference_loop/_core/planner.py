"""Planners: when a failure repeats, turn the task and the ledger into a fresh plan.

Re-planning is the structural change the loop makes instead of appending one more copy of the
same failure. A planner reads the task text and ``TaskLedger.context()`` and returns plan text
that goes into the next prompt.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from reference_loop._core.ledger import CAUSES_HEADING
from reference_loop.errors import LoopUsageError


class Planner(Protocol):
    name: str

    def plan(self, task_text: str, ledger_context: str) -> str: ...


@dataclass
class ScriptedPlanner:
    """Deterministic planner for tests and the bench (no model involved; clearly scripted).

    Its plan restates every cause under the ledger's heading as a constraint, so the next
    attempt is told, in one place, every approach that is already ruled out. ``calls`` keeps the
    exact inputs it was given so tests can check what a re-plan saw.
    """

    name: str = "scripted:planner"
    calls: list[tuple[str, str]] = field(default_factory=list)

    def plan(self, task_text: str, ledger_context: str) -> str:
        self.calls.append((task_text, ledger_context))
        causes: list[str] = []
        if CAUSES_HEADING in ledger_context:
            tail = ledger_context.split(CAUSES_HEADING, 1)[1]
            causes = [ln[2:] for ln in tail.splitlines() if ln.startswith("- ")]
        lines = [
            "Plan (re-planned because a failure repeated):",
            "1. Re-read the failing assertion and the code it exercises before editing.",
        ]
        step = 2
        for cause in causes:
            lines.append(f"{step}. Ruled out — {cause}")
            step += 1
        lines.append(f"{step}. Choose an approach different from every ruled-out one above.")
        return "\n".join(lines)


def make_planner(spec: str) -> Planner:
    """Resolve a planner spec. ``scripted`` ships here; model-backed planners hook in below."""
    if spec in ("scripted", "scripted:planner"):
        return ScriptedPlanner()
    # Hook: an ``llm:MODEL`` planner would be resolved here (see attempters/llm.py).
    if re.match(r"^llm:", spec):
        raise LoopUsageError(f"planner {spec!r} is not available in this build")
    raise LoopUsageError(f"unknown planner {spec!r} (expected: scripted)")
