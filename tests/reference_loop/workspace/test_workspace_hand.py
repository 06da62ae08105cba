"""Attacks on the hand paths at a repository's top: the first snapshot stores what differs
from the user's index by hand, and later looks find and store changes by hand. Whatever the
user's index or work tree holds and whatever the attempt does, the snapshot must be the tree
git's own staging makes, the diff the one git's staging finds, the restore byte-exact and
the user's repository untouched.

The reference is a second workspace on the same directory that is never seeded from the
user's index: its first snapshot is ``git add -A -f`` and every look stages through git. Every
test runs under both engines: the fast one must take its hand paths (a test says so where it
checks), the git one stages everything through git; both must agree with the reference."""

from __future__ import annotations

import functools
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_workspace import (
    _index_state,
    _repo_fingerprint,
    attempt_everything,
    dir_digest,
    fresh_copy,
    git,
    make_project,
    tree_state,
)

from reference_loop._workspace import gitindex
from reference_loop._workspace.core import Workspace
from reference_loop._workspace.gitio import BIG_FILE_BYTES
from reference_loop.errors import LoopError

pytestmark = pytest.mark.usefixtures("workspace_engine")


def reference_workspace(root: Path, **options: object) -> Workspace:
    """A workspace that stages through git from its first snapshot on (not seeded)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(Workspace, "_seed_from_user_repo", lambda self, gitdir: False)
        ws = Workspace(root, engine="git", **options)  # type: ignore[arg-type]
    assert not ws.seeded
    return ws


def build_repo(root: Path) -> Path:
    """The shared project, committed: a user's clean repository (``make_repo`` copies it)."""
    make_project(root)
    (root / "empty_file").write_bytes(b"")
    (root / "same_a.txt").write_text("duplicate content\n")
    (root / "same_b.txt").write_text("duplicate content\n")
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    return root


@pytest.fixture(scope="session")
def committed_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``build_repo`` once per session: git's init, add and commit are a third of a test here."""
    return build_repo(tmp_path_factory.mktemp("committed") / "repo")


@pytest.fixture()
def make_repo(committed_repo: Path) -> Callable[[Path], Path]:
    """``make_repo(root)``: a user's clean repository at ``root``, as if committed just now
    (``fresh_copy`` of ``committed_repo``)."""
    return functools.partial(fresh_copy, committed_repo)


def user_dirty(repo: Path) -> None:
    """What a user leaves before a run: an edit, a staged edit, a deletion, untracked files."""
    (repo / "README.md").write_text("edited by the user, not added\n")
    (repo / "plain.txt").write_text("edited and staged\n")
    git(repo, "add", "plain.txt")
    (repo / "same_b.txt").unlink()
    (repo / "notes.txt").write_text("not tracked\n")
    (repo / "src" / "pkg" / "scratch.py").write_text("s = 1\n")


def backdate(repo: Path) -> None:
    """Make the user's index non-racy, as in a checkout nobody touched for an hour: every
    file's times set back, the index refreshed (git then trusts stat data alone)."""
    past = time.time() - 3600
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            os.utime(os.path.join(dirpath, name), (past, past), follow_symlinks=False)
    git(repo, "update-index", "-q", "--refresh")


USERS = {"clean": None, "dirty": user_dirty, "old_clean": backdate}
USERS["old_dirty"] = lambda repo: (user_dirty(repo), backdate(repo))


def check_attempt(
    repo: Path, attempt: Callable[[Path], None], *, by_hand: bool = True
) -> tuple[object, object]:
    """Snapshot ``repo`` by hand and through git, run ``attempt``, and hold the hand path to
    git's: the same snapshot tree, the same diff (files and bytes), a byte-exact restore, a
    clean look after it, and the user's repository untouched. ``by_hand``: the hand path must
    not have fallen back to staging through git. Returns (the diff, the diff after restore)."""
    fingerprint = _repo_fingerprint(repo)
    before = tree_state(repo)
    hand, ref = Workspace(repo), reference_workspace(repo)
    try:
        tree = hand.snapshot()
        assert tree == ref.snapshot()
        if by_hand and hand.engine == "fast":
            assert hand.engine == "git" or hand._model is not None, (
                "the first snapshot fell back to git add"
            )
        private = Path(hand._env["GIT_DIR"]).parent
        index_state = _index_state(private)
        attempt(repo)
        hand_diff, ref_diff = hand.diff(), ref.diff()
        if by_hand and hand.engine == "fast":
            assert hand.engine == "git" or hand._model is not None, (
                "the look fell back to git's staging"
            )
            assert _index_state(private) == index_state, "a look by hand wrote the index"
        assert hand_diff.files == ref_diff.files
        assert hand_diff.raw == ref_diff.raw
        again = hand.diff_and_restore()
        assert again.files == hand_diff.files
        assert again.raw == hand_diff.raw
        assert tree_state(repo) == before
        assert hand.diff().files == []
        assert hand.snapshot() == tree
        if by_hand and hand.engine == "fast":
            assert hand.engine == "git" or hand._model is not None, (
                "a snapshot with nothing changed dropped the model"
            )
    finally:
        hand.close()
        ref.close()
    assert _repo_fingerprint(repo) == fingerprint
    return hand_diff, ref_diff


# -- the user's index or work tree is odd before the snapshot ---------------------------------


def _default_branch(repo: Path) -> str:
    return git(repo, "symbolic-ref", "--short", "HEAD").strip()


def intent_to_add(repo: Path) -> None:
    (repo / "planned.txt").write_text("planned\n")
    git(repo, "add", "-N", "planned.txt")


def unmerged(repo: Path) -> None:
    main = _default_branch(repo)
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "README.md").write_text("theirs\n")
    git(repo, "commit", "-q", "-am", "theirs")
    git(repo, "checkout", "-q", main)
    (repo / "README.md").write_text("ours\n")
    git(repo, "commit", "-q", "-am", "ours")
    with pytest.raises(subprocess.CalledProcessError):
        git(repo, "merge", "-q", "other")
    assert "UU README.md" in git(repo, "status", "--porcelain")


