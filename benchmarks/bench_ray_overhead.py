"""Benchmark: what the Ray executor adds per bench cell, against the local executor.

The same scripted bench (the sample tasks x ``--seeds`` x arms none, last, accumulate) runs
twice in this process: with the local executor (``--jobs 2`` threads), then with the Ray
executor on a local Ray instance this script starts (2 CPUs, so both run two cells at a time).
CPU is counted for this process and every process under it: the local bench's verifiers and
git, and the Ray instance's daemons and workers (read from /proc while they live, from the
children's usage once reaped). Ray's start-up (``ray.init``) is printed apart: a cluster pays
it once, not per bench. The per-cell overhead is (Ray - local) / cells, wall and CPU.

Needs the ``ray`` extra. Usage: python benchmarks/bench_ray_overhead.py [--seeds N]
"""

from __future__ import annotations

import argparse
import os
import resource
import time
from collections.abc import Callable
from typing import Any

from reference_loop._bench.ray_executor import RayOptions, ray_executor
from reference_loop._bench.runner import (
    DEFAULT_ATTEMPTER,
    AttempterSettings,
    check_attempters,
    parse_arms,
    run_bench,
)
from reference_loop._tasks.task import sample_tasks

TICK = os.sysconf("SC_CLK_TCK")


def _descendants_cpu() -> float:
    """CPU seconds of the live processes under this one (with the children they reaped)."""
    parent: dict[int, int] = {}
    spent: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                fields = fh.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry)
        parent[pid] = int(fields[1])
        spent[pid] = sum(int(f) for f in fields[11:15]) / TICK  # utime stime cutime cstime
    me, total = os.getpid(), 0.0
    for pid in spent:
        up = parent.get(pid)
        while up is not None and up > 1 and up != me:
            up = parent.get(up)
        if up == me:
            total += spent[pid]
    return total


def cpu() -> float:
    """CPU seconds of this process and everything under it, live or reaped."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    reaped = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    return reaped + _descendants_cpu()


def timed(run: Callable[[], Any]) -> tuple[Any, float, float]:
    c0, w0 = cpu(), time.monotonic()
    got = run()
    return got, time.monotonic() - w0, cpu() - c0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=1)
    args = parser.parse_args()
    import ray

    tasks = sample_tasks()
    arms = parse_arms("none,last,accumulate")
    settings = AttempterSettings()
    budgets = check_attempters(tasks, DEFAULT_ATTEMPTER, None, settings)
    common: dict[str, Any] = {
        "arms": arms,
        "seeds": args.seeds,
        "settings": settings,
        "budgets": budgets,
    }
    local, local_wall, local_cpu = timed(lambda: run_bench(tasks, jobs=2, **common))
    cells = len(local.runs)

    os.environ.setdefault("RAY_AUTH_MODE", "disabled")
    _, init_wall, init_cpu = timed(
        lambda: ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    )
    try:
        executor = ray_executor(
            RayOptions(),
            attempter=DEFAULT_ATTEMPTER,
            escalate_to=None,
            max_attempts=local.max_attempts,
            settings=settings,
            ignore=(),
            budgets=budgets,
        )
        on_ray, ray_wall, ray_cpu = timed(lambda: run_bench(tasks, executor=executor, **common))
    finally:
        ray.shutdown()
    same = [r.to_dict() | {"wall": 0} for r in local.runs] == [
        r.to_dict() | {"wall": 0} for r in on_ray.runs
    ]
    print(
        f"{'executor':<22} {'cells':>5} {'wall s':>7} {'cpu s':>7} {'wall/cell':>9} {'cpu/cell':>8}"
    )
    for name, wall, spent in (
        ("local (2 threads)", local_wall, local_cpu),
        ("ray (2 CPUs)", ray_wall, ray_cpu),
    ):
        per = f"{wall / cells:>9.2f} {spent / cells:>8.2f}"
        print(f"{name:<22} {cells:>5} {wall:>7.1f} {spent:>7.1f} {per}")
    print(f"{'ray.init (once)':<22} {'':>5} {init_wall:>7.1f} {init_cpu:>7.1f}")
    print(
        f"ray overhead per cell: {(ray_wall - local_wall) / cells:+.2f} s wall, "
        f"{(ray_cpu - local_cpu) / cells:+.2f} s CPU "
        f"({ray_cpu / local_cpu:.2f}x the local CPU); same outcome per cell: {same}"
    )


if __name__ == "__main__":
    main()
