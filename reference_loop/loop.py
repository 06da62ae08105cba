"""The reference loop: attempt, judge, capture the real diff, revert, record, retry with history.

Per attempt: compose the prompt (task + plan + rendered history) -> the attempter edits the
workspace -> run the verifier -> take the real diff from the workspace and, unless it passed,
restore it in the same scan -> append an ``AttemptRecord`` -> go again. One scan of the tree per
attempt keeps the cost near ``git status``; the caches a verifier writes (``__pycache__``,
``.pytest_cache`` ...) are in the workspace's default ignore list, so they stay out of the patch.

When a failure signature repeats, the loop changes something structural instead of appending
one more copy of the same failure: it re-plans (planner + ``TaskLedger.context()``) or escalates
to a stronger attempter, once per repeat and never after the final attempt.

The workspace is restored in a ``finally``: an exception or Ctrl-C mid-attempt leaves it exactly
as it was; only a solved run leaves the passing change in place.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reference_loop.attempters import Attempter, AttemptOutcome
from reference_loop.cards import DEFAULT_CARDS_IN, CardsBlock, cards_for_attempt, check_cards_in
from reference_loop.errors import LoopError
from reference_loop.events import EventLog
from reference_loop.history import DEFAULT_BUDGET, check_mode, records_shown, render
from reference_loop.ledger import TaskLedger
from reference_loop.planner import Planner
from reference_loop.records import (
    DEFAULT_PATCH_LIMIT,
    AttemptRecord,
    FailedStep,
    History,
    bound_patch,
    patch_fingerprint,
)
from reference_loop.sandbox import Sandbox
from reference_loop.signature import failure_signature
from reference_loop.tasks import Task, copy_project
from reference_loop.verifier import run_verifier
from reference_loop.workspace import Workspace

ON_REPEAT = ("none", "replan", "escalate")
DEFAULT_MAX_ATTEMPTS = 5


@dataclass
class RunResult:
    task: str
    solved: bool
    history_mode: str
    attempts: list[AttemptRecord]
    prompts: list[str]  # the exact prompt of each attempt, in order
    injections: int  # history_injected events
    workspace: str
    replans: int = 0
    escalations: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def solved_at(self) -> int | None:
        return next((r.number for r in self.attempts if r.solved), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "solved": self.solved,
            "solved_at": self.solved_at,
            "history_mode": self.history_mode,
            "injections": self.injections,
            "replans": self.replans,
            "escalations": self.escalations,
            "workspace": self.workspace,
            "attempts": [
                {
                    "number": r.number,
                    "verdict": r.verdict,
                    "attempter": r.attempter,
                    "patch": r.patch,
                    "patch_truncated": r.patch_truncated,
                    "patch_fingerprint": r.patch_fingerprint,
                    "files": r.files,
                    "first_failing_step": (
                        {"name": r.first_failing_step.name, "error": r.first_failing_step.error}
                        if r.first_failing_step
                        else None
                    ),
                    "signature": r.signature,
                    "prompt_chars": len(p),
                }
                for r, p in zip(self.attempts, self.prompts)
            ],
        }


def compose_prompt(task: Task, history_text: str, plan: str = "", cards: str = "") -> str:
    """The exact text an attempter receives (``cards``: a section from ``reference_loop.cards``)."""
    parts = [
        f"# Task\n\n{task.text.strip()}",
        f"## How the result is checked\n\n`{task.shown_verify()}` must exit 0. The workspace "
        "is reverted after every failed attempt, so each attempt starts from the original "
        "files.",
    ]
    if cards:
        parts.append(cards.strip())
    if plan:
        parts.append(f"## Plan\n\n{plan.strip()}")
    if history_text:
        parts.append(history_text.strip())
    return "\n\n".join(parts) + "\n"


def run_loop(
    task: Task,
    attempter: Attempter,
    *,
    workspace: str | Path,
    history_mode: str = "accumulate",
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    budget: int = DEFAULT_BUDGET,
    patch_limit: int = DEFAULT_PATCH_LIMIT,
    events: EventLog | None = None,
    prompts_dir: str | Path | None = None,
    planner: Planner | None = None,
    on_repeat: str = "none",
    escalate_to: Attempter | None = None,
    log_dir: str | Path | None = None,
    ignore: Sequence[str] = (),
    cards: CardsBlock | None = None,
    cards_in: str = DEFAULT_CARDS_IN,
    reviewer: Callable[[AttemptRecord], str | None] | None = None,
    sandbox: Sandbox | None = None,
) -> RunResult:
    """Run the loop on ``workspace`` in place and return every attempt's record.

    ``reviewer`` (e.g. a critic model) may return a note for a failed attempt; it is stored
    beside the verifier output, never instead of it. ``sandbox`` runs the verifier inside
    bubblewrap (a ``cmd:`` attempter gets its own ``sandbox``).
    """
    check_mode(history_mode)
    check_cards_in(cards_in)
    if max_attempts < 1:
        raise LoopError(f"max attempts must be at least 1, got {max_attempts}", exit_code=2)
    if on_repeat not in ON_REPEAT:
        raise LoopError(
            f"unknown on-repeat action {on_repeat!r} (expected one of: {', '.join(ON_REPEAT)})",
            exit_code=2,
        )
    if on_repeat == "replan" and planner is None:
        raise LoopError("on-repeat 'replan' needs a planner", exit_code=2)
    if on_repeat == "escalate" and escalate_to is None:
        raise LoopError("on-repeat 'escalate' needs an attempter to escalate to", exit_code=2)
    root = Path(workspace).resolve()
    if prompts_dir is not None:
        prompts_dir = Path(prompts_dir)
        try:
            prompts_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LoopError(
                f"cannot create prompts dir {prompts_dir}: {exc.strerror}", exit_code=2
            ) from exc
    log = events if events is not None else EventLog()
    history = History()
    ledger = TaskLedger()
    ledger.add_fact(f"`{task.shown_verify()}` is the check; it must exit 0.")
    prompts: list[str] = []
    plan = ""
    current = attempter
    replans = escalations = 0
    solved = False

    ws = Workspace(root, ignore=ignore)
    dirty = False  # the workspace may differ from the snapshot and must be restored
    try:
        ws.snapshot()
        log.emit(
            "run_started",
            task=task.name,
            history_mode=history_mode,
            max_attempts=max_attempts,
            attempter=current.name,
            workspace=str(root),
        )
        for number in range(1, max_attempts + 1):
            history_text = render(history.records, history_mode, budget)
            shown = records_shown(history.records, history_mode)
            cards_text = cards_for_attempt(cards, number, cards_in)
            prompt = compose_prompt(task, history_text, plan, cards_text)
            if cards_text:
                log.emit("cards_injected", attempt=number, cards=cards.count, chars=len(cards_text))
            if shown:
                log.emit("history_injected", attempt=number, records=shown, chars=len(history_text))
            prompts.append(prompt)
            if prompts_dir is not None:
                (prompts_dir / f"attempt-{number}.txt").write_text(prompt, encoding="utf-8")

            log.emit(
                "attempt_started", attempt=number, attempter=current.name, prompt_chars=len(prompt)
            )
            started = time.monotonic()
            dirty = True
            outcome: AttemptOutcome = current.attempt(prompt, root, attempt=number)
            log_path = Path(log_dir) / f"attempt-{number}.log" if log_dir is not None else None
            result = run_verifier(
                task.verify_command(),
                root,
                timeout=task.timeout,
                log_path=log_path,
                sandbox=sandbox,
            )
            # The real change comes from the workspace, never from the attempter's description.
            # A passing change stays; a failing one is diffed and reverted in one scan.
            if result.verdict == "pass":
                diff = ws.diff()
            else:
                diff = ws.diff_and_restore()
                dirty = False
            failed_step = outcome.first_failure()
            patch, truncated = bound_patch(diff.text, patch_limit)
            record = AttemptRecord(
                number=number,
                verdict=result.verdict,
                verifier_output=result.output,
                patch=patch,
                patch_truncated=truncated,
                patch_chars=len(diff.text),
                patch_fingerprint=patch_fingerprint(diff.text),
                files=[f.path for f in diff.files],
                first_failing_step=(
                    FailedStep(failed_step.name, failed_step.error) if failed_step else None
                ),
                signature=failure_signature(
                    result.failure_lines,
                    verdict=result.verdict,
                    output=result.output,
                    tool_error=(
                        f"{failed_step.name}: {failed_step.error}" if failed_step else None
                    ),
                    workspace=root,
                ),
                failure_lines=list(result.failure_lines),
                attempter=current.name,
                description=outcome.description,
                duration=time.monotonic() - started,
            )
            if reviewer is not None and not record.solved:
                record.reviewer_note = reviewer(record) or None
            earlier = [r for r in history.records if r.signature]
            history.append(record)
            ledger.add_record(record)
            if record.solved:
                solved = True
                dirty = False  # the passing change stays
            else:
                log.emit("workspace_restored", attempt=number, paths=len(ws.last_restored))
            log.emit(
                "attempt_finished",
                attempt=number,
                verdict=record.verdict,
                signature=record.signature,
                files=record.files,
                files_total=record.files_total,
                attempter=current.name,
                patch_chars=record.patch_chars,
                duration=round(record.duration, 3),
            )
            if solved:
                break

            same = next((r.number for r in earlier if r.signature == record.signature), None)
            if same is None:
                continue
            log.emit("signature_repeated", attempt=number, same_as=same, signature=record.signature)
            if number == max_attempts:
                continue  # nothing left to change for: no re-plan or escalation after the last
            if on_repeat == "escalate" and escalate_to is not None and current is not escalate_to:
                log.emit(
                    "escalated",
                    attempt=number + 1,
                    from_attempter=current.name,
                    to_attempter=escalate_to.name,
                )
                current = escalate_to
                escalations += 1
            elif on_repeat in ("replan", "escalate") and planner is not None:
                plan = planner.plan(task.text, ledger.context())
                log.emit(
                    "replanned",
                    attempt=number + 1,
                    planner=getattr(planner, "name", ""),
                    chars=len(plan),
                )
                replans += 1
    finally:
        try:
            if dirty:
                # Exception or Ctrl-C mid-attempt: put the workspace back before propagating.
                ws.restore()
                log.emit(
                    "workspace_restored",
                    attempt=len(history) + 1,
                    paths=len(ws.last_restored),
                    reason="interrupted",
                )
        finally:
            ws.close()

    log.emit(
        "run_finished",
        solved=solved,
        attempts=len(history),
        injections=log.count("history_injected"),
        replans=replans,
        escalations=escalations,
    )
    return RunResult(
        task=task.name,
        solved=solved,
        history_mode=history_mode,
        attempts=list(history.records),
        prompts=prompts,
        injections=log.count("history_injected"),
        workspace=str(root),
        replans=replans,
        escalations=escalations,
        events=[e.to_dict() for e in log.events()],
    )


def run_task(
    task: Task, attempter: Attempter, *, workspace: str | Path | None = None, **kwargs: Any
) -> RunResult:
    """Run ``task`` on a temporary copy of its project, or in place when ``workspace`` is given."""
    if workspace is not None:
        return run_loop(task, attempter, workspace=workspace, **kwargs)
    with tempfile.TemporaryDirectory(prefix=f"reference-loop-{task.name}-") as tmp:
        copy = copy_project(task, Path(tmp) / task.name)
        result = run_loop(task, attempter, workspace=copy, **kwargs)
    result.workspace = f"temporary copy of {task.project} (removed)"
    return result
