"""Find the edit in a model's reply and apply it to a workspace, safely.

A model that cannot touch files itself (the ``llm:`` attempter) answers in text. Three shapes are
understood, tried in this order because the later ones are looser:

1. search/replace blocks (``<<<<<<< SEARCH`` / ``=======`` / ``>>>>>>> REPLACE``, the file path
   on the line before the block);
2. a unified diff (``--- a/x`` / ``+++ b/x`` / ``@@`` hunks; hunk line numbers are only a hint,
   because models get them wrong — the hunk's context is what places it);
3. whole-file replacement: a fenced code block whose path is in the info string
   (```` ```python src/app.py ````) or alone on the line before the fence.

Given the editable files (``editable_files``), ``parse_edit`` also reads what small models write
instead: a fenced block without a path (the whole file when exactly one file is editable), a block
that defines a Python function or class found in an editable file (it replaces that definition,
located with ``ast``), a search/replace block without its divider that holds such a definition,
and placeholder paths like ``path/to/file.py`` (the one editable file). A reply that repeats an
instructions example is "no edit" (``EchoedExampleError``). Every such reading, and every diff
hunk placed by a whitespace-tolerant or offset match, is said in ``Edit.notes``.

One format is taught per prompt (``edit_instructions``), with a short worked example;
``choose_format("auto", files)`` picks whole files for a small task and search/replace otherwise.

``parse_edit`` is pure; ``apply_edit`` computes every new file in memory first and writes only if
all of them apply, so a bad reply leaves the workspace untouched. No path may leave the workspace:
absolute paths, ``..``, paths into ``.git`` and symlinks that resolve outside are refused.
"""

from __future__ import annotations

import ast
import os
import re
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from reference_loop._verdict.protect import DEFAULT_PROTECT, is_protected
from reference_loop.errors import LoopError, LoopUsageError

FORMATS = ("search-replace", "diff", "whole-file", "definition")  # what a parsed Edit can be
EDIT_FORMATS = ("auto", "whole", "search-replace", "diff")  # what a prompt can teach
# ``auto`` teaches whole files when the editable files are this small: a small model rewrites a
# short file more reliably than it quotes exact lines back.
AUTO_WHOLE_MAX_CHARS = 4000
AUTO_WHOLE_MAX_FILES = 2
# A diff hunk that only matches loosely (whitespace, trimmed context) must lie this close to the
# line its header names; an exact match may be anywhere (models get line numbers wrong).
MAX_FUZZY_OFFSET = 60
MAX_EDITABLE_CHARS = 200_000
_SKIP_DIRS = frozenset(
    {".git", "__pycache__", ".pytest_cache", ".venv", "venv", "node_modules", ".mypy_cache"}
)
_PLACEHOLDER = re.compile(
    r"^(?:path/to/.*|(?:your[_-]?|my[_-]?|the[_-]?)?(?:file|filename|module|script|code)"
    r"(?:[_-]?name)?(?:\.\w+)?|<[^>]+>)$",
    re.I,
)
_NOT_CODE_INFO = frozenset({"bash", "sh", "shell", "console", "text", "output", "diff", "patch"})


class EditError(LoopError):
    """The reply holds no usable edit, or it does not apply to the workspace."""


class EchoedExampleError(EditError):
    """The reply's edit is the instructions' own example, not an edit of this task: no edit."""


@dataclass(frozen=True)
class SearchReplace:
    search: str
    replace: str


@dataclass(frozen=True)
class Hunk:
    old_start: int | None  # 1-based, from the header; a hint only
    old: list[str]  # context + removed lines, without the newline
    new: list[str]  # context + added lines


@dataclass
class FileEdit:
    """What to do to one file. ``kind`` is ``replace`` (whole file), ``search-replace``,
    ``diff``, ``definition`` (replace the Python defs/classes ``content`` defines) or ``delete``.
    ``path`` is "" for a block that named no file (resolved by ``parse_edit`` when it can)."""

    path: str
    kind: str
    content: str | None = None  # whole-file replacement, or the definitions
    blocks: list[SearchReplace] = field(default_factory=list)  # search-replace
    hunks: list[Hunk] = field(default_factory=list)  # diff
    new_file: bool = False  # diff from /dev/null


@dataclass
class Edit:
    format: str  # one of FORMATS
    files: list[FileEdit]
    notes: list[str] = field(default_factory=list)  # loose readings, fuzzy hunks: said, not hidden

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]


# ------------------------------------------------------------------------------- the formats

_GREET = 'def greet(name):\n    return "Hello " + name\n'
_GREET_FIXED = 'def greet(name):\n    return f"Hello, {name}!"\n'

