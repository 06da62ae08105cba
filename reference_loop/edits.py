"""Find the edit in a model's reply and apply it to a workspace, safely.

A model that cannot touch files itself (the ``llm:`` attempter) answers in text. Three shapes are
understood, tried in this order because the later ones are looser:

1. search/replace blocks (``<<<<<<< SEARCH`` / ``=======`` / ``>>>>>>> REPLACE``, the file path
   on the line before the block);
2. a unified diff (``--- a/x`` / ``+++ b/x`` / ``@@`` hunks; hunk line numbers are only a hint,
   because models get them wrong — the hunk's context is what places it);
3. whole-file replacement: a fenced code block whose path is in the info string
   (```` ```python src/app.py ````) or alone on the line before the fence.

``parse_edit`` is pure; ``apply_edit`` computes every new file in memory first and writes only if
all of them apply, so a bad reply leaves the workspace untouched. No path may leave the workspace:
absolute paths, ``..``, paths into ``.git`` and symlinks that resolve outside are refused.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from reference_loop.errors import LoopError

FORMATS = ("search-replace", "diff", "whole-file")


class EditError(LoopError):
    """The reply holds no usable edit, or it does not apply to the workspace."""


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
    ``diff``, or ``delete``."""

    path: str
    kind: str
    content: str | None = None  # whole-file replacement
    blocks: list[SearchReplace] = field(default_factory=list)  # search-replace
    hunks: list[Hunk] = field(default_factory=list)  # diff
    new_file: bool = False  # diff from /dev/null


@dataclass
class Edit:
    format: str  # one of FORMATS
    files: list[FileEdit]

    @property
    def paths(self) -> list[str]:
        return [f.path for f in self.files]


# ---------------------------------------------------------------------------------------- parse

_FENCE = re.compile(r"^(`{3,}|~{3,})(.*)$")
_SEARCH = re.compile(r"^\s*<{5,9} ?SEARCH\s*$")
_DIVIDER = re.compile(r"^\s*={5,9}\s*$")
_REPLACE = re.compile(r"^\s*>{5,9} ?REPLACE\s*$")
_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@")
_BARE_HUNK = re.compile(r"^@@.*$")


def parse_edit(reply: str) -> Edit:
    """Return the edit a reply describes, or raise EditError saying what was expected."""
    text = reply.replace("\r\n", "\n")
    lines = text.split("\n")
    if any(_SEARCH.match(line) for line in lines):
        return Edit("search-replace", _parse_search_replace(lines))
    if _looks_like_diff(lines):
        return Edit("diff", _parse_diff(lines))
    files = _parse_whole_files(lines)
    if files:
        return Edit("whole-file", files)
    raise EditError(
        "no edit found in the reply: expected search/replace blocks, a unified diff, "
        "or a fenced code block with its file path"
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
    current_path: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if _SEARCH.match(line):
            path = _path_above(lines, i) or current_path
            if path is None:
                raise EditError(f"search/replace block at reply line {i + 1} names no file path")
            search, i = _block_half(lines, i + 1, _DIVIDER, (_SEARCH, _REPLACE), "======= divider")
            replace, i = _block_half(lines, i + 1, _REPLACE, (_SEARCH,), ">>>>>>> REPLACE")
            current_path = path
            if path not in by_path:
                by_path[path] = FileEdit(path, "search-replace")
                order.append(path)
            by_path[path].blocks.append(SearchReplace(_join(search), _join(replace)))
        i += 1
    return [by_path[p] for p in order]


def _block_half(
    lines: list[str], i: int, end: re.Pattern, stray: tuple[re.Pattern, ...], marker: str
) -> tuple[list[str], int]:
    """The lines of one half of a search/replace block, from ``i`` up to the ``end`` marker line,
    and that line's index; a block marker met first means the block is malformed."""
    part: list[str] = []
    while i < len(lines) and not end.match(lines[i]):
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


def _parse_whole_files(lines: list[str]) -> list[FileEdit]:
    files: list[FileEdit] = []
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
        i += 1
        if path is not None:
            files.append(FileEdit(path, "replace", content=_join(body)))
    return files


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
    """Apply ``edit`` under ``root``; return the paths changed. All or nothing."""
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
        planned[target] = (fe.path, _apply_file_edit(fe, current))
    changed: list[str] = []
    for target, (rel, text) in planned.items():
        if text is None:
            if target.exists():
                target.unlink()
                changed.append(rel)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        mode = target.stat().st_mode if target.exists() else None
        tmp = target.with_name(f".{target.name}.edit-tmp")
        tmp.write_bytes(text.encode("utf-8"))
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
        changed.append(rel)
    return changed


def _read_text(target: Path, rel: str) -> str:
    try:
        return target.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise EditError(f"{rel} is not UTF-8 text; it cannot be edited from a text reply") from None


def _apply_file_edit(fe: FileEdit, current: str | None) -> str | None:
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
            text = _replace_once(text, block.search, block.replace, fe.path, n)
        return text
    if fe.kind == "diff":
        if fe.new_file or current is None:
            if current is not None and current.strip():
                raise EditError(f"{fe.path}: the diff creates it but it already exists")
            return "".join(line + "\n" for h in fe.hunks for line in h.new)
        text = current
        for n, hunk in enumerate(fe.hunks, 1):
            text = _apply_hunk(text, hunk, fe.path, n)
        return text
    raise EditError(f"unknown edit kind {fe.kind!r}")  # pragma: no cover - parse never makes one


def _replace_once(text: str, search: str, replace: str, path: str, n: int) -> str:
    count = text.count(search)
    if count == 1:
        return text.replace(search, replace, 1)
    if count > 1:
        raise EditError(f"{path}: SEARCH text of block {n} matches {count} places; make it unique")
    # Models often get trailing whitespace or the final newline wrong: retry line-wise.
    lines = text.split("\n")
    want = search[:-1].split("\n") if search.endswith("\n") else search.split("\n")
    hits = _find_all(lines, want)
    if not hits:
        raise EditError(f"{path}: SEARCH text of block {n} was not found in the file")
    if len(hits) > 1:
        raise EditError(
            f"{path}: SEARCH text of block {n} matches {len(hits)} places; make it unique"
        )
    at = hits[0]
    new = (replace[:-1] if replace.endswith("\n") else replace).split("\n") if replace else []
    return "\n".join(lines[:at] + new + lines[at + len(want) :])


def _apply_hunk(text: str, hunk: Hunk, path: str, n: int) -> str:
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
        at = _find_block(lines, hunk.old, hint)
        if at is None:
            raise EditError(
                f"{path}: hunk {n} does not apply (its context and removed lines "
                "are not in the file)"
            )
        lines[at : at + len(hunk.old)] = hunk.new
    out = "\n".join(lines)
    return out + "\n" if trailing_newline or not text else out


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
