"""The hand-written object store is ordinary git: `git verify-pack` accepts the pack, `git
cat-file` reads every object back byte for byte, the tree id is the one `git add` + `git
write-tree` give for the same directory, and the index's stat data makes git see no change."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from reference_loop._workspace import gitstore


def run_git(env: dict[str, str], cwd: Path, *args: str, input: bytes | None = None) -> bytes:
    return subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, input=input
    ).stdout


def private_repo(tmp: Path, work: Path) -> dict[str, str]:
    gitdir = tmp / "store.git"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    subprocess.run(["git", "init", "-q", "--bare", str(gitdir)], env=env, check=True)
    env.update(GIT_DIR=str(gitdir), GIT_WORK_TREE=str(work), GIT_INDEX_FILE=str(tmp / "index"))
    run_git(env, work, "config", "core.bare", "false")
    return env


def sample_tree(root: Path) -> dict[str, bytes]:
    """Small, empty, duplicate, multi-block, multi-piece, executable files and a symlink."""
    files = {
        "a.txt": b"hello\n",
        "empty": b"",
        "dup1/x": b"same bytes\n",
        "dup2/x": b"same bytes\n",
        "sub/deep/er/blocks.bin": os.urandom(200_000),  # several 64 KiB deflate blocks
        "sub/pieces.bin": os.urandom(3 * (1 << 20) + 17),  # streamed in 1 MiB pieces
        "sub/big-dup.bin": b"",
        "run.sh": b"#!/bin/sh\necho hi\n",
        "a-b": b"sorts before a/ in a tree, after it in the index\n",
        "a/inner": b"inner\n",
        ".gitignore": b"*.log\n",
        "ignored.log": b"still stored\n",
    }
    files["sub/big-dup.bin"] = files["sub/pieces.bin"]
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    os.chmod(root / "run.sh", 0o755)
    os.symlink("a.txt", root / "link")
    (root / "emptydir").mkdir()
    return files


def test_pack_passes_verify_pack_and_every_object_reads_back(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    files = sample_tree(work)
    env = private_repo(tmp_path, work)
    pack_dir = os.path.join(env["GIT_DIR"], "objects", "pack")

    stored = gitstore.store_tree(os.fsencode(work), pack_dir)

    assert stored is not None
    packs = [f for f in os.listdir(pack_dir) if f.endswith(".pack")]
    assert len(packs) == 1 and not [f for f in os.listdir(pack_dir) if "tmp" in f]
    verify = run_git(env, work, "verify-pack", "-v", os.path.join(pack_dir, packs[0]))
    assert b": ok" in verify
    run_git(env, work, "fsck", "--strict", "--no-dangling")
    for rel, data in files.items():
        assert run_git(env, work, "cat-file", "blob", f"{stored.tree}:{rel}") == data
    assert run_git(env, work, "cat-file", "blob", f"{stored.tree}:link") == b"a.txt"
    # Duplicate bytes are stored once: count objects in the idx. The pack's object count is
    # written before its objects (its checksum is computed as it is written), so each file
    # that was a duplicate left room for a filler blob, which nothing refers to.
    listed = run_git(
        env, work, "show-index", input=Path(pack_dir, packs[0][:-5] + ".idx").read_bytes()
    )
    shas = [line.split()[1] for line in listed.splitlines()]
    assert len(shas) == len(set(shas))
    fillers = [
        sha
        for sha in shas
        if run_git(env, work, "cat-file", "-p", sha.decode()).startswith(
            b"reference-loop pack filler"
        )
    ]
    assert len(shas) - len(fillers) == stored.objects
    assert len(fillers) == 3  # dup2/x and sub/big-dup.bin, and the tree dup2 (dup1's twin)


def test_duplicates_taken_back_before_and_after_a_buffered_write_leave_a_valid_pack(tmp_path):
    """The pack is written in pieces of several MiB: a duplicate large file taken back while
    still buffered, or after part of it went to disk, must leave no stray bytes."""
    work = tmp_path / "work"
    work.mkdir()
    big = os.urandom(gitstore._WRITE_SIZE + 12345)  # spans a write on its second copy
    small = os.urandom(2 * (1 << 20) + 5)  # taken back while still buffered
    files = {"a/big": big, "b/big": big, "c/small": small, "d/small": small, "e/tail": b"t\n"}
    for rel, data in files.items():
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).write_bytes(data)
    env = private_repo(tmp_path, work)
    pack_dir = os.path.join(env["GIT_DIR"], "objects", "pack")
    stored = gitstore.store_tree(os.fsencode(work), pack_dir)
    assert stored is not None
    (pack,) = [f for f in os.listdir(pack_dir) if f.endswith(".pack")]
    assert b": ok" in run_git(env, work, "verify-pack", "-v", os.path.join(pack_dir, pack))
    for rel, data in files.items():
        assert run_git(env, work, "cat-file", "blob", f"{stored.tree}:{rel}") == data
    # Three blobs, four trees (a and b hold the same entry, as do c and d): no duplicate bytes.
    assert stored.objects == 7
    assert os.path.getsize(os.path.join(pack_dir, pack)) < len(big) + len(small) + 4096


def test_tree_and_index_match_what_git_add_writes(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    sample_tree(work)
    env = private_repo(tmp_path, work)
    stored = gitstore.store_tree(os.fsencode(work), os.path.join(env["GIT_DIR"], "objects", "pack"))
    assert stored is not None
    gitstore.write_index(env["GIT_INDEX_FILE"], stored.entries)

    # git reads the index: same tree, and its stat data says nothing changed on disk.
    assert run_git(env, work, "write-tree").decode().strip() == stored.tree
    subprocess.run(["git", "diff-files", "--quiet"], cwd=work, env=env, check=True)
    run_git(env, work, "ls-files", "-s")  # parses

    # The same directory through git add gives the same ids, modes included.
    other = {**env, "GIT_INDEX_FILE": str(tmp_path / "index-git")}
    run_git(other, work, "add", "-A", "-f")
    assert run_git(other, work, "write-tree").decode().strip() == stored.tree
    assert run_git(other, work, "ls-files", "-s") == run_git(env, work, "ls-files", "-s")


def test_nested_repository_files_stored_and_its_git_skipped(tmp_path):
    work = tmp_path / "work"
    (work / "inner" / ".git").mkdir(parents=True)
    (work / "inner" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (work / "inner" / "code.py").write_text("x = 1\n")
    env = private_repo(tmp_path, work)
    stored = gitstore.store_tree(os.fsencode(work), os.path.join(env["GIT_DIR"], "objects", "pack"))
    assert stored is not None
    assert stored.nested == {"inner"}
    assert [e[0] for e in stored.entries] == [b"inner/code.py"]


@pytest.mark.parametrize(
    "name",
    [".GIT", ".git.", ".git .", ".git::$INDEX_ALLOCATION", "git~1", ".g\u200cit", "back\\slash"],
)
def test_names_git_might_refuse_fall_back_to_git(tmp_path, name):
    work = tmp_path / "work"
    (work / "d").mkdir(parents=True)
    (work / "d" / name).write_text("x\n")
    env = private_repo(tmp_path, work)
    pack_dir = os.path.join(env["GIT_DIR"], "objects", "pack")
    assert gitstore.store_tree(os.fsencode(work), pack_dir) is None
    assert os.listdir(pack_dir) == []  # nothing half-written


@pytest.mark.parametrize(
    "name", [".gitattributes.orig", ".gitlab-ci.yml", ".github", ".git-blame-ignore-revs", "gitx"]
)
def test_names_that_only_start_like_git_are_stored_by_hand(tmp_path, name):
    work = tmp_path / "work"
    (work / "d").mkdir(parents=True)
    (work / "d" / name).write_text("x\n")
    env = private_repo(tmp_path, work)
    stored = gitstore.store_tree(os.fsencode(work), os.path.join(env["GIT_DIR"], "objects", "pack"))
    assert stored is not None
    assert [e[0] for e in stored.entries] == [b"d/" + name.encode()]
    gitstore.write_index(env["GIT_INDEX_FILE"], stored.entries)
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=work, env=env, capture_output=True, check=True
    ).stdout
    assert listed == b"d/" + name.encode() + b"\0"
    # git takes the same name: its own add of the tree gives the same tree id.
    assert (
        subprocess.run(
            ["git", "write-tree"], cwd=work, env=env, capture_output=True, check=True, text=True
        ).stdout.strip()
        == stored.tree
    )


def test_a_pack_whose_count_comes_first_is_filled_up_and_never_overfilled(tmp_path):
    """A pack told its object count before its objects hashes its bytes as they are written;
    fewer objects added (duplicates) are made up with filler blobs, more are refused."""
    work = tmp_path / "work"
    work.mkdir()
    env = private_repo(tmp_path, work)
    pack_dir = os.path.join(env["GIT_DIR"], "objects", "pack")
    writer = gitstore.PackWriter(pack_dir, count=4)
    one = writer.add(3, b"one\n")
    assert writer.add(3, b"one\n") == one  # a duplicate: stored once
    pack = writer.finish()
    assert writer.fillers == 3 and len(writer.objects) == 4
    assert b": ok" in run_git(env, work, "verify-pack", "-v", pack)
    assert run_git(env, work, "cat-file", "blob", one.hex()) == b"one\n"
    over = gitstore.PackWriter(pack_dir, count=1)
    over.add(3, b"a\n")
    over.add(3, b"b\n")
    with pytest.raises(ValueError, match="2 objects added to a pack of 1"):
        over.finish()
    over.abort()
    assert not [name for name in os.listdir(pack_dir) if "tmp" in name]


def test_pack_header_varint_sizes():
    # type in bits 4-6, size's low 4 bits, then 7 bits a byte, continuation bit set before.
    assert gitstore._pack_header(3, 0) == b"\x30"
    assert gitstore._pack_header(3, 15) == b"\x3f"
    assert gitstore._pack_header(3, 16) == b"\xb0\x01"
    assert gitstore._pack_header(2, 1 << 20) == b"\xa0\x80\x80\x04"
