"""A skill bundle: every regular file of a skill's folder, its canonical manifest and digest.

A skill is a folder (``SKILL.md`` plus scripts, references, assets, a licence): everything in it
is something the agent reads or runs, so the whole folder is what gets hashed, stored, reviewed,
signed and exported. A card without extra files is a one-file bundle.

The **manifest** lists each file as one line ``MODE SIZE SHA256 PATH\\n`` (``MODE`` is ``755``
for an executable file, else ``644``; ``SIZE`` decimal bytes; ``SHA256`` lowercase hex; ``PATH``
the relative POSIX path, UTF-8), lines sorted by the path's UTF-8 bytes. The **bundle digest** is
the SHA-256 (hex) of the manifest bytes. docs/bundles.md has the exact bytes and a stand-alone
script that recomputes it.

Reading a folder refuses, before anything is stored, whatever could make the bytes on disk differ
from what was reviewed or escape the folder: symlinks leading out of the skill (or to a folder,
another link, nothing), hard links, devices/FIFOs/sockets,
absolute or ``..`` paths, names that are not UTF-8 or hold control characters or backslashes,
names that differ only by case (they collapse on macOS/Windows), more than ``MAX_FILES`` files,
more than ``MAX_TOTAL_BYTES`` in total or ``MAX_FILE_BYTES`` in one file, nesting deeper than
``MAX_DEPTH``. VCS metadata and OS litter (``IGNORED_NAMES``, any depth) and the signature
sidecar at the top (``SIDECAR_FILES``) are left out by rule; nothing else is.

A symlink to a regular file of the same skill (``CLAUDE.md -> AGENTS.md``, as published skills
ship) is stored as a copy of that file, and the bundle lists it in ``links`` (the scan reports
it): the bytes an agent reads through the link are the target's, which are in the bundle and
reviewed, and an installed copy holds a regular file with those bytes, so nothing on disk can
differ from what was reviewed.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from types import MappingProxyType

# The limits are folderscan's: it hashes installed folders before this module is loaded, and
# stops where a bundle could not go on.
from chimera_cards._bundles.folderscan import (
    IGNORED_NAMES,
    MAX_DEPTH,
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_TOTAL_BYTES,
    SIDECAR_FILES,
    SKILL_FILE,
)
from chimera_cards._bundles.manifest import BundleFile, bundle_digest, manifest_bytes
from chimera_cards.errors import ChimeraError

# SKILL_FILE, IGNORED_NAMES (version-control metadata and OS litter, left out at any depth) and
# SIDECAR_FILES (approvals.jsonl and install's receipt, left out at the top) are folderscan's:
# check hashes installed folders with them before it loads this module.

# A backslash, a control character, or a lone surrogate (how Python spells undecodable bytes).
_BAD_PATH_CHAR = re.compile("[\\\\\x00-\x1f\x7f\ud800-\udfff]")


class BundleError(ChimeraError):
    """A skill folder or archive that cannot be taken as a bundle (refused, nothing stored)."""


class UnsafePathError(BundleError):
    """A path that is absolute, climbs out with ``..``, is not UTF-8, holds control characters
    or a backslash, clashes with another by case only, or is nested deeper than ``MAX_DEPTH``."""


class LinkError(BundleError):
    """A symlink or hard link inside a skill folder or archive."""


class SpecialFileError(BundleError):
    """A device, FIFO or socket inside a skill folder (or such an archive entry)."""


class BundleLimitError(BundleError):
    """Too many files, too many bytes, one file too large, or an archive that inflates absurdly."""


class MissingSkillError(BundleError):
    """The folder has no ``SKILL.md`` at its top."""


@dataclass(frozen=True)
class Bundle:
    """Every file of a skill: the manifest entries and their exact bytes."""

    files: tuple[BundleFile, ...]  # sorted by path bytes
    contents: Mapping[str, bytes] = field(repr=False, compare=False, hash=False)
    # (path, target path) of each symlink of the source stored as a copy of its target
    links: tuple[tuple[str, str], ...] = field(default=(), compare=False, hash=False)

    @cached_property
    def digest(self) -> str:
        return bundle_digest(self.files)

    @property
    def skill_md(self) -> bytes:
        return self.contents[SKILL_FILE]

    def manifest(self) -> bytes:
        return manifest_bytes(self.files)

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)

    def file(self, path: str) -> BundleFile | None:
        for f in self.files:
            if f.path == path:
                return f
        return None


@dataclass(frozen=True)
class BundleDiff:
    """How one bundle differs from another, path by path."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[str, ...]  # content differs (its mode may differ too)
    mode_changed: tuple[str, ...]  # same bytes, executable bit flipped

    def __bool__(self) -> bool:
        return bool(self.added or self.removed or self.changed or self.mode_changed)

    def to_dict(self) -> dict:
        return {
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": list(self.changed),
            "mode_changed": list(self.mode_changed),
        }


