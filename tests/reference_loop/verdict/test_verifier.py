"""Verifier: real subprocesses, real pytest, real timeouts. A verify run must never outlive its
verdict, its verdict must follow the documented exit-code mapping, and its output must be whole on
disk but bounded in the result."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest
from conftest import wait_none_in

from reference_loop._verdict.verifier import extract_failure_lines, run_verifier
from reference_loop.errors import LoopError

# Plugin autoload off: the inner runs only need core pytest, and start much faster.
PYTEST = f"PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 {sys.executable} -m pytest -q -p no:cacheprovider"


def write_tests(root: Path, body: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "test_sample.py").write_text(body)
    return root


def test_failing_pytest_is_fail_with_the_assertion_lines(tmp_path):
    root = write_tests(
        tmp_path / "p",
        "def add(a, b):\n    return a - b\n\n"
        "def test_add():\n    assert add(2, 3) == 5\n\n"
        "def test_fine():\n    assert True\n",
    )
    result = run_verifier(PYTEST, root, timeout=60, log_path=tmp_path / "logs" / "verify.log")
    assert result.verdict == "fail"
    assert result.exit_code == 1
    assert "E       assert -1 == 5" in result.failure_lines
    assert any(line.startswith("FAILED test_sample.py::test_add") for line in result.failure_lines)
    assert not any("passed" in line for line in result.failure_lines)  # counts are not causes
    assert result.output_path == tmp_path / "logs" / "verify.log"
    assert "1 failed, 1 passed" in result.output_path.read_text()
    assert result.duration > 0


def test_passing_pytest_is_pass_with_no_failure_lines(tmp_path):
    root = write_tests(tmp_path / "p", "def test_ok():\n    assert 1 + 1 == 2\n")
    result = run_verifier(PYTEST, root, timeout=60)
    assert (result.verdict, result.exit_code, result.failure_lines) == ("pass", 0, [])
    assert result.output_path is None  # no log asked for: the temp log is gone
    assert "1 passed" in result.output


@pytest.mark.slow
def test_pytest_collection_error_is_error_not_fail(tmp_path):
    root = write_tests(tmp_path / "p", "def test_broken(:\n    pass\n")
    result = run_verifier(PYTEST, root, timeout=60)
    assert result.verdict == "error"
    assert result.exit_code == 2
    assert "pytest exit 2" in result.reason
    assert any("SyntaxError" in line for line in result.failure_lines)


def test_pytest_with_no_tests_is_error(tmp_path):
    (tmp_path / "p").mkdir()
    result = run_verifier(PYTEST, tmp_path / "p", timeout=60)
    assert (result.verdict, result.exit_code) == ("error", 5)


def test_command_not_found_is_error(tmp_path):
    result = run_verifier("no-such-verify-command-xyz --flag", tmp_path, timeout=10)
    assert (result.verdict, result.exit_code) == ("error", 127)
    assert any("not found" in line for line in result.failure_lines)


def test_non_pytest_exit_codes_follow_the_mapping(tmp_path):
    fail_lines = run_verifier("echo 'FAIL: test_parse'; exit 3", tmp_path, timeout=10)
    assert (fail_lines.verdict, fail_lines.exit_code) == ("fail", 3)
    assert fail_lines.failure_lines == ["FAIL: test_parse"]
    plain = run_verifier("echo building; echo 'Error: disk full'; exit 2", tmp_path, timeout=10)
    assert (plain.verdict, plain.exit_code) == ("error", 2)
    assert plain.failure_lines == ["Error: disk full"]
    exit_one = run_verifier("echo checking; echo mismatch in output; exit 1", tmp_path, timeout=10)
    assert exit_one.verdict == "fail"
    # No recognisable line: the generic fallback is the last lines of output.
    assert exit_one.failure_lines == ["checking", "mismatch in output"]


def test_killed_by_a_signal_is_error(tmp_path):
    result = run_verifier("kill -9 $$", tmp_path, timeout=10)
    assert result.verdict == "error"
    assert result.exit_code == -9 or result.exit_code == 137


@pytest.mark.slow
def test_timeout_kills_the_whole_process_group_including_a_child_that_outlives_its_parent(tmp_path):
    script = tmp_path / "spawn.py"
    script.write_text(
        "import subprocess, sys, time\n"
        "child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        "open('child.pid', 'w').write(str(child.pid))\n"
        "print('spawned', flush=True)\n"
        "time.sleep(120)\n"
    )
    # The grandchild must be up before the timeout fires, or there is nothing to kill: a loaded
    # machine can take over a second to start Python, so the timeout grows until it was.
    for timeout in (1.5, 4.0, 16.0):
        start = time.monotonic()
        result = run_verifier(f"{sys.executable} spawn.py", tmp_path, timeout=timeout)
        took = time.monotonic() - start
        if "spawned" in result.output:
            break
    assert took < timeout + 8.5  # killed at the timeout, not after the command's 120 s
    assert result.verdict == "timeout"
    assert result.exit_code is None
    assert "spawned" in result.output
    assert result.failure_lines[-1].startswith(f"timeout: still running after {timeout:g}s")
    assert int((tmp_path / "child.pid").read_text()) > 0
    # The command ran in its own PID namespace: the pid it wrote is that namespace's, so the
    # check is that nothing at all still works in its folder.
    assert wait_none_in(tmp_path), "the grandchild survived the timeout"


def test_background_child_left_by_a_finished_command_is_killed(tmp_path):
    # The shell exits at once with 0; the sleep it put in the background would live on.
    result = run_verifier("sleep 120 & echo $! > bg.pid; exit 0", tmp_path, timeout=10)
    assert result.verdict == "pass"
    assert (tmp_path / "bg.pid").read_text()
    assert wait_none_in(tmp_path)


def test_output_is_whole_on_disk_and_bounded_in_the_result(tmp_path):
    log = tmp_path / "out.log"
    result = run_verifier(
        "i=1; while [ $i -le 1000 ]; do echo line $i; i=$((i+1)); done; exit 1",
        tmp_path,
        timeout=30,
        log_path=log,
        head_lines=10,
        tail_lines=20,
    )
    lines = result.output.splitlines()
    assert lines[:10] == [f"line {i}" for i in range(1, 11)]
    assert lines[10] == "… 970 lines omitted …"
    assert lines[11:] == [f"line {i}" for i in range(981, 1001)]
    assert log.read_text().splitlines() == [f"line {i}" for i in range(1, 1001)]


def test_short_output_has_no_omission_marker(tmp_path):
    result = run_verifier("echo one; echo two", tmp_path, timeout=10)
    assert result.output == "one\ntwo"


def test_stderr_is_kept_with_stdout(tmp_path):
    result = run_verifier("echo out; echo 'ValueError: bad' >&2; exit 1", tmp_path, timeout=10)
    assert result.output == "out\nValueError: bad"
    assert result.failure_lines == ["ValueError: bad"]


def test_the_workspace_python_is_first_on_path(tmp_path):
    result = run_verifier("command -v python", tmp_path, timeout=10)
    assert Path(result.output.strip()).parent == Path(sys.executable).parent


def test_runs_in_the_given_directory(tmp_path):
    (tmp_path / "marker.txt").write_text("here\n")
    result = run_verifier("cat marker.txt", tmp_path, timeout=10)
    assert (result.verdict, result.output) == ("pass", "here")


@pytest.mark.parametrize(
    ("command", "cwd", "timeout", "message"),
    [
        ("  ", ".", 5, "empty"),
        ("true", "missing", 5, "does not exist"),
        ("true", ".", 0, "positive"),
    ],
)
def test_bad_arguments_are_clear_errors(tmp_path, command, cwd, timeout, message):
    with pytest.raises(LoopError, match=message):
        run_verifier(command, tmp_path / cwd if cwd != "." else tmp_path, timeout=timeout)


def test_failure_line_extraction_on_typical_outputs():
    pytest_out = [
        "E       AssertionError: expected 5",
        "tests/test_x.py:12: AssertionError",
        "FAILED tests/test_x.py::test_a - AssertionError: expected 5",
        "========== 1 failed, 3 passed in 0.12s ==========",
        "1 failed, 3 passed in 0.12s",
    ]
    assert extract_failure_lines(pytest_out) == pytest_out[:3]
    assert extract_failure_lines([], ["compiling", "done?"]) == ["compiling", "done?"]
    dupes = ["E   KeyError: 'x'", "E   KeyError: 'x'"]
    assert extract_failure_lines(dupes) == ["E   KeyError: 'x'"]


def test_huge_lines_are_cut_in_the_result_but_whole_on_disk(tmp_path):
    log = tmp_path / "big.log"
    result = run_verifier(
        f"{sys.executable} -c \"print('x' * 50000)\"", tmp_path, timeout=10, log_path=log
    )
    assert len(result.output) < 3000
    assert "chars cut]" in result.output
    assert os.path.getsize(log) == 50001


def test_a_single_enormous_line_is_cut_without_reading_it_whole(tmp_path):
    log = tmp_path / "blob.log"
    (tmp_path / "blob.py").write_text(
        "import sys\n"
        "sys.stdout.write('y' * 5_000_000 + '\\nAssertionError: at the end\\n')\n"
        "sys.exit(1)\n"
    )
    result = run_verifier(f"{sys.executable} blob.py", tmp_path, timeout=30, log_path=log)
    lines = result.output.splitlines()
    assert lines[0] == "y" * 2000 + " … [4998000 chars cut]"
    assert lines[1] == "AssertionError: at the end"
    assert result.failure_lines == ["AssertionError: at the end"]
    assert os.path.getsize(log) == 5_000_000 + len("\nAssertionError: at the end\n")


def test_ctrl_c_while_verifying_kills_the_process_group_and_propagates(tmp_path):
    import signal
    import subprocess

    script = (
        "from pathlib import Path\n"
        "from reference_loop._verdict.verifier import run_verifier\n"
        "try:\n"
        "    run_verifier('sleep 120 & echo $! > bg.pid; sleep 120', Path('.'), timeout=60)\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=tmp_path, stdout=subprocess.PIPE)
    deadline = time.monotonic() + 20
    while not (tmp_path / "bg.pid").exists() or not (tmp_path / "bg.pid").read_text().strip():
        assert time.monotonic() < deadline, "verify command never started"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, _ = proc.communicate(timeout=20)
    assert out.decode().strip() == "interrupted"
    assert (tmp_path / "bg.pid").read_text()
    assert wait_none_in(tmp_path)


@pytest.mark.slow
def test_a_setsid_child_of_the_verifier_does_not_survive_its_timeout(tmp_path):
    command = (
        f'{sys.executable} -c "import os, time; os.setsid(); '
        "open('bg.pid', 'w').write(str(os.getpid())); time.sleep(120)\" & sleep 120"
    )
    # The child must have left the group before the timeout fires, or the test shows nothing: a
    # loaded machine can take over a second to start Python, so the timeout grows until it had.
    pid = tmp_path / "bg.pid"
    for timeout in (1.0, 4.0, 16.0):
        pid.unlink(missing_ok=True)
        result = run_verifier(command, tmp_path, timeout=timeout)
        assert result.verdict == "timeout"
        if pid.exists() and pid.read_text():
            break
    assert pid.read_text()
    assert wait_none_in(tmp_path)


def test_escape_sequences_are_dropped_from_the_result_but_kept_in_the_log(tmp_path):
    log = tmp_path / "v.log"
    command = "printf '\\033]0;pwned\\007\\033[31mFAILED test_x\\033[0m bell\\007\\n'; exit 1"
    result = run_verifier(command, tmp_path, timeout=10, log_path=log)
    assert result.output == "FAILED test_x bell\\x07"
    assert result.failure_lines == ["FAILED test_x bell\\x07"]
    assert b"\x1b]0;pwned\x07" in log.read_bytes()
