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

import os
import platform
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from reference_loop.attempters import make_attempter
from reference_loop.errors import LoopError, LoopUsageError
from reference_loop.loop import DEFAULT_MAX_ATTEMPTS, LoopOptions, RunResult, run_task
from reference_loop.planner import make_planner
from reference_loop.stats import PairedComparison, paired_compare
from reference_loop.tasks import (
    MANIFEST,
    Task,
    load_task_dir,
    load_task_dirs,
    resolve_task,
    sample_tasks,
)


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

    @property
    def repeat_count(self) -> int:
        return sum(self.repeats)

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


def outcome_from_result(
    arm: str, task: str, seed: int, result: RunResult, wall: float
) -> RunOutcome:
    fps = [r.patch_fingerprint for r in result.attempts]
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

    @property
    def valid(self) -> bool:
        return all(a.valid for a in self.arms)

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
            "wall_time": self.wall_time,
            "machine": self.machine,
            "arms": [a.to_dict() for a in self.arms],
            "paired_vs_last": {
                "solved": [c.to_dict() for c in self.solved_vs_baseline],
                "repeat_free": [c.to_dict() for c in self.repeat_free_vs_baseline],
            },
            "runs": [r.to_dict() for r in self.runs],
        }


def machine_info() -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "processor": platform.processor() or platform.machine(),
    }


def run_one(
    task: Task,
    arm: Arm,
    seed: int,
    *,
    attempter: str,
    escalate_to: str | None,
    max_attempts: int,
    attempt_timeout: float | None,
    ignore: Sequence[str] = (),
) -> RunOutcome:
    """One loop run on a fresh temporary copy of the task; attempters are built per run so a
    scripted or sampled attempter starts from its seed every time."""
    att = _build(attempter, seed, task, attempt_timeout)
    options = LoopOptions(
        history_mode=arm.history_mode,
        max_attempts=max_attempts,
        on_repeat=arm.on_repeat,
        ignore=tuple(ignore),
    )
    if arm.on_repeat == "replan":
        options.planner = make_planner("scripted")
    if arm.on_repeat == "escalate":
        options.escalate_to = _build(escalate_to or "", seed, task, attempt_timeout)
    started = time.monotonic()
    result = run_task(task, att, options=options)
    return outcome_from_result(arm.name, task.name, seed, result, time.monotonic() - started)


def _build(spec: str, seed: int, task: Task, attempt_timeout: float | None):
    att = make_attempter(spec, seed=seed, task=task)
    if attempt_timeout is not None and hasattr(att, "timeout"):
        att.timeout = attempt_timeout  # the cmd: attempter's agent timeout
    return att


def check_attempters(
    tasks: Sequence[Task],
    attempter: str,
    escalate_to: str | None,
    attempt_timeout: float | None = None,
) -> None:
    """Build each attempter once up front, so a bad spec is one clear error before any run."""
    if not tasks:
        raise LoopUsageError("no tasks to run")
    _build(attempter, 0, tasks[0], attempt_timeout)
    if escalate_to:
        _build(escalate_to, 0, tasks[0], attempt_timeout)


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
    progress: Callable[[RunOutcome], None] | None = None,
) -> BenchResult:
    """Run every arm on every task x seed pair and summarise. ``progress`` is called per run.

    ``ignore``: extra workspace ignore patterns, e.g. an agent's own chat-history files, which
    would otherwise make every patch look new and hide repeats."""
    arms = list(arms) if arms is not None else parse_arms(None, escalate_to=escalate_to)
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
    check_attempters(tasks, attempter, escalate_to, attempt_timeout)

    jobs_list = [(task, arm, seed) for task in tasks for seed in range(seeds) for arm in arms]
    started = time.monotonic()

    def work(item: tuple[Task, Arm, int]) -> RunOutcome:
        task, arm, seed = item
        return run_one(
            task,
            arm,
            seed,
            attempter=attempter,
            escalate_to=escalate_to,
            max_attempts=max_attempts,
            attempt_timeout=attempt_timeout,
            ignore=ignore,
        )

    outcomes: list[RunOutcome] = []
    if jobs == 1:
        for item in jobs_list:
            outcomes.append(work(item))
            if progress:
                progress(outcomes[-1])
    else:
        # Threads are enough: the work is subprocesses (git, the verifier, an agent).
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for out in pool.map(work, jobs_list):
                outcomes.append(out)
                if progress:
                    progress(out)

    summaries = [
        summarise_arm(arm, [o for o in outcomes if o.arm == arm.name], max_attempts) for arm in arms
    ]
    solved_cmp: list[PairedComparison] = []
    repeat_cmp: list[PairedComparison] = []
    if any(a.name == BASELINE for a in arms):
        key = lambda o: (o.task, o.seed)  # noqa: E731 - a sort key
        base = sorted((o for o in outcomes if o.arm == BASELINE), key=key)
        for arm in arms:
            if arm.name == BASELINE:
                continue
            mine = sorted((o for o in outcomes if o.arm == arm.name), key=key)
            assert [key(o) for o in mine] == [key(o) for o in base]  # same pairs, by construction
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
    return BenchResult(
        attempter=attempter,
        escalate_to=escalate_to,
        arms=summaries,
        solved_vs_baseline=solved_cmp,
        repeat_free_vs_baseline=repeat_cmp,
        runs=outcomes,
        tasks=[t.name for t in tasks],
        seeds=list(range(seeds)),
        max_attempts=max_attempts,
        wall_time=time.monotonic() - started,
        machine=machine_info(),
    )


