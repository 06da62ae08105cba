"""Benchmark: Workspace snapshot+diff+restore vs `git status` and vs a full-copy baseline.

Generates a tree (default 20,000 files / ~200 MB) in a temp dir, changes a few files per attempt
(modify, add, delete, chmod) and times, per attempt and in the same run:

- Workspace A: snapshot() + diff() + restore() every attempt (each one also printed alone);
- Workspace B: what the loop does, snapshot() once per run then diff_and_restore() per attempt;
- `git status --porcelain` on a normal git repository of the same tree, with the same changes;
- the full-copy baseline: read every file into memory, compare every file, rewrite every file.

Targets (issue 5): Workspace <= 2x `git status`, and >= 20x faster than the full-copy baseline.
The tree is deleted at the end. Usage: python benchmarks/bench_workspace.py [--files N] [--mb M]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from reference_loop.workspace import Workspace


def generate_tree(root: Path, files: int, total_mb: float, rng: random.Random) -> list[str]:
    """Files spread over nested dirs (~100 per dir); half text, half random bytes."""
    avg = int(total_mb * 1024 * 1024 / files)
    paths: list[str] = []
    per_dir = 100
    for i in range(files):
        d = i // per_dir
        rel = f"pkg{d // 20:03d}/mod{d % 20:02d}/file{i:05d}.{'txt' if i % 2 else 'bin'}"
        full = root / rel
        full.parent.mkdir(parents=True, exist_ok=True)
        size = max(1, int(avg * rng.uniform(0.5, 1.5)))
        if i % 2:
            line = f"line of text for file {i} ".encode() * 4 + b"\n"
            data = (line * (size // len(line) + 1))[:size]
        else:
            data = os.urandom(size)
        full.write_bytes(data)
        paths.append(rel)
    return paths


def make_changes(root: Path, paths: list[str], n: int, rng: random.Random, attempt: int) -> None:
    """n changes of mixed kinds, like an attempt: modify, add, delete, chmod."""
    picks = rng.sample(paths, n)
    for k, rel in enumerate(picks):
        full = root / rel
        kind = k % 5
        if kind in (0, 1, 2):
            with open(full, "ab") as fh:
                fh.write(f"\nchanged in attempt {attempt}\n".encode())
        elif kind == 3:
            full.unlink()
        else:
            os.chmod(full, 0o755)
    (root / f"pkg000/new_in_attempt_{attempt}.txt").write_text("new file\n")


def git(root: Path, *args: str, gitdir: Path) -> subprocess.CompletedProcess[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_DIR=str(gitdir),
        GIT_WORK_TREE=str(root),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="b",
        GIT_AUTHOR_EMAIL="b@b",
        GIT_COMMITTER_NAME="b",
        GIT_COMMITTER_EMAIL="b@b",
    )
    return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


class FullCopy:
    """The common approach: keep every file's bytes in memory, compare all, rewrite all."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.saved: dict[str, tuple[bytes, int]] = {}

    def _walk(self) -> list[str]:
        out = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if d != ".git"]
            for f in filenames:
                out.append(os.path.relpath(os.path.join(dirpath, f), self.root))
        return out

    def snapshot(self) -> None:
        self.saved = {}
        for rel in self._walk():
            full = self.root / rel
            self.saved[rel] = (full.read_bytes(), os.lstat(full).st_mode)

    def diff(self) -> list[str]:
        changed = []
        now = set(self._walk())
        for rel in now | set(self.saved):
            full = self.root / rel
            if rel not in self.saved or rel not in now:
                changed.append(rel)
            else:
                data, mode = self.saved[rel]
                if full.read_bytes() != data or os.lstat(full).st_mode != mode:
                    changed.append(rel)
        return changed

    def restore(self) -> None:
        for rel in self._walk():
            if rel not in self.saved:
                os.unlink(self.root / rel)
        for rel, (data, mode) in self.saved.items():
            full = self.root / rel
            full.parent.mkdir(parents=True, exist_ok=True)
            full.write_bytes(data)
            os.chmod(full, mode & 0o7777)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=20_000)
    ap.add_argument("--mb", type=float, default=200.0, help="total size of the tree in MB")
    ap.add_argument("--changes", type=int, default=10, help="files changed per attempt")
    ap.add_argument("--attempts", type=int, default=5)
    ap.add_argument("--baseline-attempts", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", default=None, help="parent dir for the generated tree (default: /tmp)")
    args = ap.parse_args()
    rng = random.Random(args.seed)

    tmp = Path(tempfile.mkdtemp(prefix="bench-workspace-", dir=args.dir))
    try:
        root = tmp / "tree"
        root.mkdir()
        t0 = time.perf_counter()
        paths = generate_tree(root, args.files, args.mb, rng)
        size = sum((root / p).stat().st_size for p in paths)
        print(
            f"tree: {len(paths)} files, {size / 1e6:.1f} MB, generated in "
            f"{time.perf_counter() - t0:.1f}s  ({root})"
        )

        # A normal git repo of the same tree (its GIT_DIR beside it, so the tree stays the same).
        gitdir = tmp / "status.git"
        git(root, "init", "-q", gitdir=gitdir)
        git(root, "add", "-A", gitdir=gitdir)
        git(root, "commit", "-q", "-m", "base", gitdir=gitdir)
        git(root, "status", "--porcelain", gitdir=gitdir)  # warm the stat cache

        ws = Workspace(root)
        t0 = time.perf_counter()
        ws.snapshot()
        first = time.perf_counter() - t0
        print(f"workspace first snapshot (hashes the whole tree once): {first:.2f}s")

        def status_time() -> float:
            """`git status` on the same changed tree (median of 3 runs)."""
            runs = []
            for _ in range(3):
                s0 = time.perf_counter()
                git(root, "status", "--porcelain", gitdir=gitdir)
                runs.append(time.perf_counter() - s0)
            return statistics.median(runs)

        # A: every attempt calls snapshot(), diff() and restore() (three looks at the tree).
        sep_times, sep_status = [], []
        print("\nA. snapshot() + diff() + restore() per attempt")
        print(
            f"{'attempt':>7} {'snapshot':>9} {'diff':>8} {'restore':>8} {'total':>8} "
            f"{'git status':>11} {'ratio':>6}"
        )
        for attempt in range(1, args.attempts + 1):
            t0 = time.perf_counter()
            ws.snapshot()
            t1 = time.perf_counter()
            make_changes(root, paths, args.changes, rng, attempt)
            t2 = time.perf_counter()
            d = ws.diff()
            t3 = time.perf_counter()
            st = status_time()
            t4 = time.perf_counter()
            ws.restore()
            t5 = time.perf_counter()
            total = (t1 - t0) + (t3 - t2) + (t5 - t4)
            assert len(d.files) >= args.changes, d.files
            assert not ws.diff().files, "restore left changes behind"
            sep_times.append(total)
            sep_status.append(st)
            print(
                f"{attempt:>7} {t1 - t0:>8.3f}s {t3 - t2:>7.3f}s {t5 - t4:>7.3f}s {total:>7.3f}s "
                f"{st:>10.3f}s {total / st:>5.2f}x   ({len(d.files)} files in diff, "
                f"{len(ws.last_restored)} paths restored)"
            )

        # B: what the loop does: one snapshot per run, then diff_and_restore() per attempt.
        loop_times, loop_status = [], []
        ws.snapshot()
        print("\nB. the loop: snapshot() once, then diff_and_restore() per attempt")
        print(f"{'attempt':>7} {'diff+restore':>13} {'git status':>11} {'ratio':>6}")
        for attempt in range(1, args.attempts + 1):
            make_changes(root, paths, args.changes, rng, 50 + attempt)
            st = status_time()
            t0 = time.perf_counter()
            d = ws.diff_and_restore()
            t1 = time.perf_counter()
            assert len(d.files) >= args.changes, d.files
            assert not ws.diff().files, "restore left changes behind"
            loop_times.append(t1 - t0)
            loop_status.append(st)
            print(
                f"{attempt:>7} {t1 - t0:>12.3f}s {st:>10.3f}s {(t1 - t0) / st:>5.2f}x   "
                f"({len(d.files)} files in diff, {len(ws.last_restored)} paths restored)"
            )
        ws.close()

        base = FullCopy(root)
        t0 = time.perf_counter()
        base.snapshot()
        print(f"\nfull-copy first snapshot (reads the whole tree): {time.perf_counter() - t0:.2f}s")
        base_times = []
        for attempt in range(1, args.baseline_attempts + 1):
            t0 = time.perf_counter()
            base.snapshot()
            t1 = time.perf_counter()
            make_changes(root, paths, args.changes, rng, 100 + attempt)
            t2 = time.perf_counter()
            changed = base.diff()
            t3 = time.perf_counter()
            base.restore()
            t4 = time.perf_counter()
            total = (t1 - t0) + (t3 - t2) + (t4 - t3)
            base_times.append(total)
            print(
                f"full-copy attempt {attempt}: snapshot {t1 - t0:.2f}s diff {t3 - t2:.2f}s "
                f"restore {t4 - t3:.2f}s total {total:.2f}s ({len(changed)} changed)"
            )

        sep_med, loop_med = statistics.median(sep_times), statistics.median(loop_times)
        st_med = statistics.median(sep_status + loop_status)
        base_med = statistics.median(base_times)
        print("\nmedian per attempt:")
        print(f"  A. workspace snapshot+diff+restore: {sep_med * 1000:8.1f} ms")
        print(f"  B. workspace diff_and_restore:      {loop_med * 1000:8.1f} ms")
        print(f"  git status --porcelain:             {st_med * 1000:8.1f} ms")
        print(f"  full-copy baseline:                 {base_med * 1000:8.1f} ms")
        for label, value in (("A", sep_med), ("B", loop_med)):
            r_status, r_base = value / st_med, base_med / value
            print(
                f"  {label}: / git status = {r_status:.2f}x (target <= 2x) "
                f"{'OK' if r_status <= 2 else 'MISSED'};  full-copy / {label} = {r_base:.1f}x "
                f"(target >= 20x) {'OK' if r_base >= 20 else 'MISSED'}"
            )
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