def diff_bundles(
    old: Bundle | Sequence[BundleFile], new: Bundle | Sequence[BundleFile]
) -> BundleDiff:
    """What differs between two bundles, file by file.

    Args:
        old: the earlier bundle (or its files).
        new: the later bundle (or its files).
    Returns:
        A BundleDiff; false when the bundles are identical.
    """
    before = {f.path: f for f in (old.files if isinstance(old, Bundle) else old)}
    after = {f.path: f for f in (new.files if isinstance(new, Bundle) else new)}
    added = tuple(sorted((p for p in after if p not in before), key=str.encode))
    removed = tuple(sorted((p for p in before if p not in after), key=str.encode))
    changed, mode_changed = [], []
    for path in sorted((p for p in after if p in before), key=str.encode):
        a, b = before[path], after[path]
        if a.sha256 != b.sha256 or a.size != b.size:
            changed.append(path)
        elif a.executable != b.executable:
            mode_changed.append(path)
    return BundleDiff(added, removed, tuple(changed), tuple(mode_changed))


def is_ignored(parts: Sequence[str]) -> bool:
    """True when a relative path (as its components) is left out of a bundle by rule.

    Args:
        parts: the path's components, e.g. ``("scripts", ".DS_Store")``.
    Returns:
        Whether any component is in ``IGNORED_NAMES``, or the path is a top-level sidecar.
    """
    if len(parts) == 1 and parts[0] in SIDECAR_FILES:
        return True
    return any(part in IGNORED_NAMES for part in parts)


def check_path(path: str) -> tuple[str, ...]:
    """Refuse a relative path that is not safe to write under a skill folder; return its parts.

    Args:
        path: a POSIX path as it would appear in the manifest.
    Returns:
        Its components.
    Raises:
        UnsafePathError: absolute, empty or ``.``/``..`` components, a backslash or control
            character, or nested deeper than ``MAX_DEPTH``.
    """
    if not path or path.startswith("/") or (len(path) > 1 and path[1] == ":"):
        raise UnsafePathError(f"{path!r}: absolute or empty path in a skill bundle")
    bad = _BAD_PATH_CHAR.search(path)
    if bad is not None:
        ch = bad.group(0)
        if ch == "\\":
            raise UnsafePathError(f"{path!r}: backslash in a path (a separator on Windows)")
        if "\ud800" <= ch <= "\udfff":
            raise UnsafePathError(f"{path!r}: file name is not valid UTF-8")
        raise UnsafePathError(f"{path!r}: control character in a path")
    parts = tuple(path.split("/"))
    for part in parts:
        if part == "..":
            raise UnsafePathError(f"{path!r}: '..' in a path would climb out of the skill folder")
        if part in ("", "."):
            raise UnsafePathError(f"{path!r}: empty or '.' component in a path")
    if len(parts) - 1 > MAX_DEPTH:
        raise UnsafePathError(f"{path!r}: nested {len(parts) - 1} folders deep (limit {MAX_DEPTH})")
    return parts


def _fold(text: str) -> str:
    return unicodedata.normalize("NFC", text).casefold()


def _check_clashes(paths: Iterable[str]) -> None:
    """Refuse two paths (or a path and a folder) that differ only by case or Unicode form, and
    a file that is also a folder: on a case-insensitive disk one would overwrite the other."""
    seen: dict[str, str] = {}
    files: set[str] = set()
    dirs: set[str] = set()
    for path in paths:
        parts = path.split("/")
        files.add(path)
        for i in range(1, len(parts) + 1):
            prefix = "/".join(parts[:i])
            if i < len(parts):
                dirs.add(prefix)
            key = _fold(prefix)
            other = seen.setdefault(key, prefix)
            if other != prefix:
                raise UnsafePathError(
                    f"{other!r} and {prefix!r} differ only by case; they would collide on "
                    "a case-insensitive file system"
                )
    both = files & dirs
    if both:
        raise UnsafePathError(f"{sorted(both)[0]!r} is both a file and a folder")


def _check_counts(count: int, total: int, *, where: str, paths: Iterable[str] = ()) -> None:
    if count > MAX_FILES or total > MAX_TOTAL_BYTES:
        raise BundleLimitError(_over_limits(where, count, total, paths))


