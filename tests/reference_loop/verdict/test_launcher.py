"""The launcher that starts pytest with the report plugin registered (no ``-p`` lookup among the
installed distributions' entry points): it is used only for a command it replaces exactly, and
the run it starts behaves as the replaced entry point's would.

Each run is a real pytest process started the way the loop starts one (through the Harness),
beside the same command run plainly.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import tree_state
from test_verdict_attacks import PYTEST, EditAttempter, calc_project, sandbox_or_skip

from reference_loop._core.events import EventLog
from reference_loop._run.loop import LoopOptions, run_loop
from reference_loop._tasks.task import inline_task
from reference_loop._verdict.harness import LAUNCH_MODULE, Harness, launched

BIN = os.path.dirname(sys.executable)
SCRIPT = os.path.join(BIN, "pytest")
PATH = {"PATH": BIN + os.pathsep + os.environ.get("PATH", os.defpath)}
M_PYTEST = f"{sys.executable} -B -m pytest -q -p no:cacheprovider"
CONSOLE = "pytest -q -p no:cacheprovider"
# A test that writes down how its process was started.
WHERE = (
    "import json, os, sys\n\n\ndef test_where():\n"
    "    with open(os.environ['WHERE_OUT'], 'w') as fh:\n"
    "        json.dump({'argv0': sys.argv[0], 'path0': sys.path[0],\n"
    "                   'main': sys.modules['__main__'].__name__,\n"
    "                   'env': sorted(k for k in os.environ if k.startswith('REFERENCE_LOOP'))},\n"
    "                  fh)\n"
)
EXITS = {
    0: {"test_ok.py": "def test_ok():\n    assert True\n"},
    1: {"test_bad.py": "def test_bad():\n    assert 1 == 2\n"},
    2: {"test_broken.py": "def test_broken(:\n    pass\n"},
    5: {"notes.py": "X = 1\n"},
}


def plain(command: str, root: Path, env: dict[str, str] | None = None):
    return subprocess.run(
        ["/bin/sh", "-c", command],
        cwd=root,
        env={**os.environ, **PATH, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def judged(command: str, root: Path, env: dict[str, str] | None = None, plugins=None):
    with Harness(command, root, "pytest") as harness:
        prepared = harness.prepare(plugins=plugins)
        proc = subprocess.run(
            ["/bin/sh", "-c", prepared.command],
            cwd=root,
            env={**os.environ, **PATH, **prepared.env, **(env or {})},
            pass_fds=prepared.pass_fds,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        return prepared, proc, prepared.read()


def needs_console_script() -> None:
    if launched(CONSOLE, Path("/nonexistent"), PATH) is None:
        pytest.skip(f"no standard pytest console script next to {sys.executable}")


@pytest.mark.parametrize("command", [M_PYTEST, CONSOLE])
def test_only_a_command_replaced_exactly_is_launched(command):
    if command == CONSOLE:
        needs_console_script()
    found = launched(command, Path("/nonexistent"), PATH)
    assert found is not None and f"-P -m {LAUNCH_MODULE}" in found[0]
    assert found[0].endswith(" -q -p no:cacheprovider")
    for other in (
        f"{command} && echo done",  # a shell operator
        f"{command} '-k add'",  # quoting
        f"PYTHONPATH=src {command}",  # what the interpreter imports
        f"cd sub; {command}",
        f"{sys.executable} -c 'import sys' -m pytest",
        f"{sys.executable} -I -m pytest",  # PYTHONPATH ignored: the plugin with -p fails as well
        f"tox -e py -- {command}",
    ):
        assert launched(other, Path("/nonexistent"), PATH) is None, other


def test_a_pytest_script_in_the_workspace_or_an_unusual_one_is_not_replaced(tmp_path):
    needs_console_script()
    ws = tmp_path / "ws"
    (ws / "bin").mkdir(parents=True)
    text = Path(SCRIPT).read_text()
    planted = ws / "bin" / "pytest"
    planted.write_text(text)
    planted.chmod(0o755)
    assert launched("bin/pytest -q", ws, PATH) is None
    assert launched(f"{planted} -q", ws, PATH) is None
    # Outside the workspace, one line more than the standard wrapper: the script runs itself.
    odd = tmp_path / "odd" / "pytest"
    odd.parent.mkdir()
    odd.write_text(text.replace("import sys\n", "import sys\nprint('wrapped')\n"))
    odd.chmod(0o755)
    assert launched(f"{odd} -q", ws, PATH) is None
    shutil.copyfile(SCRIPT, odd)
    assert launched(f"{odd} -q", ws, PATH) is not None


@pytest.mark.slow
@pytest.mark.parametrize("status", sorted(EXITS))
@pytest.mark.parametrize("command", [M_PYTEST, CONSOLE])
def test_pytests_exit_status_passes_through_the_launcher(tmp_path, command, status):
    if command == CONSOLE:
        needs_console_script()
    root = tmp_path / "ws"
    root.mkdir()
    for name, text in EXITS[status].items():
        (root / name).write_text(text)
    prepared, proc, report = judged(command, root)
    assert LAUNCH_MODULE in prepared.command
    assert proc.returncode == plain(command, root).returncode == status
    assert report is not None and report.complete and report.exitstatus == status


@pytest.mark.slow
@pytest.mark.parametrize("command", [M_PYTEST, CONSOLE])
def test_the_launched_run_starts_as_the_replaced_entry_point(tmp_path, command):
    """sys.argv[0] (pytest's program name), sys.path[0] and the environment the tests see
    are the plain run's (only ``sys.flags.safe_path`` is set, as ``-P`` sets it)."""
    if command == CONSOLE:
        needs_console_script()
    root = tmp_path / "ws"
    root.mkdir()
    (root / "test_where.py").write_text(WHERE)
    seen = []
    for run in (plain, judged):
        out = tmp_path / f"{run.__name__}.json"
        run(command, root, {"WHERE_OUT": str(out)})
        seen.append(json.loads(out.read_text()))
    assert seen[1] == seen[0]
    assert seen[1]["env"] == []


@pytest.mark.slow
@pytest.mark.parametrize("command", [M_PYTEST, CONSOLE])
def test_the_users_no_cacheprovider_is_honoured(tmp_path, command):
    if command == CONSOLE:
        needs_console_script()
    root = tmp_path / "ws"
    root.mkdir()
    (root / "test_ok.py").write_text(EXITS[0]["test_ok.py"])
    names = []
    for run in (command, command.replace(" -p no:cacheprovider", "")):
        _, proc, report = judged(run, root)
        assert proc.returncode == 0, proc.stdout
        names.append({r.partition(" = ")[0] for r in report.registered})
    assert "cacheprovider" not in names[0] and "cacheprovider" in names[1]
    assert "_reference_loop_report" in names[0]


@pytest.mark.slow
def test_a_baseline_plugin_named_by_the_loop_is_loaded_by_the_launcher(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "test_ok.py").write_text(EXITS[0]["test_ok.py"])
    prepared, proc, _ = judged(M_PYTEST, root, plugins=["no_such_plugin_xyz"])
    assert LAUNCH_MODULE in prepared.command
    # Not found among the entry points, nor as a module: pytest's usage error, as with -p.
    assert proc.returncode == 4 and 'Error importing plugin "no_such_plugin_xyz"' in proc.stderr


# -- the workspace cannot stand in for pytest, the launcher or the plugin -------------------------

FAKE_PASS = "import sys\nprint('5 passed in 0.01s')\nsys.exit(0)\n"
PLANTS = {
    "a pytest package whose __main__ says all passed": {
        "pytest/__init__.py": "",
        "pytest/__main__.py": FAKE_PASS,
    },
    "a launcher module of the same name": {f"{LAUNCH_MODULE}.py": FAKE_PASS},
    # Imported first, it would patch the runner before the plugin fingerprints it, then hand
    # over to the loop's own launcher once off the stack: a report of tests that ran nothing.
    "a launcher that patches the runner, then runs the loop's own": {
        f"{LAUNCH_MODULE}.py": (
            "import atexit, importlib, os, runpy, sys\n"
            "m = importlib.import_module('_py' + 'test.py' + 'thon')\n"
            "setattr(getattr(m, 'Func' + 'tion'), 'run' + 'test', lambda self: None)\n"
            "me = os.path.abspath(__file__)\n"
            "for folder in sys.path:\n"
            "    real = os.path.join(os.path.abspath(folder or '.'), os.path.basename(me))\n"
            "    if real != me and os.path.isfile(real):\n"
            "        atexit.register(runpy.run_path, real, run_name='__main__')\n"
            "        break\n"
        )
    },
    "a report plugin module of the same name": {
        "_reference_loop_report.py": "import os\nos._exit(0)\n"
    },
}


@pytest.mark.slow
@pytest.mark.parametrize("sandboxed", [False, True], ids=["plain", "sandbox"])
@pytest.mark.parametrize("command", [PYTEST, CONSOLE], ids=["python-m", "script"])
@pytest.mark.parametrize("attack", sorted(PLANTS))
def test_a_module_planted_to_stand_in_for_the_launched_runner_is_not_solved(
    tmp_path, attack, command, sandboxed
):
    if command == CONSOLE:
        needs_console_script()
    sandbox = sandbox_or_skip(sandboxed)
    ws = calc_project(tmp_path / "ws")

    def edit(root: Path) -> None:
        for rel, text in PLANTS[attack].items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text)

    before = tree_state(ws)
    result = run_loop(
        inline_task("Make add() return the sum of its arguments.", command, timeout=60),
        EditAttempter(edit),
        workspace=ws,
        options=LoopOptions(max_attempts=1, sandbox=sandbox, review_rules=()),
        events=EventLog(),
    )
    (record,) = result.attempts
    assert not result.solved and record.verdict != "pass"
    assert tree_state(ws) == before


