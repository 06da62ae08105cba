"""Benchmark: the CPU one scripted bench cell costs, against its bare verifier runs.

For each sample task, one bench cell (``runner.run_one``: the default scripted attempter, arm
``accumulate``, seed 0) is run and its CPU seconds counted (this process plus its children),
split into the verifier runs (the contained pytest processes), git (the workspace engine), other
children (the interpreter probe) and the loop's own process. Then the task's verify command is
run bare (``/bin/sh -c COMMAND`` in a fresh copy of the project) as many times as the cell ran
its verifier (once on the untouched tree, once per attempt) and counted the same way. The ratio
CELL / BARE says what the loop adds around the verifier; the target is <= 2 s of CPU per cell.
A last line prices the sample tasks' ``PYTEST_DISABLE_PLUGIN_AUTOLOAD=1``: one bare run of the
same command with every installed pytest plugin loaded, against one without.

Usage: python benchmarks/bench_cell_cpu.py [--task NAME ...] [--seed N]
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from reference_loop._bench.runner import ARMS, DEFAULT_ATTEMPTER, run_one
from reference_loop._tasks.task import Task, copy_project, sample_tasks

AUTOLOAD_OFF = "PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 "


def cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def kids_cpu() -> float:
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def _kind(args: object) -> str:
    words = [str(a) for a in args] if isinstance(args, (list, tuple)) else [str(args)]
    name = os.path.basename(words[0]) if words else ""
    if name in ("unshare", "bwrap") or (name == "bash" and "count" in words):
        return "verifier"
    return "git" if name == "git" else "other"


@contextmanager
def children_by_kind() -> Iterator[collections.Counter[str]]:
    """Child CPU per kind of program, read around each wait of the loop's subprocesses (a
    measurement hook on the standard library, not on the loop)."""
    spent: collections.Counter[str] = collections.Counter()
    wait, communicate = subprocess.Popen.wait, subprocess.Popen.communicate

    def timed(method):  # type: ignore[no-untyped-def]
        def run(self, *a, **kw):  # type: ignore[no-untyped-def]
            before = kids_cpu()
            try:
                return method(self, *a, **kw)
            finally:
                spent[_kind(self.args)] += kids_cpu() - before

        return run

    subprocess.Popen.wait = timed(wait)  # type: ignore[method-assign]
    subprocess.Popen.communicate = timed(communicate)  # type: ignore[method-assign]
    try:
        yield spent
    finally:
        subprocess.Popen.wait = wait  # type: ignore[method-assign]
        subprocess.Popen.communicate = communicate  # type: ignore[method-assign]


def bare(task: Task, runs: int, command: str | None = None) -> float:
    """CPU seconds of ``runs`` bare runs of the verify command in a fresh copy of the project."""
    with tempfile.TemporaryDirectory() as tmp:
        ws = copy_project(task, Path(tmp) / task.name)
        c0 = cpu()
        for _ in range(runs):
            subprocess.run(
                ["/bin/sh", "-c", command or task.verify_command()],
                cwd=ws,
                capture_output=True,
                check=False,
            )
        return cpu() - c0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", action="append", default=[])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    tasks = [t for t in sample_tasks() if not args.task or t.name in args.task]
    print(
        f"{'task':<14} {'attempts':>8} {'verifier runs':>13} {'cell cpu s':>10}"
        f" {'verifier':>8} {'git':>5} {'other':>5} {'loop':>5} {'bare cpu s':>10}"
        f" {'ratio':>6} {'cell wall s':>11}"
    )
    total_cell = total_bare = total_runs = 0.0
    for task in tasks:
        me0 = resource.getrusage(resource.RUSAGE_SELF)
        c0, w0 = cpu(), time.monotonic()
        with children_by_kind() as spent:
            out = run_one(
                task,
                ARMS["accumulate"],
                args.seed,
                attempter=DEFAULT_ATTEMPTER,
                escalate_to=None,
                max_attempts=5,
            )
        cell, wall = cpu() - c0, time.monotonic() - w0
        me1 = resource.getrusage(resource.RUSAGE_SELF)
        loop = me1.ru_utime + me1.ru_stime - me0.ru_utime - me0.ru_stime
        runs = out.attempts + 1  # the untouched tree, then each attempt
        base = bare(task, runs)
        total_cell += cell
        total_bare += base
        total_runs += runs
        print(
            f"{task.name:<14} {out.attempts:>8} {runs:>13} {cell:>10.2f}"
            f" {spent['verifier']:>8.2f} {spent['git']:>5.2f} {spent['other']:>5.2f}"
            f" {loop:>5.2f} {base:>10.2f} {cell / base if base else 0:>6.1f} {wall:>11.2f}"
        )
    n = len(tasks)
    print(
        f"per cell: {total_cell / n:.2f} s CPU (target <= 2.0), bare verifier runs "
        f"{total_bare / n:.2f} s CPU ({total_bare / total_runs:.2f} s per run), "
        f"ratio {total_cell / total_bare:.1f}x"
    )
    command = tasks[0].verify_command()
    if command.startswith(AUTOLOAD_OFF):
        on = bare(tasks[0], 3, command[len(AUTOLOAD_OFF) :]) / 3
        off = bare(tasks[0], 3) / 3
        print(
            f"one bare run of {tasks[0].name}'s verifier: {off:.2f} s CPU with plugin autoload "
            f"off, {on:.2f} s with every installed pytest plugin loaded ({on / off:.1f}x)"
        )


if __name__ == "__main__":
    main()
