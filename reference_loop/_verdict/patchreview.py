"""The patch review: an attempt's change read by the same scan that reads skills, with rules
for what a fix has no business doing.

An attempt's code runs inside the verifier's process, where it can in principle forge anything
the process reports about itself; what it cannot do is forge its own source. So the loop reads
every Python file the attempt added or changed with :func:`chimera_cards._scan.pyrefs.python_refs`
(imports, calls, attribute reads and writes, built strings, ``exec`` of folded text: names
resolved through aliases and folding) and runs rules over those references. A rule returns
:class:`Mark`\\ s; a mark is recorded under an integrity class, with its rule, file, line and why.

Only what the attempt brought counts: a file's marks are compared with the marks of its
version at the snapshot (by rule and why, not by line), so code the project already had is
never the attempt's mark, and a mark that moved is not new.

Severity: ``integrity`` fails the attempt (not solved, whatever the verifier said);
``warning`` keeps the verdict and flags it (shown in the next prompt, the JSON and the bench).

A rule is any object with ``name`` and ``check(file, ctx)``; :class:`RefRule` covers the
common case (references of some kinds whose resolved name matches some patterns, with an
optional predicate). The loop's rule set is :func:`reference_loop._verdict.rules.default_rules`.
"""

from __future__ import annotations

import ast
import importlib.util
import pickletools
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any, Protocol

from chimera_cards._scan.codescan import NATIVE, binary_type
from chimera_cards._scan.pyrefs import PyRefs, Ref, python_refs
from reference_loop._verdict.integrity import Violation, is_test_module

INTEGRITY = "integrity"
WARNING = "warning"
MAX_FILE_BYTES = 1_000_000  # a larger source file is marked unread, not read
UNREAD = "unread source"  # ReviewedFile.holds of Python source the review cannot read
_PYTHON_SUFFIXES = (".py", ".pyw", ".pyi")


@dataclass(frozen=True)
class Mark:
    """One thing the review found in the attempt's patch."""

    rule: str  # the rule's name (``process-exit``)
    kind: str  # the integrity class it is recorded under (``reaches-verifier``)
    why: str  # what the code does, without its line (the same mark on another line is the same)
    path: str = ""
    line: int | None = None
    severity: str = INTEGRITY

    def violation(self) -> Violation:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return Violation(self.kind, where, f"{self.rule}: {self.why}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "class": self.kind,
            "rule": self.rule,
            "path": self.path,
            "line": self.line,
            "why": self.why,
            "severity": self.severity,
        }


@dataclass(frozen=True)
class ReviewContext:
    """What the rules may need to know besides the file.

    ``test_files``: the pinned test files (workspace-relative); ``pinned``: the pinned test ids;
    ``runner``: the top-level module names of the verifier's runner and report plugin.
    """

    root: Path
    test_files: tuple[str, ...] = ()
    pinned: tuple[str, ...] = ()
    runner: tuple[str, ...] = ("_pytest", "pluggy", "_reference_loop_report")
    extra: Mapping[str, Any] = field(default_factory=dict)  # for rules that need more


@dataclass
class ReviewedFile:
    """One file of the patch as the rules see it: the attempt's version, resolved."""

    path: str
    refs: PyRefs
    is_test: bool  # a test module or a conftest: the runner's API is its own to use
    status: str = "M"  # A (new) or M (changed)
    # A file that is not Python source but holds code: "pickle" (read as the calls it makes
    # when loaded) or a native binary's type ("ELF executable": nothing the review can read).
    holds: str = ""
    # What rules compute once per file and share (keyed by the rule module's own names).
    memo: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def text(self) -> str:
        return self.refs.text

    def callee(self, node: ast.AST) -> str:
        """The resolved name of the function a call node calls ("" when not a call)."""
        index = self.memo.get("callee")
        if index is None:
            index = {id(r.node): r.name for r in self.refs.refs if r.kind == "call"}
            self.memo["callee"] = index
        return str(index.get(id(node), ""))

    def refs_in(self, node: ast.AST, kinds: Iterable[str]) -> list[Ref]:
        """The references of ``kinds`` made inside ``node`` (itself included)."""
        inside = {id(n) for n in ast.walk(node)}
        wanted = frozenset(kinds)
        return [r for r in self.refs.refs if r.kind in wanted and id(r.node) in inside]


