"""The reference loop: attempt, judge, capture the real diff, revert, record, retry with history.

Per attempt: compose the prompt (task + plan + rendered history) -> the attempter edits the
workspace -> run the verifier -> take the real diff from the workspace and, unless it passed,
restore it in the same scan -> append an ``AttemptRecord`` -> go again. One scan of the tree per
attempt keeps the cost near ``git status``; the caches a verifier writes (``__pycache__``,
``.pytest_cache`` ...) are in the workspace's default ignore list, so they stay out of the patch.

An attempt that changes a protected path (``Task.protected()``: the tests and the files the
verify command runs, by default) is reverted before the verifier runs and fails with a
``protected-paths`` first failing step, so no attempt can pass by editing the check.

When a failure signature repeats, the loop changes something structural instead of appending
one more copy of the same failure: it re-plans (planner + ``TaskLedger.context()``) or escalates
to a stronger attempter, once per repeat and never after the final attempt.

The workspace is restored in a ``finally``: an exception or Ctrl-C mid-attempt leaves it exactly
as it was; only a solved run leaves the passing change in place.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reference_loop._attempters.base import Attempter, AttemptOutcome
from reference_loop._core.cards import (
    DEFAULT_CARDS_IN,
    CardsBlock,
    cards_for_attempt,
    check_cards_in,
)
from reference_loop._core.events import EventLog
from reference_loop._core.history import DEFAULT_BUDGET, check_mode, records_shown, render_fitted
from reference_loop._core.ledger import TaskLedger
from reference_loop._core.planner import Planner
from reference_loop._core.records import (
    DEFAULT_PATCH_LIMIT,
    AttemptRecord,
    FailedStep,
    History,
    bound_patch,
    patch_fingerprint,
)
from reference_loop._core.signature import failure_signature
from reference_loop._process.sandbox import Sandbox
from reference_loop._tasks.impossible import STOP_FILE
from reference_loop._tasks.prompt import compose_prompt
from reference_loop._tasks.task import Task, copy_project
from reference_loop._verdict.evidence import FORMATS
from reference_loop._verdict.hosthooks import configured_hook_dirs, host_hooks
from reference_loop._verdict.integrity import Violation, describe
from reference_loop._verdict.patchreview import INTEGRITY, Mark, Rule
from reference_loop._verdict.protect import check_patterns
from reference_loop._verdict.session import Baseline, Session, SessionSettings, outlived
from reference_loop._verdict.verifier import VerifyResult
from reference_loop._workspace.core import Workspace
from reference_loop._workspace.engines import engine_name
from reference_loop._workspace.records import Diff
from reference_loop.errors import LoopUsageError

ON_REPEAT = ("none", "replan", "escalate")
DEFAULT_MAX_ATTEMPTS = 5
PROTECTED_STEP = "protected-paths"  # the first failing step of an attempt that edited the check
INTEGRITY_STEP = "integrity"  # the first failing step of an attempt that gamed its check


@dataclass
class RunResult:
    """Everything one loop run produced: its records, the exact prompts, and what it counted."""

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
    # What the verdicts rest on: pytest-report, junit, or exit-status (the exit status alone).
    evidence: str = "exit-status"
    pinned: dict[str, Any] | None = None  # the pinned tests (source, count, files, f2p/p2p)
    containment: str = ""  # how the verifier's processes were contained
    # What the evidence is worth against code in the run: "exit-status" for a JUnit file
    # without this run's nonce (anything in the run could have written it).
    evidence_grade: str = "exit-status"
    witnesses: dict[str, Any] | None = None  # what the report is cross-checked with

    @property
    def solved_at(self) -> int | None:
        """The number of the attempt that passed, or None."""
        return next((r.number for r in self.attempts if r.solved), None)

    @property
    def stopped(self) -> str | None:
        """Why the attempter stopped the run (the tests contradict the task), or None."""
        last = self.attempts[-1] if self.attempts else None
        return last.description if last is not None and last.verdict == STOPPED else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "solved": self.solved,
            "solved_at": self.solved_at,
            "stopped": self.stopped,
            "history_mode": self.history_mode,
            "injections": self.injections,
            "replans": self.replans,
            "escalations": self.escalations,
            "workspace": self.workspace,
            "evidence": self.evidence,
            "evidence_grade": self.evidence_grade,
            "witnesses": self.witnesses,
            "judged_by_exit_status_alone": self.evidence == "exit-status",
            "pinned": self.pinned,
            "containment": self.containment,
            "integrity_violations": sum(bool(r.integrity) for r in self.attempts),
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
                    "protected_violation": r.protected_violation,
                    "integrity": list(r.integrity),
                    "verifier_exit_code": r.verifier_exit_code,
                    "integrity_findings": list(r.findings),
                    "prompt_chars": len(p),
                }
                for r, p in zip(self.attempts, self.prompts, strict=True)
            ],
        }


@dataclass
class LoopOptions:
    """How one run behaves; the CLI, the check and the bench each build one.

    ``protect`` adds glob patterns to the task's own protected paths (``Task.protected()``).
    ``reviewer`` (e.g. a critic model) may return a note for a failed attempt; it is stored
    beside the verifier output, never instead of it.
    """

    history_mode: str = "accumulate"
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    budget: int = DEFAULT_BUDGET
    patch_limit: int = DEFAULT_PATCH_LIMIT
    on_repeat: str = "none"
    planner: Planner | None = None
    escalate_to: Attempter | None = None
    prompts_dir: str | Path | None = None
    log_dir: str | Path | None = None
    ignore: Sequence[str] = ()
    protect: Sequence[str] = ()
    cards: CardsBlock | None = None
    cards_in: str = DEFAULT_CARDS_IN
    reviewer: Callable[[AttemptRecord], str | None] | None = None
    sandbox: Sandbox | None = None  # run the verifier inside bubblewrap (sandbox.py)
    # How the verdict is read: auto (a pytest command -> its report), pytest, junit (the
    # command writes JUnit XML to {result_file}), exit-status (the exit status alone).
    verify_format: str = "auto"
    must_pass: Sequence[str] = ()  # test ids that must pass (added to the task's must_pass)
    # The workspace engine (``git`` or ``fast``); None: $REFERENCE_LOOP_WORKSPACE, else the default.
    workspace_engine: str | None = None
    # The patch review's rules (None: ``patchreview.default_rules()``; () reviews nothing).
    review_rules: Sequence[Rule] | None = None

    def check(self) -> None:
        """Raise LoopUsageError for an option value or combination the loop cannot run."""
        check_mode(self.history_mode)
        if self.verify_format not in FORMATS:
            raise LoopUsageError(
                f"unknown verify format {self.verify_format!r} "
                f"(expected one of: {', '.join(FORMATS)})"
            )
        if any(not isinstance(t, str) or not t.strip() for t in self.must_pass):
            raise LoopUsageError("a must-pass test id must be a non-empty string")
        check_cards_in(self.cards_in)
        check_patterns(self.protect)
        if self.workspace_engine is not None:
            engine_name(self.workspace_engine)
        if self.max_attempts < 1:
            raise LoopUsageError(f"max attempts must be at least 1, got {self.max_attempts}")
        if self.on_repeat not in ON_REPEAT:
            raise LoopUsageError(
                f"unknown on-repeat action {self.on_repeat!r} "
                f"(expected one of: {', '.join(ON_REPEAT)})"
            )
        if self.on_repeat == "replan" and self.planner is None:
            raise LoopUsageError("on-repeat 'replan' needs a planner")
        if self.on_repeat == "escalate" and self.escalate_to is None:
            raise LoopUsageError("on-repeat 'escalate' needs an attempter to escalate to")


@dataclass
class _RunState:
    """What changes between attempts besides the history: the plan and the current attempter."""

    current: Attempter
    plan: str = ""
    replans: int = 0
    escalations: int = 0


def _prompts_dir(path: str | Path | None) -> Path | None:
    if path is None:
        return None
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        # Refuse a folder that exists but takes no files (/proc/self) before any attempt.
        tempfile.TemporaryFile(dir=path).close()
    except OSError as exc:
        raise LoopUsageError(f"cannot create prompts dir {path}: {exc.strerror}") from exc
    return path


def _violation_step(number: int, found: Sequence[Violation], *, before: bool) -> FailedStep:
    """The first failing step of an attempt with violations: ``protected-paths`` when it edited
    a protected path (as before), ``integrity`` otherwise; each class is named, and the next
    prompt reads "attempt 2 changed the test runner's config; reverted"."""
    classes = list(dict.fromkeys(v.kind for v in found))
    classes.sort(key=lambda k: k != "protected-path")  # the plain case first, the others last
    said = f"attempt {number} " + " and ".join(describe(k) for k in classes)
    listed = "; ".join(v.line() if v.path else f"{v.kind}: {v.why}" for v in found[:12])
    if len(found) > 12:
        listed += f"; and {len(found) - 12} more"
    undone = (
        "the whole change was reverted before the verifier ran"
        if before
        else "the change was not kept"
    )
    protected = [v for v in found if v.kind == "protected-path"]
    if protected:
        paths = ", ".join(f"{v.path} ({v.why})" for v in protected[:12])
        return FailedStep(
            PROTECTED_STEP,
            f"the attempt changed protected path(s): {paths}; {undone}. {said}; reverted "
            f"({listed}). Fix the code, not the tests or the check.",
        )
    return FailedStep(
        INTEGRITY_STEP,
        f"{said}; reverted ({listed}); {undone}. Fix the code, not the check or its runner.",
    )


def _build_record(
    number: int,
    outcome: AttemptOutcome,
    result: VerifyResult,
    diff: Diff,
    *,
    attempter: Attempter,
    violation: FailedStep | None,
    patch_limit: int,
    root: Path,
    started: float,
    found: Sequence[Violation] = (),
    findings: Sequence[dict[str, Any]] = (),
) -> AttemptRecord:
    """The attempt's record: the verifier's verdict, the workspace's real diff, the first failure.

    A protected-path violation is the first failing step whatever the attempter reported, and it
    can never be a pass (the verifier judged the reverted workspace, not the attempt). Any other
    integrity violation makes the verdict ``integrity``: not solved, and not a plain failure.
    """
    tool_step = outcome.first_failure()
    failed = violation or (FailedStep(tool_step.name, tool_step.error) if tool_step else None)
    verdict = "fail" if violation is not None and result.verdict == "pass" else result.verdict
    if any(v.kind != "protected-path" for v in found):
        verdict = "integrity"
    patch, truncated = bound_patch(diff.text, patch_limit)
    return AttemptRecord(
        number=number,
        verdict=verdict,
        verifier_output=result.output,
        patch=patch,
        patch_truncated=truncated,
        patch_chars=len(diff.text),
        patch_fingerprint=patch_fingerprint(diff.text),
        files=[f.path for f in diff.files],
        first_failing_step=failed,
        signature=failure_signature(
            result.failure_lines,
            verdict=verdict,
            output=result.output,
            tool_error=f"{failed.name}: {failed.error}" if failed else None,
            workspace=root,
        ),
        failure_lines=list(result.failure_lines),
        attempter=attempter.name,
        description=outcome.description,
        duration=time.monotonic() - started,
        protected_violation=any(v.kind == "protected-path" for v in found),
        integrity=list(dict.fromkeys(v.kind for v in found)),
        verifier_exit_code=result.exit_code,
        findings=[dict(f) for f in findings],
    )


STOPPED = "stopped"
MAX_STOP_REASON = 2000


def stop_reason(root: Path) -> str | None:
    """The reason in the workspace's stop file, or None when there is none (a link or a folder
    in its place is no stop: only a regular file the attempt wrote)."""
    path = root / STOP_FILE
    try:
        if not path.is_file() or path.is_symlink():
            return None
        with path.open("rb") as fh:
            text = fh.read(MAX_STOP_REASON).decode("utf-8", "replace")
    except OSError:
        return None
    return " ".join(text.split()) or "the tests contradict the task"


def _stopped(
    number: int,
    outcome: AttemptOutcome,
    reason: str,
    ws: Workspace,
    attempter: Attempter,
    started: float,
    log: EventLog,
) -> AttemptRecord:
    """The attempter says the tests contradict the task: nothing is verified, the workspace
    goes back to the snapshot, and the run ends with that as its result."""
    diff = ws.diff_and_restore()
    log.emit("attempt_stopped", attempt=number, reason=reason)
    return AttemptRecord(
        number=number,
        verdict=STOPPED,
        verifier_output="",
        patch="",
        files=[f.path for f in diff.files if f.path != STOP_FILE],
        attempter=attempter.name,
        description=reason,
        duration=time.monotonic() - started,
    )


def _attempt_once(
    attempter: Attempter,
    prompt: str,
    number: int,
    ws: Workspace,
    session: Session,
    options: LoopOptions,
    log: EventLog,
    known: tuple[Sequence[str], frozenset[str]] = ((), frozenset()),
) -> AttemptRecord:
    """Let the attempter edit, refuse a change that games the check, verify, diff and revert.

    The real change comes from the workspace, never from the attempter's description; the
    integrity checks see every changed path, ignore rules not applied. A change that edits a
    protected path, the runner's config, shadows a module, plants bytecode, or leaves processes
    running is reverted *before* the verifier runs. After the verifier, what changed while it
    ran (a protected file rewritten) fails the attempt too. A passing change stays; a failing
    one is diffed and reverted in one scan.
    """
    started = time.monotonic()
    outcome = attempter.attempt(prompt, ws.root, attempt=number)
    reason = stop_reason(ws.root)
    if reason is not None:
        return _stopped(number, outcome, reason, ws, attempter, started, log)
    before = ws.diff()
    found = session.check(before)
    hook_dirs, outputs = known  # the tree's hook folders; where the verifier writes by itself
    found += host_hooks(before.every_change(), hook_dirs, root=ws.root, original=ws.original)
    # The patch review reads the attempt's source before any of it runs.
    marks = session.review(before, ws.original)
    reached = [m.violation() for m in marks if m.severity == INTEGRITY]
    if marks:
        _emit_violations(log, number, reached, stage="patch-review", marks=marks)
    left = getattr(outcome, "left_running", 0) or 0
    if left:
        found.append(outlived(left))
    if found:
        ws.restore()
        _emit_violations(log, number, found, stage="before-verify")
    verified = session.verify(number, None if found else before)
    result = verified.result
    after: list[Violation] = []
    if found:
        ws.restore()  # whatever the verifier wrote; the attempt's own change is already gone
    else:
        # The patch is ``before``, taken before the verifier ran; the tree after it must be
        # that same tree (a module that puts the bug back on disk once imported is caught).
        now = ws.diff() if result.verdict == "pass" else ws.diff_and_restore()
        after = [
            *verified.violations,
            *changed_while_verifying(before, now, outputs),
            *session.check_after(before, now),
        ]
        if result.verdict == "pass":
            if after or reached:
                ws.restore()
            else:
                # The change kept is the patch shown, nothing else: what an ignore rule hid,
                # the caches the verifier wrote and every .git go back to the snapshot, so
                # nothing the patch does not show stays to run later.
                ws.restore(keep=_patch_paths(before))
        if after:
            _emit_violations(log, number, after, stage="verify")
    every = [*found, *after, *reached]
    findings = [
        *(_finding(v, "before-verify") for v in found),
        *(_finding(v, "verify") for v in after),
        *(m.to_dict() | {"stage": "patch-review"} for m in marks),
    ]
    return _build_record(
        number,
        outcome,
        result,
        before,
        attempter=attempter,
        violation=_violation_step(number, every, before=bool(found)) if every else None,
        patch_limit=options.patch_limit,
        root=ws.root,
        started=started,
        found=every,
        findings=findings,
    )


# What a verifier writes on its own while it runs (bytecode caches, the runner's cache,
# hypothesis's cache of the code's constants, named by the source's hash): a change to these
# during verification is not the attempt's, and a restore removes it anyway.
_RUNNER_CACHE_DIRS = ("__pycache__", ".pytest_cache", ".hypothesis")


def _runner_cache(path: str) -> bool:
    parts = path.split("/")
    return path.endswith((".pyc", ".pyo")) or any(p in _RUNNER_CACHE_DIRS for p in parts[:-1])


def _patch_paths(diff: Diff) -> set[str]:
    """The paths a patch changes (both sides of a rename)."""
    return {p for c in diff.files for p in (c.path, c.old_path) if p}


def changed_while_verifying(
    before: Diff, now: Diff, outputs: Collection[str] = ()
) -> list[Violation]:
    """Every path whose content, mode or existence differs between the tree the verifier was
    given (``before``) and the tree it left (``now``), and every path of a ``.git`` that
    changed meanwhile: each one a ``changed-during-verify`` violation naming what happened to
    it. The verdict of such a run judged code that is not on disk. Runner caches and
    ``outputs`` (the paths the verifier wrote on the untouched tree: a report, a coverage
    file) are the verifier's own writes."""
    found: list[Violation] = []
    paths = sorted(before.state.keys() | now.state.keys())
    for path in paths:
        was, is_now = before.state.get(path), now.state.get(path)
        if was == is_now or _runner_cache(path) or path in outputs:
            continue
        if was is None:
            # Not changed by the attempt: it was the snapshot's before the verifier ran.
            what = "removed" if is_now is not None and set(is_now[1]) == {"0"} else "rewritten"
        elif is_now is None:
            what = "put back as it was before the attempt"
        elif set(is_now[1]) == {"0"}:
            what = "removed"
        elif set(was[1]) == {"0"}:
            what = "made again"
        else:
            what = "rewritten"
        found.append(Violation("changed-during-verify", path, f"{what} while the verifier ran"))
    git_before = {(c.path, c.status) for c in before.git_dirs}
    for change in now.git_dirs:
        if (change.path, change.status) not in git_before:
            found.append(
                Violation("changed-during-verify", change.path, "written while the verifier ran")
            )
    return found


