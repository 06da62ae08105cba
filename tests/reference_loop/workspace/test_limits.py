"""Files an attempt leaves that a look must not read: a 64 GiB sparse file (``truncate -s 64G``),
one over 1 GiB, too many bytes changed in all, too many new files. Each is refused from its
stat data, never opened: the look finishes at once, names it in ``Diff.oversized``, and undoes
it (a new file removed, a changed one written back), and the restore leaves the tree the
snapshot's byte for byte. Every test runs under both engines, in a plain folder and in a
repository's top (the two first snapshots differ)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from test_workspace import git, make_project, tree_state

from reference_loop._workspace.core import Workspace
from reference_loop._workspace.limits import Limits
from reference_loop._workspace.records import Diff

pytestmark = pytest.mark.usefixtures("workspace_engine")

SIXTY_FOUR_GIB = 64 << 30


def sparse(path: Path, size: int) -> None:
    with open(path, "ab") as fh:
        fh.truncate(size)


def look_past_64_gib(path: Path, look: Callable[[], Diff]) -> Diff:
    """``look()`` after ``path`` became a 64 GiB sparse file: done at once, the file unread."""
    sparse(path, SIXTY_FOUR_GIB)
    started = time.monotonic()
    diff = look()
    assert time.monotonic() - started < 1.0
    return diff


@pytest.fixture(params=["folder", "repository"])
def project(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    make_project(root)
    (root / "data.bin").write_bytes(b"the user's data\n")
    if request.param == "repository":
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "base")
    return root


def test_a_64_gib_sparse_new_file_is_refused_unread_and_removed(project):
    before = tree_state(project)
    with Workspace(project) as ws:
        ws.snapshot()
        (project / "README.md").write_text("a real change beside it\n")
        diff = look_past_64_gib(project / "huge.bin", ws.diff)
        assert [(r.path, r.status) for r in diff.oversized] == [("huge.bin", "A")]
        assert "sparse" in diff.oversized[0].why or "bytes" in diff.oversized[0].why
        assert [f.path for f in diff.files] == ["README.md"]
        assert "huge.bin" not in diff.state and "huge.bin" not in diff.text
        assert not (project / "huge.bin").exists()
        ws.restore()
    assert tree_state(project) == before


def test_a_file_of_the_snapshot_grown_to_64_gib_is_written_back_unread(project):
    before = tree_state(project)
    with Workspace(project) as ws:
        ws.snapshot()
        diff = look_past_64_gib(project / "data.bin", ws.diff_and_restore)
        assert [(r.path, r.status) for r in diff.oversized] == [("data.bin", "M")]
        assert diff.files == [] and diff.state == {}
        assert (project / "data.bin").read_bytes() == b"the user's data\n"
        assert ws.diff().oversized == [] and ws.diff().empty
    assert tree_state(project) == before


def test_a_file_over_the_size_limit_is_refused_even_when_written_whole(project):
    before = tree_state(project)
    limits = Limits(file_bytes=1000)
    with Workspace(project, limits=limits) as ws:
        ws.snapshot()
        (project / "written.bin").write_bytes(b"x" * 1001)
        (project / "fits.bin").write_bytes(b"x" * 1000)
        diff = ws.diff()
        assert [r.path for r in diff.oversized] == ["written.bin"]
        assert "1,001 bytes" in diff.oversized[0].why
        assert [f.path for f in diff.files] == ["fits.bin"]
        ws.restore()
    assert tree_state(project) == before


def test_files_past_the_bytes_changed_in_all_are_refused(project):
    before = tree_state(project)
    with Workspace(project, limits=Limits(changed_bytes=2500)) as ws:
        ws.snapshot()
        for name in ("a.bin", "b.bin", "c.bin", "d.bin"):
            (project / name).write_bytes(b"x" * 1000)
        diff = ws.diff()
        assert [r.path for r in diff.oversized] == ["c.bin", "d.bin"]
        assert [f.path for f in diff.files] == ["a.bin", "b.bin"]
        ws.restore()
    assert tree_state(project) == before


def test_new_files_past_the_count_limit_are_refused(project):
    before = tree_state(project)
    with Workspace(project, limits=Limits(new_files=3)) as ws:
        ws.snapshot()
        (project / "many").mkdir()
        for n in range(4):
            (project / "many" / f"f{n}.txt").write_text(f"{n}\n")
        (project / "many" / "f4.txt").symlink_to("f0.txt")
        diff = ws.diff()
        assert [r.path for r in diff.oversized] == ["many/f3.txt", "many/f4.txt"]
        assert all("new files" in r.why for r in diff.oversized)
        assert len(diff.files) == 3
        ws.restore()
    assert tree_state(project) == before


def test_a_sparse_file_under_the_sparse_size_is_read_as_any_other(project):
    with Workspace(project) as ws:
        ws.snapshot()
        sparse(project / "small-hole.bin", 1 << 20)
        diff = ws.diff()
        assert diff.oversized == []
        assert [f.path for f in diff.files] == ["small-hole.bin"]
        assert os.path.getsize(project / "small-hole.bin") == 1 << 20


def test_a_large_file_of_the_users_own_tree_is_snapshotted(tmp_path):
    root = tmp_path / "ws"
    make_project(root)
    (root / "own.bin").write_bytes(b"y" * 2000)
    with Workspace(root, limits=Limits(file_bytes=1000)) as ws:
        ws.snapshot()
        diff = ws.diff()
        assert diff.empty and diff.oversized == []
        (root / "own.bin").unlink()
        assert [(f.path, f.status) for f in ws.diff().files] == [("own.bin", "D")]
        ws.restore()
    assert (root / "own.bin").read_bytes() == b"y" * 2000
