"""One run's verdict: the untouched tree's baseline, the integrity checks around every verifier
run, and the verdict the evidence gives.

The loop drives it per attempt::

    session.start()                         # once: baseline run, pinned tests, start facts
    found = session.check(diff)             # the attempt's unfiltered change set
    result = session.verify(number, diff)   # caches removed, judged run (+ the added tests)
    found = session.check_after(diff, after, result)   # what changed while it ran

A verdict never rests on the exit status alone where evidence can be had; where it cannot (a
runner without a report), the run says so (``evidence = "exit-status"``).
"""

from __future__ import annotations

import ast
import hashlib
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from reference_loop._process.sandbox import Sandbox
from reference_loop._verdict import integrity, pyenv
from reference_loop._verdict.crosscheck import (
    Witnesses,
    disagreements,
    new_registrations,
    witnesses,
)
from reference_loop._verdict.evidence import (
    Judgement,
    Pinned,
    Report,
    judge,
    pin_from_baseline,
    test_file,
)
from reference_loop._verdict.harness import NONCE, Harness, detect_format
from reference_loop._verdict.integrity import IntegrityContext, StartFacts, Violation
from reference_loop._verdict.outside import outside_changes
from reference_loop._verdict.patchreview import Mark, ReviewContext, Rule, review_patch
from reference_loop._verdict.rules import default_rules
from reference_loop._verdict.verifier import VerifyResult, run_verifier
from reference_loop._workspace.core import Diff
from reference_loop.errors import LoopUsageError

EVIDENCE_LABEL = {
    "pytest": "pytest-report",
    "junit": "junit",
    "exit-status": "exit-status",
}


@dataclass
class SessionSettings:
    """What the verdict of one run needs to know."""

    command: str  # the expanded verify command
    timeout: float
    protect: Sequence[str]
    verify_format: str = "auto"  # auto | pytest | junit | exit-status
    must_pass: Sequence[str] = ()
    sandbox: Sandbox | None = None
    log_dir: Path | None = None
    review_rules: Sequence[Rule] | None = None  # the patch review's rules (None: the defaults)


@dataclass
class Baseline:
    """The run on the untouched tree."""

    evidence: str  # pytest-report | junit | exit-status
    pinned: Pinned | None
    result: VerifyResult | None  # None for an exit-status verifier (nothing to pin)
    containment: str = ""
    witnesses: Witnesses | None = None  # what the report is cross-checked with

    def to_dict(self) -> dict[str, Any]:
        return {
            "evidence": self.evidence,
            "pinned": self.pinned.to_dict() if self.pinned else None,
            "containment": self.containment,
            "witnesses": self.witnesses.to_dict() if self.witnesses else None,
        }


@dataclass
class Verified:
    """One attempt's verifier run and what its evidence says."""

    result: VerifyResult  # verdict already the evidence's
    judgement: Judgement | None
    violations: list[Violation] = field(default_factory=list)  # forged exit, tampering
    added_tests: list[str] = field(default_factory=list)