_EXAMPLE_REPLIES = {
    "whole": f"greet.py\n```python\n{_GREET_FIXED}```\n",
    "search-replace": (
        f"greet.py\n<<<<<<< SEARCH\n{_GREET}=======\n{_GREET_FIXED}>>>>>>> REPLACE\n"
    ),
    "diff": (
        "```diff\n--- a/greet.py\n+++ b/greet.py\n@@ -1,2 +1,2 @@\n def greet(name):\n"
        '-    return "Hello " + name\n+    return f"Hello, {name}!"\n```\n'
    ),
}
# Examples earlier prompts taught: a model echoing one of them has made no edit either.
_LEGACY_EXAMPLES = (
    "path/to/file.py\n<<<<<<< SEARCH\nexact lines currently in the file\n=======\n"
    "the lines to put there instead\n>>>>>>> REPLACE\n",
)

_TEACH = {
    "whole": (
        "Reply with the complete new content of each file you change: its path on a line of "
        "its own, then the whole file in one fenced code block. Write every line of the file, "
        "not only the changed ones."
    ),
    "search-replace": (
        "Reply with one SEARCH/REPLACE block per change, each after the file's path: the exact "
        "lines now in the file between <<<<<<< SEARCH and =======, the lines to put there "
        "instead between ======= and >>>>>>> REPLACE."
    ),
    "diff": (
        "Reply with a unified diff in a ```diff fence: --- a/PATH and +++ b/PATH, then @@ "
        "hunks whose lines start with ' ' (unchanged), '-' (removed) or '+' (added)."
    ),
}


def check_edit_format(fmt: str) -> str:
    """``fmt`` if it is one of EDIT_FORMATS, else a usage error."""
    if fmt not in EDIT_FORMATS:
        raise LoopUsageError(
            f"unknown edit format {fmt!r} (expected one of: {', '.join(EDIT_FORMATS)})"
        )
    return fmt


def choose_format(requested: str, editable: Mapping[str, str]) -> str:
    """The format a prompt teaches: ``requested``, or for ``auto`` one picked by task size.

    Args:
        requested: one of EDIT_FORMATS.
        editable: path -> text of the files the model may edit.

    Returns:
        ``whole`` for at most AUTO_WHOLE_MAX_FILES files of AUTO_WHOLE_MAX_CHARS in all,
        else ``search-replace``; a concrete request is returned as it is.
    """
    check_edit_format(requested)
    if requested != "auto":
        return requested
    small = sum(len(t) for t in editable.values()) <= AUTO_WHOLE_MAX_CHARS
    return "whole" if small and 0 < len(editable) <= AUTO_WHOLE_MAX_FILES else "search-replace"


def edit_instructions(fmt: str) -> str:
    """How to answer in format ``fmt`` (not ``auto``), with one short worked example.

    Args:
        fmt: ``whole``, ``search-replace`` or ``diff``.

    Returns:
        The text for the prompt's "How to answer" section.
    """
    if fmt not in _TEACH:
        raise LoopUsageError(f"edit format {fmt!r} has no instructions (choose_format first)")
    return (
        f"{_TEACH[fmt]}\n\nExample: if greet.py held\n\n```python\n{_GREET}```\n\nthis reply "
        f"would change its greeting:\n\n{_EXAMPLE_REPLIES[fmt]}\n"
        "(greet.py is only the example: edit the task's own files, listed below, and only those.)"
    )


def editable_files(
    root: Path, protect: Sequence[str] = DEFAULT_PROTECT, *, max_chars: int = MAX_EDITABLE_CHARS
) -> dict[str, str]:
    """The UTF-8 text files under ``root`` an attempt may edit: not protected, not tool caches.

    Args:
        root: the workspace.
        protect: protected path patterns (``reference_loop.protect`` rules).
        max_chars: stop adding files past this many characters in all.

    Returns:
        Relative '/'-separated path -> text, in path order.
    """
    out: dict[str, str] = {}
    total = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d for d in dirnames if d not in _SKIP_DIRS and not d.endswith(".egg-info")
        )
        for fn in sorted(filenames):
            path = Path(dirpath) / fn
            rel = path.relative_to(root).as_posix()
            if path.is_symlink() or fn.endswith((".pyc", ".pyo")) or is_protected(rel, protect):
                continue
            try:
                text = path.read_bytes().decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if "\x00" in text or total + len(text) > max_chars:
                continue
            total += len(text)
            out[rel] = text
    return out


# ---------------------------------------------------------------------------------------- parse

_FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")
_SEARCH = re.compile(r"^\s*<{5,9} ?SEARCH\s*$")
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9} ?REPLACE\s*$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")
_BARE_HUNK = re.compile(r"^@@.*$")


