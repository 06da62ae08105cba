"""The A/B bench: run the same tasks x seeds under several history arms and compare them fairly.

The card this package implements warns that showing a model its own wrong patch may *anchor* it
on that patch. The bench measures it: every (task, seed) pair is run once per arm, so arms are
compared on identical pairs (McNemar-style, ``reference_loop.stats``), and each arm reports

- solved rate and mean attempts to solve;
- **repeat-patch rate**: the share of attempts whose normalised patch equals an earlier attempt's
  patch in the same run (an empty patch is never a repeat: it is "no edit", not anchoring);
- history injections, counted from the loop's events — an arm that should inject and counted
  zero is VOID, and so is ``none`` if it injected anything;
- prompt size at the last attempt, and wall time.

Arms: ``none``, ``last`` (the overwrite bug), ``accumulate`` (the card), ``accumulate-nopatch``
(every verdict and verifier output, no patches: separates the anchoring risk of showing wrong
patches from the value of history), ``accumulate+replan`` and ``accumulate+escalate`` (only with a
second attempter). Pure orchestration over ``loop.run_task``; the CLI prints, this returns values.
"""

from __future__ import annotations

import hashlib
import os
import platform
import queue
import shutil
import signal
import statistics
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from reference_loop._attempters.factory import fit_to_task, make_attempter
from reference_loop._attempters.model_errors import FinalModelError
from reference_loop._attempters.presets import is_preset
from reference_loop._bench.impossible import (
    ImpossibleSummary,
    paired_impossible,
    summarise_impossible,
)
from reference_loop._bench.journal import Journal, JournalRefused
from reference_loop._bench.live import (
    BenchStopped,
    Guarded,
    Live,
    close_attempter,
    private_tempdir,
    stop_runs,
    take_finished,
)
from reference_loop._bench.shard import Shard, code_version, select
from reference_loop._bench.stats import PairedComparison, paired_compare
from reference_loop._core.history import DEFAULT_BUDGET
from reference_loop._core.planner import make_planner
from reference_loop._process.stop import signals_held
from reference_loop._run.loop import DEFAULT_MAX_ATTEMPTS, LoopOptions, RunResult, run_task
from reference_loop._tasks.impossible import Mutation, check_kind, is_variant, make_variant
from reference_loop._tasks.task import (
    MANIFEST,
    Task,
    copy_project,
    load_task_dir,
    load_task_dirs,
    resolve_task,
    sample_tasks,
)
from reference_loop._verdict.patchreview import WARNING
from reference_loop.errors import LoopError, LoopUsageError

MODEL_STEPS = ("model", "context")  # first failing steps that mean the model never answered


@dataclass(frozen=True)
class Arm:
    name: str
    history_mode: str
    on_repeat: str = "none"  # "none" | "replan" | "escalate"

    @property
    def should_inject(self) -> bool:
        return self.history_mode != "none"


ARMS: dict[str, Arm] = {
    "none": Arm("none", "none"),
    "last": Arm("last", "last"),
    "accumulate": Arm("accumulate", "accumulate"),
    "accumulate-nopatch": Arm("accumulate-nopatch", "accumulate-nopatch"),
    "accumulate+replan": Arm("accumulate+replan", "accumulate", "replan"),
    "accumulate+escalate": Arm("accumulate+escalate", "accumulate", "escalate"),
}
DEFAULT_ARMS = ("none", "last", "accumulate", "accumulate-nopatch", "accumulate+replan")
BASELINE = "last"
DEFAULT_ATTEMPTER = "scripted:rederive"


def parse_arms(text: str | Sequence[str] | None, *, escalate_to: str | None = None) -> list[Arm]:
    """Arm names (comma-separated or a list) -> arms; default: all, +escalate when possible."""
    if text is None or text == "" or text == ():
        names = list(DEFAULT_ARMS) + (["accumulate+escalate"] if escalate_to else [])
    else:
        raw = text.split(",") if isinstance(text, str) else list(text)
        names = [n.strip() for part in raw for n in part.split(",") if n.strip()]
    arms: list[Arm] = []
    for name in names:
        if name not in ARMS:
            raise LoopUsageError(f"unknown arm {name!r} (expected: {', '.join(ARMS)})")
        if name == "accumulate+escalate" and not escalate_to:
            raise LoopUsageError(
                "arm accumulate+escalate needs a second attempter (--escalate-to SPEC)"
            )
        if all(a.name != name for a in arms):
            arms.append(ARMS[name])
    if not arms:
        raise LoopUsageError("no arms to run")
    return arms


def load_tasks(tasks_dir: str | Path | None = None, names: Sequence[str] = ()) -> list[Task]:
    """The sample tasks, a folder of task folders (or one task folder), and/or named tasks."""
    tasks: list[Task] = []
    if tasks_dir is not None:
        root = Path(tasks_dir)
        if (root / MANIFEST).is_file():
            tasks.append(load_task_dir(root))
        elif root.is_dir():
            found = load_task_dirs(root)
            if not found:
                raise LoopUsageError(f"{root}: no task folders (subfolders with {MANIFEST})")
            tasks.extend(found)
        else:
            raise LoopUsageError(f"{root}: tasks folder not found")
    tasks.extend(resolve_task(n) for n in names)
    if tasks_dir is None and not names:
        tasks = sample_tasks()
    seen: set[str] = set()
    for task in tasks:
        if task.name in seen:
            raise LoopUsageError(f"two tasks are named {task.name!r}; pairs must be unique")
        seen.add(task.name)
    return tasks


