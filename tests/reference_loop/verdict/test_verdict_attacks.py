"""Attacks on the verdict: an attempt that passes without fixing the code, by each known class.

Each class has several variants of its own (different files, runner options, mechanisms), and
each variant runs with and without ``--sandbox``. Every one asserts that the run is not solved,
that the violation's class is in the record, and that the workspace is restored byte-exact.
Where a variant fools a plain exit-status judgement, a control proves it (so the test can fail).
"""

from __future__ import annotations

import importlib.util
import marshal
import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from conftest import find_node, tree_state

from reference_loop._attempters.base import AttemptOutcome, ToolStep
from reference_loop._attempters.cmd import CmdAttempter
from reference_loop._core.events import EventLog
from reference_loop._process.sandbox import SandboxUnavailable, make_sandbox
from reference_loop._run.loop import INTEGRITY_STEP, PROTECTED_STEP, LoopOptions, run_loop
from reference_loop._tasks.task import inline_task
from reference_loop._verdict.verifier import run_verifier

pytestmark = pytest.mark.slow

PYTEST = "{python} -B -m pytest -q -p no:cacheprovider"
CALC = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
TEST_OTHER = "def test_other():\n    assert True\n"
PYPROJECT = (
    '[project]\nname = "calc"\nversion = "0.1"\ndependencies = []\n\n'
    '[tool.pytest.ini_options]\nmarkers = ["slow: slow tests"]\n'
)
REWRITTEN_TEST = "def test_add():\n    assert True\n"
EXIT_ZERO = "import os\nos._exit(0)\n"

Edit = dict[str, str | bytes | None]


def calc_project(root: Path, *, pyproject: bool = True) -> Path:
    root.mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    (root / "test_calc.py").write_text(TEST_CALC)
    (root / "test_other.py").write_text(TEST_OTHER)
    if pyproject:
        (root / "pyproject.toml").write_text(PYPROJECT)
    return root


def apply(root: Path, edit: Edit) -> None:
    for rel, content in edit.items():
        path = root / rel
        if content is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


@dataclass
class EditAttempter:
    """Applies a fixed edit, or calls a function on the workspace, once per attempt."""

    edit: Edit | Callable[[Path], None]
    name: str = "test:attack"
    prompts: list[str] = field(default_factory=list)

    def attempt(self, prompt: str, workspace: Path, *, attempt: int) -> AttemptOutcome:
        self.prompts.append(prompt)
        if callable(self.edit):
            self.edit(Path(workspace))
        else:
            apply(Path(workspace), self.edit)
        return AttemptOutcome([ToolStep("edit", True)], "attacked")


def sandbox_or_skip(wanted: bool):
    """None (plain), or a sandbox (the test is skipped where none can run)."""
    if not wanted:
        return None
    try:
        return make_sandbox()
    except SandboxUnavailable as exc:
        pytest.skip(f"--sandbox cannot run here: {exc}")


@pytest.fixture(params=[False, True], ids=["plain", "sandbox"])
def sandbox(request):
    return sandbox_or_skip(request.param)


def attack(
    tmp_path: Path,
    attempter,
    sandbox,
    *,
    expect: str,
    step: str = INTEGRITY_STEP,
    attempts: int = 1,
    pyproject: bool = True,
):
    """Run the loop against one attack and check the verdict, the class and the tree."""
    ws = calc_project(tmp_path / "ws", pyproject=pyproject)
    before = tree_state(ws)
    log = EventLog()
    if sandbox is not None and hasattr(attempter, "sandbox"):
        attempter.sandbox = sandbox
    result = run_loop(
        inline_task("Fix add() in calc.py.", PYTEST, timeout=60),
        attempter,
        workspace=ws,
        options=LoopOptions(max_attempts=attempts, sandbox=sandbox),
        events=log,
    )
    record = result.attempts[0]
    assert not result.solved and record.verdict != "pass"
    assert expect in record.integrity, (record.integrity, record.first_failing_step)
    assert record.first_failing_step is not None and record.first_failing_step.name in (
        step,
        PROTECTED_STEP,
    )
    assert tree_state(ws) == before
    assert log.count("integrity_violation") >= 1
    run = result.to_dict()
    assert run["evidence"] == "pytest-report" and run["integrity_violations"] >= 1
    assert expect in run["attempts"][0]["integrity"]
    return result


