"""Benchmark: the CPU one scripted bench cell costs, against its bare verifier runs.

For each sample task, one bench cell (``runner.run_one``: the default scripted attempter, arm
``accumulate``, seed 0) is run and its CPU seconds counted (this process plus its children);
then the task's verify command is run bare (``/bin/sh -c COMMAND`` in a fresh copy of the
project) as many times as the cell made attempts, and counted the same way. The ratio CELL /
BARE says what the loop adds around the verifier; the target is <= 2 s of CPU per cell.

Usage: python benchmarks/bench_cell_cpu.py [--task NAME ...] [--seed N]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from reference_loop._bench.runner import ARMS, DEFAULT_ATTEMPTER, run_one
from reference_loop._tasks.task import copy_project, sample_tasks


def cpu() -> float:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--task", action="append", default=[])
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    tasks = [t for t in sample_tasks() if not args.task or t.name in args.task]
    print(
        f"{'task':<14} {'attempts':>8} {'cell cpu s':>10} {'bare cpu s':>10} {'ratio':>6}"
        f" {'cell wall s':>11}"
    )
    total_cell = total_bare = 0.0
    for task in tasks:
        c0, w0 = cpu(), time.monotonic()
        out = run_one(
            task,
            ARMS["accumulate"],
            args.seed,
            attempter=DEFAULT_ATTEMPTER,
            escalate_to=None,
            max_attempts=5,
        )
        cell, wall = cpu() - c0, time.monotonic() - w0
        with tempfile.TemporaryDirectory() as tmp:
            ws = copy_project(task, Path(tmp) / task.name)
            c0 = cpu()
            for _ in range(out.attempts):
                subprocess.run(
                    ["/bin/sh", "-c", task.verify_command()],
                    cwd=ws,
                    capture_output=True,
                    check=False,
                    env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
                )
            bare = cpu() - c0
        total_cell += cell
        total_bare += bare
        print(
            f"{task.name:<14} {out.attempts:>8} {cell:>10.2f} {bare:>10.2f} "
            f"{cell / bare if bare else 0:>6.1f} {wall:>11.2f}"
        )
    n = len(tasks)
    print(
        f"per cell: {total_cell / n:.2f} s CPU (target <= 2.0), bare verifier runs "
        f"{total_bare / n:.2f} s CPU, ratio {total_cell / total_bare:.1f}x"
    )


if __name__ == "__main__":
    main()
