"""The cmd: attempter runs a real command-line agent: prompt by file or stdin, timeout, and
nothing it starts outlives it."""

from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

import pytest
from conftest import wait_none_in

from reference_loop._attempters.cmd import CmdAttempter, make_cmd_attempter
from reference_loop.errors import LoopError, LoopUsageError

PY = shlex.quote(sys.executable)

# A tiny "coding agent": reads the prompt, finds "set VALUE=<n>" in it, and edits value.py.
AGENT = """\
import os, re, sys
prompt = open(sys.argv[1]).read() if len(sys.argv) > 1 else sys.stdin.read()
m = re.search(r"set VALUE=(\\d+)", prompt)
if not m:
    sys.stderr.write("agent: no instruction in prompt\\n")
    sys.exit(3)
with open("value.py", "w") as f:
    f.write(f"VALUE = {m.group(1)}\\n")
print("agent: edited value.py, attempt", os.environ["REFERENCE_LOOP_ATTEMPT"])
"""


@pytest.fixture()
def agent(tmp_path: Path) -> Path:
    path = tmp_path / "agent.py"
    path.write_text(AGENT)
    return path


@pytest.fixture()
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "value.py").write_text("VALUE = 0\n")
    return root


def test_agent_gets_the_prompt_file_and_edits_the_workspace(agent: Path, ws: Path) -> None:
    att = make_cmd_attempter(f"{PY} {agent} {{prompt_file}}")
    out = att.attempt("Fix it: set VALUE=42", ws, attempt=1)
    assert [(s.ok, s.error) for s in out.steps] == [(True, "")]
    assert (ws / "value.py").read_text() == "VALUE = 42\n"
    # The prompt file lives outside the workspace, so it never pollutes the diff.
    assert sorted(p.name for p in ws.iterdir()) == ["value.py"]


def test_without_placeholder_the_prompt_goes_to_stdin(agent: Path, ws: Path) -> None:
    att = make_cmd_attempter(f"{PY} {agent}")
    out = att.attempt("set VALUE=7 please", ws, attempt=2)
    assert out.steps[0].ok
    assert (ws / "value.py").read_text() == "VALUE = 7\n"


def test_placeholders_for_workspace_and_attempt(tmp_path: Path, ws: Path) -> None:
    script = tmp_path / "mark.py"
    script.write_text(
        "import sys, pathlib\npathlib.Path(sys.argv[1], 'mark.txt').write_text(sys.argv[2])\n"
    )
    att = make_cmd_attempter(f"{PY} {script} {{workspace}} attempt-{{attempt}}")
    att.attempt("anything", ws, attempt=5)
    assert (ws / "mark.txt").read_text() == "attempt-5"


def test_nonzero_exit_is_a_failing_tool_step_with_the_stderr_tail(agent: Path, ws: Path) -> None:
    att = make_cmd_attempter(f"{PY} {agent} {{prompt_file}}")
    out = att.attempt("no instruction here", ws, attempt=1)
    step = out.steps[0]
    assert not step.ok
    assert step.name == "cmd:" + Path(sys.executable).name
    assert step.error.startswith("exit status 3")
    assert "agent: no instruction in prompt" in step.error
    assert (ws / "value.py").read_text() == "VALUE = 0\n"


def test_long_stderr_is_cut_to_its_tail(tmp_path: Path, ws: Path) -> None:
    script = tmp_path / "noisy.py"
    script.write_text(
        "import sys\nfor i in range(5000):\n    sys.stderr.write(f'line {i}\\n')\nsys.exit(1)\n"
    )
    out = make_cmd_attempter(f"{PY} {script}").attempt("x", ws, attempt=1)
    err = out.steps[0].error
    assert "line 4999" in err and "line 0\n" not in err
    assert "chars cut" in err and len(err) < 2200


def _agent_with_child(tmp_path: Path, then: str) -> tuple[Path, Path]:
    """An agent script that starts a long-lived child, records its pid, then runs ``then``."""
    pidfile = tmp_path / "child.pid"
    script = tmp_path / "agent_with_child.py"
    script.write_text(
        "import subprocess, time\n"
        "child = subprocess.Popen(['sleep', '60'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n" + then
    )
    return script, pidfile


