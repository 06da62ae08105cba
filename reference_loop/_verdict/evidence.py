"""Evidence of what ran: the verifier's result report, the pinned tests, and the verdict they give.

An exit status says only that a process ended; the attempt controls the code that process runs,
so ``os._exit(0)`` while importing the code under test "passes". The loop therefore asks the
runner for a report of every test it collected and how each ended (its own pytest plugin,
``pytest_report.py``, or a JUnit XML file for other runners) and judges that against the
*pinned* tests: the ones the task names (``must_pass``), or by default every test collected on
the untouched tree at the start of the run (the fail-to-pass and pass-to-pass tests, in
SWE-bench's words). A pass needs a complete report in which every pinned test ran and passed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FORMATS = ("auto", "pytest", "junit", "exit-status")
PASSED = "passed"
_NOT_PASSING_OK = frozenset({"skipped", "xfailed"})
MAX_LISTED = 40


@dataclass(frozen=True)
class TestResult:
    """How one test ended: passed, failed, error (setup/teardown), skipped, xfailed, xpassed."""

    id: str
    outcome: str
    message: str = ""


@dataclass
class Report:
    """What one run of the runner reported."""

    kind: str  # "pytest" | "junit"
    complete: bool  # the runner reached its end and said so (pytest: the finish line)
    results: dict[str, TestResult] = field(default_factory=dict)
    collected: list[str] = field(default_factory=list)
    deselected: list[str] = field(default_factory=list)
    collect_errors: dict[str, str] = field(default_factory=dict)  # node id -> message
    exitstatus: int | None = None
    problem: str = ""  # why it is incomplete
    tampered: list[str] = field(default_factory=list)  # runner parts replaced during the run
    # Outcomes when every test was played again in the same process (another order, some twice,
    # each under another name and place); a test that failed once stays failed.
    reruns: dict[str, str] = field(default_factory=dict)
    inifile: str | None = None  # the configuration file the runner read (pytest)
    # pytest: every module file the process loaded and its sys.path, at the end of the run.
    files: list[str] = field(default_factory=list)
    path: list[str] = field(default_factory=list)
    # pytest: each test module's names after its import, and "file::name" rebound during a test.
    namespaces: dict[str, list[str]] = field(default_factory=dict)
    rebound: list[str] = field(default_factory=list)
    # pytest: passing `==` assertions between values whose printed forms differ ("test id:
    # 5 == 6"), and pinned test files opened by other code of the workspace (file -> by whom).
    false_equal: list[str] = field(default_factory=list)
    reads: dict[str, str] = field(default_factory=dict)
    # pytest: pinned tests run by that other code itself (a test id or a command -> by whom).
    ran: dict[str, str] = field(default_factory=dict)
    # pytest: the plugins loaded from entry points (by name), how many runner parts the plugin
    # fingerprinted, every plugin registration of the run, and the outcome counts pytest's
    # own summary line gives for the same reports (passed, failed, errors, ...).
    plugins: list[str] = field(default_factory=list)
    identity: int | None = None
    registered: list[str] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)
    # pytest: the kernel guards the process ran without (pytest_guard.py).
    unguarded: list[str] = field(default_factory=list)
    # JUnit: the report carries this run's nonce (the command passed it to the runner).
    nonce_seen: bool = False

    def to_dict(self) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for r in self.results.values():
            counts[r.outcome] = counts.get(r.outcome, 0) + 1
        return {
            "kind": self.kind,
            "complete": self.complete,
            "tests": len(self.results),
            "outcomes": dict(sorted(counts.items())),
            "collect_errors": sorted(self.collect_errors),
            "problem": self.problem or None,
        }


def test_file(test_id: str) -> str:
    """The file part of a pytest node id (``tests/test_x.py::TestA::test_b`` -> the path)."""
    return test_id.split("::", 1)[0]


def _fold(phases: Sequence[dict[str, Any]]) -> tuple[str, str]:
    """One outcome from a test's setup/call/teardown reports."""
    outcome, message = "", ""
    for ph in phases:
        when, result = ph.get("when"), ph.get("outcome")
        msg = str(ph.get("msg") or "")
        if result == "failed":
            if when == "call":
                return ("xpassed" if ph.get("xfail") else "failed"), msg
            return "error", msg
        if result == "skipped":
            outcome, message = ("xfailed" if ph.get("xfail") else "skipped"), msg
        elif result == "passed" and when == "call" and not outcome:
            outcome = "xpassed" if ph.get("xfail") else PASSED
    return outcome or "error", message or ("no call phase was reported" if not outcome else "")


