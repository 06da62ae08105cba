"""Benchmark: ``import`` of the 35 real skills of ``../shared/corpus`` (the 12 Anthropic skill
folders, scripts and references included, and the 23 Chimera cards), every file new: skills/s
by CPU time beside wall time, and the scan's share of it.

Each measured tree runs in a process of its own (``PYTHONPATH=TREE``), so the code measured is
that tree's: one untimed import first (modules, regexes and grammars load on first use, a cost
``bench_startup`` measures), then --repeat imports of the whole corpus into a fresh store each
time (no file has been seen: nothing comes from a cache), one worker (``jobs=1``: CPU time is
the machine's whole cost), the best CPU and the best wall time kept. With --baseline DIR the
other checkout (e.g. main, or the commit before a change) is measured the same way, the runs
interleaved, and the ratio printed: the machine may be loaded, and both see the same load.

The split: CPU seconds inside the prose rules (``prose_findings``), the Python flow analysis
(``analyse_python``) and the whole scan (``lint_bundle``), timed by wrappers in one extra run.

Target (issue 34): >= 120 skills/s CPU.
Usage: python benchmarks/bench_import_skills.py [--repeat R] [--baseline DIR] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPORA = ("agent-skills", "chimera-skills")
SHARED = (ROOT.parent / "shared" / "corpus", ROOT.parent.parent / "shared" / "corpus")
TARGET = 120.0


def find_corpus() -> Path:
    for shared in SHARED:
        if all((shared / name).is_dir() for name in CORPORA):
            return shared
    raise SystemExit("error: ../shared/corpus (agent-skills, chimera-skills) not found")


def flat_copy(shared: Path, dest: Path) -> int:
    """Every skill folder of both corpora side by side in ``dest``, as one folder to import."""
    count = 0
    for name in CORPORA:
        for skill in sorted(p for p in (shared / name).iterdir() if (p / "SKILL.md").is_file()):
            shutil.copytree(skill, dest / skill.name, symlinks=True)
            count += 1
    return count


def child(corpus: Path, repeat: int) -> dict:
    """Measure the tree this process imports from (run with PYTHONPATH=TREE)."""
    from chimera_cards._importer.pipeline import import_source
    from chimera_cards._store.facade import Store

    def once() -> tuple[int, float, float]:
        with (
            tempfile.TemporaryDirectory(prefix="bench-import-skills-") as tmp,
            Store(Path(tmp) / "store.db") as store,
        ):
            wall, cpu = time.perf_counter(), time.process_time()
            results = import_source(store, corpus, jobs=1)
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        if any(r.outcome == "refused" for r in results):
            raise SystemExit("error: a skill of the corpus was refused")
        return len(results), cpu, wall

    once()  # untimed: first use loads modules, regexes, grammars
    runs = [once() for _ in range(max(repeat, 1))]
    split = _split(once)
    return {
        "skills": runs[0][0],
        "cpu": min(r[1] for r in runs),
        "wall": min(r[2] for r in runs),
        **split,
    }


def _split(once) -> dict:
    """CPU seconds inside the prose rules, the Python flow and the whole scan, in one run."""
    from chimera_cards._scan import codescan, detect

    spent = {"prose": 0.0, "python_flow": 0.0, "scan": 0.0}

    def timed(key: str, fn):
        def wrapper(*args, **kwargs):
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[key] += time.process_time() - start

        return wrapper

    saved = (detect.prose_findings, detect.analyse_python, codescan.lint_bundle)
    detect.prose_findings = timed("prose", detect.prose_findings)
    # Nested calls (an embedded script) are counted once, in the outermost.
    depth = [0]
    inner = detect.analyse_python

    def python_flow(*args, **kwargs):
        depth[0] += 1
        start = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            depth[0] -= 1
            if depth[0] == 0:
                spent["python_flow"] += time.process_time() - start

    detect.analyse_python = python_flow
    from chimera_cards._importer import pipeline

    pipeline.lint_bundle = timed("scan", codescan.lint_bundle)
    try:
        _, cpu, _ = once()
    finally:
        detect.prose_findings, detect.analyse_python, pipeline.lint_bundle = saved
    return {f"{key}_share": value / cpu for key, value in spent.items()}


def measure(tree: Path, corpus: Path, repeat: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(corpus), "--repeat", str(repeat)],
        capture_output=True,
        text=True,
        env=env,
        cwd=corpus.parent,  # not a checkout: `-m`-style path entries stay out
        timeout=900,
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(f"error: measuring {tree}: {proc.stderr.strip()[-400:]}")
    return json.loads(proc.stdout)


def line(label: str, r: dict) -> str:
    return (
        f"{label:<9} {r['skills']} skills: {r['cpu']:.3f} s CPU ({r['skills'] / r['cpu']:.0f} "
        f"skills/s), {r['wall']:.3f} s wall ({r['skills'] / r['wall']:.0f} skills/s); scan "
        f"{100 * r['scan_share']:.0f}% of CPU (prose {100 * r['prose_share']:.0f}%, Python flow "
        f"{100 * r['python_flow_share']:.0f}%)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed imports per tree (best kept)")
    parser.add_argument("--baseline", type=Path, help="another checkout measured beside this one")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child, args.repeat)))
        return 0
    if args.baseline and not (args.baseline / "chimera_cards").is_dir():
        print(f"error: {args.baseline}: not a checkout (no chimera_cards/)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="bench-import-skills-corpus-") as tmp:
        corpus = Path(tmp) / "skills"
        corpus.mkdir()
        count = flat_copy(find_corpus(), corpus)
        trees = [("this", ROOT)]
        if args.baseline:
            trees.append(("baseline", args.baseline.resolve()))
        best: dict[str, dict] = {}
        for _ in range(2):  # interleaved: both trees see the same load
            for label, tree in trees:
                r = measure(tree, corpus, args.repeat)
                if label not in best or r["cpu"] < best[label]["cpu"]:
                    best[label] = r
    if args.json:
        print(json.dumps(best))
        return 0
    print(f"import of {count} real skills (../shared/corpus), every file new, jobs=1, best of "
          f"{2 * args.repeat}:")  # fmt: skip
    for label, _ in trees:
        print(line(label, best[label]))
    this = best["this"]
    print(f"target >= {TARGET:.0f} skills/s CPU: {this['skills'] / this['cpu']:.0f} "
          f"({'met' if this['skills'] / this['cpu'] >= TARGET else 'not met'})")  # fmt: skip
    if "baseline" in best:
        base = best["baseline"]
        print(f"ratio this/baseline: {base['cpu'] / this['cpu']:.2f}x CPU, "
              f"{base['wall'] / this['wall']:.2f}x wall (higher is faster)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
