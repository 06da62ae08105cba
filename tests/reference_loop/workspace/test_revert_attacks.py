"""Attacks on the revert: an attempt that writes something meant to outlive the restore, or to
run later on the host. Each test is named after the attack; it asserts what the workspace
refuses (the error type), then the state on disk: the whole tree, ``.git`` included, is the
snapshot's byte for byte, and nothing the attempt planted ran.

Every attack runs under both engines (the ``workspace_engine`` fixture).
"""

from __future__ import annotations

import os
import stat
import subprocess
import zlib
from pathlib import Path

import pytest
from test_workspace import git, make_project, tree_state

from reference_loop._workspace.core import Workspace
from reference_loop._workspace.seal import StoreTampered
from reference_loop.errors import LoopError

pytestmark = [pytest.mark.usefixtures("workspace_engine"), pytest.mark.slow]

TEST_FILE = "tests/test_calc.py"
REAL_TEST = "from src.pkg.mod import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
WEAK_TEST = "def test_add():\n    assert True\n"


def make_repo(root: Path) -> Path:
    """A committed project with a test file, plus hooks git's own init wrote."""
    make_project(root)
    (root / "tests").mkdir()
    (root / TEST_FILE).write_text(REAL_TEST)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


def full_state(root: Path) -> dict[str, tuple]:
    return tree_state(root, skip_git=False)


def blob_id(repo: Path, path: str) -> str:
    return git(repo, "rev-parse", f"HEAD:{path}").strip()


def write_loose_object(repo: Path, object_id: str, content: bytes) -> None:
    """Put ``content`` under ``object_id`` as a loose object (git does not check the id on
    read): the object behind a file now says something else."""
    path = repo / ".git" / "objects" / object_id[:2] / object_id[2:]
    path.parent.mkdir(exist_ok=True)
    if path.exists():
        os.chmod(path, 0o644)
    path.write_bytes(zlib.compress(b"blob %d\0" % len(content) + content))


