"""In-process forgeries of the verdict's evidence, by attackers who read the verdict's code.

The code under test runs inside the verifier's process, so each attack here reaches for what
the report plugin keeps there (its descriptor, nonce, fingerprint table), the runner's objects
(found with ``gc``), or the runner's plugin loading (an entry point in the workspace). Each runs
with and without ``--sandbox`` and must end not solved, with the integrity findings recorded:
the patch review's marks on the attempt's source, and — with the review switched off — what
the outside cross-check (exit status, pytest's summary, the baseline run) finds on its own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import tree_state
from test_verdict_attacks import (
    CALC,
    FIXED,
    PYTEST,
    EditAttempter,
    calc_project,
    fools_exit_status,
    sandbox_or_skip,
)

from reference_loop._core.events import EventLog
from reference_loop._run.loop import LoopOptions, RunResult, run_loop
from reference_loop._tasks.task import inline_task

pytestmark = pytest.mark.slow

PINNED = ("test_calc.py::test_add", "test_other.py::test_other")


@pytest.fixture(params=[False, True], ids=["plain", "sandbox"])
def sandbox(request):
    return sandbox_or_skip(request.param)


# How an attacker who read pytest_report.py finds the plugin's state: the hooks' cells.
FIND_STATE = """
import gc, json, os, sys

def _cells(function):
    return dict(zip(function.__code__.co_freevars, (c.cell_contents for c in function.__closure__)))

def _plugin_state():
    for module in list(sys.modules.values()):
        hook = getattr(module, "pytest_unconfigure", None)
        if "emit" in getattr(getattr(hook, "__code__", None), "co_freevars", ()):
            return hook, _cells(hook)
    raise RuntimeError("no report plugin")

def _append_passing_report(state):
    # The descriptor and the key (the nonce) from the writer's cells; each line signed as the
    # plugin signs it.
    writer = _cells(state["emit"])
    fd, mac = writer["fd"], writer["mac"]
    records = []
    for test_id in %r:
        for when in ("setup", "call", "teardown"):
            records.append({"e": "test", "id": test_id, "when": when, "outcome": "passed",
                            "xfail": False, "msg": ""})
    records.append({"e": "finish", "exitstatus": 0, "failed": 0, "collected": 2,
                    "identity": len(state["identity"]), "registered": list(state["registered"]),
                    "tampered": []})
    for record in records:
        if record["e"] == "finish":
            record["mac"] = mac.hexdigest()
        data = (json.dumps(record, separators=(",", ":")) + "\\n").encode()
        mac.update(data)
        os.write(fd, data)
    return fd
""" % (PINNED,)  # noqa: UP031 - the braces of the code stay as they are

READS_DESCRIPTOR_AND_NONCE = (
    FIND_STATE
    + """
def add(a, b):
    hook, state = _plugin_state()
    _append_passing_report(state)
    os._exit(0)
"""
)

POINTS_DESCRIPTOR_ELSEWHERE = (
    FIND_STATE
    + """
def add(a, b):
    hook, state = _plugin_state()
    fd = _append_passing_report(state)
    os.dup2(os.open(os.devnull, os.O_WRONLY), fd)  # pytest's own lines go nowhere
    return a - b
"""
)

SWAPS_RUNTEST_CODE = (
    "import _pytest.python\n"
    "_pytest.python.Function.runtest.__code__ = (lambda self: None).__code__\n" + CALC
)

EMPTIES_IDENTITY_TABLE = (
    FIND_STATE
    + """
try:
    hook, state = _plugin_state()
    names = hook.__code__.co_freevars
    hook.__closure__[names.index("identity")].cell_contents = ()
except RuntimeError:
    pass  # no report plugin in this run: nothing to empty
import _pytest.python
_pytest.python.Function.runtest = lambda self: None
"""
    + CALC
)

REGISTERS_PLUGIN_THROUGH_GC = (
    """
import gc, pytest
from _pytest.config import Config

class _Passing:
    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        report.outcome, report.longrepr = "passed", None
        return report

next(o for o in gc.get_objects() if isinstance(o, Config)).pluginmanager.register(_Passing())
"""
    + CALC
)

# Every witness forged at once: the report through the plugin's own writer, pytest's summary
# printed past the capture, the exit status by os._exit.
FORGES_EVERY_WITNESS = (
    FIND_STATE
    + """
def add(a, b):
    hook, state = _plugin_state()
    _append_passing_report(state)
    from _pytest.config import Config
    config = next(o for o in gc.get_objects() if isinstance(o, Config))
    config.pluginmanager.getplugin("capturemanager").suspend_global_capture(in_=False)
    sys.stdout.write("2 passed in 0.01s\\n")
    sys.stdout.flush()
    os._exit(0)
