"""Attempters: whatever edits the workspace for one attempt (a scripted fixer, a CLI agent, model).

The protocol is small on purpose: the loop hands over the prompt and the workspace path; the
attempter edits files and reports its tool steps. It never reports its patch: the loop takes the
real diff from the workspace, so an attempter's account of what it did cannot stand in for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


@dataclass
class ToolStep:
    name: str
    ok: bool
    error: str = ""


@dataclass
class AttemptOutcome:
    steps: list[ToolStep] = field(default_factory=list)
    description: str = ""  # the attempter's own account; never the patch
    # Processes the attempt's command left running when it ended (killed before the diff).
    left_running: int = 0

    def first_failure(self) -> ToolStep | None:
        return next((step for step in self.steps if not step.ok), None)


class Attempter(Protocol):
    name: str

    def attempt(self, prompt: str, workspace: Path, *, attempt: int) -> AttemptOutcome: ...
