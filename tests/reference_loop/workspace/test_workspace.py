"""Workspace: real git, real files. The workspace must come back byte-identical after any attempt,
the diff must be the real change (it applies with `git apply`), and a user's repository around or
inside the workspace must not be touched."""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

import pytest

from reference_loop._workspace import records as workspace_module
from reference_loop._workspace.core import Workspace
from reference_loop.errors import LoopError

pytestmark = pytest.mark.usefixtures("workspace_engine")

BINARY = bytes(range(256)) * 8 + b"\0\xff\x00tail"


def tree_state(root: Path, *, skip_git: bool = True) -> dict[str, tuple]:
    """Everything observable about a tree: kind, permission bits, bytes or link target
    (FIFOs and sockets: their kind only)."""
    state: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if skip_git:
            dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            st = os.lstat(full)
            if stat.S_ISLNK(st.st_mode):
                state[rel] = ("link", os.readlink(full))
            elif stat.S_ISDIR(st.st_mode):
                state[rel] = ("dir",)
            elif not stat.S_ISREG(st.st_mode):
                state[rel] = ("special", stat.S_IFMT(st.st_mode))  # a FIFO is never read
            else:
                state[rel] = ("file", stat.S_IMODE(st.st_mode), Path(full).read_bytes())
    return state


def dir_digest(root: Path) -> dict[str, str]:
    """Bytes of every file under a directory (a user's .git), to prove it was not written."""
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for f in files:
            full = os.path.join(dirpath, f)
            out[os.path.relpath(full, root)] = hashlib.sha256(Path(full).read_bytes()).hexdigest()
    return out


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_GLOBAL=os.devnull,
        GIT_OPTIONAL_LOCKS="0",
        GIT_AUTHOR_NAME="u",
        GIT_AUTHOR_EMAIL="u@x",
        GIT_COMMITTER_NAME="u",
        GIT_COMMITTER_EMAIL="u@x",
        GIT_CEILING_DIRECTORIES=str(cwd.parent),
    )
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    ).stdout


def make_project(root: Path) -> Path:
    """A small project with every kind of entry git can hold, plus empty dirs git cannot."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "mod.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "src" / "pkg" / "__init__.py").write_text("")
    (root / "README.md").write_text("readme\n")
    (root / "data.bin").write_bytes(BINARY)
    (root / "run.sh").write_text("#!/bin/sh\necho run\n")
    os.chmod(root / "run.sh", 0o755)
    (root / "plain.txt").write_text("plain\n")
    os.symlink("src/pkg/mod.py", root / "link_to_mod")
    os.symlink("README.md", root / "link_to_readme")
    (root / "empty").mkdir()
    (root / "nested_empty" / "a" / "b").mkdir(parents=True)
    (root / "old_name.txt").write_text("a file that gets renamed\n" * 20)
    (root / "file_to_dir").write_text("becomes a directory\n")
    (root / "dir_to_file").mkdir()
    (root / "dir_to_file" / "inner.txt").write_text("inner\n")
    (root / "to_delete.txt").write_text("delete me\n")
    return root


def attempt_everything(root: Path) -> None:
    """An attempt that makes every kind of change the workspace must undo."""
    (root / "src" / "pkg" / "mod.py").write_text("def add(a, b):\n    return a + b\n")
    (root / "data.bin").write_bytes(BINARY[::-1] + b"\x01")
    os.chmod(root / "plain.txt", 0o755)
    os.chmod(root / "run.sh", 0o644)
    (root / "to_delete.txt").unlink()
    (root / "new_file.txt").write_text("new\n")
    (root / "new" / "deep" / "er").mkdir(parents=True)
    (root / "new" / "deep" / "er" / "x.py").write_text("x = 1\n")
    (root / "new_empty" / "inner").mkdir(parents=True)
    (root / "empty").rmdir()
    shutil.rmtree(root / "nested_empty" / "a" / "b")
    (root / "link_to_mod").unlink()
    os.symlink("README.md", root / "link_to_mod")  # changed symlink target
    (root / "link_to_readme").unlink()
    (root / "link_to_readme").write_text("now a regular file\n")  # symlink -> file
    os.rename(root / "old_name.txt", root / "new_name.txt")
    (root / "file_to_dir").unlink()
    (root / "file_to_dir").mkdir()
    (root / "file_to_dir" / "child.txt").write_text("child\n")
    shutil.rmtree(root / "dir_to_file")
    (root / "dir_to_file").write_text("was a directory\n")
    (root / "new_bin.dat").write_bytes(b"\x00\x01\x02" * 100)


def fresh_copy(template: Path, root: Path) -> Path:
    """A copy at ``root`` of a committed repository, as if committed there just now: every file
    and folder new (``cp`` without ``-p``: new times and inodes, modes and links kept), then
    the index refreshed to their stat data as ``git commit`` leaves it, racy entries included."""
    subprocess.run(["cp", "-R", "--", str(template), str(root)], check=True)
    git(root, "update-index", "-q", "--refresh")
    return root


@pytest.fixture(scope="session")
def committed_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``make_project`` committed by git once per session (init, add, commit: about a third of
    a test's CPU here); ``project`` takes a ``fresh_copy`` of it."""
    root = make_project(tmp_path_factory.mktemp("committed") / "proj")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "start")
    return root


@pytest.fixture(params=["plain", "repository", "dirty_repository"])
def project(tmp_path, request):
    """The project as a plain directory, as the top of a clean repository, and of one whose
    work tree differs from its index (an edited file, an untracked one): a repository's
    first snapshot and every look after it are made by hand, the others through git."""
    if request.param == "plain":
        root = make_project(tmp_path / "proj")
    else:
        root = fresh_copy(request.getfixturevalue("committed_project"), tmp_path / "proj")
    if request.param == "dirty_repository":
        (root / "README.md").write_text("edited by the user, not added\n")
        (root / "notes.txt").write_text("not tracked\n")
    return root