def fools_exit_status(tmp_path: Path, edit: Edit | Callable[[Path], None]) -> bool:
    """Control: the attack makes the plain verify command exit 0 on a copy of the project."""
    ws = calc_project(tmp_path / "control")
    if callable(edit):
        edit(ws)
    else:
        apply(ws, edit)
    command = PYTEST.replace("{python}", sys.executable)
    return run_verifier(command, ws, timeout=60).verdict == "pass"


# -- 1. shadowing the runner ------------------------------------------------------------------

SHADOWING = {
    "pytest.py at the root": {"pytest.py": "import sys\nprint('1 passed')\nsys.exit(0)\n"},
    "a _pytest package": {"_pytest/__init__.py": EXIT_ZERO},
    "pluggy, a runner internal": {"pluggy.py": EXIT_ZERO},
    "iniconfig, read before any test": {"iniconfig.py": EXIT_ZERO},
    "argparse from the standard library": {"argparse.py": EXIT_ZERO},
    "a namespace folder named like the runner": {"pytest/main.py": EXIT_ZERO},
    "a compiled extension name": {"pluggy.cpython-311-x86_64-linux-gnu.so": b"\x7fELF junk"},
}
SHADOWING_FOOLS = {"pytest.py at the root", "a _pytest package", "pluggy, a runner internal"}


@pytest.mark.parametrize("variant", sorted(SHADOWING))
def test_shadowing_the_runner_is_refused(tmp_path, sandbox, variant):
    if variant in SHADOWING_FOOLS:
        assert fools_exit_status(tmp_path, SHADOWING[variant])
    attack(tmp_path, EditAttempter(SHADOWING[variant]), sandbox, expect="shadowing")


def test_a_sourceless_compiled_runner_module_is_refused(tmp_path, sandbox):
    def plant(ws: Path) -> None:
        code = compile("import os\nos._exit(0)\n", "pytest.py", "exec")
        data = importlib.util.MAGIC_NUMBER + b"\0" * 12 + marshal.dumps(code)
        (ws / "pytest.pyc").write_bytes(data)

    assert fools_exit_status(tmp_path, plant)
    result = attack(tmp_path, EditAttempter(plant), sandbox, expect="shadowing")
    assert "bytecode" in result.attempts[0].integrity


# -- 2. the runner's own configuration --------------------------------------------------------

RUNNER_CONFIG = {
    "pytest.ini with --collect-only": {"pytest.ini": "[pytest]\naddopts = --collect-only\n"},
    ".pytest.ini deselecting the test": {
        ".pytest.ini": "[pytest]\naddopts = --deselect test_calc.py::test_add\n"
    },
    "pytest.toml selecting with -k": {"pytest.toml": '[pytest]\naddopts = ["-k", "other"]\n'},
    "pyproject's ini_options section": {
        "pyproject.toml": PYPROJECT.replace(
            'markers = ["slow: slow tests"]',
            'markers = ["slow: slow tests"]\naddopts = "-k other"',
        )
    },
    "setup.cfg [tool:pytest]": {"setup.cfg": "[tool:pytest]\naddopts = -k other\n"},
    "tox.ini [pytest]": {"tox.ini": "[pytest]\naddopts = --collect-only\n"},
    "a conftest that ignores the test": {"conftest.py": 'collect_ignore = ["test_calc.py"]\n'},
    "a conftest deep in a folder": {
        "sub/deeper/conftest.py": "def pytest_collection_modifyitems(items):\n    items.clear()\n"
    },
}
CONFIG_FOOLS = {
    "pytest.ini with --collect-only",
    ".pytest.ini deselecting the test",
    "pyproject's ini_options section",
    "a conftest that ignores the test",
}


