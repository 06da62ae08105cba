"""The index format work done without git: every result is checked against what git itself
reads from, or writes for, the same repository."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

import pytest

from reference_loop._workspace import gitindex, gitstore


def git(cwd: Path, *args: str, index: Path | None = None, git_dir: Path | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_OPTIONAL_LOCKS="0")
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    if git_dir is not None:
        env["GIT_DIR"] = str(git_dir)
        env["GIT_WORK_TREE"] = str(cwd)
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=True, timeout=60
    ).stdout


def make_repo(root: Path) -> Path:
    """A repository whose names sort around their directories ("b-c", "b/", "b0")."""
    for rel in (
        "README",
        "a/one.txt",
        "a/two.txt",
        "a/deep/er/x.txt",
        "b-c",
        "b/x.txt",
        "b/y/z.txt",
        "b0",
        "c/d/e/f.txt",
        "zz/last.txt",
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"{rel}\n")
    os.symlink("a/one.txt", root / "link")
    os.chmod(root / "a" / "two.txt", 0o755)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "write-tree")  # a cache tree covering every entry
    return root


def store_by_hand(root: Path, pack_dir: Path, paths: list[str]) -> dict[bytes, object]:
    """Each path's new entry (``None`` when it is gone), its blob stored in one pack."""
    writer = gitstore.PackWriter(str(pack_dir))
    changed: dict[bytes, object] = {}
    for rel in paths:
        full = root / rel
        if not os.path.lexists(full):
            changed[rel.encode()] = None
            continue
        changed[rel.encode()] = gitstore.store_file(
            writer, os.fsencode(full), rel.encode(), os.lstat(full)
        )
    writer.finish()
    return changed


def rewrite(root: Path, changed: dict) -> tuple[gitindex.Rewritten, Path]:
    """Rewrite the repository's index with ``changed``; the result written as a split index
    into a copy of the repository's index file."""
    pack_dir = root / ".git" / "objects" / "pack"
    index = gitindex.read_index((root / ".git" / "index").read_bytes())
    assert index is not None
    writer = gitstore.PackWriter(str(pack_dir))
    new = gitindex.rewrite_index(index, changed, writer.add_tree)
    writer.finish()
    assert new is not None
    shared = root / ".git" / f"sharedindex.{new.data[-20:].hex()}"
    shared.write_bytes(new.data)
    split = root / ".git" / "hand-index"
    split.write_bytes(gitindex.split_part(new.data, new.tree_ext))
    return new, split


def as_git_sees_it(root: Path, index: Path) -> tuple[str, str]:
    return git(root, "ls-files", "-s", index=index), git(root, "write-tree", index=index)


def test_a_rewritten_index_holds_what_git_add_records_and_its_trees(tmp_path):
    root = make_repo(tmp_path / "r")
    (root / "a" / "one.txt").write_text("edited\n")
    os.chmod(root / "b" / "x.txt", 0o755)
    (root / "b-c").unlink()
    (root / "c" / "d" / "e" / "f.txt").unlink()  # its directories go with it
    (root / "b" / "y" / "new.txt").write_text("new beside an old one\n")
    (root / "n" / "m").mkdir(parents=True)
    (root / "n" / "m" / "fresh.txt").write_text("in a new directory\n")
    (root / "zzz").write_text("sorts after every entry\n")
    (root / "link").unlink()
    os.symlink("b0", root / "link")
    changes = ["a/one.txt", "b/x.txt", "b-c", "c/d/e/f.txt", "b/y/new.txt", "n/m/fresh.txt"]
    new, split = rewrite(root, store_by_hand(root, tmp_path, [*changes, "zzz", "link"]))

    fresh = tmp_path / "fresh-index"
    git(root, "add", "-A", index=fresh)
    expected = as_git_sees_it(root, fresh)
    assert as_git_sees_it(root, split) == expected
    assert new.tree.hex() == expected[1].strip()
    # The stat data is the files': git sees nothing to refresh.
    assert git(root, "diff-files", "--name-only", index=split) == ""
    assert git(root, "ls-files", "--others", index=split) == ""
    # The parsed view of the new index names its entries where they are.
    assert new.index is not None
    assert new.index.paths == sorted(new.index.paths)
    assert [p.decode() for p in new.index.paths] == git(root, "ls-files", index=fresh).split()
    assert new.index.entry(b"a/two.txt") is not None
    assert new.index.entry(b"a/two.txt")[0] == 0o100755
    assert new.index.entry(b"b-c") is None