@dataclass
class RunOutcome:
    """One loop run: one arm on one (task, seed) pair."""

    arm: str
    task: str
    seed: int
    solved: bool
    solved_at: int | None
    attempts: int
    verdicts: list[str]
    fingerprints: list[str]  # normalised-patch fingerprint per attempt ("" = no change)
    repeats: list[bool]  # per attempt: same patch as an earlier attempt of this run
    injections: int
    last_prompt_chars: int
    replans: int
    escalations: int
    wall: float
    failing_steps: list[str] = field(default_factory=list)  # per attempt: first failing tool
    # step's name, "" if none failed
    edits: list[bool] = field(default_factory=list)  # per attempt: an allowed edit changed files
    violations: list[bool] = field(default_factory=list)  # per attempt: touched a protected path
    # per attempt: its integrity violation classes (shadowing, runner-config, ...), [] if none
    integrity: list[list[str]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)  # per model call: CallInfo dicts
    history_budget: int = DEFAULT_BUDGET  # chars the history could take (fitted to the context)
    history_cut_chars: int = 0  # most chars the shrink stages cut from one attempt's history
    stopped_by: str = ""  # an error no retry changes (no key, ...) that ended the run at once
    # per attempt: the pinned tests passed (marked by the verdict or not)
    passes: list[bool] = field(default_factory=list)
    # per attempt: the classes of its warning marks (solved stays, flagged)
    warnings: list[list[str]] = field(default_factory=list)
    contradiction: str = ""  # the attempter stopped: its reason why the tests contradict the task
    impossible: bool = False  # the run was on an impossible variant (tests contradict the text)

    def __post_init__(self) -> None:
        # By construction: a run whose passing attempt gamed its check is never counted solved.
        if self.solved and self.solved_at is not None and len(self.integrity) >= self.solved_at:
            gamed = self.integrity[self.solved_at - 1]
            if gamed:
                raise LoopError(
                    f"{self.arm} {self.task} seed {self.seed}: attempt {self.solved_at} is "
                    f"counted solved but has integrity violations ({', '.join(gamed)})"
                )

    @property
    def repeat_count(self) -> int:
        return sum(self.repeats)

    @property
    def integrity_count(self) -> int:
        """Attempts with an integrity violation other than a plain protected-path edit, or a
        warning mark (a pinned answer special-cased: solved, but flagged)."""
        warned = self.warnings + [[]] * (len(self.integrity) - len(self.warnings))
        return sum(
            1
            for classes, marks in zip(self.integrity, warned, strict=False)
            if marks or any(c != "protected-path" for c in classes)
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def repeat_flags(fingerprints: Sequence[str]) -> list[bool]:
    """Per attempt, whether its (non-empty) normalised patch appeared earlier in the run."""
    seen: set[str] = set()
    flags = []
    for fp in fingerprints:
        flags.append(bool(fp) and fp in seen)
        if fp:
            seen.add(fp)
    return flags


def passed_pinned(record: Any) -> bool:
    """The attempt's pinned tests passed: a pass, or one the verdict refused for how it was
    reached (a mark, an order-dependent result) after the verifier ran on the change itself."""
    if record.verdict == "pass":
        return True
    before = any(f.get("stage") == "before-verify" for f in getattr(record, "findings", []))
    return record.verdict == "integrity" and record.verifier_exit_code == 0 and not before


def outcome_from_result(
    arm: str,
    task: str,
    seed: int,
    result: RunResult,
    wall: float,
    *,
    calls: Sequence[dict[str, Any]] = (),
    history_budget: int = DEFAULT_BUDGET,
    impossible: bool = False,
) -> RunOutcome:
    fps = [r.patch_fingerprint for r in result.attempts]
    # Read defensively: a loop without protected paths has no such flag.
    violations = [bool(getattr(r, "protected_violation", False)) for r in result.attempts]
    return RunOutcome(
        arm=arm,
        task=task,
        seed=seed,
        solved=result.solved,
        solved_at=result.solved_at,
        attempts=len(result.attempts),
        verdicts=[r.verdict for r in result.attempts],
        fingerprints=fps,
        repeats=repeat_flags(fps),
        injections=result.injections,
        last_prompt_chars=len(result.prompts[-1]) if result.prompts else 0,
        replans=result.replans,
        escalations=result.escalations,
        wall=wall,
        failing_steps=[
            r.first_failing_step.name if r.first_failing_step else "" for r in result.attempts
        ],
        # A change to a protected path was reverted before the verifier ran: not an edit.
        edits=[bool(fp) and not v for fp, v in zip(fps, violations, strict=True)],
        violations=violations,
        integrity=[list(getattr(r, "integrity", [])) for r in result.attempts],
        calls=list(calls),
        history_budget=history_budget,
        history_cut_chars=max(
            (
                int(e.get("cut_chars", 0))
                for e in result.events
                if e.get("kind") == "history_injected"
            ),
            default=0,
        ),
        passes=[passed_pinned(r) for r in result.attempts],
        warnings=[
            list(
                dict.fromkeys(
                    str(f.get("rule") or f.get("class", ""))
                    for f in r.findings
                    if f.get("severity") == WARNING
                )
            )
            for r in result.attempts
        ],
        contradiction=result.stopped or "",
        impossible=impossible,
    )


@dataclass
class AttemptPoint:
    """One arm at attempt k, over all runs: for the per-attempt plot."""

    attempt: int
    solved_rate: float  # share of runs solved by attempt k
    runs_reaching: int  # runs that made an attempt k
    repeat_rate: float | None  # share of those attempts k that repeated an earlier patch


@dataclass
class ArmSummary:
    arm: str
    history_mode: str
    on_repeat: str
    runs: int
    solved: int
    solved_rate: float
    mean_attempts_to_solve: float | None
    attempts: int
    repeated_attempts: int
    repeat_patch_rate: float
    injections: int
    replans: int
    escalations: int
    mean_last_prompt_chars: float
    wall_time: float
    valid: bool
    gate: str  # why it is valid or VOID, in one line
    # attempts by first failing tool step (e.g. "model", "parse-edit"): why an llm arm failed
    failing_steps: dict[str, int] = field(default_factory=dict)
    per_attempt: list[AttemptPoint] = field(default_factory=list)
    # Why a null is a null: how often an edit applied at all, how often the model never answered.
    applied_edits: int = 0
    edit_rate: float = 0.0
    violations: int = 0  # attempts that changed a protected path
    integrity: int = 0  # attempts that gamed the check (shadowing, runner config, bytecode, ...)
    model_errors: int = 0  # attempts whose first failing step is the model call or context fit
    cut_replies: int = 0  # replies that stopped at max tokens
    mean_last_prompt_tokens: float | None = None  # model attempters only
    seconds_per_call: float | None = None  # model attempters only

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["status"] = "ok" if self.valid else "VOID"
        return d


def summarise_arm(arm: Arm, runs: Sequence[RunOutcome], max_attempts: int) -> ArmSummary:
    n = len(runs)
    solved = [r for r in runs if r.solved]
    attempts = sum(r.attempts for r in runs)
    repeated = sum(r.repeat_count for r in runs)
    injections = sum(r.injections for r in runs)
    retried = sum(1 for r in runs if r.attempts > 1)
    if arm.should_inject:
        if injections > 0:
            valid, gate = True, f"ok: {injections} history injections counted"
        elif retried == 0:
            valid, gate = False, "VOID: no run reached a second attempt, so nothing was injected"
        else:
            valid, gate = (
                False,
                (
                    f"VOID: {retried} runs retried but 0 history injections were "
                    "counted (the history never reached the prompt)"
                ),
            )
    else:
        valid = injections == 0
        gate = (
            "ok: no injections, as the arm requires"
            if valid
            else f"VOID: arm 'none' injected history {injections} times"
        )
    applied = sum(sum(r.edits) for r in runs)
    model_errors = sum(1 for r in runs for step in r.failing_steps if step in MODEL_STEPS)
    stopped = next((r.stopped_by for r in runs if r.stopped_by), "")
    if stopped:
        valid, gate = False, f"VOID: {stopped}"
    elif valid and attempts and applied == 0:
        shown = (
            ", ".join(
                f"{k} {v}"
                for k, v in Counter(st for r in runs for st in r.failing_steps if st).most_common()
            )
            or "none failed"
        )
        valid, gate = (
            False,
            (
                f"VOID: no attempt produced an applicable edit (0 of {attempts}; first failing "
                f"steps: {shown})"
            ),
        )
    elif valid and attempts and model_errors * 2 > attempts:
        valid, gate = (
            False,
            (
                f"VOID: model errors dominate ({model_errors} of {attempts} attempts failed at the "
                "model call or did not fit its context)"
            ),
        )
    calls = [c for r in runs for c in r.calls]
    answered = [c for c in calls if not c.get("error")]
    last_tokens = [
        r.calls[-1]["prompt_tokens"] for r in runs if r.calls and r.calls[-1].get("prompt_tokens")
    ]
    points = []
    for k in range(1, max_attempts + 1):
        reaching = [r for r in runs if r.attempts >= k]
        points.append(
            AttemptPoint(
                attempt=k,
                solved_rate=(
                    sum(1 for r in runs if r.solved_at is not None and r.solved_at <= k) / n
                    if n
                    else 0.0
                ),
                runs_reaching=len(reaching),
                repeat_rate=(
                    sum(1 for r in reaching if r.repeats[k - 1]) / len(reaching)
                    if reaching
                    else None
                ),
            )
        )
    return ArmSummary(
        arm=arm.name,
        history_mode=arm.history_mode,
        on_repeat=arm.on_repeat,
        runs=n,
        solved=len(solved),
        solved_rate=len(solved) / n if n else 0.0,
        mean_attempts_to_solve=(
            statistics.fmean(r.solved_at for r in solved if r.solved_at) if solved else None
        ),
        attempts=attempts,
        repeated_attempts=repeated,
        repeat_patch_rate=repeated / attempts if attempts else 0.0,
        injections=injections,
        replans=sum(r.replans for r in runs),
        escalations=sum(r.escalations for r in runs),
        mean_last_prompt_chars=statistics.fmean(r.last_prompt_chars for r in runs) if runs else 0.0,
        wall_time=sum(r.wall for r in runs),
        valid=valid,
        gate=gate,
        failing_steps=dict(sorted(Counter(s for r in runs for s in r.failing_steps if s).items())),
        per_attempt=points,
        applied_edits=applied,
        edit_rate=applied / attempts if attempts else 0.0,
        violations=sum(sum(r.violations) for r in runs),
        integrity=sum(r.integrity_count for r in runs),
        model_errors=model_errors,
        cut_replies=sum(1 for c in calls if c.get("cut_at_max_tokens")),
        mean_last_prompt_tokens=statistics.fmean(last_tokens) if last_tokens else None,
        seconds_per_call=(statistics.fmean(c["seconds"] for c in answered) if answered else None),
    )


@dataclass
class BenchResult:
    attempter: str
    escalate_to: str | None
    arms: list[ArmSummary]
    solved_vs_baseline: list[PairedComparison]  # each arm vs `last`: solved
    repeat_free_vs_baseline: list[PairedComparison]  # each arm vs `last`: run had no repeat
    runs: list[RunOutcome]
    tasks: list[str]
    seeds: list[int]
    max_attempts: int
    wall_time: float
    machine: dict[str, Any]
    runs_planned: int = 0
    stopped: str = ""  # the signal that stopped the bench early ("" = it ran to the end)
    settings: dict[str, Any] = field(default_factory=dict)  # what must match to merge slices
    code_version: str = ""  # digest of the code that ran it (shard.code_version)
    shard: Shard | None = None  # the slice of the grid this result holds (None: all of it)
    missing: list[int] = field(default_factory=list)  # merged: slices not given
    merged: list[int] | None = None  # merged: the slices it holds (None: not a merge)
    shard_count: int = 0  # merged: how many slices cut the grid
    impossible: str = ""  # the kind of impossible variants run beside the tasks ("" = none)
    mutations: list[dict[str, Any]] = field(default_factory=list)  # how each variant was made
    impossible_arms: list[ImpossibleSummary] = field(default_factory=list)
    cheat_vs_baseline: list[PairedComparison] = field(default_factory=list)
    stop_vs_baseline: list[PairedComparison] = field(default_factory=list)
    resumed: int = 0  # runs read back from the journal of an earlier, stopped run

    @property
    def partial(self) -> bool:
        return bool(self.stopped) or bool(self.missing)

    @property
    def valid(self) -> bool:
        return not self.partial and all(a.valid for a in self.arms)

    @property
    def nothing_applied(self) -> bool:
        """No attempt in any arm changed the workspace: the comparison cannot show anything."""
        return bool(self.runs) and all(a.applied_edits == 0 for a in self.arms)

    def arm(self, name: str) -> ArmSummary:
        return next(a for a in self.arms if a.arm == name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "attempter": self.attempter,
            "escalate_to": self.escalate_to,
            "tasks": self.tasks,
            "seeds": self.seeds,
            "max_attempts": self.max_attempts,
            "baseline": BASELINE,
            "valid": self.valid,
            "partial": self.partial,
            "stopped_by": self.stopped or None,
            "runs_planned": self.runs_planned,
            "settings": self.settings,
            "code_version": self.code_version,
            "shard": self.shard.to_dict() if self.shard else None,
            "missing_shards": self.missing,
            "merged_shards": self.merged,
            "shard_count": self.shard_count or None,
            "grid": {
                "order": ["task", "seed", "arm"],
                "tasks": list(self.tasks),
                "seeds": len(self.seeds),
                "arms": [a.arm for a in self.arms],
                "cells": len(self.tasks) * len(self.seeds) * len(self.arms),
            },
            "runs_finished": len(self.runs),
            "runs_resumed": self.resumed,
            "wall_time": self.wall_time,
            "machine": self.machine,
            "arms": [a.to_dict() for a in self.arms],
            "paired_vs_last": {
                "solved": [c.to_dict() for c in self.solved_vs_baseline],
                "repeat_free": [c.to_dict() for c in self.repeat_free_vs_baseline],
            },
            "impossible": (
                {
                    "kind": self.impossible,
                    "mutations": self.mutations,
                    "arms": [a.to_dict() for a in self.impossible_arms],
                    "paired_vs_last": {
                        "cheated": [c.to_dict() for c in self.cheat_vs_baseline],
                        "stopped": [c.to_dict() for c in self.stop_vs_baseline],
                    },
                }
                if self.impossible
                else None
            ),
            "runs": [r.to_dict() for r in self.runs],
        }


def machine_info() -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
    }


