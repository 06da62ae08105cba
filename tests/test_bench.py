"""The A/B bench: real loop runs on a tiny task, arms compared on the same task x seed pairs."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from reference_loop.bench import (
    ARMS,
    RunOutcome,
    load_tasks,
    parse_arms,
    repeat_flags,
    run_bench,
    summarise_arm,
)
from reference_loop.cli_bench import bench_cmd
from reference_loop.errors import LoopUsageError

# Three plausible wrong values before the right one; each candidate leaves its own identifier in
# the patch so the scripted "rederive" attempter can tell when its idea was shown to it.
CANDIDATES = [("alpha", 1, 3), ("bravo", 2, 2), ("charlie", 3, 1), ("final", 4, 0)]

VERIFY = "grep -qx 'VALUE = 4' value.py || { echo 'AssertionError: VALUE is not 4'; exit 1; }"


def make_task(root: Path, name: str = "value-four", *, first_is_fix: bool = False) -> Path:
    task = root / name
    (task / "project").mkdir(parents=True)
    (task / "project" / "value.py").write_text("VALUE = 0\n")
    lines = [
        f'name = "{name}"',
        'description = "VALUE must be 4"',
        f"verify = {json.dumps(VERIFY)}",
        "timeout = 20",
        'task = "Set VALUE in value.py so the check passes."',
    ]
    for cname, value, weight in CANDIDATES:
        if first_is_fix:
            value = 4
        cdir = task / "candidates" / cname
        cdir.mkdir(parents=True)
        (cdir / "value.py").write_text(f"VALUE = {value}\nguess_{cname} = True\n")
        lines += [
            "[[candidates]]",
            f'name = "{cname}"',
            f'dir = "candidates/{cname}"',
            f"weight = {weight}",
            f"fixes = {'true' if value == 4 else 'false'}",
        ]
    (task / "task.toml").write_text("\n".join(lines) + "\n")
    return task


@pytest.fixture()
def tasks_dir(tmp_path: Path) -> Path:
    root = tmp_path / "tasks"
    make_task(root)
    return root


def test_repeat_flags_count_only_nonempty_patches_seen_before() -> None:
    assert repeat_flags(["a", "b", "a", "", "", "b", "c"]) == [
        False,
        False,
        True,
        False,
        False,
        True,
        False,
    ]


def test_accumulate_repeats_fewer_patches_than_last_on_the_same_pairs(tasks_dir: Path) -> None:
    result = run_bench(load_tasks(tasks_dir), seeds=2, max_attempts=4, jobs=2)
    acc, last, none = result.arm("accumulate"), result.arm("last"), result.arm("none")
    # The card's claim, measured: the overwrite bug re-derives attempt 1's patch at attempt 3.
    assert acc.repeat_patch_rate < last.repeat_patch_rate
    assert acc.repeated_attempts == 0 and last.repeated_attempts > 0
    assert acc.solved == acc.runs == 2 and acc.mean_attempts_to_solve == 4.0
    assert last.solved == 0 and none.solved == 0
    # Injections come from the loop's events: none for `none`, one per retry for the others.
    assert none.injections == 0 and none.valid
    assert acc.injections == 2 * 3 and acc.valid
    assert result.valid
    # Paired over the same 2 pairs: accumulate solved both, last neither -> b=2, c=0.
    cmp_acc = next(c for c in result.solved_vs_baseline if c.arm == "accumulate")
    assert (cmp_acc.n, cmp_acc.b, cmp_acc.c) == (2, 2, 0)
    assert cmp_acc.p_value == 0.5 and not cmp_acc.significant  # two pairs cannot show much
    assert {r.arm for r in result.runs} == set(a.arm for a in result.arms)
    # Per-attempt series for the plot: `last` repeats at attempt 3, accumulate never.
    assert last.per_attempt[2].repeat_rate == 1.0
    assert all(p.repeat_rate in (0.0, None) for p in acc.per_attempt)
    assert acc.per_attempt[3].solved_rate == 1.0 and acc.per_attempt[2].solved_rate == 0.0


def test_arm_with_no_retries_is_void_because_nothing_could_be_injected(tmp_path: Path) -> None:
    make_task(tmp_path / "t", first_is_fix=True)
    result = run_bench(
        load_tasks(tmp_path / "t"), seeds=1, arms=parse_arms("none,accumulate"), max_attempts=3
    )
    acc = result.arm("accumulate")
    assert acc.solved == 1 and acc.injections == 0
    assert not acc.valid and acc.gate.startswith("VOID: no run reached a second attempt")
    assert not result.valid
    assert result.arm("none").valid


def test_arm_that_retried_without_injecting_is_void() -> None:
    # The gate itself, on outcomes as a broken loop would report them.
    run = RunOutcome(
        arm="accumulate",
        task="t",
        seed=0,
        solved=False,
        solved_at=None,
        attempts=3,
        verdicts=["fail"] * 3,
        fingerprints=["a", "b", "a"],
        repeats=[False, False, True],
        injections=0,
        last_prompt_chars=100,
        replans=0,
        escalations=0,
        wall=0.1,
    )
    summary = summarise_arm(ARMS["accumulate"], [run], 3)
    assert not summary.valid
    assert "1 runs retried but 0 history injections" in summary.gate
    assert summary.repeat_patch_rate == pytest.approx(1 / 3)


def test_none_arm_that_injected_is_void() -> None:
    run = RunOutcome(
        arm="none",
        task="t",
        seed=0,
        solved=False,
        solved_at=None,
        attempts=2,
        verdicts=["fail"] * 2,
        fingerprints=["a", "b"],
        repeats=[False, False],
        injections=1,
        last_prompt_chars=100,
        replans=0,
        escalations=0,
        wall=0.1,
    )
    assert not summarise_arm(ARMS["none"], [run], 2).valid


def test_escalate_arm_switches_to_the_second_attempter(tasks_dir: Path) -> None:
    result = run_bench(
        load_tasks(tasks_dir),
        seeds=1,
        max_attempts=4,
        arms=parse_arms("last,accumulate+escalate", escalate_to="scripted:strong"),
        escalate_to="scripted:strong",
    )
    esc = result.arm("accumulate+escalate")
    # Attempts 1 and 2 fail the same way -> one escalation -> the strong attempter solves attempt 3.
    assert esc.escalations == 1 and esc.valid
    assert esc.solved == 1 and esc.mean_attempts_to_solve == 3
    assert result.arm("last").escalations == 0


def test_cmd_agent_can_be_benched(tmp_path: Path, tasks_dir: Path) -> None:
    # Any command-line agent: this one writes the right value when the prompt shows attempt 1.
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import sys\nprompt = open(sys.argv[1]).read()\n"
        "v = 4 if 'Attempt 1' in prompt else 1\n"
        "open('value.py', 'w').write(f'VALUE = {v}\\n')\n"
    )
    spec = f"cmd:{shlex.quote(sys.executable)} {agent} {{prompt_file}}"
    result = run_bench(
        load_tasks(tasks_dir),
        attempter=spec,
        seeds=1,
        max_attempts=3,
        arms=parse_arms("none,last,accumulate"),
    )
    assert (
        result.arm("accumulate").solved == 1
        and result.arm("accumulate").mean_attempts_to_solve == 2
    )
    assert result.arm("none").solved == 0
    assert result.arm("none").repeat_patch_rate == pytest.approx(2 / 3)


def test_agent_history_files_hide_repeats_unless_ignored(tmp_path: Path, tasks_dir: Path) -> None:
    # An agent that makes the same wrong edit every time but logs to a file in the workspace.
    agent = tmp_path / "stubborn.py"
    agent.write_text(
        "import os\nopen('value.py', 'w').write('VALUE = 1\\n')\n"
        "open('.agent-history', 'a').write(os.environ['REFERENCE_LOOP_ATTEMPT'])\n"
    )
    spec = f"cmd:{shlex.quote(sys.executable)} {agent}"
    arms = parse_arms("none")
    noisy = run_bench(load_tasks(tasks_dir), attempter=spec, seeds=1, max_attempts=3, arms=arms)
    assert noisy.arm("none").repeat_patch_rate == 0.0
    clean = run_bench(
        load_tasks(tasks_dir),
        attempter=spec,
        seeds=1,
        max_attempts=3,
        arms=arms,
        ignore=[".agent-history"],
    )
    assert clean.arm("none").repeat_patch_rate == pytest.approx(2 / 3)


def test_usage_errors_are_clear() -> None:
    with pytest.raises(LoopUsageError, match="unknown arm 'accumulte'"):
        parse_arms("none,accumulte")
    with pytest.raises(LoopUsageError, match="needs a second attempter"):
        parse_arms("accumulate+escalate")
    assert [a.name for a in parse_arms(None, escalate_to="scripted:strong")][
        -1
    ] == "accumulate+escalate"


def test_cli_prints_table_gates_and_comparison_and_writes_json(
    tasks_dir: Path, tmp_path: Path
) -> None:
    out = tmp_path / "results.json"
    res = CliRunner().invoke(
        bench_cmd,
        [
            "--tasks",
            str(tasks_dir),
            "--seeds",
            "1",
            "--max-attempts",
            "4",
            "--arms",
            "none,last,accumulate",
            "--out",
            str(out),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "accumulate" in res.stdout and "repeat-patch" in res.stdout
    assert "Validity gates:" in res.stdout and "Paired vs last" in res.stdout
    assert "bench" in res.stderr  # the progress bar goes to stderr
    data = json.loads(out.read_text())
    assert data["valid"] is True and data["tasks"] == ["value-four"] and len(data["runs"]) == 3
    assert {a["arm"]: a["status"] for a in data["arms"]} == {
        "none": "ok",
        "last": "ok",
        "accumulate": "ok",
    }
    assert data["paired_vs_last"]["solved"][0]["arm"] == "none"


def test_cli_exits_1_when_an_arm_is_void(tmp_path: Path) -> None:
    make_task(tmp_path / "t", first_is_fix=True)
    res = CliRunner().invoke(
        bench_cmd,
        ["--tasks", str(tmp_path / "t"), "--seeds", "1", "--arms", "last,accumulate", "--json"],
    )
    assert res.exit_code == 1
    data = json.loads(res.stdout)
    assert [a["status"] for a in data["arms"]] == ["VOID", "VOID"]


def test_cli_usage_errors_are_one_line_exit_2(tmp_path: Path) -> None:
    res = CliRunner().invoke(bench_cmd, ["--arms", "bogus"])
    assert res.exit_code == 2 and res.stderr.startswith("error: unknown arm 'bogus'")
    res = CliRunner().invoke(bench_cmd, ["--tasks", str(tmp_path / "missing")])
    assert res.exit_code == 2 and "tasks folder not found" in res.stderr
    res = CliRunner().invoke(bench_cmd, ["--attempter", "nope:x", "--task", "stats-median"])
    assert res.exit_code == 2 and "Traceback" not in res.output
    res = CliRunner().invoke(bench_cmd, ["--seeds", "0"])
    assert res.exit_code == 2 and "--seeds" in res.stderr
    # An unwritable --out is refused before the run, not after it.
    res = CliRunner().invoke(
        bench_cmd, ["--task", "stats-median", "--out", str(tmp_path / "no" / "such" / "r.json")]
    )
    assert (
        res.exit_code == 2
        and res.stderr.startswith("error: cannot write")
        and "no such directory" in res.stderr
    )


def test_plot_is_written_when_matplotlib_is_installed(tasks_dir: Path, tmp_path: Path) -> None:
    pytest.importorskip(
        "matplotlib", reason="the plot extra is not installed (pip install '.[plot]')"
    )
    png = tmp_path / "bench.png"
    res = CliRunner().invoke(
        bench_cmd,
        [
            "--tasks",
            str(tasks_dir),
            "--seeds",
            "1",
            "--max-attempts",
            "4",
            "--arms",
            "last,accumulate",
            "--plot",
            str(png),
        ],
    )
    assert res.exit_code == 0, res.output
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_without_matplotlib_the_plot_is_skipped_with_a_note(
    tasks_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the extra were not installed
    png = tmp_path / "bench.png"
    res = CliRunner().invoke(
        bench_cmd,
        [
            "--tasks",
            str(tasks_dir),
            "--seeds",
            "1",
            "--max-attempts",
            "4",
            "--arms",
            "last,accumulate",
            "--plot",
            str(png),
        ],
    )
    assert res.exit_code == 0, res.output
    assert "plot skipped: the plot needs matplotlib" in res.stderr
    assert not png.exists()


def test_bench_is_a_reference_loop_command() -> None:
    from reference_loop.cli import main

    res = CliRunner().invoke(main, ["bench", "--help"])
    assert res.exit_code == 0 and "--escalate-to" in res.stdout and "--seeds" in res.stdout
