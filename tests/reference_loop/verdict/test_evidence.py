"""Evidence of what ran: the loop's pytest report and JUnit files, judged against pinned tests.

Every run here is a real pytest (or node) process started the way the loop starts one: through
the Harness, with the report written through a descriptor to a file outside the project.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import find_node

from reference_loop._verdict.evidence import (
    judge,
    pin_from_baseline,
    read_junit,
    read_pytest_report,
)
from reference_loop._verdict.harness import Harness, detect_format
from reference_loop.errors import LoopUsageError

PYTEST = f"{sys.executable} -B -m pytest -q -p no:cacheprovider"
CALC = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(2, 2) == 4\n"
TEST_OTHER = "def test_other():\n    assert True\n"


def project(root: Path, calc: str = CALC) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "calc.py").write_text(calc)
    (root / "test_calc.py").write_text(TEST_CALC)
    (root / "test_other.py").write_text(TEST_OTHER)
    return root


def run(harness: Harness, root: Path, only=None):
    prepared = harness.prepare(only=only)
    proc = subprocess.run(
        ["/bin/sh", "-c", prepared.command],
        cwd=root,
        env={**os.environ, **prepared.env},
        pass_fds=prepared.pass_fds,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return proc, prepared.read()


@pytest.fixture
def calc(tmp_path):
    root = project(tmp_path / "ws")
    with Harness(PYTEST, root, "pytest") as harness:
        yield root, harness


@pytest.mark.slow
def test_the_report_names_every_test_and_how_it_ended(calc):
    root, harness = calc
    proc, report = run(harness, root)
    assert proc.returncode == 1
    assert report.complete and report.exitstatus == 1
    assert {t: r.outcome for t, r in report.results.items()} == {
        "test_calc.py::test_add": "failed",
        "test_other.py::test_other": "passed",
    }
    pinned = pin_from_baseline(report)
    assert pinned.kinds() == {"fail_to_pass": 1, "pass_to_pass": 1}
    assert pinned.collect_files == ("test_calc.py", "test_other.py")
    (root / "calc.py").write_text(FIXED)
    proc, report = run(harness, root, only=pinned.collect_files)
    assert proc.returncode == 0 and judge(report, pinned, 0).verdict == "pass"


@pytest.mark.slow
def test_exiting_zero_on_import_is_a_forged_exit_not_a_pass(calc):
    root, harness = calc
    _, baseline = run(harness, root)
    pinned = pin_from_baseline(baseline)
    (root / "calc.py").write_text("import os\nos._exit(0)\n" + CALC)
    proc, report = run(harness, root, only=pinned.collect_files)
    assert proc.returncode == 0
    verdict = judge(report, pinned, proc.returncode)
    assert verdict.verdict == "fail" and verdict.forged_exit
    assert "no finish line" in verdict.reason


@pytest.mark.slow
@pytest.mark.parametrize(
    "planted",
    [
        "import _pytest.python\n_pytest.python.Function.runtest = lambda self: None\n",
        "import _pytest.runner\n_pytest.runner.call_and_report.__code__ = (lambda *a, **k: None)"
        ".__code__\n",
        "import _pytest.reports as r\nr.TestReport.passed = property(lambda self: True)\n",
    ],
)
def test_code_that_patches_the_runner_while_it_runs_is_caught(calc, planted):
    root, harness = calc
    _, baseline = run(harness, root)
    pinned = pin_from_baseline(baseline)
    (root / "calc.py").write_text(planted + CALC)
    proc, report = run(harness, root, only=pinned.collect_files)
    verdict = judge(report, pinned, proc.returncode)
    assert verdict.verdict == "fail"


@pytest.mark.slow
def test_skipping_or_deselecting_a_pinned_test_is_not_a_pass(calc):
    root, harness = calc
    _, baseline = run(harness, root)
    pinned = pin_from_baseline(baseline)
    (root / "calc.py").write_text("import pytest\npytest.skip('nope', allow_module_level=True)\n")
    proc, report = run(harness, root, only=pinned.collect_files)
    verdict = judge(report, pinned, proc.returncode)
    assert verdict.verdict == "fail" and any("test_add" in f for f in verdict.failures)


@pytest.mark.slow
def test_a_test_skipped_on_the_untouched_tree_may_stay_skipped(tmp_path):
    root = project(tmp_path / "ws")
    (root / "test_later.py").write_text(
        "import pytest\n\n@pytest.mark.skip('not yet')\ndef test_later():\n    pass\n"
    )
    with Harness(PYTEST, root, "pytest") as harness:
        _, baseline = run(harness, root)
        pinned = pin_from_baseline(baseline)
        (root / "calc.py").write_text(FIXED)
        proc, report = run(harness, root, only=pinned.collect_files)
    assert judge(report, pinned, proc.returncode).verdict == "pass"


@pytest.mark.slow
def test_the_judged_run_never_imports_a_test_module_the_attempt_added(calc):
    root, harness = calc
    _, baseline = run(harness, root)
    pinned = pin_from_baseline(baseline)
    # A new test file that "fixes" add() when it is imported: run beside the pinned tests it
    # would make them pass; the judged run does not collect it.
    (root / "test_aaa_patch.py").write_text(
        "import calc\ncalc.add = lambda a, b: a + b\n\ndef test_nothing():\n    pass\n"
    )
    proc, report = run(harness, root, only=pinned.collect_files)
    assert "test_aaa_patch.py::test_nothing" not in report.results
    assert judge(report, pinned, proc.returncode).verdict == "fail"
    # Run apart, it is reported beside the pinned tests, never instead of them.
    _, added = run(harness, root, only=["test_aaa_patch.py"])
    assert list(added.results) == ["test_aaa_patch.py::test_nothing"]
    assert judge(report, pinned, proc.returncode, added=added).verdict == "fail"


@pytest.mark.slow
def test_a_module_that_failed_to_import_at_the_start_pins_its_file(tmp_path):
    root = project(tmp_path / "ws")
    (root / "test_new.py").write_text(
        "from calc import sub\n\ndef test_sub():\n    assert sub(3, 1) == 2\n"
    )
    with Harness(PYTEST, root, "pytest") as harness:
        _, baseline = run(harness, root)
        pinned = pin_from_baseline(baseline)
        assert "test_new.py" in pinned.files
        (root / "calc.py").write_text(FIXED)
        proc, report = run(harness, root, only=pinned.collect_files)
        assert judge(report, pinned, proc.returncode).verdict == "fail"
        (root / "calc.py").write_text(FIXED + "\n\ndef sub(a, b):\n    return a - b\n")
        proc, report = run(harness, root, only=pinned.collect_files)
        assert judge(report, pinned, proc.returncode).verdict == "pass"


@pytest.mark.slow
def test_must_pass_names_the_pinned_tests(calc):
    root, harness = calc
    _, baseline = run(harness, root)
    pinned = pin_from_baseline(baseline, ["test_other.py::test_other"])
    assert pinned.tests == ("test_other.py::test_other",) and pinned.source == "task"
    proc, report = run(harness, root, only=pinned.collect_files)
    assert judge(report, pinned, proc.returncode).verdict == "pass"


def test_a_stale_or_foreign_report_is_not_this_runs(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text(
        '{"e":"start","nonce":"other"}\n{"e":"finish","nonce":"other","exitstatus":0}\n'
    )
    report = read_pytest_report(path, "mine")
    assert not report.complete and "does not authenticate its lines" in report.problem
    assert judge(report, None, 0).verdict == "fail"
    assert not read_pytest_report(tmp_path / "missing", "x").complete


def test_detect_format_from_the_command():
    assert detect_format("{python} -m pytest -q") == "pytest"
    assert detect_format(".venv/bin/pytest tests/") == "pytest"
    assert detect_format("{python} check.py") == "exit-status"
    assert detect_format("node --test --test-reporter-destination={result_file}") == "junit"
    assert detect_format("make check", "pytest") == "pytest"
    with pytest.raises(LoopUsageError, match="result_file"):
        detect_format("node --test", "junit")
    with pytest.raises(LoopUsageError, match="unknown verify format"):
        detect_format("x", "tap")


@pytest.mark.slow
@pytest.mark.skipif(find_node() is None, reason="no node (the system's or the test extra's)")
def test_junit_from_node_test_runner_judges_each_test(tmp_path):
    root = tmp_path / "js"
    root.mkdir()
    (root / "sum.mjs").write_text("export const sum = (a, b) => a - b;\n")
    (root / "sum.test.mjs").write_text(
        "import test from 'node:test';\nimport assert from 'node:assert';\n"
        "import { sum } from './sum.mjs';\n"
        "test('sums', () => { assert.equal(sum(2, 2), 4); });\n"
        "test('zero', () => { assert.equal(sum(0, 0), 0); });\n"
    )
    node = shlex.quote(find_node()[0])  # the system's node, else the test extra's wheel
    command = (
        f"{node} --test --test-reporter=junit --test-reporter-destination={{result_file}} "
        "sum.test.mjs"
    )
    with Harness(command, root, detect_format(command)) as harness:
        proc, baseline = run(harness, root)
        assert baseline.kind == "junit" and baseline.complete, baseline.problem
        pinned = pin_from_baseline(baseline)
        assert len(pinned.tests) == 2 and pinned.kinds()["fail_to_pass"] == 1
        assert judge(baseline, pinned, proc.returncode).verdict == "fail"
        # A run that exits 0 without writing its report is not a pass.
        (root / "sum.mjs").write_text("process.exit(0);\nexport const sum = (a, b) => a + b;\n")
        proc, report = run(harness, root)
        assert proc.returncode == 0
        assert judge(report, pinned, proc.returncode).verdict == "fail"
        (root / "sum.mjs").write_text("export const sum = (a, b) => a + b;\n")
        proc, report = run(harness, root)
        assert judge(report, pinned, proc.returncode).verdict == "pass"


def test_junit_reader_reads_failures_errors_and_skips(tmp_path):
    path = tmp_path / "j.xml"
    path.write_text(
        '<testsuites><testsuite name="s">'
        '<testcase classname="a" name="ok"/>'
        '<testcase classname="a" name="bad"><failure message="boom"/></testcase>'
        '<testcase classname="a" name="err"><error message="oops"/></testcase>'
        '<testcase classname="a" name="later"><skipped/></testcase>'
        "</testsuite></testsuites>"
    )
    report = read_junit(path)
    assert {t: r.outcome for t, r in report.results.items()} == {
        "a::ok": "passed",
        "a::bad": "failed",
        "a::err": "error",
        "a::later": "skipped",
    }
    (tmp_path / "bad.xml").write_text("<testsuites><testcase")
    assert not read_junit(tmp_path / "bad.xml").complete


def test_the_plugin_shim_loads_every_hook_the_plugin_defines():
    import reference_loop._verdict.pytest_report as plugin_source
    from reference_loop._verdict.harness import HOOKS

    defined = {name for name in vars(plugin_source) if name.startswith("pytest_")}
    assert defined == set(HOOKS)