# ---------------------------------------------------------------------------------- rendering


def _fmt(x: float | None, spec: str = ".2f") -> str:
    return "-" if x is None else format(x, spec)


def _ci(c: PairedComparison) -> str:
    return f"{c.diff:+.2f} [{c.ci_low:+.2f}, {c.ci_high:+.2f}]"


def format_table(result: BenchResult) -> str:
    """The human-readable report: arms table, validity gates, paired comparisons vs `last`."""
    head = (
        "arm",
        "solved",
        "rate",
        "att-to-solve",
        "repeat-patch",
        "injections",
        "replan/esc",
        "prompt@last",
        "wall s",
        "status",
    )
    rows = [head]
    for a in result.arms:
        rows.append(
            (
                a.arm,
                f"{a.solved}/{a.runs}",
                _fmt(a.solved_rate),
                _fmt(a.mean_attempts_to_solve),
                f"{a.repeat_patch_rate:.2f} ({a.repeated_attempts}/{a.attempts})",
                str(a.injections),
                f"{a.replans}/{a.escalations}",
                f"{a.mean_last_prompt_chars:.0f}",
                f"{a.wall_time:.1f}",
                "ok" if a.valid else "VOID",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = [
        f"attempter {result.attempter}"
        + (f", escalate to {result.escalate_to}" if result.escalate_to else "")
        + f"; {len(result.tasks)} tasks x {len(result.seeds)} seeds; "
        f"max {result.max_attempts} attempts; {result.wall_time:.1f}s"
    ]
    for i, row in enumerate(rows):
        lines.append(
            "  ".join(
                cell.ljust(w) if j == 0 else cell.rjust(w)
                for j, (cell, w) in enumerate(zip(row, widths))
            ).rstrip()
        )
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    steps = [(a.arm, a.failing_steps) for a in result.arms if a.failing_steps]
    if steps:
        lines.append("")
        lines.append("First failing tool step (attempts):")
        for arm, counts in steps:
            lines.append(f"  {arm}: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    lines.append("")
    lines.append("Validity gates:")
    for a in result.arms:
        lines.append(f"  {a.arm}: {a.gate}")
    if result.solved_vs_baseline:
        n = result.solved_vs_baseline[0].n
        lines.append("")
        lines.append(
            f"Paired vs {BASELINE} over the same {n} task x seed pairs "
            "(b = arm yes & last no, c = reverse; exact McNemar p; 95% Newcombe CI):"
        )
        for s, r in zip(result.solved_vs_baseline, result.repeat_free_vs_baseline):
            verdict = "differs" if s.significant else "no clear difference (noise)"
            lines.append(
                f"  {s.arm:<20} solved      diff {_ci(s)}  b={s.b} c={s.c}  "
                f"p={s.p_value:.3g}  {verdict}"
            )
            verdict = "differs" if r.significant else "no clear difference (noise)"
            lines.append(
                f"  {'':<20} repeat-free diff {_ci(r)}  b={r.b} c={r.c}  "
                f"p={r.p_value:.3g}  {verdict}"
            )
    elif len(result.arms) > 1:
        lines.append("")
        lines.append(f"(no paired comparison: arm '{BASELINE}' was not run)")
    return "\n".join(lines)


def write_plot(result: BenchResult, path: str | Path) -> Path:
    """Solved rate and repeat-patch rate per arm per attempt, as a PNG. Needs matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise LoopError("the plot needs matplotlib: pip install 'chimera-cards[plot]'") from None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
    styles = ["-", "--", "-.", ":"]
    markers = ["o", "s", "^", "D", "v", "x"]
    for i, a in enumerate(result.arms):
        # Arms often coincide exactly; a small x offset and distinct styles keep each visible.
        dx = (i - (len(result.arms) - 1) / 2) * 0.05
        style = {
            "linestyle": styles[i % len(styles)],
            "marker": markers[i % len(markers)],
            "label": a.arm,
            "alpha": 0.85,
        }
        xs = [p.attempt + dx for p in a.per_attempt]
        ax1.plot(xs, [p.solved_rate for p in a.per_attempt], **style)
        pts = [(p.attempt + dx, p.repeat_rate) for p in a.per_attempt if p.repeat_rate is not None]
        ax2.plot([x for x, _ in pts], [y for _, y in pts], **style)
    ax1.set(
        title="Solved by attempt k", xlabel="attempt", ylabel="share of runs", ylim=(-0.03, 1.03)
    )
    ax2.set(
        title="Attempt k repeats an earlier patch",
        xlabel="attempt",
        ylabel="share of attempts k",
        ylim=(-0.03, 1.03),
    )
    for ax in (ax1, ax2):
        ax.set_xticks(range(1, result.max_attempts + 1))
        ax.grid(alpha=0.3)
    ax2.legend(fontsize=8, loc="best")
    fig.suptitle(
        f"reference-loop bench: {result.attempter}, {len(result.tasks)} tasks x "
        f"{len(result.seeds)} seeds",
        fontsize=10,
    )
    fig.tight_layout()
    out = Path(path)
    try:
        fig.savefig(out, dpi=110)
    except OSError as exc:
        raise LoopError(f"cannot write {out}: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)
    return out
