"""The reference-loop CLI: run, tasks and check, as a user types them (CliRunner)."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner
from conftest import make_task_dir  # the tiny fast task the loop tests use

from reference_loop._cli.app import main
from reference_loop._tasks.task import three_failure_task


def _run(*args):
    return CliRunner().invoke(main, list(args))


@pytest.mark.slow
def test_run_three_failure_task_then_grep_attempt_one_string_in_attempt_three(tmp_path):
    """The loop's promise: attempt 3's prompt file holds an attempt-1-only string."""
    prompts = tmp_path / "p"
    name = three_failure_task().name
    res = _run("run", "--task", name, "--prompts-dir", str(prompts), "--json")
    assert res.exit_code == 0, res.output
    run = json.loads(res.stdout)
    assert run["solved_at"] == 4 and run["injections"] == 3
    first, second = run["attempts"][0], run["attempts"][1]
    only_first = [f for f in first["files"] if f not in second["files"]]
    assert only_first, "attempt 1 should touch a file attempt 2 does not"
    assert all(f not in (prompts / "attempt-1.txt").read_text() for f in only_first)
    assert any(f in (prompts / "attempt-3.txt").read_text() for f in only_first)
    for attempt in run["attempts"]:
        assert {"number", "verdict", "patch", "first_failing_step", "signature"} <= set(attempt)
    assert "attempt 1/5: fail" in res.stderr and "injected" in res.stderr


@pytest.mark.slow
def test_run_with_last_history_hides_attempt_one_from_attempt_three(tmp_path):
    task_dir = make_task_dir(tmp_path / "task")
    prompts = tmp_path / "p"
    res = _run(
        "run", "--task", str(task_dir), "--history", "last", "--prompts-dir", str(prompts), "--json"
    )
    assert res.exit_code == 1
    run = json.loads(res.stdout)
    assert run["attempts"][0]["patch"] == run["attempts"][2]["patch"]  # re-derived
    files_one = set(run["attempts"][0]["files"]) - set(run["attempts"][1]["files"])
    marker = "helper_alpha_only" if "alpha" in run["attempts"][0]["patch"] else None
    text = (prompts / "attempt-3.txt").read_text()
    assert "Attempt 1 —" not in text
    assert all(f not in text for f in files_one)
    if marker:
        assert marker not in text


def test_run_text_summary_and_events_file(tmp_path):
    events = tmp_path / "e.jsonl"
    res = _run("run", "--task", str(make_task_dir(tmp_path / "task")), "--events", str(events))
    assert res.exit_code == 0
    assert "solved at attempt 4 of 5" in res.stdout
    assert "history injections: 3" in res.stdout and "distinct failure signatures: 3" in res.stdout
    kinds = [json.loads(line)["kind"] for line in events.read_text().splitlines()]
    assert kinds.count("history_injected") == 3 and kinds[-1] == "run_finished"


def test_run_in_place_on_a_users_workspace(tmp_path):
    task_dir = make_task_dir(tmp_path / "task")
    ws = task_dir / "project"
    res = _run(
        "run",
        "--workspace",
        str(ws),
        "--verify",
        "{python} -B check.py",
        "--task-text",
        "Set MODE to fixed",
        "--candidates",
        str(task_dir / "candidates"),
        "--attempter",
        "scripted:walk",
        "--max-attempts",
        "6",
        "--json",
    )
    assert res.exit_code == 0, res.output
    assert (ws / "m.py").read_text() == 'MODE = "fixed"\n'  # the passing change stays


def test_unsolved_in_place_run_leaves_the_workspace_as_it_was(tmp_path):
    task_dir = make_task_dir(tmp_path / "task")
    ws = task_dir / "project"
    shutil.rmtree(task_dir / "candidates" / "fix")  # only wrong ideas left: it cannot solve
    before = {p.name: p.read_bytes() for p in ws.iterdir()}
    res = _run(
        "run",
        "--workspace",
        str(ws),
        "--verify",
        "{python} -B check.py",
        "--task-text",
        "Set MODE",
        "--candidates",
        str(task_dir / "candidates"),
        "--attempter",
        "scripted:rederive",
        "--history",
        "none",
        "--max-attempts",
        "2",
    )
    assert res.exit_code == 1
    assert {p.name: p.read_bytes() for p in ws.iterdir()} == before


@pytest.mark.slow
def test_run_on_repeat_replan_reports_the_replan(tmp_path):
    res = _run(
        "run",
        "--task",
        str(make_task_dir(tmp_path / "task")),
        "--history",
        "last",
        "--on-repeat",
        "replan",
        "--json",
    )
    run = json.loads(res.stdout)
    assert run["replans"] >= 1 and "re-planned with scripted:planner" in res.stderr


def test_usage_errors_exit_2_with_one_line():
    for args in (
        ["run"],
        ["run", "--task", "no-such-task"],
        ["run", "--task", "stats-median", "--workspace", "."],
        ["run", "--workspace", ".", "--verify", "true"],
        ["run", "--task", "stats-median", "--attempter", "bogus"],
        ["run", "--task", "stats-median", "--on-repeat", "escalate"],
        ["run", "--task", "stats-median", "--protect", "../outside"],
        ["run", "--task", "stats-median", "--edit-format", "diff"],  # scripted edits itself
    ):
        res = _run(*args)
        assert res.exit_code == 2, (args, res.output)
        assert res.stderr.startswith("error: ") and len(res.stderr.strip().splitlines()) == 1
        assert "Traceback" not in res.output


def test_tasks_lists_samples_with_the_three_failure_flag():
    res = _run("tasks", "--json")
    assert res.exit_code == 0
    tasks = json.loads(res.stdout)
    assert [t["known_three_failures"] for t in tasks].count(True) == 1
    assert all(t["name"] and t["description"] for t in tasks)
    text = _run("tasks").stdout
    assert "[fails three times]" in text and three_failure_task().name in text


@pytest.mark.slow
def test_check_cli_passes_and_fails_with_one_line(tmp_path):
    task_dir = str(make_task_dir(tmp_path / "task"))
    good = _run("check", "--task", task_dir)
    assert good.exit_code == 0 and good.stdout.startswith("PASS")
    assert len(good.stdout.strip().splitlines()) == 1
    bad = _run("check", "--task", task_dir, "--history", "last")
    assert bad.exit_code == 1 and bad.stdout.startswith("FAIL")
    void = _run("check", "--task", task_dir, "--history", "none", "--json")
    assert void.exit_code == 1 and json.loads(void.stdout)["void"] is True


def test_missing_workspace_is_named_in_the_error(tmp_path):
    res = _run("run", "--workspace", str(tmp_path / "gone"), "--verify", "true", "--task-text", "x")
    assert res.exit_code == 2 and "workspace is not a directory" in res.stderr


def test_escape_sequences_from_the_verifier_never_reach_the_terminal_or_the_prompt(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "check.py").write_text(
        "import sys\n"
        "print('\\x1b]0;terminal title set by a test\\x07\\x1b[2J')\n"
        "print('\\x1b[31mAssertionError: \\x1b]52;c;cGF5bG9hZA==\\x07red\\x1b[0m')\n"
        "sys.exit(1)\n"
    )
    prompts = tmp_path / "p"
    res = _run(
        *("run", "--workspace", str(ws), "--verify", "{python} -B check.py"),
        *("--task-text", "x", "--max-attempts", "2", "--prompts-dir", str(prompts)),
        *("--attempter", "cmd:true"),
    )
    assert res.exit_code == 1
    assert "\x1b" not in res.output and "\x07" not in res.output
    assert "AssertionError: red" in res.output
    second = (prompts / "attempt-2.txt").read_text()
    assert "AssertionError: red" in second
    assert "\x1b" not in second and "\x07" not in second


def test_progress_line_of_a_three_thousand_file_attempt_is_short():
    from reference_loop._cli.app import progress_line
    from reference_loop._core.events import Event

    files = [f"generated/{i:05d}.txt" for i in range(200)]
    event = Event(
        1,
        "attempt_finished",
        0.0,
        {"attempt": 1, "verdict": "fail", "files": files, "files_total": 3000},
    )
    line = progress_line(event, 5)
    assert line is not None and len(line) < 300
    assert "and 2,995 more files" in line


@pytest.mark.slow
def test_protect_glob_makes_an_in_place_change_fail_and_leaves_the_workspace(tmp_path):
    task_dir = make_task_dir(tmp_path / "task")
    ws = task_dir / "project"
    before = {p.name: p.read_bytes() for p in ws.iterdir()}
    res_args = [
        "run",
        "--workspace",
        str(ws),
        "--verify",
        "{python} -B check.py",
        "--task-text",
        "Set MODE to fixed",
        "--candidates",
        str(task_dir / "candidates"),
        "--attempter",
        "scripted:strong",
        "--max-attempts",
        "2",
        "--protect",
        "m.py",
        "--json",
    ]
    res = _run(*res_args)
    assert res.exit_code == 1, res.output
    run = json.loads(res.stdout)
    assert [a["protected_violation"] for a in run["attempts"]] == [True, True]
    assert run["attempts"][0]["first_failing_step"]["name"] == "protected-paths"
    assert "attempt 1/2: changed protected path(s) m.py" in res.stderr
    text = _run(*[a for a in res_args if a != "--json"])
    assert "protected-path violations (reverted): attempts 1, 2" in text.stdout
    assert {p.name: p.read_bytes() for p in ws.iterdir()} == before