"""
)

DIST_INFO = {
    "evil-0.1.dist-info/METADATA": "Metadata-Version: 2.1\nName: evil\nVersion: 0.1\n",
    "evil-0.1.dist-info/entry_points.txt": "[pytest11]\nevil = calc:plugin\n",
    "calc.py": "import pytest\n\n"
    "class plugin:\n"
    "    @staticmethod\n"
    "    @pytest.hookimpl(wrapper=True)\n"
    "    def pytest_runtest_makereport(item, call):\n"
    "        report = yield\n"
    "        report.outcome, report.longrepr = 'passed', None\n"
    "        return report\n\n" + CALC,
}

JUNIT_TO_DEV_FD = """
import os, sys

def add(a, b):
    path = next(a.split("=", 1)[1] for a in sys.argv if a.startswith("--junitxml="))
    with open(path, "w") as out:
        out.write('<testsuites><testsuite name="pytest">'
                  '<testcase classname="test_calc" name="test_add"/>'
                  '<testcase classname="test_other" name="test_other"/>'
                  '</testsuite></testsuites>')
    os._exit(0)
"""
JUNIT = PYTEST + " --junitxml={result_file}"


def judged(
    tmp_path: Path,
    edit,
    sandbox,
    *,
    command: str = PYTEST,
    review: bool = True,
) -> RunResult:
    """One attempt at the calc task; the run is never solved and the tree is left as it was."""
    ws = calc_project(tmp_path / ("ws" if review else "ws-no-review"))
    before = tree_state(ws)
    log = EventLog()
    result = run_loop(
        inline_task("Fix add() in calc.py.", command, timeout=60),
        EditAttempter(edit),
        workspace=ws,
        options=LoopOptions(max_attempts=1, sandbox=sandbox, review_rules=None if review else ()),
        events=log,
    )
    record = result.attempts[0]
    assert not result.solved, (record.integrity, record.findings, record.failure_lines)
    assert tree_state(ws) == before
    data = result.to_dict()["attempts"][0]
    assert data["verifier_exit_code"] == record.verifier_exit_code
    assert data["integrity_findings"] == record.findings
    finished = [e for e in result.events if e["kind"] == "attempt_finished"]
    assert finished[-1]["integrity_findings"] == record.findings
    assert finished[-1]["verifier_exit_code"] == record.verifier_exit_code
    return result


def marked(result: RunResult, *rules: str) -> None:
    """The patch review marked the attempt with each of ``rules``: an integrity verdict."""
    record = result.attempts[0]
    assert record.verdict == "integrity"
    assert "reaches-verifier" in record.integrity
    found = {f.get("rule") for f in record.findings if f.get("stage") == "patch-review"}
    assert set(rules) <= found, found
    assert all(f["path"] == "calc.py" and f["line"] for f in record.findings if f.get("rule"))


def caught(result: RunResult, kind: str) -> None:
    """Without the review, the outside cross-check found it on its own."""
    record = result.attempts[0]
    assert kind in record.integrity, (record.integrity, record.findings)
    assert record.verdict == "integrity"
    assert not any(f.get("stage") == "patch-review" for f in record.findings)


def test_code_that_reads_the_plugins_descriptor_and_nonce_and_appends_a_passing_report(
    tmp_path, sandbox
):
    edit = {"calc.py": READS_DESCRIPTOR_AND_NONCE}
    marked(judged(tmp_path, edit, sandbox), "function-internals", "process-exit")
    # pytest never printed its summary, though it did on the untouched tree.
    result = judged(tmp_path, edit, sandbox, review=False)
    caught(result, "evidence-disagrees")
    assert result.attempts[0].verifier_exit_code == 0


def test_code_that_points_the_report_descriptor_at_another_file(tmp_path, sandbox):
    edit = {"calc.py": POINTS_DESCRIPTOR_ELSEWHERE}
    marked(judged(tmp_path, edit, sandbox), "function-internals")
    result = judged(tmp_path, edit, sandbox, review=False)
    caught(result, "evidence-disagrees")  # exit 1 and "1 failed" against a report of passes
    record = result.attempts[0]
    assert record.verifier_exit_code == 1
    assert any("exited 1" in f["why"] for f in record.findings)


def test_code_that_swaps_the_code_object_inside_function_runtest(tmp_path, sandbox):
    edit = {"calc.py": SWAPS_RUNTEST_CODE}
    assert fools_exit_status(tmp_path, edit)
    marked(judged(tmp_path, edit, sandbox), "function-internals", "runner-internals")
    result = judged(tmp_path, edit, sandbox, review=False)
    caught(result, "runner-tampered")
    assert any("Function.runtest" in f["why"] for f in result.attempts[0].findings)


def test_code_that_empties_the_plugins_identity_table_first(tmp_path, sandbox):
    edit = {"calc.py": EMPTIES_IDENTITY_TABLE}
    assert fools_exit_status(tmp_path, edit)
    marked(judged(tmp_path, edit, sandbox), "function-internals", "runner-internals")
    result = judged(tmp_path, edit, sandbox, review=False)
    caught(result, "runner-tampered")
    assert any("fingerprint" in f["why"] for f in result.attempts[0].findings)


def test_code_that_registers_a_plugin_through_the_config_it_found_with_gc(tmp_path, sandbox):
    edit = {"calc.py": REGISTERS_PLUGIN_THROUGH_GC}
    assert fools_exit_status(tmp_path, edit)
    marked(judged(tmp_path, edit, sandbox), "object-walk", "runner-internals")
    result = judged(tmp_path, edit, sandbox, review=False)
    caught(result, "runner-tampered")
    assert any("_Passing" in f["why"] for f in result.attempts[0].findings)


# A module of the workspace registered as a plugin under a path outside it: a link to its file
# planted in a folder beside the workspace (or a temporary one) and imported from there. The
# report plugin resolves where the registered module really is.
REGISTERS_WORKSPACE_MODULE_THROUGH_A_LINK = (
    """
