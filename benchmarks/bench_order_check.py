"""Benchmark: what the order cross-check adds to a passing attempt, against the bare verifier.

A passing run's tests are played again in reverse order inside the same pytest process (the
report plugin does it), so a result that depends on call history (a counter answering 5, then
6) is caught as ``order-dependent``. That costs the tests' own time once more, on passing
attempts only. For every sample
task the project is copied, its fixing candidate applied (a passing attempt), and per round,
interleaved:

- FLOOR: the task's verify command, bare: ``/bin/sh -c COMMAND`` in the workspace;
- OFF: the loop's verdict run (``Session.verify``) with the cross-check switched off for the
  measurement: this one session's copy of the report plugin never plays the tests again, and
  its ``_order_checked`` is a no-op (the loop itself has no such switch);
- ON: the same verdict run as the loop does it, cross-check included.

Wall clock and CPU seconds (this process plus its children), best of ``--rounds`` each (the
machine is shared: the best round is the least disturbed). Target: ON / FLOOR <= 1.3x.

Usage: python benchmarks/bench_order_check.py [--rounds 5] [--task NAME ...]
"""

from __future__ import annotations

import argparse
import os
import py_compile
import shutil
import sys
import tempfile
from pathlib import Path

from bench_verdict import floor_run, timed  # the same timing as the verdict benchmark

from reference_loop._tasks.task import copy_project, sample_tasks
from reference_loop._verdict.harness import PLUGIN_MODULE
from reference_loop._verdict.session import Session, SessionSettings
from reference_loop._workspace.core import Workspace

# The replay's guard in the report plugin (this tree's, an older tree's): a measurement copy
# turned into "never replay".
_REPLAY_GUARDS = ("or not items or session.shouldstop:", "or len(items) < 2 or session.shouldstop:")


def _without_replay(session: Session) -> None:
    """Rewrite this session's private copy of the report plugin so that it never plays the
    tests again (measurement only: the copy lives in the session's own temporary folder)."""
    impl = session.harness.plugin_dir / f"{PLUGIN_MODULE}_impl.py"
    source = impl.read_text(encoding="utf-8")
    guard = next((g for g in _REPLAY_GUARDS if g in source), None)
    if guard is None:
        raise SystemExit("error: the report plugin's replay guard moved; update this benchmark")
    impl.write_text(source.replace(guard, "or True:"), encoding="utf-8")
    py_compile.compile(str(impl), doraise=True)


def bench_task(task, rounds: int) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="bench-order-"))
    try:
        root = copy_project(task, tmp / task.name)
        ws = Workspace(root)
        ws.snapshot()
        settings = SessionSettings(
            command=task.verify_command(), timeout=task.timeout, protect=task.protected()
        )
        on, off = Session(settings, root), Session(settings, root)
        on.start()
        off.start()
        _without_replay(off)
        off._order_checked = lambda report: []  # type: ignore[method-assign]
        ws.restore()
        next(c for c in task.candidates if c.fixes).apply(root)
        diff = ws.diff()
        runs: dict[str, list[tuple[float, float]]] = {"floor": [], "off": [], "on": []}
        passed: list[bool] = []
        done: dict = {}

        def judged() -> None:
            done["v"] = on.verify(1, diff)

        for _ in range(rounds):
            runs["floor"].append(timed(lambda: floor_run(task.verify_command(), root, 60)))
            runs["off"].append(timed(lambda: off.verify(1, diff)))
            runs["on"].append(timed(judged))
            passed.append(done["v"].result.verdict == "pass" and not done["v"].violations)
        on.close()
        off.close()
        ws.close()
        best = {k: (min(w for w, _ in v), min(c for _, c in v)) for k, v in runs.items()}
        return {
            "task": task.name,
            "tests": len(on.pinned.tests) if on.pinned else 0,
            **best,
            "all_passed": all(passed),
        }
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--task", action="append", default=[])
    args = parser.parse_args()
    tasks = [t for t in sample_tasks() if not args.task or t.name in args.task]
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} cpus, best of {args.rounds} rounds")
    print(
        f"{'task':<14} {'tests':>5} {'floor s':>8} {'off s':>7} {'on s':>7} {'on/floor':>8} "
        f"{'off/floor':>9} {'floor cpu':>9} {'off cpu':>7} {'on cpu':>7} {'off cpu x':>9} "
        f"{'on cpu x':>8}  pass"
    )
    worst = worst_cpu = 0.0
    totals = {"floor": 0.0, "off": 0.0, "on": 0.0}
    for task in tasks:
        r = bench_task(task, args.rounds)
        (fw, fc), (ow, oc), (nw, nc) = r["floor"], r["off"], r["on"]
        worst = max(worst, nw / fw)
        worst_cpu = max(worst_cpu, nc / fc)
        for key, (_w, c) in (("floor", r["floor"]), ("off", r["off"]), ("on", r["on"])):
            totals[key] += c
        print(
            f"{r['task']:<14} {r['tests']:>5} {fw:>8.3f} {ow:>7.3f} {nw:>7.3f} {nw / fw:>7.2f}x "
            f"{ow / fw:>8.2f}x {fc:>9.3f} {oc:>7.3f} {nc:>7.3f} {oc / fc:>8.2f}x "
            f"{nc / fc:>7.2f}x  {r['all_passed']}"
        )
    print(f"worst ON / FLOOR (wall): {worst:.2f}x (target <= 1.30x)")
    floor_cpu = totals["floor"] or 1.0
    print(
        f"cpu per attempt, all tasks: ON {totals['on'] / floor_cpu:.3f}x (target <= 1.3x), "
        f"OFF {totals['off'] / floor_cpu:.3f}x, worst task ON {worst_cpu:.3f}x"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
