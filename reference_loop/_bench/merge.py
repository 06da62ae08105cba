"""``bench merge``: the slices of one bench (``bench --shard K/N``) combined into one result.

The merged result is summarised exactly as one run is (``summarise_bench``): the same table,
plot and paired statistics. Files made with different settings or code, a slice given twice,
a slice that was stopped before it finished, or a cell of the grid that appears twice are
refused; slices not given make the result partial (the missing ones are named).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reference_loop._bench.runner import ARMS, BenchResult, RunOutcome, summarise_bench
from reference_loop._bench.shard import MergeRefused, check_mergeable, load_result_files


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
    runs: list[RunOutcome] = []
    seen: dict[tuple[str, str, int], str] = {}
    for name, data in zip(names, files, strict=True):
        for raw in data["runs"]:
            run = RunOutcome(**raw)
            cell = (run.arm, run.task, run.seed)
            if cell in seen:
                raise MergeRefused(
                    f"refusing to merge: {run.arm} {run.task} seed {run.seed} is in both "
                    f"{seen[cell]} and {name}"
                )
            seen[cell] = name
            runs.append(run)
    arms = [ARMS[a] for a in settings["arms"]]
    tasks = list(settings["tasks"])
    seeds = int(settings["seeds"])
    planned = len(tasks) * seeds * len(arms)
    given = sorted(int(f["shard"]["k"]) for f in files if f.get("shard"))
    missing = sorted(set(range(1, whole.n + 1)) - set(given)) if whole is not None else []
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
    )
    result.settings = settings
    result.code_version = str(files[0].get("code_version", ""))
    result.missing = missing
    result.machine = {"merged_from": [f.get("machine", {}) for f in files]}
    return result