def parse_edit(reply: str, editable: Mapping[str, str] | None = None) -> Edit:
    """Return the edit a reply describes, or raise EditError saying what was expected.

    Args:
        reply: the model's reply.
        editable: path -> text of the files the model may edit (``editable_files``). Without it
            only explicit paths are understood; with it pathless blocks, definitions and
            placeholder paths are resolved against these files.

    Returns:
        The Edit, with ``notes`` naming every loose reading.
    """
    edit = _parse(reply)
    if editable is not None:
        # A real file of this workspace may look like an example; only elsewhere is it an echo.
        _drop_echoes(edit, editable)
        _resolve(edit, editable)
    unresolved = [f for f in edit.files if not f.path]
    if unresolved and len(unresolved) == len(edit.files):
        raise EditError(_no_path_message(editable))
    if unresolved:
        # Small models surround the fix with test code and commentary blocks: keep what resolved.
        edit.files = [f for f in edit.files if f.path]
        edit.notes.append(
            f"{len(unresolved)} code block(s) naming no file and matching no definition "
            "were left out"
        )
    if {f.kind for f in edit.files} == {"definition"}:
        edit.format = "definition"
    edit.notes = list(dict.fromkeys(edit.notes))  # a block repeated five times is one note
    return edit


_NO_EDIT = (
    "no edit found in the reply: expected search/replace blocks, a unified diff, "
    "or a fenced code block with its file path"
)


def _parse(reply: str) -> Edit:
    text = reply.replace("\r\n", "\n")
    lines = text.split("\n")
    if any(_SEARCH.match(line) for line in lines):
        return Edit("search-replace", _parse_search_replace(lines))
    if _looks_like_diff(lines):
        return Edit("diff", _parse_diff(lines))
    notes: list[str] = []
    files = _parse_whole_files(lines, notes)
    if files:
        return Edit("whole-file", files, notes)
    raise EditError(_NO_EDIT)


def _no_path_message(editable: Mapping[str, str] | None) -> str:
    if not editable or len(editable) == 1:
        return _NO_EDIT  # with one editable file, a block that is not code for it is no edit
    names = ", ".join(sorted(editable)[:8])
    return (
        "the reply's code block names no file path and is not a definition found in one file; "
        f"write the path on the line above it (editable: {names})"
    )


def _clean_path(raw: str) -> str:
    """A path as a model writes it: without a '### ' heading mark, a 'File:' label, quotes,
    backticks, bold markers or a trailing colon."""
    p = re.sub(r"^#+\s*", "", raw.strip())
    p = re.sub(r"^(?:file(?:name)?|path)\s*:\s*", "", p, flags=re.I)
    return p.strip().rstrip(":").strip("`*\"' ").rstrip(":")


def _plausible_path(p: str) -> bool:
    # A path has no spaces and looks like name.ext or dir/name; prose lines are not paths.
    return bool(p) and " " not in p and ("." in p or "/" in p) and len(p) < 260


def _parse_search_replace(lines: list[str]) -> list[FileEdit]:
    by_path: dict[str, FileEdit] = {}
    order: list[str] = []
    loose: list[FileEdit] = []  # dividerless blocks, read as definitions when they are some
    current_path: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if _SEARCH.match(line):
            path = _path_above(lines, i) or current_path or ""
            search, i = _block_half(lines, i + 1, (_DIVIDER, _REPLACE), (_SEARCH,), "=======")
            if _REPLACE.match(lines[i]):
                # No divider: a small model's usual slip. Only a block holding whole Python
                # definitions can still be read (as "replace these definitions").
                loose.append(FileEdit(path, "definition", content=_join(search)))
                i += 1
                continue
            replace, i = _block_half(lines, i + 1, (_REPLACE,), (_SEARCH,), ">>>>>>> REPLACE")
            current_path = path or None
            if path not in by_path:
                by_path[path] = FileEdit(path, "search-replace")
                order.append(path)
            by_path[path].blocks.append(SearchReplace(_join(search), _join(replace)))
        i += 1
    return [by_path[p] for p in order] + loose


def _block_half(
    lines: list[str],
    i: int,
    end: tuple[re.Pattern, ...],
    stray: tuple[re.Pattern, ...],
    marker: str,
) -> tuple[list[str], int]:
    """The lines of one half of a search/replace block, from ``i`` up to an ``end`` marker line,
    and that line's index; a block marker met first means the block is malformed."""
    part: list[str] = []
    while i < len(lines) and not any(e.match(lines[i]) for e in end):
        if any(r.match(lines[i]) for r in stray):
            raise EditError(f"search/replace block at reply line {i + 1} has no {marker}")
        part.append(lines[i])
        i += 1
    if i >= len(lines):
        raise EditError(f"search/replace block is not closed (no {marker})")
    return part, i


