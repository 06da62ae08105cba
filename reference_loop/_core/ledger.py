"""The task ledger: what is known about the task and why earlier attempts failed.

It is the compact, deduplicated view of a run that a planner reads when the loop re-plans after
a repeated failure. Causes are keyed by failure signature, so ten attempts that failed the same
way make one bullet naming all ten.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from reference_loop._core.history import join_numbers
from reference_loop._core.records import AttemptRecord, describe_files

FACTS_HEADING = "Known facts:"
CAUSES_HEADING = "Why earlier attempts failed (do NOT repeat these):"


@dataclass
class Cause:
    signature: str
    text: str
    attempts: list[int] = field(default_factory=list)
    files: list[str] = field(default_factory=list)


@dataclass
class TaskLedger:
    facts: list[str] = field(default_factory=list)
    causes: list[Cause] = field(default_factory=list)

    def add_fact(self, fact: str) -> None:
        fact = fact.strip()
        if fact and fact not in self.facts:
            self.facts.append(fact)

    def add_cause(
        self, signature: str, text: str, attempt: int, files: list[str] | None = None
    ) -> Cause:
        """Record why ``attempt`` failed; a known signature gains the attempt, not a new bullet."""
        for cause in self.causes:
            if cause.signature == signature:
                break
        else:
            cause = Cause(signature=signature, text=text.strip())
            self.causes.append(cause)
        if attempt not in cause.attempts:
            cause.attempts.append(attempt)
        for path in files or []:
            if path not in cause.files:
                cause.files.append(path)
        return cause

    def add_record(self, record: AttemptRecord) -> Cause | None:
        """Derive a cause from a failed attempt's record (a pass adds nothing)."""
        if record.solved:
            return None
        signature = record.signature or record.verdict
        text = signature
        if record.first_failing_step and record.first_failing_step.error not in signature:
            step = record.first_failing_step
            text += f" (tool step {step.name} failed: {step.error})"
        return self.add_cause(signature, text, record.number, record.files)

    def context(self) -> str:
        """The ``Known facts:`` and ``Why earlier attempts failed`` blocks ("" when both empty)."""
        blocks: list[str] = []
        if self.facts:
            blocks.append("\n".join([FACTS_HEADING] + [f"- {fact}" for fact in self.facts]))
        if self.causes:
            lines = [CAUSES_HEADING]
            for cause in self.causes:
                label = "attempt" if len(cause.attempts) == 1 else "attempts"
                line = f"- {label} {join_numbers(cause.attempts)}: {cause.text}"
                if cause.files:
                    line += f" [changed: {describe_files(cause.files)}]"
                lines.append(line)
            blocks.append("\n".join(lines))
        return "\n\n".join(blocks)
