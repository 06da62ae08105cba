"""The quick test loop and honest benchmark output: what the README promises exists.

`slow` is a registered marker (so `-m "not slow"` selects something real and a typo in a marker
fails), the README gives both test commands, and the start-up benchmark prints CPU time beside
wall time for both CLIs.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from conftest import REPO_ROOT, TESTS_DIR

# Each starts Python processes (about half a second).
pytestmark = pytest.mark.slow


def test_the_slow_marker_is_registered_and_the_readme_gives_both_commands():
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "--markers"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
        check=True,
    )
    assert "@pytest.mark.slow:" in proc.stdout
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    assert 'python -m pytest -q -m "not slow"' in readme
    assert "python -m pytest -q " in readme


def test_the_startup_benchmark_prints_cpu_beside_wall_for_both_clis():
    proc = subprocess.run(
        [sys.executable, "benchmarks/bench_startup.py", "--runs", "1", "--warmup", "0"],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
        check=True,
    )
    header = next(line for line in proc.stdout.splitlines() if line.startswith("command"))
    assert header.split()[1:] == ["wall", "ratio", "cpu", "ratio", "target", "(CPU)"]
    rows = {
        line.split("  ")[0].strip(): line
        for line in proc.stdout.splitlines()
        if line.startswith(("chimera-cards", "reference-loop"))
    }
    # Both CLIs' --version and --help, and check of ten skills, are judged against a CPU target.
    for label in (
        "chimera-cards --version",
        "chimera-cards --help",
        "reference-loop --version",
        "reference-loop --help",
        "chimera-cards check (10 skills)",
    ):
        assert label in rows, proc.stdout
        assert rows[label].rstrip().endswith(("meets", "MISSES")), rows[label]
        assert rows[label].count("ms") == 2 and rows[label].count("x ") >= 2, rows[label]


ALL_SLOW = """import pathlib

import pytest

pathlib.Path(__file__).with_suffix(".imported").touch()
pytestmark = pytest.mark.slow


def test_slow():
    pass
"""


@pytest.mark.parametrize(
    ("markexpr", "imported", "passed"),
    [("not slow", False, 1), ("", True, 2), ("not slow or slow", True, 2)],
)
def test_the_quick_loop_does_not_import_a_file_whose_every_test_is_slow(
    tmp_path, markexpr, imported, passed
):
    """``-m "not slow"`` leaves a file whose ``pytestmark`` is slow unimported (its imports can
    cost seconds); any other selection imports and runs it as before."""
    (tmp_path / "test_all_slow.py").write_text(ALL_SLOW)
    (tmp_path / "test_quick.py").write_text("def test_quick():\n    pass\n")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "conftest", "-p", "no:cacheprovider"]
        + (["-m", markexpr] if markexpr else [])
        + [str(tmp_path)],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(TESTS_DIR)},
        timeout=120,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (tmp_path / "test_all_slow.imported").exists() is imported
    assert f"{passed} passed" in proc.stdout, proc.stdout