def _info_path(info: str) -> str | None:
    """The file path a code fence's info string ends with (```python app.py), if plausible."""
    words = info.split()
    if not words:
        return None
    path = _clean_path(words[-1])
    return path if _plausible_path(path) else None


def _path_above(lines: list[str], i: int) -> str | None:
    """The file path written just above line ``i``: a fence's info string or a line of its own."""
    j = i - 1
    while j >= 0:
        stripped = lines[j].strip()
        fence = _FENCE.match(stripped)
        if fence:
            path = _info_path(fence.group(2))
            if path is not None:
                return path
        elif stripped:
            cand = _clean_path(stripped)
            return cand if _plausible_path(cand) else None
        j -= 1
    return None


def _join(lines: list[str]) -> str:
    return "\n".join(lines) + "\n" if lines else ""


def _looks_like_diff(lines: list[str]) -> bool:
    has_headers = any(_file_header_at(lines, i) for i in range(len(lines)))
    return has_headers and any(line.startswith("@@") for line in lines)


def _file_header_at(lines: list[str], i: int) -> bool:
    """A diff's ``--- old`` / ``+++ new`` header pair starts at line ``i``."""
    return lines[i].startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ ")


def _diff_path(header: str) -> str | None:
    p = header[4:].split("\t")[0].strip()
    if p == "/dev/null":
        return None
    if p.startswith(("a/", "b/")):
        p = p[2:]
    return _clean_path(p)


def _parse_diff(lines: list[str]) -> list[FileEdit]:
    files: list[FileEdit] = []
    i = 0
    while i < len(lines):
        if _file_header_at(lines, i):
            old_path = _diff_path(lines[i])
            new_path = _diff_path(lines[i + 1])
            if old_path is None and new_path is None:
                raise EditError(f"diff at reply line {i + 1} goes from /dev/null to /dev/null")
            i += 2
            hunks: list[Hunk] = []
            while i < len(lines) and _BARE_HUNK.match(lines[i]):
                m = _HUNK.match(lines[i])
                hunk = Hunk(int(m.group(1)) if m else None, [], [])
                i += 1
                while i < len(lines):
                    line = lines[i]
                    if _file_header_at(lines, i):
                        break
                    if line.startswith("@@") or _FENCE.match(line):
                        break
                    if line.startswith("\\"):  # "\ No newline at end of file"
                        i += 1
                        continue
                    if line.startswith("-"):
                        hunk.old.append(line[1:])
                    elif line.startswith("+"):
                        hunk.new.append(line[1:])
                    elif line.startswith(" ") or line == "":
                        # Models often drop the leading space on blank context lines.
                        hunk.old.append(line[1:])
                        hunk.new.append(line[1:])
                    else:
                        break  # prose after the diff
                    i += 1
                _trim_trailing_blank_context(hunk)
                hunks.append(hunk)
            if new_path is None:
                files.append(FileEdit(old_path or "", "delete"))
            else:
                if not hunks:
                    raise EditError(f"diff for {new_path} has no @@ hunks")
                files.append(FileEdit(new_path, "diff", hunks=hunks, new_file=old_path is None))
            continue
        i += 1
    if not files:
        raise EditError("the reply looks like a diff but no file headers (---/+++) were found")
    return files


def _trim_trailing_blank_context(hunk: Hunk) -> None:
    # The blank line that ends a diff inside prose is read as empty context; drop it when it is
    # the last line of both sides, so it does not have to match.
    while (
        hunk.old
        and hunk.new
        and hunk.old[-1] == ""
        and hunk.new[-1] == ""
        and (len(hunk.old) > 1 or len(hunk.new) > 1)
    ):
        hunk.old.pop()
        hunk.new.pop()


def _parse_whole_files(lines: list[str], notes: list[str] | None = None) -> list[FileEdit]:
    files: list[FileEdit] = []
    pathless: list[FileEdit] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i].strip())
        if not m:
            i += 1
            continue
        fence = m.group(1)
        path = _info_path(m.group(2))
        if path is None:
            j = i - 1
            while j >= 0 and not lines[j].strip():
                j -= 1
            if j >= 0:
                cand = _clean_path(lines[j])
                if _plausible_path(cand):
                    path = cand
        body: list[str] = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence[0] * len(fence)):
            body.append(lines[i])
            i += 1
        if i >= len(lines):
            # The reply stops inside this block (cut at max tokens): a half file is no edit.
            if notes is not None:
                notes.append(
                    f"a code block cut off at the end of the reply ({path or 'no path'})"
                    " was left out"
                )
            break
        i += 1
        if path is not None:
            files.append(FileEdit(path, "replace", content=_join(body)))
        elif m.group(2).strip().lower() not in _NOT_CODE_INFO and any(b.strip() for b in body):
            pathless.append(FileEdit("", "replace", content=_join(body)))
    # A block without a path counts only when no block names one (then it is the whole answer).
    return files or pathless