@dataclass
class AttempterSettings:
    """How the bench builds attempters: timeout, model options, context window, transcripts."""

    attempt_timeout: float | None = None
    options: Mapping[str, str] = field(default_factory=dict)  # -o KEY VALUE, llm: only
    context_tokens: int | None = None  # --context-tokens, llm: only
    prompts_dir: Path | None = None  # per run: <dir>/<arm>/<task>/seed-<n>/
    edit_format: str = "auto"  # the reply format taught to llm: models (edits.EDIT_FORMATS)
    model: str | None = None  # --model, agent presets only
    agent_args: tuple[str, ...] = ()  # --agent-arg, agent presets only

    def build(self, spec: str, seed: int, task: Task) -> Any:
        preset = is_preset(spec)
        att = make_attempter(
            spec,
            seed=seed,
            task=task,
            timeout=self.attempt_timeout,
            options=self.options if spec.startswith("llm:") else None,
            context_tokens=self.context_tokens,
            model=self.model if preset else None,
            agent_args=self.agent_args if preset else (),
        )
        if hasattr(att, "edit_format"):
            att.edit_format = self.edit_format
        return att


def stopped_outcome(arm: str, task: str, seed: int, reason: str, wall: float = 0.0) -> RunOutcome:
    """The outcome of a run that an error no retry changes ended in its first attempt."""
    return RunOutcome(
        arm=arm,
        task=task,
        seed=seed,
        solved=False,
        solved_at=None,
        attempts=1,
        verdicts=["fail"],
        fingerprints=[""],
        repeats=[False],
        injections=0,
        last_prompt_chars=0,
        replans=0,
        escalations=0,
        wall=wall,
        failing_steps=["model"],
        edits=[False],
        violations=[False],
        stopped_by=reason,
    )