@pytest.fixture(params=[False, True], ids=["fresh_tree", "old_tree"])
def any_age_project(project, request, monkeypatch):
    """The project as just written, and as a tree whose directories nobody touched lately
    (scans and restores then trust unchanged directory ctimes instead of listing every
    directory). A directory's ctime cannot be set back, so the test waits out "lately": 50 ms
    where timestamps have a fraction, and the 2 s of whole-second filesystems is shortened to
    the same rather than every test waiting 2 s."""
    if request.param:
        age_dirs(project)
        monkeypatch.setattr(workspace_module, "_RACY_NS", 50_000_000)
        time.sleep(0.1)
    return project


def age_dirs(root: Path, seconds: int = 3600) -> None:
    """Backdate every directory's mtime, as in a tree nobody touched for a while."""
    past = time.time() - seconds
    for dirpath, _dirs, _files in os.walk(root):
        os.utime(dirpath, (past, past), follow_symlinks=False)


def test_a_directory_changed_within_its_filesystems_timestamp_tick_counts_as_moved():
    """Recorded (inode, ctime, when): a directory whose ctime is that close to when it was
    recorded could change again without its ctime moving, so it is listed anyway. The margin
    follows the timestamps' granularity: whole seconds (2 s), or fractions (the coarse clock's
    few ms, with room)."""
    from types import SimpleNamespace

    fine = 1_700_000_000_123_456_789
    whole = 1_700_000_000_000_000_000
    moved = workspace_module._moved
    for ctime, margin in ((fine, workspace_module._RACY_FINE_NS), (whole, 2_000_000_000)):
        st = SimpleNamespace(st_ino=7, st_ctime_ns=ctime)
        assert moved(st, 7, ctime, ctime + margin - 1)
        assert not moved(st, 7, ctime, ctime + margin + 1)
        assert moved(st, 8, ctime, ctime + 10 * margin)  # another inode
        assert moved(SimpleNamespace(st_ino=7, st_ctime_ns=ctime + 1), 7, ctime, ctime + margin)


@pytest.mark.parametrize("combined", [False, True], ids=["diff_then_restore", "diff_and_restore"])
def test_restore_is_byte_exact_after_every_kind_of_change(any_age_project, combined):
    project = any_age_project
    before = tree_state(project)
    with Workspace(project) as ws:
        ws.snapshot()
        attempt_everything(project)
        (project / "src" / "pkg" / "new_empty_sub").mkdir()
        assert tree_state(project) != before
        if combined:
            diff = ws.diff_and_restore()
        else:
            diff = ws.diff()
            ws.restore()
        assert tree_state(project) == before
        assert ws.diff().files == []
    assert {c.path for c in diff.files} >= {"src/pkg/mod.py", "new_name.txt", "to_delete.txt"}


def test_diff_names_every_kind_of_change(any_age_project):
    project = any_age_project
    with Workspace(project) as ws:
        ws.snapshot()
        attempt_everything(project)
        diff = ws.diff()
        ws.restore()
    by_path = {c.path: c for c in diff.files}
    assert by_path["src/pkg/mod.py"].status == "M"
    assert by_path["data.bin"].status == "M"
    assert by_path["plain.txt"].status == "M"  # mode only
    assert by_path["run.sh"].status == "M"
    assert by_path["to_delete.txt"].status == "D"
    assert by_path["new_file.txt"].status == "A"
    assert by_path["new/deep/er/x.py"].status == "A"
    assert by_path["link_to_mod"].status == "M"  # symlink target changed
    assert by_path["link_to_readme"].status == "T"  # symlink became a file
    assert by_path["new_name.txt"].status == "R"
    assert by_path["new_name.txt"].old_path == "old_name.txt"
    assert by_path["file_to_dir/child.txt"].status == "A"
    assert by_path["file_to_dir"].status == "D"
    assert by_path["dir_to_file"].status == "A"
    assert by_path["dir_to_file/inner.txt"].status == "D"
    text = diff.text
    assert "-    return a - b\n+    return a + b" in text
    assert "GIT binary patch" in text
    assert "old mode 100644\nnew mode 100755" in text
    assert "rename from old_name.txt\nrename to new_name.txt" in text
    assert "-src/pkg/mod.py\n\\ No newline at end of file\n+README.md" in text
    assert diff.raw.decode("utf-8") == text


def test_in_a_repository_changes_are_found_without_staging_and_as_git_finds_them(
    project, workspace_engine
):
    """At a repository's top the looks after the first snapshot hash the changed files by
    hand and leave the private index alone; what they find must be what git's own staging
    finds (a second workspace, made to stage through git, looks at the same attempt)."""
    if not (project / ".git").exists():
        pytest.skip("a plain directory's looks go through git's staging")
    if workspace_engine == "git":
        pytest.skip("the git engine always stages: this is the fast engine's hand path")
    before = tree_state(project)
    by_hand, by_git = Workspace(project), Workspace(project)
    try:
        by_hand.snapshot()
        by_git.snapshot()
        by_git._model = None  # the reference: stage through git
        private = Path(by_hand._env["GIT_DIR"]).parent
        # git reads the index's mtime for its racy-entry check (the shared part's it bumps).
        index_state = _index_state(private)
        attempt_everything(project)
        hand_diff, git_diff = by_hand.diff(), by_git.diff()
        assert hand_diff.files == git_diff.files
        assert hand_diff.text == git_diff.text
        assert _index_state(private) == index_state
        again = by_hand.diff_and_restore()
        assert again.files == hand_diff.files
        assert tree_state(project) == before
        assert by_hand.diff().files == []
    finally:
        by_hand.close()
        by_git.close()


def _index_state(private: Path) -> tuple:
    shared = sorted((private / "git").glob("sharedindex.*"))
    index = private / "index"
    return index.read_bytes(), index.stat().st_mtime_ns, [p.read_bytes() for p in shared]