# How far a walk over the limits goes on counting, so the refusal says how large the skill is.
_COUNTED = 10 * MAX_FILES
_SCRIPTS = (".py", ".sh", ".bash", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".ps1", ".go")


def _over_limits(where: str, count: int, total: int, paths: Iterable[str]) -> str:
    """Why a skill over the bundle limits is refused, with what it holds: a reviewer sees how
    large it is, of what, and that nothing of it was imported."""
    over = []
    if count > MAX_FILES:
        over.append(f"more than {MAX_FILES} files")
    if total > MAX_TOTAL_BYTES:
        over.append(f"more than {MAX_TOTAL_BYTES} bytes in total")
    shown = f"{count:,}+" if count > _COUNTED else f"{count:,}"
    held = f"{shown} files, {total / 2**20:.1f} MiB"
    listed = list(paths)
    if listed:
        scripts = sum(p.lower().endswith(_SCRIPTS) for p in listed)
        held += f" ({scripts:,} scripts, {len(listed) - scripts:,} other files)"
    return (
        f"{where}: {' and '.join(over)} ({held}; the limits are {MAX_FILES:,} files and "
        f"{MAX_TOTAL_BYTES // 2**20} MiB): a skill is imported whole or not at all, since the "
        f"agent may read any of its files, so none of it was imported"
    )


def _check_file_size(path: str, size: int) -> None:
    if size > MAX_FILE_BYTES:
        raise BundleLimitError(f"{path}: {size} bytes; one file may hold at most {MAX_FILE_BYTES}")


def bundle_from_files(
    entries: Mapping[str, tuple[bytes, bool]],
    *,
    where: str = "bundle",
    links: Mapping[str, str] | None = None,
) -> Bundle:
    """A bundle from in-memory files (an archive member list, a git tree), every rule applied.

    Args:
        entries: path -> (exact bytes, executable). Ignored names (``is_ignored``) are dropped.
        where: what to name in error messages (the folder, archive or URL).
        links: symlink path -> its target as written in the link, for the links of the tree.
    Returns:
        The Bundle, files sorted by path bytes.
    Raises:
        UnsafePathError, LinkError, BundleLimitError, MissingSkillError.
    """
    return _bundle(entries, where=where, checked=False, links=links)


def link_target(path: str, target: str) -> str:
    """The skill-relative path a symlink at ``path`` names, refusing one that leads anywhere
    but into the same skill (absolute, climbing out with ``..``, empty).

    Args:
        path: the link's path inside the skill.
        target: the link's target as written in it.
    Returns:
        The target's path inside the skill.
    Raises:
        LinkError: the link leads out of the skill.
    """
    if not target or target.startswith("/") or "\\" in target or "\x00" in target:
        raise LinkError(f"{path}: symlink in a skill folder leading out of it (to {target!r})")
    parts: list[str] = path.split("/")[:-1]
    for part in target.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                raise LinkError(
                    f"{path}: symlink in a skill folder leading out of it (to {target!r})"
                )
            parts.pop()
        else:
            parts.append(part)
    if not parts:
        raise LinkError(f"{path}: symlink in a skill folder to the folder itself ({target!r})")
    return "/".join(parts)


def _bundle(
    entries: Mapping[str, tuple[bytes, bool]],
    *,
    where: str,
    checked: bool,
    links: Mapping[str, str] | None = None,
) -> Bundle:
    kept: dict[str, tuple[bytes, bool]] = {}
    total = 0
    for path, (data, executable) in entries.items():
        if not checked:  # read_bundle_dir checked and filtered every path while walking
            parts = check_path(path)
            if is_ignored(parts):
                continue
        _check_file_size(path, len(data))
        total += len(data)
        kept[path] = (bytes(data), bool(executable))
    copied: list[tuple[str, str]] = []
    for path, written in sorted((links or {}).items()):
        parts = check_path(path)
        if is_ignored(parts):
            continue
        target = link_target(path, written)
        if target not in kept:  # a folder, another link, an ignored file, nothing
            raise LinkError(
                f"{path}: symlink in a skill folder to {written!r}, no regular file of it "
                "(copy the file in instead)"
            )
        kept[path] = kept[target]
        total += len(kept[target][0])
        copied.append((path, target))
    _check_counts(len(kept), total, where=where, paths=kept)
    _check_clashes(kept)
    if SKILL_FILE not in kept:
        raise MissingSkillError(f"{where}: no {SKILL_FILE} at the top of the skill folder")
    sha = hashlib.sha256
    files = tuple(
        BundleFile(path, executable, len(data), sha(data).hexdigest())
        for path, (data, executable) in sorted(kept.items(), key=lambda kv: kv[0].encode())
    )
    return Bundle(files, MappingProxyType({p: d for p, (d, _) in kept.items()}), tuple(copied))


