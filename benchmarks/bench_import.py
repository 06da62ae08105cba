"""Benchmark: ``chimera-cards import FOLDER`` on realistic cards, whole process, cards/s.

The cards are the 23 real Chimera cards (``../shared/corpus/chimera-skills`` when present, else
the byte-identical copies in ``tests/fixtures/lint-corpus/chimera-skills``; the run says which)
copied under new names up to --cards (default 2,000, ~3.9 KB each): the ``name`` line and the
folder are renamed, nothing else, so Markdown, YAML and the scan see real text. Measured in the
same run: the whole CLI process (wall and CPU time of it and its worker processes, best of
--repeat, fresh store each time), the same for --baseline (another checkout, e.g. main)
interleaved with it, the import in-process without workers (CPU time) split by stage, and the
floor ``python -c pass`` start-up. Each tree is compiled to bytecode first, as ``pip install``
does: an installed command does not compile its sources at every start, even where
PYTHONDONTWRITEBYTECODE keeps Python from caching them itself. The machine may be loaded: CPU
time is the steadier figure, and the ratio to the baseline is measured under the same load.
Wall time is the target's measure: the import parses and lints in one worker per CPU, so on an
idle machine wall time is below CPU time.
Target (issue 12): >= 2,000 cards/s for the whole process.
Usage: python benchmarks/bench_import.py [--cards N] [--repeat R] [--baseline DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from chimera_cards._importer import pipeline as importer
from chimera_cards._store.facade import Store

ROOT = Path(__file__).resolve().parent.parent
SOURCES = (  # ../shared from the main checkout, ../../shared from a worktree under /work/wt
    ROOT.parent / "shared" / "corpus" / "chimera-skills",
    ROOT.parent.parent / "shared" / "corpus" / "chimera-skills",
    ROOT / "tests" / "fixtures" / "lint-corpus" / "chimera-skills",
)


def source_cards() -> tuple[Path, list[bytes]]:
    for folder in SOURCES:
        cards = sorted(folder.glob("*/SKILL.md"))
        if cards:
            return folder, [card.read_bytes() for card in cards]
    raise SystemExit("no Chimera cards found in " + " or ".join(map(str, SOURCES)))


def generate(root: Path, count: int) -> int:
    _, cards = source_cards()
    total = 0
    for index in range(count):
        data = cards[index % len(cards)]
        name = f"card-{index:05d}"
        data = re.sub(rb"(?m)^name: .*$", b"name: " + name.encode(), data, count=1)
        (root / name).mkdir(parents=True)
        (root / name / "SKILL.md").write_bytes(data)
        total += len(data)
    return total


def run_cli(tree: Path, cards: Path, store: Path) -> tuple[float, float]:
    """One ``import`` by a fresh process running the code of ``tree`` -> (wall s, CPU s)."""
    env = dict(os.environ, PYTHONPATH=str(tree))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "chimera_cards", "import", str(cards), "--store", str(store)],
        check=True,
        stdout=subprocess.DEVNULL,
        env=env,
        cwd=store.parent,  # not the checkout: `-m` puts the working directory first on sys.path
        timeout=600,
    )
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return elapsed, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


# The stages of an in-process import, timed by wrapping the functions importer calls.
STAGES = (
    ("find + read bundles", "find_skills"),
    ("find + read bundles", "read_skill"),  # each skill is read when the import reaches it
    ("parse (YAML + Markdown)", "parse_card"),
    ("lint (card + files)", "lint_bundle"),
    ("store (SQLite batches)", "_store_batch"),
)


def in_process(cards: Path, store: Path) -> tuple[float, dict[str, float]]:
    """One in-process import without worker processes -> (CPU s, CPU s per stage)."""
    spent = dict.fromkeys((name for name, _ in STAGES), 0.0)
    originals = {attr: getattr(importer, attr) for _, attr in STAGES}

    def timed(name: str, fn):
        def wrapper(*args, **kwargs):
            start = time.process_time()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[name] += time.process_time() - start

        return wrapper

    for name, attr in STAGES:
        setattr(importer, attr, timed(name, originals[attr]))
    try:
        start = time.process_time()
        with Store(store) as opened:
            results = importer.import_source(opened, str(cards), jobs=1)
        total = time.process_time() - start
    finally:
        for attr, fn in originals.items():
            setattr(importer, attr, fn)
    assert all(r.outcome == "imported" for r in results), "every card must import"
    return total, spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a checkout of the code to compare with (e.g. `git worktree add /tmp/base main`), "
        "run the same way in the same run",
    )
    args = parser.parse_args()
    folder, _ = source_cards()
    tmp = Path(tempfile.mkdtemp(prefix="bench-import-"))
    try:
        cards = tmp / "cards"
        total = generate(cards, args.cards)
        print(f"{args.cards} cards, {total / args.cards:.0f} bytes each, copied from {folder}")
        trees = [("this tree", ROOT)] + ([("baseline", args.baseline)] if args.baseline else [])
        for _, tree in trees:  # as installed: bytecode compiled (into the tree's __pycache__)
            subprocess.run(
                [sys.executable, "-m", "compileall", "-q", str(tree / "chimera_cards")],
                check=True,
                stdout=subprocess.DEVNULL,
            )
        runs = iter(range(10**6))
        floor = min(
            run_time(lambda: subprocess.run([sys.executable, "-c", "pass"], check=True))
            for _ in range(args.repeat)
        )
        best: dict[str, tuple[float, float]] = {}
        for _ in range(args.repeat):  # interleaved, so load on the machine hits both alike
            for label, tree in trees:
                wall_s, cpu_s = run_cli(tree, cards, tmp / f"cli-{next(runs)}.db")
                old = best.get(label, (float("inf"), float("inf")))
                best[label] = (min(old[0], wall_s), min(old[1], cpu_s))
        cpu, stages = min(
            (in_process(cards, tmp / f"in-{next(runs)}.db") for _ in range(args.repeat)),
            key=lambda r: r[0],
        )
        print("whole process, `python -m chimera_cards import` (best of each):")
        for label, _ in trees:
            wall_s, cpu_s = best[label]
            print(
                f"  {label:10s} wall {args.cards / wall_s:6.0f} cards/s ({wall_s:.2f} s)"
                f"   CPU {args.cards / cpu_s:6.0f} cards/s ({cpu_s:.2f} s)"
            )
        if args.baseline:
            print(
                f"  this tree / baseline: wall {best['baseline'][0] / best['this tree'][0]:.2f}x"
                f"  CPU {best['baseline'][1] / best['this tree'][1]:.2f}x faster"
            )
        print(f"  python -c pass floor: {floor:.3f} s")
        print(
            f"in-process import of this tree, one process (jobs=1): {args.cards / cpu:.0f} "
            f"cards/s CPU ({cpu:.2f} s)"
        )
        for name in spent_names():
            per_card = stages[name] / args.cards * 1e6
            print(f"  {name:24s} {stages[name]:6.2f} s  {per_card:6.0f} us/card")
        rest = cpu - sum(stages.values())
        print(f"  {'other':24s} {rest:6.2f} s  {rest / args.cards * 1e6:6.0f} us/card")
        wall_rate, cpu_rate = (args.cards / t for t in best["this tree"])
        print(
            f"target >= 2000 cards/s whole process: wall {wall_rate:.0f}/s = "
            f"{wall_rate / 2000:.2f}x of target (CPU {cpu_rate:.0f}/s over {os.cpu_count()} CPUs: "
            "with workers, wall time on an idle machine is below CPU time)"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def spent_names() -> list[str]:
    return list(dict.fromkeys(name for name, _ in STAGES))


def run_time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
