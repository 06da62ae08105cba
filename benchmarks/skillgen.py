"""Realistic skill folders for the benchmarks that need whole skills (bundle import, install).

Each skill is ~10 files and ~60 KB, shaped like the published multi-file skills: a SKILL.md card,
Python helper scripts (one executable) that import, read a file and run a tool, a shell script,
Markdown references, a JSON asset and a licence. Deterministic for a given seed.
"""

from __future__ import annotations

import random
from pathlib import Path

__all__ = ["WORDS", "generate", "markdown", "python_script", "shell_script", "skill_md", "words"]

WORDS = [
    "agent",
    "verifier",
    "patch",
    "attempt",
    "history",
    "budget",
    "context",
    "card",
    "review",
    "approve",
    "store",
    "hash",
    "lockfile",
    "retry",
    "signal",
    "failure",
    "record",
    "prompt",
    "diff",
    "test",
    "check",
    "risk",
    "trigger",
    "avoid",
    "folder",
    "script",
    "bundle",
]


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def skill_md(name: str, rng: random.Random) -> str:
    body = "\n\n".join(f"## {t}\n\n{words(rng, 120)}." for t in ("Use", "Steps", "Check", "Notes"))
    return (
        f"---\nname: {name}\ndescription: {words(rng, 20)}.\nlicense: Apache-2.0\n---\n\n"
        f"# {name}\n\nRun `scripts/extract.py` on the input, then read references/guide.md.\n\n"
        f"{body}\n"
    )


def python_script(rng: random.Random, size: int) -> str:
    lines = ["#!/usr/bin/env python3", '"""Helper script."""', "import json", "import subprocess"]
    lines += ["import sys", ""]
    i = 0
    while sum(len(line) + 1 for line in lines) < size:
        lines += [
            f"def step_{i}(data):",
            f"    # {words(rng, 8)}",
            f"    return [x for x in data if x != {i!r}]",
            "",
        ]
        i += 1
    # What real helper scripts do: read an input file, run a tool, print JSON.
    lines += [
        "def main():",
        "    with open(sys.argv[1], encoding='utf-8') as handle:",
        "        data = handle.read().split()",
        "    subprocess.run(['git', 'status', '--short'], check=False)",
        "    print(json.dumps(step_0(data)))",
        "",
        "if __name__ == '__main__':",
        "    main()",
        "",
    ]
    return "\n".join(lines)


def shell_script(rng: random.Random, size: int) -> str:
    lines = ["#!/bin/sh", "set -eu"]
    while sum(len(line) + 1 for line in lines) < size:
        lines.append(f'echo "{words(rng, 8)}"')
    return "\n".join(lines) + "\n"


def markdown(rng: random.Random, size: int) -> str:
    out = ["# Reference", ""]
    while sum(len(line) + 1 for line in out) < size:
        out += [words(rng, 40) + ".", ""]
    return "\n".join(out)


def generate(root: Path, count: int, seed: int = 11) -> tuple[int, int]:
    """Write ``count`` skills under ``root``; returns (files, bytes)."""
    rng = random.Random(seed)
    files = total = 0
    for index in range(count):
        name = f"bench-skill-{index:04d}"
        layout = {
            "SKILL.md": (skill_md(name, rng), False),
            "scripts/extract.py": (python_script(rng, 9000), True),
            "scripts/transform.py": (python_script(rng, 7000), False),
            "scripts/report.py": (python_script(rng, 6000), False),
            "scripts/setup.sh": (shell_script(rng, 3000), True),
            "references/guide.md": (markdown(rng, 9000), False),
            "references/api.md": (markdown(rng, 8000), False),
            "references/faq.md": (markdown(rng, 5000), False),
            "assets/config.json": (
                '{"keys": [' + ", ".join(f'"{words(rng, 2)}"' for _ in range(200)) + "]}\n",
                False,
            ),
            "LICENSE.txt": ("Apache License 2.0\n" + words(rng, 300) + "\n", False),
        }
        for rel, (text, executable) in layout.items():
            path = root / name / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            data = text.encode()
            path.write_bytes(data)
            path.chmod(0o755 if executable else 0o644)
            files += 1
            total += len(data)
    return files, total