def _record(report: Report, rec: dict[str, Any], phases: dict[str, list[dict[str, Any]]]) -> None:
    """Take one line of the report between its start and finish lines."""
    kind = rec.get("e")
    if kind == "items":
        report.collected = [str(i) for i in rec.get("ids", [])]
    elif kind == "deselected":
        report.deselected.extend(str(i) for i in rec.get("ids", []))
    elif kind == "collecterror":
        report.collect_errors[str(rec.get("id", ""))] = str(rec.get("msg", ""))
        report.counts["error"] = report.counts.get("error", 0) + 1
    elif kind == "namespaces" and isinstance(rec.get("names"), dict):
        report.namespaces = {str(k): [str(n) for n in v] for k, v in rec["names"].items()}
    elif kind == "rebound":
        report.rebound = [str(n) for n in rec.get("names") or []]
    elif kind == "falseequal":
        report.false_equal.append(f"{rec.get('id', '')}: {rec.get('expl', '')}")
    elif kind == "readtests" and isinstance(rec.get("reads"), dict):
        report.reads = {str(k): str(v) for k, v in rec["reads"].items()}
    elif kind == "rantests" and isinstance(rec.get("ran"), dict):
        report.ran = {str(k): str(v) for k, v in rec["ran"].items()}
    elif kind == "rerun":
        # A test can be played again more than once: one failure is enough.
        test_id = str(rec.get("id", ""))
        if report.reruns.get(test_id) != "failed":
            report.reruns[test_id] = str(rec.get("outcome", ""))
    elif kind == "test":
        phases.setdefault(str(rec.get("id", "")), []).append(rec)
        word = _summary_word(rec)
        if word:
            report.counts[word] = report.counts.get(word, 0) + 1


def _summary_word(rec: dict[str, Any]) -> str:
    """The word pytest's summary line counts this phase report under (``""``: not counted)."""
    when, outcome, xfail = rec.get("when"), rec.get("outcome"), bool(rec.get("xfail"))
    if outcome == "failed":
        return "failed" if when == "call" else "error"
    if outcome == "skipped":
        return "xfailed" if xfail else "skipped"
    if outcome == "passed" and when == "call":
        return "xpassed" if xfail else "passed"
    return ""


def _lines(raw: bytes) -> list[dict[str, Any]] | None:
    out = []
    for line in raw.splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            return None
        if isinstance(rec, dict):
            out.append(rec)
    return out


def _authentic(raw: bytes, nonce: str) -> bool:
    """The finish line's MAC (keyed with the nonce, which the report never holds) is that of
    every byte before it: nothing was added, removed or changed by anyone without the key."""
    body, _, last = raw.rstrip(b"\n").rpartition(b"\n")
    try:
        tag = json.loads(last).get("mac")
    except (ValueError, AttributeError):
        return False
    body = body + b"\n" if body else b""
    expected = hmac.new(nonce.encode(), body, hashlib.sha256).hexdigest()
    return isinstance(tag, str) and hmac.compare_digest(tag, expected)


def read_pytest_report(source: str | Path | bytes, nonce: str) -> Report:
    """Read the loop's pytest plugin report (JSON lines).

    Args:
        source: the report's bytes, or the file the plugin wrote through its descriptor.
        nonce: the key the loop gave this run: the finish line's MAC must be of every line
            before it, under this key.

    Returns:
        The Report; ``complete`` only when the first line is the start, the last the finish,
        and the finish authenticates everything before it.
    """
    report = Report(kind="pytest", complete=False)
    try:
        raw = source if isinstance(source, bytes) else Path(source).read_bytes()
    except OSError as exc:
        report.problem = f"no report was written ({exc.strerror or exc})"
        return report
    recs = _lines(raw)
    if recs is None:
        report.problem = "the report holds a line that is not JSON"
        return report
    if not recs or recs[0].get("e") != "start":
        report.problem = "the runner never loaded the report plugin (no start line)"
        return report
    if any(r.get("e") == "start" for r in recs[1:]):
        report.problem = "the report was started twice"
        return report
    report.inifile = recs[0].get("inifile")
    report.plugins = [str(p) for p in recs[0].get("plugins") or []]
    report.unguarded = [str(g) for g in recs[0].get("unguarded") or []]
    started_identity = recs[0].get("identity")
    phases: dict[str, list[dict[str, Any]]] = {}
    for rec in recs[1:-1]:
        _record(report, rec, phases)
    last = recs[-1]
    finished = len(recs) > 1 and last.get("e") == "finish"
    if not finished:
        _record(report, last, phases)
    for test_id, parts in phases.items():
        outcome, message = _fold(parts)
        report.results[test_id] = TestResult(test_id, outcome, message)
    if any(r.get("e") == "finish" for r in recs[1:-1]):
        report.problem = "the report goes on after its finish line"
    elif not finished:
        report.problem = "the run ended before pytest finished (no finish line)"
    elif not _authentic(raw, nonce):
        report.problem = (
            "the report's finish line does not authenticate its lines (written, or added to, "
            "by something other than this run's plugin)"
        )
    else:
        status = last.get("exitstatus")
        report.exitstatus = status if isinstance(status, int) else None
        report.tampered = [str(t) for t in last.get("tampered", [])]
        report.registered = [str(r) for r in last.get("registered") or []]
        report.files = [str(f) for f in last.get("files") or []]
        report.path = [str(p) for p in last.get("path") or []]
        identity = last.get("identity")
        report.identity = identity if isinstance(identity, int) else None
        if report.identity != started_identity:
            report.tampered.append(
                f"the plugin's fingerprint table changed size ({started_identity} at the start, "
                f"{report.identity} at the end)"
            )
        report.complete = True
    return report