# ------------------------------------------------------------------- echoes and resolution


def _shape(fe: FileEdit) -> tuple:
    """A file edit's content with paths and whitespace left out, to compare with the examples."""

    def norm(text: str | None) -> str:
        return "\n".join(" ".join(ln.split()) for ln in (text or "").splitlines() if ln.strip())

    if fe.kind == "search-replace":
        return ("sr", tuple((norm(b.search), norm(b.replace)) for b in fe.blocks))
    if fe.kind == "diff":
        return ("diff", tuple((norm("\n".join(h.old)), norm("\n".join(h.new))) for h in fe.hunks))
    return ("text", norm(fe.content))


def _example_shapes() -> set[tuple]:
    shapes: set[tuple] = set()
    for reply in (*_EXAMPLE_REPLIES.values(), *_LEGACY_EXAMPLES):
        for fe in _parse(reply).files:
            shapes.add(_shape(fe))
            if fe.kind == "search-replace":  # its halves, echoed as a whole file or definition
                shapes.update(("text", half) for b in _shape(fe)[1] for half in b)
    return shapes


def _drop_echoes(edit: Edit, editable: Mapping[str, str]) -> None:
    """Leave out every file edit that is an instructions example aimed outside the task's
    files (a model often echoes the whole prompt); nothing left means no edit at all."""
    shapes = _example_shapes()
    echoed = [fe for fe in edit.files if fe.path not in editable and _shape(fe) in shapes]
    if not echoed:
        return
    names = ", ".join(dict.fromkeys(fe.path or "no path" for fe in echoed))
    if len(echoed) == len(edit.files):
        raise EchoedExampleError(
            f"no edit: the reply repeats the example from the instructions ({names}), "
            "not a change to the task's files"
        )
    edit.files = [fe for fe in edit.files if all(fe is not e for e in echoed)]
    edit.notes.append(f"the instructions' example ({names}) was left out")


def _resolve(edit: Edit, editable: Mapping[str, str]) -> None:
    """Give every file edit a real path (or leave "" when none fits), noting each guess."""
    for fe in edit.files:
        if fe.kind == "delete":
            continue
        if fe.path and fe.path not in editable and _PLACEHOLDER.match(fe.path):
            target = _placeholder_target(fe, editable)
            if target is not None:
                edit.notes.append(f"placeholder path {fe.path} read as {target}")
                fe.path = target
        if fe.kind in ("replace", "definition") and (not fe.path or fe.kind == "definition"):
            _resolve_block(edit, fe, editable)


def _placeholder_target(fe: FileEdit, editable: Mapping[str, str]) -> str | None:
    """The file a placeholder path stands for: the one editable file, or the one file that holds
    every SEARCH text of its blocks."""
    if len(editable) == 1:
        return next(iter(editable))
    if fe.kind == "search-replace":
        holders = [p for p, t in editable.items() if all(b.search.strip() in t for b in fe.blocks)]
        if len(holders) == 1:
            return holders[0]
    return None


def _resolve_block(edit: Edit, fe: FileEdit, editable: Mapping[str, str]) -> None:
    """A code block without a (real) path, or a dividerless SEARCH block: the definitions it
    replaces, else the whole of the one editable file."""
    names = _top_level_defs(fe.content or "")
    if names:
        where = [fe.path] if fe.path in editable else sorted(editable)
        holders = [p for p in where if p.endswith(".py") and _all_defined(names, editable[p])]
        if len(holders) == 1:
            fe.path, fe.kind = holders[0], "definition"
            edit.notes.append(
                f"code block read as a new version of {', '.join(names)} in {fe.path}"
            )
            return
    if fe.kind == "replace" and not fe.path and len(editable) == 1:
        (path,) = editable
        if path.endswith(".py") and not _could_be_the_file(fe.content or "", editable[path]):
            return  # a command, prose or a fragment: not a new version of the file
        fe.path = path
        edit.notes.append(f"code block without a path read as the whole of {path}")
        return
    if fe.kind == "definition":
        raise EditError(
            "search/replace block has no ======= divider (put the lines to find above it and "
            "their replacement below it)"
        )