def test_diff_is_real_it_applies_to_the_snapshot_and_reproduces_the_attempt(project, tmp_path):
    with Workspace(project) as ws:
        ws.snapshot()
        attempt_everything(project)
        # git cannot carry empty dirs; drop the ones the attempt made so the states compare.
        shutil.rmtree(project / "new_empty")
        after = tree_state(project)
        diff = ws.diff()
        ws.restore()
    copy = tmp_path / "copy"
    shutil.copytree(project, copy, symlinks=True)
    patch = tmp_path / "attempt.patch"
    patch.write_bytes(diff.raw)
    git(copy, "apply", "--binary", str(patch))
    got = tree_state(copy)
    # Empty dirs were removed by the attempt, which a patch cannot say; compare everything else.
    for gone in ("empty", "nested_empty/a/b"):
        got.pop(gone)
    assert got == after


def test_restore_after_an_exception_mid_attempt(project):
    before = tree_state(project)
    ws = Workspace(project)
    ws.snapshot()
    with pytest.raises(RuntimeError):
        try:
            (project / "data.bin").write_bytes(b"half-written")
            (project / "half" / "way").mkdir(parents=True)
            (project / "half" / "way" / "f.txt").write_text("x")
            os.chmod(project / "README.md", 0o700)
            raise RuntimeError("attempter crashed mid-edit")
        finally:
            ws.restore()
            ws.close()
    assert tree_state(project) == before


def test_restore_brings_back_a_workspace_the_attempt_deleted_entirely(project):
    """Its .git too: the snapshot owns a copy of every object it reads."""
    before = tree_state(project, skip_git=False)
    with Workspace(project) as ws:
        ws.snapshot()
        shutil.rmtree(project)
        with pytest.raises(LoopError, match="workspace directory is gone"):
            ws.diff()
        ws.restore()
    assert tree_state(project, skip_git=False) == before


def test_a_nested_repository_in_the_workspace_is_left_alone(project):
    nested = project / "vendor" / "lib"
    nested.mkdir(parents=True)
    (nested / "lib.py").write_text("x = 1\n")
    git(nested, "init", "-q")
    git(nested, "add", "-A")
    git(nested, "commit", "-q", "-m", "vendored")
    nested_git = dir_digest(nested / ".git")
    before = tree_state(project)
    with Workspace(project) as ws:
        ws.snapshot()
        (project / "README.md").write_text("changed\n")
        diff = ws.diff_and_restore()
    assert [c.path for c in diff.files] == ["README.md"]
    assert tree_state(project) == before
    assert dir_digest(nested / ".git") == nested_git


def test_repeated_attempts_each_restore_to_the_same_snapshot(project):
    before = tree_state(project)
    with Workspace(project) as ws:
        ws.snapshot()
        for i in range(3):
            (project / "README.md").write_text(f"attempt {i}\n")
            (project / f"attempt_{i}.txt").write_text("x")
            diff = ws.diff() if i % 2 else ws.diff_and_restore()
            assert {c.path for c in diff.files} == {"README.md", f"attempt_{i}.txt"}
            ws.restore()  # the loop's `finally`: after diff_and_restore it has nothing to do
            assert tree_state(project) == before
            if i % 2 == 0:
                assert ws.last_restored == []


def test_empty_dirs_present_at_snapshot_are_kept_and_new_ones_removed(any_age_project):
    project = any_age_project
    with Workspace(project) as ws:
        ws.snapshot()
        (project / "brand" / "new" / "tree").mkdir(parents=True)
        (project / "empty" / "sub").mkdir()
        (project / "nested_empty" / "a" / "b" / "c").mkdir()
        ws.restore()
    assert not (project / "brand").exists()
    assert (project / "empty").is_dir() and not any((project / "empty").iterdir())
    assert (project / "nested_empty" / "a" / "b").is_dir()
    assert not (project / "nested_empty" / "a" / "b" / "c").exists()


def test_a_new_snapshot_takes_in_directory_changes_made_since_the_last(any_age_project):
    project = any_age_project
    with Workspace(project) as ws:
        ws.snapshot()
        (project / "empty").rmdir()
        (project / "made_later" / "inner").mkdir(parents=True)
        tree = ws.snapshot()
        assert ws.snapshot() == tree
        (project / "made_later" / "inner").rmdir()
        (project / "empty").mkdir()
        ws.restore()
    assert (project / "made_later" / "inner").is_dir()
    assert not (project / "empty").exists()


def test_a_deleted_file_that_comes_back_is_seen_by_every_later_scan(any_age_project):
    """Later scans stat only the files the private index holds and stage by name only names
    the snapshot did not have: a deleted file that comes back (written by the restore, or
    made again by the attempt) is in neither, unless the workspace remembers it."""
    project = any_age_project
    with Workspace(project) as ws:
        ws.snapshot()
        (project / "src" / "pkg" / "mod.py").unlink()
        assert [(c.path, c.status) for c in ws.diff_and_restore().files] == [
            ("src/pkg/mod.py", "D")
        ]
        (project / "src" / "pkg" / "mod.py").write_text("edited in place after the restore\n")
        assert [(c.path, c.status) for c in ws.diff_and_restore().files] == [
            ("src/pkg/mod.py", "M")
        ]
        assert ws.diff().files == []
        with open(project / "src" / "pkg" / "mod.py", "a") as fh:
            fh.write("# appended\n")
        assert [(c.path, c.status) for c in ws.diff().files] == [("src/pkg/mod.py", "M")]
        ws.restore()
        # Deleted, seen, then made again by the attempt itself: the next diff sees it back.
        (project / "README.md").unlink()
        assert [(c.path, c.status) for c in ws.diff().files] == [("README.md", "D")]
        (project / "README.md").write_text("readme made again\n")
        assert [(c.path, c.status) for c in ws.diff().files] == [("README.md", "M")]
        ws.restore()
        assert ws.diff().files == []


