"""Hashing skill folders in two processes finds exactly what one process finds, whatever the
child does (finishes, dies, is slow), and a scan nobody waits for leaves no process behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import live_children, make_skill

from chimera_cards._bundles.folderscan import (
    MAX_RECEIPT_BYTES,
    RECEIPT_NAME,
    Scan,
    find_skill_folders,
    hash_folder,
    read_receipt_bytes,
    start_scan,
)


@pytest.fixture
def skills(tmp_path):
    """40 skill folders (enough for the second process), some with a link or a special file."""
    root = tmp_path / "skills"
    for i in range(40):
        folder = make_skill(root, f"s{i:02d}", {"run.sh": (f"echo {i}\n", True), "a/b.txt": "b"})
        if i % 5 == 1:
            (folder / "link").symlink_to("/etc/passwd")
        elif i % 5 == 3:
            os.mkfifo(folder / "a" / "pipe")
    return root


def _serial(root):
    return [hash_folder(f) for f in find_skill_folders(root)]


def test_two_processes_find_what_one_finds_wherever_they_meet(skills):
    expected = _serial(skills)
    assert sum(bool(problems) for _, problems, _ in expected) == 16
    for _ in range(5):  # they meet at a different folder each time
        with start_scan([skills], parallel=True) as scan:
            assert scan.result() == expected
        assert [f.name for f in scan.listed[0][1]] == [f"s{i:02d}" for i in range(40)]


def test_a_child_killed_at_once_is_made_up_for_by_this_process(skills):
    expected = _serial(skills)
    scan = Scan(find_skill_folders(skills), parallel=True)
    os.kill(scan._pid, signal.SIGKILL)
    assert scan.result() == expected
    assert not live_children()


def test_a_slow_child_leaves_the_work_to_this_process(skills, monkeypatch):
    from chimera_cards._bundles import folderscan

    expected = _serial(skills)
    parent, real = os.getpid(), folderscan.hash_folder

    def slow_in_the_child(folder):
        if os.getpid() != parent:
            time.sleep(0.5)  # it has taken one folder and is stuck on it
        return real(folder)

    monkeypatch.setattr(folderscan, "hash_folder", slow_in_the_child)
    scan = Scan(find_skill_folders(skills), parallel=True)
    assert scan.result() == expected
    assert scan._get(8) >= 39  # this process hashed all the others


def test_a_scan_whose_result_is_not_wanted_stops_its_child(skills, monkeypatch):
    from chimera_cards._bundles import folderscan

    parent, real = os.getpid(), folderscan.hash_folder

    def slow_in_the_child(folder):
        if os.getpid() != parent:
            time.sleep(30)  # still at work when the caller gives up
        return real(folder)

    monkeypatch.setattr(folderscan, "hash_folder", slow_in_the_child)
    before = live_children()
    with start_scan([skills], parallel=True) as scan:
        assert scan._pid in live_children()
    assert live_children() == before


def test_an_unreadable_directory_is_named_and_nothing_is_hashed(tmp_path, skills):
    (tmp_path / "file").write_text("x")
    with start_scan([skills, tmp_path / "file"], parallel=True) as scan:
        directory, error = scan.unreadable
        assert directory == tmp_path / "file" and isinstance(error, NotADirectoryError)
        assert scan.result() == [] and not scan._pid


def test_a_missing_directory_has_no_skills(tmp_path):
    with start_scan([tmp_path / "absent"]) as scan:
        assert scan.listed == [(tmp_path / "absent", [])] and scan.result() == []


def test_hashing_needs_neither_the_bundle_module_nor_dataclasses():
    code = textwrap.dedent(
        """
        import sys
        import chimera_cards._bundles.folderscan
        print(sorted(m for m in ("chimera_cards._bundles.bundle", "dataclasses", "json", "sqlite3")
                     if m in sys.modules))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"


def test_the_receipt_is_read_with_the_files_and_only_when_it_is_a_small_regular_file(tmp_path):
    plain, linked, huge = (make_skill(tmp_path, n, {"run.sh": "x"}) for n in ("a", "b", "c"))
    (plain / RECEIPT_NAME).write_bytes(b'{"name": "a"}')
    (tmp_path / "elsewhere.json").write_bytes(b'{"name": "b"}')
    (linked / RECEIPT_NAME).symlink_to(tmp_path / "elsewhere.json")
    (huge / RECEIPT_NAME).write_bytes(b" " * (MAX_RECEIPT_BYTES + 1))
    records = [hash_folder(f) for f in (plain, linked, huge)]
    assert [r[2] for r in records] == [b'{"name": "a"}', None, None]
    assert [read_receipt_bytes(f) for f in (plain, linked, huge)] == [r[2] for r in records]
    # Not a bundle file either way; the link is not even a problem (sidecars are left out).
    assert [[f[0] for f in r[0]] for r in records] == [["SKILL.md", "run.sh"]] * 3
    assert [r[1] for r in records] == [[], [], []]