def _could_be_the_file(code: str, current: str) -> bool:
    """A pathless block stands for a Python file when it parses and defines one of the names the
    file defines (or the file defines none and the block is more than one line)."""
    try:
        new = {n.name for n in ast.parse(code).body if isinstance(n, _DEFS)}
        old = {n.name for n in ast.parse(current).body if isinstance(n, _DEFS)}
    except (SyntaxError, ValueError):
        return False
    return bool(new & old) if old else code.count("\n") > 1


def _top_level_defs(code: str) -> list[str]:
    """The names a block defines when it is nothing but (decorated) functions and classes."""
    try:
        tree = ast.parse(textwrap.dedent(code))
    except (SyntaxError, ValueError):
        return []
    body = tree.body
    if not body or not all(isinstance(n, _DEFS) for n in body):
        return []
    return [n.name for n in body]  # type: ignore[attr-defined]


_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _definitions(text: str) -> dict[str, list[ast.AST]]:
    """Every function and class in ``text`` (at any depth), by name."""
    found: dict[str, list[ast.AST]] = {}
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, _DEFS):
            found.setdefault(node.name, []).append(node)
    return found


def _all_defined(names: list[str], text: str) -> bool:
    try:
        defs = _definitions(text)
    except (SyntaxError, ValueError):
        return False
    return all(len(defs.get(n, [])) == 1 for n in names)


def _replace_definitions(text: str, block: str, path: str) -> str:
    """``text`` with each definition in ``block`` put in place of the one of the same name,
    re-indented to where that one sits (a method shown flush left goes back into its class)."""
    try:
        new_tree = ast.parse(textwrap.dedent(block))
    except SyntaxError as exc:
        raise EditError(f"{path}: the new definition does not parse: {exc.msg}") from None
    block_lines = textwrap.dedent(block).splitlines()
    lines = text.splitlines()
    spans: list[tuple[int, int, list[str]]] = []
    for node in new_tree.body:
        assert isinstance(node, _DEFS)
        try:
            olds = _definitions("\n".join(lines)).get(node.name, [])
        except SyntaxError as exc:
            raise EditError(f"{path}: the file does not parse: {exc.msg}") from None
        if len(olds) != 1:
            raise EditError(f"{path}: {len(olds)} definitions named {node.name!r}; need exactly 1")
        old = olds[0]
        assert isinstance(old, _DEFS)
        start = min([old.lineno, *(d.lineno for d in old.decorator_list)]) - 1
        new_start = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
        new = block_lines[new_start : node.end_lineno]
        indent = " " * old.col_offset
        spans.append(
            (start, old.end_lineno or start + 1, [indent + ln if ln else ln for ln in new])
        )
    for start, end, new in sorted(spans, reverse=True):
        lines[start:end] = new
    return "\n".join(lines) + ("\n" if text.endswith("\n") or not text else "")


# ---------------------------------------------------------------------------------------- apply


def safe_path(root: Path, rel: str) -> Path:
    """The file ``rel`` inside ``root``, or EditError if it would be outside (or in .git)."""
    if not rel or "\x00" in rel:
        raise EditError(f"refusing empty or invalid path {rel!r}")
    pure = PurePosixPath(rel.replace("\\", "/"))
    if pure.is_absolute() or re.match(r"^[A-Za-z]:", rel):
        raise EditError(f"refusing absolute path {rel!r}: edits must stay inside the workspace")
    if ".." in pure.parts:
        raise EditError(f"refusing path {rel!r}: '..' would leave the workspace")
    if pure.parts and pure.parts[0] == ".git":
        raise EditError(f"refusing path {rel!r}: the .git directory is not part of the workspace")
    root_resolved = root.resolve()
    target = root_resolved.joinpath(*pure.parts)
    # resolve() follows every symlink on the way, including a symlinked final file.
    resolved = target.resolve()
    if resolved != root_resolved and root_resolved not in resolved.parents:
        raise EditError(f"refusing path {rel!r}: it resolves outside the workspace (symlink)")
    return target