def test_new_files_deep_in_new_and_old_directories_are_all_found(any_age_project):
    project = any_age_project
    with Workspace(project) as ws:
        ws.snapshot()
        (project / "src" / "pkg" / "added.py").write_text("a\n")
        (project / "src" / "fresh" / "deeper").mkdir(parents=True)
        (project / "src" / "fresh" / "deeper" / "f.txt").write_text("f\n")
        os.symlink("../README.md", project / "src" / "fresh" / "link")
        (project / "nested_empty" / "a" / "b" / "inside.txt").write_text("i\n")
        found = {(c.path, c.status) for c in ws.diff_and_restore().files}
    assert found == {
        ("src/pkg/added.py", "A"),
        ("src/fresh/deeper/f.txt", "A"),
        ("src/fresh/link", "A"),
        ("nested_empty/a/b/inside.txt", "A"),
    }


def test_a_file_planted_behind_a_directory_mtime_set_back_is_still_found(any_age_project):
    """An attempt can set a directory's mtime back after adding a file to it (utime), never
    its ctime: the planted file is in the diff and the restore removes it."""
    project = any_age_project
    pycache = project / "src" / "pkg" / "__pycache__"
    pycache.mkdir()
    (pycache / "mod.cpython-311.pyc").write_bytes(b"compiled")
    age_dirs(project)
    time.sleep(0.1)
    before = tree_state(project)
    with Workspace(project, default_ignore=False) as ws:
        ws.snapshot()
        pkg = project / "src" / "pkg"
        for folder, name in ((pycache, "planted.cpython-311.pyc"), (pkg, "planted.py")):
            st = os.stat(folder)
            (folder / name).write_bytes(b"import os\n")
            os.utime(folder, ns=(st.st_atime_ns, st.st_mtime_ns))
        found = {c.path for c in ws.diff_and_restore().files}
    assert found == {
        "src/pkg/__pycache__/planted.cpython-311.pyc",
        "src/pkg/planted.py",
    }
    assert tree_state(project) == before


def test_symlink_to_directory_is_restored_as_a_link_and_never_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("outside the workspace\n")
    root = tmp_path / "ws"
    (root / "real").mkdir(parents=True)
    (root / "real" / "f.txt").write_text("f\n")
    before = tree_state(root)
    with Workspace(root) as ws:
        ws.snapshot()
        # Replace a real directory by a symlink pointing outside: restore must remove the link,
        # not write the snapshot's files through it into the outside directory.
        shutil.rmtree(root / "real")
        os.symlink(outside, root / "real")
        ws.restore()
    assert tree_state(root) == before
    assert sorted(p.name for p in outside.iterdir()) == ["keep.txt"]


def test_ignored_files_are_not_diffed_but_restore_undoes_them_too(project):
    # The ignore list keeps caches out of the patch; it never keeps an attempt's change to them.
    (project / ".gitignore").write_text("*.log\n")
    (project / "keep.log").write_text("old log\n")
    (project / "doomed.log").write_text("will be deleted by the attempt\n")
    before = tree_state(project)
    with Workspace(project, ignore=["build/"]) as ws:
        ws.snapshot()
        (project / "keep.log").write_text("new log\n")
        (project / "doomed.log").unlink()
        (project / "build").mkdir()
        (project / "build" / "out.o").write_bytes(b"\x7fELF")
        (project / "src" / "pkg" / "__pycache__").mkdir()
        (project / "src" / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"pyc")
        (project / ".pytest_cache").mkdir()
        (project / ".pytest_cache" / "v").write_text("cache")
        (project / "README.md").write_text("changed\n")
        diff = ws.diff()
        ws.restore()
    assert [c.path for c in diff.files] == ["README.md"]
    assert "log" not in diff.text and "pyc" not in diff.text
    assert tree_state(project) == before


def test_a_new_gitignore_cannot_hide_a_new_file_from_restore(project):
    before = tree_state(project)
    with Workspace(project) as ws:
        ws.snapshot()
        (project / ".gitignore").write_text("sneaky.txt\n")
        (project / "sneaky.txt").write_text("hidden by the attempt's own ignore rule\n")
        ws.restore()
    assert tree_state(project) == before


