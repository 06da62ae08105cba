"""--sandbox: commands run under bubblewrap can write only the workspace, reach no network, and
leave no process behind; without a usable bwrap the loop refuses instead of pretending."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from reference_loop._attempters.cmd import CmdAttempter
from reference_loop._cli.app import main
from reference_loop._process.sandbox import SandboxUnavailable, make_sandbox
from reference_loop._verdict.verifier import run_verifier


def _usable_sandbox(net: bool = False):
    try:
        return make_sandbox(net=net)
    except SandboxUnavailable as exc:
        pytest.skip(f"bubblewrap unavailable here: {exc}")


@pytest.fixture()
def sandbox():
    return _usable_sandbox()


def test_a_sandboxed_verifier_writes_only_the_workspace(tmp_path, sandbox):
    ws = tmp_path / "ws"
    ws.mkdir()
    # Outside /tmp (which is private in the sandbox), so the path is visible there, read-only.
    outside = Path(tempfile.mkdtemp(prefix="sandbox-outside-", dir="/var/tmp"))
    try:
        command = f"touch {outside}/escaped; echo rc=$? > inside.txt; touch {ws}/also-inside"
        result = run_verifier(command, ws, timeout=30, sandbox=sandbox)
        assert "Read-only file system" in result.output
        assert not (outside / "escaped").exists()
        assert (ws / "inside.txt").read_text() == "rc=1\n"
        assert (ws / "also-inside").exists()
    finally:
        shutil.rmtree(outside)


def _processes_with(token: str) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
            except OSError:
                continue
            if token.encode() in cmdline:
                found.append(int(name))
    return found


@pytest.mark.slow
def test_every_descendant_dies_with_the_sandboxed_attempt(tmp_path, sandbox):
    ws = tmp_path / "ws"
    ws.mkdir()
    token = f"{os.getpid()}.{time.monotonic_ns() % 997}"
    script = ws / "agent.py"  # the sandbox's /tmp is private: the workspace is what it sees
    script.write_text(
        "import os, subprocess, time\n"
        "if os.fork() == 0:\n"
        "    os.setsid()\n"
        f"    subprocess.Popen(['sleep', '{token}'])\n"
        "    os._exit(0)\n"
        "time.sleep(0.5)\n"
    )
    att = CmdAttempter([sys.executable, str(script)], sandbox=sandbox)
    assert att.attempt("x", ws, attempt=1).steps[0].ok
    deadline = time.monotonic() + 5
    while _processes_with(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _processes_with(token) == []


def _serve_once() -> tuple[int, threading.Thread]:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(15)

    def accept() -> None:
        try:
            conn, _ = server.accept()
            conn.sendall(b"hello")
            conn.close()
        except OSError:
            pass
        finally:
            server.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    return server.getsockname()[1], thread


@pytest.mark.parametrize("net", [False, True], ids=["no_network", "sandbox_net"])
def test_the_network_is_cut_unless_sandbox_net(tmp_path, net):
    sandbox = _usable_sandbox(net=net)
    port, _thread = _serve_once()
    probe = (
        f"{sys.executable} -c \"import socket; s = socket.create_connection(('127.0.0.1', {port}),"
        ' timeout=5); print(s.recv(5).decode())"'
    )
    result = run_verifier(probe, tmp_path, timeout=30, sandbox=sandbox)
    if net:
        assert result.verdict == "pass" and "hello" in result.output
    else:
        assert result.verdict != "pass" and "hello" not in result.output
        assert "Connection refused" in result.output or "unreachable" in result.output


def test_without_bwrap_sandbox_is_refused_in_one_line(tmp_path, monkeypatch):
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.raises(SandboxUnavailable, match="needs bubblewrap"):
        make_sandbox()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f.txt").write_text("untouched\n")
    result = CliRunner().invoke(
        main,
        ["run", "--workspace", str(ws), "--verify", "true", "--task-text", "x", "--sandbox"],
    )
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --sandbox needs bubblewrap (bwrap)")
    assert sorted(p.name for p in ws.iterdir()) == ["f.txt"]


def test_a_program_kept_under_tmp_still_runs_inside_the_private_tmp(tmp_path, sandbox):
    # A checkout (and its venv) under /tmp must stay runnable: the sandbox shows the command's
    # own folder read-only over its private /tmp, and nothing else of the real /tmp.
    tools = Path(tempfile.mkdtemp(prefix="sandbox-tools-", dir="/tmp"))
    secret = Path(tempfile.mkdtemp(prefix="sandbox-secret-", dir="/tmp")) / "secret.txt"
    secret.write_text("hidden\n")
    try:
        program = tools / "probe.sh"
        program.write_text(f"#!/bin/sh\necho ran\ncat {secret} 2>/dev/null || echo no-secret\n")
        program.chmod(0o755)
        ws = tmp_path / "ws"
        ws.mkdir()
        argv = sandbox.wrap([str(program)], workspace=ws)
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
        assert out.stdout.split() == ["ran", "no-secret"], out.stderr
    finally:
        shutil.rmtree(tools)
        shutil.rmtree(secret.parent)


def test_an_agent_found_on_path_under_tmp_runs_with_its_package_and_interpreter(
    tmp_path, sandbox, monkeypatch
):
    # An npm-installed agent under /tmp: a bare name found on PATH, a link from node_modules/.bin
    # into its package (which reads a file of its own package), run by an interpreter that
    # lives under /tmp too. The sandbox shows each of them; the rest of /tmp stays hidden.
    tools = Path(tempfile.mkdtemp(prefix="sandbox-npm-", dir="/tmp"))
    secret = Path(tempfile.mkdtemp(prefix="sandbox-secret-", dir="/tmp")) / "secret.txt"
    secret.write_text("hidden\n")
    try:
        interp = tools / "runtime" / "bin" / "tinysh"
        interp.parent.mkdir(parents=True)
        interp.write_text('#!/bin/sh\nexec /bin/sh "$@"\n')
        interp.chmod(0o755)
        package = tools / "prefix" / "node_modules" / "agent-pkg"
        package.mkdir(parents=True)
        (package / "banner.txt").write_text("from-package\n")
        cli = package / "cli.sh"
        cli.write_text(
            "#!/usr/bin/env tinysh\n"
            'cat "$(dirname "$(readlink -f "$0")")/banner.txt"\n'
            f"cat {secret} 2>/dev/null || echo no-secret\n"
        )
        cli.chmod(0o755)
        bin_dir = tools / "prefix" / "node_modules" / ".bin"
        bin_dir.mkdir()
        (bin_dir / "agent").symlink_to("../agent-pkg/cli.sh")
        monkeypatch.setenv("PATH", f"{bin_dir}:{interp.parent}:{os.environ['PATH']}")
        ws = tmp_path / "ws"
        ws.mkdir()
        argv = sandbox.wrap(["agent"], workspace=ws)
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=False)
        assert out.stdout.split() == ["from-package", "no-secret"], out.stderr
    finally:
        shutil.rmtree(tools)
        shutil.rmtree(secret.parent)


@pytest.mark.slow
def test_an_agent_state_folder_is_private_scratch_showing_only_the_named_files(
    tmp_path, sandbox, monkeypatch
):
    """An attempt that plants a hook in its agent's config folder plants it in scratch: the real
    folder is untouched, and only the files the preset names were visible inside."""
    home = Path(tempfile.mkdtemp(prefix="sandbox-home-", dir="/var/tmp"))
    try:
        state = home / ".agent"
        state.mkdir()
        (state / "config.toml").write_text("model = 'x'\n")
        (state / "history.jsonl").write_text("SECRET OLD SESSION\n")
        monkeypatch.setenv("AGENT_HOME", str(state))
        ws = tmp_path / "ws"
        ws.mkdir()
        script = (
            f"cat {state}/config.toml > seen.txt; ls -A {state} > listed.txt; "
            f"echo hook > {state}/hooks.json && echo planted > planted.txt; "
            f"echo edited >> {state}/config.toml || echo config-read-only > ro.txt"
        )
        att = CmdAttempter(
            ["sh", "-c", script], scratch=(("$AGENT_HOME|~/.nowhere", ("config.toml",)),)
        )
        att.sandbox = sandbox
        out = att.attempt("go", ws, attempt=1)
        assert [s.ok for s in out.steps] == [True], out.steps
        assert (ws / "seen.txt").read_text() == "model = 'x'\n"
        assert (ws / "listed.txt").read_text().split() == ["config.toml"]
        assert (ws / "planted.txt").exists() and (ws / "ro.txt").exists()
        assert sorted(p.name for p in state.iterdir()) == ["config.toml", "history.jsonl"]
        assert (state / "config.toml").read_text() == "model = 'x'\n"
    finally:
        shutil.rmtree(home)