def apply_edit(edit: Edit, root: Path) -> list[str]:
    """Apply ``edit`` under ``root``; return the paths it changed (a file the edit leaves as it
    was is not written and not listed). All or nothing."""
    root = Path(root)
    # target -> (rel path, new text, or None to delete)
    planned: dict[Path, tuple[str, str | None]] = {}
    for fe in edit.files:
        target = safe_path(root, fe.path)
        prior = planned.get(target)
        if prior is not None:
            current = prior[1]
        elif target.is_file():
            current = _read_text(target, fe.path)
        elif target.exists():
            raise EditError(f"{fe.path} is not a regular file")
        else:
            current = None
        planned[target] = (fe.path, _apply_file_edit(fe, current, edit.notes))
    changed: list[str] = []
    for target, (rel, text) in planned.items():
        if text is None:
            if target.exists():
                target.unlink()
                changed.append(rel)
            continue
        if target.is_file() and _same_code(rel, target.read_bytes(), text, edit.notes):
            continue  # the edit leaves this file as it was: not a change
        target.parent.mkdir(parents=True, exist_ok=True)
        mode = target.stat().st_mode if target.exists() else None
        tmp = target.with_name(f".{target.name}.edit-tmp")
        tmp.write_bytes(text.encode("utf-8"))
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
        changed.append(rel)
    return changed


def _same_code(rel: str, current: bytes, new: str, notes: list[str]) -> bool:
    """Whether writing ``new`` would change nothing that runs: the same bytes, or for Python the
    same syntax tree (a model writing back the file it was shown with other blank lines)."""
    if current == new.encode("utf-8"):
        return True
    if not rel.endswith(".py"):
        return False
    try:
        same = ast.dump(ast.parse(current)) == ast.dump(ast.parse(new))
    except (SyntaxError, ValueError):
        return False
    if same:
        notes.append(f"{rel} differs only in layout or comments: left as it was")
    return same


def _read_text(target: Path, rel: str) -> str:
    try:
        return target.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise EditError(f"{rel} is not UTF-8 text; it cannot be edited from a text reply") from None


def _apply_file_edit(fe: FileEdit, current: str | None, notes: list[str]) -> str | None:
    if fe.kind == "definition":
        if current is None:
            raise EditError(f"{fe.path}: no such file (its definitions were to be replaced)")
        return _replace_definitions(current, fe.content or "", fe.path)
    if fe.kind == "delete":
        if current is None:
            raise EditError(f"cannot delete {fe.path}: no such file")
        return None
    if fe.kind == "replace":
        return fe.content or ""
    if fe.kind == "search-replace":
        text = current
        for n, block in enumerate(fe.blocks, 1):
            if text is None:
                if block.search.strip():
                    raise EditError(f"{fe.path}: no such file (block {n} searches in it)")
                text = block.replace
                continue
            if not block.search.strip():
                # An empty SEARCH on an existing file could mean "prepend" or "replace": refuse.
                raise EditError(f"{fe.path}: block {n} has an empty SEARCH but the file exists")
            text = _replace_once(text, block.search, block.replace, fe.path, n, notes)
        return text
    if fe.kind == "diff":
        if fe.new_file or current is None:
            if current is not None and current.strip():
                raise EditError(f"{fe.path}: the diff creates it but it already exists")
            return "".join(line + "\n" for h in fe.hunks for line in h.new)
        text = current
        for n, hunk in enumerate(fe.hunks, 1):
            text = _apply_hunk(text, hunk, fe.path, n, notes)
        return text
    raise EditError(f"unknown edit kind {fe.kind!r}")  # pragma: no cover - parse never makes one


def _replace_once(text: str, search: str, replace: str, path: str, n: int, notes: list[str]) -> str:
    count = text.count(search)
    if count == 1:
        return text.replace(search, replace, 1)
    if count > 1:
        raise EditError(f"{path}: SEARCH text of block {n} matches {count} places; make it unique")
    # Models often get trailing whitespace or the final newline wrong: retry line-wise.
    lines = text.split("\n")
    want = search[:-1].split("\n") if search.endswith("\n") else search.split("\n")
    new = (replace[:-1] if replace.endswith("\n") else replace).split("\n") if replace else []
    hits = _find_all(lines, want)
    if not hits and any(w.strip() for w in want):
        # Small models re-indent what they quote: match ignoring whitespace, once only.
        squashed = [_squash(w) for w in want]
        hits = [
            k
            for k in range(len(lines) - len(want) + 1)
            if [_squash(s) for s in lines[k : k + len(want)]] == squashed
        ]
        if len(hits) == 1:
            notes.append(f"{path}: SEARCH of block {n} matched ignoring whitespace")
            found = lines[hits[0] : hits[0] + len(want)]
            new = _reindent(want, new, found)
    if not hits:
        raise EditError(f"{path}: SEARCH text of block {n} was not found in the file")
    if len(hits) > 1:
        raise EditError(
            f"{path}: SEARCH text of block {n} matches {len(hits)} places; make it unique"
        )
    at = hits[0]
    return "\n".join(lines[:at] + new + lines[at + len(want) :])


