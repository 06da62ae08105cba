"""The bench's report: the arms table with its gates and paired comparisons, and the plot.

Pure rendering of a ``BenchResult``; nothing here runs or decides anything.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from reference_loop._bench.runner import BASELINE, BenchResult
from reference_loop._bench.stats import PairedComparison, wilson_interval
from reference_loop._tasks.impossible import is_variant
from reference_loop.errors import LoopError


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
        "edit rate",
        "viol",
        "integ",
        "cut",
        "tok@last",
        "s/call",
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
                f"{a.edit_rate:.2f} ({a.applied_edits}/{a.attempts})",
                str(a.violations),
                str(a.integrity),
                str(a.cut_replies),
                _fmt(a.mean_last_prompt_tokens, ".0f"),
                _fmt(a.seconds_per_call, ".1f"),
                f"{a.wall_time:.1f}",
                "ok" if a.valid else "VOID",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = [
        f"attempter {result.attempter}"
        + (f", escalate to {result.escalate_to}" if result.escalate_to else "")
        + f"; {_grid(result)}; "
        f"max {result.max_attempts} attempts; {result.wall_time:.1f}s"
    ]
    if result.shard is not None:
        lines.append(
            f"slice {result.shard} of the grid ({len(result.runs)} runs); "
            "`reference-loop bench merge` combines the slices"
        )
    if result.missing:
        lines.append(
            f"PARTIAL: slices {', '.join(map(str, result.missing))} were not merged; "
            f"{len(result.runs)} of {result.runs_planned} runs; the numbers below cover only those"
        )
    elif result.partial:
        lines.append(
            f"PARTIAL: stopped by {result.stopped} after {len(result.runs)} of "
            f"{result.runs_planned} runs; the numbers below cover only the finished runs"
        )
    for i, row in enumerate(rows):
        lines.append(
            "  ".join(
                cell.ljust(w) if j == 0 else cell.rjust(w)
                for j, (cell, w) in enumerate(zip(row, widths, strict=False))
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
    if result.nothing_applied:
        lines.append("")
        lines.append(
            "Nothing applied: no attempt in any arm changed the workspace, so the arms cannot "
            "differ and the comparison below measures nothing (see the first failing steps)."
        )
    if result.solved_vs_baseline:
        n = result.solved_vs_baseline[0].n
        lines.append("")
        lines.append(
            f"Paired vs {BASELINE} over the same {n} task x seed pairs "
            "(b = arm yes & last no, c = reverse; exact McNemar p; 95% Newcombe CI):"
        )
        for s, r in zip(result.solved_vs_baseline, result.repeat_free_vs_baseline, strict=False):
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
    if result.impossible:
        lines.extend(_impossible_lines(result))
    return "\n".join(lines)


def _impossible_lines(result: BenchResult) -> list[str]:
    """Cheat, stop and solve rates per arm, the mutations, and the paired comparisons."""
    lines = [
        "",
        f"Impossible variants ({result.impossible}): the pinned tests contradict the task, so "
        "any pass is a cheat (marked = the verdict caught every passing attempt); the table "
        "above covers the normal tasks.",
    ]
    head = (
        "arm",
        "cheat",
        "rate",
        "marked",
        "stop",
        "rate",
        "solved (normal)",
        "rate",
        "stop (normal)",
    )
    rows = [head]
    for a in result.impossible_arms:
        rows.append(
            (
                a.arm,
                f"{a.cheats}/{a.runs}",
                f"{a.cheat_rate:.2f}",
                str(a.marked_cheats),
                f"{a.stops}/{a.runs}",
                f"{a.stop_rate:.2f}",
                f"{a.normal_solved}/{a.normal_runs}",
                f"{a.solve_rate:.2f}",
                f"{a.normal_stops}/{a.normal_runs}",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for i, row in enumerate(rows):
        lines.append(
            "  ".join(
                cell.ljust(w) if j == 0 else cell.rjust(w)
                for j, (cell, w) in enumerate(zip(row, widths, strict=True))
            ).rstrip()
        )
        if i == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines.append("Mutations (file:line, pinned -> variant; the diff is in --out/--json):")
    for m in result.mutations:
        lines.append(f"  {m['variant']}: {m['file']}:{m['line']}  {m['old']}  ->  {m['new']}")
    if result.cheat_vs_baseline:
        lines.append(
            f"Paired vs {BASELINE}: cheated and stopped on the impossible pairs, solved on the "
            "normal ones:"
        )
        solved = {c.arm: c for c in result.solved_vs_baseline}
        for c, s in zip(result.cheat_vs_baseline, result.stop_vs_baseline, strict=True):
            three = [("cheated", c), ("stopped", s)]
            if c.arm in solved:
                three.append(("solved", solved[c.arm]))
            for what, cmp in three:
                verdict = "differs" if cmp.significant else "no clear difference (noise)"
                lines.append(
                    f"  {cmp.arm if what == 'cheated' else '':<20} {what:<8} diff {_ci(cmp)}  "
                    f"b={cmp.b} c={cmp.c}  p={cmp.p_value:.3g}  {verdict}"
                )
    return lines


def _grid(result: BenchResult) -> str:
    variants = sum(1 for t in result.tasks if is_variant(t))
    normal = len(result.tasks) - variants
    extra = f" + {variants} impossible variants" if variants else ""
    return f"{normal} tasks{extra} x {len(result.seeds)} seeds"


# The three rates the impossible table prints, as the plot draws them: (label, colour, hatch).
_RATES = (
    ("solved (normal)", "tab:green", ""),
    ("cheated (impossible)", "tab:red", "//"),
    ("stopped (impossible)", "tab:blue", ".."),
)


def impossible_bars(result: BenchResult) -> list[tuple[str, str, int, int]]:
    """Per arm and rate, what the plot's third panel draws: (arm, rate label, k, n)."""
    out = []
    for a in result.impossible_arms:
        counts = ((a.normal_solved, a.normal_runs), (a.cheats, a.runs), (a.stops, a.runs))
        for (label, _, _), (k, n) in zip(_RATES, counts, strict=True):
            out.append((a.arm, label, k, n))
    return out


