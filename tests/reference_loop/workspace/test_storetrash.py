"""The private store is removed off the caller's path; trash a killed process left is swept."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from reference_loop._workspace import storetrash
from reference_loop._workspace.core import Workspace

# A process that closes a workspace and is killed before its remover thread can start: the
# store has been renamed to trash, and nothing is left alive to delete it.
KILLED_BEFORE_REMOVAL = """
import os, signal, sys, threading
from pathlib import Path
from reference_loop._workspace.core import Workspace
ws = Workspace(Path(sys.argv[1]))
ws.snapshot()
threading.Thread.start = lambda self: None
ws.close()
print(ws.removal.trash, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


@pytest.fixture
def stores(tmp_path, monkeypatch):
    """A private temp directory for the workspace stores (plain directories go there)."""
    where = tmp_path / "stores"
    where.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(where))
    return where


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("a = 1\n")
    (root / "big.bin").write_bytes(os.urandom(1 << 20))
    return root


def test_close_frees_the_store_path_at_once_and_deletes_its_files_eventually(project, stores):
    ws = Workspace(project)
    ws.snapshot()
    private = Path(ws._tmp)
    ws.close()
    assert not private.exists()
    assert ws.removal is not None
    assert ws.removal.wait(timeout=30)
    assert list(stores.iterdir()) == []
    assert (project / "src" / "a.py").read_text() == "a = 1\n"


def test_close_with_wait_returns_once_everything_is_deleted(project, stores):
    ws = Workspace(project)
    ws.snapshot()
    ws.close(wait=True)
    assert list(stores.iterdir()) == []
    ws.close()  # idempotent


def test_a_killed_removers_trash_is_swept_by_the_next_workspace(project, stores):
    env = {**os.environ, "TMPDIR": str(stores)}
    proc = subprocess.run(
        [sys.executable, "-c", KILLED_BEFORE_REMOVAL, str(project)],
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    trash = Path(proc.stdout.decode().strip())
    assert trash.parent == stores
    assert (trash / "store" / "git" / "objects").is_dir()  # left behind, store and all
    with Workspace(project) as ws:
        ws.snapshot()
        ours = Path(ws._tmp)
        deadline = time.monotonic() + 30
        while trash.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not trash.exists()
        assert ours.is_dir()  # a live workspace's store is never swept
    assert ws.removal is not None and ws.removal.wait(timeout=30)
    assert list(stores.iterdir()) == []


def test_sweep_leaves_alone_what_it_cannot_prove_is_dead_trash(stores):
    ns = storetrash._pid_namespace()
    dead = _dead_pid()
    keep = {
        # a live process's trash (this one's: its remover may still be running)
        f"reference-loop-trash-{ns}-{os.getpid()}-abc123",
        # another pid namespace's trash: its pid means nothing here
        f"reference-loop-trash-{ns + 1}-{dead}-abc123",
        # the user's own files that merely share the prefix
        "reference-loop-trash-notes",
        f"reference-loop-trash-{ns}-{dead}-abc123.txt",
    }
    for name in keep:
        if name.endswith(("notes", ".txt")):
            (stores / name).write_text("user data\n")
        else:
            (stores / name).mkdir()
            (stores / name / "f").write_text("x\n")
    target = stores / "users-dir"
    target.mkdir()
    (target / "precious").write_text("keep\n")
    link = stores / f"reference-loop-trash-{ns}-{dead}-link01"
    link.symlink_to(target)  # a symlink is never followed, nor removed
    removable = stores / f"reference-loop-trash-{ns}-{dead}-gone01"
    (removable / "store").mkdir(parents=True)

    removed = storetrash.sweep(str(stores))

    assert removed == [str(removable)]
    assert not removable.exists()
    assert {p.name for p in stores.iterdir()} == keep | {"users-dir", link.name}
    assert (target / "precious").read_text() == "keep\n"


def test_trash_names_never_replace_an_existing_entry(stores):
    # Renaming a directory onto an existing empty directory replaces it: discard must create
    # its trash name exclusively, so a user's empty directory of any name survives.
    empties = [
        stores / f"reference-loop-trash-{storetrash._pid_namespace()}-{os.getpid()}-{i}"
        for i in range(50)
    ]
    for d in empties:
        d.mkdir()
    for _ in range(20):
        store = Path(tempfile.mkdtemp(prefix="reference-loop-ws-", dir=stores))
        (store / "f").write_text("x\n")
        removal = storetrash.discard(str(store))
        assert removal.wait(timeout=30)
        assert not store.exists()
    assert all(d.is_dir() for d in empties)
    assert sorted(stores.iterdir()) == sorted(empties)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid
