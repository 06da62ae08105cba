"""One record per attempt, and the history that holds them.

The card's rule is that every attempt's evidence is kept: its verdict, the verifier's output, the
real patch (taken from the workspace before the revert), the first tool step that failed and a
normalised failure signature. ``History`` is append-only so a later attempt can never overwrite
an earlier one (the ``feedback = ...`` bug this package exists to fix).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from reference_loop._process.textsafe import visible
from reference_loop.errors import LoopError

DEFAULT_PATCH_LIMIT = 2000
# A record keeps at most this many of the paths an attempt touched (and the total count): an
# attempt that creates thousands of files must not make every later prompt and line that long.
MAX_RECORD_FILES = 200
# "integrity": the attempt gamed its check (or the review marked its patch); never solved.
VERDICTS = ("pass", "fail", "error", "timeout", "integrity", "stopped")


def describe_files(files: Sequence[str], total: int | None = None, limit: int = 20) -> str:
    """``a.py, b.py and 2,998 more files``: at most ``limit`` names, control characters made
    visible (a file name is the attempt's choice), and how many were left out.

    Args:
        files: the paths (possibly already cut).
        total: how many paths there were in all (default: ``len(files)``).
        limit: how many names to show.

    Returns:
        One line.
    """
    total = max(total or 0, len(files))
    shown = [visible(f) for f in files[:limit]]
    rest = total - len(shown)
    text = ", ".join(shown)
    if rest > 0:
        text += f" and {rest:,} more file{'s' if rest != 1 else ''}"
    return text


def truncation_marker(shown: int, total: int, lines_omitted: int) -> str:
    return f"[… patch truncated: {lines_omitted} more lines, showing {shown} of {total} chars …]"


def bound_patch(text: str, limit: int = DEFAULT_PATCH_LIMIT) -> tuple[str, bool]:
    """Cut ``text`` to at most ``limit`` chars at a line boundary, saying so when it cuts.

    Returns (bounded text, truncated?). The marker is appended on its own line and is not
    counted against ``limit`` so that a patch is never silently shortened.
    """
    if len(text) <= limit:
        return text, False
    lines = text.splitlines(keepends=True)
    kept: list[str] = []
    size = 0
    for line in lines:
        if size + len(line) > limit:
            break
        kept.append(line)
        size += len(line)
    if not kept:
        # A single line longer than the limit: cut inside it rather than show nothing.
        kept = [lines[0][:limit].rstrip("\n") + "\n"]
        size = len(kept[0])
        omitted = len(lines) - 1
    else:
        omitted = len(lines) - len(kept)
    body = "".join(kept)
    if not body.endswith("\n"):
        body += "\n"
    return body + truncation_marker(size, len(text), omitted), True


_INDEX_LINE = re.compile(r"^index [0-9a-f]+\.\.[0-9a-f]+.*$", re.M)
_HUNK_HEADER = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@", re.M)


def normalise_patch(text: str) -> str:
    """The patch with volatile header parts (blob ids, hunk line numbers, trailing blanks) removed.

    Two attempts that made the same change produce the same normalised patch, which is what the
    bench's repeat-patch rate compares.
    """
    text = _INDEX_LINE.sub("index", text)
    text = _HUNK_HEADER.sub("@@", text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def patch_fingerprint(text: str) -> str:
    """A short hash of the normalised full patch ("" for an empty patch)."""
    norm = normalise_patch(text)
    return hashlib.sha256(norm.encode()).hexdigest()[:16] if norm else ""


@dataclass
class FailedStep:
    """The first tool step of an attempt that did not succeed."""

    name: str
    error: str


@dataclass
class AttemptRecord:
    number: int
    verdict: str  # "pass" | "fail" | "error" | "timeout" | "integrity" | "stopped"
    verifier_output: str = ""  # bounded by the verifier (head + tail)
    patch: str = ""  # bounded by bound_patch
    patch_truncated: bool = False
    patch_chars: int = 0  # size of the full, unbounded patch
    patch_fingerprint: str = ""  # patch_fingerprint() of the full patch
    files: list[str] = field(default_factory=list)  # paths the patch touched (first 200)
    files_total: int = 0  # how many paths the patch touched in all
    first_failing_step: FailedStep | None = None
    signature: str = ""  # signature.failure_signature(); "" when it passed
    failure_lines: list[str] = field(default_factory=list)
    reviewer_note: str | None = None  # beside the verifier output, never instead of it
    attempter: str = ""
    description: str = ""  # the attempter's own account; never used as the patch
    duration: float = 0.0
    protected_violation: bool = False  # it changed a protected path (reverted before verifying)
    # Integrity violation classes (shadowing, runner-config, bytecode, ...); never with a pass.
    integrity: list[str] = field(default_factory=list)
    verifier_exit_code: int | None = None  # the judged run's exit status (None: timeout, none)
    # Every integrity finding: class, path, why, stage (before-verify, verify, patch-review),
    # severity (integrity fails the attempt; warning flags it), and the review's rule and line.
    findings: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.files_total = max(self.files_total, len(self.files))
        if len(self.files) > MAX_RECORD_FILES:
            self.files = self.files[:MAX_RECORD_FILES]
        if self.number < 1:
            raise LoopError(f"attempt numbers start at 1, got {self.number}")
        if self.verdict not in VERDICTS:
            raise LoopError(f"unknown verdict {self.verdict!r} (expected one of {VERDICTS})")
        if self.integrity and self.verdict == "pass":
            # By construction: an attempt caught gaming its check can never count as solved.
            raise LoopError(
                f"attempt {self.number} has integrity violations ({', '.join(self.integrity)}) "
                "and cannot pass"
            )

    @property
    def solved(self) -> bool:
        return self.verdict == "pass"

    def summary(self, *, with_files: bool = True) -> str:
        """One line that stays in the rendering whatever the budget."""
        parts = [f"Attempt {self.number} — {self.verdict}"]
        if self.signature:
            parts.append(f"signature: {self.signature}")
        if self.first_failing_step:
            parts.append(f"first failing step: {self.first_failing_step.name}")
        if self.integrity:
            parts.append("integrity: " + ", ".join(self.integrity))
        flagged = [f for f in self.findings if f.get("severity") == "warning"]
        if flagged:
            parts.append("flagged: " + "; ".join(_flag(f) for f in flagged[:5]))
        if with_files and self.files:
            parts.append("touched: " + describe_files(self.files, self.files_total, limit=5))
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AttemptRecord:
        data = dict(data)
        step = data.get("first_failing_step")
        if step is not None:
            data["first_failing_step"] = FailedStep(**step)
        return cls(**data)


def _flag(finding: dict[str, Any]) -> str:
    where = f"{finding.get('path')}:{finding.get('line')}" if finding.get("line") else ""
    return " ".join(p for p in (str(finding.get("rule") or finding.get("class")), where) if p)


class History:
    """The attempts of one run, oldest first. Append-only: nothing is ever replaced."""

    def __init__(self, records: list[AttemptRecord] | None = None) -> None:
        self._records: list[AttemptRecord] = []
        for record in records or []:
            self.append(record)

    def append(self, record: AttemptRecord) -> None:
        expected = len(self._records) + 1
        if record.number != expected:
            # Re-using a number would silently replace an earlier attempt's evidence.
            raise LoopError(f"attempt {record.number} appended where attempt {expected} was due")
        self._records.append(record)

    @property
    def records(self) -> tuple[AttemptRecord, ...]:
        return tuple(self._records)

    def __iter__(self) -> Iterator[AttemptRecord]:
        return iter(tuple(self._records))

    def __len__(self) -> int:
        return len(self._records)

    def __getitem__(self, index: int) -> AttemptRecord:
        return self._records[index]

    def last(self) -> AttemptRecord | None:
        return self._records[-1] if self._records else None