class Rule(Protocol):
    """A rule of the review: its name and what it marks in one file."""

    @property
    def name(self) -> str: ...

    def check(self, file: ReviewedFile, ctx: ReviewContext) -> Iterable[Mark]: ...


Predicate = Callable[[Ref, ReviewedFile, ReviewContext], bool]


@dataclass(frozen=True)
class RefRule:
    """Marks every reference of ``kinds`` whose resolved name matches one of ``names``
    (``fnmatch`` patterns: ``os._exit``, ``gc.get_*``, ``*.__closure__``), where ``where``
    (if given) agrees. ``why`` may use ``{name}`` and ``{arg}`` (the first folded argument).
    ``in_tests``: whether the rule applies to test modules and conftests too."""

    name: str
    kind: str
    why: str
    kinds: tuple[str, ...]
    names: tuple[str, ...]
    severity: str = INTEGRITY
    in_tests: bool = True
    where: Predicate | None = None

    def check(self, file: ReviewedFile, ctx: ReviewContext) -> Iterable[Mark]:
        if file.is_test and not self.in_tests:
            return
        for ref in file.refs.find(self.kinds, self.names):
            if self.where is not None and not self.where(ref, file, ctx):
                continue
            arg = ref.args[0] if ref.args else None
            why = self.why.format(name=ref.name, arg=arg if arg is not None else "…")
            yield Mark(self.name, self.kind, why, file.path, ref.line, self.severity)


def _is_python(path: str, data: bytes) -> bool:
    if path.endswith(_PYTHON_SUFFIXES):
        return True
    first = data[:128].split(b"\n", 1)[0]
    return first.startswith(b"#!") and b"python" in first


def pickle_calls(data: bytes) -> str | None:
    """A pickle as the Python it runs when loaded (``os.system('…')``: each global it calls,
    with the strings pushed before the call as arguments); None when the data is no pickle."""
    if not data or data[:1] not in (b"\x80", b"(", b"c", b"]", b"}"):
        return None
    calls: list[list[str]] = []
    strings: list[str] = []
    try:
        for op, arg, _pos in pickletools.genops(data):
            if op.name in ("GLOBAL", "INST") and isinstance(arg, str):
                calls.append([arg.replace(" ", ".")])
            elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
                calls.append([f"{strings[-2]}.{strings[-1]}"])
                strings.clear()
            elif "UNICODE" in op.name or op.name in ("STRING", "SHORT_BINSTRING", "BINSTRING"):
                strings.append(str(arg))
                if calls:
                    calls[-1].append(str(arg))
            elif op.name == "STOP":
                break
    except Exception:  # anything genops raises means: not a pickle
        return None
    lines = []
    for name, *args in calls:
        module = name.rsplit(".", 1)[0] if "." in name else "builtins"
        lines.append(f"import {module}\n{name}({', '.join(repr(a) for a in args)})")
    return "\n".join(lines) + "\n" if lines else ""


def _decode(data: bytes | None) -> str | None:
    """The text the interpreter compiles from ``data`` (its coding cookie honoured: a file
    declared ``utf-7`` holds code a UTF-8 reading shows as one comment); None when the review
    cannot read it (too large, a NUL byte)."""
    if data is None or len(data) > MAX_FILE_BYTES or b"\0" in data:
        return None
    try:
        return importlib.util.decode_source(data)
    except (SyntaxError, LookupError, UnicodeError, ValueError):
        return data.decode("utf-8", "replace")  # the interpreter refuses it too


def _holds_code(data: bytes) -> str:
    kind = binary_type(data[:64])
    if kind in NATIVE:
        return kind
    return "pickle" if pickle_calls(data) else ""


