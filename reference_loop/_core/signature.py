"""Failure signatures: what makes two failed attempts "the same failure".

A signature is built from the failing assertion and summary lines, normalised so that volatile
text (numbers, hex addresses, UUIDs, temp and workspace paths, line numbers, durations,
timestamps) does not make two identical failures look different. The loop compares signatures to
collapse repeats in the rendering and to notice when it is going round in circles.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

MAX_SIGNATURE_LINES = 4
MAX_SIGNATURE_CHARS = 400

# Order matters: the specific patterns run before the generic number rule eats their digits.
_RULES: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I),
        "<uuid>",
    ),
    (
        re.compile(
            r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
        ),
        "<time>",
    ),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<time>"),
    (re.compile(r"\b0x[0-9a-f]+\b", re.I), "<hex>"),
    # Temp dirs: /tmp/..., /var/folders/..., pytest's tmp_path, Windows %TEMP%.
    (re.compile(r"(?:/private)?/(?:tmp|var/folders|var/tmp)/[^\s:'\",)\]]*"), "<tmp>"),
    (re.compile(r"[A-Za-z]:\\[^\s:'\"]*\\Temp\\[^\s:'\",)\]]*", re.I), "<tmp>"),
    (re.compile(r"\b\d+(?:\.\d+)?\s*(?:ms|s|sec|secs|seconds|minutes|min)\b"), "<duration>"),
    (re.compile(r"\b(?=[0-9a-f]*\d)[0-9a-f]{7,40}\b"), "<hex>"),
    (re.compile(r"(?<=\.py):\d+\b"), ":<line>"),
    (re.compile(r"\bline \d+\b"), "line <line>"),
    # Digits inside identifiers (test_v2) are names, not volatile numbers.
    (re.compile(r"(?<![A-Za-z_])\d+(?:\.\d+)?"), "<n>"),
]


def normalise(text: str, *, workspace: str | Path | None = None) -> str:
    """``text`` with volatile parts replaced by placeholders and whitespace collapsed."""
    if workspace:
        ws = str(workspace).rstrip("/")
        # Resolved and unresolved forms both appear in tracebacks (e.g. /tmp vs /private/tmp).
        for form in {ws, str(Path(ws).resolve())}:
            text = text.replace(form + "/", "").replace(form, "<workspace>")
    for pattern, repl in _RULES:
        text = pattern.sub(repl, text)
    return " ".join(text.split())


_TEST_FAILURE = re.compile(
    r"^(FAILED |ERROR |E\s|\S+Error\b|\S+Exception\b|AssertionError|assert |Traceback)"
)
_NAMED_FAILURE = re.compile(r"^(FAILED|ERROR|FAIL:|--- FAIL:|not ok) ")
_SUMMARY = re.compile(r"\b\d+ (failed|errors?|passed)\b|\bno tests ran\b")


def _pick_lines(lines: Iterable[str]) -> list[str]:
    """The lines that say which test failed and how; pytest's summary line as a last resort.

    Runner summary lines naming the failed test (``FAILED test_x.py::test_y - ...``) come first:
    they are one per failure, while ``E`` detail lines vary with the assertion's repr.
    """
    lines = [ln.rstrip() for ln in lines if ln.strip()]
    named = [ln for ln in lines if _NAMED_FAILURE.match(ln.lstrip())]
    if named:
        return named
    failing = [ln for ln in lines if _TEST_FAILURE.match(ln.lstrip())]
    if failing:
        return failing
    return [ln for ln in lines if _SUMMARY.search(ln)]


def failure_signature(
    failure_lines: Iterable[str] = (),
    *,
    verdict: str = "fail",
    tool_error: str | None = None,
    output: str = "",
    workspace: str | Path | None = None,
) -> str:
    """The normalised signature of a failed attempt ("" for a pass).

    A test failure wins over an incidental tool error: the verifier's failing lines are used
    whenever there are any; the tool error only when the tests said nothing specific.
    """
    if verdict == "pass":
        return ""
    chosen = _pick_lines(failure_lines)
    if not chosen and output:
        chosen = _pick_lines(output.splitlines())
    if chosen:
        seen: list[str] = []
        for line in chosen:
            norm = normalise(line, workspace=workspace)
            if norm not in seen:
                seen.append(norm)
            if len(seen) == MAX_SIGNATURE_LINES:
                break
        return " | ".join(seen)[:MAX_SIGNATURE_CHARS]
    if verdict == "timeout":
        return "timeout"
    if tool_error:
        return ("tool error: " + normalise(tool_error, workspace=workspace))[:MAX_SIGNATURE_CHARS]
    last = [ln for ln in output.splitlines() if ln.strip()]
    if last:
        return (f"{verdict}: " + normalise(last[-1], workspace=workspace))[:MAX_SIGNATURE_CHARS]
    return verdict
