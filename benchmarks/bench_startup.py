"""Benchmark: how long ``chimera-cards --help`` and ``--version`` take, against ``python -c pass``.

Agents and hooks run the command many times a day, so start-up is part of every call. Each
command runs as a fresh process ``--runs`` times (default 30), interleaved round by round with
the baseline so machine load hits them alike, after ``--warmup`` unmeasured rounds (hyperfine's
method, in Python); the median wall time of each is printed with its ratio to the baseline
measured in the same run. Also measured: a command's own ``--help`` (``import --help``, which
loads that one command's module) and ``reference-loop --help``.

CPU time (user + system of each child, from ``getrusage``) is printed beside wall time: on a
loaded machine the wall ratio swings with the neighbours' work, the CPU ratio much less.

Target: ``chimera-cards --help`` and ``reference-loop --help`` <= 2x ``python -c pass``.
Usage: python benchmarks/bench_startup.py [--runs N] [--warmup N]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

TARGET = 2.0


def _script(name: str) -> list[str]:
    """The installed console script beside this interpreter, else the package run with -m."""
    script = Path(sys.executable).parent / name
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", name.replace("-", "_")]


def _time_once(argv: list[str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``argv`` as a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(
    commands: dict[str, list[str]], runs: int, warmup: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall and CPU times of each command, ``runs`` rounds interleaved, after ``warmup``."""
    wall: dict[str, list[float]] = {label: [] for label in commands}
    cpu: dict[str, list[float]] = {label: [] for label in commands}
    for round_ in range(warmup + runs):
        for label, argv in commands.items():
            elapsed, used = _time_once(argv)
            if round_ >= warmup:
                wall[label].append(elapsed)
                cpu[label].append(used)
    return wall, cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    args = parser.parse_args()
    cards, loop = _script("chimera-cards"), _script("reference-loop")
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "chimera-cards --help": [*cards, "--help"],
        "chimera-cards --version": [*cards, "--version"],
        "chimera-cards import --help": [*cards, "import", "--help"],
        "reference-loop --help": [*loop, "--help"],
    }
    times, cpu = measure(commands, args.runs, args.warmup)
    base = statistics.median(times["python -c pass"])
    cpu_base = statistics.median(cpu["python -c pass"])
    print(f"start-up, median of {args.runs} runs each (interleaved, {args.warmup} warm-up rounds)")
    print(f"{'command':<30} {'wall':>9} {'min':>9} {'ratio':>7} {'cpu':>9} {'ratio':>7}")
    for label, samples in times.items():
        median, used = statistics.median(samples), statistics.median(cpu[label])
        print(
            f"{label:<30} {median * 1000:>7.1f}ms {min(samples) * 1000:>7.1f}ms "
            f"{median / base:>6.2f}x {used * 1000:>7.1f}ms {used / cpu_base:>6.2f}x"
        )
    for label in ("chimera-cards --help", "reference-loop --help"):
        ratio = statistics.median(times[label]) / base
        cpu_ratio = statistics.median(cpu[label]) / cpu_base
        verdict = "meets" if ratio <= TARGET else "MISSES"
        print(
            f"headline: {label} = {ratio:.2f}x python -c pass wall, {cpu_ratio:.2f}x CPU "
            f"({verdict} <= {TARGET:g}x)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
