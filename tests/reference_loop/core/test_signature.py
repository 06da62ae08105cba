"""Failure signatures: identical failures match whatever the volatile text, different ones don't."""

from __future__ import annotations

import pytest

from reference_loop._attempters.factory import make_attempter
from reference_loop._core.signature import failure_signature, normalise
from reference_loop._run.loop import run_task
from reference_loop._tasks.task import resolve_task


def test_volatile_text_does_not_make_identical_failures_differ():
    a = [
        "FAILED test_x.py::test_add - assert 3 == 4",
        "E   AssertionError at 0x7f3a2b1c9d40 in /tmp/pytest-of-u/pytest-12/test_a0/x.py:17",
        "1 failed, 2 passed in 0.03s",
    ]
    b = [
        "FAILED test_x.py::test_add - assert 5 == 6",
        "E   AssertionError at 0x7f99aa00bb11 in /tmp/pytest-of-u/pytest-13/test_b1/x.py:42",
        "1 failed, 2 passed in 1.97s",
    ]
    assert failure_signature(a) == failure_signature(b)


def test_uuids_timestamps_durations_and_line_numbers_are_normalised():
    line = (
        "E run 123e4567-e89b-12d3-a456-426614174000 at 2026-11-30T13:27:39Z took 250ms, "
        'File "x.py", line 88'
    )
    assert normalise(line) == ('E run <uuid> at <time> took <duration>, File "x.py", line <line>')


def test_workspace_path_is_removed_from_signatures(tmp_path):
    ws = tmp_path / "ws"
    one = failure_signature([f"E   FileNotFoundError: {ws}/data/in.csv"], workspace=ws)
    two = failure_signature(
        ["E   FileNotFoundError: /home/u/proj/data/in.csv"], workspace="/home/u/proj"
    )
    assert one == two == "E FileNotFoundError: data/in.csv"


def test_different_failing_tests_have_different_signatures():
    a = failure_signature(["FAILED test_x.py::test_add - assert 3 == 4"])
    b = failure_signature(["FAILED test_x.py::test_sub - assert 3 == 4"])
    assert a != b


def test_digits_inside_identifiers_are_kept():
    assert failure_signature(["FAILED t.py::test_v1"]) != failure_signature(
        ["FAILED t.py::test_v2"]
    )


def test_test_failure_wins_over_an_incidental_tool_error():
    sig = failure_signature(
        ["FAILED test_x.py::test_add - assert 3 == 4"],
        tool_error="write: permission denied on /tmp/abc",
    )
    assert "test_add" in sig and "permission" not in sig


def test_tool_error_is_the_signature_when_tests_say_nothing_specific():
    sig = failure_signature(
        [], verdict="error", tool_error="apply: hunk 2 did not match at line 14"
    )
    assert sig == "tool error: apply: hunk <n> did not match at line <line>"


def test_timeout_and_pass_signatures():
    assert failure_signature([], verdict="timeout") == "timeout"
    assert failure_signature(["FAILED a"], verdict="pass") == ""


def test_summary_line_used_when_no_failing_lines_given():
    sig = failure_signature([], output="collected 3 items\n\n2 failed, 1 passed in 0.50s\n")
    assert sig == "<n> failed, <n> passed in <duration>"


def test_named_failure_lines_win_over_assertion_detail_lines():
    lines = [
        "E       assert [1, 2, 3] == [3, 1, 2]",
        "E         Use -v to get more diff",
        "FAILED test_stats.py::test_keeps_order - assert [1, 2, ...",
    ]
    assert (
        failure_signature(lines) == "FAILED test_stats.py::test_keeps_order - assert [<n>, <n>, ..."
    )


# Two wrong fixes whose failures agree for the first 100 characters and differ after them: a
# terminal 80 columns wide shows the same cut line for both.
_LONG = "x" * 100
_WIDE_TASK = {
    "task.toml": (
        'name = "wide"\ndescription = "d"\n'
        'verify = "{python} -B -m pytest -q -p no:cacheprovider"\n'
        'timeout = 60\ntask = "Make label() return the label the test names."\n'
        '[[candidates]]\nname = "one"\ndir = "candidates/one"\nweight = 2\n'
        '[[candidates]]\nname = "two"\ndir = "candidates/two"\nweight = 1\n'
        '[[candidates]]\nname = "right"\ndir = "candidates/right"\nweight = 0\nfixes = true\n'
    ),
    "project/m.py": "def label():\n    return ''\n",
    "project/test_m.py": (
        f"from m import label\n\n\ndef test_label():\n    assert label() == '{_LONG}-right'\n"
    ),
    "candidates/one/m.py": f"def label():\n    return '{_LONG}-one'\n",
    "candidates/two/m.py": f"def label():\n    return '{_LONG}-two'\n",
    "candidates/right/m.py": f"def label():\n    return '{_LONG}-right'\n",
}


@pytest.mark.slow
def test_the_signature_is_the_verifiers_record_whatever_the_terminal_width(tmp_path, monkeypatch):
    for rel, text in _WIDE_TASK.items():
        (tmp_path / "wide" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "wide" / rel).write_text(text)
    monkeypatch.delenv("CI", raising=False)  # pytest does not cut its summary lines under CI
    monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    task = resolve_task(tmp_path / "wide")
    seen = {}
    for columns in (None, "80", "300"):
        if columns is None:
            monkeypatch.delenv("COLUMNS", raising=False)
        else:
            monkeypatch.setenv("COLUMNS", columns)
        result = run_task(task, make_attempter("scripted:walk", task=task))
        seen[columns] = [a.signature for a in result.attempts[:2]]
    assert seen[None] == seen["80"] == seen["300"]
    one, two = seen[None]
    # Two failures that agree for 100 characters are two failures, not one repeated.
    assert one != two and one.endswith("-one' == 'xxxxxxxxxxxx...xxxxxxx-right'")
    assert one.startswith("FAILED test_m.py::test_label - ")