# -- a virtual environment inside the workspace ------------------------------------------------

BASE = getattr(sys, "_base_executable", sys.executable)
STDLIB = os.path.dirname(os.__file__)
VERSION = f"python{sys.version_info[0]}.{sys.version_info[1]}"
SITE = next(p for p in sys.path if p.endswith("site-packages"))
VENV_PYTEST = ".venv/bin/python -B -m pytest -q -p no:cacheprovider"
# Appended to the copied standard library's encodings package (imported before anything else):
# calc is loaded as it is, then its add replaced, so the unchanged test passes on the bug.
SUM_ON_IMPORT = """
import sys as _s
class _Finder:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != 'calc':
            return None
        _s.meta_path.remove(cls)
        import importlib.util
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module
        def exec_module(module):
            run(module)
            module.add = lambda a, b: a + b
        spec.loader.exec_module = exec_module
        return spec
_s.meta_path.insert(0, _Finder)
"""


def venv_calc_project(root: Path) -> Path:
    """The calc project with its own virtual environment in ``.venv`` (pytest reached through a
    ``.pth`` to this interpreter's site-packages, as a user's environment would hold it)."""
    calc_project(root)
    subprocess.run([BASE, "-m", "venv", "--without-pip", str(root / ".venv")], check=True)
    (root / ".venv" / "lib" / VERSION / "site-packages" / "deps.pth").write_text(SITE + "\n")
    return root


