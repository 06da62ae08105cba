"""Run the verify command (e.g. ``pytest -q``) in a workspace and judge the attempt.

The command runs through ``/bin/sh -c`` in its own session (process group) with a timeout; on
timeout the *whole group* is killed, so a test that spawned a child cannot outlive the verdict.
Output goes whole to a log file; the result keeps a bounded copy (head and tail with an
``… N lines omitted …`` marker) and the failing assertion/summary lines.

Verdicts:

- ``pass``: exit 0.
- ``fail``: exit 1 (pytest: tests failed; most tools: check failed), or any other non-zero exit
  whose output holds failing-test lines (``FAILED``, ``E   ...``, ``AssertionError``, ``FAIL:``).
- ``error``: the check could not judge the code: command not found/not executable (126/127),
  killed by a signal, pytest's internal/usage/collection/no-tests exits (2, 3, 4, 5), or any
  other non-zero exit without failing-test lines.
- ``timeout``: still running after ``timeout`` seconds (``exit_code`` is None).
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from reference_loop._process.run import run_contained
from reference_loop._process.sandbox import Sandbox
from reference_loop._process.textsafe import visible
from reference_loop.errors import LoopError

HEAD_LINES = 40
TAIL_LINES = 80
MAX_LINE_CHARS = 2000
MAX_FAILURE_LINES = 40
FALLBACK_FAILURE_LINES = 5

# pytest's documented exit codes that mean "could not run the tests", not "tests failed".
_PYTEST_ERROR_EXITS = {
    2: "interrupted or collection error",
    3: "internal error",
    4: "usage error",
    5: "no tests collected",
}

# Lines that say a test failed, in any common runner (pytest, unittest, go, TAP, node).
_TEST_FAILURE = re.compile(
    r"^(FAILED |FAIL:|FAIL\b|--- FAIL|not ok\b|E\s{2,}\S)"
    r"|AssertionError|AssertError|assertion failed|Assertion failed"
    r"|^\s*\d+ failed\b|^=+ .*\bfailed\b.* in [\d.]+s"
)
# Lines that point at *why* something went wrong, failing test or not.
_ERROR_LINE = re.compile(
    r"^(ERROR\b|ERROR:|error:|Error:|fatal:|panic:)"
    r"|^\S[^:\s]*:\d+: \w*(Error|Exception|Failure)\b"
    r"|\b\w*(Error|Exception): "
    r"|^E\s{2,}\S"
    r"|: (command )?not found$|No such file or directory"
)
_SUMMARY_COUNT = re.compile(r"^(=+ )?(\d+ \w+(, )?)+ in [\d.]+s( \([\d:.]+\))?( =+)?$")
# pytest's closing line: "=== 1 failed, 2 passed, 1 warning in 0.12s ===", "no tests ran in 0.01s"
SUMMARY_LINE = re.compile(
    r"^\s*=*\s*((no tests ran|\d+ \w+)(, \d+ \w+)*) in [\d.]+s( \([\d:.]+\))?\s*=*\s*$"
)
MAX_SUMMARIES = 8
_PYTEST_OUTPUT = re.compile(
    r"test session starts|short test summary info|^(=+ )?(no tests ran|\d+ (passed|failed|errors?)"
    r"\b.* in [\d.]+s)|^ERROR: (usage|file or directory not found)"
    r"|^(INTERNALERROR|ImportError while)"
)


@dataclass
class VerifyResult:
    verdict: str  # "pass" | "fail" | "error" | "timeout"
    exit_code: int | None  # None on timeout; negative: killed by that signal
    output_path: Path | None  # whole output on disk (None if no log_path was given)
    output: str  # bounded: head and tail with "… N lines omitted …"
    failure_lines: list[str] = field(default_factory=list)
    duration: float = 0.0
    command: str = ""
    reason: str = ""  # one line saying why this verdict (e.g. "pytest exit 5: ...")
    left_running: int | None = None  # processes the command left behind (killed)
    containment: str = ""  # how they were contained: pid-namespace, sandbox, shepherd
    # The runner's own summary lines ("2 passed, 1 failed in 0.31s"), last ones kept: the
    # loop compares them with the report.
    summaries: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    def to_dict(self) -> dict:
        return {
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "output_path": str(self.output_path) if self.output_path else None,
            "output": self.output,
            "failure_lines": list(self.failure_lines),
            "duration": round(self.duration, 3),
            "command": self.command,
            "reason": self.reason,
        }


def run_verifier(
    command: str,
    cwd: Path,
    *,
    timeout: float,
    log_path: Path | None = None,
    env: Mapping[str, str] | None = None,
    head_lines: int = HEAD_LINES,
    tail_lines: int = TAIL_LINES,
    sandbox: Sandbox | None = None,
    pass_fds: Sequence[int] = (),
    readable: Sequence[Path] = (),
    started: Callable[[], None] | None = None,
) -> VerifyResult:
    """Run ``command`` in ``cwd`` under ``/bin/sh -c`` and return its verdict.

    The Python running this module is first on PATH, so ``pytest``/``python`` resolve to the
    workspace's interpreter. ``env`` (if given) is added on top of the current environment.
    With ``sandbox`` the command runs inside it, ``cwd`` being the only writable path
    (``readable`` paths shown read-only). ``pass_fds`` are inherited by the command (a report
    descriptor); ``started`` is called once it runs. The command is contained in its own PID
    namespace (``process.run.run_contained``): nothing it starts outlives it.
    """
    if not command.strip():
        raise LoopError("verify command is empty")
    cwd = Path(cwd)
    if not cwd.is_dir():
        raise LoopError(f"verify directory does not exist: {cwd}")
    if timeout <= 0:
        raise LoopError(f"verify timeout must be positive, got {timeout}")
    run_env = dict(os.environ)
    run_env.update(env or {})
    bindir = os.path.dirname(sys.executable)
    run_env["PATH"] = bindir + os.pathsep + run_env.get("PATH", os.defpath)

    keep_log = log_path is not None
    if log_path is not None:
        log_file = Path(log_path)
        log_file.parent.mkdir(parents=True, exist_ok=True)
    else:
        fd, tmp = tempfile.mkstemp(prefix="reference-loop-verify-", suffix=".log")
        os.close(fd)
        log_file = Path(tmp)

    try:
        start = time.monotonic()
        with open(log_file, "wb") as out:
            try:
                argv = ["/bin/sh", "-c", command]
                wrap = (
                    functools.partial(sandbox.wrap, workspace=cwd, readable=readable)
                    if sandbox is not None
                    else None
                )
                done = run_contained(
                    argv,
                    cwd=cwd,
                    env=run_env,
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    timeout=timeout,
                    pass_fds=pass_fds,
                    wrap=wrap,
                    started=started,
                )
                exit_code, timed_out = done.code, done.timed_out
            except OSError as exc:
                raise LoopError(f"cannot start verify command {command!r}: {exc}") from exc
        duration = time.monotonic() - start
        output, matched, last, summaries = _read_bounded(log_file, head_lines, tail_lines)
    finally:
        if not keep_log:
            log_file.unlink(missing_ok=True)

    verdict, reason = _judge(command, exit_code, timed_out, timeout, matched)
    return VerifyResult(
        verdict=verdict,
        exit_code=exit_code,
        output_path=log_file if keep_log else None,
        output=output,
        failure_lines=_failure_lines(verdict, reason, matched, last),
        duration=duration,
        command=command,
        reason=reason,
        left_running=done.left_running,
        containment=done.containment,
        summaries=summaries,
    )


def _failure_lines(verdict: str, reason: str, matched: list[str], last: list[str]) -> list[str]:
    if verdict == "pass":
        return []
    found = extract_failure_lines(matched, last)
    if verdict == "timeout":
        # A hang often prints nothing useful; the timeout itself is the failure to carry forward.
        found.append(f"timeout: {reason}")
    return found


def _read_bounded(path: Path, head: int, tail: int) -> tuple[str, list[str], list[str], list[str]]:
    """(bounded text of the log, lines matching a failure pattern, last lines of output, the
    last pytest summary lines).

    Memory stays bounded for huge logs: only the head, the tail and lines matching the failure
    patterns are kept.
    """
    head_part: list[str] = []
    tail_part: deque[str] = deque(maxlen=max(tail, 0))
    last: deque[str] = deque(maxlen=FALLBACK_FAILURE_LINES)
    interesting: list[str] = []
    summaries: deque[str] = deque(maxlen=MAX_SUMMARIES)
    total = 0
    with open(path, "rb") as fh:
        for raw, skipped in _log_lines(fh):
            # Escape sequences never reach the result: it goes to a terminal and into a prompt.
            line = visible(raw.decode("utf-8", "replace").rstrip("\r\n"))
            if len(line) > MAX_LINE_CHARS or skipped:
                cut = len(line) - MAX_LINE_CHARS + skipped
                line = line[:MAX_LINE_CHARS] + f" … [{cut} chars cut]"
            total += 1
            if line.strip():
                last.append(line.strip())
            if len(head_part) < head:
                head_part.append(line)
            else:
                tail_part.append(line)
            if len(interesting) < 10_000 and any(
                pattern.search(line) for pattern in (_TEST_FAILURE, _ERROR_LINE, _PYTEST_OUTPUT)
            ):
                interesting.append(line)
            if SUMMARY_LINE.match(line):
                summaries.append(line.strip())
    omitted = total - len(head_part) - len(tail_part)
    parts = head_part[:]
    if omitted > 0:
        parts.append(f"… {omitted} lines omitted …")
    parts.extend(tail_part)
    return "\n".join(parts), interesting, list(last), list(summaries)


def _log_lines(fh) -> Iterator[tuple[bytes, int]]:
    """(line, bytes skipped) pairs; a line longer than the read limit (a minified blob, a
    progress bar without newlines) is never held whole in memory: the rest is skipped."""
    limit = MAX_LINE_CHARS * 4  # a UTF-8 character is at most 4 bytes
    while True:
        chunk = fh.readline(limit)
        if not chunk:
            return
        skipped = 0
        if len(chunk) == limit and not chunk.endswith(b"\n"):
            while more := fh.readline(1 << 20):
                skipped += len(more.rstrip(b"\r\n"))
                if more.endswith(b"\n"):
                    break
        yield chunk, skipped


def _is_pytest(command: str, lines: list[str]) -> bool:
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    if any(os.path.basename(w) in ("pytest", "py.test") for w in words[:3]):
        return True
    if "pytest" in words and "-m" in words:
        return True
    return any(_PYTEST_OUTPUT.search(line) for line in lines)


def _judge(
    command: str, exit_code: int | None, timed_out: bool, timeout: float, lines: list[str]
) -> tuple[str, str]:
    if timed_out:
        return "timeout", f"still running after {timeout:g}s; process group killed"
    assert exit_code is not None
    if exit_code == 0:
        return "pass", "exit 0"
    if exit_code < 0:
        return "error", f"killed by signal {-exit_code}"
    if exit_code in (126, 127):
        return "error", f"exit {exit_code}: command not found or not executable"
    if exit_code == 1:
        return "fail", "exit 1"
    if _is_pytest(command, lines) and exit_code in _PYTEST_ERROR_EXITS:
        return "error", f"pytest exit {exit_code}: {_PYTEST_ERROR_EXITS[exit_code]}"
    if any(_TEST_FAILURE.search(line) for line in lines):
        return "fail", f"exit {exit_code} with failing-test lines"
    return "error", f"exit {exit_code} without failing-test lines"


def extract_failure_lines(lines: Sequence[str], last_lines: Sequence[str] = ()) -> list[str]:
    """The lines that say what failed: pytest ``E`` lines and ``FAILED``/``ERROR`` summaries,
    assertion and ``...Error:`` lines; when none match (a tool that is not a test runner), the
    last few non-empty lines of output."""
    seen: set[str] = set()
    found: list[str] = []
    for line in lines:
        text = line.strip()
        if not text or text in seen:
            continue
        if _TEST_FAILURE.search(line) or _ERROR_LINE.search(line):
            # pytest's closing "=== 1 failed in 0.1s ===" is a count, not a cause.
            if _SUMMARY_COUNT.match(text):
                continue
            seen.add(text)
            found.append(text)
            if len(found) >= MAX_FAILURE_LINES:
                break
    return found or list(last_lines)[-FALLBACK_FAILURE_LINES:]