def _finding(v: Violation, stage: str) -> dict[str, Any]:
    return {"class": v.kind, "path": v.path, "why": v.why, "stage": stage, "severity": INTEGRITY}


def _emit_violations(
    log: EventLog,
    number: int,
    found: Sequence[Violation],
    *,
    stage: str,
    marks: Sequence[Mark] = (),
) -> None:
    protected = [v for v in found if v.kind == "protected-path"]
    if protected:
        log.emit(
            "protected_violation",
            attempt=number,
            paths=[v.path for v in protected],
            patterns=sorted({v.why.removeprefix("matches ") for v in protected}),
        )
    log.emit(
        "integrity_violation",
        attempt=number,
        stage=stage,
        classes=list(dict.fromkeys(v.kind for v in found)),
        violations=[{"class": v.kind, "path": v.path, "why": v.why} for v in found],
        marks=[m.to_dict() for m in marks],
    )


def _after_repeat(
    task: Task,
    record: AttemptRecord,
    same_as: int,
    state: _RunState,
    ledger: TaskLedger,
    options: LoopOptions,
    log: EventLog,
) -> None:
    """A failure signature came back: escalate once, else re-plan (never after the last attempt)."""
    number = record.number
    log.emit("signature_repeated", attempt=number, same_as=same_as, signature=record.signature)
    if number == options.max_attempts:
        return  # nothing left to change for
    stronger = options.escalate_to
    if options.on_repeat == "escalate" and stronger is not None and state.current is not stronger:
        log.emit(
            "escalated",
            attempt=number + 1,
            from_attempter=state.current.name,
            to_attempter=stronger.name,
        )
        state.current = stronger
        state.escalations += 1
    elif options.on_repeat in ("replan", "escalate") and options.planner is not None:
        state.plan = options.planner.plan(task.text, ledger.context())
        log.emit(
            "replanned",
            attempt=number + 1,
            planner=getattr(options.planner, "name", ""),
            chars=len(state.plan),
        )
        state.replans += 1