def read_junit(source: str | Path | bytes, nonce: str = "") -> Report:
    """Read a JUnit XML report (pytest --junitxml, node --test-reporter=junit, jest-junit,
    gotestsum, cargo nextest): each ``testcase`` is ``classname::name``.

    Args:
        source: the XML the runner wrote, or its file.
        nonce: when given, the report must carry it (in any attribute or text: a suite name,
            a property): one without it was not written by this run's runner.

    Returns:
        The Report; ``complete`` when the file parsed and has a ``testsuites``/``testsuite`` root.
    """
    report = Report(kind="junit", complete=False)
    try:
        raw = source if isinstance(source, bytes) else Path(source).read_bytes()
        if not raw:
            raise OSError("the file is empty")
        root = ET.fromstring(raw)
    except OSError as exc:
        report.problem = f"no JUnit report was written ({exc.strerror or exc})"
        return report
    except ET.ParseError as exc:
        report.problem = f"the JUnit report is not well-formed XML ({exc})"
        return report
    if root.tag not in ("testsuites", "testsuite"):
        report.problem = f"the JUnit report's root is <{root.tag}>, not <testsuites>"
        return report
    if nonce:
        report.nonce_seen = any(
            nonce in (el.text or "") or any(nonce in v for v in el.attrib.values())
            for el in root.iter()
        )
        if not report.nonce_seen:
            report.problem = "the JUnit report does not carry this run's nonce"
            return report
    seen: dict[str, int] = {}
    for case in root.iter("testcase"):
        name = case.get("name", "")
        cls = case.get("classname") or case.get("file") or ""
        base = f"{cls}::{name}" if cls else name
        seen[base] = seen.get(base, 0) + 1
        test_id = base if seen[base] == 1 else f"{base}[{seen[base]}]"
        outcome, message = PASSED, ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome = "failed" if child.tag == "failure" else "error"
                message = (child.get("message") or child.text or "").strip()[:600]
                break
            if child.tag == "skipped":
                outcome, message = "skipped", (child.get("message") or "").strip()[:600]
        report.results[test_id] = TestResult(test_id, outcome, message)
        report.collected.append(test_id)
    report.complete = True
    return report


@dataclass(frozen=True)
class Pinned:
    """The tests an attempt must leave passing: named by the task, or collected at the start."""

    tests: tuple[str, ...]
    # Test files that failed to import at the start: every test in them must pass at the end.
    files: tuple[str, ...] = ()
    # Tests that were skipped (or xfailed) on the untouched tree may stay so.
    may_skip: frozenset[str] = frozenset()
    start: Mapping[str, str] = field(default_factory=dict)  # id -> outcome at the start
    source: str = "collected"  # "collected" | "task"

    @property
    def collect_files(self) -> tuple[str, ...]:
        """The test files the judged run collects (and nothing else)."""
        return tuple(sorted({test_file(t) for t in self.tests} | set(self.files)))

    def kinds(self) -> dict[str, int]:
        """How many pinned tests failed at the start (fail-to-pass) and passed (pass-to-pass)."""
        f2p = sum(1 for t in self.tests if self.start.get(t) not in (PASSED, "skipped", "xfailed"))
        return {"fail_to_pass": f2p, "pass_to_pass": len(self.tests) - f2p}

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "tests": len(self.tests),
            "files": list(self.collect_files),
            **self.kinds(),
        }


def pin_from_baseline(report: Report, must_pass: Iterable[str] = ()) -> Pinned:
    """The pinned set from the run on the untouched tree.

    Args:
        report: the baseline run's report (complete, or the run proves nothing).
        must_pass: the task's own list; when given it replaces the collected set.

    Returns:
        The Pinned tests, with each one's outcome at the start.
    """
    start = {t: r.outcome for t, r in report.results.items()}
    named = tuple(dict.fromkeys(must_pass))
    tests = named or tuple(report.collected or report.results)
    errored = tuple(
        sorted(
            {
                test_file(i)
                for i in report.collect_errors
                if i and (not named or any(test_file(t) == test_file(i) for t in named))
            }
        )
    )
    may_skip = frozenset(t for t in tests if start.get(t) in _NOT_PASSING_OK)
    return Pinned(tests, errored, may_skip, start, "task" if named else "collected")


