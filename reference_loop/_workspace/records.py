"""What a workspace records and reports: the snapshot, a scan of the tree, diff entries, a diff."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field


@dataclass
class FileChange:
    """One changed path. ``status``: A added, M modified (content or mode), D deleted,
    R renamed (``old_path`` is the source), T type changed (e.g. file <-> symlink)."""

    path: str
    status: str
    old_path: str | None = None

    def to_dict(self) -> dict:
        return {"path": self.path, "status": self.status, "old_path": self.old_path}


@dataclass(frozen=True)
class Refused:
    """A file a look refused to read (too large, sparse, one too many: ``limits``); it was
    removed, or written back from the snapshot. ``status``: A new, M a file of the snapshot."""

    path: str
    status: str
    why: str

    def to_dict(self) -> dict:
        return {"path": self.path, "status": self.status, "why": self.why}


@dataclass
class Diff:
    """The real change since the snapshot. ``text`` is ``git diff --binary -M`` output (it applies
    with ``git apply`` to the snapshot); ``raw`` holds the same patch as exact bytes."""

    text: str
    files: list[FileChange]
    raw: bytes = b""
    # The changes an ignore rule kept out of ``text`` and ``files`` (caches, ignored folders):
    # with ``files`` they are every path that differs from the snapshot.
    hidden: list[FileChange] = field(default_factory=list)
    # Every changed path (ignore rules not applied, renames not paired) -> (mode, object id) it
    # has now; ("000000", zeros) when deleted. Two diffs with equal ``state`` saw the same tree.
    state: dict[str, tuple[str, str]] = field(default_factory=dict)
    # Paths under the tree's ``.git`` entries that differ from the snapshot. Never in the patch;
    # a restore always puts them back (``gitdirs``).
    git_dirs: list[FileChange] = field(default_factory=list)
    # Files the look refused unread and undid (``limits``): in neither the patch nor ``state``.
    oversized: list[Refused] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.files

    def every_change(self) -> list[FileChange]:
        """Every changed path, ignore rules not applied (renames as in ``files``)."""
        return [*self.files, *self.hidden]

    def to_dict(self) -> dict:
        return {"text": self.text, "files": [f.to_dict() for f in self.files]}


@dataclass
class _Snapshot:
    tree: str
    # Directories with no tracked file below them (git does not record empty dirs); every
    # directory in this set, nested ones included, is recreated by restore.
    empty_dirs: frozenset[str]
    # Every directory of the snapshot ("" is the root) -> (inode, ctime_ns, when it was read).
    # A new entry changes its directory's ctime, so scans and restores only list directories
    # whose ctime moved (or is too recent to trust) instead of walking the tree again. ctime,
    # not mtime: an attempt can set a directory's mtime back (utime), never its ctime.
    dirs: dict[str, tuple[int, int, int]]
    # Every ``.git`` entry (the user's own, nested repositories') present at the snapshot: any
    # other ``.git`` is a repository the attempt made, and restore removes it.
    gits: frozenset[str] = frozenset()
    started: int = 0  # time.time_ns() when the snapshot began
    # Every file and symlink of the snapshot: in a directory whose ctime moved, a name not
    # here is new, so later scans need not walk the whole tree to find new files.
    files: frozenset[bytes] | set[bytes] = frozenset()


@dataclass
class _Scan:
    """One pass over the directories (see :meth:`Workspace._scan_dirs`)."""

    dirs: dict[str, tuple[int, int, int]]
    empty: set[str]
    gits: set[str]
    # Every file and symlink as (its directory's path + "/", names), when the pass was asked
    # for them; full paths are built only when they must be compared with the index.
    files: list[tuple[bytes, list[bytes]]] | None = None

    def snapshot(self, tree: str, started: int, files: set[bytes] | None = None) -> _Snapshot:
        """The snapshot this pass describes; ``files`` when the caller has the set already."""
        if files is None:
            files = set(self.file_paths())
        return _Snapshot(
            tree, frozenset(self.empty), self.dirs, frozenset(self.gits), started, files
        )

    def file_count(self) -> int:
        return sum(len(names) for _prefix, names in self.files or ())

    def file_paths(self) -> Iterator[bytes]:
        for prefix, names in self.files or ():
            for name in names:
                yield prefix + name


@dataclass
class _Entry:
    """One line of ``git diff --raw`` from the snapshot (src) to the current state (dst)."""

    status: str
    src_mode: str
    src_sha: str
    path: str
    new_path: str | None = None  # renames: where the file went
    dst_mode: str = ""
    dst_sha: str = ""


@dataclass
class _Look:
    """What a look at the workspace found: the changes since the snapshot, and when they were
    found by hand, every blob's size and how to build the tree of a set of them."""

    entries: list[_Entry]
    sizes: dict[str, int] | None = None
    trees: Callable[[list[_Entry]], str] | None = None


# Directories modified less than this long before we recorded them are listed on every restore
# (on a filesystem whose timestamps are whole seconds; one with fractions: the second figure).
_RACY_NS = 2_000_000_000
_RACY_FINE_NS = 50_000_000


def _moved(st: os.stat_result, ino: int, ctime: int, seen: int) -> bool:
    """Whether a directory may have gained or lost entries since it was recorded as (inode,
    ctime, when). A change within the filesystem's timestamp granularity of the recording
    could leave ctime equal, so a directory changed shortly before it was recorded always
    counts as moved: within 2 s on a filesystem that keeps whole seconds (FAT keeps two),
    within :data:`_RACY_FINE_NS` on one whose timestamps have a fraction (they tick with the
    kernel's coarse clock, every 1-10 ms)."""
    if (st.st_ino, st.st_ctime_ns) != (ino, ctime):
        return True
    return ctime >= seen - (_RACY_NS if ctime % 1_000_000_000 == 0 else _RACY_FINE_NS)
