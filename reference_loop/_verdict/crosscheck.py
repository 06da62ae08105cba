"""The evidence of one run checked against what the loop sees from outside the process.

The report is written inside the verifier's process, where the code under test runs too. So a
pass needs three witnesses to agree: the report, the process's exit status (the kernel hands it
to the loop), and pytest's own summary line in the output — and the run to look like the
untouched tree's run did: the same plugins, the same count of runner parts fingerprinted, no
plugin registered that the baseline run did not register. Each witness alone can be forged by
code in the process; forging all of them consistently takes the steps the patch review marks
(reaching the report's descriptor and nonce, ending the process early, printing a summary).

What a witness can say depends on the command, so the baseline run decides which ones count: an
exit status that did not follow pytest's at the start (``pytest; true``) is not compared, nor
a summary line the command never printed (``-qq``, ``-p no:terminal``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reference_loop._verdict.evidence import PASSED, Report

_COUNT = re.compile(r"(\d+) (\w+)")
_PLURAL = {"errors": "error", "warnings": "warning"}
# The words whose counts must agree (warnings, deselected, reruns and the like do not decide).
COMPARED = ("passed", "failed", "error", "xpassed")


def parse_summary(line: str) -> dict[str, int]:
    """The counts of a pytest summary line (``=== 1 failed, 2 passed in 0.1s ===``)."""
    body = line.strip().strip("=").strip()
    body = body.rsplit(" in ", 1)[0]
    counts: dict[str, int] = {}
    for number, said in _COUNT.findall(body):
        word = _PLURAL.get(said, said)
        counts[word] = counts.get(word, 0) + int(number)
    return counts


@dataclass(frozen=True)
class Witnesses:
    """Which outside witnesses the untouched tree's run showed, and what it looked like."""

    exit_follows: bool  # the command's exit status was pytest's own (report) status
    summary: bool  # the output held pytest's summary line, agreeing with the report
    plugins: tuple[str, ...] = ()  # entry-point plugins the run loaded (pytest)
    identity: int | None = None  # runner parts the report plugin fingerprinted (pytest)
    registered: frozenset[str] = field(default_factory=frozenset)
    # Runner parts the untouched tree's run changed itself (pytest's own legacy shims, the
    # project's conftest): not the attempt's doing.
    tampered: frozenset[str] = field(default_factory=frozenset)
    # The kernel guards the judged process ran without (pytest_guard.py): "seccomp",
    # "landlock"; empty where the kernel took both.
    unguarded: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "exit_status": self.exit_follows,
            "summary_line": self.summary,
            "plugins": list(self.plugins),
            "unguarded": list(self.unguarded),
        }


def _report_counts(report: Report) -> dict[str, int]:
    if report.kind == "pytest":
        return dict(report.counts)
    counts: dict[str, int] = {}
    for result in report.results.values():
        word = result.outcome if result.outcome != PASSED else "passed"
        counts[word] = counts.get(word, 0) + 1
    return counts


def _summary_agrees(report: Report, line: str) -> bool:
    said = parse_summary(line)
    have = _report_counts(report)
    if report.kind == "pytest":
        return all(said.get(w, 0) == have.get(w, 0) for w in COMPARED)
    # A JUnit file folds setup and teardown errors into its test cases: compare the passes,
    # and whether anything failed at all.
    bad_said = said.get("failed", 0) + said.get("error", 0)
    bad_have = have.get("failed", 0) + have.get("error", 0)
    return said.get("passed", 0) == have.get("passed", 0) and (bad_said == 0) == (bad_have == 0)


def _exit_agrees(report: Report, exit_code: int | None) -> bool:
    if report.kind == "pytest":
        return exit_code == report.exitstatus
    all_passed = all(r.outcome in (PASSED, "skipped") for r in report.results.values())
    return (exit_code == 0) == all_passed


def witnesses(report: Report | None, exit_code: int | None, summaries: Sequence[str]) -> Witnesses:
    """What the baseline run shows of the outside witnesses.

    Args:
        report: the baseline run's report (complete, or nothing is compared).
        exit_code: its exit status.
        summaries: the pytest summary lines its output held.

    Returns:
        The Witnesses later runs are held to.
    """
    if report is None or not report.complete:
        return Witnesses(False, False)
    return Witnesses(
        exit_follows=_exit_agrees(report, exit_code),
        summary=bool(summaries) and _summary_agrees(report, summaries[-1]),
        plugins=tuple(report.plugins),
        identity=report.identity,
        registered=frozenset(report.registered),
        tampered=frozenset(report.tampered),
        unguarded=tuple(report.unguarded),
    )


def disagreements(
    report: Report, exit_code: int | None, summaries: Sequence[str], start: Witnesses
) -> list[str]:
    """Where a complete report and the outside witnesses disagree (empty: they agree).

    Args:
        report: the judged run's report.
        exit_code: the process's exit status (None: it timed out; nothing is compared).
        summaries: the pytest summary lines in its output.
        start: what the baseline run showed.

    Returns:
        One line per disagreement.
    """
    found: list[str] = []
    if exit_code is None:
        return found
    if start.exit_follows and not _exit_agrees(report, exit_code):
        said = report.exitstatus if report.kind == "pytest" else "all passed"
        found.append(f"the process exited {exit_code} but the report says {said}")
    if start.summary:
        if not summaries:
            found.append("pytest printed no summary line, though it did on the untouched tree")
        elif not _summary_agrees(report, summaries[-1]):
            have = _report_counts(report)
            shown = ", ".join(f"{have.get(w, 0)} {w}" for w in COMPARED)
            found.append(f"pytest's summary says {summaries[-1]!r}; the report holds {shown}")
        elif len(set(summaries)) > 1:
            found.append(f"the output holds {len(set(summaries))} different pytest summaries")
    return found


def new_registrations(report: Report, start: Witnesses) -> list[str]:
    """Plugins registered in this run that the untouched tree's run never registered, and a
    fingerprint table of another size (pytest reports only)."""
    if report.kind != "pytest":
        return []
    found = [
        f"a plugin the untouched tree's run did not register: {r}"
        for r in report.registered
        if r not in start.registered
    ]
    if start.identity is not None and report.identity != start.identity:
        found.append(
            f"the report plugin fingerprinted {report.identity} runner parts, "
            f"{start.identity} on the untouched tree"
        )
    return found
