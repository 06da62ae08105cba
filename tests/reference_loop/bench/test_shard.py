"""A bench spread over machines: slices of the grid, merged back into the same result.

The slices run through the real CLI (``bench --shard K/N --out``) on the fast task from
conftest, and ``bench merge`` must print the same table as one whole run; merging files made
with different settings, different code, or the same slice twice is refused.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import make_task_dir

from reference_loop._bench.runner import RunOutcome, grid, parse_arms
from reference_loop._bench.shard import Shard, parse_shard, select
from reference_loop._tasks.task import load_task_dirs
from reference_loop.errors import LoopError, LoopUsageError


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from reference_loop._cli.app import main; main()", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture
def tasks_dir(tmp_path: Path) -> Path:
    root = tmp_path / "tasks"
    make_task_dir(root / "modes")
    second = make_task_dir(root / "modes-two")
    manifest = second / "task.toml"
    manifest.write_text(manifest.read_text().replace('name = "modes"', 'name = "modes-two"'))
    return root


def test_slices_are_disjoint_cover_the_grid_and_are_balanced(tasks_dir: Path) -> None:
    tasks = load_task_dirs(tasks_dir)
    cells = grid(tasks, parse_arms("none,last,accumulate"), 3)
    slices = [select(cells, Shard(k, 4)) for k in range(1, 5)]
    flat = [cell for part in slices for cell in part]
    assert sorted(map(id, flat)) == sorted(map(id, cells)) and len(flat) == len(cells)
    assert max(map(len, slices)) - min(map(len, slices)) <= 1
    # The same call gives the same slice: a scheduler may retry a slice on another machine.
    again = select(
        grid(load_task_dirs(tasks_dir), parse_arms("none,last,accumulate"), 3), Shard(2, 4)
    )
    assert [(t.name, a.name, s) for t, a, s in again] == [
        (t.name, a.name, s) for t, a, s in slices[1]
    ]


@pytest.mark.parametrize("text", ["0/3", "4/3", "1/0", "a/b", "2", "1/2/3"])
def test_a_bad_shard_is_a_usage_error(text: str) -> None:
    with pytest.raises(LoopUsageError, match="--shard"):
        parse_shard(text)


def _table(text: str) -> str:
    """The printed table without what differs between two runs of it (times, the slice note)."""
    lines = [line for line in text.splitlines() if not line.startswith(("attempter", "slice"))]
    return re.sub(r"\s+\d+\.\d\s+(ok|VOID)$", r" \1", "\n".join(lines), flags=re.M)


@pytest.mark.slow
def test_merged_slices_give_the_same_table_as_one_run(tmp_path: Path, tasks_dir: Path) -> None:
    common = ["bench", "--tasks", str(tasks_dir), "--seeds", "2", "--arms", "last,accumulate"]
    whole = _cli([*common, "--out", str(tmp_path / "whole.json")], tmp_path)
    assert whole.returncode == 0, whole.stderr
    for k in (1, 2, 3):
        part = _cli(
            [*common, "--shard", f"{k}/3", "--out", str(tmp_path / f"r-{k}.json")], tmp_path
        )
        assert part.returncode == 0, part.stderr
        assert f"slice {k}/3" in part.stdout
    files = [str(tmp_path / f"r-{k}.json") for k in (3, 1, 2)]
    merged = _cli(["bench", "merge", *files, "--out", str(tmp_path / "merged.json")], tmp_path)
    assert merged.returncode == 0, merged.stderr
    assert _table(merged.stdout) == _table(whole.stdout)
    one = json.loads((tmp_path / "whole.json").read_text())
    both = json.loads((tmp_path / "merged.json").read_text())
    assert both["runs_planned"] == one["runs_planned"] == len(both["runs"]) == 8
    assert both["paired_vs_last"] == one["paired_vs_last"]
    assert [a["solved"] for a in both["arms"]] == [a["solved"] for a in one["arms"]]

    # Two slices of three: the result says which slice is missing, and is not valid.
    short = _cli(["bench", "merge", files[0], files[1]], tmp_path)
    assert short.returncode == 1 and "slices 2 were not merged" in short.stdout

    # The same slice twice, a whole run with a slice, other settings, other code: refused.
    twice = _cli(["bench", "merge", files[0], files[0]], tmp_path)
    assert twice.returncode == 2 and "appears twice" in twice.stderr
    mixed = _cli(["bench", "merge", str(tmp_path / "whole.json"), files[0]], tmp_path)
    assert mixed.returncode == 2 and "whole run" in mixed.stderr
    other = json.loads(Path(files[1]).read_text())
    other["settings"]["max_attempts"] = 9
    (tmp_path / "other.json").write_text(json.dumps(other))
    refused = _cli(["bench", "merge", files[0], str(tmp_path / "other.json")], tmp_path)
    assert refused.returncode == 2 and "max_attempts" in refused.stderr
    newer = json.loads(Path(files[1]).read_text())
    newer["code_version"] = "0" * 16
    (tmp_path / "newer.json").write_text(json.dumps(newer))
    refused = _cli(["bench", "merge", files[0], str(tmp_path / "newer.json")], tmp_path)
    assert refused.returncode == 2 and "different code" in refused.stderr
    _re_merging_a_partial_merge_stays_partial(tmp_path, files, whole.stdout)
    _runs_outside_their_slice_or_the_grid_are_refused(tmp_path, files)


def _re_merging_a_partial_merge_stays_partial(
    tmp_path: Path, files: list[str], whole_table: str
) -> None:
    """A merged result records its grid and the slices it holds: merged again alone it is still
    partial (1 slice of 3 missing), with the slice it lacks it is whole, with a slice it holds
    it is refused."""
    partial = tmp_path / "partial.json"
    short = _cli(["bench", "merge", files[0], files[1], "--out", str(partial)], tmp_path)
    assert short.returncode == 1
    data = json.loads(partial.read_text())
    assert data["partial"] and data["missing_shards"] == [2] and data["merged_shards"] == [1, 3]
    assert data["grid"] == {
        "order": ["task", "seed", "arm"],
        "tasks": data["tasks"],
        "seeds": 2,
        "arms": ["last", "accumulate"],
        "cells": 8,
    }
    for _round in range(2):
        again = _cli(["bench", "merge", str(partial), "--out", str(partial)], tmp_path)
        assert again.returncode == 1 and "slices 2 were not merged" in again.stdout
        data = json.loads(partial.read_text())
        assert data["partial"] and not data["valid"] and data["missing_shards"] == [2]
        assert data["runs_planned"] == 8 and data["runs_finished"] == len(data["runs"]) < 8
    done = _cli(["bench", "merge", str(partial), files[2]], tmp_path)
    assert done.returncode == 0, done.stderr
    assert _table(done.stdout) == _table(whole_table)
    twice = _cli(["bench", "merge", str(partial), files[1]], tmp_path)
    assert twice.returncode == 2 and "appears twice" in twice.stderr


def _runs_outside_their_slice_or_the_grid_are_refused(tmp_path: Path, files: list[str]) -> None:
    """Each run must be a cell of the grid, of a slice its file holds, and a file must hold
    every run of its slices."""
    one, two = (json.loads(Path(f).read_text()) for f in (files[1], files[2]))
    cases = {
        "moved": {**one, "runs": [*one["runs"], two["runs"][0]]},
        "outside": {**one, "runs": [*one["runs"][1:], {**one["runs"][0], "seed": 7}]},
        "dropped": {**one, "runs": one["runs"][1:]},
    }
    expected = {
        "moved": "belongs to slice 2/3",
        "outside": "is not a cell of the bench's grid",
        "dropped": f"holds {len(one['runs']) - 1} of the {len(one['runs'])} runs",
    }
    for case, data in cases.items():
        path = tmp_path / f"{case}.json"
        path.write_text(json.dumps(data))
        refused = _cli(["bench", "merge", str(path)], tmp_path)
        assert refused.returncode == 2 and expected[case] in refused.stderr, (case, refused.stderr)


@pytest.mark.slow
def test_merge_of_a_file_that_is_not_a_result_is_one_error_line(tmp_path: Path) -> None:
    (tmp_path / "x.json").write_text("[1, 2]")
    proc = _cli(["bench", "merge", str(tmp_path / "x.json")], tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip().startswith("error:") and len(proc.stderr.strip().splitlines()) == 1


def test_a_solved_count_with_an_integrity_violation_cannot_be_built() -> None:
    fields = dict(
        arm="accumulate",
        task="t",
        seed=0,
        attempts=1,
        verdicts=["pass"],
        fingerprints=["f"],
        repeats=[False],
        injections=0,
        last_prompt_chars=1,
        replans=0,
        escalations=0,
        wall=0.1,
    )
    with pytest.raises(LoopError, match="integrity violations"):
        RunOutcome(solved=True, solved_at=1, integrity=[["runner-config"]], **fields)
    # The same run, not solved, is counted as a violation of its arm.
    run = RunOutcome(solved=False, solved_at=None, integrity=[["runner-config"]], **fields)
    assert run.integrity_count == 1
