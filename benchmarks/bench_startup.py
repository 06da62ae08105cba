"""Benchmark: what a user feels on every call of either CLI, against ``python -c pass``.

Agents, hooks and CI run the commands many times a day, so start-up is part of every call. Each
command runs as a fresh process ``--runs`` times (default 30), interleaved round by round with
the baseline so machine load hits them alike, after ``--warmup`` unmeasured rounds (hyperfine's
method, in Python); the median of each is printed with its ratio to the baseline measured in the
same run. CPU time (user + system of each child, from ``getrusage``) is printed beside wall
time: on a loaded machine the wall ratio swings with the neighbours' work, the CPU ratio much
less, so the targets are judged on CPU.

Measured: ``--version`` and ``--help`` of both CLIs, a command's own ``--help`` (``import
--help``), and ``check`` of ten installed skills (generated, imported tainted, approved with a
signed statement by a trusted key, installed), as CI runs it. The commands run with a bytecode
cache (in a temporary folder), as an installed package has one, whatever
PYTHONDONTWRITEBYTECODE says here.

Targets: ``--version`` and ``--help`` of both CLIs <= 1.5x ``python -c pass``; ``check`` of ten
installed skills <= 1.8x (CPU).

``--against DIR`` adds the same ``check`` run with ``PYTHONPATH=DIR`` (another checkout, e.g. a
``git worktree`` of main) to every round, so a change is judged against its base in one run.
Usage: python benchmarks/bench_startup.py [--runs N] [--warmup N] [--against DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from skillgen import generate

from chimera_cards._importer.pipeline import import_source
from chimera_cards._install.installer import install
from chimera_cards._review.decisions import add_trust, approve
from chimera_cards._store.facade import Store
from chimera_cards._trust.keys import generate_key, load_private_key

TARGETS = {
    "chimera-cards --version": 1.5,
    "chimera-cards --help": 1.5,
    "reference-loop --version": 1.5,
    "reference-loop --help": 1.5,
    "chimera-cards check (10 skills)": 1.8,
}


def _script(name: str) -> list[str]:
    """The console script beside this interpreter, else the package run with -m."""
    script = Path(sys.executable).parent / name
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", name.replace("-", "_")]


def _time_once(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one run of ``argv`` as a fresh process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(
        argv, check=False, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)}: exit {done.returncode}: {done.stderr.decode()}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def measure(
    commands: dict[str, list[str]],
    env: dict[str, str],
    runs: int,
    warmup: int,
    envs: dict[str, dict[str, str]] | None = None,
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Wall and CPU times of each command, ``runs`` rounds interleaved, after ``warmup``;
    ``envs`` gives a command an environment of its own."""
    wall: dict[str, list[float]] = {label: [] for label in commands}
    cpu: dict[str, list[float]] = {label: [] for label in commands}
    for round_ in range(warmup + runs):
        for label, argv in commands.items():
            elapsed, used = _time_once(argv, (envs or {}).get(label, env))
            if round_ >= warmup:
                wall[label].append(elapsed)
                cpu[label].append(used)
    return wall, cpu


def installed_skills(work: Path, count: int = 10) -> tuple[Path, Path]:
    """(skills folder, store): ``count`` skills imported tainted, approved, installed."""
    generate(work / "src", count)
    key = generate_key("alice", work / "keys" / "alice.key")
    private = load_private_key(key.keyfile)
    store_path, folder = work / "cards.db", work / "skills"
    with Store(store_path) as store:
        add_trust(store, "alice", key.public)
        results = import_source(store, str(work / "src"), taint=True)
        for r in results:
            approve(store, r.name, r.digest, private)
        install(store, [r.name for r in results], folder)
    return folder, store_path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument(
        "--against", type=Path, help="also time check with this checkout's code (PYTHONPATH)"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    try:
        folder, store = installed_skills(work)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env |= {"PYTHONPYCACHEPREFIX": str(work / "pycache"), "CHIMERA_CARDS_HOME": str(work)}
        cards, loop = _script("chimera-cards"), _script("reference-loop")
        commands = {
            "python -c pass": [sys.executable, "-c", "pass"],
            "chimera-cards --version": [*cards, "--version"],
            "chimera-cards --help": [*cards, "--help"],
            "chimera-cards import --help": [*cards, "import", "--help"],
            "reference-loop --version": [*loop, "--version"],
            "reference-loop --help": [*loop, "--help"],
            "chimera-cards check (10 skills)": [
                *cards,
                "check",
                str(folder),
                "--store",
                str(store),
            ],
        }
        envs = {}
        if args.against is not None:
            label = f"check (10 skills) @{args.against.name}"
            commands[label] = commands["chimera-cards check (10 skills)"]
            envs[label] = env | {"PYTHONPATH": str(args.against.resolve())}
        times, cpu = measure(commands, env, args.runs, args.warmup, envs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    base = statistics.median(times["python -c pass"])
    cpu_base = statistics.median(cpu["python -c pass"])
    print(f"start-up, median of {args.runs} runs each (interleaved, {args.warmup} warm-up rounds)")
    print(f"{'command':<32} {'wall':>9} {'ratio':>7} {'cpu':>9} {'ratio':>7}  target (CPU)")
    for label, samples in times.items():
        median, used = statistics.median(samples), statistics.median(cpu[label])
        target = TARGETS.get(label)
        verdict = ""
        if target is not None:
            verdict = f"<= {target:g}x " + ("meets" if used / cpu_base <= target else "MISSES")
        print(
            f"{label:<32} {median * 1000:>7.1f}ms {median / base:>6.2f}x "
            f"{used * 1000:>7.1f}ms {used / cpu_base:>6.2f}x  {verdict}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