def test_the_cache_tree_it_writes_stays_right_when_git_changes_the_index_later(tmp_path):
    """A wrong entry count in the cache tree would make git reuse a stale subtree the next
    time it writes a tree: change files under cached and rebuilt directories, then compare."""
    root = make_repo(tmp_path / "r")
    (root / "b" / "y" / "z.txt").write_text("edited\n")
    (root / "q" / "r").mkdir(parents=True)
    (root / "q" / "r" / "s.txt").write_text("new\n")
    _new, split = rewrite(root, store_by_hand(root, tmp_path, ["b/y/z.txt", "q/r/s.txt"]))
    for rel in ("a/deep/er/x.txt", "b/y/z.txt", "q/r/s.txt", "zz/last.txt"):
        (root / rel).write_text(f"changed again: {rel}\n")
    (root / "a" / "deep" / "er" / "y.txt").write_text("another\n")
    git(root, "add", "-A", index=split)
    fresh = tmp_path / "fresh-index"
    git(root, "add", "-A", index=fresh)
    assert as_git_sees_it(root, split) == as_git_sees_it(root, fresh)


def test_an_index_without_a_cache_tree_gets_every_tree_built(tmp_path):
    root = make_repo(tmp_path / "r")
    git(root, "read-tree", "--empty")
    git(root, "add", "-A")  # no write-tree: no cache tree
    index = gitindex.read_index((root / ".git" / "index").read_bytes())
    assert index is not None and index.tree is None
    (root / "b" / "x.txt").write_text("edited\n")
    new, split = rewrite(root, store_by_hand(root, tmp_path, ["b/x.txt"]))
    fresh = tmp_path / "fresh-index"
    git(root, "add", "-A", index=fresh)
    expected = as_git_sees_it(root, fresh)
    assert as_git_sees_it(root, split) == expected
    assert new.tree.hex() == expected[1].strip()


def test_removing_a_path_the_index_does_not_hold_is_refused(tmp_path):
    root = make_repo(tmp_path / "r")
    index = gitindex.read_index((root / ".git" / "index").read_bytes())
    assert index is not None
    assert gitindex.rewrite_index(index, {b"nope": None}, lambda data: b"\0" * 20) is None


def test_a_file_that_is_also_a_directory_is_refused(tmp_path):
    root = make_repo(tmp_path / "r")
    index = gitindex.read_index((root / ".git" / "index").read_bytes())
    assert index is not None
    st = os.lstat(root / "README")
    entry = (b"README/inner", st, 0o100644, b"\1" * 20)
    assert gitindex.rewrite_index(index, {b"README/inner": entry}, lambda d: b"\0" * 20) is None
    entry = (b"b", st, 0o100644, b"\1" * 20)  # b/ holds files
    assert gitindex.rewrite_index(index, {b"b": entry}, lambda d: b"\0" * 20) is None


