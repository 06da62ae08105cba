"""Lint findings: rule ids and severities, profiles, and the ``Finding`` every scan reports."""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from chimera_cards.errors import ChimeraError

ERROR, WARNING, INFO = "error", "warning", "info"
SEVERITIES = (ERROR, WARNING, INFO)

AGENT_SKILLS, CHIMERA = "agent-skills", "chimera"
PROFILES = (AGENT_SKILLS, CHIMERA)
DEFAULT_PROFILE = AGENT_SKILLS
# Past this many findings of one rule in one file the rest are only counted (in one summary
# finding of that rule): a megabyte of zero-width characters must not store a quarter of a
# million findings, and one blocking finding blocks as well as a thousand.
MAX_FINDINGS_PER_RULE = 20
# Longest text a finding's message quotes from the card (a URL, a Tag payload).
MESSAGE_QUOTE_MAX = 200

# Rules about a card's shape (the spec's fields, its name, the Chimera sections): lint's business
# and the author's to fix. They put nothing in front of an agent that a reviewer must see first,
# so an import is never held for them; every other error (what is hostile) holds it.
SHAPE_RULES = frozenset(
    {
        "parse-error",
        "name-missing",
        "name-format",
        "name-dirname",
        "description-missing",
        "description-length",
        "field-type",
        "frontmatter-unknown-key",
        "frontmatter-strict-yaml",
        "skill-file-name",
        "chimera-field-missing",
        "kind-value",
        "stage-value",
        "topic-value",
        "provenance-value",
        "status-value",
        "section-missing",
        "section-empty",
        "section-order",
        "section-duplicate",
        "section-unknown",
    }
)

# Vocabularies. They accept everything the published Chimera cards use and a little more; a value
# outside them is an error so a typo ("verfiy") cannot silently drop a card out of retrieval.
VOCABULARIES: dict[str, tuple[str, ...]] = {
    "kind": ("pattern", "anti_pattern", "checklist", "procedure", "reference"),
    "stage": ("define", "design", "build", "verify", "review", "ship", "operate"),
    "topic": ("ai-agents", "software-dev", "devops", "research", "security", "data", "writing"),
    "provenance": ("clean", "tainted"),
    "status": ("active", "pending", "rejected", "retired"),
}
# Frontmatter a Chimera-shaped card carries; missing ones are reported in strict mode.
CHIMERA_REQUIRED = ("version", "kind", "stage", "topic", "triggers", "provenance", "status")

NAME_MAX = 64
DESCRIPTION_MAX = 1024
COMPATIBILITY_MAX = 500
BASE64_MIN = 100

# Rule id -> one-line description (used for SARIF rule metadata and the docs).
RULES: dict[str, str] = {
    "parse-error": "The file is not a well-formed card (envelope, encoding, YAML, limits).",
    "read-refused": "The card file was refused (symlink outside its directory, too large).",
    "name-from-folder": "A `name` naming its folder (a title, an owner's prefix), stored as it.",
    "bundle-symlink": "A symlink to another file of the skill, stored as a copy of that file.",
    "name-missing": "Frontmatter has no string `name`.",
    "name-format": "`name` is 1-64 chars of [a-z0-9-] with no leading, trailing or double hyphen.",
    "name-dirname": "`name` equals the card directory's name.",
    "description-missing": "Frontmatter has no non-empty string `description`.",
    "description-length": "`description` is at most 1024 characters.",
    "field-type": "A known frontmatter field has the wrong type.",
    "frontmatter-unknown-key": "Top-level frontmatter key outside the profile's fields.",
    "frontmatter-strict-yaml": (
        "Strict YAML refuses the frontmatter; read as Claude Code repairs it (values quoted), "
        "which strict readers (Gemini CLI, validators) do not do."
    ),
    "skill-file-name": (
        "The folder has a lone skill.md: linted as the reference validator reads it, but import "
        "and most agents need SKILL.md."
    ),
    "chimera-field-missing": "Strict mode: a Chimera frontmatter field is missing.",
    "kind-value": "`kind` is outside its vocabulary.",
    "stage-value": "`stage` is outside its vocabulary.",
    "topic-value": "`topic` is outside its vocabulary.",
    "provenance-value": "`provenance` is outside its vocabulary.",
    "status-value": "`status` is outside its vocabulary.",
    "section-missing": "Strict mode: one of Trigger, Do, Avoid, Check, Risk is missing.",
    "section-empty": "Strict mode: a card section has no text.",
    "section-order": (
        "Strict mode: the five sections are not in the order Trigger, Do, Avoid, Check, Risk."
    ),
    "section-duplicate": "A section heading appears more than once.",
    "section-unknown": "Strict mode: a level-2 section outside the five.",
    "hidden-bidi": "Unicode bidirectional control characters (Trojan Source).",
    "hidden-zero-width": "Zero-width characters.",
    "hidden-tag": "Unicode Tag block characters: invisible ASCII (decoded in the message).",
    "hidden-variation-selector": "Runs of variation selectors that can smuggle bytes.",
    "hidden-control": "C0/C1 control characters other than tab and newline.",
    "hidden-format": "Other invisible or format characters.",
    "html-comment": "HTML comments: invisible when rendered, read by a model.",
    "markdown-comment": "Link-reference definitions used as comments (`[//]: # (...)`, a title).",
    "override-phrase": "Text that tries to override the agent's instructions.",
    "pipe-to-shell": "Downloads piped straight into a shell or interpreter.",
    "base64-blob": "Long base64 runs that can hide a payload.",
    "url": "URLs the card points to, listed for the reviewer.",
}


