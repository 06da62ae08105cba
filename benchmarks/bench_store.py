"""Benchmark: importing a folder of cards into the store, and verifying the store.

Generates N cards (default 2,000, ~4 KB each like the published Chimera cards) in a temp dir and
measures, in the same run:

- import: ``import_source(store, folder)`` (read, hash, parse, lint, write) in cards/s, next to
  the baseline of parsing + linting the same cards with no store at all;
- verify: ``verify_store`` in MB/s of card bytes, next to hashlib's own SHA-256 MB/s over the
  same bytes already in memory, and their ratio; with and without the extra checks registered by
  other modules (review's signature check), so each cost is visible.

Targets: >= 2,000 cards/s import; verify close to hashlib. The temp dir is deleted at
the end. Times are this process's CPU time, best of --repeat runs (see ``clock``).
Usage: python benchmarks/bench_store.py [--cards N] [--repeat R]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import shutil
import tempfile
import time
from pathlib import Path

from skillgen import WORDS as SKILL_WORDS

from chimera_cards._bundles.bundle import read_bundle_dir
from chimera_cards._cards.card import _load_frontmatter, _sections, parse_card, read_card_bytes
from chimera_cards._importer.pipeline import _store_batch, import_source, prepare
from chimera_cards._scan.hidden import scan_hidden
from chimera_cards._scan.lint import lint_card
from chimera_cards._store.facade import Store
from chimera_cards._store.verify import check_blobs, verify_store

WORDS = SKILL_WORDS[:24]  # the card vocabulary: the first words of the skills' one


def paragraph(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def card_bytes(index: int, rng: random.Random) -> bytes:
    name = f"bench-card-{index:05d}"
    head = (
        f"---\nname: {name}\ndescription: {paragraph(rng, 18)}\nversion: 0.1.0\nkind: pattern\n"
        f"stage: build\ntopic: ai-agents\ntriggers:\n- {paragraph(rng, 5)}\n- {paragraph(rng, 6)}\n"
        "provenance: clean\nstatus: active\nlicense: Apache-2.0\n---\n"
    )
    sections = [
        f"## {title}\n\n{paragraph(rng, 60)}\n\n{paragraph(rng, 50)}\n"
        for title in ("Trigger", "Do", "Avoid", "Check", "Risk")
    ]
    return (head + "\n" + "\n".join(sections)).encode("utf-8")


def generate(root: Path, count: int, seed: int = 7) -> int:
    rng = random.Random(seed)
    total = 0
    for index in range(count):
        card_dir = root / f"bench-card-{index:05d}"
        card_dir.mkdir(parents=True)
        data = card_bytes(index, rng)
        (card_dir / "SKILL.md").write_bytes(data)
        total += len(data)
    return total


# CPU time of this process, not wall time: the benchmark machine is shared, and wall time would
# charge other people's work to whichever measurement it happened to overlap. (Import is all
# CPU here: WAL with synchronous=NORMAL does not fsync on commit.) Best of --repeat runs.
clock = time.process_time


def best_of(repeat: int, fn):
    times = []
    for _ in range(repeat):
        start = clock()
        result = fn()
        times.append(clock() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cards", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement (best kept)")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-store-"))
    try:
        folder = tmp / "cards"
        total = generate(folder, args.cards)
        files = sorted(folder.glob("*/SKILL.md"))
        print(f"{args.cards} cards, {total / 1e6:.2f} MB ({total / args.cards:.0f} bytes each)")

        def read_all():
            return [read_card_bytes(file) for file in files]

        def parse_all():
            return [parse_card(data, path=resolved) for data, resolved in raw]

        read_time, raw = best_of(args.repeat, read_all)
        parse_time, cards = best_of(args.repeat, parse_all)
        lint_time, _ = best_of(args.repeat, lambda: [lint_card(c, strict=False) for c in cards])
        base = read_time + parse_time + lint_time

        def fresh_import():
            db = tmp / f"store-{time.monotonic_ns()}.db"
            with Store(db) as store:
                start, wall = clock(), time.perf_counter()
                results = import_source(store, folder)
                elapsed, walled = clock() - start, time.perf_counter() - wall
            assert all(r.outcome == "imported" for r in results), "import failed"
            return elapsed, walled, db

        runs = [fresh_import() for _ in range(args.repeat)]
        imported, _, db = min(runs)
        wall_best = min(w for _, w, _ in runs)
        print(
            f"import:  {args.cards / imported:8.0f} cards/s  ({imported:.3f} s CPU, "
            f"{wall_best:.3f} s wall = {args.cards / wall_best:.0f} cards/s; includes read, "
            f"hash, parse, lint, write)"
        )
        print(
            f"  baseline read+parse+lint only, no store: {args.cards / base:8.0f} cards/s "
            f"(read {args.cards / read_time:.0f}/s, parse {args.cards / parse_time:.0f}/s, "
            f"lint {args.cards / lint_time:.0f}/s)"
        )

        # The store's own share: the same cards prepared up front, then only the batched writes.
        candidates = []
        for file in files:
            resolved = str(file.resolve())
            candidates.append(
                (
                    str(file),
                    prepare(
                        read_bundle_dir(file.parent),
                        origin=resolved,
                        final_url=None,
                        from_url=False,
                        expected=None,
                        pins=None,
                        pins_source="",
                        taint=False,
                    ),
                )
            )

        def writes_only():
            with Store(tmp / f"writes-{time.monotonic_ns()}.db") as store:
                start = clock()
                for offset in range(0, len(candidates), 500):
                    _store_batch(store, candidates[offset : offset + 500], [])
                return clock() - start

        written = min(writes_only() for _ in range(args.repeat))
        print(
            f"  store writes alone (blobs, versions, audit chain, FTS queue): "
            f"{args.cards / written:8.0f} cards/s"
        )

        # The same per-card preparation import does, interleaved as import does it (read, hash,
        # look the hash up in a store, parse, lint), with no writes: what import costs beyond
        # this and the writes is its own bookkeeping (batching, savepoints, hooks, results).
        def prepare_all():
            with Store(tmp / f"prep-{time.monotonic_ns()}.db") as store:
                start = clock()
                for file in files:
                    resolved = str(file.resolve())
                    prepare(
                        read_bundle_dir(file.parent),
                        origin=resolved,
                        final_url=None,
                        from_url=False,
                        expected=None,
                        pins=None,
                        pins_source="",
                        taint=False,
                        file=Path(resolved),
                        stored=store.version_with_bytes,
                    )
                return clock() - start

        prepared = min(prepare_all() for _ in range(args.repeat))
        print(
            f"  prepare alone, card by card as import does (read, hash, look-up, parse, lint): "
            f"{args.cards / prepared:8.0f} cards/s"
        )

        # Where a fresh import's time goes, per card (parse and lint split into their big parts).
        yaml_time, _ = best_of(
            args.repeat, lambda: [_load_frontmatter(c.frontmatter_text, 2) for c in cards]
        )
        markdown_time, _ = best_of(
            args.repeat, lambda: [_sections(c.body, c.body_line) for c in cards]
        )
        scan_time, _ = best_of(
            args.repeat,
            lambda: [(scan_hidden(c.frontmatter_text), scan_hidden(c.body)) for c in cards],
        )
        us = 1e6 / args.cards
        print(
            f"  per card: read {read_time * us:.0f} us, parse {parse_time * us:.0f} us "
            f"(YAML {yaml_time * us:.0f}, Markdown {markdown_time * us:.0f}), lint "
            f"{lint_time * us:.0f} us (hidden-instruction scan {scan_time * us:.0f}), "
            f"store writes {written * us:.0f} us; import as a whole {imported * us:.0f} us"
        )
        print(
            f"  import = prepare {prepared * us:.0f} us + store writes {written * us:.0f} us + "
            f"the rest {(imported - prepared - written) * us:.0f} us (batching, savepoints, "
            f"import hooks, results; negative when within the run-to-run noise)"
        )

        with Store(db) as store:
            again, _ = best_of(1, lambda: import_source(store, folder))
            print(
                "  re-import of the same folder (all already present): "
                f"{args.cards / again:.0f} cards/s"
            )
            blobs = [store.get_blob(v.sha256) for v in store.versions()]
            hashed, _ = best_of(args.repeat, lambda: [hashlib.sha256(b).hexdigest() for b in blobs])

            def blob_pass():
                with store.snapshot() as conn:
                    return check_blobs(store, conn)

            blobs_only, _ = best_of(args.repeat, blob_pass)
            core, report = best_of(
                args.repeat, lambda: verify_store(store, record=False, extra_checks=())
            )
            assert report.ok, report.problems
            full, report = best_of(args.repeat, lambda: verify_store(store, record=False))
            assert report.ok, report.problems
        mb = total / 1e6
        print(f"hashlib sha256 over the same bytes: {mb / hashed:8.0f} MB/s")
        print(
            f"verify's blob re-hash pass (read from SQLite + hash): {mb / blobs_only:8.0f} MB/s  "
            f"ratio to hashlib {hashed / blobs_only:.2f}"
        )
        print(
            f"verify (blobs + versions + audit chain): {mb / core:8.0f} MB/s  "
            f"ratio to hashlib {hashed / core:.2f}  ({core * 1000:.1f} ms)"
        )
        print(
            f"verify with extra checks (signatures):   {mb / full:8.0f} MB/s  "
            f"ratio to hashlib {hashed / full:.2f}  ({full * 1000:.1f} ms)"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
