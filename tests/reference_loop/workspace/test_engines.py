"""The workspace's engine is chosen by name (``engine=``, else ``REFERENCE_LOOP_WORKSPACE``,
else the default), an unknown name is refused before anything is made, and the git engine is
complete on its own: it never touches the hand-written index and pack code."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import make_task_dir
from test_workspace import attempt_everything, git, make_project, tree_state

from reference_loop._run.loop import LoopOptions
from reference_loop._workspace import gitindex, gitstore
from reference_loop._workspace.core import Workspace
from reference_loop._workspace.engines import DEFAULT_ENGINE, ENGINE_ENV, ENGINES, engine_name
from reference_loop.errors import LoopUsageError


def test_the_engine_comes_from_the_argument_then_the_environment_then_the_default():
    assert engine_name(None, {}) == DEFAULT_ENGINE
    assert engine_name(None, {ENGINE_ENV: "git"}) == "git"
    assert engine_name("fast", {ENGINE_ENV: "git"}) == "fast"
    assert engine_name(None, {ENGINE_ENV: ""}) == DEFAULT_ENGINE
    assert set(ENGINES) == {"git", "fast"}


@pytest.mark.parametrize("name", ["Git", "hand", "fast ", "libgit2"])
def test_an_unknown_engine_is_refused_before_any_store_is_made(tmp_path, monkeypatch, name):
    make_project(tmp_path / "p")
    made: list[str] = []
    real_mkdtemp = tempfile.mkdtemp

    def mkdtemp(*args: object, **kwargs: object) -> str:
        made.append(real_mkdtemp(*args, **kwargs))  # type: ignore[arg-type]
        return made[-1]

    monkeypatch.setattr(tempfile, "mkdtemp", mkdtemp)
    with pytest.raises(LoopUsageError, match=r"unknown workspace engine.*choose one of git, fast"):
        Workspace(tmp_path / "p", engine=name)
    monkeypatch.setenv(ENGINE_ENV, name)
    with pytest.raises(LoopUsageError, match=f"{ENGINE_ENV}={name}"):
        Workspace(tmp_path / "p")
    with pytest.raises(LoopUsageError, match="unknown workspace engine"):
        LoopOptions(workspace_engine=name).check()
    assert made == []  # no private store was made for a refused engine
    with Workspace(tmp_path / "p", engine="git") as ws:  # the check above can see one being made
        assert made and ws.engine == "git"


def test_workspace_reads_the_environment_itself(tmp_path, monkeypatch):
    make_project(tmp_path / "p")
    for name in ENGINES:
        monkeypatch.setenv(ENGINE_ENV, name)
        with Workspace(tmp_path / "p") as ws:
            assert ws.engine == name
    with Workspace(tmp_path / "p", engine="git") as ws:
        assert ws.engine == "git"  # the argument wins over the environment


def _forbid_hand_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the git engine used the hand-written index or pack code")

    for module, names in (
        (gitindex, ["read_index", "rewrite_index", "split_index_over", "split_part"]),
        (gitstore, ["store_tree", "store_file", "write_index", "PackWriter"]),
    ):
        for name in names:
            monkeypatch.setattr(module, name, refuse)


@pytest.mark.parametrize("kind", ["plain", "repository", "dirty_repository"])
def test_the_git_engine_is_complete_without_the_hand_written_formats(tmp_path, monkeypatch, kind):
    root = make_project(tmp_path / "p")
    if kind != "plain":
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "base")
    if kind == "dirty_repository":
        (root / "README.md").write_text("edited, not added\n")
        (root / "untracked.txt").write_text("new\n")
    with Workspace(root, engine="fast") as fast:
        expected_tree = fast.snapshot()
        before = tree_state(root)
        attempt_everything(root)
        expected = fast.diff()
        fast.restore()
    assert tree_state(root) == before
    _forbid_hand_paths(monkeypatch)
    with Workspace(root, engine="git") as ws:
        assert ws.snapshot() == expected_tree
        for _attempt in range(2):
            attempt_everything(root)
            got = ws.diff_and_restore()
            assert got.files == expected.files and got.raw == expected.raw
            assert tree_state(root) == before
            assert ws.snapshot() == expected_tree


@pytest.mark.slow
def test_the_cli_offers_the_engine_and_refuses_an_unknown_one(tmp_path):
    task = make_task_dir(tmp_path / "task")
    base = [sys.executable, "-m", "reference_loop", "run", "--task", str(task)]
    env = {k: v for k, v in os.environ.items() if k != ENGINE_ENV}
    for name in ENGINES:
        proc = subprocess.run(
            [*base, "--workspace-engine", name, "--attempter", "scripted:walk", "--json"],
            check=False,
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
    bad = subprocess.run(
        [*base, "--workspace-engine", "hand"],
        check=False,
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert bad.returncode == 2 and "hand" in bad.stderr and "Traceback" not in bad.stderr
    env[ENGINE_ENV] = "hand"
    bad = subprocess.run(base, check=False, capture_output=True, text=True, env=env, timeout=60)
    assert bad.returncode == 2, bad.stderr
    lines = bad.stderr.strip().splitlines()
    assert lines[-1].startswith("error: unknown workspace engine (REFERENCE_LOOP_WORKSPACE=hand)")
    assert "Traceback" not in bad.stderr
    assert Path(task / "project" / "m.py").read_text() == 'MODE = "broken"\n'
