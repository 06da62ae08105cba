"""Benchmark: CPU per call of ``chimera-cards hook claude`` and the start-up of ``exec``.

Claude Code runs the hook before every Read, Bash, Grep, Glob and Skill call, so its start-up
is paid on nearly every step of a session. Measured as fresh processes, interleaved round by
round with ``python -c pass`` so machine load hits them alike (hyperfine's method), after
``--warmup`` unmeasured rounds; the median CPU (user + system, ``getrusage`` of the children)
and wall time of each are printed with their ratio to the baseline measured in the same run.

- an ordinary ``Read`` (a file in no skills folder): target <= 1.5x ``python -c pass`` CPU;
- a ``Read`` of an approved skill's file and a ``Skill`` call: target <= 2.5x (the hook's memo
  spares the store after the first call); "first of a session" is the first Skill call after
  the SessionStart hook Claude Code runs at start (its check fills the memo; target 2.5x too);
  "memo cleared" is a call with no memo at all (after any store write, or the memo's TTL),
  printed beside;
- an ordinary ``Bash`` command (``npm test``), and one that names a skills folder;
- ``exec -- true`` against running ``true`` directly: the cost of judging every skills folder,
  copying the approved ones and building the view before the agent starts (printed in ms, and
  as a ratio to ``python -c pass``).

The hook runs as the console script does (``from chimera_cards._cli.entry import run``), from
this checkout. A throwaway home holds a store with ``--skills`` approved skills installed in a
project's ``.claude/skills``.

Usage: python benchmarks/bench_hook.py [--runs N] [--warmup N] [--skills N]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READ_TARGET = 1.5
SKILL_TARGET = 2.5
ENTRY = "import re, sys; from chimera_cards._cli.entry import run; sys.argv[0] = 'chimera-cards'; sys.exit(run())"  # noqa: E501


def _run_once(argv: list[str], data: bytes | None, env: dict, cwd: Path) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        argv,
        input=data,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=cwd,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _world(base: Path, skills: int) -> tuple[dict, Path]:
    # A user's install has its bytecode cached; a session that sets PYTHONDONTWRITEBYTECODE would
    # measure the compiler instead (the warm-up rounds write the cache).
    env = {
        **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
        "HOME": str(base / "home"),
        "CHIMERA_CARDS_HOME": str(base / "cc"),
        "PYTHONPATH": str(ROOT),
        "XDG_CONFIG_HOME": "",
        "XDG_DATA_HOME": "",
        "CLAUDE_CONFIG_DIR": "",
    }
    (base / "home").mkdir()
    project = base / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "main.py").write_text("print('hello')\n")

    def cli(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "chimera_cards", *args],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    cli("keys", "generate", "bench")
    names = []
    for i in range(skills):
        name = f"skill-{i:03d}"
        folder = base / "src" / name
        (folder / "scripts").mkdir(parents=True)
        (folder / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Benchmark skill {i}.\n---\n" + "Step.\n" * 40
        )
        (folder / "scripts" / "run.sh").write_text("#!/bin/sh\necho run\n")
        digest = json.loads(cli("import", str(folder), "--taint", "--json"))["digest"]
        cli("approve", name, "--key", str(base / "cc" / "keys" / "bench.key"), "--digest", digest)
        names.append(name)
    cli("install", *names, "--to", str(project / ".claude" / "skills"))
    return env, project


def _payload(project: Path, tool: str, tool_input: dict) -> bytes:
    return json.dumps(
        {
            "session_id": "bench",
            "transcript_path": "/dev/null",
            "cwd": str(project),
            "permission_mode": "default",
            "hook_event_name": "PreToolUse",
            "tool_name": tool,
            "tool_input": tool_input,
            "tool_use_id": "toolu_bench",
        }
    ).encode()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--skills", type=int, default=10)
    args = parser.parse_args(argv)
    base = Path(tempfile.mkdtemp(prefix="bench-hook-"))
    try:
        env, project = _world(base, args.skills)
        skill_file = project / ".claude" / "skills" / "skill-000" / "SKILL.md"
        hook = [sys.executable, "-c", ENTRY, "hook", "claude"]
        start = json.dumps(
            {"session_id": "bench", "cwd": str(project), "hook_event_name": "SessionStart"}
        ).encode()
        true = shutil.which("true") or "/bin/true"
        cases: dict[str, tuple[list[str], bytes | None]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], None),
            "hook: ordinary Read": (
                hook,
                _payload(project, "Read", {"file_path": str(project / "src" / "main.py")}),
            ),
            "hook: ordinary Bash": (hook, _payload(project, "Bash", {"command": "npm test"})),
            "hook: Read of a skill file": (
                hook,
                _payload(project, "Read", {"file_path": str(skill_file)}),
            ),
            "hook: Skill call": (hook, _payload(project, "Skill", {"skill": "skill-000"})),
            "hook: Skill call, memo cleared": (
                hook,
                _payload(project, "Skill", {"skill": "skill-000"}),
            ),
            "hook: Skill call, first of a session": (
                hook,
                _payload(project, "Skill", {"skill": "skill-000"}),
            ),
            "hook: Bash naming .claude/skills": (
                hook,
                _payload(project, "Bash", {"command": "cat .claude/skills/*/SKILL.md"}),
            ),
            "true": ([true], None),
            "exec -- true": ([sys.executable, "-c", ENTRY, "exec", "--", true], None),
        }
        wall: dict[str, list[float]] = {k: [] for k in cases}
        cpu: dict[str, list[float]] = {k: [] for k in cases}
        for round_ in range(args.warmup + args.runs):
            for label, (command, data) in cases.items():
                memo = base / "cc" / "cards.db.hook-memo.json"
                kept = memo.read_bytes() if memo.exists() else None
                if label.endswith("memo cleared"):  # no memo (a store write, > TTL): check runs
                    memo.unlink(missing_ok=True)
                if label.endswith("first of a session"):  # Claude Code ran SessionStart first
                    memo.unlink(missing_ok=True)
                    _run_once(hook, start, env, project)
                elapsed, used = _run_once(command, data, env, project)
                if label.endswith(("memo cleared", "first of a session")) and kept is not None:
                    memo.write_bytes(kept)  # the other cases measure a session under way
                if round_ >= args.warmup:
                    wall[label].append(elapsed)
                    cpu[label].append(used)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    base_cpu = statistics.median(cpu["python -c pass"])
    base_wall = statistics.median(wall["python -c pass"])
    print(f"{args.runs} runs each (after {args.warmup} warm-up), {args.skills} installed skills")
    print(f"{'command':36} {'CPU ms':>8} {'x pass':>7} {'wall ms':>8} {'x pass':>7}")
    failed = False
    for label in cases:
        c, w = statistics.median(cpu[label]), statistics.median(wall[label])
        target = {
            "hook: ordinary Read": READ_TARGET,
            "hook: Read of a skill file": SKILL_TARGET,
            "hook: Skill call": SKILL_TARGET,
            "hook: Skill call, first of a session": SKILL_TARGET,
        }.get(label)
        note = ""
        if target is not None:
            met = c / base_cpu <= target
            failed = failed or not met
            note = f"  target <= {target}x CPU: {'met' if met else 'MISSED'}"
        print(
            f"{label:36} {c * 1000:8.1f} {c / base_cpu:6.2f}x {w * 1000:8.1f} "
            f"{w / base_wall:6.2f}x{note}"
        )
    exec_cpu = statistics.median(cpu["exec -- true"]) - statistics.median(cpu["true"])
    exec_wall = statistics.median(wall["exec -- true"]) - statistics.median(wall["true"])
    print(
        f"exec start-up before the agent: {exec_cpu * 1000:.1f} ms CPU "
        f"({exec_cpu / base_cpu:.2f}x pass), {exec_wall * 1000:.1f} ms wall"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
