"""Protected paths: the files an attempt may not change, so it cannot pass by editing the check.

A model that rewrites or deletes the failing test makes the verifier pass without fixing
anything. Every grading harness protects its tests; here a task names its protected paths
(``protect = [...]`` in ``task.toml``), or gets :data:`DEFAULT_PROTECT` plus the files its
``verify`` command names. The loop compares these patterns with the paths the workspace diff says
the attempt changed (never with the attempter's own account of its edit).

Pattern rules (a small gitignore-like subset, on '/'-separated paths relative to the workspace):

- ``name`` without a ``/`` matches a file or directory of that name at any depth
  (``test_*.py``, ``conftest.py``);
- a pattern with a ``/`` at the start or inside is anchored at the workspace root
  (``src/check.sh``, ``/check.sh``);
- a trailing ``/`` means a directory: everything under it is protected (``tests/``).

A path is protected when it, or any directory above it, matches.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import PurePosixPath

from reference_loop.errors import LoopUsageError

DEFAULT_PROTECT: tuple[str, ...] = ("test_*.py", "*_test.py", "tests/", "conftest.py")

# A verify argument names a file when it looks like one: a relative path with a directory part
# or a name.ext.
_FILE_LIKE = re.compile(r"^(?:[\w.-]+/)*[\w-][\w.-]*\.\w+$|^(?:[\w.-]+/)+[\w.-]+/?$")
_RUNNERS = frozenset(
    {"python", "python3", "bash", "sh", "zsh", "node", "ruby", "perl", "pytest", "py.test"}
)
_TEST_RUNNERS = frozenset({"pytest", "py.test"})
_SEPARATORS = frozenset({"&&", "||", ";", "|"})
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")  # VAR=value before a command word


@dataclass(frozen=True)
class ProtectedChange:
    """A changed path that a protection pattern covers."""

    path: str
    pattern: str


def check_patterns(patterns: Iterable[str]) -> tuple[str, ...]:
    """The patterns, cleaned, or a usage error for one that can never match inside a workspace.

    Args:
        patterns: glob patterns as a user or a manifest wrote them.

    Returns:
        The patterns without surrounding blanks or a leading ``./``, in order, deduplicated.
    """
    out: list[str] = []
    for raw in patterns:
        if not isinstance(raw, str) or not raw.strip():
            raise LoopUsageError(f"protected path pattern {raw!r} must be a non-empty string")
        p = raw.strip()
        while p.startswith("./"):
            p = p[2:]
        if ".." in PurePosixPath(p).parts or not p.strip("/"):
            raise LoopUsageError(
                f"protected path pattern {raw!r} must name a path inside the workspace (no '..')"
            )
        if p not in out:
            out.append(p)
    return tuple(out)


def verify_paths(verify: str) -> tuple[str, ...]:
    """The relative files a verify command runs: ``./check.sh``, ``bash ci/check.sh``,
    ``python check.py``, ``pytest tests/test_x.py::test_y``.

    Only a command word or a runner's script or test argument counts; a file the command merely
    reads (``grep VALUE value.py``) is not a file it runs, and may be the one to fix.

    Args:
        verify: the task's verify command, placeholders unexpanded.

    Returns:
        Paths anchored at the workspace root (a leading ``/`` when it has no directory part).
    """
    try:
        words = shlex.split(verify.replace(";", " ; "))
    except ValueError:
        words = verify.split()
    found: list[str] = []

    def add(word: str) -> None:
        path = word.split("::", 1)[0]  # pytest node ids: tests/test_x.py::test_y
        while path.startswith("./"):
            path = path[2:]
        if _FILE_LIKE.match(path) and ".." not in path.split("/"):
            anchored = path if "/" in path.rstrip("/") else "/" + path
            if anchored not in found:
                found.append(anchored)

    state = "command"  # command word | runner (script next) | module | tests | args
    for word in words:
        state, run = _step(state, word)
        if run:
            add(word)
    return tuple(found)


def _step(state: str, word: str) -> tuple[str, bool]:
    """One word of a verify command: the next state, and whether the word is a file it runs."""
    if word in _SEPARATORS:
        return "command", False
    if state == "command":
        if _ASSIGNMENT.match(word):
            return "command", False
        name = word.rsplit("/", 1)[-1]
        if word == "{python}" or name in _RUNNERS:
            return ("tests" if name in _TEST_RUNNERS else "runner"), False
        return "args", "/" in word or bool(_FILE_LIKE.match(word))
    if state == "runner":
        if word == "-m":
            return "module", False
        return ("runner", False) if word.startswith("-") else ("args", True)
    if state == "module":
        return ("tests" if word in _TEST_RUNNERS else "args"), False
    return state, state == "tests" and not word.startswith("-")


def _matches(path: str, pattern: str) -> bool:
    anchored = pattern.startswith("/") or "/" in pattern.rstrip("/")
    dir_only = pattern.endswith("/")
    pat = pattern.strip("/")
    parts = path.strip("/").split("/")
    # Each prefix of the path is a candidate: the path itself, then each directory above it.
    for i in range(len(parts), 0, -1):
        is_dir = i < len(parts)
        if dir_only and not is_dir:
            continue
        candidate = "/".join(parts[:i]) if anchored else parts[i - 1]
        if fnmatchcase(candidate, pat):
            return True
    return False


def is_protected(path: str, patterns: Sequence[str]) -> str | None:
    """The first pattern that protects ``path`` (relative, '/'-separated), or None."""
    return next((p for p in patterns if _matches(path, p)), None)


def protected_changes(paths: Iterable[str], patterns: Sequence[str]) -> list[ProtectedChange]:
    """The changed ``paths`` a pattern covers, in the order given.

    Args:
        paths: every path an attempt changed (for a rename, both its old and new path).
        patterns: the protection patterns.

    Returns:
        One ProtectedChange per protected path.
    """
    out: list[ProtectedChange] = []
    for path in paths:
        pattern = is_protected(path, patterns)
        if pattern is not None:
            out.append(ProtectedChange(path, pattern))
    return out
