"""The report against the outside witnesses: pytest's summary line and the exit status."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_evidence import run

from reference_loop._verdict.crosscheck import (
    Witnesses,
    disagreements,
    new_registrations,
    parse_summary,
    witnesses,
)
from reference_loop._verdict.evidence import Report
from reference_loop._verdict.harness import Harness
from reference_loop._verdict.verifier import SUMMARY_LINE

# Every way a test can end, as pytest's summary counts it.
MIXED = """
import pytest

@pytest.fixture
def broken_setup():
    raise RuntimeError("setup")

@pytest.fixture
def broken_teardown():
    yield
    raise RuntimeError("teardown")

def test_pass(): pass
def test_fail(): assert 0
def test_setup_error(broken_setup): pass
def test_teardown_error(broken_teardown): pass
def test_skip(): pytest.skip("later")

@pytest.mark.xfail
def test_xfail(): assert 0

@pytest.mark.xfail
def test_xpass(): pass

@pytest.mark.xfail(strict=True)
def test_xpass_strict(): pass

@pytest.mark.parametrize("n", [1, 2])
def test_param(n): assert n == 1
"""


@pytest.mark.parametrize(
    ("line", "counts"),
    [
        ("1 failed, 1 passed in 0.64s", {"failed": 1, "passed": 1}),
        (
            "==== 2 failed, 3 passed, 1 skipped, 2 errors, 4 warnings in 1.20s (0:00:01) ====",
            {"failed": 2, "passed": 3, "skipped": 1, "error": 2, "warning": 4},
        ),
        ("no tests ran in 0.01s", {}),
        (
            "1 xfailed, 1 xpassed, 1 deselected in 0.1s",
            {"xfailed": 1, "xpassed": 1, "deselected": 1},
        ),
    ],
)
def test_a_summary_line_is_read_into_counts(line, counts):
    assert SUMMARY_LINE.match(line)
    assert parse_summary(line) == counts


def test_text_that_only_mentions_passing_is_not_a_summary_line():
    for line in ("all 3 tests passed", "2 passed", "PASSED test_x.py::test_a"):
        assert not SUMMARY_LINE.match(line)


def _run(tmp_path: Path, extra: str = "") -> tuple[subprocess.CompletedProcess[str], Report]:
    command = f"{sys.executable} -B -m pytest -q -p no:cacheprovider {extra}".strip()
    with Harness(command, tmp_path, "pytest") as harness:
        proc, report = run(harness, tmp_path)
    assert report is not None and report.complete, report
    return proc, report


@pytest.mark.slow
def test_every_way_a_test_ends_agrees_with_pytests_own_summary(tmp_path):
    (tmp_path / "test_mixed.py").write_text(MIXED)
    (tmp_path / "test_broken.py").write_text("import nowhere_to_be_found\n")
    proc, report = _run(tmp_path)
    lines = [line.strip() for line in proc.stdout.splitlines() if SUMMARY_LINE.match(line)]
    start = witnesses(report, proc.returncode, lines)
    assert start.exit_follows and start.summary, (proc.stdout[-600:], report.counts)
    assert disagreements(report, proc.returncode, lines, start) == []
    # The same report against another exit status, or a summary printed by someone else.
    assert disagreements(report, 0, lines, start)
    assert disagreements(report, proc.returncode, ["9 passed in 0.01s"], start)
    assert disagreements(report, proc.returncode, [], start)


@pytest.mark.slow
def test_a_command_that_prints_no_summary_is_not_held_to_one(tmp_path):
    (tmp_path / "test_a.py").write_text("def test_a():\n    assert 0\n")
    proc, report = _run(tmp_path, "-qq")
    lines = [line.strip() for line in proc.stdout.splitlines() if SUMMARY_LINE.match(line)]
    assert lines == []
    start = witnesses(report, proc.returncode, lines)
    assert start.exit_follows and not start.summary
    assert disagreements(report, proc.returncode, [], start) == []


def test_an_exit_status_that_never_followed_pytests_is_not_compared():
    report = Report("pytest", True, exitstatus=1, counts={"failed": 1})
    start = witnesses(report, 0, [])  # `pytest; true`
    assert not start.exit_follows
    assert disagreements(Report("pytest", True, exitstatus=1), 0, [], start) == []


def test_a_registration_the_baseline_never_made_is_named():
    start = Witnesses(True, True, identity=10, registered=frozenset({"session = x"}))
    report = Report("pytest", True, identity=10, registered=["session = x", "<object> = P"])
    assert new_registrations(report, start) == [
        "a plugin the untouched tree's run did not register: <object> = P"
    ]
    shrunk = Report("pytest", True, identity=0, registered=["session = x"])
    assert "fingerprinted 0 runner parts" in new_registrations(shrunk, start)[0]


def _signed(lines: list[dict], key: str) -> bytes:
    import hashlib
    import hmac
    import json

    mac = hmac.new(key.encode(), digestmod=hashlib.sha256)
    out = b""
    for line in lines:
        record = {**line, "mac": mac.hexdigest()} if line["e"] == "finish" else line
        data = (json.dumps(record) + "\n").encode()
        mac.update(data)
        out += data
    return out


def test_a_report_is_this_runs_only_if_its_finish_authenticates_every_line():
    from reference_loop._verdict.evidence import read_pytest_report

    start = {"e": "start", "plugins": [], "identity": 3}
    failed = {"e": "test", "id": "t.py::a", "when": "call", "outcome": "failed", "msg": "x"}
    passed = {**failed, "outcome": "passed", "msg": ""}
    finish = {"e": "finish", "exitstatus": 1, "identity": 3, "registered": [], "tampered": []}
    honest = _signed([start, failed, finish], "k1")
    assert read_pytest_report(honest, "k1").complete
    assert b"k1" not in honest  # the key is never in the file
    # Someone without the key: a finish signed with another, a line slipped in, a line changed.
    assert not read_pytest_report(_signed([start, passed, finish], "guess"), "k1").complete
    slipped = honest.replace(b'"failed", "msg": "x"}\n', b'"failed", "msg": "x"}\n' * 2)
    assert not read_pytest_report(slipped, "k1").complete
    changed = honest.replace(b'"outcome": "failed"', b'"outcome": "passed"')
    report = read_pytest_report(changed, "k1")
    assert not report.complete and "authenticate" in report.problem


def test_the_report_file_has_no_name_while_the_tests_run(tmp_path):
    # A glob over the report's folder (outside --sandbox, in the temp folder) finds nothing:
    # the run reaches the report only through the descriptor it was given.
    with Harness("pytest -q", tmp_path, "pytest") as harness:
        prepared = harness.prepare()
        assert list(harness.private.glob("report-*")) == []
        assert prepared.report_fd is not None and prepared.report_fd not in prepared.pass_fds
        os.write(prepared.pass_fds[0], b"written through the descriptor\n")
        prepared.started()
        report = prepared.read()
    assert report is not None and not report.complete
    assert "not JSON" in report.problem  # what was written came back through the loop's end
