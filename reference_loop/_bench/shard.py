"""A bench spread over machines: deterministic slices of the grid, and merging them back.

A run with a real agent takes minutes, a bench of tasks x seeds x arms takes hours; any
scheduler (a CI matrix, Slurm array, Kubernetes indexed jobs) can run ``bench --shard K/N`` on N
machines and ``bench merge results-*.json`` gives the same table, plot and paired statistics as
one run. Shard K of N holds every N-th cell of the grid in its fixed order (task, seed, arm), so
the slices are disjoint, cover the grid, and are balanced across tasks and arms. Every result
file carries the bench's settings and a digest of the code that ran it; merging files whose
settings or code differ is refused, because their numbers are not comparable.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from reference_loop.errors import LoopUsageError

T = TypeVar("T")


class MergeRefused(LoopUsageError):
    """Result files that cannot be merged: different settings, code, grids or repeated slices."""


@dataclass(frozen=True)
class Shard:
    """Slice ``k`` (1-based) of ``n``."""

    k: int
    n: int

    def to_dict(self) -> dict[str, int]:
        return {"k": self.k, "n": self.n}

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"


def parse_shard(text: str) -> Shard:
    """``K/N`` -> Shard, or a usage error (K from 1 to N)."""
    k_text, sep, n_text = text.strip().partition("/")
    if not sep or not k_text.isdigit() or not n_text.isdigit():
        raise LoopUsageError(f"--shard must look like K/N (e.g. 2/8), got {text!r}")
    k, n = int(k_text), int(n_text)
    if n < 1 or not 1 <= k <= n:
        raise LoopUsageError(f"--shard {text}: K must be between 1 and N (N >= 1)")
    return Shard(k, n)


def select(grid: Sequence[T], shard: Shard | None) -> list[T]:
    """The cells of ``grid`` (in its fixed order) that belong to ``shard`` (all when None)."""
    if shard is None:
        return list(grid)
    return [cell for i, cell in enumerate(grid) if i % shard.n == shard.k - 1]


def code_version(package_dirs: Sequence[Path] | None = None) -> str:
    """A digest of the Python sources that run a bench (this package and chimera_cards), so two
    result files made by different code are told apart."""
    if package_dirs is None:
        import chimera_cards
        import reference_loop

        package_dirs = [
            Path(reference_loop.__file__).parent,
            Path(chimera_cards.__file__).parent,
        ]
    digest = hashlib.sha256()
    for base in package_dirs:
        for path in sorted(base.rglob("*.py")):
            if "__pycache__" in path.parts:
                continue
            digest.update(f"{base.name}/{path.relative_to(base).as_posix()}\0".encode())
            digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def load_result_files(paths: Sequence[Path]) -> list[dict[str, Any]]:
    """Read bench result files (``bench --out``); a usage error names the bad one."""
    if not paths:
        raise LoopUsageError("bench merge needs at least one results file")
    loaded = []
    for path in paths:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise LoopUsageError(f"cannot read {path}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise LoopUsageError(f"{path}: not a bench results file ({exc})") from None
        if not isinstance(data, dict) or "runs" not in data or "settings" not in data:
            raise LoopUsageError(
                f"{path}: not a bench results file with settings (written by bench --out)"
            )
        loaded.append(data)
    return loaded


def _differs(files: Sequence[Mapping[str, Any]], key: str) -> bool:
    first = json.dumps(files[0].get(key), sort_keys=True)
    return any(json.dumps(f.get(key), sort_keys=True) != first for f in files[1:])


def check_mergeable(files: Sequence[Mapping[str, Any]], names: Sequence[str]) -> Shard | None:
    """Refuse files that are not slices of one bench.

    Args:
        files: the loaded result files.
        names: their paths, for the messages.

    Returns:
        The N the slices share (as Shard(0, N)), or None when they are whole runs.

    Raises:
        MergeRefused: settings or code differ, a slice repeats, or slices and whole runs mix.
    """
    if _differs(files, "settings"):
        keys = sorted(
            {
                k
                for f in files
                for k in f["settings"]
                if json.dumps(f["settings"].get(k), sort_keys=True)
                != json.dumps(files[0]["settings"].get(k), sort_keys=True)
            }
        )
        raise MergeRefused(
            "refusing to merge results made with different settings "
            f"({', '.join(keys)} differ between {names[0]} and the others)"
        )
    if _differs(files, "code_version"):
        versions = ", ".join(
            f"{n}: {f.get('code_version')}" for n, f in zip(names, files, strict=True)
        )
        raise MergeRefused(f"refusing to merge results made by different code ({versions})")
    held = [coverage(f) for f in files]
    if any(h is None for h in held):
        if len(files) > 1:
            raise MergeRefused(
                "refusing to merge: a whole run (no --shard) cannot be merged with other files"
            )
        return None
    ns = {h[0] for h in held if h is not None}
    if len(ns) != 1:
        raise MergeRefused(f"refusing to merge slices of different grids (N = {sorted(ns)})")
    seen: dict[int, str] = {}
    for name, h in zip(names, held, strict=True):
        for k in sorted(h[1] if h is not None else ()):
            if k in seen:
                raise MergeRefused(
                    f"refusing to merge: slice {k} appears twice ({seen[k]}, {name})"
                )
            seen[k] = name
    return Shard(0, ns.pop())


def coverage(data: Mapping[str, Any]) -> tuple[int, frozenset[int]] | None:
    """(N, the slices K it holds) of a result file: one slice of a ``--shard`` run, the slices
    a merged result holds; ``None`` for a whole run.

    Raises:
        MergeRefused: the file names slices outside 1..N.
    """
    shard = data.get("shard")
    if shard:
        n, ks = int(shard["n"]), frozenset({int(shard["k"])})
    elif data.get("merged_shards") is not None:
        n = int(data.get("shard_count") or 0)
        ks = frozenset(int(k) for k in data["merged_shards"])
    else:
        return None
    if n < 1 or not ks or any(not 1 <= k <= n for k in ks):
        raise MergeRefused(f"refusing to merge: slices {sorted(ks)} of {n} do not make sense")
    return n, ks


def planned_grid(
    tasks: Sequence[str], seeds: int, arms: Sequence[str]
) -> dict[tuple[str, int, str], int]:
    """Every (task, seed, arm) cell of a bench -> its place in the grid's fixed order (the
    order :func:`select` slices and ``runner.grid`` runs)."""
    cells = [(task, seed, arm) for task in tasks for seed in range(seeds) for arm in arms]
    return {cell: i for i, cell in enumerate(cells)}