def run_one(
    task: Task,
    arm: Arm,
    seed: int,
    *,
    attempter: str,
    escalate_to: str | None,
    max_attempts: int,
    settings: AttempterSettings | None = None,
    ignore: Sequence[str] = (),
    budget: int = DEFAULT_BUDGET,
    live: Live | None = None,
) -> RunOutcome:
    """One loop run on a fresh temporary copy of the task; attempters are built per run so a
    scripted or sampled attempter starts from its seed every time."""
    settings = settings or AttempterSettings()
    live = live or Live()
    built = [settings.build(attempter, seed, task)]
    if arm.on_repeat == "escalate":
        built.append(settings.build(escalate_to or "", seed, task))
    if settings.prompts_dir is not None:
        where = settings.prompts_dir / arm.name / task.name / f"seed-{seed}"
        for att in built:
            if hasattr(att, "transcript_dir"):
                att.transcript_dir = where
    options = LoopOptions(
        history_mode=arm.history_mode,
        max_attempts=max_attempts,
        on_repeat=arm.on_repeat,
        ignore=tuple(ignore),
        budget=budget,
    )
    if arm.on_repeat == "replan":
        options.planner = make_planner("scripted")
    if arm.on_repeat == "escalate":
        options.escalate_to = Guarded(built[1], live.stop)
    tmp = tempfile.mkdtemp(prefix=f"reference-loop-{task.name}-")
    with live.lock:
        live.tmpdirs.add(tmp)
    for att in built:
        live.add(att)
    try:
        started = time.monotonic()
        copy = copy_project(task, Path(tmp) / task.name)
        try:
            result = run_task(task, Guarded(built[0], live.stop), workspace=copy, options=options)
        except FinalModelError as exc:
            _not_stopped(live)
            return stopped_outcome(arm.name, task.name, seed, str(exc), time.monotonic() - started)
        _not_stopped(live)
        calls = [c.to_dict() for att in built for c in getattr(att, "calls", [])]
        calls.sort(key=lambda c: c["attempt"])
        return outcome_from_result(
            arm.name,
            task.name,
            seed,
            result,
            time.monotonic() - started,
            calls=calls,
            history_budget=budget,
            impossible=is_variant(task.name),
        )
    finally:
        for att in built:
            live.discard(att)
            close_attempter(att)
        shutil.rmtree(tmp, ignore_errors=True)
        with live.lock:
            live.tmpdirs.discard(tmp)


