"""Resuming a bench: every finished cell is journaled at once; the same command resumes it.

Real processes: the bench runs as a user runs it, is stopped by a real SIGINT or SIGTERM in the
middle of its runs, and the same command then finishes it; the result must be the one an
uninterrupted run gives.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import TESTS_DIR
from test_bench import make_task

from reference_loop._bench.journal import Journal, JournalRefused, journal_path
from reference_loop._bench.runner import load_tasks, parse_arms, run_bench
from reference_loop._bench.shard import Shard

ROOT = TESTS_DIR.parent
SETTINGS = {"attempter": "scripted:rederive", "seeds": 2}


def _bench(args: list[str], **kw: Any) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{TESTS_DIR}"}
    return subprocess.Popen(
        [sys.executable, "-c", "from reference_loop._cli.app import main; main()", "bench", *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def _run(args: list[str]) -> tuple[int, str, str]:
    proc = _bench(args)
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out, err


def _comparable(data: dict[str, Any]) -> dict[str, Any]:
    """A result without what differs between any two runs: wall times and the machine."""
    runs = [{k: v for k, v in r.items() if k != "wall"} for r in data["runs"]]
    arms = [{k: v for k, v in a.items() if k != "wall_time"} for a in data["arms"]]
    return {"runs": runs, "arms": arms, "paired": data["paired_vs_last"], "valid": data["valid"]}


def _table(text: str) -> list[str]:
    """The printed table without its wall-time figures."""
    lines = [re.sub(r"; [0-9.]+s$", "", line) for line in text.splitlines()]
    return [re.sub(r"\s+[0-9.]+(\s+(ok|VOID))$", r"\1", line) for line in lines]


def _journal_lines(path: Path) -> int:
    try:
        return path.read_text().count("\n")
    except FileNotFoundError:
        return 0


@pytest.fixture(scope="module")
def tasks_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("resume") / "tasks"
    make_task(root, "value-four")
    make_task(root, "value-four-b")
    return root


def _args(tasks_root: Path, out: Path) -> list[str]:
    return [
        "--tasks",
        str(tasks_root),
        "--seeds",
        "2",
        "--arms",
        "none,last,accumulate",
        "--jobs",
        "2",
        "--out",
        str(out),
    ]


@pytest.fixture(scope="module")
def uninterrupted(
    tasks_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[dict, str, Path]:
    out = tmp_path_factory.mktemp("whole") / "whole.json"
    code, stdout, err = _run(_args(tasks_root, out))
    assert code == 0, err
    return json.loads(out.read_text()), stdout, out


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_bench_stopped_mid_run_and_resumed_gives_the_uninterrupted_table(
    tasks_root: Path, tmp_path: Path, uninterrupted: tuple[dict, str, Path], sig: int, code: int
) -> None:
    out = tmp_path / "r.json"
    journal = journal_path(out)
    proc = _bench(_args(tasks_root, out))
    deadline = time.monotonic() + 120
    while _journal_lines(journal) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    stopped = json.loads(out.read_text())
    assert stopped["partial"] is True
    kept = _journal_lines(journal)
    assert 3 <= kept < 12, "the stop came after the bench had finished"
    assert kept == stopped["runs_finished"]  # every finished run is in the journal, no other

    rc, stdout, err = _run(_args(tasks_root, out))
    assert rc == 0, err
    assert f"resumed: {kept} of 12 runs" in err
    assert f"bench {kept + 1}/12:" in err  # the count goes on from where it stopped
    resumed = json.loads(out.read_text())
    assert resumed["partial"] is False and resumed["runs_resumed"] == kept
    assert _journal_lines(journal) == 12  # each cell once: none ran twice
    whole, whole_table, _ = uninterrupted
    assert _comparable(resumed) == _comparable(whole)
    assert _table(stdout) == _table(whole_table)


@pytest.mark.slow
def test_a_stop_that_kills_a_runs_verifier_does_not_journal_the_run_as_failed(
    tmp_path: Path,
) -> None:
    # The agent fixes the task at once; the first verifier hangs (later ones pass at once). The
    # stop kills that verifier, so its "killed by signal" verdict is the stop's, not the task's:
    # journaled, the resumed bench would keep a failure an uninterrupted run never has.
    verifying = tmp_path / "verifying"
    task = tmp_path / "tasks" / "value-four"
    (task / "project").mkdir(parents=True)
    (task / "project" / "value.py").write_text("VALUE = 0\n")
    verify = (
        f"if [ ! -e {verifying} ]; then touch {verifying}; sleep 300; fi; "
        "grep -qx 'VALUE = 4' value.py"
    )
    (task / "task.toml").write_text(
        f'name = "value-four"\ntask = "Set VALUE to 4."\nverify = {json.dumps(verify)}\n'
        "timeout = 600\n"
    )
    agent = tmp_path / "agent.py"
    agent.write_text("open('value.py', 'w').write('VALUE = 4\\n')\n")
    out = tmp_path / "r.json"
    args = [
        *("--tasks", str(tmp_path / "tasks"), "--attempter", f"cmd:{sys.executable} {agent}"),
        *("--seeds", "1", "--arms", "none", "--max-attempts", "1", "--out", str(out)),
    ]
    proc = _bench(args)
    deadline = time.monotonic() + 120
    while not verifying.exists():
        assert time.monotonic() < deadline and proc.poll() is None, "the verifier never started"
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert "stopped by SIGTERM: 0 of 1 runs finished" in err
    stopped = json.loads(out.read_text())
    assert (stopped["partial"], stopped["runs_finished"], stopped["runs"]) == (True, 0, [])
    assert _journal_lines(journal_path(out)) == 0

    code, _, err = _run(args)
    assert code == 0, err
    resumed = json.loads(out.read_text())
    assert resumed["partial"] is False and resumed["runs_resumed"] == 0
    assert [(r["solved"], r["verdicts"]) for r in resumed["runs"]] == [(True, ["pass"])]
    assert _journal_lines(journal_path(out)) == 1


@pytest.mark.slow
def test_a_finished_bench_run_again_runs_nothing_and_prints_the_same_table(
    tasks_root: Path, tmp_path: Path, uninterrupted: tuple[dict, str, Path]
) -> None:
    whole, table, out = uninterrupted
    before = journal_path(out).read_bytes()
    code, stdout, err = _run(_args(tasks_root, out))
    assert code == 0, err
    assert "resumed: 12 of 12 runs" in err
    assert journal_path(out).read_bytes() == before
    assert _comparable(json.loads(out.read_text())) == _comparable(whole)
    assert _table(stdout) == _table(table)


@pytest.mark.slow
def test_a_journal_of_other_settings_is_refused_and_left_as_it_was(
    tasks_root: Path, tmp_path: Path
) -> None:
    out = tmp_path / "r.json"
    journal = journal_path(out)
    book = Journal.open(journal, {"other": True}, "c0de", None)
    book.append({"task": "value-four", "arm": "none", "seed": 0, "solved": False})
    book.close()
    before = journal.read_bytes()
    code, _, err = _run(_args(tasks_root, out))
    assert code == 2
    assert err.strip().splitlines() == [
        f"error: refusing to resume from {journal}: it was made with other settings "
        "(remove it or choose another --out)"
    ]
    assert journal.read_bytes() == before and not out.exists()


def test_a_journal_made_by_other_code_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    Journal.open(path, SETTINGS, "old", None).close()
    book = Journal.open(path, SETTINGS, "old", None)
    book.append({"task": "t", "arm": "none", "seed": 0})
    book.close()
    with pytest.raises(JournalRefused, match="made by other code"):
        Journal.open(path, SETTINGS, "new", None)


def test_a_journal_of_another_slice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    book = Journal.open(path, SETTINGS, "v", Shard(1, 2))
    book.append({"task": "t", "arm": "none", "seed": 0})
    book.close()
    with pytest.raises(JournalRefused, match="holds slice 1/2, this run is slice 2/2"):
        Journal.open(path, SETTINGS, "v", Shard(2, 2))


def test_a_torn_last_line_is_dropped_and_cut_before_appending(tmp_path: Path) -> None:
    # A process killed mid-write leaves half a line; the next cell must not be glued onto it.
    path = tmp_path / "j.jsonl"
    book = Journal.open(path, SETTINGS, "v", None)
    book.append({"task": "t", "arm": "none", "seed": 0})
    book.close()
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"settings": "abc", "run": {"ta')
    book = Journal.open(path, SETTINGS, "v", None)
    assert list(book.finished) == [("t", "none", 0)]
    assert path.read_bytes() == whole
    book.append({"task": "t", "arm": "last", "seed": 0})
    book.close()
    again = Journal.open(path, SETTINGS, "v", None)
    assert list(again.finished) == [("t", "none", 0), ("t", "last", 0)]
    again.close()


def test_a_corrupt_line_inside_the_journal_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text("not json\n")
    with pytest.raises(JournalRefused, match="line 1: not a cell"):
        Journal.open(path, SETTINGS, "v", None)
    assert path.read_text() == "not json\n"


def test_a_run_an_unfixable_error_stopped_is_not_journaled(tmp_path: Path) -> None:
    # No API key, say: fixing it and re-running must run that cell, not replay the error.
    path = tmp_path / "j.jsonl"
    book = Journal.open(path, SETTINGS, "v", None)
    book.append({"task": "t", "arm": "none", "seed": 0, "stopped_by": "no API key"})
    book.close()
    assert path.read_text() == ""


@pytest.mark.slow
def test_run_bench_resumes_from_its_journal_without_rerunning(tmp_path: Path) -> None:
    make_task(tmp_path / "tasks")
    tasks = load_tasks(tmp_path / "tasks")
    journal = tmp_path / "j.jsonl"
    kw: dict[str, Any] = {"seeds": 1, "arms": parse_arms("none,accumulate"), "max_attempts": 2}
    first = run_bench(tasks, journal=journal, **kw)
    seen: list[str] = []
    again = run_bench(tasks, journal=journal, progress=lambda o, _where: seen.append(o.arm), **kw)
    assert again.resumed == 2 and seen == ["none", "accumulate"]
    assert [r.to_dict() for r in again.runs] == [r.to_dict() for r in first.runs]
