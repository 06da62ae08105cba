"""Benchmark: hashing and importing skills as bundles (every file of each skill folder).

Generates a collection of N skills (default 100), each ~10 files and ~60 KB (a SKILL.md card,
Python and shell scripts, Markdown references, a JSON asset, a licence; one script executable),
and measures in the same run:

- hashing: ``bundle.read_bundle_dir`` over every skill (walk, every refusal check, read, SHA-256,
  manifest, digest) against ``sha256sum`` over exactly the same files (one process, all paths
  given at once); the ratio is the target (issue: at most 1.5x);
Hashing times are CPU seconds (this process plus the children it waited for), best of --repeat.

- import: ``import_source(store, collection)`` into a fresh store (files/s: read, hash, parse,
  lint every file, scan scripts, store blobs and manifests) against importing the same number of
  files as single-file cards (the SKILL.md of every skill copied into one folder each, 10x over),
  cards/s; the target is bundle files/s >= single-file cards/s. Both run the same way: the same
  call, a fresh store each, the worker pool each (both are over its threshold), one of each
  per round for --repeat/2 rounds. Both wall time (what a user waits for) and CPU time
  (this process and its workers) are printed, each the best round: on a loaded machine wall
  time also counts time others held the cores, CPU time does not. The CPU split shows how much
  of it the workers (parse, lint, scan) and this process (read, hash, store) took.

Usage: python benchmarks/bench_bundle.py [--skills N] [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from skillgen import generate

from chimera_cards._bundles.bundle import find_bundle_dirs, read_bundle_dir
from chimera_cards._importer.pipeline import import_source
from chimera_cards._store.facade import Store


def cpu_now() -> float:
    """CPU seconds used so far by this process and the children it waited for (sha256sum): on a
    shared, loaded box this is what the work costs, not how long others held the cores."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def cpu_split() -> tuple[float, float]:
    """CPU seconds so far of (this process, the children it waited for: the import's workers)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime


def best_of(repeat: int, fn) -> tuple[float, float, object]:
    """(best CPU seconds, best wall seconds, last result) over ``repeat`` runs of ``fn``."""
    best_cpu = best_wall = float("inf")
    result = None
    for _ in range(repeat):
        start, wall = cpu_now(), time.perf_counter()
        result = fn()
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, cpu_now() - start)
    return best_cpu, best_wall, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skills", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-bundle-"))
    try:
        collection = tmp / "collection"
        files, total = generate(collection, args.skills)
        print(
            f"collection: {args.skills} skills, {files} files, {total / 1e6:.1f} MB "
            f"({total / files / 1024:.1f} KB/file, {total / args.skills / 1024:.0f} KB/skill)"
        )
        all_files = sorted(str(p) for p in collection.rglob("*") if p.is_file())

        def sha256sum():
            subprocess.run(
                ["sha256sum", *all_files], check=True, stdout=subprocess.DEVNULL, timeout=120
            )

        def bundles():
            return [read_bundle_dir(d).digest for d in find_bundle_dirs(collection)]

        # Warm the page cache for both, then interleave the measurements.
        sha256sum()
        bundles()
        base_t, _, _ = best_of(args.repeat, sha256sum)
        hash_t, _, digests = best_of(args.repeat, bundles)
        assert len(digests) == args.skills
        ratio = hash_t / base_t
        print(f"sha256sum over the same {files} files          {base_t * 1000:8.1f} ms")
        print(f"bundle digests (read_bundle_dir x {args.skills})        {hash_t * 1000:8.1f} ms")
        verdict = "MET" if ratio <= 1.5 else "NOT MET"
        print(f"bundle hashing / sha256sum = {ratio:.2f}x  (target <= 1.5x: {verdict})")

        singles = tmp / "singles"
        copies = max(1, files // args.skills)
        for i, skill in enumerate(find_bundle_dirs(collection)):
            text = (skill / "SKILL.md").read_text()
            for c in range(copies):
                name = f"single-{i:04d}-{c}"
                card = singles / name
                card.mkdir(parents=True)
                (card / "SKILL.md").write_text(text.replace(skill.name, name))
        n_singles = args.skills * copies

        def import_into(folder: Path, label: str):
            def run():
                db = tmp / f"{label}.db"
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{db}{suffix}").unlink(missing_ok=True)
                with Store(db) as store:
                    results = import_source(store, folder)
                assert all(r.outcome == "imported" for r in results), results[:1]
                return len(results)

            return run

        # Round by round, one import of each: load from others on a shared machine then falls
        # on both alike, as it cannot when all of one side runs before the other.
        wall = {"singles": float("inf"), "bundles": float("inf")}
        cpu = {"singles": (float("inf"), 0.0, 0.0), "bundles": (float("inf"), 0.0, 0.0)}
        for _ in range(max(1, args.repeat // 2)):
            for label, folder in (("singles", singles), ("bundles", collection)):
                own, kids = cpu_split()
                start = time.perf_counter()
                count = import_into(folder, label)()
                wall[label] = min(wall[label], time.perf_counter() - start)
                own_end, kids_end = cpu_split()
                own, kids = own_end - own, kids_end - kids
                cpu[label] = min(cpu[label], (own + kids, own, kids))
                assert count == (n_singles if label == "singles" else args.skills)
        single_wall, bundle_wall = wall["singles"], wall["bundles"]
        single_cpu, bundle_cpu = cpu["singles"][0], cpu["bundles"][0]
        for label, single_t, bundle_t in (
            ("wall", single_wall, bundle_wall),
            ("cpu", single_cpu, bundle_cpu),
        ):
            single_rate = n_singles / single_t
            bundle_rate = files / bundle_t
            verdict = "MET" if bundle_rate >= single_rate else "NOT MET"
            print(
                f"import, {label:4s}: {n_singles} single-file cards {single_t:6.2f} s "
                f"{single_rate:6.0f} cards/s | {args.skills} bundles ({files} files) "
                f"{bundle_t:6.2f} s {bundle_rate:6.0f} files/s | per file "
                f"{bundle_rate / single_rate:.2f}x (target >= 1x: {verdict})"
            )
        print(
            "import CPU, this process + its workers (best round): "
            + " | ".join(f"{k} {own:.2f} + {kids:.2f} s" for k, (_, own, kids) in cpu.items())
        )
        print(f"(load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
