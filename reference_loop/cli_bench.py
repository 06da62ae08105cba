"""``reference-loop bench``: a thin click skin over ``reference_loop.bench.run_bench``.

Registered on the ``reference-loop`` group by ``reference_loop.cli`` with one
``main.add_command(bench_cmd)`` line, so this file owns the whole command.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from chimera_cards.cli.common import SECONDS, echo_json, reports_errors
from reference_loop.bench import (
    ARMS,
    DEFAULT_ATTEMPTER,
    check_attempters,
    format_table,
    load_tasks,
    parse_arms,
    run_bench,
    write_plot,
)
from reference_loop.errors import LoopError, LoopUsageError
from reference_loop.loop import DEFAULT_MAX_ATTEMPTS


@click.command("bench")
@click.option(
    "--attempter",
    "attempter",
    default=DEFAULT_ATTEMPTER,
    show_default=True,
    metavar="SPEC",
    help="scripted:NAME, cmd:COMMAND or llm:MODEL.",
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
@click.option(
    "--tasks",
    "tasks_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
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
    default=min(2, os.cpu_count() or 1),
    show_default=True,
    help="Runs in parallel.",
)
@click.option(
    "--attempt-timeout",
    type=SECONDS,
    default=None,
    help="Seconds a cmd: agent may run per attempt before its process group is killed.",
)
@click.option(
    "--ignore",
    "ignore",
    multiple=True,
    metavar="GLOB",
    help="Extra workspace ignore pattern (repeatable), e.g. an agent's history files.",
)
@click.option(
    "--out",
    "out_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the full results (every run) as JSON.",
)
@click.option(
    "--plot",
    "plot_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write a PNG of solved and repeat-patch rate per attempt "
    "(needs matplotlib: pip install 'chimera-cards[plot]').",
)
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON, not a table.")
@reports_errors
def bench_cmd(
    attempter: str,
    escalate_to: str | None,
    arms: str | None,
    tasks_dir: Path | None,
    task_names: tuple[str, ...],
    seeds: int,
    max_attempts: int,
    jobs: int,
    attempt_timeout: float | None,
    ignore: tuple[str, ...],
    out_path: Path | None,
    plot_path: Path | None,
    as_json: bool,
) -> None:
    """Compare history arms (none, last, accumulate, ...) over the same task x seed pairs.

    Prints per arm: solved rate, attempts to solve, repeat-patch rate, injections, prompt size
    at the last attempt and wall time; then the validity gates (an arm that should inject but
    counted zero injections is VOID) and a paired comparison of every arm against `last`.
    Exit 0 when every arm is valid, 1 when one is VOID, 2 on a usage error.
    """
    chosen = parse_arms(arms, escalate_to=escalate_to)
    tasks = load_tasks(tasks_dir, task_names)
    check_attempters(tasks, attempter, escalate_to, attempt_timeout)
    for path in (out_path, plot_path):
        # Refuse before the run, not after minutes of work are lost.
        if path is not None and not path.resolve().parent.is_dir():
            raise LoopUsageError(f"cannot write {path}: no such directory")
    total = len(tasks) * seeds * len(chosen)
    with click.progressbar(
        length=max(total, 0),
        label="bench",
        file=sys.stderr,
        show_pos=True,
        item_show_func=lambda o: f"{o.arm} {o.task} seed {o.seed}" if o else "",
    ) as bar:
        result = run_bench(
            tasks,
            attempter=attempter,
            arms=chosen,
            seeds=seeds,
            max_attempts=max_attempts,
            escalate_to=escalate_to,
            jobs=jobs,
            attempt_timeout=attempt_timeout,
            ignore=ignore,
            progress=lambda o: bar.update(1, o),
        )
    if out_path is not None:
        try:
            out_path.write_text(json.dumps(result.to_dict(), indent=2) + "\n", encoding="utf-8")
        except OSError as exc:
            raise LoopUsageError(f"cannot write {out_path}: {exc.strerror}") from None
    if plot_path is not None:
        try:
            write_plot(result, plot_path)
            click.echo(f"plot written to {plot_path}", err=True)
        except LoopError as exc:
            click.echo(f"plot skipped: {exc}", err=True)
    if as_json:
        echo_json(result.to_dict())
    else:
        click.echo(format_table(result))
    sys.exit(0 if result.valid else 1)
