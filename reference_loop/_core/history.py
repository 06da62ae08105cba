"""Rendering the attempt history into the next prompt.

``accumulate`` is the card: every earlier attempt, oldest first, each labelled ``Attempt N —
<verdict>``, under a heading that says they were tried, reverted and must not be repeated.
Attempts that failed the same way render their failure once. A character budget is met by
shrinking the oldest verbose fields first; an attempt never disappears (its one-line summary
stays). The other modes exist as bench arms: ``last`` is the overwrite bug (only the previous
attempt), ``none`` says only "it failed", ``accumulate-nopatch`` shows every attempt's verdict
and verifier output but no patches (to separate anchoring on wrong patches from the value of
history).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from reference_loop._core.records import AttemptRecord, bound_patch, describe_files
from reference_loop.errors import LoopUsageError

MODES = ("accumulate", "last", "none", "accumulate-nopatch")
DEFAULT_BUDGET = 12_000
UNBOUNDED = 1 << 62  # a budget no history reaches: the unshrunk rendering
HEADING = (
    "## Earlier attempts — each one below was tried, failed, and was reverted. Do NOT repeat them."
)
LAST_HEADING = "## Previous attempt — it was tried, failed, and was reverted."
NONE_TEXT = "The previous attempt failed and was reverted."
OUTPUT_TAIL_LINES = 8
SHORT_PATCH_CHARS = 400

# Shrink stages, applied to the oldest record first, one record at a time, until the budget fits.
_STAGES = ("output_tail", "output_drop", "patch_short", "patch_drop", "summary")


def check_mode(mode: str) -> str:
    if mode not in MODES:
        raise LoopUsageError(f"unknown history mode {mode!r} (expected one of: {', '.join(MODES)})")
    return mode


def records_shown(records: Sequence[AttemptRecord], mode: str) -> int:
    """How many records a rendering in ``mode`` carries (``none`` carries none)."""
    check_mode(mode)
    if not records or mode == "none":
        return 0
    return 1 if mode == "last" else len(records)


def mentions(text: str, token: str) -> bool:
    """Whether ``token`` occurs in ``text`` as a whole word (``sort`` is not in ``resort``)."""
    return (
        re.search(r"(?<![A-Za-z0-9_])" + re.escape(token) + r"(?![A-Za-z0-9_])", text) is not None
    )


def join_numbers(numbers: Sequence[int]) -> str:
    """[2, 3] -> "2 and 3"; [1, 2, 4] -> "1, 2 and 4"."""
    items = [str(n) for n in numbers]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _fence(text: str, lang: str = "") -> str:
    # A fence longer than any backtick run inside, so a patch cannot close it early.
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{lang}\n{text.rstrip()}\n{ticks}"


@dataclass
class _View:
    output: str = "full"  # full | tail | drop
    patch: str = "full"  # full | short | drop
    summary_only: bool = False


def _block(
    record: AttemptRecord,
    view: _View,
    *,
    mode: str,
    first_same: int | None,
    same_group: list[int],
    same_patch_as: int | None,
) -> str:
    with_patch = mode != "accumulate-nopatch"
    if view.summary_only:
        return "- " + record.summary(with_files=with_patch)
    lines = [f"### Attempt {record.number} — {record.verdict}"]
    if record.signature and first_same is None:
        lines.append(f"Failure signature: {record.signature}")
    if first_same is not None:
        lines.append(f"Failed the same way as attempt {first_same} (its output is shown there).")
    elif len(same_group) > 1:
        lines.append(f"Failed the same way in attempts {join_numbers(same_group)}.")
    if record.first_failing_step:
        step = record.first_failing_step
        lines.append(f"First failing tool step: {step.name}: {step.error}".rstrip(": "))
    if with_patch:
        lines += _patch_lines(record, view, same_patch_as)
    if first_same is None:
        lines += _output_lines(record, view)
    return "\n".join(lines)


def _patch_lines(record: AttemptRecord, view: _View, same_patch_as: int | None) -> list[str]:
    lines = []
    if record.files:
        lines.append("Files touched: " + describe_files(record.files, record.files_total))
    if not record.patch:
        lines.append("Patch: (no change to the workspace)")
    elif same_patch_as is not None:
        lines.append(f"Patch: identical to attempt {same_patch_as}'s patch (reverted).")
    elif view.patch == "drop":
        lines.append("Patch: omitted to fit the prompt budget (files touched are listed above).")
    else:
        text = record.patch
        if view.patch == "short":
            text, _ = bound_patch(text, SHORT_PATCH_CHARS)
        lines.append("Patch (reverted):")
        lines.append(_fence(text, "diff"))
    return lines


def _output_lines(record: AttemptRecord, view: _View) -> list[str]:
    lines = []
    if view.output == "drop":
        lines.append("Verifier output: omitted to fit the prompt budget (signature above).")
    elif record.verifier_output.strip():
        text = record.verifier_output
        if view.output == "tail":
            tail = text.rstrip().splitlines()
            if len(tail) > OUTPUT_TAIL_LINES:
                text = f"… {len(tail) - OUTPUT_TAIL_LINES} lines omitted …\n" + "\n".join(
                    tail[-OUTPUT_TAIL_LINES:]
                )
        lines.append("Verifier output:")
        lines.append(_fence(text))
    if record.reviewer_note and view.output != "drop":
        lines.append(f"Reviewer note (beside the verifier output): {record.reviewer_note}")
    return lines


def _compose(records: Sequence[AttemptRecord], views: list[_View], mode: str, heading: str) -> str:
    groups: dict[str, list[int]] = {}
    for rec in records:
        if rec.signature and rec.verdict != "pass":
            groups.setdefault(rec.signature, []).append(rec.number)
    patches: dict[str, int] = {}
    blocks = [heading]
    for rec, view in zip(records, views, strict=True):
        group = groups.get(rec.signature, [rec.number]) if rec.signature else [rec.number]
        first_same = group[0] if group[0] != rec.number else None
        same_patch_as = patches.get(rec.patch_fingerprint) if rec.patch_fingerprint else None
        if rec.patch_fingerprint and same_patch_as is None:
            patches[rec.patch_fingerprint] = rec.number
        blocks.append(
            _block(
                rec,
                view,
                mode=mode,
                first_same=first_same,
                same_group=group,
                same_patch_as=same_patch_as,
            )
        )
    return "\n\n".join(blocks) + "\n"


def render(
    records: Sequence[AttemptRecord], mode: str = "accumulate", budget: int = DEFAULT_BUDGET
) -> str:
    """The history section for the next prompt ("" when there is nothing to show)."""
    check_mode(mode)
    if budget <= 0:
        raise LoopUsageError(f"history budget must be positive, got {budget}")
    records = list(records)
    if not records:
        return ""
    if mode == "none":
        return NONE_TEXT + "\n"
    heading = HEADING
    if mode == "last":
        records, heading = records[-1:], LAST_HEADING
    views = [_View() for _ in records]
    text = _compose(records, views, mode, heading)
    for stage in _STAGES:
        for view in views:
            if len(text) <= budget:
                return text
            if stage == "output_tail":
                view.output = "tail"
            elif stage == "output_drop":
                view.output = "drop"
            elif stage == "patch_short":
                view.patch = "short"
            elif stage == "patch_drop":
                view.patch = "drop"
            else:
                view.summary_only = True
            text = _compose(records, views, mode, heading)
    # Even the one-line summaries exceed the budget: keep them all rather than drop an attempt.
    return text


def render_fitted(
    records: Sequence[AttemptRecord], mode: str = "accumulate", budget: int = DEFAULT_BUDGET
) -> tuple[str, int]:
    """``render`` within ``budget``, and how many characters the shrink stages cut to get there
    (0 when the full history fits), so a run can say how much of the history a small context
    window cost."""
    text = render(records, mode, budget)
    full = render(records, mode, UNBOUNDED)
    return text, max(0, len(full) - len(text))