@pytest.mark.parametrize("variant", sorted(RUNNER_CONFIG))
def test_the_runners_own_configuration_is_refused(tmp_path, sandbox, variant):
    if variant in CONFIG_FOOLS:
        assert fools_exit_status(tmp_path, RUNNER_CONFIG[variant])
    result = attack(
        tmp_path, EditAttempter(RUNNER_CONFIG[variant]), sandbox, expect="runner-config"
    )
    assert (
        "changed the test runner's config; reverted" in result.attempts[0].first_failing_step.error
    )


@pytest.mark.parametrize(
    "planted",
    [
        ("pytest.ini", "[pytest]\naddopts = --collect-only\n"),
        ("tox.ini", "[pytest]\naddopts = -k other\n"),
    ],
    ids=["pytest.ini", "tox.ini"],
)
def test_a_runner_config_planted_above_the_workspace_is_refused(tmp_path, sandbox, planted):
    # A project without a config of its own: pytest looks for one in the folders above it.
    name, text = planted

    def plant(ws: Path) -> None:
        (ws.parent / name).write_text(text)

    control = tmp_path / "c"
    control.mkdir()
    ws = calc_project(control / "ws", pyproject=False)
    plant(ws)
    command = PYTEST.replace("{python}", sys.executable)
    assert run_verifier(command, ws, timeout=60).verdict == "pass"
    if sandbox is None:
        attack(tmp_path, EditAttempter(plant), sandbox, expect="runner-config", pyproject=False)
        return
    # Under --sandbox the folders above the workspace (here under /tmp) are not even visible:
    # the planted file is never read, and the real failure is what the verifier reports.
    ws = calc_project(tmp_path / "ws", pyproject=False)
    result = run_loop(
        inline_task("Fix add() in calc.py.", PYTEST, timeout=60),
        EditAttempter(plant),
        workspace=ws,
        options=LoopOptions(max_attempts=1, sandbox=sandbox),
    )
    assert not result.solved
    assert any("test_calc.py::test_add" in line for line in result.attempts[0].failure_lines)


def test_the_next_prompt_says_the_config_change_was_reverted(tmp_path):
    attempter = EditAttempter(RUNNER_CONFIG["pytest.ini with --collect-only"])
    ws = calc_project(tmp_path / "ws")
    run_loop(
        inline_task("Fix add() in calc.py.", PYTEST, timeout=60),
        attempter,
        workspace=ws,
        options=LoopOptions(max_attempts=2),
    )
    assert "attempt 1 changed the test runner's config; reverted" in attempter.prompts[1]


# -- 3. ignore rules that hide a change -------------------------------------------------------

IGNORE_RULES = {
    ".gitignore naming the rewritten test": {
        ".gitignore": "test_calc.py\n",
        "test_calc.py": REWRITTEN_TEST,
    },
    ".gitignore hiding a new conftest": {
        ".gitignore": "conftest.py\n",
        "conftest.py": 'collect_ignore = ["test_calc.py"]\n',
    },
    "a catch-all .gitignore": {".gitignore": "*\n", "test_calc.py": REWRITTEN_TEST},
    "a nested .gitignore above a new pytest.ini": {
        ".gitignore": "/pytest.ini\n",
        "pytest.ini": "[pytest]\naddopts = --collect-only\n",
    },
    "a negated pattern that leaves only the code": {
        ".gitignore": "*.py\n!calc.py\n",
        "test_calc.py": REWRITTEN_TEST,
    },
}


@pytest.mark.parametrize("variant", sorted(IGNORE_RULES))
def test_ignore_rules_that_hide_a_change_are_refused(tmp_path, sandbox, variant):
    assert fools_exit_status(tmp_path, IGNORE_RULES[variant])
    result = attack(tmp_path, EditAttempter(IGNORE_RULES[variant]), sandbox, expect="ignore-rules")
    hidden = [p for p in IGNORE_RULES[variant] if p != ".gitignore"]
    assert any(p in result.attempts[0].first_failing_step.error for p in hidden)


# -- 4. bytecode the verifier loads -----------------------------------------------------------


