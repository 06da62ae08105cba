"""Long runs talk: a piped bench prints one line per finished run, Ctrl-C in ``run`` says the tree
was restored and exits 130, and both CLIs print ``--help`` without importing their commands.

Real processes: the console scripts run as a user runs them, a real SIGINT to the process group
(what a terminal's Ctrl-C sends), real files checked afterwards.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


def _script(name: str) -> list[str]:
    path = BIN / name
    return [str(path)] if path.exists() else [sys.executable, "-m", name.replace("-", "_")]


@pytest.mark.slow
def test_a_piped_bench_prints_one_line_per_finished_run():
    proc = subprocess.run(
        [
            *_script("reference-loop"),
            "bench",
            "--task",
            "page-numbers",
            "--seeds",
            "2",
            "--arms",
            "none,last",
            "--max-attempts",
            "2",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("bench ")]
    assert len(lines) == 4, proc.stderr
    pattern = re.compile(
        r"bench \d/4: (none|last) page-numbers seed [01]: (solved at attempt \d|not solved) "
        r"\(\d attempts?, \d+\.\d s\)$"
    )
    assert all(pattern.match(ln) for ln in lines), lines


@pytest.mark.slow
def test_ctrl_c_in_run_restores_the_workspace_and_exits_130(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "a.txt").write_text("original\n")
    started = tmp_path / "started"
    agent = f"sh -c 'echo changed > a.txt; echo new > b.txt; touch {started}; sleep 60'"
    proc = subprocess.Popen(
        [
            *_script("reference-loop"),
            "run",
            "--workspace",
            str(work),
            "--verify",
            "false",
            "--task-text",
            "change a.txt",
            "--attempter",
            f"cmd:{agent}",
            "--max-attempts",
            "2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not started.exists():
            assert time.monotonic() < deadline and proc.poll() is None, proc.stderr
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert "interrupted — workspace restored (2 files)" in err
    assert "Aborted!" not in err and "Traceback" not in err
    assert sorted(p.name for p in work.iterdir()) == ["a.txt"]
    assert (work / "a.txt").read_text() == "original\n"


@pytest.mark.parametrize(
    ("prog", "entry", "light"),
    [
        (
            "chimera-cards",
            "chimera_cards._cli.entry:run",
            ("click", "chimera_cards._store", "chimera_cards._review"),
        ),
        (
            "reference-loop",
            "reference_loop._cli.entry:run",
            ("click", "reference_loop._run", "reference_loop._bench", "reference_loop._workspace"),
        ),
    ],
)
def test_help_does_not_import_the_commands(prog, entry, light):
    module, function = entry.split(":")
    code = (
        "import importlib, sys\n"
        f"sys.argv = [{prog!r}, '--help']\n"
        f"m = importlib.import_module({module!r})\n"
        "try:\n"
        f"    m.{function}()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('\\n'.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    loaded = set(proc.stderr.split())
    assert "Usage:" in proc.stdout
    for name in light:
        assert not any(m == name or m.startswith(name + ".") for m in loaded), name
    assert "run" in proc.stdout or "import" in proc.stdout