def skill_roots(paths: Iterable[str]) -> list[str]:
    """The skill folders of a tree: folders holding ``SKILL.md``, not inside another skill or an
    ignored folder, sorted by path bytes ("" is the top of the tree).

    Args:
        paths: every file path of the tree (POSIX, relative).
    Returns:
        The skill folder paths.
    """
    roots: set[str] = set()
    for path in paths:
        parts = path.split("/")
        if parts[-1] == SKILL_FILE and not any(p in IGNORED_NAMES for p in parts):
            roots.add("/".join(parts[:-1]))
    return sorted(
        (r for r in roots if not any(o != r and _inside(r, o) for o in roots)), key=str.encode
    )


def _inside(path: str, root: str) -> bool:
    return root == "" or path.startswith(root + "/")


@dataclass(frozen=True)
class FoundSkill:
    """One skill found in a tree: its bundle, or why it was refused (other skills still count)."""

    root: str  # its folder inside the tree, "" for the top
    bundle: Bundle | None = None
    error: BundleError | None = None
    sidecar: bytes | None = None  # the approvals.jsonl at the top of the skill, if any


def split_tree(
    entries: Mapping[str, tuple[bytes, bool]], *, where: str = "archive"
) -> list[FoundSkill]:
    """Split a tree of files (an archive, a git commit) into its skills, each checked on its own.

    Files outside every skill (a repository's README) belong to none and are not kept.

    Args:
        entries: path -> (bytes, executable) for the whole tree; every path is checked.
        where: what to name in error messages.
    Returns:
        One FoundSkill per skill folder, sorted by folder path.
    Raises:
        UnsafePathError for an unsafe path anywhere in the tree (the whole tree is suspect).
    """
    for path in entries:
        check_path(path)
    found: list[FoundSkill] = []
    for root in skill_roots(entries):
        cut = len(root) + 1 if root else 0
        files = {p[cut:]: v for p, v in entries.items() if _inside(p, root)}
        label = f"{where}:{root}" if root else where
        sidecar = files.get(SIDECAR_FILES[0])
        try:
            bundle = bundle_from_files(files, where=label)
            found.append(FoundSkill(root, bundle, sidecar=sidecar[0] if sidecar else None))
        except BundleError as exc:
            found.append(FoundSkill(root, error=exc))
    return found


def bundles_from_tree(
    entries: Mapping[str, tuple[bytes, bool]], *, where: str = "archive"
) -> list[tuple[str, Bundle]]:
    """``split_tree``, raising the first skill's refusal instead of returning it.

    Args:
        entries: path -> (bytes, executable) for the whole tree.
        where: what to name in error messages.
    Returns:
        (folder path inside the tree, Bundle) per skill, sorted by folder path.
    """
    out: list[tuple[str, Bundle]] = []
    for skill in split_tree(entries, where=where):
        if skill.error is not None:
            raise skill.error
        assert skill.bundle is not None
        out.append((skill.root, skill.bundle))
    return out