def _user_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "user_repo"
    make_project(repo / "sub")
    (repo / "top.txt").write_text("top\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    (repo / "top.txt").write_text("stashed change\n")
    git(repo, "stash", "-q")
    (repo / "top.txt").write_text("staged change\n")
    git(repo, "add", "top.txt")
    (repo / "sub" / "README.md").write_text("unstaged user edit\n")
    (repo / "untracked_by_user.txt").write_text("u\n")
    return repo


def _repo_fingerprint(repo: Path) -> tuple:
    index = (repo / ".git" / "index").read_bytes()
    return (
        index,
        dir_digest(repo / ".git"),
        git(repo, "status", "--porcelain"),
        git(repo, "stash", "list"),
        git(repo, "rev-parse", "HEAD"),
    )


@pytest.mark.parametrize("where", ["subdir", "repo_root"])
def test_inside_a_user_repo_its_index_head_stash_and_git_dir_are_untouched(tmp_path, where):
    repo = _user_repo(tmp_path)
    root = repo / "sub" if where == "subdir" else repo
    fingerprint = _repo_fingerprint(repo)
    before = tree_state(root)
    with Workspace(root) as ws:
        ws.snapshot()
        attempt_everything(repo / "sub")
        (root / "extra.txt").write_text("x\n")
        diff = ws.diff()
        ws.restore()
    assert tree_state(root) == before
    assert _repo_fingerprint(repo) == fingerprint
    assert all(not c.path.startswith(".git/") and c.path != ".git" for c in diff.files)
    assert ".git/" not in diff.text


def test_files_the_users_index_does_not_track_are_in_the_first_snapshot(tmp_path):
    """At a repository's top the first snapshot stats what the user's index tracks and stages
    the rest by name: untracked, ignored, and a nested repository's files must all be in it."""
    repo = _user_repo(tmp_path)
    (repo / ".gitignore").write_text("*.log\nbuild/\n")
    (repo / "debug.log").write_text("ignored by the user\n")
    (repo / "build" / "deep").mkdir(parents=True)
    (repo / "build" / "deep" / "out.o").write_bytes(b"\0obj")
    os.symlink("top.txt", repo / "untracked_link")
    (repo / "inner").mkdir()
    git(repo / "inner", "init", "-q")
    (repo / "inner" / "own.txt").write_text("nested repository's file\n")
    fingerprint = _repo_fingerprint(repo)
    before = tree_state(repo)
    gone = [".gitignore", "debug.log", "build", "untracked_link", "inner/own.txt"]
    with Workspace(repo) as ws:
        ws.snapshot()
        for rel in gone:
            target = repo / rel
            shutil.rmtree(
                target
            ) if target.is_dir() and not target.is_symlink() else target.unlink()
        (repo / "untracked_by_user.txt").write_text("edited\n")
        diff = ws.diff_and_restore()
    assert {(c.path, c.status) for c in diff.files} >= {
        (".gitignore", "D"),
        ("untracked_link", "D"),
        ("inner/own.txt", "D"),
        ("untracked_by_user.txt", "M"),
    }
    assert tree_state(repo) == before
    assert _repo_fingerprint(repo) == fingerprint


@pytest.mark.parametrize("state", ["clean", "untracked", "edited"])
def test_a_just_committed_repository_snapshots_its_work_tree_not_its_cached_tree(tmp_path, state):
    """Right after a commit the user's index caches the tree; the snapshot may reuse it only
    when the work tree holds nothing else."""
    repo = make_project(tmp_path / "repo")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    committed = git(repo, "rev-parse", "HEAD^{tree}").strip()
    if state == "untracked":
        (repo / "src" / "pkg" / "untracked.py").write_text("u = 1\n")
    elif state == "edited":
        (repo / "README.md").write_text("edited after the commit, longer than before\n")
    fingerprint = _repo_fingerprint(repo)
    before = tree_state(repo)
    with Workspace(repo) as ws:
        tree = ws.snapshot()
        assert (tree == committed) == (state == "clean")
        for path in ("README.md", "src/pkg/mod.py", "src/pkg/untracked.py"):
            if (repo / path).exists():
                (repo / path).unlink()
        ws.diff_and_restore()
    assert tree_state(repo) == before
    assert _repo_fingerprint(repo) == fingerprint


def test_the_repository_layout_is_read_as_git_reads_it_or_left_to_git(tmp_path):
    """The first snapshot reads where a repository's git dir is from its layout; wherever
    git could see it otherwise (a linked worktree, a moved work tree, a bare repository,
    included config, extensions) the question goes to `git rev-parse`."""
    from reference_loop._workspace.gitio import _plain_layout

    def seen_by_git(root: Path) -> tuple[str, str]:
        out = git(root, "rev-parse", "--path-format=absolute", "--git-dir", "--git-common-dir")
        gitdir, common = out.splitlines()
        return os.path.realpath(gitdir), os.path.realpath(common)

    plain = tmp_path / "plain"
    plain.mkdir()
    git(plain, "init", "-q")
    separate = tmp_path / "separate"
    separate.mkdir()
    git(separate, "init", "-q", f"--separate-git-dir={tmp_path / 'separate.git'}")
    relative = tmp_path / "relative"
    relative.mkdir()
    git(relative, "init", "-q", f"--separate-git-dir={tmp_path / 'relative.git'}")
    (relative / ".git").write_text("gitdir: ../relative.git\n")
    for root in (plain, separate, relative):
        found = _plain_layout(str(root))
        assert found is not None
        assert tuple(os.path.realpath(p) for p in found) == seen_by_git(root)

    (plain / "f").write_text("f\n")
    git(plain, "add", "f")
    git(plain, "commit", "-q", "-m", "f")
    linked = tmp_path / "linked"
    git(plain, "worktree", "add", "-q", str(linked))
    assert _plain_layout(str(linked)) is None
    for line in (
        "[core]\n\tworktree = /elsewhere\n",
        "[core]\n\tbare = true\n",
        "[include]\n\tpath = other\n",
        "[extensions]\n\tobjectformat = sha256\n",
    ):
        (separate / ".git").write_text(f"gitdir: {tmp_path / 'separate.git'}\n")
        config = tmp_path / "separate.git" / "config"
        kept = config.read_text()
        config.write_text(kept + line)
        assert _plain_layout(str(separate)) is None
        config.write_text(kept)
    assert _plain_layout(str(tmp_path)) is None  # no .git at all

    before = tree_state(linked)
    with Workspace(linked) as ws:
        # A linked worktree's objects live outside the tree: the snapshot reads its own copy.
        assert ws.seeded
        alternate = Path(ws._env["GIT_DIR"]) / "objects" / "info" / "alternates"
        assert alternate.read_text().startswith(ws._tmp)
        ws.snapshot()
        (linked / "f").write_text("changed\n")
        assert [c.path for c in ws.diff_and_restore().files] == ["f"]
    assert tree_state(linked) == before


def test_an_untracked_file_beside_a_deleted_tracked_one_is_in_the_first_snapshot(tmp_path):
    """As many files on disk as paths in the index does not mean nothing is untracked when the
    user deleted a tracked file and made a new one."""
    repo = make_project(tmp_path / "repo")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    (repo / "plain.txt").unlink()
    (repo / "made_by_user.txt").write_text("untracked\n")
    before = tree_state(repo)
    with Workspace(repo) as ws:
        ws.snapshot()
        (repo / "made_by_user.txt").unlink()
        (repo / "plain.txt").write_text("back\n")
        found = {(c.path, c.status) for c in ws.diff_and_restore().files}
    assert found == {("made_by_user.txt", "D"), ("plain.txt", "A")}
    assert tree_state(repo) == before


def test_inherited_git_environment_cannot_redirect_the_workspace(tmp_path, monkeypatch):
    repo = _user_repo(tmp_path)
    fingerprint = _repo_fingerprint(repo)
    # A caller running inside a git hook has these set; they must not reach the private store.
    monkeypatch.setenv("GIT_DIR", str(repo / ".git"))
    monkeypatch.setenv("GIT_INDEX_FILE", str(repo / ".git" / "index"))
    monkeypatch.setenv("GIT_WORK_TREE", str(repo))
    root = tmp_path / "elsewhere"
    make_project(root)
    before = tree_state(root)
    with Workspace(root) as ws:
        ws.snapshot()
        attempt_everything(root)
        ws.diff()
        ws.restore()
    assert tree_state(root) == before
    monkeypatch.delenv("GIT_DIR")
    monkeypatch.delenv("GIT_INDEX_FILE")
    monkeypatch.delenv("GIT_WORK_TREE")
    assert _repo_fingerprint(repo) == fingerprint


def test_user_config_and_gitattributes_cannot_change_the_bytes(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".gitconfig").write_text("[core]\n\tautocrlf = true\n\tfilemode = false\n")
    (home / ".config" / "git" / "ignore").write_text("*.txt\n")
    (home / ".config" / "git" / "attributes").write_text("* text=auto eol=crlf\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".gitattributes").write_text("* text eol=crlf\n*.md ident\n")
    (root / "crlf.txt").write_bytes(b"windows\r\nline\r\n")
    (root / "lf.md").write_bytes(b"$Id$\nunix\n")
    before = tree_state(root)
    with Workspace(root) as ws:
        ws.snapshot()
        (root / "crlf.txt").write_bytes(b"changed\n")
        (root / "lf.md").write_bytes(b"changed\r\n")
        os.chmod(root / "lf.md", 0o755)
        diff = ws.diff()
        ws.restore()
    assert {c.path for c in diff.files} == {"crlf.txt", "lf.md"}  # *.txt not globally ignored
    assert tree_state(root) == before


def test_missing_git_is_a_clear_error(tmp_path, monkeypatch):
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    monkeypatch.setenv("PATH", str(empty_bin))
    with pytest.raises(LoopError, match="git is not installed or not on PATH"):
        Workspace(tmp_path)


def test_diff_or_restore_without_a_snapshot_is_refused(project):
    with Workspace(project) as ws:
        with pytest.raises(LoopError, match="no snapshot"):
            ws.restore()
        with pytest.raises(LoopError, match="no snapshot"):
            ws.diff()


def test_not_a_directory_is_refused(tmp_path):
    with pytest.raises(LoopError, match="not a directory"):
        Workspace(tmp_path / "missing")


def test_private_git_dir_lives_outside_the_workspace_and_close_removes_it(project):
    had_git = (project / ".git").exists()
    ws = Workspace(project)
    ws.snapshot()
    private = Path(ws._env["GIT_DIR"])
    assert private.is_dir()
    assert project not in private.parents
    assert (project / ".git").exists() == had_git
    ws.close()
    assert not private.parent.exists()
    ws.close()  # idempotent


def test_restore_touches_only_the_changed_paths_of_a_big_tree(tmp_path):
    root = tmp_path / "big"
    for d in range(40):
        (root / f"d{d:02d}").mkdir(parents=True)
        for f in range(20):
            (root / f"d{d:02d}" / f"f{f:02d}.txt").write_text(f"{d} {f}\n" * 10)
    with Workspace(root) as ws:
        ws.snapshot()
        changed = {"d00/f00.txt", "d17/f13.txt", "d39/f19.txt"}
        for rel in changed:
            (root / rel).write_text("changed\n")
        (root / "d05" / "added.txt").write_text("new\n")
        (root / "d06" / "f06.txt").unlink()
        untouched = {
            str(p.relative_to(root)): os.lstat(p)
            for p in root.rglob("*.txt")
            if str(p.relative_to(root)) not in changed | {"d05/added.txt"}
        }
        ws.restore()
        assert sorted(ws.last_restored) == sorted(changed | {"d05/added.txt", "d06/f06.txt"})
    # A rewritten file gets a new ctime; the 796 untouched ones keep theirs, and their inode.
    for rel, st in untouched.items():
        now = os.lstat(root / rel)
        assert (now.st_ino, now.st_ctime_ns, now.st_mtime_ns) == (
            st.st_ino,
            st.st_ctime_ns,
            st.st_mtime_ns,
        ), rel
    assert len(untouched) == 796


def test_snapshot_returns_a_tree_id_and_is_stable(project):
    with Workspace(project) as ws:
        first = ws.snapshot()
        assert len(first) == 40 and int(first, 16) >= 0
        assert ws.snapshot() == first
        (project / "README.md").write_text("x\n")
        second = ws.snapshot()
        assert second != first
        (project / "README.md").write_text("y\n")
        ws.restore()
    assert (project / "README.md").read_text() == "x\n"  # back to the latest snapshot


def test_odd_file_names_survive_diff_and_restore(tmp_path):
    root = tmp_path / "odd"
    root.mkdir()
    names = [
        "with space.txt",
        "ünïcödé.txt",
        "new\nline.txt",
        "-leading-dash",
        'quote"s.txt',
        "tab\there",
        os.fsdecode(b"latin1-\xff.txt"),
    ]
    for name in names:
        (root / name).write_text(f"{name!r}\n")
    before = tree_state(root)
    with Workspace(root) as ws:
        ws.snapshot()
        for name in names[:3]:
            (root / name).write_text("changed\n")
        for name in names[3:5]:
            (root / name).unlink()
        (root / "new \u2603 file\n.txt").write_text("added\n")
        os.rename(root / names[5], root / "renamed\ttab")
        diff = ws.diff_and_restore()
    assert tree_state(root) == before
    by_path = {c.path: c for c in diff.files}
    for name in names[:3]:
        assert by_path[name].status == "M"
    for name in names[3:5]:
        assert by_path[name].status == "D"
    assert by_path["new \u2603 file\n.txt"].status == "A"
    assert by_path["renamed\ttab"].old_path == "tab\there"


def _lock_dir(path: Path) -> bool:
    """Make a directory unwritable even for root (chattr +i), else by mode; False if neither."""
    if os.geteuid() != 0:
        os.chmod(path, 0o555)
        return True
    chattr = shutil.which("chattr")
    if not chattr:
        return False
    return (
        subprocess.run([chattr, "+i", str(path)], check=False, capture_output=True).returncode == 0
    )


def _unlock_dir(path: Path) -> None:
    if os.geteuid() == 0:
        subprocess.run(["chattr", "-i", str(path)], check=False, capture_output=True)
    else:
        os.chmod(path, 0o755)


def test_a_directory_the_attempt_locked_gives_one_clear_error_not_a_traceback(tmp_path):
    root = tmp_path / "ws"
    (root / "locked").mkdir(parents=True)
    (root / "locked" / "f.txt").write_text("f\n")
    with Workspace(root) as ws:
        ws.snapshot()
        (root / "locked" / "f.txt").unlink()
        if not _lock_dir(root / "locked"):
            pytest.skip("cannot make a directory unwritable here (no chattr)")
        try:
            with pytest.raises(LoopError, match=r"restore failed at .*locked/f\.txt: "):
                ws.restore()
        finally:
            _unlock_dir(root / "locked")
        ws.restore()  # once the directory is writable again, restore completes
    assert (root / "locked" / "f.txt").read_text() == "f\n"


# -- attacks: what an attempt leaves behind must not outlive the restore ------------------------


@pytest.mark.parametrize("with_commit", [False, True], ids=["no_commit", "with_commit"])
def test_a_git_init_by_the_attempt_is_snapshotted_diffed_and_removed(project, with_commit):
    before = tree_state(project, skip_git=False)
    with Workspace(project) as ws:
        ws.snapshot()
        vendored = project / "vendored"
        vendored.mkdir()
        (vendored / "lib.py").write_text("planted = True\n")
        git(vendored, "init", "-q")
        if with_commit:
            git(vendored, "add", "-A")
            git(vendored, "commit", "-q", "-m", "x")
        (project / "README.md").write_text("changed\n")
        diff = ws.diff_and_restore()
    assert {c.path for c in diff.files} == {"README.md", "vendored/lib.py"}
    assert tree_state(project, skip_git=False) == before


def test_files_inside_a_nested_repository_are_restored_and_its_git_dir_left_alone(project):
    nested = project / "vendor" / "lib"
    nested.mkdir(parents=True)
    (nested / "lib.py").write_text("x = 1\n")
    git(nested, "init", "-q")
    git(nested, "add", "-A")
    git(nested, "commit", "-q", "-m", "vendored")
    nested_git = dir_digest(nested / ".git")
    before = tree_state(project)
    with Workspace(project) as ws:
        ws.snapshot()
        (nested / "lib.py").write_text("x = 2\n")
        (nested / "new.py").write_text("y = 1\n")
        diff = ws.diff_and_restore()
    assert {c.path for c in diff.files} == {"vendor/lib/lib.py", "vendor/lib/new.py"}
    assert tree_state(project) == before
    assert dir_digest(nested / ".git") == nested_git


def test_a_planted_pyc_in_pycache_does_not_survive_the_restore(project):
    # An unchecked-hash .pyc would make the next attempt import the planted code, not the source.
    cache = project / "src" / "pkg" / "__pycache__"
    cache.mkdir()
    (cache / "mod.cpython-311.pyc").write_bytes(b"genuine cache")
    before = tree_state(project)
    with Workspace(project) as ws:
        ws.snapshot()
        (cache / "mod.cpython-311.pyc").write_bytes(b"planted: return a + b")
        (cache / "__init__.cpython-311.pyc").write_bytes(b"planted too")
        fresh = project / "__pycache__"
        fresh.mkdir()
        (fresh / "check.cpython-311.pyc").write_bytes(b"planted in a new cache dir")
        diff = ws.diff_and_restore()
    assert diff.files == []  # caches stay out of the patch ...
    assert tree_state(project) == before  # ... but not out of the restore


@pytest.mark.parametrize("where", ["root", "subdir", "file_in_subdir"])
def test_a_git_dir_the_attempt_creates_anywhere_is_removed(project, where):
    before = tree_state(project, skip_git=False)
    with Workspace(project) as ws:
        ws.snapshot()
        if where == "root":
            git(project, "init", "-q")
        elif where == "subdir":
            git(project / "src", "init", "-q")
        else:
            (project / "src" / "pkg" / ".git").write_text("gitdir: /somewhere/else\n")
        ws.restore()
    assert tree_state(project, skip_git=False) == before


def test_a_hard_link_to_a_file_outside_is_replaced_not_written_through(tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("outside the workspace\n")
    root = tmp_path / "ws"
    root.mkdir()
    (root / "f.txt").write_text("inside\n")
    with Workspace(root) as ws:
        ws.snapshot()
        (root / "f.txt").unlink()
        os.link(outside, root / "f.txt")
        ws.restore()
    assert (root / "f.txt").read_text() == "inside\n"
    assert outside.read_text() == "outside the workspace\n"
    assert os.lstat(root / "f.txt").st_nlink == 1


def test_a_large_file_is_named_in_the_diff_not_inlined(project):
    from reference_loop._workspace.gitio import BIG_FILE_BYTES

    before = tree_state(project)
    with Workspace(project) as ws:
        ws.snapshot()
        (project / "big.bin").write_bytes(b"\0" * (BIG_FILE_BYTES + 1))
        (project / "README.md").write_text("changed\n")
        diff = ws.diff_and_restore()
    assert {c.path: c.status for c in diff.files} == {"big.bin": "A", "README.md": "M"}
    assert "Binary files /dev/null and b/big.bin differ" in diff.text
    assert "+changed" in diff.text
    assert len(diff.raw) < 10_000
    assert tree_state(project) == before


def test_an_assume_unchanged_file_in_the_users_index_is_still_restored(tmp_path):
    repo = _user_repo(tmp_path)
    git(repo, "update-index", "--assume-unchanged", "sub/plain.txt")
    fingerprint = _repo_fingerprint(repo)
    before = tree_state(repo)
    with Workspace(repo) as ws:
        assert ws.seeded
        ws.snapshot()
        (repo / "sub" / "plain.txt").write_text("edited behind git's back\n")
        diff = ws.diff_and_restore()
    assert [c.path for c in diff.files] == ["sub/plain.txt"]
    assert tree_state(repo) == before
    assert _repo_fingerprint(repo) == fingerprint


def test_a_skip_worktree_file_in_the_users_index_is_still_restored(tmp_path):
    repo = _user_repo(tmp_path)
    git(repo, "update-index", "--skip-worktree", "sub/plain.txt")  # an index version 3
    fingerprint = _repo_fingerprint(repo)
    before = tree_state(repo)
    with Workspace(repo) as ws:
        assert ws.seeded
        ws.snapshot()
        (repo / "sub" / "plain.txt").write_text("edited where git was told not to look\n")
        diff = ws.diff_and_restore()
    assert [c.path for c in diff.files] == ["sub/plain.txt"]
    assert tree_state(repo) == before
    assert _repo_fingerprint(repo) == fingerprint


def test_a_submodule_in_the_users_index_is_snapshotted_file_by_file(tmp_path):
    repo = _user_repo(tmp_path)
    lib = repo / "vendor" / "lib"
    lib.mkdir(parents=True)
    (lib / "lib.py").write_text("x = 1\n")
    git(lib, "init", "-q")
    git(lib, "add", "-A")
    git(lib, "commit", "-q", "-m", "vendored")
    head = git(lib, "rev-parse", "HEAD").strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},vendor/lib")
    fingerprint = _repo_fingerprint(repo)
    lib_git = dir_digest(lib / ".git")
    before = tree_state(repo)
    with Workspace(repo) as ws:
        ws.snapshot()
        (lib / "lib.py").write_text("x = 2\n")
        diff = ws.diff_and_restore()
    assert [c.path for c in diff.files] == ["vendor/lib/lib.py"]
    assert tree_state(repo) == before
    assert dir_digest(lib / ".git") == lib_git
    assert _repo_fingerprint(repo) == fingerprint


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["plain", "repo_top"])
def test_a_patch_of_hundreds_of_changes_made_beside_the_restore_describes_the_attempt(
    tmp_path, kind
):
    """With many changes the restore runs while the patch is made: the patch must still be
    the attempt's (git must not read files the restore is rewriting)."""
    root = tmp_path / "many"
    for i in range(400):
        (root / f"d{i % 9}").mkdir(parents=True, exist_ok=True)
        (root / f"d{i % 9}" / f"f{i}.txt").write_text(f"line {i}\n" * 20)
    if kind == "repo_top":
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "base")
    before = tree_state(root)
    with Workspace(root) as ws:
        ws.snapshot()
        for i in range(0, 400, 4):
            p = root / f"d{i % 9}" / f"f{i}.txt"
            p.write_text(p.read_text().replace("line", "LINE"))  # same size, new bytes
        for i in range(1, 400, 4):
            (root / f"d{i % 9}" / f"f{i}.txt").unlink()
        for i in range(150):
            (root / f"d{i % 9}" / f"new{i}.txt").write_text(f"new {i}\n")
        after = tree_state(root)
        diff = ws.diff_and_restore()
    assert len(diff.files) == 350
    assert tree_state(root) == before
    copy = tmp_path / "copy"
    shutil.copytree(root, copy, symlinks=True)
    patch = tmp_path / "attempt.patch"
    patch.write_bytes(diff.raw)
    git(copy, "apply", "--binary", str(patch))
    assert tree_state(copy) == after