def assume_unchanged_edited(repo: Path) -> None:
    git(repo, "update-index", "--assume-unchanged", "plain.txt")
    (repo / "plain.txt").write_text("edited behind git's back\n")


def skip_worktree_edited(repo: Path) -> None:
    git(repo, "update-index", "--skip-worktree", "plain.txt")
    (repo / "plain.txt").write_text("edited where git does not look\n")


def index_v4(repo: Path) -> None:
    user_dirty(repo)
    git(repo, "update-index", "--index-version", "4")


def split_user_index(repo: Path) -> None:
    user_dirty(repo)
    git(repo, "update-index", "--split-index")


def tree_invalidated(repo: Path) -> None:
    """A ``git add`` after the commit invalidates the cache tree of the edited file's
    directories only; the others keep their ids."""
    (repo / "src" / "pkg" / "mod.py").write_text("staged, not committed\n")
    git(repo, "add", "src/pkg/mod.py")
    (repo / "src" / "pkg" / "new_staged.py").write_text("n = 1\n")
    git(repo, "add", "src/pkg/new_staged.py")
    tree = gitindex.read_index((repo / ".git" / "index").read_bytes())
    assert tree is not None and tree.tree is None and tree.tree_ext


def no_cache_tree(repo: Path) -> None:
    git(repo, "rm", "-q", "-r", "--cached", ".")
    git(repo, "add", "-A")
    index = gitindex.read_index((repo / ".git" / "index").read_bytes())
    assert index is not None and index.tree is None
    (repo / "README.md").write_text("and edited\n")


ODD_NAMES = [
    "with space.txt",
    "new\nline.txt",
    "-leading-dash",
    "tab\there",
    'quote"s.txt',
    "ünïcödé.txt",
    os.fsdecode(b"latin1-\xff.txt"),
]