def home_at_a_copied_stdlib(root: Path) -> None:
    """pyvenv.cfg's home moved to a copy of the standard library in the workspace, one module of
    it extended: the venv's interpreter (a link to one outside) runs it in every run."""
    home = root / ".home"
    (home / "bin").mkdir(parents=True)
    skip = {"site-packages", "lib-dynload", "idlelib", "tkinter", "turtledemo", "ensurepip"}

    def ignore(folder: str, names: list[str]) -> list[str]:
        top = skip if folder == STDLIB else set()
        return [
            n
            for n in names
            if n in top
            or n in ("__pycache__", "test", "tests")
            or n.startswith(("test_", "config-"))
        ]

    lib = home / "lib" / VERSION
    shutil.copytree(STDLIB, lib, symlinks=True, ignore=ignore)
    encodings = lib / "encodings" / "__init__.py"
    encodings.write_text(encodings.read_text() + SUM_ON_IMPORT)
    cfg = root / ".venv" / "pyvenv.cfg"
    lines = cfg.read_text().splitlines()
    cfg.write_text(
        "\n".join(f"home = {home / 'bin'}" if ln.startswith("home") else ln for ln in lines) + "\n"
    )


def venv_loop(ws: Path, edit, sandbox):
    return run_loop(
        inline_task("Make add() return the sum of its arguments.", VENV_PYTEST, timeout=60),
        EditAttempter(edit),
        workspace=ws,
        options=LoopOptions(max_attempts=1, sandbox=sandbox, review_rules=()),
        events=EventLog(),
    )


def test_a_workspace_venvs_interpreter_is_launched(tmp_path):
    """The venv's python is a link to an interpreter outside: the launcher starts it, and what
    the workspace holds of it (pyvenv.cfg, site-packages) is the integrity checks' to guard."""
    ws = venv_calc_project(tmp_path / "ws")
    found = launched(VENV_PYTEST, ws.resolve(), PATH)
    assert found is not None and found[0].startswith(f".venv/bin/python -B -P -m {LAUNCH_MODULE}")


@pytest.mark.slow
@pytest.mark.parametrize("sandboxed", [False, True], ids=["plain", "sandbox"])
def test_a_venvs_home_moved_to_a_copied_stdlib_in_the_workspace_is_not_solved(tmp_path, sandboxed):
    sandbox = sandbox_or_skip(sandboxed)
    ws = venv_calc_project(tmp_path / "ws")
    # The attack works: the copied standard library's code makes the unchanged test pass.
    probe = venv_calc_project(tmp_path / "probe")
    home_at_a_copied_stdlib(probe)
    plain_run = plain(VENV_PYTEST, probe)
    assert plain_run.returncode == 0, plain_run.stdout
    before = tree_state(ws)
    result = venv_loop(ws, home_at_a_copied_stdlib, sandbox)
    (record,) = result.attempts
    assert not result.solved and record.verdict == "integrity"
    assert "runner-config" in record.integrity
    flagged = {f["path"] for f in record.findings if f["class"] == "runner-config"}
    assert ".venv/pyvenv.cfg" in flagged
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"
    assert tree_state(ws) == before


@pytest.mark.slow
@pytest.mark.parametrize("sandboxed", [False, True], ids=["plain", "sandbox"])
def test_an_honest_fix_run_by_a_workspace_venv_is_solved(tmp_path, sandboxed):
    sandbox = sandbox_or_skip(sandboxed)
    ws = venv_calc_project(tmp_path / "ws")

    def fix(root: Path) -> None:
        (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")

    result = venv_loop(ws, fix, sandbox)
    (record,) = result.attempts
    assert result.solved and record.verdict == "pass", record.integrity
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