def marker_script(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A program that leaves a marker file when anything runs it."""
    marker = tmp_path / f"{name}.ran"
    script = tmp_path / f"{name}.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    script.chmod(0o755)
    return script, marker


def test_revert_writes_attacker_bytes_via_a_rewritten_git_object_behind_a_test_file(tmp_path):
    """The attempt rewrites the object behind the test file in the user's store, then weakens
    the file: the restore reads the snapshot's own copy (checked against its id), never the
    rewritten object, and a later do-nothing attempt still faces the real test."""
    repo = make_repo(tmp_path / "repo")
    before = full_state(repo)
    with Workspace(repo) as ws:
        ws.snapshot()
        write_loose_object(repo, blob_id(repo, TEST_FILE), WEAK_TEST.encode())
        git(repo, "repack", "-q", "-a", "-d")  # and packs it, so every reader sees it
        (repo / TEST_FILE).write_text(WEAK_TEST)
        diff = ws.diff_and_restore()
        assert TEST_FILE in {c.path for c in diff.files}
        assert diff.git_dirs  # the rewritten store is reported, outside the patch
        assert (repo / TEST_FILE).read_text() == REAL_TEST
        # The next attempt does nothing: nothing to restore, the test is still the real one.
        assert ws.diff().files == []
    assert full_state(repo) == before


def test_revert_refuses_a_private_store_rewritten_behind_its_back(tmp_path):
    """Outside --sandbox the private store is reachable by the attempt: rewriting an object in
    it (same size, times set back) breaks its seal, and the workspace refuses to restore from
    it rather than write what it holds."""
    repo = make_repo(tmp_path / "repo")
    with Workspace(repo) as ws:
        ws.snapshot()
        copy = Path(ws._tmp) / "gitdirs" / ".git" / "objects"
        oid = blob_id(repo, TEST_FILE)
        loose = copy / oid[:2] / oid[2:]
        assert loose.is_file()
        st = loose.stat()
        loose.chmod(0o644)
        data = zlib.compress(b"blob %d\0" % len(WEAK_TEST) + WEAK_TEST.encode())
        loose.write_bytes(data)
        os.utime(loose, ns=(st.st_atime_ns, st.st_mtime_ns))
        (repo / TEST_FILE).write_text(WEAK_TEST)
        with pytest.raises(StoreTampered, match="changed by something else"):
            ws.restore()
    assert (repo / TEST_FILE).read_text() == WEAK_TEST  # nothing was written from that store


def test_revert_never_writes_an_object_that_does_not_hash_to_its_id(tmp_path):
    """Even with the seal taken again (a store changed between two calls of its own), restore
    checks every blob it writes against its id: the bytes are refused, never left in place."""
    repo = make_repo(tmp_path / "repo")
    with Workspace(repo) as ws:
        ws.snapshot()
        oid = blob_id(repo, TEST_FILE)
        loose = Path(ws._tmp) / "gitdirs" / ".git" / "objects" / oid[:2] / oid[2:]
        loose.chmod(0o644)
        loose.write_bytes(zlib.compress(b"blob %d\0" % len(WEAK_TEST) + WEAK_TEST.encode()))
        ws._seal()  # as if the seal had missed it
        (repo / TEST_FILE).write_text("edited by the attempt\n")
        with pytest.raises(LoopError, match="does not hash to its id"):
            ws.restore()
    assert not (repo / TEST_FILE).exists()  # removed, not left with the store's bytes


@pytest.mark.parametrize(
    "plant",
    ["fsmonitor", "hook", "pager_and_alias", "attributes_filter", "hooks_path"],
)
def test_escape_through_git_via_config_and_hooks_does_not_survive_the_revert(tmp_path, plant):
    """What an attempt writes into .git to run later on the host (core.fsmonitor, a hook, a
    pager or alias, a filter in info/attributes, core.hooksPath pointing into the tree) is
    gone after the restore: .git is the snapshot's byte for byte, and the next ``git status``
    or commit runs nothing."""
    repo = make_repo(tmp_path / "repo")
    script, marker = marker_script(tmp_path, plant)
    before = full_state(repo)
    with Workspace(repo) as ws:
        ws.snapshot()
        dotgit = repo / ".git"
        if plant == "fsmonitor":
            git(repo, "config", "core.fsmonitor", str(script))
        elif plant == "hook":
            for hook in ("pre-commit", "post-checkout", "post-index-change"):
                (dotgit / "hooks" / hook).write_text(f"#!/bin/sh\ntouch {marker}\n")
                (dotgit / "hooks" / hook).chmod(0o755)
        elif plant == "pager_and_alias":
            git(repo, "config", "core.pager", str(script))
            git(repo, "config", "alias.st", f"!{script}")
        elif plant == "attributes_filter":
            git(repo, "config", "filter.evil.clean", str(script))
            git(repo, "config", "filter.evil.smudge", str(script))
            (dotgit / "info").mkdir(exist_ok=True)
            (dotgit / "info" / "attributes").write_text("* filter=evil\n")
        else:
            (repo / "hooks").mkdir()
            (repo / "hooks" / "pre-commit").write_text(f"#!/bin/sh\ntouch {marker}\n")
            (repo / "hooks" / "pre-commit").chmod(0o755)
            git(repo, "config", "core.hooksPath", "hooks")
        (repo / "README.md").write_text("the attempt's edit\n")
        diff = ws.diff()
        assert diff.git_dirs and all(c.path.startswith(".git/") for c in diff.git_dirs)
        assert not any(c.path.startswith(".git") for c in diff.files)
        ws.diff_and_restore()
        assert not marker.exists()  # the workspace's own git runs ran nothing
    assert full_state(repo) == before
    # The user's next git commands run nothing the attempt planted.
    (repo / "README.md").write_text("the user's edit\n")
    git(repo, "status")
    git(repo, "add", "README.md")
    git(repo, "commit", "-q", "-m", "user")
    assert not marker.exists()


def test_the_workspace_runs_nothing_a_repository_config_names(tmp_path):
    """A repository whose own config already names programs (fsmonitor, hooks, filters,
    textconv, an external diff): snapshot, diff and restore run none of them."""
    repo = make_repo(tmp_path / "repo")
    script, marker = marker_script(tmp_path, "config")
    git(repo, "config", "core.fsmonitor", str(script))
    git(repo, "config", "diff.external", str(script))
    git(repo, "config", "diff.evil.textconv", str(script))
    git(repo, "config", "filter.evil.clean", str(script))
    git(repo, "config", "filter.evil.process", str(script))
    (repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    hooks = repo / ".git" / "hooks"
    for hook in ("post-index-change", "pre-auto-gc", "reference-transaction"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / hook).chmod(0o755)
    before = full_state(repo)
    with Workspace(repo) as ws:
        ws.snapshot()
        (repo / "README.md").write_text("edited\n")
        (repo / "new.txt").write_text("new\n")
        diff = ws.diff()
        assert {c.path for c in diff.files} == {"README.md", "new.txt"}
        ws.diff_and_restore()
    assert not marker.exists()
    assert full_state(repo) == before


@pytest.mark.parametrize("replace", ["symlink", "file", "deleted", "unreadable_hooks"])
def test_a_git_dir_replaced_by_the_attempt_comes_back(tmp_path, replace):
    """.git swapped for a symlink to a folder of the attempt's, for a gitfile pointing
    elsewhere, deleted, or its hooks folder locked: restored as it was; nothing is written
    through the symlink."""
    repo = make_repo(tmp_path / "repo")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    before = full_state(repo)
    with Workspace(repo) as ws:
        ws.snapshot()
        dotgit = repo / ".git"
        if replace == "unreadable_hooks":
            (dotgit / "hooks" / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
            os.chmod(dotgit / "hooks", 0)
        else:
            subprocess.run(["rm", "-rf", str(dotgit)], check=True)
            if replace == "symlink":
                os.symlink(elsewhere, dotgit)
            elif replace == "file":
                dotgit.write_text(f"gitdir: {elsewhere}\n")
        ws.restore()
    assert full_state(repo) == before
    assert list(elsewhere.iterdir()) == []


def test_a_nested_repository_s_git_dir_is_restored_too(tmp_path):
    """A nested repository's .git (a vendored checkout) is part of the tree: a hook planted
    there and a commit made there are undone."""
    repo = make_repo(tmp_path / "repo")
    nested = repo / "vendor" / "lib"
    nested.mkdir(parents=True)
    (nested / "lib.py").write_text("x = 1\n")
    git(nested, "init", "-q")
    git(nested, "add", "-A")
    git(nested, "commit", "-q", "-m", "vendored")
    before = full_state(repo)
    with Workspace(repo) as ws:
        ws.snapshot()
        hook = nested / ".git" / "hooks" / "pre-commit"
        hook.write_text("#!/bin/sh\ntouch /tmp/x\n")
        hook.chmod(0o755)
        (nested / "lib.py").write_text("x = 2\n")
        git(nested, "commit", "-q", "-am", "by the attempt")
        diff = ws.diff_and_restore()
        assert {c.path for c in diff.git_dirs} >= {"vendor/lib/.git/hooks/pre-commit"}
    assert full_state(repo) == before


def test_an_attempt_that_commits_and_gcs_is_undone_in_git_too(tmp_path):
    """The attempt's own git work on the user's repository (a commit, a branch, a gc that packs
    and prunes every loose object): refs, reflogs, index and objects come back."""
    repo = make_repo(tmp_path / "repo")
    before = full_state(repo)
    head = git(repo, "rev-parse", "HEAD")
    with Workspace(repo) as ws:
        ws.snapshot()
        (repo / "README.md").write_text("committed by the attempt\n")
        git(repo, "commit", "-q", "-am", "attempt")
        git(repo, "checkout", "-q", "-b", "attempt-branch")
        git(repo, "-c", "gc.reflogExpire=now", "gc", "-q", "--prune=now")
        ws.restore()
    assert full_state(repo) == before
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""


def test_special_files_planted_in_git_are_removed(tmp_path):
    """A FIFO in .git (something that would block the user's next git command) is removed."""
    repo = make_repo(tmp_path / "repo")
    before = full_state(repo)
    with Workspace(repo) as ws:
        ws.snapshot()
        os.mkfifo(repo / ".git" / "index.lock")
        ws.restore()
    assert full_state(repo) == before
    assert not stat.S_ISFIFO(os.lstat(repo / ".git").st_mode)


def test_a_workspace_swapped_for_a_symlink_is_put_back_without_writing_through_it(tmp_path):
    """The attempt moves the workspace away and leaves a symlink to a folder of its own in its
    place: restore removes the symlink and rebuilds the tree from the snapshot; nothing is
    written into the folder the symlink named."""
    repo = make_repo(tmp_path / "repo")
    target = tmp_path / "target"
    target.mkdir()
    before = full_state(repo)
    with Workspace(repo) as ws:
        ws.snapshot()
        repo.rename(tmp_path / "moved")
        os.symlink(target, repo)
        ws.restore()
        assert not repo.is_symlink()
    assert full_state(repo) == before
    assert list(target.iterdir()) == []


def test_a_kept_change_keeps_nothing_but_its_patch(tmp_path):
    """``restore(keep=...)`` (a passing attempt's patch): the kept paths stay, also in a new
    folder; a repository the attempt made inside that folder, a change an ignore rule hid (a
    ``.pth`` in the ignored ``.venv``), runner caches and .git go back."""
    repo = make_repo(tmp_path / "repo")
    (repo / ".venv" / "lib").mkdir(parents=True)
    (repo / ".venv" / "lib" / "site.txt").write_text("the user's venv\n")
    before = full_state(repo)
    with Workspace(repo) as ws:
        ws.snapshot()
        (repo / "newpkg" / "sub").mkdir(parents=True)
        (repo / "newpkg" / "sub" / "mod.py").write_text("x = 1\n")
        (repo / "src" / "pkg" / "mod.py").write_text("def add(a, b):\n    return a + b\n")
        planted = repo / "newpkg" / ".git"
        (planted / "hooks").mkdir(parents=True)
        (planted / "config").write_text("[core]\n\tfsmonitor = /bin/false\n")
        (repo / ".venv" / "lib" / "evil.pth").write_text("import os\n")
        (repo / "src" / "pkg" / "__pycache__").mkdir()
        (repo / "src" / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"\0" * 16)
        (repo / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\n")
        diff = ws.diff()
        keep = {c.path for c in diff.files}
        assert keep == {"newpkg/sub/mod.py", "src/pkg/mod.py"}
        ws.restore(keep=keep)
    expected = dict(before)
    expected["newpkg"] = ("dir",)
    expected["newpkg/sub"] = ("dir",)
    expected["newpkg/sub/mod.py"] = ("file", 0o644, b"x = 1\n")
    expected["src/pkg/mod.py"] = ("file", 0o644, b"def add(a, b):\n    return a + b\n")
    assert full_state(repo) == expected


def make_gitfile_repo(tmp_path: Path) -> tuple[Path, Path]:
    """A committed project whose ``.git`` is a gitfile naming a git dir outside the tree, its
    objects loose (as ``git add`` and ``commit`` leave them)."""
    root = tmp_path / "repo"
    make_project(root)
    (root / "tests").mkdir()
    (root / TEST_FILE).write_text(REAL_TEST)
    gitdir = tmp_path / "outside.git"
    git(root, "init", "-q", f"--separate-git-dir={gitdir}")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    assert not list((gitdir / "objects" / "pack").iterdir())  # every object loose
    return root, gitdir


def test_revert_through_a_gitfile_ignores_the_outside_object_rewritten_and_then_deleted(tmp_path):
    """The objects of a git dir outside the tree are not restored, but the snapshot owns a
    copy of them: an attempt that rewrites the object behind the test file there, weakens the
    file, then deletes every outside object, is still put back from the copy, checked against
    its id."""
    repo, gitdir = make_gitfile_repo(tmp_path)
    before = full_state(repo)
    oid = blob_id(repo, TEST_FILE)
    with Workspace(repo) as ws:
        ws.snapshot()
        copy = Path(ws._tmp) / "outside" / "objects" / oid[:2] / oid[2:]
        assert copy.read_bytes() == (gitdir / "objects" / oid[:2] / oid[2:]).read_bytes()
        path = gitdir / "objects" / oid[:2] / oid[2:]
        path.chmod(0o644)
        path.write_bytes(zlib.compress(b"blob %d\0" % len(WEAK_TEST) + WEAK_TEST.encode()))
        (repo / TEST_FILE).write_text(WEAK_TEST)
        for fan in (gitdir / "objects").iterdir():
            if len(fan.name) == 2:
                for obj in fan.iterdir():
                    obj.chmod(0o644)
                    obj.unlink()
        diff = ws.diff_and_restore()
        assert TEST_FILE in {c.path for c in diff.files}
        assert (repo / TEST_FILE).read_text() == REAL_TEST
        assert ws.diff().files == []
    assert full_state(repo) == before


def test_revert_through_a_gitfile_refuses_the_snapshots_object_copy_rewritten_behind_its_back(
    tmp_path,
):
    """The copy of the outside objects is sealed like the rest of the store: rewriting the
    copied object of the test file (same size, times set back) stops the restore, which
    writes nothing."""
    repo, _gitdir = make_gitfile_repo(tmp_path)
    oid = blob_id(repo, TEST_FILE)
    with Workspace(repo) as ws:
        ws.snapshot()
        copy = Path(ws._tmp) / "outside" / "objects" / oid[:2] / oid[2:]
        st = copy.stat()
        data = zlib.compress(b"blob %d\0" % len(WEAK_TEST) + WEAK_TEST.encode())
        copy.chmod(0o644)
        copy.write_bytes(data)
        os.utime(copy, ns=(st.st_atime_ns, st.st_mtime_ns))
        (repo / TEST_FILE).write_text(WEAK_TEST)
        with pytest.raises(StoreTampered, match="changed by something else"):
            ws.restore()
    assert (repo / TEST_FILE).read_text() == WEAK_TEST  # nothing was written from that store