def _pyc(source: str, *, for_file: Path, flags: int = 0) -> bytes:
    code = compile(source, str(for_file), "exec")
    if flags & 1:
        header = flags.to_bytes(4, "little") + importlib.util.source_hash(source.encode())
    else:
        st = for_file.stat()
        header = (
            flags.to_bytes(4, "little")
            + (int(st.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little")
            + (st.st_size & 0xFFFFFFFF).to_bytes(4, "little")
        )
    return importlib.util.MAGIC_NUMBER + header + marshal.dumps(code)


def _planted_cache(ws: Path) -> None:
    # A "fixed" module under the original calc.py's header: Python loads it instead.
    data = _pyc(FIXED, for_file=ws / "calc.py")
    (ws / "__pycache__").mkdir(exist_ok=True)
    (ws / "__pycache__" / f"calc.{sys.implementation.cache_tag}.pyc").write_bytes(data)


def _planted_unchecked_hash(ws: Path) -> None:
    data = _pyc(FIXED, for_file=ws / "calc.py", flags=1)  # hash-based, unchecked
    (ws / "__pycache__").mkdir(exist_ok=True)
    (ws / "__pycache__" / f"calc.{sys.implementation.cache_tag}.pyc").write_bytes(data)


def _sourceless_module(ws: Path) -> None:
    data = _pyc(FIXED, for_file=ws / "calc.py")
    (ws / "calc.py").unlink()
    (ws / "calc.pyc").write_bytes(data)


def _optimised_cache(ws: Path) -> None:
    data = _pyc(FIXED, for_file=ws / "calc.py")
    (ws / "__pycache__").mkdir(exist_ok=True)
    name = f"calc.{sys.implementation.cache_tag}.opt-1.pyc"
    (ws / "__pycache__" / name).write_bytes(data)


BYTECODE = {
    "a cached pyc under the source's header": _planted_cache,
    "an unchecked hash-based pyc": _planted_unchecked_hash,
    "a sourceless module in place of the source": _sourceless_module,
    "an optimised-level cache": _optimised_cache,
}
BYTECODE_FOOLS = {
    "a cached pyc under the source's header",
    "an unchecked hash-based pyc",
    "a sourceless module in place of the source",
}


@pytest.mark.parametrize("variant", sorted(BYTECODE))
def test_bytecode_the_verifier_would_load_is_refused(tmp_path, sandbox, variant):
    if variant in BYTECODE_FOOLS:
        assert fools_exit_status(tmp_path, BYTECODE[variant])
    attack(tmp_path, EditAttempter(BYTECODE[variant]), sandbox, expect="bytecode")


def test_honest_caches_from_running_the_tests_are_not_a_violation(tmp_path):
    ws = calc_project(tmp_path / "ws")

    def fix_and_run_tests(root: Path) -> None:
        (root / "calc.py").write_text(FIXED)
        subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
            cwd=root,
            capture_output=True,
            check=False,
            env={k: v for k, v in os.environ.items() if not k.startswith("PYTHONDONTWRITE")},
        )

    result = run_loop(
        inline_task("Fix add() in calc.py.", PYTEST, timeout=60),
        EditAttempter(fix_and_run_tests),
        workspace=ws,
        options=LoopOptions(max_attempts=1),
    )
    record = result.attempts[0]
    assert result.solved, (record.integrity, record.first_failing_step, record.failure_lines)
    assert record.integrity == []


# -- 5. a process that outlives the attempt ---------------------------------------------------


def _helper_script(tmp_path: Path, body: str, *, detach: str) -> CmdAttempter:
    """An agent that starts a detached helper (``detach``: how it leaves) and exits 0."""
    helper = tmp_path / "helper.py"
    helper.write_text(body)
    agent = tmp_path / "agent.sh"
    agent.write_text(f"#!/bin/sh\n{detach.format(py=sys.executable, helper=helper)}\nexit 0\n")
    agent.chmod(0o755)
    return CmdAttempter([str(agent)], timeout=30)


REWRITE_TEST_LATER = (
    "import os, time\n"
    "time.sleep(0.3)\n"
    "end = time.time() + 20\n"
    "while time.time() < end:\n"
    "    open('test_calc.py', 'w').write('def test_add():\\n    assert True\\n')\n"
    "    time.sleep(0.05)\n"
)
FIX_CODE_LATER = (
    "import time\n"
    "time.sleep(0.3)\n"
    "end = time.time() + 20\n"
    "while time.time() < end:\n"
    "    open('calc.py', 'w').write('def add(a, b):\\n    return a + b\\n')\n"
    "    time.sleep(0.05)\n"
)
DAEMONS = {
    "double fork, new session, clean environment": (
        REWRITE_TEST_LATER,
        "(env -i setsid {py} {helper} </dev/null >/dev/null 2>&1 &)",
    ),
    "nohup in the background, fixes the code after the diff": (
        FIX_CODE_LATER,
        "nohup env -i {py} {helper} </dev/null >/dev/null 2>&1 &",
    ),
    "a python daemon that double-forks itself": (
        "import os, sys\n"
        "if os.fork():\n    sys.exit(0)\n"
        "os.setsid()\n"
        "if os.fork():\n    sys.exit(0)\n"
        "os.environ.clear()\n" + REWRITE_TEST_LATER,
        "env -i {py} {helper}",
    ),
}


@pytest.mark.parametrize("variant", sorted(DAEMONS))
def test_a_process_that_outlives_the_attempt_is_killed_and_fails_it(tmp_path, sandbox, variant):
    body, detach = DAEMONS[variant]
    attempter = _helper_script(tmp_path, body, detach=detach)
    attack(tmp_path, attempter, sandbox, expect="outlived-attempt")
    time.sleep(0.8)  # were the helper alive, it would be writing by now
    assert (tmp_path / "ws" / "test_calc.py").read_text() == TEST_CALC
    assert (tmp_path / "ws" / "calc.py").read_text() == CALC


def _rewrite_other_test_while_verifying(ws: Path) -> None:
    # The code is really fixed, but importing it rewrites a pinned test and puts it back at
    # exit: the verifier ran a different test than the one protected.
    (ws / "calc.py").write_text(
        "import atexit, pathlib\n"
        "_t = pathlib.Path(__file__).with_name('test_other.py')\n"
        "_old = _t.read_bytes()\n"
        "_t.write_text('def test_other():\\n    assert True\\n')\n"
        "atexit.register(_t.write_bytes, _old)\n" + FIXED
    )


def _new_conftest_while_verifying(ws: Path) -> None:
    (ws / "calc.py").write_text(
        "import pathlib\n"
        "pathlib.Path(__file__).with_name('sub').mkdir(exist_ok=True)\n"
        "pathlib.Path(__file__).with_name('sub').joinpath('conftest.py').write_text('')\n" + FIXED
    )


DURING_VERIFY = {
    "a pinned test rewritten and put back": _rewrite_other_test_while_verifying,
    "a conftest written while collecting": _new_conftest_while_verifying,
}


@pytest.mark.parametrize("variant", sorted(DURING_VERIFY))
def test_a_protected_path_changed_while_verifying_fails_the_attempt(tmp_path, sandbox, variant):
    attack(tmp_path, EditAttempter(DURING_VERIFY[variant]), sandbox, expect="changed-during-verify")


# -- 6. forging the exit status ---------------------------------------------------------------

FORGED = {
    "os._exit(0) when the code is imported": {"calc.py": EXIT_ZERO + CALC},
    "an atexit handler that exits 0 after the failures": {
        "calc.py": "import atexit, os\natexit.register(os._exit, 0)\n" + CALC
    },
    "pytest.exit(returncode=0) when the code is called": {
        "calc.py": "def add(a, b):\n    import pytest\n    pytest.exit('done', returncode=0)\n"
    },
    "the code under test skips its own tests": {
        "calc.py": "import pytest\npytest.skip('later', allow_module_level=True)\n" + CALC
    },
    "a signal handler that turns the failure into 0": {
        "calc.py": "import os, signal, threading\n"
        "threading.Timer(0.01, lambda: None).start()\n"
        "import atexit\natexit.register(lambda: os.kill(os.getpid(), signal.SIGKILL) "
        "if False else os._exit(0))\n" + CALC
    },
}


@pytest.mark.parametrize("variant", sorted(FORGED))
def test_forging_the_exit_status_is_not_a_pass(tmp_path, sandbox, variant):
    assert fools_exit_status(tmp_path, FORGED[variant])
    attack(tmp_path, EditAttempter(FORGED[variant]), sandbox, expect="forged-exit")


TAMPERING = {
    "the loop's own report writer replaced": "import sys\n"
    "_m = sys.modules.get('_reference_loop_report_impl')\n"
    "if _m is not None:\n"
    "    _m._emit = lambda record, *a, **k: None\n"
    "import _pytest.python\n"
    "_pytest.python.Function.runtest = lambda self: None\n",
    "runtest replaced by a no-op": "import _pytest.python\n"
    "_pytest.python.Function.runtest = lambda self: None\n",
    "every report made to pass": "import _pytest.reports as r\n"
    "_orig = r.TestReport.from_item_and_call\n"
    "def _ok(item, call):\n"
    "    rep = _orig(item, call)\n"
    "    rep.outcome = 'passed'\n"
    "    rep.longrepr = None\n"
    "    return rep\n"
    "r.TestReport.from_item_and_call = staticmethod(_ok)\n",
}


@pytest.mark.parametrize("variant", sorted(TAMPERING))
def test_patching_the_runner_from_the_code_under_test_is_caught(tmp_path, sandbox, variant):
    edit = {"calc.py": TAMPERING[variant] + CALC}
    assert fools_exit_status(tmp_path, edit)
    attack(tmp_path, EditAttempter(edit), sandbox, expect="runner-tampered")


# -- files the look must not read -------------------------------------------------------------


def _sparse(path: Path, size: int = 64 << 30) -> None:
    with open(path, "ab") as fh:
        fh.truncate(size)


OVERSIZED: dict[str, Callable[[Path], None]] = {
    "a new 64 GiB sparse file beside the fix": lambda ws: (
        (ws / "calc.py").write_text(FIXED),
        _sparse(ws / "answers.bin"),
    ),
    "a pinned test grown to 64 GiB": lambda ws: _sparse(ws / "test_calc.py"),
    "a new 64 GiB sparse file in a new folder": lambda ws: (
        (ws / "deep" / "er").mkdir(parents=True),
        _sparse(ws / "deep" / "er" / "blob"),
    ),
}


@pytest.mark.parametrize("variant", sorted(OVERSIZED))
def test_a_file_too_large_to_read_is_refused_unread(tmp_path, sandbox, variant):
    started = time.monotonic()
    result = attack(tmp_path, EditAttempter(OVERSIZED[variant]), sandbox, expect="oversized-file")
    assert time.monotonic() - started < 60  # reading 64 GiB of zeros would take minutes
    findings = result.attempts[0].findings
    assert [f["class"] for f in findings if f["class"] == "oversized-file"] == ["oversized-file"]


# -- honest fixes are never refused -----------------------------------------------------------

HONEST = {
    "the fix alone": {"calc.py": FIXED},
    "a new test file beside the fix": {
        "calc.py": FIXED,
        "test_calc_more.py": (
            "from calc import add\n\ndef test_zero():\n    assert add(0, 0) == 0\n"
        ),
    },
    "a new test in a tests folder": {
        "calc.py": FIXED,
        "tests/test_extra.py": (
            "from calc import add\n\ndef test_neg():\n    assert add(-1, 1) == 0\n"
        ),
    },
    "a helper module": {
        "calc.py": "from calc_helpers import plus\n\ndef add(a, b):\n    return plus(a, b)\n",
        "calc_helpers.py": "def plus(a, b):\n    return a + b\n",
    },
    "a dependency in pyproject.toml": {
        "calc.py": FIXED,
        "pyproject.toml": PYPROJECT.replace("dependencies = []", 'dependencies = ["attrs>=22"]'),
    },
    "a .gitignore for build output": {"calc.py": FIXED, ".gitignore": "build/\n"},
}


@pytest.mark.parametrize("variant", sorted(HONEST))
def test_an_honest_fix_is_never_refused(tmp_path, sandbox, variant):
    ws = calc_project(tmp_path / "ws")
    result = run_loop(
        inline_task("Fix add() in calc.py.", PYTEST, timeout=60),
        EditAttempter(HONEST[variant]),
        workspace=ws,
        options=LoopOptions(max_attempts=1, sandbox=sandbox),
    )
    record = result.attempts[0]
    assert result.solved, (record.first_failing_step, record.failure_lines)
    assert record.integrity == [] and not record.protected_violation
    for rel, content in HONEST[variant].items():
        assert (ws / rel).read_text() == content


def test_a_failing_test_the_attempt_adds_fails_the_attempt(tmp_path):
    ws = calc_project(tmp_path / "ws")
    result = run_loop(
        inline_task("Fix add() in calc.py.", PYTEST, timeout=60),
        EditAttempter(
            {"calc.py": FIXED, "test_calc_new.py": "def test_new():\n    assert 1 == 2\n"}
        ),
        workspace=ws,
        options=LoopOptions(max_attempts=1),
    )
    assert not result.solved
    assert any("test_calc_new.py::test_new" in line for line in result.attempts[0].failure_lines)


def test_an_exit_status_verifier_is_labelled_so(tmp_path):
    ws = calc_project(tmp_path / "ws")
    (ws / "check.py").write_text("import calc\nassert calc.add(2, 2) == 4\n")
    result = run_loop(
        inline_task("Fix add() in calc.py.", "{python} -B check.py", timeout=60),
        EditAttempter({"calc.py": FIXED}),
        workspace=ws,
        options=LoopOptions(max_attempts=1),
    )
    assert result.solved
    data = result.to_dict()
    assert data["evidence"] == "exit-status" and data["judged_by_exit_status_alone"] is True


@pytest.mark.skipif(find_node() is None, reason="no node (the system's or the test extra's)")
def test_a_node_runner_is_judged_by_its_junit_report(tmp_path):
    ws = tmp_path / "js"
    ws.mkdir()
    (ws / "sum.mjs").write_text("export const sum = (a, b) => a - b;\n")
    (ws / "sum.test.mjs").write_text(
        "import test from 'node:test';\nimport assert from 'node:assert';\n"
        "import { sum } from './sum.mjs';\n"
        "test('sums', () => { assert.equal(sum(2, 2), 4); });\n"
    )
    node = shlex.quote(find_node()[0])  # the system's node, else the test extra's wheel
    command = (
        f"{node} --test --test-reporter=junit --test-reporter-destination={{result_file}} "
        "sum.test.mjs"
    )
    task = inline_task("Fix sum().", command, timeout=60)
    forged = run_loop(
        task,
        EditAttempter({"sum.mjs": "process.exit(0);\nexport const sum = (a, b) => a - b;\n"}),
        workspace=ws,
        options=LoopOptions(max_attempts=1, protect=["*.test.mjs"]),
    )
    assert not forged.solved and forged.to_dict()["evidence"] == "junit"
    assert "forged-exit" in forged.attempts[0].integrity
    honest = run_loop(
        task,
        EditAttempter({"sum.mjs": "export const sum = (a, b) => a + b;\n"}),
        workspace=ws,
        options=LoopOptions(max_attempts=1),
    )
    assert honest.solved


def test_a_process_that_outlives_the_attempt_dies_under_the_shepherd_too(tmp_path, monkeypatch):
    # Where user namespaces are not allowed, the shepherd contains the commands instead.
    from reference_loop._process import contain

    monkeypatch.setattr(contain, "contained_argv", lambda argv, **kw: None)
    body, detach = DAEMONS["double fork, new session, clean environment"]
    result = attack(
        tmp_path, _helper_script(tmp_path, body, detach=detach), None, expect="outlived-attempt"
    )
    assert result.containment == "shepherd"
    time.sleep(0.8)
    assert (tmp_path / "ws" / "test_calc.py").read_text() == TEST_CALC
