"""``reference-loop run --attempter claude|codex|gemini``: the real CLI, the real loop, the scripted
model server; the assertions are on what reached the model.

The sample task title-slug has two plausible wrong fixes and a right one (its candidates). The
scripted model writes them in that order, one per attempt, with the agent's own file tool. So:
attempt 3's requests carry attempt 1's identifier (the loop's history reached the model), the
number of sessions whose prompt holds the history equals the injections the loop reports, the
fix is kept, and an unsolved run leaves the workspace as it found it.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from wire.agents import AgentCli, run_shell, write_file
from wire.model_server import Refuse, Request, ScriptedModelServer, Turn, say

from reference_loop._core.history import HEADING
from reference_loop._process.sandbox import SandboxUnavailable, make_sandbox

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
TASK = REPO / "reference_loop" / "_tasks" / "samples" / "title-slug"
WRONG_1 = (TASK / "candidates" / "strip-punctuation" / "text.py").read_text()
WRONG_2 = (TASK / "candidates" / "ascii-only" / "text.py").read_text()
FIX = (TASK / "candidates" / "normalize-accents" / "text.py").read_text()
ONLY_IN_ATTEMPT_1 = "_PUNCTUATION_RE"
VERIFY = "{python} -B -m pytest -q -p no:cacheprovider"
TASK_TEXT = "slugify must fold accents and drop punctuation; fix text.py"

# A flag for each CLI whose effect shows at the wire: --agent-arg reaches the CLI.
MARK = "AGENT_ARG_MARK_5e1"
EXTRA = {
    "claude": ["--append-system-prompt", MARK],
    "codex": ["-c", f'developer_instructions="{MARK}"'],
    "gemini": ["--include-directories", "{extra_dir}"],
}


def one_file_per_attempt(agent: str, contents: list[str]) -> Callable[[Request], Turn]:
    """A turn that writes text.py with the next of ``contents`` when a session opens, and ends
    the turn once the write's result comes back."""
    state = {"attempt": 0}

    def turn(request: Request) -> Turn:
        if request.tool_results:
            return say(f"text.py written for attempt {state['attempt']}")
        state["attempt"] += 1
        return write_file(agent, "text.py", contents[state["attempt"] - 1], request)

    return turn


def sessions(server: ScriptedModelServer) -> list[list[Request]]:
    """The agent requests grouped by session: a session opens with a request that carries no
    tool result (each attempt runs the CLI afresh)."""
    out: list[list[Request]] = []
    for request in server.agent_requests:
        if not request.tool_results or not out:
            out.append([])
        out[-1].append(request)
    return out


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


