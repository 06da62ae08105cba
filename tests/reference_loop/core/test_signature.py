"""Failure signatures: identical failures match whatever the volatile text, different ones don't."""

from __future__ import annotations

from reference_loop._core.signature import failure_signature, normalise


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