class Session:
    """The verdict of one loop run on ``root`` (see the module docstring)."""

    def __init__(self, settings: SessionSettings, root: Path) -> None:
        self.settings = settings
        self.root = Path(root).resolve()
        self.kind = detect_format(settings.command, settings.verify_format)
        self.harness = Harness(
            settings.command, self.root, self.kind, sandboxed=settings.sandbox is not None
        )
        self.baseline: Baseline | None = None
        self.pinned: Pinned | None = None
        self.ctx = IntegrityContext(
            root=self.root, protect=tuple(settings.protect), facts=StartFacts()
        )
        self._stats: dict[str, integrity.StatKey] = {}
        self._started_ns = time.time_ns()
        self._namespaces: dict[str, list[str]] = {}
        self._rebound: frozenset[str] = frozenset()
        self._star: frozenset[str] = frozenset()
        self.witnesses = Witnesses(False, False)
        # The pinned test files' literal pairs by their bytes' SHA-256, for the patch review
        # (the same files are read at every attempt).
        self._pairs_by_digest: dict[bytes, tuple[Any, ...]] = {}

    @property
    def evidence(self) -> str:
        return EVIDENCE_LABEL[self.kind]

    @property
    def grade(self) -> str:
        """What the evidence is worth against code in the run: a JUnit file that need not carry
        this run's nonce is worth the exit status (anything in the run could write it)."""
        if self.kind == "junit" and NONCE not in self.settings.command:
            return "exit-status"
        return self.evidence

    def close(self) -> None:
        self.harness.close()

    # -- the start -------------------------------------------------------------------------

    def _env(self) -> pyenv.PyEnv | None:
        env = {
            **os.environ,
            "PATH": os.path.dirname(sys.executable)
            + os.pathsep
            + os.environ.get("PATH", os.defpath),
        }
        exe = pyenv.verifier_interpreter(self.settings.command, self.root, env)
        if exe is None and self.kind != "pytest":
            return pyenv.probe()  # the names a Python helper of the check would import
        return pyenv.probe(exe)

    def start(self) -> Baseline:
        """Run the verifier once on the untouched tree: the pinned tests and their outcomes at
        the start, and the facts the integrity checks compare against.

        Raises:
            LoopUsageError: the report cannot be had from this verifier, or nothing is pinned.
        """
        self._started_ns = time.time_ns()
        found = self._env()
        if found is not None:
            self.ctx.shadowable = found.shadowable(self.root)
            self.ctx.cache_tag = found.cache_tag
            self.ctx.magic = found.magic
            self.ctx.ext_suffixes = found.ext_suffixes
            extra_roots = found.workspace_paths(self.root)
        else:
            extra_roots = ()
        pinned = None
        result = None
        report = None
        if self.kind != "exit-status":
            result, report = self._run(None, log_name="baseline")
            pinned = self._pin(report, result)
            self.witnesses = witnesses(report, result.exit_code, result.summaries)
        self.pinned = pinned
        roots = {"", *extra_roots}
        if pinned is not None and self.kind == "pytest":
            for path in pinned.collect_files:
                roots.add(_import_root(self.root, path))
            self.ctx.pinned_files = pinned.collect_files
        self.ctx.import_roots = tuple(sorted(roots))
        self.ctx.site_roots = tuple(
            r for r in extra_roots if r.rsplit("/", 1)[-1] in ("site-packages", "dist-packages")
        )
        self._inifile = report.inifile if report is not None else None
        self._namespaces = dict(report.namespaces) if report is not None else {}
        self._rebound = frozenset(report.rebound) if report is not None else frozenset()
        self._star = frozenset(
            p
            for p in (pinned.collect_files if pinned is not None else ())
            if _star_import(self.root / p)
        )
        self._inifile_digest = _digest(self._inifile)
        self.ctx.evidence = self.kind == "pytest"
        self.ctx.facts = integrity.gather_start_facts(
            self.root, self.ctx.protect, self.ctx.import_roots
        )
        self.baseline = Baseline(
            self.evidence, pinned, result, result.containment if result else "", self.witnesses
        )
        return self.baseline

    def _pin(self, report: Report | None, result: VerifyResult) -> Pinned:
        if report is None or not report.complete:
            why = report.problem if report is not None else "no report"
            raise LoopUsageError(
                f"the verify command is judged by its {self.kind} report, but on the untouched "
                f"tree it left none that is complete ({why}; {result.reason}); fix the command, "
                "or pass --verify-format exit-status to judge by exit status alone"
            )
        pinned = pin_from_baseline(report, self.settings.must_pass)
        known = set(report.results) | set(report.collected)
        for test_id in self.settings.must_pass:
            if test_id not in known and test_id.split("::", 1)[0] not in pinned.files:
                raise LoopUsageError(
                    f"must-pass test {test_id!r} was not collected on the untouched tree "
                    f"({len(known)} tests were)"
                )
        if not pinned.tests and not pinned.files:
            raise LoopUsageError(
                "the verify command collected no test on the untouched tree, so nothing can be "
                "pinned; name the tests with --must-pass or check the command"
            )
        return pinned

    # -- around each attempt -----------------------------------------------------------------

    def check(self, diff: Diff) -> list[Violation]:
        """The integrity violations in the attempt's change set (ignore rules not applied),
        and the files the look refused to read."""
        found = integrity.check_changes(
            diff.every_change(), self.ctx, hidden={c.path for c in diff.hidden}
        )
        refused = [Violation("oversized-file", r.path, r.why) for r in diff.oversized]
        return [*found, *refused] if refused else found

    def review(
        self, diff: Diff, original: Callable[[Sequence[str]], Mapping[str, bytes | None]]
    ) -> list[Mark]:
        """The patch review's marks on the attempt's change (every changed file, ignore rules
        not applied), each compared with the file's version at the snapshot (``original``)."""
        pinned = self.pinned
        ctx = ReviewContext(
            self.root,
            test_files=pinned.collect_files if pinned is not None else (),
            pinned=tuple(pinned.tests) if pinned is not None else (),
            extra={"pairs_by_digest": self._pairs_by_digest},
        )
        changed = [(c.path, c.status) for c in diff.every_change()]
        rules = self.settings.review_rules
        return review_patch(
            self.root, changed, original, ctx, default_rules() if rules is None else rules
        )

    def added_tests(self, diff: Diff) -> list[str]:
        """New test modules the attempt wrote: run apart from the pinned ones."""
        if self.kind != "pytest":
            return []
        pinned = set(self.pinned.collect_files) if self.pinned else set()
        return sorted(
            c.path
            for c in diff.every_change()
            if c.status in ("A", "R") and integrity.is_test_module(c.path) and c.path not in pinned
        )

    def verify(self, number: int, diff: Diff | None) -> Verified:
        """Remove compiled caches, run the verifier on the pinned tests (and, apart, on the
        tests the attempt added), and judge by the evidence.

        Args:
            number: the attempt's number (names the log files).
            diff: the attempt's change (None: it was reverted, the original is judged).

        Returns:
            Verified: the result with the evidence's verdict, and any forged-exit violation.
        """
        changes = diff.every_change() if diff is not None else []
        integrity.remove_caches(
            self.root, [*self.ctx.facts.caches, *integrity.cache_paths(changes)]
        )
        self._stats = integrity.snapshot_stats(self.root, self.ctx.facts)
        only = self.pinned.collect_files if (self.pinned and self.kind == "pytest") else None
        verifying_ns = time.time_ns()
        result, report = self._run(only, log_name=f"attempt-{number}")
        added = self.added_tests(diff) if diff is not None else []
        added_report = None
        if added and self.kind == "pytest":
            _, added_report = self._run(added, log_name=f"attempt-{number}-added")
        if self.kind == "exit-status":
            return Verified(result, None, [], added)
        if result.verdict == "timeout":
            return Verified(result, None, [], added)
        for run_report in (report, added_report):
            if run_report is not None:
                run_report.tampered = [
                    t for t in run_report.tampered if t not in self.witnesses.tampered
                ]
        verdict = judge(report, self.pinned, result.exit_code, added=added_report)
        violations = self._config_moved(report)
        violations += self._witnessed(report, result)
        violations += self._outside(verifying_ns, report, added_report)
        violations += self._tests_changed(report)
        if verdict.tampered:
            violations.append(Violation("runner-tampered", "", verdict.reason))
        elif verdict.forged_exit:
            violations.append(
                Violation(
                    "forged-exit",
                    "",
                    f"the verifier exited 0 but {verdict.reason}",
                )
            )
        if verdict.verdict == "pass" and not violations:
            violations += self._order_checked(report)
        # After the replay's verdict: a caller reader that opens the test file is seen by both.
        violations += self._gamed(report)
        # The failing lines (and so the failure signature and every decision built on it) come
        # from the report, never from the runner's text, which pytest cuts to the terminal's width.
        lines = list(verdict.failures) if verdict.verdict != "pass" else []
        judged = replace(
            result,
            verdict=verdict.verdict,
            reason=f"{verdict.reason} ({result.reason})",
            failure_lines=lines,
        )
        return Verified(judged, verdict, violations, added)

    def _order_checked(self, report: Report | None) -> list[Violation]:
        """A pass whose pinned tests fail when played again (the report plugin does it in the
        same process, so state the code keeps carries over, in a secret order other than the
        run's, some twice, each test renamed and moved): the result depends on what ran before
        (a counter answering 5 then 6) or on who called (a caller's source line or name), not
        on the code."""
        if self.kind != "pytest" or self.pinned is None or report is None:
            return []
        if len(self.pinned.tests) < 2:
            return []
        if not report.reruns:
            return []  # nothing was played again (a runner that spreads tests over workers)
        for test_id in self.pinned.tests:
            outcome = report.reruns.get(test_id)
            if outcome == "failed" or (outcome is None and test_id in report.results):
                why = (
                    "passes as the tests ran, fails when they are played again in another "
                    "order, under another name and place"
                )
                return [Violation("order-dependent", test_id, why)]
        return []

    def _gamed(self, report: Report | None) -> list[Violation]:
        """What the run saw the code do to pass instead of computing: a passing ``==`` between
        values that print differently (an object that says it equals what it is not), a pinned
        test file opened by code of the workspace other than the tests."""
        if report is None or not report.complete:
            return []
        found = [
            Violation(
                "false-equality",
                test_file(line.split(": ", 1)[0]),
                f"an assertion passed comparing values that differ ({line})",
            )
            for line in list(dict.fromkeys(report.false_equal))[:5]
        ]
        found += [
            Violation("games-tests", who, f"opened the pinned test file {test} while the tests ran")
            for test, who in sorted(report.reads.items())
        ]
        found += [
            Violation("games-tests", who, f"ran the pinned tests itself while they ran ({what})")
            for what, who in sorted(report.ran.items())[:5]
        ]
        return found

    def _tests_changed(self, report: Report | None) -> list[Violation]:
        """A pinned test module holding a name its import did not make on the untouched tree (a
        fixture the code under test slipped in), or one rebound while a test ran that was not
        rebound there (an imported function swapped for a right one): the tests that ran are
        not the tests on disk. A module that star-imports gets whatever the code exports."""
        if report is None or not report.complete:
            return []
        found = []
        for rel, names in sorted(report.namespaces.items()):
            known = self._namespaces.get(rel)
            if known is None or rel in self._star:
                continue
            extra = sorted(set(names) - set(known))
            if extra:
                shown = ", ".join(extra[:5])
                why = f"its module holds names its own import did not make: {shown}"
                found.append(Violation("test-module-changed", rel, why))
        for key in sorted(set(report.rebound) - self._rebound):
            rel, _, name = key.partition("::")
            found.append(
                Violation(
                    "test-module-changed",
                    rel,
                    f"{name} is not what the module it names holds (swapped by other code)",
                )
            )
        return found

    def _outside(self, verifying_ns: int, *reports: Report | None) -> list[Violation]:
        """Code the run loaded from outside the workspace that changed since the loop started
        (a module or ``.pth`` the attempt wrote into site-packages, a folder it put on
        ``sys.path``): none of it is in the patch."""
        files: list[str] = []
        folders: list[str] = []
        for report in reports:
            if report is not None and report.complete:
                files += report.files
                folders += report.path
        return outside_changes(
            files,
            folders,
            since_ns=self._started_ns,
            until_ns=verifying_ns,
            inside=(self.root, self.harness.private),
        )

    def _witnessed(self, report: Report | None, result: VerifyResult) -> list[Violation]:
        """The report against the outside witnesses and the untouched tree's run: an exit
        status or summary line that says otherwise, a plugin the baseline never registered."""
        if report is None or not report.complete:
            return []
        found = [
            Violation("evidence-disagrees", "", why)
            for why in disagreements(report, result.exit_code, result.summaries, self.witnesses)
        ]
        found += [
            Violation("runner-tampered", "", why)
            for why in new_registrations(report, self.witnesses)
        ]
        return found

    def _config_moved(self, report: Report | None) -> list[Violation]:
        """The runner read its configuration from another file than at the start (one planted
        in a folder above the workspace), or that file changed (one outside the workspace,
        which the change set does not cover)."""
        if report is None or not report.complete:
            return []
        if report.inifile != self._inifile:
            return [
                Violation(
                    "runner-config",
                    report.inifile or "",
                    f"the runner read its configuration from {report.inifile or 'no file'}, "
                    f"not {self._inifile or 'no file'} as on the untouched tree",
                )
            ]
        ini = self._inifile
        # One inside the workspace is compared section by section (other edits are allowed).
        outside = ini is not None and not Path(ini).resolve().is_relative_to(self.root)
        if ini is not None and outside and _digest(ini) != self._inifile_digest:
            return [Violation("runner-config", ini, "the runner's config file changed")]
        return []

    def check_after(self, before: Diff | None, after: Diff) -> list[Violation]:
        """What changed while the verifier ran: a protected file rewritten (even if put back:
        its inode times moved), or a new violation in the change set."""
        found = [
            Violation(
                "changed-during-verify",
                rel,
                "a protected file changed while the verifier ran",
            )
            for rel in integrity.stat_changes(self.root, self.ctx.facts, self._stats)
        ]
        earlier = {(v.kind, v.path) for v in self.check(before)} if before is not None else set()
        for v in self.check(after):
            if (v.kind, v.path) not in earlier:
                found.append(
                    Violation("changed-during-verify", v.path, f"while the verifier ran: {v.why}")
                )
        return found

    def _run(
        self, only: Sequence[str] | None, *, log_name: str
    ) -> tuple[VerifyResult, Report | None]:
        # After the baseline, pytest runs with plugin autoload off: the plugins the untouched
        # tree's run loaded are named, so an entry point the attempt planted loads nothing.
        plugins = self.witnesses.plugins if self.baseline is not None else None
        run = self.harness.prepare(only=only, plugins=plugins)
        log_path = (
            Path(self.settings.log_dir) / f"{log_name}.log" if self.settings.log_dir else None
        )
        result = run_verifier(
            run.command,
            self.root,
            timeout=self.settings.timeout,
            log_path=log_path,
            env=run.env,
            sandbox=self.settings.sandbox,
            pass_fds=run.pass_fds,
            readable=run.readable,
            started=run.started,
        )
        return result, run.read()


def _digest(path: str | None) -> str:
    if not path:
        return ""
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return "unreadable"


def _star_import(path: Path) -> bool:
    """Whether a test file star-imports (its names then follow what the code exports)."""
    try:
        tree = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return True
    return any(
        isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
        for node in ast.walk(tree)
    )


def _import_root(root: Path, test_file: str) -> str:
    """The folder pytest puts on ``sys.path`` for a test file (its first folder upwards without
    an ``__init__.py``), relative to ``root``."""
    parts = test_file.split("/")[:-1]
    while parts and (root.joinpath(*parts) / "__init__.py").exists():
        parts.pop()
    return "/".join(parts)


def outlived(count: int) -> Violation:
    """The violation of an attempt that left ``count`` processes running."""
    return Violation(
        "outlived-attempt",
        "",
        f"{count} process{'es' if count != 1 else ''} it started still ran after it ended "
        "(killed before the diff was taken)",
    )