@pytest.mark.parametrize("names", ["plain", "lookalike"])
def test_the_users_index_is_the_shared_part_of_the_private_split_index(
    tmp_path, names, workspace_engine
):
    """The first add writes only what it changed: the private index is a split index over the
    user's index bytes, found by their checksum, with the user's cached tree kept. Paths that
    spell extension signatures ("TREE", "link") must not be taken for extensions."""
    if workspace_engine == "git":
        pytest.skip("the git engine copies the user's index whole (no hand-made split index)")
    repo = make_project(tmp_path / "repo")
    if names == "lookalike":
        for rel in ("TREE", "link", "sdir/TREE", "zz/TREE\n1 0", "zzz/link"):
            (repo / rel).parent.mkdir(parents=True, exist_ok=True)
            (repo / rel).write_text(f"{rel}\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    committed = git(repo, "rev-parse", "HEAD^{tree}").strip()
    user_index = (repo / ".git" / "index").read_bytes()
    fingerprint = _repo_fingerprint(repo)
    before = tree_state(repo)
    with Workspace(repo) as ws:
        private = Path(ws._env["GIT_DIR"])
        shared = private / f"sharedindex.{user_index[-20:].hex()}"
        assert shared.read_bytes() == user_index
        assert os.path.getsize(ws._index) < 1024  # the split part: no entries of its own
        assert ws.snapshot() == committed
        tracked = git(repo, "ls-files").splitlines()
        env = {**ws._env}
        listed = subprocess.run(
            ["git", "ls-files"], cwd=repo, env=env, capture_output=True, check=True, text=True
        ).stdout.splitlines()
        assert listed == tracked
        (repo / "README.md").write_text("changed by the attempt\n")
        (repo / "src" / "new.py").write_text("n = 1\n")
        diff = ws.diff_and_restore()
        assert {(c.path, c.status) for c in diff.files} == {("README.md", "M"), ("src/new.py", "A")}
    assert tree_state(repo) == before
    assert _repo_fingerprint(repo) == fingerprint
