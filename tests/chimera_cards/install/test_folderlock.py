"""Parallel installs into one agent folder: every writer holds the folder's lock around its
read-modify-write of the index and its swaps, so no process loses another's entry.

Real processes (the console entry, as a user or a CI matrix would start them), one real store.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from conftest import make_card

from chimera_cards._importer.pipeline import import_source
from chimera_cards._install.folderlock import FolderLockError, folder_lock
from chimera_cards._install.receipt import INDEX_NAME, read_index
from chimera_cards._store.facade import Store

PARALLEL = 16


def _cli(*args: str) -> subprocess.Popen:
    env = {**os.environ, "CHIMERA_CARDS_DEBUG": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "chimera_cards", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _wait_all(procs: list[subprocess.Popen]) -> list[tuple[int, str, str]]:
    done = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        done.append((proc.returncode, out, err))
    return done


@pytest.fixture
def sixteen(tmp_path) -> tuple[Path, list[str]]:
    db = tmp_path / "cards.db"
    names = [f"skill-{i:02d}" for i in range(PARALLEL)]
    with Store(db) as store:
        for name in names:
            (res,) = import_source(store, make_card(tmp_path / "cards", name))
            assert res.status == "active"
    return db, names


@pytest.mark.slow
def test_parallel_installs_into_one_folder_lose_no_index_entry(sixteen, tmp_path):
    db, names = sixteen
    skills = tmp_path / "skills"
    procs = [_cli("install", name, "--to", str(skills), "--store", str(db)) for name in names]
    results = _wait_all(procs)
    assert [r[0] for r in results] == [0] * PARALLEL, [r[2] for r in results if r[0]]
    assert sorted(read_index(skills)) == names
    assert sorted(p.name for p in skills.iterdir() if not p.name.startswith(".")) == names
    # Nothing half-done is left beside them, and the lock adds nothing: only the index.
    assert [p.name for p in skills.iterdir() if p.name.startswith(".")] == [INDEX_NAME]
    check = subprocess.run(
        [sys.executable, "-m", "chimera_cards", "check", str(skills), "--store", str(db), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert check.returncode == 0 and json.loads(check.stdout)["ok"]


@pytest.mark.slow
def test_parallel_install_uninstall_and_sync_leave_an_index_that_matches_the_folder(
    sixteen, tmp_path
):
    """Half the processes install, a quarter uninstall what was there before, a quarter sync:
    whatever order they ran in, the index lists exactly the folders that are there."""
    db, names = sixteen
    skills = tmp_path / "skills"
    first = subprocess.run(
        [
            sys.executable,
            "-m",
            "chimera_cards",
            "install",
            *names[:4],
            "--to",
            str(skills),
            "--store",
            str(db),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert first.returncode == 0, first.stderr
    procs = [_cli("install", n, "--to", str(skills), "--store", str(db)) for n in names[8:]]
    procs += [_cli("uninstall", n, "--to", str(skills)) for n in names[:4]]
    procs += [_cli("sync", n, "--to", str(skills), "--store", str(db)) for n in names[4:8]]
    results = _wait_all(procs)
    assert all(code == 0 for code, _, _ in results), [r[2] for r in results if r[0]]
    on_disk = sorted(p.name for p in skills.iterdir() if not p.name.startswith("."))
    assert sorted(read_index(skills)) == on_disk
    assert set(names[8:]) <= set(on_disk) and not set(names[:4]) & set(on_disk)


def test_a_writer_waits_for_the_lock_and_a_stuck_one_is_reported_not_overrun(tmp_path):
    """Another thread (its own context, as another process would be) waits, then gives up with
    FolderLockError; the holder's own nested calls go through (the lock is re-entrant)."""
    skills = tmp_path / "skills"
    seen: list[BaseException | None] = []

    def other() -> None:
        try:
            with folder_lock(skills, wait=0.3):
                seen.append(None)
        except FolderLockError as exc:
            seen.append(exc)

    with folder_lock(skills) as path:
        assert path == skills
        with folder_lock(skills, wait=0.01):  # nested in the same context: no wait
            pass
        start = time.monotonic()
        waiter = threading.Thread(target=other)
        waiter.start()
        waiter.join(timeout=30)
        assert time.monotonic() - start >= 0.3
    assert len(seen) == 1 and isinstance(seen[0], FolderLockError)
    waiter = threading.Thread(target=other)
    waiter.start()
    waiter.join(timeout=30)
    assert seen[1] is None  # released when the holder left


def test_the_lock_is_released_when_its_holder_dies(tmp_path):
    skills = tmp_path / "skills"
    skills.mkdir()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            f"fd = os.open({str(skills)!r}, os.O_RDONLY)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX)\n"
            "print('held', flush=True)\n"
            "time.sleep(60)\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(FolderLockError), folder_lock(skills, wait=0.2):
            pass
    finally:
        holder.kill()
        holder.wait(timeout=10)
    with folder_lock(skills, wait=5):
        pass


def test_a_path_that_is_not_a_folder_cannot_be_locked(tmp_path):
    skills = tmp_path / "skills"
    skills.write_text("a file where the folder should be\n")
    with pytest.raises(FolderLockError), folder_lock(skills):
        pass
    assert skills.read_text() == "a file where the folder should be\n"


@pytest.mark.slow
def test_install_waits_while_another_process_holds_the_folder(sixteen, tmp_path):
    """An install started while the folder is locked writes nothing until the lock is free."""
    db, names = sixteen
    skills = tmp_path / "skills"
    skills.mkdir()
    fd = os.open(skills, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    proc = _cli("install", names[0], "--to", str(skills), "--store", str(db))
    try:
        time.sleep(1.0)
        assert proc.poll() is None and not (skills / names[0]).exists()
    finally:
        os.close(fd)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert sorted(read_index(skills)) == [names[0]]