def loop(
    cli: AgentCli, env: dict[str, str], workspace: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    env = {**env, "PYTHONPATH": str(REPO)}
    command = [sys.executable, "-m", "reference_loop", "run", "--attempter", cli.name]
    command += ["--workspace", str(workspace), "--verify", VERIFY, "--task-text", TASK_TEXT]
    return subprocess.run(
        [*command, "--json", *args],
        cwd=workspace.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "title-slug"
    shutil.copytree(TASK / "project", root)
    return root


def test_attempt_one_reaches_attempt_three_and_the_scripted_fix_is_solved(
    agent_cli: AgentCli, workspace: Path, tmp_path: Path
) -> None:
    name = agent_cli.name
    extra_dir = tmp_path / "extra"
    extra_dir.mkdir()
    (extra_dir / f"{MARK}.txt").write_text("included\n")
    script = [one_file_per_attempt(name, [WRONG_1, WRONG_2, FIX])] * 12
    with ScriptedModelServer(script) as server:
        env = agent_cli.session(tmp_path / "home", server.url)
        extra = [a.replace("{extra_dir}", str(extra_dir)) for a in EXTRA[name]]
        done = loop(
            agent_cli,
            env,
            workspace,
            "--prompts-dir",
            str(tmp_path / "prompts"),
            "--model",
            "scripted-model-x",
            *(f"--agent-arg={a}" for a in extra),
        )
    assert done.returncode == 0, done.stderr[-3000:]
    assert server.errors == []
    run = json.loads(done.stdout)
    assert (run["solved"], run["solved_at"]) == (True, 3)

    by_attempt = sessions(server)
    assert len(by_attempt) == 3, [len(s) for s in by_attempt]
    # Each attempt's prompt, as the loop wrote it, is what the model received.
    for number, session in enumerate(by_attempt, start=1):
        prompt = (tmp_path / "prompts" / f"attempt-{number}.txt").read_text().strip()
        assert prompt in session[0].strings, f"attempt {number}'s prompt did not reach the model"
    # The history the loop says it injected is the history that reached the model.
    carried = [number for number, s in enumerate(by_attempt, 1) if HEADING in s[0].strings]
    assert carried == [2, 3]
    assert run["injections"] == len(carried)
    # Attempt 1's patch identifier: not in attempt 1's prompt, in every request of attempt 3.
    assert ONLY_IN_ATTEMPT_1 not in by_attempt[0][0].strings
    assert all(ONLY_IN_ATTEMPT_1 in r.strings for r in by_attempt[2])
    # --model and --agent-arg reached the CLI, and through it the wire.
    first = by_attempt[0][0]
    model = first.json.get("model") if first.api != "gemini" else first.path
    assert "scripted-model-x" in str(model)
    assert MARK in first.strings
    # The fix is what stays; nothing else in the workspace changed.
    original = snapshot(TASK / "project")
    assert snapshot(workspace) == {**original, "text.py": FIX.encode()}


def test_an_unsolved_run_restores_the_workspace_the_agent_wrote_to(
    agent_cli: AgentCli, workspace: Path, tmp_path: Path
) -> None:
    name = agent_cli.name
    before = snapshot(workspace)

    def scribble(request: Request) -> Turn:  # a wrong fix, and a stray file beside it
        if request.tool_results:
            count = len(request.tool_results)
            return say("done") if count > 1 else write_file(name, "notes.txt", "stray", request)
        return write_file(name, "text.py", WRONG_1, request)

    with ScriptedModelServer([scribble] * 8) as server:
        env = agent_cli.session(tmp_path / "home", server.url)
        done = loop(agent_cli, env, workspace, "--max-attempts", "1")
    assert done.returncode == 1, done.stderr[-3000:]
    run = json.loads(done.stdout)
    assert run["solved"] is False and len(run["attempts"]) == 1
    assert {"text.py", "notes.txt"} <= set(run["attempts"][0]["files"])
    assert snapshot(workspace) == before
    folders = {str(p.relative_to(workspace)) for p in workspace.rglob("*") if p.is_dir()}
    assert folders <= {"__pycache__"}, folders  # no folder the agent made is left either


def test_under_the_sandbox_the_agent_edits_the_workspace_and_nothing_of_its_state_outlives_it(
    agent_cli: AgentCli, workspace: Path, tmp_path: Path
) -> None:
    try:
        make_sandbox(net=True)
    except SandboxUnavailable as exc:
        pytest.skip(str(exc))
    home = tmp_path / "home"
    with ScriptedModelServer([one_file_per_attempt(agent_cli.name, [FIX])] * 4) as server:
        env = agent_cli.session(home, server.url)
        env.pop("TMPDIR")  # the sandbox's /tmp is private: a folder under the host's is not there
        state_before = snapshot(home)
        done = loop(agent_cli, env, workspace, "--sandbox-net", "--max-attempts", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert json.loads(done.stdout)["solved_at"] == 1
    assert server.turns_played == 2  # the write, then the end of the turn
    assert (workspace / "text.py").read_text() == FIX
    # The agent's config reached it (the server was reached through it), yet whatever it wrote
    # to its state folder went to private scratch: the host's home is as it was.
    assert snapshot(home) == state_before


def test_the_bench_runs_a_preset_and_records_its_model_and_flags(
    claude_cli: AgentCli, tmp_path: Path
) -> None:
    """The bench takes the same presets, options and flags as run (one CLI is enough: the
    preset is data the bench hands to the same factory)."""
    script = [one_file_per_attempt("claude", [FIX])] * 4
    with ScriptedModelServer(script) as server:
        env = {**claude_cli.session(tmp_path / "home", server.url), "PYTHONPATH": str(REPO)}
        command = [sys.executable, "-m", "reference_loop", "bench", "--attempter", "claude"]
        command += ["--task", "title-slug", "--seeds", "1", "--arms", "accumulate"]
        command += ["--max-attempts", "1", "--model", "bench-model-7", "--json"]
        command += [f"--agent-arg=--append-system-prompt={MARK}"]
        done = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600, check=False
        )
    result = json.loads(done.stdout)
    (arm,) = result["arms"]
    assert (arm["runs"], arm["solved"]) == (1, 1), done.stderr[-3000:]
    assert result["settings"]["model"] == "bench-model-7"
    assert result["settings"]["agent_args"] == [f"--append-system-prompt={MARK}"]
    assert server.agent_requests[0].json["model"] == "bench-model-7"
    assert MARK in server.agent_requests[0].strings


def test_a_model_api_error_fails_the_attempt_naming_it_and_leaves_the_workspace(
    agent_cli: AgentCli, workspace: Path, tmp_path: Path
) -> None:
    """The API refuses every request (400, as for a bad model name): the CLI exits non-zero, the
    attempt fails at the agent's own step with the API's message, the workspace is untouched."""
    before = snapshot(workspace)
    with ScriptedModelServer([Refuse(400, "REFUSED_MARK_0b7")] * 20) as server:
        env = agent_cli.session(tmp_path / "home", server.url)
        done = loop(agent_cli, env, workspace, "--max-attempts", "1")
    assert done.returncode == 1, done.stderr[-3000:]
    (attempt,) = json.loads(done.stdout)["attempts"]
    step = attempt["first_failing_step"]
    assert step["name"] == agent_cli.name, step
    assert step["error"].startswith("exit status ") and "REFUSED_MARK_0b7" in step["error"]
    assert server.agent_requests, "the CLI never reached the server"
    assert snapshot(workspace) == before


def test_the_preset_lets_the_agent_edit_through_its_shell_tool(
    agent_cli: AgentCli, workspace: Path, tmp_path: Path
) -> None:
    """The presets allow shell commands, not only file tools: an agent that fixes the code with
    a shell command (and runs the tests the same way) is not stopped at a permission prompt."""
    encoded = base64.b64encode(FIX.encode()).decode()
    command = f"printf %s {encoded} | base64 -d > text.py && echo SHELL_RAN_OK"

    def shell_fix(request: Request) -> Turn:
        if request.tool_results:
            return say("fixed with the shell")
        return run_shell(agent_cli.name, command, request)

    with ScriptedModelServer([shell_fix] * 4) as server:
        env = agent_cli.session(tmp_path / "home", server.url)
        done = loop(agent_cli, env, workspace, "--max-attempts", "1")
    assert done.returncode == 0, done.stderr[-3000:]
    assert "SHELL_RAN_OK" in server.agent_requests[1].tool_results[-1]
    assert (workspace / "text.py").read_text() == FIX


NOBODY = 65534


def python_for_nobody() -> tuple[str, dict[str, str]] | str:
    """An interpreter the user nobody can run with this project's packages importable: this one,
    else the system's of the same version with our site-packages on its path; else why not."""
    site = [p for p in sys.path if p.endswith("site-packages")]
    minor = f"python{sys.version_info.major}.{sys.version_info.minor}"
    tries = [(sys.executable, {}), (f"/usr/bin/{minor}", {"PYTHONPATH": os.pathsep.join(site)})]
    for python, extra in tries:
        probe = subprocess.run(
            ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", python,
             "-c", "import click, yaml, pytest, sys; import os; os.stat(sys.executable)"],
            env={**os.environ, **extra}, capture_output=True, timeout=60, check=False,
        )  # fmt: skip
        if probe.returncode == 0:
            return python, extra
    return f"no Python here that the user nobody can run with this project's packages ({tries})"


@pytest.mark.skipif(os.geteuid() != 0, reason="not root: the tests above already ran as non-root")
def test_the_claude_preset_edits_files_as_a_user_who_is_not_root(claude_cli: AgentCli) -> None:
    """Claude Code treats root apart (it refuses bypassPermissions there): the same preset edits
    files as root (the tests above, when run as root) and as anyone else (here, as nobody)."""
    if shutil.which("setpriv") is None:
        pytest.skip("setpriv (util-linux) is not installed")
    found = python_for_nobody()
    if isinstance(found, str):
        pytest.skip(found)
    python, extra = found
    reach = [str(claude_cli.program), str(REPO / "reference_loop" / "__init__.py")]
    as_nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    test = [*as_nobody, "test", "-r", reach[1], "-a", "-x", reach[0]]
    if subprocess.run(test, check=False, timeout=60).returncode:
        pytest.skip(f"the user nobody cannot reach {reach} (a checkout under a private home)")
    root = Path(tempfile.mkdtemp(prefix="wire-nobody-", dir="/var/tmp"))  # not under root's tmp
    try:
        workspace = root / "title-slug"
        shutil.copytree(TASK / "project", workspace)
        with ScriptedModelServer([one_file_per_attempt("claude", [FIX])] * 4) as server:
            env = claude_cli.session(root / "home", server.url)
            paths = [str(REPO), *filter(None, [extra.get("PYTHONPATH")])]
            env["PYTHONPATH"] = os.pathsep.join(paths)
            for path in [root, *root.rglob("*")]:
                os.chown(path, NOBODY, NOBODY)
            command = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
            command += [python, "-m", "reference_loop", "run", "--attempter", "claude"]
            command += ["--workspace", str(workspace), "--verify", VERIFY]
            command += ["--task-text", TASK_TEXT, "--max-attempts", "1", "--json"]
            done = subprocess.run(
                command, cwd=root, env=env, capture_output=True, text=True, timeout=600, check=False
            )
        assert done.returncode == 0, done.stderr[-3000:]
        assert json.loads(done.stdout)["solved_at"] == 1
        assert (workspace / "text.py").read_text() == FIX
        assert (workspace / "text.py").stat().st_uid == NOBODY  # the agent wrote it, as nobody
    finally:
        shutil.rmtree(root)