def _plot_impossible(ax: Any, result: BenchResult) -> None:
    """Grouped bars per arm: solve rate on the normal tasks beside the cheat and stop rates on
    the impossible variants, each with its 95% Wilson interval and n/N over the bar."""
    arms = [a.arm for a in result.impossible_arms]
    bars = impossible_bars(result)
    width = 0.8 / len(_RATES)
    for j, (label, colour, hatch) in enumerate(_RATES):
        mine = [(arms.index(arm), k, n) for arm, what, k, n in bars if what == label]
        xs = [i + (j - 1) * width for i, _, _ in mine]
        ys = [k / n if n else 0.0 for _, k, n in mine]
        spans = [wilson_interval(k, n, 1.96) if n else (0.0, 0.0) for _, k, n in mine]
        errs = [
            [y - lo for y, (lo, _) in zip(ys, spans, strict=True)],
            [hi - y for y, (_, hi) in zip(ys, spans, strict=True)],
        ]
        ax.bar(
            xs,
            ys,
            width,
            yerr=errs,
            capsize=3,
            color=colour,
            hatch=hatch,
            alpha=0.8,
            label=label,
            edgecolor="black",
            linewidth=0.5,
        )
        for x, (_, hi), (_, k, n) in zip(xs, spans, mine, strict=True):
            ax.text(x, hi + 0.01, f"{k}/{n}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(arms)))
    ax.set_xticklabels(arms, fontsize=8)
    ax.set(
        title=f"Impossible variants ({result.impossible}) beside the normal tasks",
        ylabel="share of runs (95% Wilson interval)",
        ylim=(0, 1.18),
    )
    ax.grid(alpha=0.3, axis="y")
    ax.legend(fontsize=7, loc="upper right")


def write_plot(result: BenchResult, path: str | Path) -> Path:
    """Solved rate and repeat-patch rate per arm per attempt, as a PNG; with impossible
    variants a third panel: per arm the solve, cheat and stop rates. Needs matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise LoopError("the plot needs matplotlib: pip install 'chimera-cards[plot]'") from None
    panels = 3 if result.impossible_arms else 2
    fig, axes = plt.subplots(1, panels, figsize=(5.5 * panels, 4.2))
    ax1, ax2 = axes[0], axes[1]
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
    if result.impossible_arms:
        _plot_impossible(axes[2], result)
    fig.suptitle(f"reference-loop bench: {result.attempter}, {_grid(result)}", fontsize=10)
    fig.tight_layout()
    out = Path(path)
    try:
        fig.savefig(out, dpi=110)
    except OSError as exc:
        raise LoopError(f"cannot write {out}: {exc.strerror or exc}") from None
    finally:
        plt.close(fig)
    return out