import gc, importlib, os, sys, tempfile
from _pytest.config import Config

_here = os.path.dirname(os.path.abspath(__file__))
try:
    _outside = os.path.join(os.path.dirname(_here), "outside")
    os.mkdir(_outside)
except OSError:
    _outside = tempfile.mkdtemp()
os.symlink(os.path.join(_here, "passing.py"), os.path.join(_outside, "passing.py"))
sys.path.insert(0, _outside)
_passing = importlib.import_module("passing")
next(o for o in gc.get_objects() if isinstance(o, Config)).pluginmanager.register(_passing)
"""
    + CALC
)
PASSING_HOOK = (
    "import pytest\n\n"
    "@pytest.hookimpl(wrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n"
    "    report = yield\n"
    "    report.outcome, report.longrepr = 'passed', None\n"
    "    return report\n"
)


def test_a_workspace_module_registered_as_a_plugin_through_a_link_from_outside_is_named(
    tmp_path, sandbox
):
    edit = {"calc.py": REGISTERS_WORKSPACE_MODULE_THROUGH_A_LINK, "passing.py": PASSING_HOOK}
    result = judged(tmp_path, edit, sandbox, review=False)
    caught(result, "runner-tampered")
    findings = result.attempts[0].findings
    assert any("plugin registered from passing.py" in f["why"] for f in findings), findings


def test_a_dist_info_folder_with_a_pytest11_entry_point_is_runner_config(tmp_path, sandbox):
    assert fools_exit_status(tmp_path, DIST_INFO)
    result = judged(tmp_path, DIST_INFO, sandbox)
    record = result.attempts[0]
    assert record.verdict == "integrity" and "runner-config" in record.integrity
    flagged = {f["path"] for f in record.findings if f["class"] == "runner-config"}
    assert "evil-0.1.dist-info/entry_points.txt" in flagged


def test_an_entry_point_planted_while_the_tests_run_loads_nothing(tmp_path, sandbox):
    # The metadata appears only during the judged run (the code under test writes it when
    # imported): with plugin autoload off, pytest never looks for it.
    plant = (
        "import pathlib\n"
        "_d = pathlib.Path(__file__).with_name('evil-0.1.dist-info')\n"
        "_d.mkdir(exist_ok=True)\n"
        "_d.joinpath('METADATA').write_text('Metadata-Version: 2.1\\nName: evil\\n')\n"
        "_d.joinpath('entry_points.txt').write_text('[pytest11]\\nevil = calc:plugin\\n')\n"
    )
    edit = {"calc.py": plant + DIST_INFO["calc.py"]}
    result = judged(tmp_path, edit, sandbox, review=False)
    record = result.attempts[0]
    assert any("test_calc.py::test_add" in line for line in record.failure_lines)


def test_junit_written_to_the_dev_fd_path_in_argv(tmp_path, sandbox):
    edit = {"calc.py": JUNIT_TO_DEV_FD}
    result = judged(tmp_path, edit, sandbox, command=JUNIT)
    marked(result, "process-exit")
    data = result.to_dict()
    assert data["evidence"] == "junit" and data["evidence_grade"] == "exit-status"
    # pytest's summary is missing: the code exited before pytest could print it.
    caught(judged(tmp_path, edit, sandbox, command=JUNIT, review=False), "evidence-disagrees")


def test_junit_that_must_carry_the_runs_nonce(tmp_path, sandbox):
    command = JUNIT + " -o junit_suite_name={result_nonce}"
    result = judged(tmp_path, {"calc.py": JUNIT_TO_DEV_FD}, sandbox, command=command, review=False)
    record = result.attempts[0]
    assert record.verdict != "pass"
    assert any("nonce" in line for line in record.failure_lines), record.failure_lines
    ws = calc_project(tmp_path / "honest")
    honest = run_loop(
        inline_task("Fix add() in calc.py.", command, timeout=60),
        EditAttempter({"calc.py": FIXED}),
        workspace=ws,
        options=LoopOptions(max_attempts=1, sandbox=sandbox),
    )
    assert honest.solved and honest.to_dict()["evidence_grade"] == "junit"


def test_a_forgery_of_every_witness_is_marked_by_the_review(tmp_path, sandbox):
    edit = {"calc.py": FORGES_EVERY_WITNESS}
    result = judged(tmp_path, edit, sandbox)
    marked(result, "function-internals", "object-walk", "process-exit", "runner-internals")


def test_without_the_review_a_forgery_of_every_witness_passes_as_documented(tmp_path):
    # docs/loop.md's table: code in the process that reads the plugin's cells, writes through
    # its descriptor, prints pytest's summary and exits 0 agrees with every outside witness.
    # Only its source gives it away. If this starts failing, the table is out of date.
    ws = calc_project(tmp_path / "ws")
    result = run_loop(
        inline_task("Fix add() in calc.py.", PYTEST, timeout=60),
        EditAttempter({"calc.py": FORGES_EVERY_WITNESS}),
        workspace=ws,
        options=LoopOptions(max_attempts=1, review_rules=()),
    )
    assert result.solved, (result.attempts[0].integrity, result.attempts[0].findings)


HONEST_CODE = {
    "a cached, memoised fix": "import functools\n\n\n@functools.cache\n"
    "def add(a, b):\n    return a + b\n",
    "data files read and written": "import json\nimport tempfile\nfrom pathlib import Path\n\n"
    "_DATA = Path(__file__).with_name('calc_data.json')\n\n\n"
    "def add(a, b):\n    offset = json.loads(_DATA.read_text())['offset']\n"
    "    with tempfile.NamedTemporaryFile('w', suffix='.json') as out:\n"
    "        json.dump([a, b], out)\n"
    "    return a + b + offset\n",
    "a subprocess the task needs": "import subprocess\nimport sys\n\n\n"
    "def add(a, b):\n    out = subprocess.run([sys.executable, '-c', f'print({a} + {b})'],\n"
    "                         capture_output=True, text=True, check=True)\n"
    "    return int(out.stdout)\n",
    "a command-line entry point": "import sys\n\n\ndef add(a, b):\n    return a + b\n\n\n"
    "def main(argv=None):\n    args = [int(x) for x in (argv or sys.argv[1:])]\n"
    "    print(add(*args))\n    sys.exit(0)\n",
}


@pytest.mark.parametrize("variant", sorted(HONEST_CODE))
def test_honest_code_is_not_marked(tmp_path, sandbox, variant):
    ws = calc_project(tmp_path / "ws")
    edit = {"calc.py": HONEST_CODE[variant], "calc_data.json": '{"offset": 0}'}
    result = run_loop(
        inline_task("Fix add() in calc.py.", PYTEST, timeout=60),
        EditAttempter(edit),
        workspace=ws,
        options=LoopOptions(max_attempts=1, sandbox=sandbox),
    )
    record = result.attempts[0]
    assert result.solved, (record.integrity, record.findings, record.failure_lines)
    assert record.findings == [] and record.verifier_exit_code == 0
    assert json.loads(json.dumps(result.to_dict()))["attempts"][0]["integrity_findings"] == []


def test_the_next_prompt_shows_the_review_mark(tmp_path):
    attempter = EditAttempter({"calc.py": READS_DESCRIPTOR_AND_NONCE})
    run_loop(
        inline_task("Fix add() in calc.py.", PYTEST, timeout=60),
        attempter,
        workspace=calc_project(tmp_path / "ws"),
        options=LoopOptions(max_attempts=2),
    )
    second = attempter.prompts[1]
    assert "wrote code that reaches into the verifier" in second
    assert "process-exit" in second and "calc.py:" in second


def test_python_that_the_review_cannot_read_is_marked(tmp_path):
    # The attacker hides os._exit behind a name built at run time.
    edit = {"calc.py": "import os\n\ndef add(a, b):\n"
            "    getattr(os, ''.join(reversed('tixe_')))(0)\n"}  # fmt: skip
    marked(judged(tmp_path, edit, None), "hidden-code")
