"""The card's Check: binary, computed from the real patches, and void without injections."""

from __future__ import annotations

import pytest
from conftest import make_task_dir  # the tiny fast task the loop tests use

from reference_loop._core.events import EventLog
from reference_loop._core.records import AttemptRecord
from reference_loop._run.check import attempt_one_only, run_check
from reference_loop._tasks.task import load_task_dir, three_failure_task


@pytest.fixture
def fast_task(tmp_path):
    return load_task_dir(make_task_dir(tmp_path / "task"))


def _rec(n, patch, files, output=""):
    return AttemptRecord(n, "fail", patch=patch, files=files, verifier_output=output)


@pytest.mark.slow
def test_check_passes_on_the_three_failure_sample_task():
    log = EventLog()
    result = run_check(events=log)
    assert result.passed and not result.void, result.message
    assert result.message.startswith("PASS")
    assert result.found and set(result.found) <= set(result.attempt1_only)
    run = result.run
    for text in result.found:
        assert text in run.attempts[0].patch or text in run.attempts[0].files
        assert text not in run.attempts[1].patch and text not in run.prompts[0]
        assert text in run.prompts[2]
    assert result.injections == log.count("history_injected") > 0
    assert result.task == three_failure_task().name


def test_check_fails_on_the_overwrite_bug(fast_task):
    result = run_check(fast_task, history_mode="last")
    assert not result.passed and not result.void
    assert result.injections > 0 and result.attempt1_only and not result.found
    assert result.message.startswith("FAIL:")


def test_zero_injections_make_the_check_void_and_failed(fast_task):
    result = run_check(fast_task, history_mode="none")
    assert result.void and not result.passed and result.injections == 0
    assert "void" in result.message


def test_a_task_solved_before_attempt_three_cannot_pass(fast_task):
    result = run_check(fast_task, attempter="scripted:strong")
    assert not result.passed and "solved at attempt 1" in result.message


def test_attempt_one_strings_come_from_its_patch_not_from_attempt_two_or_the_task():
    one = _rec(
        1,
        "+import helper_only_one\n+shared_name = 1\n+plain words here\n",
        ["pkg/new_file.py", "common.py"],
    )
    two = _rec(2, "+shared_name = 2\n", ["common.py"], output="E  NameError: in_output_two")
    three = _rec(3, "+import helper_only_one\n", ["pkg/new_file.py"])
    strings = attempt_one_only([one, two, three], "# Task\nfix common.py")
    assert "helper_only_one" in strings and "pkg/new_file.py" in strings
    assert "new_file.py" in strings
    assert "shared_name" not in strings and "common.py" not in strings
    assert "plain" not in strings and "import" not in strings