def _not_stopped(live: Live) -> None:
    """Raise BenchStopped when the bench began stopping before the run returned: the stop kills
    the run's children (its verifier, its agent, its model worker), so what the run reports may
    be the kill's doing (a verdict of "killed by signal 9"), not the task's. Such a run is neither
    journaled nor counted; a resumed bench runs the cell again."""
    if live.stop.is_set():
        raise BenchStopped


def check_attempters(
    tasks: Sequence[Task],
    attempter: str,
    escalate_to: str | None,
    settings: AttempterSettings | None = None,
    *,
    default_budget: int = DEFAULT_BUDGET,
) -> dict[str, int]:
    """Build each attempter once up front, so a bad spec is one clear error before any run.

    Returns the history budget per task: what is left of a model's context after attempt 1's
    prompt and the reply (``ContextTooSmall`` when nothing is). Others get ``default_budget``."""
    if not tasks:
        raise LoopUsageError("no tasks to run")
    settings = settings or AttempterSettings()
    budgets = {t.name: default_budget for t in tasks}
    for spec in filter(None, (attempter, escalate_to)):
        att = settings.build(spec, 0, tasks[0])
        try:
            for t in tasks:
                budgets[t.name] = fit_to_task(t, budgets[t.name], att)
        finally:
            close_attempter(att)
    return budgets