def _keep_record(
    record: AttemptRecord,
    history: History,
    ledger: TaskLedger,
    options: LoopOptions,
    log: EventLog,
    ws: Workspace,
) -> int | None:
    """Add the reviewer's note, append the record, tell the events; return the number of an
    earlier attempt that failed with the same signature (a repeat), if any."""
    if options.reviewer is not None and not record.solved:
        record.reviewer_note = options.reviewer(record) or None
    earlier = [r for r in history.records if r.signature]
    history.append(record)
    ledger.add_record(record)
    if not record.solved:
        log.emit("workspace_restored", attempt=record.number, paths=len(ws.last_restored))
    log.emit(
        "attempt_finished",
        attempt=record.number,
        verdict=record.verdict,
        signature=record.signature,
        files=record.files,
        files_total=record.files_total,
        attempter=record.attempter,
        patch_chars=record.patch_chars,
        duration=round(record.duration, 3),
        protected_violation=record.protected_violation,
        integrity=list(record.integrity),
        verifier_exit_code=record.verifier_exit_code,
        integrity_findings=list(record.findings),
        step=(
            f"{record.first_failing_step.name}: {record.first_failing_step.error}"
            if record.first_failing_step and not record.solved
            else ""
        ),
    )
    if record.solved:
        return None
    return next((r.number for r in earlier if r.signature == record.signature), None)