def _decode_name(raw: bytes, where: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        shown = os.fsdecode(os.path.join(where, raw))
        raise UnsafePathError(f"{shown!r}: file name is not valid UTF-8") from None


def _walk(root: bytes, links: dict[str, str]) -> list[tuple[str, bytes, os.stat_result]]:
    """Every non-ignored entry under ``root`` as (relative POSIX path, absolute path, lstat),
    refusing hard links and special files as they are met and putting each symlink's target
    in ``links``; directories are descended, not listed."""
    out: list[tuple[str, bytes, os.stat_result]] = []
    stack: list[tuple[bytes, tuple[str, ...]]] = [(root, ())]
    total = 0
    while stack:
        directory, prefix = stack.pop()
        try:
            with os.scandir(directory) as it:
                entries = list(it)
        except OSError as exc:
            raise BundleError(f"{os.fsdecode(directory)}: cannot read ({exc.strerror})") from None
        for entry in entries:
            name = _decode_name(entry.name, directory)
            parts = (*prefix, name)
            if is_ignored(parts):
                continue
            rel = "/".join(parts)
            check_path(rel)
            st = entry.stat(follow_symlinks=False)
            mode = st.st_mode
            if stat.S_ISLNK(mode):
                try:
                    links[rel] = os.fsdecode(os.readlink(entry.path))
                except OSError as exc:
                    raise LinkError(
                        f"{rel}: symlink that cannot be read ({exc.strerror})"
                    ) from None
                continue
            if stat.S_ISDIR(mode):
                stack.append((entry.path, parts))
                continue
            if not stat.S_ISREG(mode):
                raise SpecialFileError(f"{rel}: not a regular file (device, FIFO or socket)")
            if st.st_nlink > 1:
                raise LinkError(f"{rel}: hard link ({st.st_nlink} names for one file)")
            _check_file_size(rel, st.st_size)
            total += st.st_size
            out.append((rel, entry.path, st))
            if len(out) > _COUNTED:  # counted far enough: say how large, not exactly
                stack.clear()
                break
    _check_counts(len(out), total, where=os.fsdecode(root), paths=(e[0] for e in out))
    return out


def _read_regular(path: bytes, rel: str, expected: os.stat_result) -> bytes:
    """Read a file that lstat said is regular, refusing it if it was swapped meanwhile."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise BundleError(f"{rel}: cannot read ({exc.strerror})") from None
    try:
        st = os.fstat(fd)
        if (
            not stat.S_ISREG(st.st_mode)
            or st.st_ino != expected.st_ino
            or st.st_dev != expected.st_dev
        ):
            raise BundleError(f"{rel}: changed while it was being read")
        chunks = []
        left = min(st.st_size, MAX_FILE_BYTES) + 1  # one byte more shows a file that grew
        while left > 0:
            chunk = os.read(fd, left)
            chunks.append(chunk)
            if len(chunk) < left:  # a short read of a regular file is its end
                break
            left -= len(chunk)
        data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
    finally:
        os.close(fd)
    _check_file_size(rel, len(data))
    return data


def read_bundle_dir(path: str | os.PathLike) -> Bundle:
    """Read a skill folder from disk as a bundle, applying every refusal.

    Args:
        path: the skill folder (holding ``SKILL.md``). The folder itself may be reached through
            a symlink; inside it a symlink may only name a regular file of the same folder.
    Returns:
        The Bundle.
    Raises:
        BundleError (or a subclass) naming the offending file; ``MissingSkillError`` without
        a top-level ``SKILL.md``.
    """
    root = Path(path)
    links: dict[str, str] = {}
    try:
        walked = _walk(os.fsencode(root), links)
    except BundleError:
        # Asked only when listing failed: a skill of a big import costs one stat less.
        if not root.is_dir():
            raise BundleError(f"{root}: not a folder") from None
        raise
    entries: dict[str, tuple[bytes, bool]] = {}
    for rel, abs_path, st in walked:
        data = _read_regular(abs_path, rel, st)
        entries[rel] = (data, bool(st.st_mode & stat.S_IXUSR))
    return _bundle(entries, where=str(root), checked=True, links=links)


def find_bundle_dirs(path: str | os.PathLike) -> list[Path]:
    """The skill folders under ``path``: itself if it holds ``SKILL.md``, otherwise every folder
    below it that does (not looking inside a skill for more, nor inside ignored folders; a
    symlinked folder holding ``SKILL.md`` is listed but never looked into), sorted by path.

    Args:
        path: a skill folder or a collection (a folder of skill folders, at any depth up to
            ``MAX_DEPTH``).
    Returns:
        The skill folders found (possibly none).
    """
    # Walked as strings (a Path per folder costs more than its lstat), as str(Path) spells them.
    found: list[str] = []
    stack: list[tuple[str, int]] = [(str(Path(path)), 0)]
    while stack:
        directory, depth = stack.pop()
        # Whatever is named SKILL.md marks a skill; a symlink or FIFO is refused when read.
        if os.path.lexists(os.path.join(directory, SKILL_FILE)):
            found.append(directory)
            continue
        if depth >= MAX_DEPTH:
            continue
        try:
            with os.scandir(directory) as it:
                for entry in it:
                    if entry.name in IGNORED_NAMES:
                        continue
                    if entry.is_symlink():
                        # Listed, never descended: the importer refuses one that leads out of
                        # the folder the user named (paths.check_link_inside).
                        if os.path.lexists(os.path.join(entry.path, SKILL_FILE)):
                            found.append(entry.path)
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        stack.append((entry.path, depth + 1))
        except OSError:
            continue
    return [Path(p) for p in sorted(found, key=os.fsencode)]