def odd_names(repo: Path) -> None:
    for name in ODD_NAMES:
        (repo / "odd" / name).parent.mkdir(exist_ok=True)
        (repo / "odd" / name).write_text(f"{name!r}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "odd names")
    (repo / "odd" / ODD_NAMES[1]).write_text("edited by the user\n")
    (repo / "odd" / "untracked \n\xff name").write_bytes(b"untracked\n")


def names_around_directories(repo: Path) -> None:
    """Names that sort around a directory's: "a-b" < "a/..." < "a0" in an index, while a
    tree sorts the directory "a" as "a/"."""
    for rel in ("a-b", "a/x", "a/b-c", "a/b/y", "a/b0", "a.b", "a0", "a!"):
        (repo / "around" / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / "around" / rel).write_text(f"{rel}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "around")
    (repo / "around" / "a" / "b-c").write_text("edited\n")
    (repo / "around" / "a" / "b!").write_text("untracked, sorts before b/\n")
    (repo / "around" / "a-a").write_text("untracked, sorts before a/\n")


def long_paths(repo: Path) -> None:
    deep = repo / "long"
    for i in range(12):
        deep = deep / (f"{i:02d}" + "d" * 200)
    deep.mkdir(parents=True)
    (deep / ("f" * 240)).write_text("tracked\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "long")
    (deep / ("f" * 240)).write_text("edited\n")
    (deep / ("u" * 240)).write_text("untracked\n")


def tracked_file_now_directory(repo: Path) -> None:
    (repo / "plain.txt").unlink()
    (repo / "plain.txt").mkdir()
    (repo / "plain.txt" / "inside.txt").write_text("inside\n")


def tracked_directory_now_file(repo: Path) -> None:
    shutil.rmtree(repo / "src" / "pkg")
    (repo / "src" / "pkg").write_text("a file where a package was\n")


def tracked_file_now_symlink(repo: Path) -> None:
    (repo / "plain.txt").unlink()
    os.symlink("src", repo / "plain.txt")


def untracked_nested_repository(repo: Path) -> None:
    inner = repo / "vendor" / "inner"
    inner.mkdir(parents=True)
    (inner / "lib.py").write_text("x = 1\n")
    git(inner, "init", "-q")
    git(inner, "add", "-A")
    git(inner, "commit", "-q", "-m", "inner")
    (inner / "lib.py").write_text("x = 2\n")


def fifo_and_socket(repo: Path) -> None:
    os.mkfifo(repo / "src" / "pipe")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(repo / "sock"))
    finally:
        sock.close()
    (repo / "notes.txt").write_text("untracked beside them\n")


def fifo_where_the_user_had_a_file(repo: Path) -> None:
    """git's add refuses a FIFO at a path the index tracks; a snapshot leaves it out."""
    (repo / "plain.txt").unlink()
    os.mkfifo(repo / "plain.txt")


def big_files_by_the_user(repo: Path) -> None:
    """Larger than BIG_FILE_BYTES: streamed into the pack by hand, named in the patch."""
    with open(repo / "big_untracked.bin", "wb") as fh:
        fh.write(b"head")
        fh.truncate(BIG_FILE_BYTES + 1)
    with open(repo / "data.bin", "ab") as fh:
        fh.truncate(BIG_FILE_BYTES + 3)


def the_user_did_everything(repo: Path) -> None:
    """Every kind of change, made by the user and not added, before the snapshot."""
    attempt_everything(repo)


def executable_and_symlink_untracked(repo: Path) -> None:
    (repo / "tool.sh").write_text("#!/bin/sh\n")
    os.chmod(repo / "tool.sh", 0o755)
    os.symlink("README.md", repo / "untracked_link")
    os.symlink("missing/target", repo / "dangling")
    (repo / "empty_untracked").write_bytes(b"")
    os.chmod(repo / "plain.txt", 0o755)  # a mode change only


def change_whatever_is_there(repo: Path) -> None:
    """An attempt that fits any tree: every regular file and symlink (nested repositories'
    too, never a ``.git``) is edited, deleted, made executable, made a symlink or renamed in
    turn, and new files appear in old and new directories."""
    found = []
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = sorted(d for d in dirnames if d != ".git")
        for name in sorted(filenames):
            path = Path(dirpath) / name
            if path.is_symlink() or path.is_file():
                found.append(path)
    for i, path in enumerate(found):
        how = i % 5
        if how == 0:
            path.unlink()
            path.write_bytes(b"edited by the attempt\n")
        elif how == 1:
            path.unlink()
        elif how == 2 and not path.is_symlink():
            os.chmod(path, 0o755 if not os.access(path, os.X_OK) else 0o644)
        elif how == 3:
            path.unlink()
            os.symlink("README.md", path)
        elif how == 4:
            os.rename(path, path.with_name(os.fsdecode(os.fsencode(path.name) + b".moved")))
        if i % 7 == 0:
            path.with_name(os.fsdecode(os.fsencode(path.name) + b".new")).write_text("new\n")
    (repo / "made" / "by" / "attempt").mkdir(parents=True)
    (repo / "made" / "by" / "attempt" / "f.txt").write_text("f\n")


def _checked_out_again(repo: Path, paths: list[str]) -> None:
    """Check ``paths`` out afresh (through the user's attributes and config), then make their
    index entries stat-clean and not racy, as in a checkout nobody touched for an hour: git
    then trusts the entry's blob, which is not the file's bytes."""
    for rel in paths:
        (repo / rel).unlink()
    git(repo, "checkout", "--", *paths)
    past = time.time() - 3600
    for rel in paths:
        os.utime(repo / rel, (past, past))
    git(repo, "update-index", "--refresh")
    assert git(repo, "status", "--porcelain") == ""


def gitattributes_eol_and_ident(repo: Path) -> None:
    (repo / "src" / ".gitattributes").write_text("*.txt text eol=crlf\n*.py ident\n")
    (repo / "src" / "lines.txt").write_bytes(b"one\ntwo\n")
    (repo / "src" / "pkg" / "mod.py").write_text("# $Id$\ndef add(a, b):\n    return a - b\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "attributes")
    _checked_out_again(repo, ["src/lines.txt", "src/pkg/mod.py"])
    assert (repo / "src" / "lines.txt").read_bytes() == b"one\r\ntwo\r\n"


def text_auto_attributes(repo: Path) -> None:
    """The most common attributes of all: text files normalized on add, checked out as their
    blobs (LF here), so the user's index is trusted and the snapshot is made by hand."""
    (repo / ".gitattributes").write_text("* text=auto\n*.sh text eol=lf\n*.bin binary\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "attributes")
    _checked_out_again(repo, ["README.md", "run.sh"])


def gitattributes_with_index_v4(repo: Path) -> None:
    """The same conversion, with an index Python does not parse (git's add decides)."""
    gitattributes_eol_and_ident(repo)
    git(repo, "update-index", "--index-version", "4")
    assert (repo / ".git" / "index").read_bytes()[4:8] == b"\0\0\0\4"


def autocrlf_in_config(repo: Path) -> None:
    git(repo, "config", "core.autocrlf", "true")
    _checked_out_again(repo, ["README.md", "plain.txt"])
    assert (repo / "README.md").read_bytes() == b"readme\r\n"


def filter_in_info_attributes(repo: Path) -> None:
    git(repo, "config", "filter.upper.smudge", "tr a-z A-Z")
    git(repo, "config", "filter.upper.clean", "tr A-Z a-z")
    (repo / ".git" / "info" / "attributes").write_text("*.md filter=upper\n")
    _checked_out_again(repo, ["README.md"])
    assert (repo / "README.md").read_bytes() == b"README\n"


def tracked_files_in_a_nested_repository(repo: Path) -> None:
    """A tracked directory that became a repository of its own: git add -A would record it
    as a gitlink; its files must be snapshotted one by one."""
    git(repo / "src" / "pkg", "init", "-q")
    (repo / "src" / "pkg" / "mod.py").write_text("edited inside the nested repository\n")
    (repo / "src" / "pkg" / "more.py").write_text("m = 1\n")


def tracked_directory_now_symlink(repo: Path) -> None:
    shutil.rmtree(repo / "src" / "pkg")
    os.symlink("../dir_to_file", repo / "src" / "pkg")


def index_names_longer_than_the_length_field(repo: Path) -> None:
    """Entries whose names fill the 12-bit length field (0xFFF: the name runs to its NUL),
    held by the index only: git lists them as deleted. (Longer ones, which git cannot even
    stat here, stay in any index seeded from the user's, git's add -u included.)"""
    blob = git(repo, "hash-object", "-w", "README.md").strip()
    for length in (0xFFE, 0xFFF):
        name = "/".join(["long", *["n" * 199] * 30])[:length]
        git(repo, "update-index", "--add", "--cacheinfo", f"100644,{blob},{name}")
    (repo / "README.md").write_text("edited beside them\n")


def filemode_and_symlinks_off(repo: Path) -> None:
    """A repository whose git ignores exec bits and writes symlinks as plain files (one
    copied from another system): its index's modes are not the disk's."""
    git(repo, "config", "core.fileMode", "false")
    git(repo, "config", "core.symlinks", "false")
    os.chmod(repo / "README.md", 0o755)
    (repo / "link_to_readme").unlink()
    git(repo, "checkout", "--", "link_to_readme")  # a plain file holding the target now
    assert not (repo / "link_to_readme").is_symlink()


def touched_not_changed(repo: Path) -> None:
    """Stat data that no longer matches the index, content that does: git lists the files,
    their blobs are the index's."""
    for rel in ("README.md", "src/pkg/mod.py", "data.bin"):
        os.utime(repo / rel, (1, 1_000_000_000))
    os.chmod(repo / "plain.txt", 0o644)


USER_STATES = {
    "clean": None,
    "dirty": user_dirty,
    "intent_to_add": intent_to_add,
    "unmerged": unmerged,
    "assume_unchanged_edited": assume_unchanged_edited,
    "skip_worktree_edited": skip_worktree_edited,
    "index_v4": index_v4,
    "split_user_index": split_user_index,
    "tree_invalidated": tree_invalidated,
    "no_cache_tree": no_cache_tree,
    "odd_names": odd_names,
    "names_around_directories": names_around_directories,
    "long_paths": long_paths,
    "tracked_file_now_directory": tracked_file_now_directory,
    "tracked_directory_now_file": tracked_directory_now_file,
    "tracked_file_now_symlink": tracked_file_now_symlink,
    "untracked_nested_repository": untracked_nested_repository,
    "fifo_and_socket": fifo_and_socket,
    "fifo_where_the_user_had_a_file": fifo_where_the_user_had_a_file,
    "big_files_by_the_user": big_files_by_the_user,
    "the_user_did_everything": the_user_did_everything,
    "executable_and_symlink_untracked": executable_and_symlink_untracked,
    "gitattributes_eol_and_ident": gitattributes_eol_and_ident,
    "gitattributes_with_index_v4": gitattributes_with_index_v4,
    "text_auto_attributes": text_auto_attributes,
    "autocrlf_in_config": autocrlf_in_config,
    "filter_in_info_attributes": filter_in_info_attributes,
    "touched_not_changed": touched_not_changed,
    "filemode_and_symlinks_off": filemode_and_symlinks_off,
    "index_names_longer_than_the_length_field": index_names_longer_than_the_length_field,
    "tracked_files_in_a_nested_repository": tracked_files_in_a_nested_repository,
    "tracked_directory_now_symlink": tracked_directory_now_symlink,
    "old_clean": backdate,
}
# States whose first snapshot must go through git (an index Python does not rewrite).
GIT_STAGES = {"intent_to_add", "unmerged", "assume_unchanged_edited", "skip_worktree_edited"}
GIT_STAGES |= {"index_v4", "split_user_index", "gitattributes_eol_and_ident"}
GIT_STAGES |= {"autocrlf_in_config", "filter_in_info_attributes", "gitattributes_with_index_v4"}


@pytest.mark.slow
@pytest.mark.parametrize("state", list(USER_STATES))
def test_a_users_odd_index_or_work_tree_snapshots_diffs_and_restores_as_git_does(
    tmp_path, make_repo, state
):
    repo = make_repo(tmp_path / "repo")
    prepare = USER_STATES[state]
    if prepare is not None:
        prepare(repo)
    check_attempt(repo, change_whatever_is_there, by_hand=state not in GIT_STAGES)


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads a chmod 000 file anyway")
def test_an_unreadable_modified_file_is_a_clear_error_and_nothing_changes(tmp_path, make_repo):
    repo = make_repo(tmp_path / "repo")
    (repo / "plain.txt").write_text("edited, then made unreadable\n")
    os.chmod(repo / "plain.txt", 0)
    fingerprint = _repo_fingerprint(repo)
    try:
        with Workspace(repo) as ws, pytest.raises(LoopError):
            ws.snapshot()
    finally:
        os.chmod(repo / "plain.txt", 0o644)
    assert _repo_fingerprint(repo) == fingerprint


@pytest.mark.parametrize("name", [".GIT", "git~1", ".Git/x"])
def test_an_untracked_name_git_refuses_is_refused_as_git_refuses_it(tmp_path, make_repo, name):
    """git's path checks refuse ``.git`` lookalikes, and ``update-index`` skips them with
    only a warning: a snapshot that left one out would never restore it. The hand path
    must refuse it as ``git add`` does, with nothing on disk changed."""
    repo = make_repo(tmp_path / "repo")
    (repo / "sub" / name).parent.mkdir(parents=True, exist_ok=True)
    (repo / "sub" / name).write_text("lookalike\n")
    (repo / "README.md").write_text("a user edit beside it\n")
    fingerprint = _repo_fingerprint(repo)
    before = tree_state(repo)
    for ws in (Workspace(repo), reference_workspace(repo)):
        with ws, pytest.raises(LoopError, match="invalid path"):
            ws.snapshot()
    assert tree_state(repo) == before
    assert _repo_fingerprint(repo) == fingerprint


def _plant_fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _plant_socket(path: Path) -> None:
    path.unlink()
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(path))
    finally:
        sock.close()


def _plant_name(repo: Path, name: str) -> None:
    path = repo / "src" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("planted\n")


PLANTS: dict[str, Callable[[Path], None]] = {
    name: functools.partial(_plant_name, name=name) for name in (".GIT", "git~1", ".Git/x")
}
PLANTS["fifo_where_a_file_was"] = lambda repo: _plant_fifo(repo / "plain.txt")
PLANTS["socket_where_a_file_was"] = lambda repo: _plant_socket(repo / "src" / "pkg" / "mod.py")


@pytest.mark.parametrize("plant", list(PLANTS))
@pytest.mark.parametrize("kind", ["repository", "dirty_repository", "plain"])
def test_what_git_cannot_stage_planted_by_the_attempt_is_refused_then_undone_by_restore(
    tmp_path, make_repo, kind, plant
):
    """git cannot stage a ``.git`` lookalike name, nor a FIFO or socket where the snapshot
    had a file, so no diff can describe the attempt: the diff is refused with a LoopError
    and writes nothing; the restore (the loop's ``finally``) still puts everything back."""
    repo = make_repo(tmp_path / "repo") if kind != "plain" else make_project(tmp_path / "p")
    if kind == "dirty_repository":
        user_dirty(repo)
    fingerprint = _repo_fingerprint(repo) if kind != "plain" else None
    before = tree_state(repo)
    with Workspace(repo) as ws:
        ws.snapshot()
        attempt_everything(repo)
        PLANTS[plant](repo)
        after = tree_state(repo)
        with pytest.raises(LoopError):
            ws.diff()
        with pytest.raises(LoopError):
            ws.diff_and_restore()
        assert tree_state(repo) == after  # a refused look writes nothing
        ws.restore()
        assert tree_state(repo) == before
        assert "src/pkg/mod.py" in ws.last_restored
        assert ws.diff().files == []
    if fingerprint is not None:
        assert _repo_fingerprint(repo) == fingerprint


# -- the attempt does something nasty after the snapshot --------------------------------------


def delete_a_subtree(repo: Path) -> None:
    shutil.rmtree(repo / "src")


def recreate_deleted_identically(repo: Path) -> None:
    data = (repo / "README.md").read_bytes()
    (repo / "README.md").unlink()
    (repo / "README.md").write_bytes(data)
    mode = (repo / "run.sh").stat().st_mode
    data = (repo / "run.sh").read_bytes()
    (repo / "run.sh").unlink()
    (repo / "run.sh").write_bytes(data)
    os.chmod(repo / "run.sh", mode)


def touch_without_changing(repo: Path) -> None:
    for rel in ("README.md", "data.bin", "src/pkg/mod.py"):
        os.utime(repo / rel, (1, 2_000_000_000))
    os.utime(repo / "link_to_mod", (1, 1), follow_symlinks=False)


def chmod_there_and_back(repo: Path) -> None:
    os.chmod(repo / "plain.txt", 0o755)
    os.chmod(repo / "plain.txt", 0o644)
    os.chmod(repo / "run.sh", 0o644)
    (repo / "README.md").write_text("and a real change\n")


def file_to_symlink_to_directory(repo: Path) -> None:
    (repo / "plain.txt").unlink()
    os.symlink("src/pkg", repo / "plain.txt")


def files_in_a_new_nested_repository(repo: Path) -> None:
    inner = repo / "src" / "inner"
    inner.mkdir()
    (inner / "a.py").write_text("a = 1\n")
    git(inner, "init", "-q")
    git(inner, "add", "-A")
    git(inner, "commit", "-q", "-m", "inner")
    (inner / "b.py").write_text("b = 1\n")


def gitattributes_binary(repo: Path) -> None:
    (repo / ".gitattributes").write_text("* binary\n")
    (repo / "README.md").write_text("text that git would now call binary\n")


def gitattributes_diff_driver(repo: Path) -> None:
    (repo / "src" / ".gitattributes").write_text("*.py diff=foo\n*.md -diff\n")
    (repo / "src" / "pkg" / "mod.py").write_text("changed under a diff driver\n")


def a_file_larger_than_the_big_file_limit(repo: Path) -> None:
    with open(repo / "big.bin", "wb") as fh:
        fh.truncate(BIG_FILE_BYTES + 1)  # sparse: cheap to write, still read whole
    with open(repo / "data.bin", "ab") as fh:
        fh.truncate(BIG_FILE_BYTES + 10)
    (repo / "README.md").write_text("a small change beside them\n")


def ignored_paths(repo: Path) -> None:
    cache = repo / "src" / "pkg" / "__pycache__"
    cache.mkdir()
    (cache / "mod.cpython-311.pyc").write_bytes(b"planted")
    (repo / ".venv" / "lib").mkdir(parents=True)
    (repo / ".venv" / "lib" / "site.py").write_text("planted\n")
    (repo / "top.pyc").write_bytes(b"planted")
    (repo / "README.md").write_text("shown beside ignored ones\n")


def rename_a_directory(repo: Path) -> None:
    os.rename(repo / "src", repo / "source")


def edit_and_delete_untracked_files(repo: Path) -> None:
    if (repo / "notes.txt").exists():
        (repo / "notes.txt").write_text("edited untracked\n")
        (repo / "src" / "pkg" / "scratch.py").unlink()
    (repo / "src" / "pkg" / "mod.py").write_text("x\n")


def restore_deleted_by_user(repo: Path) -> None:
    """A file the user deleted (not in the snapshot, still in the user's index) comes back."""
    (repo / "same_b.txt").write_text("duplicate content\n")


def same_size_edit_with_times_set_back(repo: Path) -> None:
    """An edit that keeps the size and sets the times back right after the snapshot: only
    ctime (and the content) tell it apart."""
    for rel in ("README.md", "src/pkg/mod.py", "notes.txt"):
        path = repo / rel
        if not path.exists():
            continue
        st = path.stat()
        # git (built without USE_NSEC) compares whole-second ctimes: an edit in the very
        # second of the file's last change, times set back, is invisible to its stat check
        # (git status misses it too). Any real attempt lands in a later second.
        while int(time.time()) <= st.st_ctime_ns // 1_000_000_000:
            time.sleep(0.02)
        data = path.read_bytes()
        path.write_bytes(data.upper() if data.upper() != data else data.lower())
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def directory_to_symlink_to_an_edited_copy(repo: Path) -> None:
    outside = repo.parent / "outside_src"
    shutil.copytree(repo / "src", outside, symlinks=True)
    (outside / "pkg" / "mod.py").write_text("edited through the link\n")
    shutil.rmtree(repo / "src")
    os.symlink(outside, repo / "src")


def links_to_files_outside(repo: Path) -> None:
    """A tracked file made a hard link to a file outside, another a symlink to one: restore
    must replace both, never write through them."""
    outside = repo.parent / "outside.txt"
    outside.write_text("outside the workspace\n")
    (repo / "README.md").unlink()
    os.link(outside, repo / "README.md")
    (repo / "plain.txt").unlink()
    os.symlink(outside, repo / "plain.txt")


def hundreds_of_changes_with_ignored_and_big_ones(repo: Path) -> None:
    """From 256 changes on, diff_and_restore restores beside a patch made from trees: with
    ignored and large changes among them the patch is made from a subset."""
    for i in range(300):
        (repo / f"many{i % 7}").mkdir(exist_ok=True)
        (repo / f"many{i % 7}" / f"f{i}.txt").write_text(f"new {i}\n")
    cache = repo / "src" / "pkg" / "__pycache__"
    cache.mkdir()
    for i in range(20):
        (cache / f"m{i}.pyc").write_bytes(b"planted")
    with open(repo / "huge.bin", "wb") as fh:
        fh.truncate(BIG_FILE_BYTES + 1)
    (repo / "README.md").write_text("changed among hundreds\n")


ATTEMPTS = {
    "everything": attempt_everything,
    "delete_a_subtree": delete_a_subtree,
    "recreate_deleted_identically": recreate_deleted_identically,
    "touch_without_changing": touch_without_changing,
    "chmod_there_and_back": chmod_there_and_back,
    "file_to_symlink_to_directory": file_to_symlink_to_directory,
    "files_in_a_new_nested_repository": files_in_a_new_nested_repository,
    "gitattributes_binary": gitattributes_binary,
    "gitattributes_diff_driver": gitattributes_diff_driver,
    "a_file_larger_than_the_big_file_limit": a_file_larger_than_the_big_file_limit,
    "ignored_paths": ignored_paths,
    "rename_a_directory": rename_a_directory,
    "edit_and_delete_untracked_files": edit_and_delete_untracked_files,
    "restore_deleted_by_user": restore_deleted_by_user,
    "same_size_edit_with_times_set_back": same_size_edit_with_times_set_back,
    "links_to_files_outside": links_to_files_outside,
    "hundreds_of_changes_with_ignored_and_big_ones": hundreds_of_changes_with_ignored_and_big_ones,
    "directory_to_symlink_to_an_edited_copy": directory_to_symlink_to_an_edited_copy,
}


def test_a_directory_of_ignored_files_replaced_by_a_symlink_is_diffed_as_git_does(
    tmp_path, make_repo
):
    """check-ignore refuses a path beyond a symlink, and the diff of a directory an attempt
    replaced by one needed it for the snapshot's files below. Those files are in the patch
    (ignored or not: the symlink takes their directory's place, so a patch that kept them
    could not apply); the hand path and git's agree, and the restore is byte-exact."""
    repo = make_repo(tmp_path / "repo")
    (repo / ".gitignore").write_text("*.log\n")
    (repo / "src" / "pkg" / "debug.log").write_text("log\n")
    (repo / "src" / "pkg" / "__pycache__").mkdir()
    (repo / "src" / "pkg" / "__pycache__" / "mod.pyc").write_bytes(b"pyc")
    (repo / "build.log").write_text("ignored, not beyond a symlink\n")

    def attempt(root: Path) -> None:
        shutil.rmtree(root / "src" / "pkg")
        os.symlink(root / "plain.txt", root / "src" / "pkg")
        (root / "build.log").write_text("edited, still ignored\n")

    diff, _ = check_attempt(repo, attempt)
    paths = {c.path for c in diff.files}
    assert {"src/pkg", "src/pkg/mod.py", "src/pkg/debug.log"} <= paths
    assert "build.log" not in paths


@pytest.mark.slow
@pytest.mark.parametrize("user", list(USERS))
@pytest.mark.parametrize("attempt", list(ATTEMPTS))
def test_a_nasty_attempt_is_found_as_git_finds_it_and_undone(tmp_path, make_repo, attempt, user):
    repo = make_repo(tmp_path / "repo")
    prepare = USERS[user]
    if prepare is not None:
        prepare(repo)
    check_attempt(repo, ATTEMPTS[attempt])
    outside = tmp_path / "outside.txt"
    if outside.exists():
        assert outside.read_text() == "outside the workspace\n"
        assert os.lstat(repo / "README.md").st_nlink == 1


def test_a_nested_repositorys_git_dir_is_never_written(tmp_path, make_repo):
    repo = make_repo(tmp_path / "repo")
    untracked_nested_repository(repo)
    inner_git = dir_digest(repo / "vendor" / "inner" / ".git")

    def attempt(root: Path) -> None:
        (root / "vendor" / "inner" / "lib.py").write_text("x = 3\n")
        (root / "vendor" / "inner" / "new.py").write_text("n = 1\n")

    check_attempt(repo, attempt)
    assert dir_digest(repo / "vendor" / "inner" / ".git") == inner_git


@pytest.mark.slow
@pytest.mark.parametrize("user", ["clean", "dirty"])
def test_attempts_in_a_row_are_each_found_and_undone(tmp_path, make_repo, user):
    repo = make_repo(tmp_path / "repo")
    if user == "dirty":
        user_dirty(repo)
    fingerprint = _repo_fingerprint(repo)
    before = tree_state(repo)
    hand, ref = Workspace(repo), reference_workspace(repo)
    try:
        assert hand.snapshot() == ref.snapshot()
        for attempt in ATTEMPTS.values():
            attempt(repo)
            expected = ref.diff()
            got = hand.diff_and_restore()
            assert got.files == expected.files, attempt.__name__
            assert got.raw == expected.raw, attempt.__name__
            assert tree_state(repo) == before, attempt.__name__
            assert ref.diff().files == []
            assert hand.engine == "git" or hand._model is not None, attempt.__name__
            assert hand.snapshot() == ref.snapshot_tree  # the loop's snapshot per attempt
        assert hand.diff().files == []
    finally:
        hand.close()
        ref.close()
    assert _repo_fingerprint(repo) == fingerprint


def test_diff_then_restore_separately_then_again(tmp_path, make_repo):
    repo = make_repo(tmp_path / "repo")
    user_dirty(repo)
    before = tree_state(repo)
    with Workspace(repo) as ws, reference_workspace(repo) as ref:
        assert ws.snapshot() == ref.snapshot()
        attempt_everything(repo)
        first = ws.diff()
        assert first.raw == ref.diff().raw
        assert ws.diff().raw == first.raw  # a look changes nothing
        ws.restore()
        assert tree_state(repo) == before
        ws.restore()
        assert ws.last_restored == []
        assert ws.diff().files == []


def test_a_snapshot_after_an_attempt_drops_the_model_and_later_looks_stay_right(
    tmp_path, make_repo
):
    repo = make_repo(tmp_path / "repo")
    user_dirty(repo)
    with Workspace(repo) as ws, reference_workspace(repo) as ref:
        ws.snapshot()
        ref.snapshot()
        attempt_everything(repo)
        second = ws.snapshot()
        assert second == ref.snapshot()
        assert ws._model is None
        after_attempt = tree_state(repo)
        (repo / "README.md").write_text("third state\n")
        (repo / "new_name.txt").unlink()
        (repo / "fresh.txt").write_text("fresh\n")
        got, expected = ws.diff(), ref.diff()
        assert got.files == expected.files and got.raw == expected.raw
        ws.restore()
        assert tree_state(repo) == after_attempt
        assert ws.diff().files == []


def run_git_in_the_users_repository(repo: Path) -> None:
    """The attempt uses git on the user's repository: commits, stashes, resets, switches."""
    git(repo, "stash", "-q", "-u")
    (repo / "README.md").write_text("committed by the attempt\n")
    git(repo, "commit", "-q", "-am", "by the attempt")
    git(repo, "checkout", "-q", "-b", "attempt-branch")
    (repo / "src" / "pkg" / "mod.py").write_text("on a branch\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "on a branch")
    git(repo, "reset", "-q", "--hard", "HEAD~2")


@pytest.mark.parametrize("user", ["clean", "dirty"])
def test_an_attempt_that_runs_git_in_the_users_repository_is_undone(tmp_path, make_repo, user):
    """The work tree comes back whatever the attempt did to the user's repository (its own
    git commands are its business); the snapshot's blobs, some read from the user's objects,
    are still there."""
    repo = make_repo(tmp_path / "repo")
    if user == "dirty":
        user_dirty(repo)
    before = tree_state(repo)
    with Workspace(repo) as hand, reference_workspace(repo) as ref:
        assert hand.snapshot() == ref.snapshot()
        run_git_in_the_users_repository(repo)
        got, expected = hand.diff(), ref.diff()
        assert got.files == expected.files and got.raw == expected.raw
        hand.diff_and_restore()
        assert tree_state(repo) == before
        assert hand.diff().files == []


def _prune_a_blob_only_the_users_index_held(repo: Path) -> None:
    git(repo, "rm", "-q", "--cached", "staged.txt")
    git(repo, "-c", "gc.reflogExpire=now", "gc", "-q", "--prune=now")
    (repo / "staged.txt").unlink()


def _remove_the_users_git_dir(repo: Path) -> None:
    shutil.rmtree(repo / ".git")
    (repo / "src" / "pkg" / "mod.py").write_text("edited once .git is gone\n")


@pytest.mark.parametrize(
    "attack", [_prune_a_blob_only_the_users_index_held, _remove_the_users_git_dir]
)
def test_an_attempt_that_removes_the_users_objects_is_still_undone(tmp_path, make_repo, attack):
    """The snapshot reads what it did not store from its own copy of .git, never from the
    user's objects: removing them (a pruned blob only the user's index held, the whole .git)
    leaves the restore all it needs, and .git comes back byte for byte."""
    repo = make_repo(tmp_path / "repo")
    (repo / "staged.txt").write_text("staged by the user, never committed\n")
    git(repo, "add", "staged.txt")
    before = tree_state(repo, skip_git=False)
    status = git(repo, "status", "--porcelain")
    with Workspace(repo) as ws:
        ws.snapshot()
        attack(repo)
        ws.restore()
    assert tree_state(repo, skip_git=False) == before
    assert git(repo, "status", "--porcelain") == status


def test_a_sha256_repository_is_snapshotted_by_hashing_its_files(tmp_path):
    """The private store is SHA-1: a SHA-256 repository's index and objects cannot seed it
    (git refused the copied index: "unknown index entry format"). Its files are hashed
    instead, and the snapshot is the tree git's staging makes."""
    repo = make_project(tmp_path / "repo")
    git(repo, "init", "-q", "--object-format=sha256")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    (repo / "README.md").write_text("edited by the user\n")
    fingerprint = _repo_fingerprint(repo)
    before = tree_state(repo)
    with Workspace(repo) as ws, reference_workspace(repo) as ref:
        assert not ws.seeded
        assert ws.snapshot() == ref.snapshot()
        attempt_everything(repo)
        got, expected = ws.diff(), ref.diff()
        assert got.files == expected.files and got.raw == expected.raw
        ws.diff_and_restore()
    assert tree_state(repo) == before
    assert _repo_fingerprint(repo) == fingerprint


def test_a_look_that_falls_back_to_git_midway_leaves_later_looks_right(tmp_path, make_repo):
    """A file the hand path leaves to git (a ``.gitmodules``, whose name git checks) makes
    that look stage through git and drops the model; the looks after it, through git, must
    still find every change against the snapshot and restore it."""
    repo = make_repo(tmp_path / "repo")
    user_dirty(repo)
    backdate(repo)
    before = tree_state(repo)
    with Workspace(repo) as hand, reference_workspace(repo) as ref:
        assert hand.snapshot() == ref.snapshot()
        steps: list[Callable[[Path], None]] = [
            attempt_everything,
            lambda root: (root / ".gitmodules").write_text("[submodule]\n"),
            attempt_everything,
            change_whatever_is_there,
            recreate_deleted_identically,
        ]
        for i, step in enumerate(steps):
            step(repo)
            (repo / "README.md").write_text(f"step {i}\n")
            expected = ref.diff()
            got = hand.diff_and_restore()
            assert got.files == expected.files and got.raw == expected.raw, i
            assert tree_state(repo) == before, i
            assert ref.diff().files == [] and hand.diff().files == []
            assert hand.engine == "git" or (hand._model is None) == (i >= 1), (
                i
            )  # dropped by the .gitmodules look


@pytest.mark.parametrize(
    "options",
    [{"ignore": ["*.txt", "new/"]}, {"default_ignore": False}],
    ids=["more_ignored", "no_default_ignore"],
)
def test_ignore_options_filter_the_hand_diff_as_they_filter_gits(tmp_path, make_repo, options):
    repo = make_repo(tmp_path / "repo")
    user_dirty(repo)
    before = tree_state(repo)
    with Workspace(repo, **options) as hand, reference_workspace(repo, **options) as ref:
        assert hand.snapshot() == ref.snapshot()
        attempt_everything(repo)
        ignored_paths(repo)
        got, expected = hand.diff(), ref.diff()
        assert got.files == expected.files and got.raw == expected.raw
        assert hand.engine == "git" or hand._model is not None
        hand.diff_and_restore()
    assert tree_state(repo) == before
    shown = {c.path for c in got.files}
    if "ignore" in options:
        assert "new_file.txt" not in shown and "new/deep/er/x.py" not in shown
    else:
        assert "src/pkg/__pycache__/mod.cpython-311.pyc" in shown


def test_a_crlf_file_git_normalizes_comes_back_as_git_checks_it_out(tmp_path, make_repo):
    """Under ``text=auto`` git stores a CRLF file with LF line ends and, until the file
    changes, trusts its index entry: so does the snapshot. An attempt that edits that file
    gets it back as ``git checkout`` would write it (the blob's LF ends): ``git diff`` shows
    nothing (``git status`` lists it until git next refreshes its stat data, as after any
    rewrite that changes a file's size)."""
    repo = make_repo(tmp_path / "repo")
    (repo / ".gitattributes").write_text("* text=auto\n")
    (repo / "windows.txt").write_bytes(b"one\r\ntwo\r\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a file with CRLF line ends")
    past = time.time() - 3600
    os.utime(repo / "windows.txt", (past, past))
    git(repo, "update-index", "--refresh")
    assert (repo / "windows.txt").read_bytes() == b"one\r\ntwo\r\n"
    with Workspace(repo) as ws:
        assert ws.seeded
        ws.snapshot()
        (repo / "windows.txt").write_bytes(b"edited by the attempt\n")
        diff = ws.diff_and_restore()
    assert [c.path for c in diff.files] == ["windows.txt"]
    assert (repo / "windows.txt").read_bytes() == b"one\ntwo\n"
    blob = subprocess.run(
        ["git", "cat-file", "blob", ":windows.txt"], cwd=repo, capture_output=True, check=True
    ).stdout
    assert (repo / "windows.txt").read_bytes() == blob
    assert git(repo, "diff") == ""


@pytest.mark.parametrize(
    ("text", "converts"),
    [
        ("*.txt text\n", False),  # normalizes what is added; checked out as the blob
        ("* text=auto\n", False),
        ("*.sh eol=lf\n", False),
        ("*.bat eol=crlf\n", True),
        ("*.bin filter=lfs diff=lfs merge=lfs -text\n", True),
        ("*.c ident\n", True),
        ("*.txt working-tree-encoding=UTF-16\n", True),
        ("[attr]mine text eol=crlf\n", True),
        ("*.png binary\n", False),
        ("* -text\n*.c diff=cpp\n", False),
        ("*.md linguist-documentation export-ignore\n", False),
        ("*.txt !eol !text\n", False),
        ("", False),
    ],
)
def test_attributes_that_make_a_files_bytes_differ_from_its_blob_are_recognised(
    tmp_path, text, converts
):
    from reference_loop._workspace.gitio import _converting_attributes

    path = tmp_path / ".gitattributes"
    path.write_text(text)
    assert _converting_attributes(str(path)) is converts


@pytest.mark.parametrize(
    ("config", "converts"),
    [
        ("[core]\n\tautocrlf = true\n", True),
        ("[core]\n\tautocrlf=input\n", False),
        ("[core]\n\tAutoCRLF\n", True),
        ("[core]\n\tattributesFile = ~/attrs\n", True),
        ("[core]\n\tautocrlf = false\n", False),
        ("[core]\n\tautocrlf = off # not here\n", False),
        ("[core]\n\teol = crlf\n", True),
    ],
)
def test_config_that_converts_every_text_file_stops_the_seeding(
    tmp_path, make_repo, monkeypatch, config, converts
):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    repo = make_repo(tmp_path / "repo")
    with open(repo / ".git" / "config", "a") as fh:
        fh.write(config)
    with Workspace(repo) as ws:
        assert ws.seeded is not converts
    (repo / ".git" / "config").write_text("[core]\n\trepositoryformatversion = 0\n")
    (home / ".gitconfig").write_text(config)
    with Workspace(repo) as ws:
        assert ws.seeded is not converts


def test_files_rewritten_with_the_same_bytes_are_not_hashed_again_by_every_later_look(
    tmp_path, make_repo, workspace_engine
):
    """A formatter or a checkout that rewrites every file with the same bytes changes no file's
    content, only its stat data. The look after it is no change, and the looks after that must
    not hash all those files again (each later attempt cost 25x what it should, by hand)."""
    repo = make_repo(tmp_path / "repo")
    for i in range(120):
        (repo / "many" / f"d{i % 6}").mkdir(parents=True, exist_ok=True)
        (repo / "many" / f"d{i % 6}" / f"f{i}.txt").write_text(f"file {i}\n" * 20)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "many")
    before = tree_state(repo)
    with Workspace(repo) as ws:
        tree = ws.snapshot()
        for path in sorted(repo.rglob("*.txt")):
            data = path.read_bytes()
            (path.parent / (path.name + ".fmt")).write_bytes(data)
            os.replace(path.parent / (path.name + ".fmt"), path)
        assert ws.diff_and_restore().files == []
        assert ws.snapshot() == tree
        hashed: list[int] = []
        store_files = ws._store_files

        def counted(paths, *args, **kwargs):
            paths = list(paths)
            hashed.append(len(paths))
            return store_files(paths, *args, **kwargs)

        ws._store_files = counted  # type: ignore[method-assign]
        for attempt in range(3):
            (repo / "README.md").write_text(f"attempt {attempt}\n")
            diff = ws.diff_and_restore()
            assert [c.path for c in diff.files] == ["README.md"]
            assert tree_state(repo) == before
            assert ws.snapshot() == tree
        if ws.engine == "fast":
            assert hashed and max(hashed) <= 2, hashed
            assert ws._model is not None
