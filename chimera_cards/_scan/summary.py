"""A lint report as people read it: one entry per skill with its counts, the findings that matter.

``lint`` over a library prints one line per skill and, below it, the findings at or above a
severity (warning by default). The counts always count every finding, so a hidden one is never
unaccounted for. A URL inside a licence file is the licence's own address (every Apache-2.0 copy
carries two), not a place the skill sends an agent, so it is dropped before anything is counted.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

SEVERITY_ORDER = ("error", "warning", "info")  # most severe first
_LICENCE_NAME = re.compile(r"^(licen[cs]e|copying|notice)([.-].*)?$", re.IGNORECASE)
_URL_RULE = "url"


def is_licence_file(path: str | None) -> bool:
    """Whether ``path`` names a licence file (LICENSE, LICENCE.txt, COPYING, NOTICE.md, ...)."""
    return bool(path) and bool(_LICENCE_NAME.match(os.path.basename(str(path))))


def without_licence_urls(findings: Iterable) -> list:
    """The findings less the ``url`` listings of licence files."""
    return [f for f in findings if not (f.rule == _URL_RULE and is_licence_file(f.path))]


def at_least(severity: str, minimum: str) -> bool:
    """Whether ``severity`` is ``minimum`` or more severe."""
    return SEVERITY_ORDER.index(severity) <= SEVERITY_ORDER.index(minimum)


@dataclass
class SkillSummary:
    """One skill of a lint run: where it is, its counts, and its findings (most severe first)."""

    path: str  # the skill folder (or the SKILL.md given alone)
    findings: list = field(default_factory=list)

    def count(self, severity: str) -> int:
        return sum(f.severity == severity for f in self.findings)

    def shown(self, minimum: str) -> list:
        """The findings at ``minimum`` or above, errors first, then by file and line."""
        return sorted(
            (f for f in self.findings if at_least(f.severity, minimum)),
            key=lambda f: (SEVERITY_ORDER.index(f.severity), f.path or "", f.line or 0),
        )

    def to_dict(self) -> dict:
        return {
            "path": self.path,
            "errors": self.count("error"),
            "warnings": self.count("warning"),
            "infos": self.count("info"),
        }


def _skill_of(card_file: str) -> str:
    folder = os.path.dirname(card_file)
    return folder if os.path.basename(card_file) == "SKILL.md" and folder else card_file


def summarise(files: Iterable[str], findings: Iterable) -> list[SkillSummary]:
    """Group a report's findings by the skill they belong to, in the order the cards were read.

    Args:
        files: every card file looked at (``LintReport.files``).
        findings: the report's findings (each with the path of its file).
    Returns:
        One SkillSummary per card file; a finding goes to the skill whose folder holds it most
        closely (a finding outside every skill gets a summary of its own path).
    """
    summaries = {path: SkillSummary(path) for path in map(_skill_of, files)}
    roots = sorted(summaries, key=len, reverse=True)
    for finding in findings:
        where = str(finding.path or "")
        owner = next(
            (root for root in roots if where == root or where.startswith(root.rstrip("/") + "/")),
            None,
        )
        if owner is None:
            owner = where
            summaries.setdefault(owner, SkillSummary(owner))
            roots = sorted(summaries, key=len, reverse=True)
        summaries[owner].findings.append(finding)
    return list(summaries.values())
