"""Real processes against one store file: concurrent importers, and a process SIGKILLed inside
its write transaction. The suite runs the eight-writer test with a few cards per process; set
CHIMERA_CARDS_CONCURRENCY_CARDS=200 to run the full 8 x 200 by hand."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import dump_store, make_card

from chimera_cards._importer.pipeline import PAUSE_ENV
from chimera_cards._store.facade import Store
from chimera_cards._store.verify import verify_store

CLI = [sys.executable, "-c", "from chimera_cards._cli.app import main; main()"]
PER_PROCESS = int(os.environ.get("CHIMERA_CARDS_CONCURRENCY_CARDS", "10"))
TIMEOUT = 120 + PER_PROCESS  # seconds; generous for 2 shared CI cores

# One process: import each card in its own call (its own transaction), so writers interleave.
WORKER = """
import sys
from chimera_cards._importer.pipeline import import_source
from chimera_cards._store.facade import Store
with Store(sys.argv[1]) as store:
    for card in sys.argv[2:]:
        [result] = import_source(store, card)
        if result.outcome != "imported":
            sys.exit(f"{card}: {result.outcome} {result.error}")
"""


def _cards(root: Path, prefix: str, count: int) -> list[Path]:
    return [make_card(root, f"{prefix}-card-{index:03d}") for index in range(count)]


@pytest.mark.slow
def test_eight_processes_importing_different_cards_end_with_every_version(tmp_path):
    db = tmp_path / "cards.db"
    groups = [_cards(tmp_path / f"p{n}", f"p{n}", PER_PROCESS) for n in range(8)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WORKER, str(db), *map(str, cards)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for cards in groups
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 0, err
    with Store(db) as store:
        versions = store.versions()
        assert len(versions) == 8 * PER_PROCESS
        assert len({v.name for v in versions}) == 8 * PER_PROCESS
        assert all(v.status == "active" for v in versions)
        report = verify_store(store)
        assert report.ok, report.problems
        assert report.audit_entries == 8 * PER_PROCESS


@pytest.mark.slow
def test_two_cli_processes_importing_at_once_both_succeed(tmp_path):
    db = tmp_path / "cards.db"
    _cards(tmp_path / "left", "left", 20)
    _cards(tmp_path / "right", "right", 20)
    make_card(tmp_path / "left", "shared-card")
    make_card(tmp_path / "right", "shared-card")  # identical bytes in both folders
    procs = [
        subprocess.Popen(
            [*CLI, "import", str(tmp_path / side), "--store", str(db)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for side in ("left", "right")
    ]
    outputs = [proc.communicate(timeout=TIMEOUT) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], outputs
    shared = [line for out, _ in outputs for line in out.splitlines() if "shared-card" in line]
    assert sorted(line.split()[0] for line in shared) == ["already", "imported"]
    with Store(db) as store:
        assert len(store.versions()) == 41
        assert verify_store(store).ok


@pytest.mark.slow
def test_a_process_killed_inside_its_import_transaction_leaves_nothing(tmp_path):
    db = tmp_path / "cards.db"
    with Store(db) as store:
        from chimera_cards._importer.pipeline import import_source

        import_source(store, make_card(tmp_path / "seed", "seed-card"))
    before = dump_store(db)
    folder = tmp_path / "batch"
    _cards(folder, "doomed", 30)
    marker = tmp_path / "inside-transaction"
    env = {**os.environ, PAUSE_ENV: str(marker)}
    proc = subprocess.Popen(
        [*CLI, "import", str(folder), "--store", str(db)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the import never reached its transaction"
            time.sleep(0.02)
        # The rows are written but not committed; another reader must not see them.
        assert dump_store(db) == before
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    with Store(db) as store:  # opens (recovering the WAL) and is exactly as before
        assert [v.name for v in store.versions()] == ["seed-card"]
        assert verify_store(store, record=False).ok
    assert dump_store(db) == before
    # And the interrupted import can simply be run again.
    rerun = subprocess.run(
        [*CLI, "import", str(folder), "--store", str(db)],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    assert rerun.returncode == 0, rerun.stderr
    with Store(db) as store:
        assert len(store.versions()) == 31 and verify_store(store).ok


@pytest.mark.slow
@pytest.mark.parametrize("writers", [3])
def test_concurrent_opening_of_a_brand_new_store_migrates_once(tmp_path, writers):
    db = tmp_path / "fresh.db"
    code = "import sys; from chimera_cards._store.facade import Store; Store(sys.argv[1]).close()"
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(db)], stderr=subprocess.PIPE, text=True)
        for _ in range(writers * 3)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=TIMEOUT)
        assert proc.returncode == 0, err
    with Store(db) as store:
        assert verify_store(store, record=False).ok
