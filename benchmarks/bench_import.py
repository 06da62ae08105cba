"""Benchmark: ``chimera-cards import FOLDER`` on realistic cards, whole process, cards/s.

The cards are the 23 real Chimera cards (``../shared/corpus/chimera-skills`` when present, else
the byte-identical copies in ``tests/fixtures/lint-corpus/chimera-skills``; the run says which)
copied under new names up to --cards (default 2,000, ~3.9 KB each): the ``name`` line and the
folder are renamed, nothing else, so Markdown, YAML and the scan see real text. Measured in the
same run: the whole CLI process (wall time, best of --repeat, fresh store each time), the same
import in-process (CPU time), and the floor ``python -c pass`` start-up.
Target (issue 12): >= 2,000 cards/s for the whole process.
Usage: python benchmarks/bench_import.py [--cards N] [--repeat R]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from chimera_cards.importer import import_source
from chimera_cards.store import Store

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


def wall(repeat: int, fn) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    folder, _ = source_cards()
    tmp = Path(tempfile.mkdtemp(prefix="bench-import-"))
    try:
        cards = tmp / "cards"
        total = generate(cards, args.cards)
        print(f"{args.cards} cards, {total / args.cards:.0f} bytes each, copied from {folder}")
        cli = Path(sys.executable).parent / "chimera-cards"
        runs = iter(range(10**6))

        def cli_import() -> None:
            store = tmp / f"cli-{next(runs)}.db"
            subprocess.run(
                [str(cli), "import", str(cards), "--store", str(store)],
                check=True,
                stdout=subprocess.DEVNULL,
                timeout=600,
            )

        floor = wall(
            args.repeat, lambda: subprocess.run([sys.executable, "-c", "pass"], check=True)
        )
        whole = wall(args.repeat, cli_import)

        def in_process() -> None:
            with Store(tmp / f"in-{next(runs)}.db") as store:
                results = import_source(store, str(cards))
            assert all(r.outcome == "imported" for r in results)

        cpu = []
        for _ in range(args.repeat):
            start = time.process_time()
            in_process()
            cpu.append(time.process_time() - start)
        print(
            f"  whole process (CLI, wall):     {args.cards / whole:7.0f} cards/s  ({whole:.2f} s)"
        )
        print(f"  in-process import (CPU):       {args.cards / min(cpu):7.0f} cards/s")
        print(f"  python -c pass floor:          {floor:.3f} s")
        print(f"target >= 2000 cards/s whole process: {args.cards / whole / 2000:.2f}x of target")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