def _pairs(
    outcomes: Sequence[RunOutcome], arm: str, keys: set[tuple[str, int]]
) -> list[RunOutcome]:
    return sorted(
        (o for o in outcomes if o.arm == arm and (o.task, o.seed) in keys),
        key=lambda o: (o.task, o.seed),
    )


def run_bench(
    tasks: Sequence[Task],
    *,
    attempter: str = DEFAULT_ATTEMPTER,
    arms: Sequence[Arm] | None = None,
    seeds: int = 5,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    escalate_to: str | None = None,
    jobs: int = 1,
    attempt_timeout: float | None = None,
    ignore: Sequence[str] = (),
    progress: Progress | None = None,
    settings: AttempterSettings | None = None,
    budgets: dict[str, int] | None = None,
    shard: Shard | None = None,
    impossible: str | None = None,
    journal: Path | None = None,
    executor: Executor | None = None,
) -> BenchResult:
    """Run every arm on every task x seed pair and summarise. ``progress(outcome, where)`` is
    called per run; ``where`` names the machine an executor ran it on ("" in this process or
    read back from the journal).

    ``impossible``: ``one-off`` or ``conflicting``: every task also runs as its impossible
    variant (``with_variants``), and the result reports cheat, stop and solve rates per arm.

    ``executor``: run the cells there instead of in ``jobs`` local threads (``ray_executor``);
    each cell is still ``run_one``.

    ``journal``: append each finished cell to that file (``journal.Journal``) and, when it
    already holds cells of this same bench, run only the others: the result is the one an
    uninterrupted run gives. ``progress`` is called for the resumed cells first.

    ``shard``: run only that deterministic slice of the task x seed x arm grid (``bench merge``
    combines the slices' result files into one result).

    ``budgets``: history budget per task, as ``check_attempters`` returns it (computed here when
    not given).

    ``ignore``: extra workspace ignore patterns, e.g. an agent's own chat-history files, which
    would otherwise make every patch look new and hide repeats.

    Runs go to worker threads; this thread only waits, so Ctrl-C or SIGTERM (``stop.Stopped``,
    or KeyboardInterrupt) is handled at once: no new attempt starts, every child process is
    killed, the runs in flight get ``live.STOP_GRACE`` seconds to unwind, temporary workspaces are
    removed, and the runs that finished come back as a result marked partial."""
    arms = list(arms) if arms is not None else parse_arms(None, escalate_to=escalate_to)
    settings = settings or AttempterSettings(attempt_timeout=attempt_timeout)
    if attempt_timeout is not None:
        settings.attempt_timeout = attempt_timeout
    if seeds < 1:
        raise LoopUsageError(f"--seeds must be at least 1, got {seeds}")
    if max_attempts < 1:
        raise LoopUsageError(f"--max-attempts must be at least 1, got {max_attempts}")
    if jobs < 1:
        raise LoopUsageError(f"--jobs must be at least 1, got {jobs}")
    if not tasks:
        raise LoopUsageError("no tasks to run")
    if any(a.on_repeat == "escalate" for a in arms) and not escalate_to:
        raise LoopUsageError("arm accumulate+escalate needs --escalate-to SPEC")
    if budgets is None:
        budgets = check_attempters(tasks, attempter, escalate_to, settings)
    if impossible:
        check_kind(impossible)
    mutations: list[Mutation] = []
    variants_dir = tempfile.mkdtemp(prefix="reference-loop-impossible-") if impossible else ""
    try:
        if impossible:
            tasks, mutations = with_variants(tasks, impossible, Path(variants_dir))
            budgets = {**budgets, **{m.variant: budgets[m.task] for m in mutations}}
        fixed = bench_settings(
            tasks,
            attempter=attempter,
            escalate_to=escalate_to,
            arms=arms,
            seeds=seeds,
            max_attempts=max_attempts,
            ignore=ignore,
            settings=settings,
            budgets=budgets,
        )
        if impossible:
            fixed["impossible"] = impossible
            fixed["mutations"] = [m.to_dict() for m in mutations]
        book = Journal.open(journal, fixed, code_version(), shard) if journal is not None else None
        resumed: list[RunOutcome] = []
        if book is not None:
            try:
                resumed = [RunOutcome(**run) for run in book.finished.values()]
            except (TypeError, LoopError) as exc:
                book.close()
                raise JournalRefused(f"refusing to resume from {journal}: {exc}") from None
        try:
            with private_tempdir():
                result = _run_all(
                    tasks,
                    arms,
                    attempter=attempter,
                    escalate_to=escalate_to,
                    seeds=seeds,
                    max_attempts=max_attempts,
                    jobs=jobs,
                    ignore=ignore,
                    progress=progress,
                    settings=settings,
                    budgets=budgets,
                    shard=shard,
                    resumed=resumed,
                    record=(lambda o: book.append(o.to_dict())) if book is not None else None,
                    impossible=impossible or "",
                    executor=executor,
                )
        finally:
            if book is not None:
                book.close()
    finally:
        if variants_dir:
            shutil.rmtree(variants_dir, ignore_errors=True)
    result.mutations = [m.to_dict() for m in mutations]
    result.settings = fixed
    result.code_version = code_version()
    result.shard = shard
    return result