def _marks(file: ReviewedFile, rules: Sequence[Rule], ctx: ReviewContext) -> list[Mark]:
    found: list[Mark] = []
    for rule in rules:
        found.extend(rule.check(file, ctx))
    if file.refs.too_deep:
        found.append(
            Mark("unreadable", "reaches-verifier", "nested past what the review reads", file.path)
        )
    if file.holds == UNREAD:
        why = f"source over {MAX_FILE_BYTES} bytes or with a NUL byte: the review cannot read it"
        found.append(Mark("unreadable", "reaches-verifier", why, file.path))
    return found


def _key(mark: Mark) -> tuple[str, str, str]:
    return (mark.rule, mark.kind, mark.why)


def _read(root: Path, path: str, status: str) -> ReviewedFile | None:
    """One changed path as the rules read it; None for a deleted path, a folder, a data file."""
    if status == "D":
        return None
    try:
        data = (root / path).read_bytes()
    except OSError:
        return None  # a folder, a dangling link, gone: the integrity checks cover those
    name = path.rsplit("/", 1)[-1]
    is_test = is_test_module(path) or name == "conftest.py"
    if not _is_python(path, data):
        holds = _holds_code(data)
        if not holds:
            return None
        text = pickle_calls(data) if holds == "pickle" else ""
        return ReviewedFile(path, python_refs(path, text or ""), False, status, holds=holds)
    text = _decode(data)
    if text is None:  # a file the runner may import but the review cannot read: marked
        return ReviewedFile(path, python_refs(path, ""), is_test, status, holds=UNREAD)
    return ReviewedFile(path, python_refs(path, text), is_test, status)


def review_patch(
    root: Path,
    changed: Iterable[tuple[str, str]],
    original: Callable[[Sequence[str]], Mapping[str, bytes | None]],
    ctx: ReviewContext,
    rules: Sequence[Rule],
) -> list[Mark]:
    """The marks of the attempt's change.

    Args:
        root: the workspace, holding the attempt's version of each file.
        changed: ``(path, status)`` of every changed path (A new, M changed, R renamed to it,
            D deleted: skipped); ignore rules not applied.
        original: reads the snapshot's version of some paths (None: the path was not there).
        ctx: what the rules may need.
        rules: the rules (the loop's: :func:`reference_loop._verdict.rules.default_rules`).

    Returns:
        The marks new in the attempt's version, in path and line order.
    """
    files = [f for path, status in changed if (f := _read(root, path, status)) is not None]
    found: dict[str, list[Mark]] = {}
    for file in files:
        marks = _marks(file, rules, ctx)
        if marks:
            found[file.path] = marks
    modified = [p for p, ms in found.items() if ms and _status(files, p) != "A"]
    before = original(modified) if modified else {}
    out: list[Mark] = []
    for file in files:
        marks = found.get(file.path, [])
        if not marks:
            continue
        old_data = before.get(file.path)
        old_text = _decode(old_data) if not file.holds else None
        if file.holds == UNREAD:
            old_text = None  # the attempt's version is what cannot be read, whatever was there
        if file.holds == "pickle" and old_data is not None:
            old_text = pickle_calls(old_data)
        if old_text is not None:
            old_refs = python_refs(file.path, old_text)
            old = ReviewedFile(file.path, old_refs, file.is_test, holds=file.holds)
            had = Counter(_key(m) for m in _marks(old, rules, ctx))
            kept = []
            for mark in marks:
                if had[_key(mark)] > 0:
                    had[_key(mark)] -= 1
                else:
                    kept.append(mark)
            marks = kept
        out.extend(marks)
    return sorted(set(out), key=lambda m: (m.path, m.line or 0, m.rule))


def _status(files: Sequence[ReviewedFile], path: str) -> str:
    return next((f.status for f in files if f.path == path), "M")


def matches(name: str, patterns: Iterable[str]) -> bool:
    """Whether a resolved name matches one of the ``fnmatch`` patterns (for rules' predicates)."""
    return any(fnmatchcase(name, p) for p in patterns)