def _compose_for(
    task: Task, number: int, history: History, state: _RunState, options: LoopOptions, log: EventLog
) -> str:
    history_text, cut = render_fitted(history.records, options.history_mode, options.budget)
    shown = records_shown(history.records, options.history_mode)
    cards_text = cards_for_attempt(options.cards, number, options.cards_in)
    if cards_text and options.cards is not None:
        log.emit("cards_injected", attempt=number, cards=options.cards.count, chars=len(cards_text))
    if shown:
        log.emit(
            "history_injected",
            attempt=number,
            records=shown,
            chars=len(history_text),
            cut_chars=cut,  # shrunk oldest-first to fit the budget (a model's context window)
        )
    return compose_prompt(task, history_text, state.plan, cards_text)


def _session(task: Task, options: LoopOptions, root: Path, protected: tuple[str, ...]) -> Session:
    """The verifier session for this run: the task's check, pinned and judged from outside."""
    return Session(
        SessionSettings(
            command=task.verify_command(),
            timeout=task.timeout,
            protect=protected,
            verify_format=options.verify_format,
            must_pass=tuple(dict.fromkeys((*task.must_pass, *options.must_pass))),
            sandbox=options.sandbox,
            log_dir=Path(options.log_dir) if options.log_dir else None,
            review_rules=options.review_rules,
        ),
        root,
    )