@dataclass
class Judgement:
    """The verdict the evidence gives, and the lines that say why."""

    verdict: str  # "pass" | "fail" | "error"
    reason: str
    failures: list[str] = field(default_factory=list)
    forged_exit: bool = False  # the command exited 0 although the evidence says it did not pass
    tampered: bool = False  # code in the run replaced part of the runner (or registered a plugin)


_LOCATION = re.compile(r"^\S+?:\d+: ")


def headline(message: str) -> str:
    """A test's failure as pytest's short summary words it, whatever the terminal's width: the
    crash message's first line, without the ``file:line:`` the report puts before it."""
    lines = message.strip().splitlines()
    return _LOCATION.sub("", lines[0], count=1) if lines else ""


def _listed(lines: list[str]) -> list[str]:
    if len(lines) > MAX_LISTED:
        return [*lines[:MAX_LISTED], f"… and {len(lines) - MAX_LISTED} more"]
    return lines


def passes(result: TestResult, may_skip: bool) -> bool:
    """Whether a pinned test's outcome counts as passing (a skip only where it skipped at the
    start)."""
    return result.outcome in (PASSED, "xpassed") or (may_skip and result.outcome in _NOT_PASSING_OK)


def _pinned_failures(report: Report, pinned: Pinned | None, wanted: Sequence[str]) -> list[str]:
    failures: list[str] = []
    deselected = set(report.deselected)
    may_skip = pinned.may_skip if pinned is not None else frozenset()
    for test_id in wanted:
        result = report.results.get(test_id)
        if result is None:
            how = "deselected" if test_id in deselected else "did not run"
            failures.append(f"MISSING {test_id} - a pinned test {how}")
        elif passes(result, test_id in may_skip):
            continue
        else:
            word = "FAILED" if result.outcome in ("failed", "error") else result.outcome.upper()
            failures.append(f"{word} {test_id} - {headline(result.message)}".rstrip(" -"))
    pinned_files = set(pinned.collect_files) if pinned is not None else None
    for node, message in sorted(report.collect_errors.items()):
        if pinned_files is None or test_file(node) in pinned_files:
            failures.append(f"ERROR collecting {node} - {message}".rstrip(" -"))
    if pinned is not None:
        for path in pinned.files:
            if not any(test_file(t) == path for t in report.results):
                failures.append(f"MISSING {path} - no test of this pinned file ran")
    if pinned is None and not report.results:
        failures.append("NO TESTS - the report holds no test")
    return failures


def _added_failures(added: Report) -> list[str]:
    failures = []
    if not added.complete:
        failures.append(f"INCOMPLETE REPORT of the added tests: {added.problem}")
    for test_id, result in sorted(added.results.items()):
        if result.outcome not in (PASSED, "xpassed", *_NOT_PASSING_OK):
            failures.append(
                f"FAILED {test_id} - {headline(result.message)} (a test the attempt added)"
            )
    for node, message in sorted(added.collect_errors.items()):
        failures.append(f"ERROR collecting {node} - {message} (a test the attempt added)")
    return failures


def judge(
    report: Report | None,
    pinned: Pinned | None,
    exit_code: int | None,
    *,
    added: Report | None = None,
) -> Judgement:
    """Judge a run by its report against the pinned tests.

    Args:
        report: the judged run's report (None: the runner wrote none).
        pinned: the pinned tests (None: every test the report holds must pass, and at least one
            must have run).
        exit_code: the command's exit status (0 with failing evidence is a forged exit).
        added: the report of the run of tests the attempt added, run apart from the pinned ones.

    Returns:
        The Judgement.
    """
    if report is None or not report.complete:
        why = report.problem if report is not None else "the runner wrote no report"
        return Judgement(
            "fail" if exit_code == 0 else "error",
            f"no complete test report: {why}",
            [f"INCOMPLETE REPORT: {why}"],
            forged_exit=exit_code == 0,
        )
    if report.tampered:
        shown = ", ".join(report.tampered[:8]) + (" …" if len(report.tampered) > 8 else "")
        return Judgement(
            "fail",
            f"the test runner was changed while it ran: {shown}",
            [f"TAMPERED runner: {shown}"],
            forged_exit=exit_code == 0,
            tampered=True,
        )
    wanted = pinned.tests if pinned is not None else tuple(report.results)
    failures = _pinned_failures(report, pinned, wanted)
    if added is not None:
        failures += _added_failures(added)
    ran = sum(1 for t in wanted if t in report.results)
    if failures:
        return Judgement(
            "fail",
            f"{len(failures)} of the pinned checks did not pass ({ran} of {len(wanted)} pinned "
            "tests ran)",
            _listed(failures),
            forged_exit=exit_code == 0,
        )
    return Judgement("pass", f"all {len(wanted)} pinned tests ran and passed")
