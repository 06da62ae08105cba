"""The card's Check, automated and binary: does attempt 3 see what attempt 1 tried?

Run a task that fails three times; pass only if the prompt of attempt 3 contains a string that
appears only in attempt 1's patch (a file or identifier it touched, computed from the real
patches, never hard-coded) **and** the loop counted at least one history injection. A run with
zero injections proves nothing, so it is void, and a void check fails.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reference_loop._attempters.factory import make_attempter
from reference_loop._core.events import EventLog
from reference_loop._core.history import mentions
from reference_loop._core.records import AttemptRecord
from reference_loop._run.loop import LoopOptions, RunResult, run_task
from reference_loop._tasks.task import Task, three_failure_task

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")


@dataclass
class CheckResult:
    passed: bool
    void: bool
    message: str
    task: str
    history_mode: str
    injections: int
    attempt1_only: list[str] = field(default_factory=list)  # strings only attempt 1's patch has
    found: list[str] = field(default_factory=list)  # ...of those, in attempt 3's prompt
    run: RunResult | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "void": self.void,
            "message": self.message,
            "task": self.task,
            "history_mode": self.history_mode,
            "injections": self.injections,
            "attempt1_only": self.attempt1_only,
            "found": self.found,
        }


def _changed_identifiers(patch: str) -> set[str]:
    """Code-like identifiers on the patch's added and removed lines (not its headers).

    Only names with an underscore, a digit or an inner capital count: plain words such as
    ``import`` or ``helpers`` could reach a prompt by many routes and would prove nothing.
    """
    words: set[str] = set()
    for line in patch.splitlines():
        if line[:1] in "+-" and not line.startswith(("+++", "---")):
            words |= {
                w
                for w in _WORD.findall(line[1:])
                if "_" in w.strip("_") or w.startswith("_") or re.search(r"\d|[a-z][A-Z]", w)
            }
    return words


def attempt_one_only(records: list[AttemptRecord], baseline_prompt: str) -> list[str]:
    """Files and identifiers attempt 1's patch touched that attempt 3's prompt could only get
    from attempt 1's record.

    Excluded: anything in attempt 2's patch or verifier output (attempt 3's prompt carries
    attempt 2 as well) and anything already in the first prompt (the task text). Attempt 3's own
    patch is made after its prompt, so it does not count: when attempt 3 re-derives attempt 1's
    patch (the overwrite bug), attempt 1's strings are still the ones to look for.
    """
    first, others = records[0], records[1:2]
    names = set(first.files) | {path.rsplit("/", 1)[-1] for path in first.files}
    tokens = names | _changed_identifiers(first.patch)
    elsewhere = [baseline_prompt] + [r.patch for r in others] + [r.verifier_output for r in others]
    return sorted(t for t in tokens if not any(mentions(text, t) for text in elsewhere))


def run_check(
    task: Task | None = None,
    *,
    attempter: str = "scripted:rederive",
    history_mode: str = "accumulate",
    seed: int = 0,
    max_attempts: int = 3,
    events: EventLog | None = None,
    workspace: str | Path | None = None,
    **option_fields: Any,
) -> CheckResult:
    """Run the three-failure task and judge whether attempt 1 reached attempt 3's prompt.

    Args:
        task: the task (default: the sample task flagged ``known_three_failures``).
        attempter: the attempter spec.
        history_mode: the history mode checked (``last`` and ``none`` must fail).
        seed: the attempter's seed.
        max_attempts: attempts to run (at least 3).
        events: where events go.
        workspace: work in place here instead of a temporary copy.
        option_fields: further LoopOptions fields (``prompts_dir``, ``cards`` ...).

    Returns:
        The CheckResult (passed, void, message, ...).
    """
    # Three attempts are all the check looks at; a fourth would only cost time.
    task = task or three_failure_task()
    log = events if events is not None else EventLog()
    options = LoopOptions(
        history_mode=history_mode, max_attempts=max(3, max_attempts), **option_fields
    )
    run = run_task(
        task,
        make_attempter(attempter, seed=seed, task=task),
        workspace=workspace,
        options=options,
        events=log,
    )
    result = CheckResult(
        passed=False,
        void=False,
        message="",
        task=task.name,
        history_mode=history_mode,
        injections=run.injections,
        run=run,
    )
    solved_early = next((r.number for r in run.attempts[:3] if r.solved), None)
    if solved_early is not None:
        result.message = (
            f"FAIL: {task.name} was solved at attempt {solved_early}; the check "
            "needs a task that fails at least three times"
        )
        return result
    if run.injections == 0:
        result.void = True
        result.message = (
            f"FAIL (void): zero history injections were counted in "
            f"{history_mode!r} mode, so the run proves nothing"
        )
        return result
    result.attempt1_only = attempt_one_only(run.attempts, run.prompts[0])
    if not result.attempt1_only:
        result.message = (
            f"FAIL: attempt 1's patch on {task.name} has no file or identifier of "
            "its own, so the check cannot tell whether it was carried forward"
        )
        return result
    result.found = [t for t in result.attempt1_only if mentions(run.prompts[2], t)]
    shown = ", ".join(result.attempt1_only)
    if result.found:
        result.passed = True
        result.message = (
            f"PASS: attempt 3's prompt shows {', '.join(result.found)} from attempt "
            f"1's patch (only attempt 1 touched it); {run.injections} history "
            f"injections counted"
        )
    else:
        result.message = (
            f"FAIL: attempt 3's prompt contains none of attempt 1's own strings "
            f"({shown}); attempt 1 was not carried forward "
            f"({run.injections} injections counted, history {history_mode!r})"
        )
    return result