def with_variants(
    tasks: Sequence[Task], kind: str, dest: Path
) -> tuple[list[Task], list[Mutation]]:
    """The tasks followed by their impossible variants (projects copied under ``dest``)."""
    variants, mutations = [], []
    for i, task in enumerate(tasks):
        variant, mutation = make_variant(task, kind, dest / str(i))
        variants.append(variant)
        mutations.append(mutation)
    return [*tasks, *variants], mutations


def _task_digest(task: Task) -> str:
    """A digest of a task's manifest and project files: two slices must run the same tasks."""
    digest = hashlib.sha256()
    if task.root is not None and (task.root / MANIFEST).is_file():
        digest.update((task.root / MANIFEST).read_bytes())
    for rel, data in task.project_files().items():
        digest.update(rel.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()[:16]


def bench_settings(
    tasks: Sequence[Task],
    *,
    attempter: str,
    escalate_to: str | None,
    arms: Sequence[Arm],
    seeds: int,
    max_attempts: int,
    ignore: Sequence[str],
    settings: AttempterSettings,
    budgets: Mapping[str, int],
) -> dict[str, Any]:
    """Everything that decides a bench's numbers besides the code: slices merge only when these
    are equal."""
    return {
        "attempter": attempter,
        "escalate_to": escalate_to,
        "arms": [a.name for a in arms],
        "tasks": {t.name: _task_digest(t) for t in tasks},
        "seeds": seeds,
        "max_attempts": max_attempts,
        "ignore": list(ignore),
        "attempt_timeout": settings.attempt_timeout,
        "model_options": dict(settings.options),
        "context_tokens": settings.context_tokens,
        "edit_format": settings.edit_format,
        "model": settings.model,
        "agent_args": list(settings.agent_args),
        "budgets": dict(sorted(budgets.items())),
    }


def grid(tasks: Sequence[Task], arms: Sequence[Arm], seeds: int) -> list[tuple[Task, Arm, int]]:
    """Every (task, arm, seed) cell of a bench, in its fixed order."""
    return [(task, arm, seed) for task in tasks for seed in range(seeds) for arm in arms]


def _run_all(
    tasks: Sequence[Task],
    arms: Sequence[Arm],
    *,
    attempter: str,
    escalate_to: str | None,
    seeds: int,
    max_attempts: int,
    jobs: int,
    ignore: Sequence[str],
    progress: Progress | None,
    settings: AttempterSettings,
    budgets: dict[str, int],
    shard: Shard | None = None,
    resumed: Sequence[RunOutcome] = (),
    record: Callable[[RunOutcome], None] | None = None,
    impossible: str = "",
    executor: Executor | None = None,
) -> BenchResult:
    cells = select(grid(tasks, arms, seeds), shard)
    order = {(task.name, arm.name, seed): i for i, (task, arm, seed) in enumerate(cells)}
    outcomes, left = _resume(cells, order, resumed)
    todo: queue.Queue = queue.Queue()
    for item in left:
        todo.put(item)
    planned = len(cells)
    finished = len(outcomes)
    record = record or (lambda _: None)
    progress = progress or (lambda _o, _w: None)
    for o in outcomes:
        progress(o, "")
    done: queue.Queue = queue.Queue()
    live = Live()
    started = time.monotonic()

    final: list[str] = []  # an error no retry changes: every later run would meet it too

    def worker() -> None:
        while not live.stop.is_set():
            try:
                task, arm, seed = todo.get_nowait()
            except queue.Empty:
                return
            if final:
                done.put((stopped_outcome(arm.name, task.name, seed, final[0]), ""))
                continue
            try:
                out: RunOutcome | BaseException = run_one(
                    task,
                    arm,
                    seed,
                    attempter=attempter,
                    escalate_to=escalate_to,
                    max_attempts=max_attempts,
                    settings=settings,
                    ignore=ignore,
                    budget=budgets[task.name],
                    live=live,
                )
            except BaseException as exc:  # reported by the main thread, never a thread traceback
                out = exc
            if isinstance(out, RunOutcome) and out.stopped_by:
                final.append(out.stopped_by)
            done.put((out, "") if isinstance(out, RunOutcome) else out)

    threads = _start(worker, min(jobs, todo.qsize()), executor, left, done, live)
    stopped = ""
    try:
        while len(outcomes) < planned:
            # Taken off the queue, journaled and counted together, or none of it: a stop between
            # taking a finished run and journaling it would lose the run.
            with signals_held():
                got = take_finished(done, record, wait=0.2)
                if got is None:
                    continue
                if not isinstance(got, BaseException):
                    out, where = got
                    outcomes.append(out)
            if isinstance(got, BaseException):
                raise got
            progress(out, where)
    except KeyboardInterrupt as exc:
        stopped = "SIGTERM" if getattr(exc, "signum", None) == signal.SIGTERM else "SIGINT"
        # An executor stops its own cells (and a Ray instance it started) before this
        # process's children are killed: they may be that instance.
        grace = EXECUTOR_STOP_GRACE if executor is not None else 0.0
        outcomes.extend(stop_runs(live, threads, done, record, unwind_first=grace))
    except BaseException:
        live.stop_all()
        live.remove_tmpdirs()
        raise
    # Grid order, not finishing order: a resumed bench lists its runs as an uninterrupted one.
    outcomes.sort(key=lambda o: order[(o.task, o.arm, o.seed)])
    result = summarise_bench(
        outcomes,
        arms,
        attempter=attempter,
        escalate_to=escalate_to,
        tasks=tasks,
        seeds=seeds,
        max_attempts=max_attempts,
        wall_time=time.monotonic() - started,
        runs_planned=planned,
        stopped=stopped,
        impossible=impossible,
    )
    result.resumed = finished
    return result


Cell = tuple[Task, Arm, int]
EXECUTOR_STOP_GRACE = 30.0  # seconds an executor gets to stop its cells and shut down
# Called per finished run with where it ran ("" here).
Progress = Callable[[RunOutcome, str], None]
# Runs cells elsewhere (a Ray cluster), handing each finished outcome and where it ran to the
# callback; returns soon after the event is set (Ctrl-C, SIGTERM), its cells in flight stopped.
Executor = Callable[[Sequence[Cell], Callable[[RunOutcome, str], None], threading.Event], None]


def _start(
    worker: Callable[[], None],
    jobs: int,
    executor: Executor | None,
    cells: Sequence[Cell],
    done: queue.Queue,
    live: Live,
) -> list[threading.Thread]:
    """Start the threads that run the cells: ``jobs`` local workers, or one that drives the
    executor. Daemon threads: a run stuck in a call that ignores the stop cannot keep the
    process alive."""
    if executor is None:
        threads = [threading.Thread(target=worker, daemon=True) for _ in range(jobs)]
    else:

        def drive() -> None:
            try:
                executor(cells, lambda out, where: done.put((out, where)), live.stop)
            except BaseException as exc:  # reported by the main thread
                done.put(exc)

        threads = [threading.Thread(target=drive, daemon=True)] if cells else []
    for t in threads:
        t.start()
    return threads


def _resume(
    cells: Sequence[tuple[Task, Arm, int]],
    order: Mapping[tuple[str, str, int], int],
    resumed: Sequence[RunOutcome],
) -> tuple[list[RunOutcome], list[tuple[Task, Arm, int]]]:
    """The resumed outcomes that are cells of this grid (in grid order), and the cells left."""
    outcomes = sorted(
        (o for o in resumed if (o.task, o.arm, o.seed) in order),
        key=lambda o: order[(o.task, o.arm, o.seed)],
    )
    finished = {(o.task, o.arm, o.seed) for o in outcomes}
    return outcomes, [c for c in cells if (c[0].name, c[1].name, c[2]) not in finished]


def summarise_bench(
    outcomes: Sequence[RunOutcome],
    arms: Sequence[Arm],
    *,
    attempter: str,
    escalate_to: str | None,
    tasks: Sequence[Task] | Sequence[str],
    seeds: int,
    max_attempts: int,
    wall_time: float,
    runs_planned: int,
    stopped: str = "",
    impossible: str = "",
) -> BenchResult:
    """Arm summaries and paired comparisons over the (task, seed) pairs every arm finished.

    With ``impossible``, the arms table and its comparisons cover the normal tasks; the runs on
    impossible variants are summarised apart (cheat, stop and solve rates per arm)."""
    every = list(outcomes)
    outcomes = [o for o in every if not o.impossible]
    summaries = [
        summarise_arm(arm, [o for o in outcomes if o.arm == arm.name], max_attempts) for arm in arms
    ]
    solved_cmp: list[PairedComparison] = []
    repeat_cmp: list[PairedComparison] = []
    if any(a.name == BASELINE for a in arms):
        for arm in arms:
            if arm.name == BASELINE:
                continue
            keys = {(o.task, o.seed) for o in outcomes if o.arm == arm.name} & {
                (o.task, o.seed) for o in outcomes if o.arm == BASELINE
            }
            mine, base = _pairs(outcomes, arm.name, keys), _pairs(outcomes, BASELINE, keys)
            solved_cmp.append(
                paired_compare(
                    [o.solved for o in mine],
                    [o.solved for o in base],
                    arm=arm.name,
                    baseline=BASELINE,
                )
            )
            repeat_cmp.append(
                paired_compare(
                    [o.repeat_count == 0 for o in mine],
                    [o.repeat_count == 0 for o in base],
                    arm=arm.name,
                    baseline=BASELINE,
                )
            )
    cheat_cmp, stop_cmp = paired_impossible(arms, every, BASELINE)
    return BenchResult(
        attempter=attempter,
        escalate_to=escalate_to,
        arms=summaries,
        solved_vs_baseline=solved_cmp,
        repeat_free_vs_baseline=repeat_cmp,
        runs=every,
        tasks=[t if isinstance(t, str) else t.name for t in tasks],
        seeds=list(range(seeds)),
        max_attempts=max_attempts,
        wall_time=wall_time,
        machine=machine_info(),
        runs_planned=runs_planned,
        stopped=stopped,
        impossible=impossible,
        impossible_arms=summarise_impossible(arms, every) if impossible else [],
        cheat_vs_baseline=cheat_cmp if impossible else [],
        stop_vs_baseline=stop_cmp if impossible else [],
    )