@pytest.mark.slow
def test_hanging_agent_is_killed_at_the_timeout_with_its_children(tmp_path: Path, ws: Path) -> None:
    script, pidfile = _agent_with_child(tmp_path, "time.sleep(60)\n")
    # The child must be up before the timeout fires, or there is nothing to kill: a loaded
    # machine can take over a second to start Python, so the timeout grows until it was.
    for timeout in (1.0, 4.0, 16.0):
        pidfile.unlink(missing_ok=True)
        att = CmdAttempter([sys.executable, str(script)], timeout=timeout)
        started = time.monotonic()
        out = att.attempt("x", ws, attempt=1)
        took = time.monotonic() - started
        if pidfile.exists() and pidfile.read_text():
            break
    assert took < timeout + 9  # killed at the timeout, not after the agent's 60 s
    assert not out.steps[0].ok
    assert f"timed out after {timeout:g}s" in out.steps[0].error
    assert pidfile.read_text()
    assert wait_none_in(ws), "the agent's child survived the timeout"


def test_children_left_behind_by_a_finished_agent_are_killed(tmp_path: Path, ws: Path) -> None:
    # An agent that exits but leaves a background writer could change files after the diff.
    script, pidfile = _agent_with_child(tmp_path, "")
    out = CmdAttempter([sys.executable, str(script)]).attempt("x", ws, attempt=1)
    assert out.steps[0].ok
    assert pidfile.read_text()
    assert wait_none_in(ws), "a child left behind by the agent survived"


def test_missing_agent_binary_is_one_clear_usage_error() -> None:
    with pytest.raises(LoopUsageError, match="command not found: no-such-agent-xyz") as info:
        make_cmd_attempter("no-such-agent-xyz --yes --message-file {prompt_file}")
    assert info.value.exit_code == 2


def test_unbalanced_quotes_in_the_spec_are_a_usage_error() -> None:
    with pytest.raises(LoopError, match="cannot parse command"):
        make_cmd_attempter("aider --message 'oops")


def test_agent_sees_seed_and_prompt_file_in_its_environment(tmp_path: Path, ws: Path) -> None:
    script = tmp_path / "env.py"
    script.write_text(
        "import os\nopen('env.txt', 'w').write(os.environ['REFERENCE_LOOP_SEED'] + ' ' + "
        "open(os.environ['REFERENCE_LOOP_PROMPT_FILE']).read())\n"
    )
    make_cmd_attempter(f"{PY} {script}", seed=4).attempt("hello", ws, attempt=1)
    assert (ws / "env.txt").read_text() == "4 hello"
    assert os.path.exists(ws / "value.py")


@pytest.mark.slow
def test_a_setsid_child_of_the_agent_cannot_edit_the_workspace_after_the_revert(
    tmp_path: Path, ws: Path
) -> None:
    from reference_loop._run.loop import LoopOptions, run_loop
    from reference_loop._tasks.task import inline_task

    (ws / "check.py").write_text("import value\nassert value.VALUE == 42\n")
    before = {p.name: p.read_bytes() for p in ws.iterdir()}
    script = tmp_path / "detaching_agent.py"
    script.write_text(
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        f"    open({str(tmp_path / 'writer.pid')!r}, 'w').write(str(os.getpid()))\n"
        "    time.sleep(1.0)\n"
        "    while True:\n"
        "        open('value.py', 'w').write('VALUE = 42  # written after the revert\\n')\n"
        "        time.sleep(0.02)\n"
        f"while not os.path.exists({str(tmp_path / 'writer.pid')!r}):\n"
        "    time.sleep(0.01)\n"
    )
    task = inline_task("make VALUE 42", "{python} -B check.py", timeout=20)
    result = run_loop(
        task,
        CmdAttempter([sys.executable, str(script)]),
        workspace=ws,
        options=LoopOptions(max_attempts=1),
    )
    assert (tmp_path / "writer.pid").read_text()
    assert wait_none_in(ws)
    time.sleep(1.5)
    assert {p.name: p.read_bytes() for p in ws.iterdir()} == before
    assert result.attempts[0].verdict == "integrity"  # it left a process running


def test_an_agent_that_reports_its_failure_on_stdout_only_is_heard(ws: Path) -> None:
    att = make_cmd_attempter(
        f"{PY} -c \"print('API Error: 400 model not found'); raise SystemExit(1)\""
    )
    out = att.attempt("go", ws, attempt=1)
    (step,) = out.steps
    assert not step.ok
    assert step.error == "exit status 1\nAPI Error: 400 model not found"
