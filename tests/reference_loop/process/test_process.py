"""run_contained: nothing a command starts outlives it, whether it stays in the command's process
group, leaves it with setsid, or double-forks into a daemon; SIGTERM unwinds like Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import live_children, wait_none_in

from reference_loop._process.run import run_contained

PY = sys.executable

# A child that leaves the process group (setsid), records its pid, and keeps writing a file.
SETSID_WRITER = (
    "import os, sys, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    open('writer.pid', 'w').write(str(os.getpid()))\n"
    "    while True:\n"
    "        with open('victim.txt', 'a') as f:\n"
    "            f.write('x')\n"
    "        time.sleep(0.02)\n"
    "while not os.path.exists('writer.pid') or not open('writer.pid').read():\n"
    "    time.sleep(0.01)\n"
)


def zombie_children() -> set[int]:
    me = str(os.getpid())
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[1] == me and fields[0] == "Z":
                found.add(int(entry))
    return found - live_children()


def run(argv: list[str], cwd: Path, timeout: float = 20.0) -> tuple[int | None, bool]:
    done = run_contained(
        argv,
        cwd=cwd,
        env=os.environ,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=timeout,
    )
    return done.code, done.timed_out


def test_a_setsid_child_does_not_keep_writing_after_the_command_exits(tmp_path):
    code, timed_out = run([PY, "-c", SETSID_WRITER], tmp_path)
    assert (code, timed_out) == (0, False)
    assert int((tmp_path / "writer.pid").read_text()) > 0
    assert wait_none_in(tmp_path), "the setsid child outlived the command"
    size = (tmp_path / "victim.txt").stat().st_size
    time.sleep(0.3)
    assert (tmp_path / "victim.txt").stat().st_size == size


@pytest.mark.slow
def test_a_setsid_child_does_not_survive_the_timeout(tmp_path):
    # The writer must have left the group before the timeout fires, or the test shows nothing: a
    # loaded machine can take over a second to start Python, so the timeout grows until it had.
    pid = tmp_path / "writer.pid"
    for timeout in (1.0, 4.0, 16.0):
        pid.unlink(missing_ok=True)
        code, timed_out = run([PY, "-c", SETSID_WRITER + "time.sleep(60)\n"], tmp_path, timeout)
        assert (code, timed_out) == (None, True)
        if pid.exists() and pid.read_text():
            break
    assert pid.read_text()
    assert wait_none_in(tmp_path)


def test_a_double_forked_daemon_is_killed_and_reaped(tmp_path):
    daemon = (
        "import os, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        "    if os.fork() == 0:\n"
        "        open('daemon.pid', 'w').write(str(os.getpid()))\n"
        "        time.sleep(60)\n"
        "    os._exit(0)\n"
        "os.wait()\n"
        "while not os.path.exists('daemon.pid') or not open('daemon.pid').read():\n"
        "    time.sleep(0.01)\n"
    )
    before = zombie_children()  # an earlier test's unreaped child is not this run's
    assert run([PY, "-c", daemon], tmp_path) == (0, False)
    assert (tmp_path / "daemon.pid").read_text()
    assert wait_none_in(tmp_path)
    # Reaped, not left as a zombie child of ours.
    assert not zombie_children() - before


def test_an_unrelated_child_of_ours_is_left_alone(tmp_path):
    bystander = subprocess.Popen(["sleep", "30"])
    try:
        assert run([PY, "-c", SETSID_WRITER], tmp_path) == (0, False)
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


@pytest.mark.slow
def test_sigterm_to_the_loop_restores_the_workspace(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "m.py").write_text('MODE = "broken"\n')
    (ws / "check.py").write_text("import m\nassert m.MODE == 'fixed'\n")
    agent = tmp_path / "agent.py"
    agent.write_text(
        "import pathlib, time\n"
        "pathlib.Path('m.py').write_text('MODE = \"half-edited\"\\n')\n"
        "pathlib.Path('stray.txt').write_text('x')\n"
        f"pathlib.Path({str(tmp_path / 'started')!r}).write_text('1')\n"
        "time.sleep(60)\n"
    )
    proc = subprocess.Popen(
        [
            *(PY, "-c", "from reference_loop._cli.app import main; main()", "run"),
            *("--workspace", str(ws), "--verify", "{python} check.py", "--task-text", "fix m"),
            *("--attempter", f"cmd:{PY} {agent}"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not (tmp_path / "started").exists():
        assert time.monotonic() < deadline and proc.poll() is None, "the agent never started"
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == 128 + signal.SIGTERM
    assert err.decode().strip().splitlines()[-1] == "error: terminated by SIGTERM"
    assert "Traceback" not in err.decode()
    assert sorted(p.name for p in ws.iterdir()) == ["check.py", "m.py"]
    assert (ws / "m.py").read_text() == 'MODE = "broken"\n'


@pytest.mark.slow
def test_a_child_another_thread_starts_meanwhile_is_left_alone(tmp_path):
    # Commands run from several threads (the bench does): one command's clean-up must not kill
    # what another thread started while it ran.
    import threading

    started = threading.Event()
    result: list[tuple[int | None, bool]] = []

    def command() -> None:
        script = "import time, pathlib; pathlib.Path('up').write_text('1'); time.sleep(1)\n"
        result.append(run([PY, "-c", SETSID_WRITER + script], tmp_path))
        started.set()

    thread = threading.Thread(target=command)
    thread.start()
    while not (tmp_path / "up").exists():
        time.sleep(0.01)
    other = subprocess.Popen(["sleep", "30"])
    try:
        thread.join(timeout=30)
        assert result == [(0, False)]
        assert other.poll() is None, "another thread's child was killed"
        assert (tmp_path / "writer.pid").read_text()
        assert wait_none_in(tmp_path)
    finally:
        other.kill()
        other.wait()


# -- where no PID namespace can be had: the shepherd ------------------------------------------


@pytest.fixture
def no_namespace(monkeypatch):
    """Run commands as a machine without user namespaces does: under the shepherd."""
    from reference_loop._process import contain

    monkeypatch.setattr(contain, "contained_argv", lambda argv, **kw: None)


def contained(argv: list[str], cwd: Path, timeout: float = 20.0):
    from reference_loop._process.run import run_contained

    return run_contained(
        argv,
        cwd=cwd,
        env=os.environ,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=timeout,
    )


DETACHED_HELPER = (
    "import os, sys, time\n"
    "if os.fork() == 0:\n"
    "    os.setsid()\n"
    "    if os.fork() == 0:\n"
    "        os.environ.clear()\n"
    "        while True:\n"
    "            open('helper.txt', 'a').write('x')\n"
    "            time.sleep(0.02)\n"
    "    os._exit(0)\n"
    "os.wait()\n"
    "while not os.path.exists('helper.txt'):\n"
    "    time.sleep(0.01)\n"
    "sys.exit(3)\n"
)


@pytest.mark.slow
def test_the_shepherd_kills_a_detached_helper_with_a_clean_environment(tmp_path, no_namespace):
    done = contained([PY, "-c", DETACHED_HELPER], tmp_path)
    assert (done.code, done.timed_out, done.containment) == (3, False, "shepherd")
    assert done.left_running == 1
    assert wait_none_in(tmp_path)
    size = (tmp_path / "helper.txt").stat().st_size
    time.sleep(0.3)
    assert (tmp_path / "helper.txt").stat().st_size == size


@pytest.mark.slow
def test_the_shepherd_ends_the_tree_on_a_timeout_and_reports_a_signal(tmp_path, no_namespace):
    hanging = DETACHED_HELPER.replace("sys.exit(3)\n", "time.sleep(60)\n")
    done = contained([PY, "-c", hanging], tmp_path, timeout=1.5)
    assert (done.code, done.timed_out) == (None, True)
    assert wait_none_in(tmp_path)
    killed = contained(["/bin/sh", "-c", "kill -9 $$"], tmp_path)
    assert killed.code == -9 and killed.left_running == 0


@pytest.mark.slow
def test_a_namespace_counts_and_ends_what_a_command_left(tmp_path):
    from reference_loop._process.contain import namespace_prefix

    if namespace_prefix() is None:
        pytest.skip("user namespaces are not allowed here: the shepherd is used instead")
    done = contained([PY, "-c", DETACHED_HELPER], tmp_path)
    assert (done.code, done.containment, done.left_running) == (3, "pid-namespace", 1)
    assert wait_none_in(tmp_path)


# A helper that notices its parent is gone and ends by itself a moment later (an agent CLI's
# helpers shutting down as it exits on an API error) was not left running by the command.
SHUTTING_DOWN_HELPER = (
    "import os, sys, time\n"
    "if os.fork() == 0:\n"
    "    while os.getppid() != 1 and not os.path.exists('parent-gone'):\n"
    "        time.sleep(0.01)\n"
    "    time.sleep(0.3)\n"
    "    open('helper-ended.txt', 'w').write('x')\n"
    "    os._exit(0)\n"
    "open('parent-gone', 'w').write('x')\n"
    "sys.exit(4)\n"
)


@pytest.mark.slow
def test_a_helper_that_ends_by_itself_as_the_command_exits_is_not_counted_as_left(tmp_path):
    from reference_loop._process.contain import namespace_prefix

    if namespace_prefix() is None:
        pytest.skip("user namespaces are not allowed here: the shepherd is used instead")
    done = contained([PY, "-c", SHUTTING_DOWN_HELPER], tmp_path)
    assert (done.code, done.containment, done.left_running) == (4, "pid-namespace", 0)
    assert (tmp_path / "helper-ended.txt").exists()  # it ran to its end inside the attempt
    assert wait_none_in(tmp_path)
