"""The A/B bench: real loop runs on a tiny task, arms compared on the same task x seed pairs."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import TESTS_DIR, wait_none_in

from reference_loop._bench.runner import (
    ARMS,
    AttempterSettings,
    RunOutcome,
    load_tasks,
    parse_arms,
    repeat_flags,
    run_bench,
    summarise_arm,
)
from reference_loop._cli.bench import bench_cmd
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
    for cname, candidate_value, weight in CANDIDATES:
        value = 4 if first_is_fix else candidate_value
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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


@pytest.mark.slow
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
    from reference_loop._cli.app import main

    res = CliRunner().invoke(main, ["bench", "--help"])
    assert res.exit_code == 0 and "--escalate-to" in res.stdout and "--seeds" in res.stdout


# ------------------------------------------------------------------ model attempters, stopping

FIX_REPLY = "value.py\n<<<<<<< SEARCH\nVALUE = 0\n=======\nVALUE = 4\n>>>>>>> REPLACE\n"
WRONG_REPLY = "value.py\n<<<<<<< SEARCH\nVALUE = 0\n=======\nVALUE = 2\n>>>>>>> REPLACE\n"


def _plain_task(root: Path) -> Path:
    task = root / "value-plain"
    (task / "project").mkdir(parents=True)
    (task / "project" / "value.py").write_text("VALUE = 0\n")
    (task / "task.toml").write_text(
        'name = "value-plain"\ntask = "Set VALUE in value.py so the check passes."\n'
        f"verify = {json.dumps(VERIFY)}\ntimeout = 20\n"
    )
    return task


def _cli(args: list[str], env_extra: dict[str, str], **kw) -> subprocess.Popen:
    env = {**os.environ, **env_extra, "PYTHONPATH": str(TESTS_DIR)}
    return subprocess.Popen(
        [sys.executable, "-c", "from reference_loop._cli.app import main; main()", "bench", *args],
        env=env,
        **kw,
    )


@pytest.mark.slow
def test_table_survives_a_model_that_swaps_stdout_from_two_threads(
    fixed_model, tmp_path: Path
) -> None:
    # The reported failure: `bench ... > table.txt` with --jobs 2 left table.txt empty.
    fixed_model.reply = WRONG_REPLY
    fixed_model.set("mode", "swap-stdout")
    task = _plain_task(tmp_path / "tasks")
    table = tmp_path / "table.txt"
    with open(table, "w") as fh:
        proc = _cli(
            [
                "--attempter",
                "llm:reference-loop-fixture",
                "--task",
                str(task),
                "--seeds",
                "1",
                "--jobs",
                "2",
                "--max-attempts",
                "2",
                "--arms",
                "none,last",
                "--out",
                str(tmp_path / "r.json"),
            ],
            {},
            stdout=fh,
            stderr=subprocess.PIPE,
        )
        _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()
    text = table.read_text()
    assert "Validity gates:" in text and "Paired vs last" in text
    assert len(fixed_model.calls()) == 4  # the model really ran, and really swapped its stdout


@pytest.mark.slow
def test_saved_descriptor_keeps_output_when_fd1_is_redirected(tmp_path: Path) -> None:
    code = (
        "import os, sys\n"
        "from reference_loop._cli.bench import owned_stream\n"
        "out = owned_stream(sys.stdout)\n"
        "os.dup2(os.open(os.devnull, os.O_WRONLY), 1)\n"
        "print('lost')\n"
        "out.write('kept\\n'); out.flush()\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code], check=False, capture_output=True, text=True, timeout=60
    )
    assert res.stdout == "kept\n", res.stderr


@pytest.mark.slow
def test_an_arm_whose_model_never_edited_is_void_and_the_table_says_nothing_applied(
    fixed_model, tmp_path: Path
) -> None:
    from reference_loop._bench.report import format_table

    fixed_model.reply = "I would change VALUE to 4."
    result = run_bench(
        load_tasks(_plain_task(tmp_path / "tasks")),
        attempter="llm:reference-loop-fixture",
        arms=parse_arms("none,last"),
        seeds=1,
        max_attempts=2,
    )
    for arm in result.arms:
        assert not arm.valid and arm.applied_edits == 0 and arm.edit_rate == 0.0
        assert arm.gate.startswith("VOID: no attempt produced an applicable edit (0 of 2;")
        assert "parse-edit 2" in arm.gate
    table = format_table(result)
    assert result.nothing_applied
    assert table.index("Nothing applied") < table.index("Paired vs last")


def test_model_errors_that_dominate_void_the_arm() -> None:
    def run(steps: list[str], fps: list[str]) -> RunOutcome:
        return RunOutcome(
            arm="last",
            task="t",
            seed=0,
            solved=False,
            solved_at=None,
            attempts=len(steps),
            verdicts=["fail"] * len(steps),
            fingerprints=fps,
            repeats=[False] * len(steps),
            injections=len(steps) - 1,
            last_prompt_chars=1,
            replans=0,
            escalations=0,
            wall=0.1,
            failing_steps=steps,
            edits=[bool(f) for f in fps],
            violations=[False] * len(steps),
        )

    summary = summarise_arm(ARMS["last"], [run(["", "model", "model"], ["a", "", ""])], 3)
    assert not summary.valid and summary.model_errors == 2
    assert summary.gate.startswith("VOID: model errors dominate (2 of 3 attempts")
    ok = summarise_arm(ARMS["last"], [run(["", "model", ""], ["a", "", "b"])], 3)
    assert ok.valid and ok.edit_rate == pytest.approx(2 / 3)


@pytest.mark.slow
def test_the_bench_explains_a_null_per_arm(fixed_model, tmp_path: Path) -> None:
    fixed_model.reply = "word " * 40  # cut at max tokens, no edit
    fixed_model.set("reply-2.txt", WRONG_REPLY)
    fixed_model.set("reply-3.txt", WRONG_REPLY)
    prompts = tmp_path / "prompts"
    result = run_bench(
        load_tasks(_plain_task(tmp_path / "tasks")),
        arms=parse_arms("accumulate"),
        seeds=1,
        max_attempts=3,
        attempter="llm:reference-loop-fixture",
        settings=AttempterSettings(options={"max_tokens": "10"}, prompts_dir=prompts),
    )
    acc = result.arm("accumulate")
    assert result.runs[0].history_cut_chars == 0  # no context given: the default budget held
    assert (acc.applied_edits, acc.attempts, acc.cut_replies) == (2, 3, 1)
    assert acc.violations == 0 and acc.seconds_per_call is not None
    run = result.runs[0]
    # The last attempt's prompt as the model counted it (its usage) is what the table shows.
    assert acc.mean_last_prompt_tokens == run.calls[-1]["prompt_tokens"] > 0
    where = prompts / "accumulate" / "value-plain" / "seed-0"
    assert (where / "attempt-3.prompt.txt").read_text() == fixed_model.prompts[2]
    assert (where / "attempt-1.reply.txt").read_text() == " ".join(["word"] * 10)  # as cut


@pytest.mark.slow
def test_attempt_timeout_applies_to_model_calls(fixed_model, tmp_path: Path) -> None:
    # Each call hangs for `hang` seconds, then would fix the task. The wall bound is the hang
    # itself: a run that waited for even one call cannot return before it; one that abandoned
    # both after 2 s returns long before it even on a loaded machine (38-67 s wall at load 12-15
    # for 11 s CPU, most of it the three model workers it starts, ~2 s CPU each).
    hang = 300
    fixed_model.reply = FIX_REPLY
    fixed_model.set("mode", f"sleep {hang}")
    started = time.monotonic()
    result = run_bench(
        load_tasks(_plain_task(tmp_path / "tasks")),
        arms=parse_arms("none"),
        seeds=1,
        max_attempts=2,
        attempter="llm:reference-loop-fixture",
        attempt_timeout=2,
    )
    assert time.monotonic() - started < hang
    run = result.runs[0]
    assert run.failing_steps == ["model", "model"]
    assert all("timed out after 2s" in c["error"] for c in run.calls)
    assert not result.arm("none").valid  # the model never answered


@pytest.mark.slow
def test_a_context_too_small_for_attempt_one_is_refused_before_any_run(
    fixed_model, tmp_path: Path
) -> None:
    fixed_model.set("context", "200")
    proc = _cli(
        [
            "--attempter",
            "llm:reference-loop-fixture",
            "--task",
            str(_plain_task(tmp_path / "t")),
            "--seeds",
            "1",
            "--out",
            str(tmp_path / "r.json"),
        ],
        {},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert err.startswith("error: llm:reference-loop-fixture: attempt 1's prompt for task")
    assert "context window is 200 tokens" in err and len(err.strip().splitlines()) == 1
    assert out == "" and not (tmp_path / "r.json").exists() and fixed_model.calls() == []


def test_llm_runs_one_at_a_time_by_default() -> None:
    from reference_loop._cli.bench import default_jobs

    assert default_jobs("llm:SmolLM2") == 1
    assert default_jobs("scripted:rederive") == min(2, os.cpu_count() or 1)


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_the_bench_at_once_keeps_what_finished_and_leaves_no_workspace(
    tmp_path: Path, tasks_dir: Path, sig: int, code: int
) -> None:
    # An agent that solves the first run at once and then hangs in every later one.
    agent = tmp_path / "agent.py"
    pids = tmp_path / "pids"
    agent.write_text(
        "import os, time, pathlib\n"
        f"pids = pathlib.Path({str(pids)!r})\n"
        "with open(pids, 'a') as fh: fh.write(f'{os.getpid()}\\n')\n"
        # Exactly one agent may solve: two agents appending at once must not both see "later".
        "try: os.close(os.open(str(pids) + '.first', os.O_CREAT | os.O_EXCL))\n"
        "except FileExistsError: time.sleep(300)\n"
        "open('value.py', 'w').write('VALUE = 4\\n')\n"
    )
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    out = tmp_path / "r.json"
    proc = _cli(
        [
            "--attempter",
            f"cmd:{sys.executable} {agent}",
            "--tasks",
            str(tasks_dir),
            "--seeds",
            "3",
            "--arms",
            "accumulate",
            "--jobs",
            "2",
            "--out",
            str(out),
        ],
        {"TMPDIR": str(private_tmp)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while (not pids.exists() or len(pids.read_text().split()) < 3) and time.monotonic() < deadline:
        time.sleep(0.1)  # the first run has finished and two agents hang
    assert pids.exists() and len(pids.read_text().split()) >= 3
    proc.send_signal(sig)
    sent = time.monotonic()
    stdout, stderr = proc.communicate(timeout=30)
    took = time.monotonic() - sent
    assert took < 3.0, took
    assert proc.returncode == code, stderr
    data = json.loads(out.read_text())
    assert data["partial"] is True and data["stopped_by"] == signal.Signals(sig).name
    assert data["runs_finished"] == 1 and data["runs_planned"] == 3
    assert data["runs"][0]["solved"] is True
    assert "PARTIAL: stopped by" in stdout and "Traceback" not in stderr
    # Every agent is dead (each ran in its own PID namespace, so the pids it wrote are that
    # namespace's: no process may still work under the bench's folder) and no temporary
    # workspace is left.
    assert wait_none_in(private_tmp)
    assert list(private_tmp.iterdir()) == []


@pytest.mark.slow
def test_a_small_context_shrinks_the_history_and_the_run_says_how_much(
    fixed_model, tmp_path: Path
) -> None:
    fixed_model.reply = WRONG_REPLY
    for n, value in ((2, 1), (3, 3), (4, 5)):  # a different wrong patch every attempt
        fixed_model.set(f"reply-{n}.txt", WRONG_REPLY.replace("VALUE = 2", f"VALUE = {value}"))
    fixed_model.set("tokenizer")  # one token per word
    task = _plain_task(tmp_path / "tasks")
    settings = AttempterSettings(options={"max_tokens": "50"}, context_tokens=400)
    result = run_bench(
        load_tasks(task),
        arms=parse_arms("accumulate"),
        seeds=1,
        max_attempts=4,
        attempter="llm:reference-loop-fixture",
        settings=settings,
    )
    run = result.runs[0]
    assert run.history_budget < 12_000 and run.history_cut_chars > 0
    # Every prompt fitted: no attempt failed at the context step, the model answered each one.
    assert run.failing_steps.count("context") == 0 and len(fixed_model.calls()) == 4
    assert all(c["prompt_tokens"] + 50 <= 400 for c in run.calls)


@pytest.mark.slow
def test_an_edit_to_a_protected_test_is_a_violation_not_an_edit(
    fixed_model, tmp_path: Path
) -> None:
    task = _plain_task(tmp_path / "tasks")
    (task / "project" / "test_value.py").write_text("def test_value():\n    assert False\n")
    fixed_model.reply = (
        "test_value.py\n<<<<<<< SEARCH\n    assert False\n=======\n    assert True\n"
        ">>>>>>> REPLACE\n"
    )
    result = run_bench(
        load_tasks(task),
        attempter="llm:reference-loop-fixture",
        arms=parse_arms("none"),
        seeds=1,
        max_attempts=2,
    )
    none = result.arm("none")
    assert none.violations == 2 and none.applied_edits == 0 and none.solved == 0
    assert none.gate.startswith("VOID: no attempt produced an applicable edit")