class UnknownProfileError(ChimeraError):
    """A lint profile name that is not one of PROFILES."""

    exit_code = 2


@dataclass
class Finding:
    """One lint finding: a stable rule id, a severity, a message and where."""

    rule: str  # stable id, e.g. "name-format", "hidden-bidi"
    severity: str  # "error" | "warning" | "info"
    message: str
    line: int | None = None
    path: str | None = None

    @property
    def id(self) -> str:
        """``rule-<10 hex>`` over rule, severity, line and message: the same bytes give the same
        id on every run, so ``approve --accept ID`` names one finding. The path is left out so
        the id does not depend on where a bundle was unpacked.
        """
        key = f"{self.rule}\0{self.severity}\0{self.line}\0{self.message}".encode(
            "utf-8", "backslashreplace"
        )
        return f"{self.rule}-{hashlib.sha256(key).hexdigest()[:10]}"

    def to_dict(self) -> dict:
        # Spelled out: dataclasses.asdict deep-copies every field, a cost paid per stored finding.
        return {
            "rule": self.rule,
            "severity": self.severity,
            "message": self.message,
            "line": self.line,
            "path": self.path,
            "id": self.id,
        }


def has_errors(findings: Iterable[Finding]) -> bool:
    return any(f.severity == ERROR for f in findings)


class _Lines:
    """File line of an offset in one text; newlines are indexed on first use, so each look-up
    costs a bisection rather than a count from the start (many findings stay linear).
    """

    def __init__(self, text: str, first_line: int) -> None:
        self.text = text
        self.first_line = first_line
        self._breaks: list[int] | None = None

    def __call__(self, pos: int) -> int:
        if self._breaks is None:
            self._breaks = [m.start() for m in re.finditer("\n", self.text)]
        return self.first_line + bisect.bisect_left(self._breaks, pos)


class _Collector:
    """The findings of one file, at most ``limit`` per rule; the rest are only counted and
    reported as one finding per rule, as severe as the worst one left out.
    """

    def __init__(self, limit: int = MAX_FINDINGS_PER_RULE) -> None:
        self.limit = limit
        self.findings: list[Finding] = []
        self.kept: dict[str, int] = {}
        self.omitted: dict[str, list] = {}  # rule -> [count, severity, first line]

    def full(self, rule: str) -> bool:
        return self.kept.get(rule, 0) >= self.limit

    def add(self, finding: Finding) -> None:
        if self.full(finding.rule):
            self.omit(finding.rule, finding.severity, finding.line)
        else:
            self.kept[finding.rule] = self.kept.get(finding.rule, 0) + 1
            self.findings.append(finding)

    def omit(self, rule: str, severity: str, line: int | None, count: int = 1) -> None:
        entry = self.omitted.setdefault(rule, [0, severity, line])
        entry[0] += count
        if SEVERITIES.index(severity) < SEVERITIES.index(entry[1]):
            entry[1] = severity

    def result(self) -> list[Finding]:
        summaries = [
            Finding(
                rule,
                severity,
                f"{count} more {rule} finding(s) in this file, not listed "
                f"(at most {self.limit} per rule are)",
                line,
            )
            for rule, (count, severity, line) in self.omitted.items()
        ]
        return self.findings + summaries