def _apply_hunk(text: str, hunk: Hunk, path: str, n: int, notes: list[str]) -> str:
    lines = text.split("\n")
    trailing_newline = text.endswith("\n")
    if trailing_newline:
        lines = lines[:-1]
    if not hunk.old:
        # Pure insertion with no context: place it at the stated line (or the end).
        at = min(max((hunk.old_start or len(lines) + 1) - 1, 0), len(lines))
        if hunk.old_start == 0:
            at = 0
        lines[at:at] = hunk.new
    else:
        hint = (hunk.old_start - 1) if hunk.old_start else None
        exact = _find_block(lines, hunk.old, hint)
        if exact is not None:
            lines[exact : exact + len(hunk.old)] = hunk.new
        else:
            fuzzy = _find_fuzzy(lines, hunk, hint)
            if fuzzy is None:
                raise EditError(
                    f"{path}: hunk {n} does not apply (its context and removed lines "
                    "are not in the file, even ignoring whitespace)"
                )
            at, old_len, new, how = fuzzy
            offset = f", {at - hint:+d} lines from its header" if hint is not None else ""
            notes.append(f"{path}: hunk {n} applied fuzzily ({how}{offset})")
            lines[at : at + old_len] = new
    out = "\n".join(lines)
    return out + "\n" if trailing_newline or not text else out


def _squash(line: str) -> str:
    return " ".join(line.split())


def _find_fuzzy(
    lines: list[str], hunk: Hunk, hint: int | None
) -> tuple[int, int, list[str], str] | None:
    """Place a hunk whose lines match only loosely: ignoring whitespace, then with up to two
    unchanged context lines dropped from either end, never farther than MAX_FUZZY_OFFSET lines
    from the header's line. Returns (where, old length, new lines, how it matched)."""
    squashed = [_squash(s) for s in lines]
    lead = _common_prefix(hunk.old, hunk.new)
    trail = _common_prefix(hunk.old[lead:][::-1], hunk.new[lead:][::-1])
    for fuzz in range(3):
        a, b = min(fuzz, lead), min(fuzz, trail)
        old = hunk.old[a : len(hunk.old) - b]
        new = hunk.new[a : len(hunk.new) - b]
        if not old or not any(s.strip() for s in old):
            break
        want = [_squash(s) for s in old]
        hits = [
            k
            for k in range(len(lines) - len(old) + 1)
            if squashed[k : k + len(old)] == want
            and (hint is None or abs(k - hint) <= MAX_FUZZY_OFFSET)
        ]
        if len(hits) == 1 or (hits and hint is not None):
            at = min(hits, key=lambda k: abs(k - hint)) if hint is not None else hits[0]
            how = "ignoring whitespace" + (f", {a + b} context line(s) dropped" if a + b else "")
            return at, len(old), _reindent(old, new, lines[at : at + len(old)]), how
    return None


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _reindent(old: list[str], new: list[str], found: list[str]) -> list[str]:
    """The hunk's new lines in the file's own indentation: unchanged lines are taken from the
    file, added ones re-indented by the ratio the matched lines show (2 spaces -> 4)."""
    pairs = [(_indent(h), _indent(f)) for h, f in zip(old, found, strict=True) if h.strip()]
    scaled = next(((f / h, 0) for h, f in pairs if h), None)
    ratio, shift = scaled if scaled else (1.0, pairs[0][1] - pairs[0][0] if pairs else 0)
    out: list[str] = []
    j = 0
    for line in new:
        same = next((k for k in range(j, len(old)) if old[k] == line), None)
        if same is not None:
            out.append(found[same])
            j = same + 1
        elif line.strip():
            out.append(" " * max(0, round(_indent(line) * ratio) + shift) + line.lstrip())
        else:
            out.append(line)
    return out


def _common_prefix(a: list[str], b: list[str]) -> int:
    n = 0
    while n < len(a) and n < len(b) and a[n] == b[n]:
        n += 1
    return n


def _find_all(lines: list[str], want: list[str]) -> list[int]:
    """Every index where ``want`` occurs in ``lines``: exact matches if any, else matches that
    ignore trailing whitespace (models often get it wrong)."""
    for norm in (lambda s: s, lambda s: s.rstrip()):
        target = [norm(s) for s in want]
        hits = [
            k
            for k in range(len(lines) - len(want) + 1)
            if [norm(s) for s in lines[k : k + len(want)]] == target
        ]
        if hits:
            return hits
    return []


def _find_block(lines: list[str], want: list[str], hint: int | None) -> int | None:
    """Where a hunk goes: the occurrence of its old lines nearest the header's line number."""
    hits = _find_all(lines, want)
    if not hits:
        return None
    return min(hits, key=lambda k: abs(k - hint)) if hint is not None else hits[0]