def _finish(
    task: Task,
    solved: bool,
    history: History,
    prompts: list[str],
    root: Path,
    state: _RunState,
    session: Session,
    baseline: Baseline,
    options: LoopOptions,
    log: EventLog,
) -> RunResult:
    """The ``run_finished`` event, and the run's result."""
    log.emit(
        "run_finished",
        solved=solved,
        attempts=len(history),
        injections=log.count("history_injected"),
        replans=state.replans,
        escalations=state.escalations,
        protected_violations=sum(r.protected_violation for r in history),
        integrity_violations=sum(bool(r.integrity) for r in history),
        evidence=session.evidence,
    )
    return RunResult(
        task=task.name,
        solved=solved,
        history_mode=options.history_mode,
        attempts=list(history.records),
        prompts=prompts,
        injections=log.count("history_injected"),
        workspace=str(root),
        replans=state.replans,
        escalations=state.escalations,
        events=[e.to_dict() for e in log.events()],
        evidence=session.evidence,
        pinned=session.pinned.to_dict() if session.pinned else None,
        containment=baseline.containment,
        evidence_grade=session.grade,
        witnesses=session.witnesses.to_dict() if session.kind == "pytest" else None,
    )


def run_loop(
    task: Task,
    attempter: Attempter,
    *,
    workspace: str | Path,
    options: LoopOptions | None = None,
    events: EventLog | None = None,
) -> RunResult:
    """Run the loop on ``workspace`` in place and return every attempt's record.

    Args:
        task: what to solve and how it is verified (its protected paths included).
        attempter: who edits the workspace for each attempt.
        workspace: the folder worked on in place.
        options: how the run behaves (LoopOptions() when None).
        events: where events go (a private EventLog when None).

    Returns:
        The RunResult: every attempt's record, every prompt, the injection count.
    """
    options = options if options is not None else LoopOptions()
    options.check()
    root = Path(workspace).resolve()
    prompts_dir = _prompts_dir(options.prompts_dir)
    protected = (*task.protected(), *check_patterns(options.protect))
    log = events if events is not None else EventLog()
    history = History()
    ledger = TaskLedger()
    ledger.add_fact(f"`{task.shown_verify()}` is the check; it must exit 0.")
    prompts: list[str] = []
    state = _RunState(current=attempter)
    solved = False

    session = _session(task, options, root, protected)
    ws = Workspace(root, ignore=options.ignore, engine=options.workspace_engine)
    hook_dirs = configured_hook_dirs(root)  # before any attempt could change the config
    dirty = False  # the workspace may differ from the snapshot and must be restored
    try:
        ws.snapshot()
        log.emit(
            "run_started",
            task=task.name,
            history_mode=options.history_mode,
            max_attempts=options.max_attempts,
            attempter=attempter.name,
            workspace=str(root),
            protected=list(protected),
        )
        dirty = True
        baseline = session.start()
        # Whatever the baseline run wrote is undone; where it wrote are the verifier's own
        # outputs (a report file, a coverage file), which may change while it judges later.
        outputs = frozenset(ws.diff_and_restore().state)
        dirty = False
        log.emit("verdict_baseline", **baseline.to_dict())
        for number in range(1, options.max_attempts + 1):
            prompt = _compose_for(task, number, history, state, options, log)
            prompts.append(prompt)
            if prompts_dir is not None:
                (prompts_dir / f"attempt-{number}.txt").write_text(prompt, encoding="utf-8")
            log.emit(
                "attempt_started",
                attempt=number,
                attempter=state.current.name,
                prompt_chars=len(prompt),
            )
            dirty = True
            record = _attempt_once(
                state.current, prompt, number, ws, session, options, log, (hook_dirs, outputs)
            )
            dirty = False  # a failed attempt was reverted; a passing change stays
            same = _keep_record(record, history, ledger, options, log, ws)
            solved = record.solved
            if solved or record.verdict == STOPPED:
                break
            if same is not None:
                _after_repeat(task, record, same, state, ledger, options, log)
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
            session.close()

    return _finish(task, solved, history, prompts, root, state, session, baseline, options, log)


def run_task(
    task: Task,
    attempter: Attempter,
    *,
    workspace: str | Path | None = None,
    options: LoopOptions | None = None,
    events: EventLog | None = None,
) -> RunResult:
    """Run ``task`` on a temporary copy of its project, or in place when ``workspace`` is given.

    Args:
        task: the task; its project folder is copied unless ``workspace`` is given.
        attempter: who edits the workspace.
        workspace: work in place on this folder instead of a copy.
        options: how the run behaves (LoopOptions() when None).
        events: where events go.

    Returns:
        The RunResult (``workspace`` names the removed copy when one was used).
    """
    if workspace is not None:
        return run_loop(task, attempter, workspace=workspace, options=options, events=events)
    if options is not None:
        options.check()  # before copying anything
    with tempfile.TemporaryDirectory(prefix=f"reference-loop-{task.name}-") as tmp:
        copy = copy_project(task, Path(tmp) / task.name)
        result = run_loop(task, attempter, workspace=copy, options=options, events=events)
    result.workspace = f"temporary copy of {task.project} (removed)"
    return result