def test_trees_only_stores_the_same_trees_without_the_index(tmp_path):
    root = make_repo(tmp_path / "r")
    index = gitindex.read_index((root / ".git" / "index").read_bytes())
    assert index is not None
    (root / "a" / "one.txt").write_text("edited\n")
    changed = store_by_hand(root, tmp_path, ["a/one.txt"])
    stored: list[bytes] = []

    def keep(data: bytes) -> bytes:
        stored.append(data)
        return hashlib.sha1(b"tree %d\0" % len(data) + data).digest()

    full = gitindex.rewrite_index(index, changed, keep)
    assert full is not None and full.index is not None
    only = gitindex.rewrite_index(index, changed, keep, trees_only=True)
    assert only is not None and only.data == b"" and only.index is None
    assert only.tree == full.tree and only.tree_ext == full.tree_ext
    assert stored[: len(stored) // 2] == stored[len(stored) // 2 :]


def test_untrusted_index_entries_are_found_as_git_lists_them(tmp_path):
    """The index is read directly; it must name the same entries as `git ls-files -v -s` for
    assume-unchanged, skip-worktree and gitlink entries, and every path as `git ls-files`."""
    repo = tmp_path / "r"
    for i in range(300):
        path = repo / f"d{i % 7}" / ("n" * (i % 90)) / f"f{i}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{i}\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    blob = git(repo, "hash-object", "-w", "d0/f0.txt").strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{blob},zz/sub")
    files = git(repo, "ls-files").split("\n")
    for version, flags in ((2, ["--assume-unchanged"]), (3, ["--skip-worktree"])):
        git(repo, "update-index", *flags, *files[5:300:37])
        data = (repo / ".git" / "index").read_bytes()
        assert int.from_bytes(data[4:8], "big") == version
        listed = git(repo, "ls-files", "-v", "-s").splitlines()
        expected = sorted(
            (line.split("\t", 1)[1].encode(), line.split()[1] == "160000")
            for line in listed
            if line[0].islower() or line[0] == "S" or line.split()[1] == "160000"
        )
        index = gitindex.read_index(data)
        assert index is not None
        assert sorted(index.flagged) == expected
        assert len(expected) > 8
        assert index.unusual == (version == 3)
        assert index.path_set == {
            os.fsencode(p) for p in git(repo, "ls-files", "-z").split("\0") if p
        }
    git(repo, "update-index", "--index-version", "4")
    assert gitindex.read_index((repo / ".git" / "index").read_bytes()) is None


@pytest.mark.parametrize(
    "data",
    [
        # A TREE that is not a cache tree.
        b"DIRC\0\0\0\2\0\0\0\0" + b"TREE" + (3).to_bytes(4, "big") + b"xyz",
        b"DIRC\0\0\0\4" + bytes(20),
    ],
)
def test_an_index_whose_cache_tree_cannot_be_located_is_not_split(data):
    data += hashlib.sha1(data).digest()
    assert gitindex.split_index_over(data) is None


def test_an_unparsable_cache_tree_is_never_rewritten(tmp_path):
    root = make_repo(tmp_path / "r")
    data = bytearray((root / ".git" / "index").read_bytes())
    at = data.rfind(b"TREE")
    data[at + 9 : at + 10] = b"x"  # the root's entry count is no longer a number
    index = gitindex.read_index(bytes(data))
    assert index is not None and index.nodes is None and index.tree is None
    assert gitindex.rewrite_index(index, {}, lambda d: b"\0" * 20) is None


@pytest.mark.parametrize("length", [0xF00 - 1, 0xF00, 0xFFE, 0xFFF, 0x1000, 5000])
def test_names_as_long_as_the_length_field_and_longer_are_read_and_rewritten(tmp_path, length):
    """An entry's 12-bit name length holds 0xFFF for every name that long or longer (the
    name then runs to its NUL). No such file fits a path on disk here, but an index can
    hold one (``update-index --cacheinfo``): it must be read, and copied, as git reads it."""
    root = make_repo(tmp_path / "r")
    blob = git(root, "hash-object", "-w", "README").strip()
    parts = ["long"]
    while len("/".join(parts)) < length:
        parts.append("n" * min(200, length - len("/".join(parts)) - 1))
    name = "/".join(parts)[:length]
    assert len(name) == length and not name.endswith("/")
    git(root, "update-index", "--add", "--cacheinfo", f"100644,{blob},{name}")
    git(root, "write-tree")
    index = gitindex.read_index((root / ".git" / "index").read_bytes())
    assert index is not None
    listed = git(root, "ls-files", "-z").split("\0")[:-1]
    assert [p.decode() for p in index.paths] == listed
    assert index.entry(name.encode()) == (0o100644, bytes.fromhex(blob), 0)
    (root / "a" / "one.txt").write_text("edited beside a long name\n")
    new, split = rewrite(root, store_by_hand(root, tmp_path, ["a/one.txt"]))
    assert git(root, "ls-files", "-z", index=split).split("\0")[:-1] == listed
    fresh = tmp_path / "fresh-index"
    git(root, "read-tree", git(root, "write-tree").strip(), index=fresh)
    git(root, "update-index", "--add", "a/one.txt", index=fresh)
    assert new.tree.hex() == git(root, "write-tree", index=fresh).strip()
