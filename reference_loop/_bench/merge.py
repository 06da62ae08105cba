"""``bench merge``: the slices of one bench (``bench --shard K/N``) combined into one result.

The merged result is summarised exactly as one run is (``summarise_bench``): the same table,
plot and paired statistics. Files made with different settings or code, a slice given twice,
a slice that was stopped before it finished, or a cell of the grid that appears twice are
refused; slices not given make the result partial (the missing ones are named).

A merged result records the grid it plans (``grid``: the tasks, seeds and arms in their fixed
order, and how many slices cut it) and the slices it holds (``merged_shards``), so merging it
again, alone or with the slices it lacks, knows what is still missing: a partial result stays
partial until every slice is in. Each run must be a cell of that grid and belong to a slice
its file holds, and a file must hold every run of its slices; anything else is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reference_loop._bench.runner import ARMS, BenchResult, RunOutcome, summarise_bench
from reference_loop._bench.shard import (
    MergeRefused,
    check_mergeable,
    coverage,
    load_result_files,
    planned_grid,
)


def merge_results(paths: Sequence[Path]) -> BenchResult:
    """Merge bench result files (``bench --out``) into one result.

    Args:
        paths: the slices' result files, in any order.

    Returns:
        The BenchResult of the whole grid (partial when slices are missing).

    Raises:
        MergeRefused: the files are not slices of one bench (see the module docstring).
    """
    names = [str(p) for p in paths]
    files = load_result_files(paths)
    whole = check_mergeable(files, names)
    for name, data in zip(names, files, strict=True):
        if data.get("partial") and not data.get("missing_shards"):
            raise MergeRefused(f"refusing to merge {name}: that slice was stopped before it ended")
    settings: dict[str, Any] = files[0]["settings"]
    arms = [ARMS[a] for a in settings["arms"]]
    tasks = list(settings["tasks"])
    seeds = int(settings["seeds"])
    cells = planned_grid(tasks, seeds, [a.name for a in arms])
    n = whole.n if whole is not None else 1
    runs: list[RunOutcome] = []
    seen: dict[tuple[str, str, int], str] = {}
    for name, data in zip(names, files, strict=True):
        held = coverage(data) or (1, frozenset({1}))
        mine = [c for i, c in enumerate(cells) if i % n + 1 in held[1]]
        for raw in data["runs"]:
            run = RunOutcome(**raw)
            cell = (run.task, run.seed, run.arm)
            if cell not in cells:
                raise MergeRefused(
                    f"refusing to merge {name}: {run.arm} {run.task} seed {run.seed} is not a "
                    "cell of the bench's grid"
                )
            owner = cells[cell] % n + 1
            if owner not in held[1]:
                raise MergeRefused(
                    f"refusing to merge {name}: {run.arm} {run.task} seed {run.seed} belongs to "
                    f"slice {owner}/{n}, which that file does not hold"
                )
            key = (run.arm, run.task, run.seed)
            if key in seen:
                raise MergeRefused(
                    f"refusing to merge: {run.arm} {run.task} seed {run.seed} is in both "
                    f"{seen[key]} and {name}"
                )
            seen[key] = name
            runs.append(run)
        if len(data["runs"]) != len(mine):
            raise MergeRefused(
                f"refusing to merge {name}: it holds {len(data['runs'])} of the {len(mine)} runs "
                "of its slices"
            )
    planned = len(cells)
    given = sorted({k for f in files for k in (coverage(f) or (1, frozenset({1})))[1]})
    missing = sorted(set(range(1, n + 1)) - set(given)) if whole is not None else []
    result = summarise_bench(
        runs,
        arms,
        attempter=str(settings["attempter"]),
        escalate_to=settings.get("escalate_to"),
        tasks=tasks,
        seeds=seeds,
        max_attempts=int(settings["max_attempts"]),
        wall_time=sum(float(f.get("wall_time", 0.0)) for f in files),
        runs_planned=planned,
        impossible=str(settings.get("impossible", "")),
    )
    result.mutations = list(settings.get("mutations", []))
    result.settings = settings
    result.code_version = str(files[0].get("code_version", ""))
    result.missing = missing
    if whole is not None:
        result.merged = given
        result.shard_count = n
    result.machine = {"merged_from": [f.get("machine", {}) for f in files]}
    return result
