"""``reference-loop bench``: a thin click skin over ``reference_loop._bench.run_bench``.

Registered on the ``reference-loop`` group by ``reference_loop._cli`` with one
``main.add_command(bench_cmd)`` line, so this file owns the whole command.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import click

from chimera_cards._cli.common import SECONDS, file_option, folder_option, reports_errors
from reference_loop._attempters.factory import agent_settings
from reference_loop._attempters.presets import is_preset
from reference_loop._bench.journal import journal_path
from reference_loop._bench.merge import merge_results
from reference_loop._bench.ray_executor import RayOptions, ray_executor
from reference_loop._bench.report import format_table, write_plot
from reference_loop._bench.runner import (
    ARMS,
    DEFAULT_ATTEMPTER,
    AttempterSettings,
    BenchResult,
    Progress,
    RunOutcome,
    check_attempters,
    grid,
    load_tasks,
    parse_arms,
    run_bench,
)
from reference_loop._bench.shard import parse_shard, select
from reference_loop._cli.options import agent_options, model_options
from reference_loop._process.stop import signals_raise_stopped
from reference_loop._run.loop import DEFAULT_MAX_ATTEMPTS
from reference_loop._tasks.impossible import KINDS
from reference_loop.errors import LoopError, LoopUsageError


def default_jobs(attempter: str) -> int:
    """Runs in parallel when --jobs is not given.

    A local model already uses every core for one call, and a second concurrent model would only
    halve each call's speed while doubling memory; ``llm:`` therefore runs one at a time (pass
    --jobs for a hosted model). An agent preset's CLI is as heavy (and meters a hosted model):
    one too. Scripted and ``cmd:`` runs mostly wait on subprocesses: two."""
    if attempter.startswith("llm:") or is_preset(attempter):
        return 1
    return min(2, os.cpu_count() or 1)


def owned_stream(stream: TextIO) -> TextIO:
    """A private copy of ``stream``'s file descriptor, so code that redirects fd 1 or fd 2 while
    the bench runs (model libraries do, from any thread) cannot swallow the bench's output.
    Streams without a descriptor (a test runner's buffer) are used as they are."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, io.UnsupportedOperation):
        return stream
    stream.flush()
    return os.fdopen(os.dup(fd), "w", encoding="utf-8", closefd=True)


def check_writable_dir(path: Path) -> None:
    """Create ``path`` and prove a file can be written there, before any run (not after an hour
    of model calls)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        raise LoopUsageError(f"cannot write to {path}: {exc.strerror or exc}") from None


def write_json_file(path: Path, data: dict) -> None:
    """Write ``data`` whole or not at all (a stop mid-write leaves no half file)."""
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise LoopUsageError(f"cannot write {path}: {exc.strerror}") from None


def run_line(outcome: RunOutcome, done: int, total: int, where: str = "") -> str:
    """One line for a finished run, for a log or a pipe (no terminal to draw a bar on);
    ``where``: the machine an executor ran it on ("" here)."""
    if outcome.stopped_by:
        what = f"stopped: {outcome.stopped_by}"
    elif outcome.solved:
        what = f"solved at attempt {outcome.solved_at}"
    else:
        what = "not solved"
    tries = f"{outcome.attempts} attempt{'s' if outcome.attempts != 1 else ''}"
    return (
        f"bench {done}/{total}: {outcome.arm} {outcome.task} seed {outcome.seed}: {what} "
        f"({tries}, {outcome.wall:.1f} s)" + (f" on {where}" if where else "")
    )


@contextlib.contextmanager
def _progress(err: TextIO, total: int) -> Iterator[Progress]:
    """What to call per finished run: a progress bar on a terminal; on a pipe or a log file
    (where a bar prints nothing until the end) one line per run."""
    if err.isatty():
        with click.progressbar(
            length=max(total, 0), label="bench", file=err, show_pos=True, item_show_func=_show_run
        ) as bar:
            yield lambda outcome, where: bar.update(1, (outcome, where))
        return
    finished = 0

    def line(outcome: RunOutcome, where: str) -> None:
        nonlocal finished
        finished += 1
        click.echo(run_line(outcome, finished, total, where), file=err)
        err.flush()

    yield line


def _show_run(item: tuple[RunOutcome, str] | None) -> str:
    """The progress bar's label for the run that just ended, and where it ran (typed, so the
    bar's items are too)."""
    if item is None:
        return ""
    outcome, where = item
    return f"{outcome.arm} {outcome.task} seed {outcome.seed}" + (f" on {where}" if where else "")


@click.group("bench", invoke_without_command=True)
@click.option(
    "--attempter",
    "attempter",
    default=DEFAULT_ATTEMPTER,
    show_default=True,
    metavar="SPEC",
    help="scripted:NAME, cmd:COMMAND, llm:MODEL, or an agent CLI: claude, codex, gemini "
    "(claude:MODEL names the model).",
)
@click.option(
    "--escalate-to",
    metavar="SPEC",
    default=None,
    help="A second (stronger) attempter; adds the accumulate+escalate arm.",
)
@click.option(
    "--arms",
    metavar="A,B,...",
    default=None,
    help=f"Arms to run (default: all that apply). Known: {', '.join(ARMS)}.",
)
@folder_option(
    "--tasks",
    "tasks_dir",
    help="A folder of task folders (or one task folder).",
)
@click.option(
    "--task",
    "task_names",
    multiple=True,
    metavar="NAME|DIR",
    help="A sample task name or task folder; repeatable. Default: all sample tasks.",
)
@click.option(
    "--seeds",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="Seeds 0..N-1 per task; every arm runs on the same task x seed pairs.",
)
@click.option(
    "--max-attempts", type=click.IntRange(min=1), default=DEFAULT_MAX_ATTEMPTS, show_default=True
)
@click.option(
    "--jobs",
    type=click.IntRange(min=1),
    default=None,
    help="Runs in parallel (default: 1 for llm: models, 2 otherwise).",
)
@click.option(
    "--attempt-timeout",
    type=SECONDS,
    default=None,
    help="Seconds one attempt of a cmd: agent or llm: model may take (default 600); then the "
    "agent's process group or the model worker is killed and the attempt fails.",
)
@model_options
@agent_options
@folder_option(
    "--prompts-dir",
    help="Save what each model attempt sent and got: DIR/ARM/TASK/seed-N/attempt-K.prompt.txt "
    "and attempt-K.reply.txt.",
)
@click.option(
    "--ignore",
    "ignore",
    multiple=True,
    metavar="GLOB",
    help="Extra workspace ignore pattern (repeatable), e.g. an agent's history files.",
)
@file_option(
    "--out",
    "out_path",
    help="Write the full results (every run) as JSON; each finished run is also appended to "
    "FILE.cells.jsonl at once, and the same command with the same --out resumes from it.",
)
@file_option(
    "--plot",
    "plot_path",
    help="Write a PNG of solved and repeat-patch rate per attempt "
    "(needs matplotlib: pip install 'chimera-cards[plot]').",
)
@click.option(
    "--shard",
    "shard_text",
    metavar="K/N",
    default=None,
    help="Run only slice K of N of the task x seed x arm grid (deterministic); combine the "
    "slices' --out files with `reference-loop bench merge`.",
)
@click.option(
    "--impossible",
    type=click.Choice(KINDS),
    default=None,
    help="Also run every task as an impossible variant (its pinned tests made to contradict "
    "its text: one expected value changed, or a conflicting second assertion) and report per "
    "arm the cheat rate, the stop rate and the solve rate on the normal tasks.",
)
@click.option(
    "--executor",
    type=click.Choice(["local", "ray"]),
    default="local",
    show_default=True,
    help="Where the runs go: local threads (--jobs), or one Ray task per run (needs the ray "
    "extra).",
)
@click.option(
    "--address",
    metavar="ADDR",
    default=None,
    help="The Ray cluster to join (default: start a local Ray instance for this bench).",
)
@click.option(
    "--sessions",
    type=click.IntRange(min=1),
    default=None,
    help="Ray: at most this many runs at once across the cluster (custom resource "
    "agent_sessions; on an existing cluster the nodes must declare it).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON, not a table.")
@click.pass_context
@reports_errors
def bench_cmd(
    ctx: click.Context,
    attempter: str,
    escalate_to: str | None,
    arms: str | None,
    tasks_dir: Path | None,
    task_names: tuple[str, ...],
    seeds: int,
    max_attempts: int,
    jobs: int | None,
    attempt_timeout: float | None,
    model_options: tuple[tuple[str, str], ...],
    edit_format: str,
    context_tokens: int | None,
    model: str | None,
    agent_args: tuple[str, ...],
    prompts_dir: Path | None,
    ignore: tuple[str, ...],
    out_path: Path | None,
    plot_path: Path | None,
    shard_text: str | None,
    impossible: str | None,
    executor: str,
    address: str | None,
    sessions: int | None,
    as_json: bool,
) -> None:
    """Compare history arms (none, last, accumulate, ...) over the same task x seed pairs.

    Prints per arm: solved rate, attempts to solve, repeat-patch rate, injections, prompt size
    at the last attempt, edit rate, protected-path violations, replies cut at max tokens and
    seconds per model call; then the validity gates and a paired comparison of every arm against
    `last`. Ctrl-C or SIGTERM stops within seconds and writes what finished, marked partial;
    with --out, the same command again runs only the cells that had not finished.
    Exit 0 when every arm is valid, 1 when one is VOID, 2 on a usage error, 130/143 when stopped.
    Each arm also counts integrity violations (integ): attempts that gamed the check.
    """
    if ctx.invoked_subcommand is not None:
        return
    shard = parse_shard(shard_text) if shard_text is not None else None
    if executor != "ray" and (address is not None or sessions is not None):
        raise LoopUsageError("--address and --sessions need --executor ray")
    out = owned_stream(sys.stdout)
    err = owned_stream(sys.stderr)
    chosen = parse_arms(arms, escalate_to=escalate_to)
    tasks = load_tasks(tasks_dir, task_names)
    for path in (out_path, plot_path):
        # Refuse before the run, not after minutes of work are lost.
        if path is not None and not path.resolve().parent.is_dir():
            raise LoopUsageError(f"cannot write {path}: no such directory")
    if prompts_dir is not None:
        check_writable_dir(prompts_dir)
    agent_settings([attempter, escalate_to], model, agent_args)  # refuses them without a preset
    settings = AttempterSettings(
        attempt_timeout=attempt_timeout,
        options=dict(model_options),
        context_tokens=context_tokens,
        prompts_dir=prompts_dir,
        edit_format=edit_format,
        model=model,
        agent_args=agent_args,
    )
    # A bad spec or a prompt that cannot fit the model is refused before the progress bar.
    budgets = check_attempters(tasks, attempter, escalate_to, settings)
    # Each impossible variant is one more task in the grid, after the normal ones.
    total = len(select(grid(list(tasks) * (2 if impossible else 1), chosen, seeds), shard))
    with signals_raise_stopped(), _progress(err, total) as progress:
        result = run_bench(
            tasks,
            attempter=attempter,
            arms=chosen,
            seeds=seeds,
            max_attempts=max_attempts,
            escalate_to=escalate_to,
            jobs=jobs if jobs is not None else default_jobs(attempter),
            ignore=ignore,
            progress=progress,
            settings=settings,
            budgets=budgets,
            shard=shard,
            impossible=impossible,
            journal=journal_path(out_path) if out_path is not None else None,
            executor=(
                ray_executor(
                    RayOptions(address=address, sessions=sessions),
                    attempter=attempter,
                    escalate_to=escalate_to,
                    max_attempts=max_attempts,
                    settings=settings,
                    ignore=ignore,
                    budgets=budgets,
                )
                if executor == "ray"
                else None
            ),
        )
    if result.resumed:
        click.echo(
            f"resumed: {result.resumed} of {result.runs_planned} runs read back from "
            f"{journal_path(out_path) if out_path is not None else ''}",
            file=err,
        )
    _finish(result, out, err, out_path, plot_path, as_json)


def _finish(
    result: BenchResult,
    out: TextIO,
    err: TextIO,
    out_path: Path | None,
    plot_path: Path | None,
    as_json: bool,
) -> None:
    """Write the results, print the table, and exit with the bench's code."""
    if out_path is not None:
        write_json_file(out_path, result.to_dict())
    if plot_path is not None and not result.partial:
        try:
            write_plot(result, plot_path)
            click.echo(f"plot written to {plot_path}", file=err)
        except LoopError as exc:
            click.echo(f"plot skipped: {exc}", file=err)
    if as_json:
        click.echo(json.dumps(result.to_dict(), indent=2), file=out)
    else:
        click.echo(format_table(result), file=out)
    out.flush()
    if result.missing:
        click.echo(
            f"partial: slices {', '.join(map(str, result.missing))} were not given",
            file=err,
        )
        err.flush()
        sys.exit(1)
    if result.partial:
        click.echo(
            f"stopped by {result.stopped}: {len(result.runs)} of {result.runs_planned} runs "
            "finished" + (f"; written to {out_path} marked partial" if out_path else ""),
            file=err,
        )
        err.flush()
        sys.exit(128 + (signal.SIGTERM if result.stopped == "SIGTERM" else signal.SIGINT))
    err.flush()
    sys.exit(0 if result.valid else 1)


@bench_cmd.command("merge")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False, path_type=Path))
@file_option(
    "--out",
    "out_path",
    help="Write the merged results as JSON.",
)
@file_option(
    "--plot",
    "plot_path",
    help="Write the PNG of the merged results (needs matplotlib).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON, not a table.")
@reports_errors
def bench_merge_cmd(
    files: tuple[Path, ...], out_path: Path | None, plot_path: Path | None, as_json: bool
) -> None:
    """Combine the --out files of `bench --shard K/N` runs into one result: the same table,
    plot and paired statistics as one run. Files made with different settings or code are
    refused (exit 2); missing slices make the result partial (exit 1)."""
    for path in (out_path, plot_path):
        if path is not None and not path.resolve().parent.is_dir():
            raise LoopUsageError(f"cannot write {path}: no such directory")
    result = merge_results(list(files))
    _finish(
        result, owned_stream(sys.stdout), owned_stream(sys.stderr), out_path, plot_path, as_json
    )
