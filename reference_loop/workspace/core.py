"""Snapshot a directory, diff it against the snapshot, and restore it byte-exactly.

The loop lets an attempter edit a workspace freely, then needs (1) the *real* change it made and
(2) the workspace put back exactly as it was. Both come from git's object store, used through a
private ``GIT_DIR``/``GIT_INDEX_FILE`` in a temp directory outside the workspace: it works in any
directory (inside or outside a user's repository) and never reads or writes the user's index,
refs, stash or config. The private index is kept between calls so git's stat cache makes every
scan cost what ``git status`` costs, and restore only touches the paths that changed.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import stat
import subprocess
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Generic, TypeVar, cast

from reference_loop.errors import LoopError
from reference_loop.workspace import gitindex, gitstore, storetrash

# Files a verifier run creates on its own (pytest, Python, common tools); never diffed or restored.
DEFAULT_IGNORE: tuple[str, ...] = (
    "__pycache__/",
    "*.pyc",
    ".pytest_cache/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".hypothesis/",
    ".coverage",
    ".tox/",
    ".nox/",
    ".venv/",
    "node_modules/",
)

# Attributes the workspace's own .gitattributes could set that would make the stored bytes differ
# from the file's bytes (eol conversion, filters, $Id$ expansion); info/attributes overrides them.
_BYTE_EXACT_ATTRIBUTES = "* -text -eol -ident -filter -working-tree-encoding\n"

# The private repository's whole config: user/system config is switched off by the environment.
# bigFileThreshold and the small pack windows let git stream a large blob (restore, diff) instead
# of holding it, or a whole mapped pack, in memory.
# splitIndex: each command rewrites only the entries that changed, not the whole index (writing
# and hashing the 2 MB index of a 20,000-file tree cost 6-12 ms per git command).
_CONFIG = """\
[core]
\trepositoryformatversion = 0
\tbare = false
\tautocrlf = false
\tsafecrlf = false
\teol = lf
\tfilemode = true
\tsymlinks = true
\tquotepath = false
\tfsmonitor = false
\tbigFileThreshold = 8m
\tpackedGitWindowSize = 8m
\tpackedGitLimit = 32m
\tuntrackedCache = false
\tsplitIndex = true
\tlooseCompression = {loose}
\tfsync = none
\thooksPath = {hooks}
\texcludesFile = {excludes}
\tattributesFile = {attributes}
[gc]
\tauto = 0
[advice]
\taddEmbeddedRepo = false
\taddIgnoredFile = false
\tdetachedHead = false
[diff]
\trenames = true
\tnoprefix = false
\tmnemonicPrefix = false
\tsubmodule = short
"""

_T = TypeVar("_T")
_SYMLINK = "120000"
_GITLINK = "160000"


@dataclass
class FileChange:
    """One changed path. ``status``: A added, M modified (content or mode), D deleted,
    R renamed (``old_path`` is the source), T type changed (e.g. file <-> symlink)."""

    path: str
    status: str
    old_path: str | None = None

    def to_dict(self) -> dict:
        return {"path": self.path, "status": self.status, "old_path": self.old_path}


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


def _hand_entry(
    path: str, old: tuple[int, bytes, int] | None, new: gitindex.NewEntry | None
) -> _Entry | None:
    """The raw diff entry from the snapshot's ``old`` (mode, id, size) to ``new`` as
    ``git diff --raw --no-renames`` names it; ``None`` when they are the same."""
    if old is None:
        if new is None:
            return None
        return _Entry("A", "000000", _ZERO_HEX, path, None, f"{new[2]:06o}", new[3].hex())
    src_mode, src_sha = f"{old[0]:06o}", old[1].hex()
    if new is None:
        return _Entry("D", src_mode, src_sha, path, None, "000000", _ZERO_HEX)
    if (old[0], old[1]) == (new[2], new[3]):
        return None
    status = "M" if stat.S_IFMT(old[0]) == stat.S_IFMT(new[2]) else "T"
    return _Entry(status, src_mode, src_sha, path, None, f"{new[2]:06o}", new[3].hex())


class Workspace:
    """Snapshot/diff/restore of the directory ``root`` through a private git object store.

    ``ignore`` adds gitignore-style patterns to :data:`DEFAULT_IGNORE` (``default_ignore=False``
    drops the defaults); the workspace's own ``.gitignore`` files apply too. Ignored paths are
    left out of the *diff* only: the snapshot holds every file, so a restore also undoes what an
    attempt did to ignored paths (a planted ``.pyc``, an edited ``.venv``). Use as a context
    manager, or call :meth:`close`.
    """

    def __init__(
        self, root: Path, *, ignore: Sequence[str] = (), default_ignore: bool = True
    ) -> None:
        self.root = Path(root).resolve()
        if not self.root.is_dir():
            raise LoopError(f"workspace is not a directory: {root}")
        base_env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        git = shutil.which("git", path=base_env.get("PATH", os.defpath))
        if git is None:
            raise LoopError(_NO_GIT)
        self._git = git
        self._base_env = base_env
        self._ignore = (*(DEFAULT_IGNORE if default_ignore else ()), *ignore)
        self._snapshot: _Snapshot | None = None
        # Directories holding a nested repository: git would record them as a gitlink (or refuse
        # them) instead of their files, so each add is told they are plain directories.
        self._nested: set[str] = set()
        self._umask = _current_umask()
        # Paths (relative, '/'-separated; directories end in '/') the last restore removed,
        # rewrote or recreated: restore's cost scales with this list, not with the tree.
        self.last_restored: list[str] = []
        # Paths the private index may lack though the snapshot has them (a file the attempt
        # deleted, written back by a restore or made again): the next scan stages them by
        # name, since directory ctimes only point it at names the snapshot did not have.
        self._pending: set[bytes] = set()
        parent = self._store_parent()
        self._in_memory = parent is not None
        self._tmp = tempfile.mkdtemp(prefix="reference-loop-ws-", dir=parent)
        self._finalizer = weakref.finalize(self, shutil.rmtree, self._tmp, ignore_errors=True)
        # The background removal of the store close() started (None before close()).
        self.removal: storetrash.Removal | None = None
        # Stores a killed process was still removing: swept off the caller's path.
        threading.Thread(
            target=storetrash.sweep, args=(os.path.dirname(self._tmp),), daemon=True
        ).start()
        gitdir = os.path.join(self._tmp, "git")
        self._index = os.path.join(self._tmp, "index")
        self._env = {
            **base_env,
            "GIT_DIR": gitdir,
            "GIT_WORK_TREE": str(self.root),
            "GIT_INDEX_FILE": self._index,
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_ATTR_NOSYSTEM": "1",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_LITERAL_PATHSPECS": "1",
            "GIT_OPTIONAL_LOCKS": "0",
            "LC_ALL": "C",
            # git allocates and frees zlib's ~256 KB state per object it writes; glibc's default
            # trim/mmap thresholds hand that memory back to the kernel each time, so every
            # object cost a few dozen page faults (more than hashing it).
            "GLIBC_TUNABLES": _MALLOC_TUNABLES,
        }
        self._seed_index: bytes | None = None
        # The snapshot as an index Python holds, while the private index is exactly it (the
        # first snapshot of a repository's top, stored by hand): changes are then found with
        # ``git diff-files`` and stored by hand too, and the index is never rewritten.
        self._model: gitindex.Index | None = None
        try:
            self._init_repo(gitdir)
            self.seeded = self._seed_from_user_repo(gitdir)
        except BaseException:
            self.close()
            raise

    def _store_parent(self) -> str | None:
        """Where the private store goes: in memory (``/dev/shm``) for the top of a repository,
        whose store only holds what differs from the user's index (creating and deleting its
        few hundred small files on a busy disk costs more than the whole scan); the default
        temp directory otherwise, where the first snapshot holds every byte of the tree."""
        shm = "/dev/shm"
        if os.path.lexists(self.root / ".git") and os.path.isdir(shm) and os.access(shm, os.W_OK):
            return shm
        return None

    # -- lifecycle -------------------------------------------------------------------------

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self, *, wait: bool = False) -> None:
        """Remove the private GIT_DIR. The workspace itself is left as it is.

        The store's path is free when this returns; its files are deleted in a background
        thread (:attr:`removal`), since freeing a large pack can cost more than the whole run.

        Args:
            wait: block until the files are deleted too.
        """
        if self._finalizer.detach() is not None:
            self.removal = storetrash.discard(self._tmp)
        if wait and self.removal is not None:
            self.removal.wait()

    @property
    def snapshot_tree(self) -> str | None:
        return self._snapshot.tree if self._snapshot else None

    # -- the operations --------------------------------------------------------------------

    def snapshot(self) -> str:
        """Record the current state; return its tree id. A later snapshot replaces the earlier."""
        started = time.time_ns()
        snap = self._snapshot
        if snap is None:
            if self.seeded:
                tree, scan, files = self._first_seeded_snapshot(started)
                self._snapshot = scan.snapshot(tree, started, files)
                return tree
            stored = self._store_by_hand()
            if stored is not None:
                self._snapshot = self._scan_dirs(files=True).snapshot(stored, started)
                return stored
            self._stage_all()
            tree = self._write_tree()
        else:
            # Snapshotting again right after a restore is common (a snapshot per attempt): if
            # nothing differs from the current snapshot, keep it and skip the extra scans (a
            # look by hand keeps the private index, and the model, as the snapshot).
            entries = self._look(snap).entries
            if not entries:
                moved, new, missing = self._dir_changes(snap)
                if not new and not missing:
                    snap.dirs.update(self._stat_dirs(moved))
                    return snap.tree
            if self._model is not None:
                self._changes(snap)  # the private index has to hold the new state
            tree = self._write_tree()
        self._snapshot = self._scan_dirs(files=True).snapshot(tree, started)
        return tree

    def _first_seeded_snapshot(self, started: int) -> tuple[str, _Scan, set[bytes] | None]:
        """The first snapshot of a repository's top, from the copy of the user's index.

        ``git diff-files`` stats the files the user's index tracks (like ``git status``) and
        names those that differ, while a thread reads the user's index (every entry, and the
        ones git would trust without looking: assume-unchanged, skip-worktree, submodules)
        and makes the one pass over the directories the snapshot needs anyway, which finds
        the files the index does not track. The differing and untracked files are then
        stored by hand (:meth:`_store_changes_by_hand`); anything unusual goes through
        ``git add`` instead (:meth:`_stage_through_git`).
        """
        seed = self._seed_index or b""
        self._seed_index = None
        proc, look = self._diff_files_beside(lambda: self._look_and_store(seed))
        found = look.result()
        if proc.returncode == 0 and found.trusted is not None and not found.converts:
            done = self._store_changes_by_hand(found, proc.stdout, started)
            if done is not None:
                return done
        return self._stage_through_git(found)

    def _diff_files_beside(
        self, work: Callable[[], _T]
    ) -> tuple[subprocess.CompletedProcess[bytes], _InThread[_T]]:
        """``git diff-files --name-status -z`` (the tracked files that differ from the private
        index), with ``work`` run in a thread meanwhile; the caller reads the thread's result."""
        beside = _InThread(work)
        try:
            return self._run("diff-files", "--name-status", "-z", check=False), beside
        except BaseException:
            beside.join()
            raise

    def _look_and_store(self, seed: bytes) -> _TreeLook:
        """Read the user's index, pass over the directories, and store the untracked files
        they show (the slower ``git diff-files`` is still running meanwhile)."""
        index = gitindex.read_index(seed)
        scan = self._scan_dirs(files=True)
        found = _TreeLook.of(index, scan)
        found.converts = self._tree_converts(scan)
        if found.converts:
            return found  # no entry of the user's index is trusted: git hashes every file
        if found.untracked and index is not None and not index.flagged and not index.unusual:
            found.stored = self._store_files(found.untracked, index.path_set)
        return found

    def _tree_converts(self, scan: _Scan) -> bool:
        """Whether a ``.gitattributes`` in the tree sets an attribute that converts."""
        root = os.fsencode(self.root) + b"/"
        return any(
            _converting_attributes(root + prefix + b".gitattributes")
            for prefix, names in scan.files or ()
            if b".gitattributes" in names
        )

    def _store_files(
        self, paths: Iterable[bytes], tracked: set[bytes], *, special_is_gone: bool = False
    ) -> dict[bytes, gitindex.NewEntry | None] | None:
        """Store these files (and symlinks) into a pack of their own; path -> its new index
        entry, or ``None`` for a tracked path that is gone (with ``special_is_gone``, also
        one that is now a FIFO, socket or device, which no snapshot holds). ``None`` when
        git should do it: an odd name, something else that is not a file, a file that
        changed while it was read or cannot be read (git's add then says why)."""
        root = os.fsencode(self.root) + b"/"
        found: dict[bytes, gitindex.NewEntry | None] = {}
        writer = gitstore.PackWriter(os.path.join(self._env["GIT_DIR"], "objects", "pack"))
        try:
            for path in paths:
                if not all(gitstore.name_ok(part) for part in path.split(b"/")):
                    raise gitstore.TreeChanged
                try:
                    st = os.lstat(root + path)
                except (FileNotFoundError, NotADirectoryError):
                    if path in tracked:
                        found[path] = None
                    continue
                if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
                    if special_is_gone and path in tracked and not stat.S_ISDIR(st.st_mode):
                        found[path] = None
                        continue
                    raise gitstore.TreeChanged
                found[path] = gitstore.store_file(writer, root + path, path, st)
            writer.finish()
        except (gitstore.TreeChanged, OSError):
            writer.abort()
            return None
        except BaseException:
            writer.abort()
            raise
        return found

    def _store_changes_by_hand(
        self, found: _TreeLook, listed: bytes, started: int
    ) -> tuple[str, _Scan, set[bytes] | None] | None:
        """Store the files ``git diff-files`` listed (``listed``) and the untracked ones (the
        thread that found them may have stored them already), and write the private index:
        the user's entries, those files' new entries (with the stat data they were read
        under), and the trees of the directories they changed. Git would hash each file
        twice and write each object and tree as a file of its own; this reads and hashes
        each file once. ``None`` when git should do it: an index entry git trusts without
        looking, an unmerged one, anything :meth:`_store_files` refuses.
        """
        index, scanned = found.index, found.scan
        if index is None or index.flagged or index.unusual or index.nodes is None:
            return None
        fields = listed.split(b"\0")
        if fields[-1:] == [b""]:
            fields.pop()
        if len(fields) % 2:
            return None
        changed: dict[bytes, gitindex.NewEntry | None] = {}
        modified: list[bytes] = []
        for status, path in zip(fields[0::2], fields[1::2], strict=True):
            if status == b"D":
                changed[path] = None
            elif status in (b"M", b"T"):
                modified.append(path)
            else:
                return None
        untracked = found.untracked
        stored = found.stored
        if untracked is None and changed:
            # As many files as index entries, but one was removed: compare after all.
            paths = index.path_set
            untracked = [p for p in scanned.file_paths() if p not in paths]
            stored = None
        if untracked and stored is None:
            modified += untracked
        if not changed and not modified and not untracked and index.tree:
            # Nothing differs from the user's index: the snapshot is its cached tree.
            self._model = index
            return index.tree, scanned, found.files or found.trusted
        # A FIFO where the user's index has a file: git's add refuses it, while a snapshot
        # anywhere else (or from a fresh index) just leaves it out; so does this one.
        more = self._store_files(modified, index.path_set, special_is_gone=True)
        if more is None:
            return None
        changed.update(stored or {})
        changed.update(more)
        writer = gitstore.PackWriter(os.path.join(self._env["GIT_DIR"], "objects", "pack"))
        try:
            new = gitindex.rewrite_index(index, changed, writer.add_tree)
            if new is None:
                writer.abort()
                return None
            writer.finish()
        except BaseException:
            writer.abort()
            raise
        # The snapshot's files: the trusted paths and untracked files, unless one was removed.
        files = None if None in changed.values() else found.files or found.trusted
        self._write_split_index(new.data, new.tree_ext, started)
        self._model = new.index
        self._nested |= {g[: -len("/.git")] for g in scanned.gits if g != ".git"}
        return new.tree.hex(), scanned, files

    def _write_split_index(self, shared: bytes, tree_ext: bytes, stamp: int) -> None:
        """Make ``shared`` the private index, as the shared part of a split index.

        Both files get ``stamp`` (when the snapshot began) as their mtime: an entry recorded
        in that second or later counts as racy to git, which then compares its content
        instead of trusting its stat data (a file changed again in the second it was read).
        """
        gitdir = self._env["GIT_DIR"]
        for name in os.listdir(gitdir):
            if name.startswith("sharedindex."):
                os.unlink(os.path.join(gitdir, name))
        path = os.path.join(gitdir, "sharedindex." + shared[-20:].hex())
        with open(path, "wb") as fh:
            fh.write(shared)
        os.utime(path, ns=(stamp, stamp))
        with open(self._index + ".tmp", "wb") as fh:
            fh.write(gitindex.split_part(shared, tree_ext))
        os.utime(self._index + ".tmp", ns=(stamp, stamp))
        os.replace(self._index + ".tmp", self._index)

    def _stage_through_git(self, found: _TreeLook) -> tuple[str, _Scan, set[bytes] | None]:
        """The first snapshot through ``git add``: git's own add says what cannot be staged,
        drops the entries it would trust without looking, and reads an index Python does
        not parse."""
        index, scanned = found.index, found.scan
        if found.converts:
            # A .gitattributes converts: a stat-clean entry's blob may not be the file's
            # bytes, so the user's entries are dropped and git hashes every file.
            self._run("read-tree", "--empty")
            self._stage_all()
            return self._write_tree(), scanned, None
        # -v names every path whose content or mode the add changed (stat refreshes are
        # silent): none means the index still holds exactly the user's index content.
        config = self._store_config()
        proc = self._run("add", "-u", "-v", "--ignore-errors", config=config, check=False)
        dropped = False
        if proc.returncode == 0 and index is not None and found.trusted is not None:
            if index.flagged:
                self._drop_entries(index.flagged)
                dropped = True
            removed = b"\nremove '" in b"\n" + proc.stdout
            untracked = found.untracked
            if untracked is None:
                untracked = (
                    [p for p in scanned.file_paths() if p not in found.trusted]
                    if removed or dropped
                    else []
                )
            # The snapshot's files: every trusted path is one when none was removed.
            files = None if removed or dropped else found.files or found.trusted
            if not untracked and not dropped and index.tree and not proc.stdout.strip():
                return index.tree, scanned, files
            if not untracked or self._stage_paths(untracked):
                return self._write_tree(), scanned, files
        self._stage_all()
        if not dropped:
            flagged = index.flagged if index is not None else self._flagged_by_git()
            if flagged:
                self._drop_entries(flagged)
                self._stage_all()
        return self._write_tree(), scanned, None

    def diff(self) -> Diff:
        """The real change from the snapshot to the current state (call it before restore)."""
        snap = self._require_snapshot()
        look = self._look(snap)
        return self._patch(snap, look.entries, sizes=look.sizes, trees=look.trees)

    def restore(self) -> None:
        """Put the workspace back byte-exactly as it was at the snapshot.

        Works whatever state the attempt left (also after an exception mid-attempt): it looks at
        the workspace afresh. Only the paths that differ from the snapshot are written.
        """
        snap = self._require_snapshot()
        # An attempt that removed the whole workspace gets it back, like any deleted directory.
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            look = self._look(snap)
        except LoopError:
            planted = self._remove_unstorable(snap)
            if not planted:
                raise
            look = self._look(snap)
        else:
            planted = []
        self._restore(snap, look.entries, look.sizes)
        self.last_restored = sorted({*planted, *self.last_restored})

    def _remove_unstorable(self, snap: _Snapshot) -> list[str]:
        """Remove what git refuses to stage, so that a look can see the rest: new files whose
        names git's path checks may refuse (``.GIT``, ``git~1``), which the snapshot cannot
        hold, and a FIFO, socket or device where the snapshot had a file (it comes back).
        A restore removes both anyway; this only does it before the look."""
        root = os.fsencode(self.root) + b"/"
        try:
            new = self._new_files(snap)
            planted = [
                path for path in new if not all(gitstore.name_ok(part) for part in path.split(b"/"))
            ]
            # Only on this refused path: one lstat per file of the snapshot.
            for path in snap.files:
                with contextlib.suppress(FileNotFoundError, NotADirectoryError):
                    kind = stat.S_IFMT(os.lstat(root + path).st_mode)
                    if kind not in (stat.S_IFREG, stat.S_IFLNK, stat.S_IFDIR):
                        planted.append(path)
        except OSError:
            return []
        shown = sorted(os.fsdecode(path) for path in planted)
        for rel in shown:
            self._remove_path(rel, snap)
        return shown

    def diff_and_restore(self) -> Diff:
        """:meth:`diff` then :meth:`restore` with one look at the workspace instead of two.

        The loop's normal path after the verifier; the saving is one full scan per attempt.
        """
        snap = self._require_snapshot()
        look = self._look(snap)
        entries = look.entries
        # Which changes are ignored is asked beside how large each blob is; the snapshot's
        # blobs the restore needs, when small, are read meanwhile too.
        ignored = self._start_ignore_check(entries) if entries else list
        fetch: _InThread[dict[str, bytes]] | None = None
        try:
            sizes = look.sizes if look.sizes is not None else self._blob_sizes(entries)
            patch_first = (
                len(entries) < _RESTORE_BESIDE_PATCH
                or any(_largest(e, sizes) > BIG_FILE_BYTES for e in entries)
                or any(e.path.rpartition("/")[2] == ".gitattributes" for e in entries)
            )
            wanted = sorted({e.src_sha for e in entries if e.status != "A"} - {_ZERO_HEX})
            small = sum(sizes.get(sha, _PREFETCH_BYTES) for sha in wanted) < _PREFETCH_BYTES
            if patch_first and wanted and small:
                fetch = _InThread(lambda: self._fetch_blobs(wanted))
            # By hand, the tree of every change is built while git looks for ignored ones
            # (usually none): the patch then needs no tree of its own.
            tree = None
            all_small = all(_largest(e, sizes) <= BIG_FILE_BYTES for e in entries)
            if look.trees is not None and entries and patch_first and all_small:
                tree = look.trees(entries)
            shown = ignored()
            if len(shown) != len(entries):
                tree = None
        except BaseException:
            with contextlib.suppress(BaseException):
                ignored()
            if fetch is not None:
                fetch.join()
            raise
        if patch_first:
            # git's patch reads a file from the work tree when the index says it is current
            # (a large one mapped, never read whole), and the attributes from the work tree,
            # so the work tree stays as the attempt left it until the patch is made.
            try:
                diff = self._patch(snap, entries, shown, sizes, tree, trees=look.trees)
            except BaseException:
                if fetch is not None:
                    fetch.join()
                raise
            self._restore(snap, entries, sizes, fetch.result() if fetch is not None else None)
            return diff
        # Many files: the restore runs beside a patch made from two trees with no index (so
        # git reads nothing from the work tree but the attributes, which no entry changes).
        tree = look.trees(entries) if look.trees is not None else self._write_tree()
        restore = _InThread(lambda: self._restore(snap, entries, sizes))
        try:
            diff = self._patch(snap, entries, shown, sizes, tree)
        except BaseException:
            restore.join()
            raise
        restore.result()
        return diff

    # -- internals -------------------------------------------------------------------------

    def _init_repo(self, gitdir: str) -> None:
        # Laid out by hand (what `git init --template=` writes), one process less per run.
        for sub in ("objects/info", "objects/pack", "refs/heads", "refs/tags", "info"):
            os.makedirs(os.path.join(gitdir, sub))
        with open(os.path.join(gitdir, "HEAD"), "w", encoding="utf-8") as fh:
            fh.write("ref: refs/heads/main\n")
        info = os.path.join(gitdir, "info")
        # The ignore rules decide what the diff shows (check-ignore reads them); adds use -f.
        with open(os.path.join(info, "exclude"), "w", encoding="utf-8") as fh:
            fh.write("".join(f"{p}\n" for p in self._ignore))
        with open(os.path.join(info, "attributes"), "w", encoding="utf-8") as fh:
            fh.write(_BYTE_EXACT_ATTRIBUTES)
        empty = os.path.join(self._tmp, "empty")
        open(empty, "w").close()
        with open(os.path.join(gitdir, "config"), "w", encoding="utf-8") as fh:
            # core.excludesFile/attributesFile point at an empty file so the user's XDG
            # ~/.config/git/{ignore,attributes} cannot change what is snapshotted.
            fh.write(
                _CONFIG.format(
                    hooks=_cfg_path(os.path.join(self._tmp, "no-hooks")),
                    excludes=_cfg_path(empty),
                    attributes=_cfg_path(empty),
                    loose=0 if self._in_memory else 1,
                )
            )

    def _seed_from_user_repo(self, gitdir: str) -> bool:
        """When ``root`` is the top of a git repository, start from a copy of its index and read
        its objects as a read-only alternate: the first add then hashes only the files that
        differ from the user's index (like ``git status``), not the whole tree.

        Nothing is written to the user's repository: the index is copied (with its mtime, which
        git's racy-entry check relies on), and alternates are never written to.
        """
        if not os.path.lexists(self.root / ".git"):
            return False  # not the top of a repository (a folder inside one is not seeded)
        found = _plain_layout(str(self.root)) or self._ask_git_for_dirs()
        if found is None:
            return False
        user_gitdir, common = found
        index = os.path.join(user_gitdir, "index")
        objects = os.path.join(common, "objects")
        # A split index needs its shared part beside it; a sparse checkout leaves entries that
        # are not on disk. Neither is worth the risk: fall back to hashing the tree.
        if not os.path.isfile(index) or not os.path.isdir(objects):
            return False
        if any(n.startswith("sharedindex.") for n in os.listdir(user_gitdir)):
            return False
        if os.path.exists(os.path.join(common, "info", "sparse-checkout")):
            return False
        if _user_converts(user_gitdir, common):
            return False  # the index's blobs may not be the files' bytes: hash every file
        if _other_object_format(common):
            return False  # a SHA-256 index and objects: the private store is SHA-1
        try:
            with open(index, "rb") as fh:
                data = fh.read()
                st = os.fstat(fh.fileno())
            split = gitindex.split_index_over(data)
            if split is not None:
                # The user's index, byte for byte, is the shared part of a split index: the
                # first add then writes only the entries it changed, never the whole index.
                shared = os.path.join(gitdir, "sharedindex." + data[-20:].hex())
                with open(shared, "wb") as fh:
                    fh.write(data)
            with open(self._index, "wb") as fh:
                fh.write(data if split is None else split)
            os.utime(self._index, ns=(st.st_atime_ns, st.st_mtime_ns))
        except OSError:
            return False
        alternates = os.path.join(gitdir, "objects", "info")
        os.makedirs(alternates, exist_ok=True)
        with open(os.path.join(alternates, "alternates"), "w", encoding="utf-8") as fh:
            fh.write(objects + "\n")
        # Which entries the first add must not trust is worked out beside that add.
        self._seed_index = data
        return True

    def _ask_git_for_dirs(self) -> tuple[str, str] | None:
        """(git dir, common dir) of the repository whose top is ``root``, as git sees it."""
        env = {**self._base_env, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"}
        try:
            proc = subprocess.run(
                [self._git, "rev-parse", "--path-format=absolute", *_TOP_DIRS],
                check=False,
                cwd=self.root,
                env=env,
                capture_output=True,
            )
        except OSError:
            return None
        lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
        if proc.returncode != 0 or len(lines) != 3:
            return None
        top, user_gitdir, common = lines
        if os.path.realpath(top) != str(self.root):
            return None
        return user_gitdir, common

    def _run(
        self,
        *args: str,
        input: bytes | None = None,
        check: bool = True,
        config: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        with self._popen(*args, config=config, env=env) as popen:
            try:
                out, err = popen.communicate(input)
            except BaseException:  # as subprocess.run does: no git left running
                popen.kill()
                raise
        proc = subprocess.CompletedProcess(popen.args, popen.returncode, out, err)
        if check and proc.returncode != 0:
            raise LoopError(f"git {args[0]} failed in workspace {self.root}: {_git_error(proc)}")
        return proc

    def _popen(
        self,
        *args: str,
        config: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        stderr: int = subprocess.PIPE,
        bufsize: int = -1,
    ) -> subprocess.Popen[bytes]:
        """Start git in the workspace with pipes to talk to it; one clear error when the
        workspace or git is gone."""
        if not self.root.is_dir():
            raise LoopError(f"workspace directory is gone: {self.root}")
        try:
            return subprocess.Popen(
                [self._git, *_config_args(config), *args],
                cwd=self.root,
                env=self._env if env is None else env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                bufsize=bufsize,
            )
        except FileNotFoundError as exc:
            raise LoopError(_NO_GIT) from exc

    def _require_snapshot(self) -> _Snapshot:
        if self._snapshot is None:
            raise LoopError("workspace has no snapshot yet; call snapshot() first")
        return self._snapshot

    def _store_config(self) -> list[str]:
        """Config for a git command that stores objects. On disk, the objects of one command go
        straight into one pack: writing thousands of loose files (and deleting them on close)
        costs more than hashing them. In memory a loose object is cheaper than bulk
        check-in's per-object pack bookkeeping."""
        return [] if self._in_memory else [_BULK_CHECKIN, "pack.compression=1"]

    def _stage_all(self) -> None:
        """Stage every file of the workspace, ignored ones included, into the private index.

        The index keeps stat data from the previous call, so only changed files are rehashed.
        A nested repository (a directory with its own ``.git``) is staged as the plain files it
        holds; its ``.git`` is never read.
        """
        config = self._store_config()
        for _round in range(8):
            self._mark_nested()
            proc = self._run("add", "-A", "-f", "--ignore-errors", config=config, check=False)
            err = proc.stderr.decode("utf-8", "replace")
            nested = _NESTED_FAILED in err
            embedded = _EMBEDDED_WARNING in err
            if proc.returncode != 0 and not nested:
                raise LoopError(f"git add failed in workspace {self.root}: {_git_error(proc)}")
            if not nested and not embedded:
                return
            before = set(self._nested)
            self._nested |= self._find_nested(gitlinks=embedded)
            if self._nested == before:
                if proc.returncode == 0:
                    return
                raise LoopError(f"git add failed in workspace {self.root}: {_git_error(proc)}")
        raise LoopError(f"nested repositories keep appearing in workspace {self.root}")

    def _store_by_hand(self) -> str | None:
        """First snapshot of a directory that is not a repository's top: every file is read
        and hashed once into one pack, and the private index written with each file's stat
        data (see :mod:`reference_loop.gitstore`). ``None`` when git has to do it (a name git
        might refuse, a file changing while it is read)."""
        if os.path.lexists(self.root / ".git"):
            return None
        pack_dir = os.path.join(self._env["GIT_DIR"], "objects", "pack")
        try:
            stored = gitstore.store_tree(os.fsencode(self.root), pack_dir)
        except gitstore.TreeChanged:
            return None
        except OSError as exc:
            where = os.fsdecode(exc.filename) if exc.filename is not None else str(self.root)
            raise LoopError(f"snapshot failed at {where}: {exc.strerror or exc}") from exc
        if stored is None:
            return None
        gitstore.write_index(self._index, stored.entries)
        self._nested |= stored.nested
        return stored.tree

    def _mark_nested(self) -> None:
        """Put a placeholder entry under each known nested repository, so git's walk sees a
        directory it already tracks and descends into it; ``add -A`` then drops the placeholder
        itself (it is not on disk)."""
        if not self._nested:
            return
        lines = b"".join(
            b"100644 " + _EMPTY_BLOB + b"\t" + os.fsencode(f"{d}/{_PLACEHOLDER}") + b"\0"
            for d in sorted(self._nested)
            if os.path.isdir(self.root / d)
        )
        if lines:
            self._run("update-index", "--add", "-z", "--index-info", input=lines)

    def _find_nested(self, *, gitlinks: bool) -> set[str]:
        """Nested repositories git refused (untracked) or recorded as a gitlink."""
        found: set[str] = set()
        out = self._run("ls-files", "-z", "--others").stdout
        found |= {p.rstrip("/") for p in _split_z(out) if p.endswith("/")}
        if gitlinks:
            found |= self._adopt_gitlinks()
        return {d for d in found if os.path.isdir(self.root / d)}

    def _flagged_by_git(self) -> list[tuple[bytes, bool]]:
        """The entries git trusts without looking (see :class:`gitindex.Index`), for an index
        Python does not parse (version 4)."""
        out = self._run("ls-files", "-z", "--stage", "-v").stdout
        flagged = []
        for m in re.finditer(rb"(?:^|\0)(\S) (\d+) [0-9a-f]+ \d\t([^\0]*)", out):
            tag, mode, path = m.groups()
            if mode == b"160000" or tag.islower() or tag == b"S":
                flagged.append((path, mode == b"160000"))
        return flagged

    def _drop_entries(self, flagged: list[tuple[bytes, bool]]) -> None:
        """Drop the seeded entries git would not check against the disk: assume-unchanged and
        skip-worktree ones (an edit to them would go unseen) and submodules (gitlinks: their
        files are staged one by one instead). The next add hashes those paths afresh."""
        self._nested |= {os.fsdecode(path) for path, gitlink in flagged if gitlink}
        request = b"".join(b"0 " + _ZERO_SHA + b"\t" + path + b"\0" for path, _ in flagged)
        self._run("update-index", "-z", "--index-info", input=request)

    def _adopt_gitlinks(self) -> set[str]:
        """Turn gitlink entries of the index into plain directories to be staged file by file."""
        out = self._run("ls-files", "-z", "--stage").stdout
        links = [
            os.fsdecode(m.group(1))
            for m in re.finditer(rb"(?:^|\0)160000 [0-9a-f]+ \d\t([^\0]*)", out)
        ]
        if links:
            request = b"".join(b"0 " + _ZERO_SHA + b"\t" + os.fsencode(p) + b"\0" for p in links)
            self._run("update-index", "-z", "--index-info", input=request)
        self._nested |= set(links)
        return set(links)

    def _look(self, snap: _Snapshot) -> _Look:
        """The changes since the snapshot: by hand while the private index is the snapshot
        (:attr:`_model`), through git's staging otherwise."""
        model = self._model
        if model is not None:
            look = self._changes_by_hand(snap, model)
            if look is not None:
                return look
        return _Look(self._changes(snap))

    def _changes_by_hand(self, snap: _Snapshot, model: gitindex.Index) -> _Look | None:
        """The changes since the snapshot, with the index left as it is: ``git diff-files``
        names the tracked files that differ from it while a thread lists the new files (as
        :meth:`_stage_changes` does); those files are hashed and stored by hand, and a file
        whose content and mode are the snapshot's (one a restore wrote back) is no change.
        The snapshot's side of each change comes from ``model``. ``None`` when git should
        look instead (what :meth:`_store_files` refuses, an unmerged entry)."""
        proc, look = self._diff_files_beside(lambda: self._new_files(snap))
        try:
            new = look.result()
        except OSError:
            return None  # a directory that cannot be listed: git's walk says what is wrong
        fields = proc.stdout.split(b"\0")
        if fields[-1:] == [b""]:
            fields.pop()
        if proc.returncode != 0 or len(fields) % 2:
            return None
        gone: list[bytes] = []
        for status, path in zip(fields[0::2], fields[1::2], strict=True):
            if status == b"D":
                gone.append(path)
            elif status in (b"M", b"T"):
                new.add(path)
            else:
                return None
        stored = self._store_files(sorted(new), model.path_set)
        if stored is None:
            return None
        stored.update(dict.fromkeys(gone))
        entries: list[_Entry] = []
        sizes: dict[str, int] = {}
        for path in sorted(stored):
            entry, old = stored[path], model.entry(path)
            if old is not None:
                sizes[old[1].hex()] = old[2]
            if entry is not None:
                sizes[entry[3].hex()] = entry[1].st_size
            change = _hand_entry(os.fsdecode(path), old, entry)
            if change is not None:
                entries.append(change)
        return _Look(entries, sizes, lambda subset: self._tree_by_hand(model, stored, subset))

    def _tree_by_hand(
        self,
        model: gitindex.Index,
        stored: Mapping[bytes, gitindex.NewEntry | None],
        entries: list[_Entry],
    ) -> str:
        """The snapshot's tree with just ``entries`` changed (their new content is in
        ``stored``), its new trees written into a pack of their own."""
        changed = {os.fsencode(e.path): stored[os.fsencode(e.path)] for e in entries}
        writer = gitstore.PackWriter(os.path.join(self._env["GIT_DIR"], "objects", "pack"))
        try:
            new = gitindex.rewrite_index(model, changed, writer.add_tree, trees_only=True)
            if new is None:  # cannot happen for changes git's own diff listed; git decides
                writer.abort()
                snap = self._require_snapshot()
                return self._subset_tree(snap.tree, entries)
            writer.finish()
        except BaseException:
            writer.abort()
            raise
        return new.tree.hex()

    def _changes(self, snap: _Snapshot) -> list[_Entry]:
        """Stage the current state; the raw changes from the snapshot, every path included."""
        self._model = None  # the private index is about to hold the current state
        self._stage_changes(snap)
        entries = self._raw_changes(snap.tree)
        # A repository git recorded as a gitlink without saying so: stage its files.
        if any(e.dst_mode == _GITLINK for e in entries) and self._adopt_gitlinks():
            self._stage_all()
            entries = self._raw_changes(snap.tree)
        # A deleted file is gone from the index but still a snapshot name: should it come back
        # (by the attempt, or by a restore), the next scan must stage it by name.
        self._pending |= {os.fsencode(e.path) for e in entries if e.status == "D"}
        return entries

    def _stage_changes(self, snap: _Snapshot) -> None:
        """Stage what changed since the snapshot without walking the whole tree.

        ``git add -u`` stats the files the index tracks (every file of the snapshot); a new
        file always moves its directory's ctime, so new files are found by listing only the
        directories whose ctime moved, in a thread beside the add, and their files are staged
        by name with the paths a restore wrote back. This is ``git add -A``'s result without
        git's read of every directory.
        """
        look = _InThread(lambda: self._new_files(snap))
        try:
            proc = self._run(
                "add", "-u", "--ignore-errors", config=self._store_config(), check=False
            )
        except BaseException:
            look.join()
            raise
        try:
            new = look.result()
        except OSError:
            new = None  # a directory that cannot be listed: git's walk says what is wrong
        staged = proc.returncode == 0 and new is not None
        if staged and (new or self._pending):
            staged = self._stage_paths(sorted((new or set()) | self._pending))
        if not staged:
            self._stage_all()
        self._pending.clear()

    def _stage_paths(self, paths: Iterable[bytes]) -> bool:
        """Stage these files by name (a path no longer there leaves the index); ``False``
        when git refused one (then a full ``git add`` names the problem)."""
        request = b"".join(p + b"\0" for p in paths)
        args = ("update-index", "--add", "--remove", "--replace", "-z", "--stdin")
        config = self._store_config()
        proc = self._run(*args, input=request, config=config, check=False)
        # update-index skips a path its checks refuse (".GIT", "git~1") with a warning and
        # exit 0: the file would silently be missing from the snapshot, and never restored.
        return proc.returncode == 0 and b"Ignoring path " not in proc.stderr

    def _new_files(self, snap: _Snapshot) -> set[bytes]:
        """Files and symlinks the snapshot did not have: in directories whose ctime moved
        (where a new one may be), and everything in directories the snapshot did not have."""
        root = os.fsencode(self.root)
        known = snap.files
        found: set[bytes] = set()
        todo: list[bytes] = []
        for d, (ino, ctime, seen) in snap.dirs.items():
            path = os.fsencode(d)
            try:
                st = os.lstat(root + b"/" + path if path else root)
            except (FileNotFoundError, NotADirectoryError):
                continue  # its files are gone: the add drops them
            if stat.S_ISDIR(st.st_mode) and _moved(st, ino, ctime, seen):
                todo.append(path)
        while todo:
            here = todo.pop()
            prefix = here + b"/" if here else b""
            try:
                it = os.scandir(root + b"/" + here if here else root)
            except (FileNotFoundError, NotADirectoryError):
                continue
            with it:
                for entry in it:
                    name = entry.name
                    if name == b".git":
                        continue  # never staged; restore removes one the attempt made
                    if entry.is_dir(follow_symlinks=False):
                        if os.fsdecode(prefix + name) not in snap.dirs:
                            todo.append(prefix + name)
                    elif (entry.is_file(follow_symlinks=False) or entry.is_symlink()) and (
                        prefix + name not in known
                    ):
                        found.add(prefix + name)
        return found

    def _write_tree(self) -> str:
        # --missing-ok: git otherwise looks up every blob of each tree it rewrites (20,000
        # lookups when every directory holds a change: most of write-tree's time). Every blob
        # the index names was written by an add, or is the user's index's, which the clean
        # first snapshot trusts the same way (it is the user's cached tree).
        return self._run("write-tree", "--missing-ok").stdout.decode().strip()

    def _raw_changes(self, tree: str) -> list[_Entry]:
        args = ("--raw", "-z", "--no-abbrev", "--no-renames", "--no-ext-diff")
        return _parse_raw(self._run("diff-index", "--cached", *args, tree).stdout)[0]

    def _patch(
        self,
        snap: _Snapshot,
        entries: list[_Entry],
        shown: list[_Entry] | None = None,
        sizes: dict[str, int] | None = None,
        tree: str | None = None,
        trees: Callable[[list[_Entry]], str] | None = None,
    ) -> Diff:
        """The patch of the changes not hidden by an ignore rule, with renames found.

        Files above :data:`BIG_FILE_BYTES` get git's ``Binary files ... differ`` line instead of
        their content, so a huge file is never read into memory to describe it. ``tree`` is
        the current state's tree when the caller has it; ``trees`` builds the tree of a set
        of changes (when the private index does not hold them).
        """
        if not entries:
            return Diff(text="", files=[], raw=b"")
        if shown is None:
            shown = self._not_ignored_entries(entries)
        kept = {id(e) for e in shown}
        hidden = [FileChange(e.path, e.status) for e in entries if id(e) not in kept]
        if not shown:
            return Diff(text="", files=[], raw=b"", hidden=hidden)
        if sizes is None:
            sizes = self._blob_sizes(shown)
        big = {e.path for e in shown if _largest(e, sizes) > BIG_FILE_BYTES}
        small = [e for e in shown if e.path not in big]
        out = b""
        # Every blob read whole here is small, so git may map the packs in large windows.
        wide = _WIDE_WINDOWS if not big else ()
        if small and len(small) == len(entries) and tree is None and trees is not None:
            tree = trees(small)
        if small and len(small) == len(entries) and tree is not None:
            no_index = {**self._env, "GIT_INDEX_FILE": os.path.join(self._tmp, "no-index")}
            pair = ("diff-tree", "-r", *_PATCH_ARGS, "-M", "--binary", snap.tree, tree)
            out = self._run(*pair, config=wide, env=no_index).stdout
        elif small and len(small) == len(entries):
            args = ("diff-index", "--cached", *_PATCH_ARGS, "-M", "--binary", snap.tree)
            out = self._run(*args, config=wide).stdout
        elif small:
            out = self._diff_subset(snap.tree, small, ["-M", "--binary"], trees)
        if big:
            big_out = self._diff_subset(snap.tree, [e for e in shown if e.path in big], [], trees)
            out = _merge_raw_patches(out, big_out)
        found, pos = _parse_raw(out)
        patch_bytes = out[pos:]
        files = [
            FileChange(e.new_path, "R", e.path) if e.new_path else FileChange(e.path, e.status)
            for e in found
        ]
        return Diff(
            text=patch_bytes.decode("utf-8", "replace"), files=files, raw=patch_bytes, hidden=hidden
        )

    def _diff_subset(
        self,
        tree: str,
        entries: list[_Entry],
        extra: list[str],
        trees: Callable[[list[_Entry]], str] | None = None,
    ) -> bytes:
        """The patch from ``tree`` to ``tree`` plus just ``entries``' changes (that tree made
        by ``trees`` when given, else by :meth:`_subset_tree`): two trees are compared
        without looking at the work tree, so a large file is never read."""
        other = trees(entries) if trees is not None else self._subset_tree(tree, entries)
        renames = extra if extra else ["--no-renames"]
        return self._run("diff-tree", "-r", *_PATCH_ARGS, *renames, tree, other).stdout

    def _subset_tree(self, tree: str, entries: list[_Entry]) -> str:
        """``tree`` with just ``entries``' changes, built in a temporary index (no path list
        has to fit on a command line)."""
        index = os.path.join(self._tmp, "subset-index")
        env = {**self._env, "GIT_INDEX_FILE": index}
        try:
            self._run("read-tree", tree, env=env)
            request = b"".join(
                (
                    b"0 " + _ZERO_SHA
                    if e.status == "D"
                    else e.dst_mode.encode() + b" " + e.dst_sha.encode()
                )
                + b"\t"
                + os.fsencode(e.path)
                + b"\0"
                for e in entries
            )
            self._run("update-index", "-z", "--index-info", input=request, env=env)
            return self._run("write-tree", env=env).stdout.decode().strip()
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(index)

    def _not_ignored_entries(self, entries: list[_Entry]) -> list[_Entry]:
        return self._start_ignore_check(entries)()

    def _start_ignore_check(self, entries: list[_Entry]) -> Callable[[], list[_Entry]]:
        """Start ``git check-ignore`` on the entries' paths; the call returned waits for it
        and gives the entries no ignore rule hides. The process starts before this returns,
        so the caller's own work (holding the GIL) does not delay it."""
        # check-ignore refuses a path beyond a symlink: a snapshot file below a directory the
        # attempt replaced by one. Such a file is always shown: the patch deletes it anyway
        # (the symlink takes its directory's place, which a patch that kept it could not do).
        beyond = self._beyond_symlinks(e.path for e in entries)
        asked = [e for e in entries if e.path not in beyond] if beyond else entries
        if not asked:
            return lambda: entries
        request = b"".join(os.fsencode(e.path) + b"\0" for e in asked)
        # check-ignore takes paths, not pathspecs, and refuses the literal-pathspec switch.
        env = {k: v for k, v in self._env.items() if k != "GIT_LITERAL_PATHSPECS"}
        proc = self._popen("check-ignore", "-z", "--stdin", "--no-index", env=env)
        talk = _InThread(lambda: proc.communicate(request))

        def shown() -> list[_Entry]:
            out, err = talk.result()
            if proc.returncode not in (0, 1):
                done = subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
                raise LoopError(
                    f"git check-ignore failed in workspace {self.root}: {_git_error(done)}"
                )
            ignored = set(_split_z(out))
            return [e for e in entries if e.path not in ignored]

        return shown

    def _beyond_symlinks(self, paths: Iterable[str]) -> set[str]:
        """The paths with a symlink among their leading components (each directory is looked
        at once)."""
        real: dict[str, bool] = {"": True}
        found: set[str] = set()
        for path in paths:
            here = ""
            for part in path.split("/")[:-1]:
                here = f"{here}/{part}" if here else part
                if here not in real:
                    real[here] = not os.path.islink(self.root / here)
                if not real[here]:
                    found.add(path)
                    break
        return found

    def _blob_sizes(self, entries: list[_Entry]) -> dict[str, int]:
        """Blob id -> size, for every blob the entries name (one ``cat-file --batch-check``).

        Only object headers are read, so the packs are mapped in large windows: with git's
        small windows (kept for reading large blobs), looking up thousands of objects spread
        over a large pack spends more time mapping and unmapping than reading.
        """
        shas = {s for e in entries for s in (e.src_sha, e.dst_sha) if s != _ZERO_HEX}
        if not shas:
            return {}
        request = "".join(f"{s}\n" for s in sorted(shas)).encode()
        out = self._run(
            "cat-file",
            "--batch-check=%(objectname) %(objectsize)",
            input=request,
            config=_WIDE_WINDOWS,
        )
        sizes = {}
        for line in out.stdout.decode().splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[1].isdigit():
                sizes[parts[0]] = int(parts[1])
        return sizes

    def _restore(
        self,
        snap: _Snapshot,
        entries: list[_Entry],
        sizes: dict[str, int] | None = None,
        blobs: Mapping[str, bytes] | None = None,
    ) -> None:
        try:
            touched = self._revert(snap, entries, sizes, blobs)
            touched += self._fix_directories(snap)
            self.last_restored = touched
        except OSError as exc:
            # e.g. a directory the attempt made unwritable: say where, in one line.
            where = os.fsdecode(exc.filename) if exc.filename is not None else str(self.root)
            raise LoopError(f"restore failed at {where}: {exc.strerror or exc}") from exc

    def _revert(
        self,
        snap: _Snapshot,
        entries: list[_Entry],
        sizes: dict[str, int] | None = None,
        blobs: Mapping[str, bytes] | None = None,
    ) -> list[str]:
        """Undo the raw diff entries in the work tree, writing snapshot blobs from the store.

        The private index is left holding the attempt's entries for these paths: their stat data
        no longer matches, so the next scan rehashes just them (a few files) and the index
        needs no extra write here.
        """
        remove: list[str] = []
        write: dict[str, tuple[str, str]] = {}  # path -> (mode, blob id) at the snapshot
        for e in entries:
            if e.status == "A":
                remove.append(e.path)
            else:  # D, M, T
                if e.status == "T":
                    remove.append(e.path)
                write[e.path] = (e.src_mode, e.src_sha)
        # Remove what the snapshot does not have first, so a path that changed between file and
        # directory is free before the snapshot's version is written.
        for path in remove:
            self._remove_path(path, snap)
        self._pending |= {os.fsencode(p) for p, (mode, _sha) in write.items() if mode != _GITLINK}
        if write:
            # Blobs known to be small may be read through large pack windows.
            small = sizes is not None and all(
                sizes.get(sha, BIG_FILE_BYTES + 1) <= BIG_FILE_BYTES for _m, sha in write.values()
            )
            self._write_from_store(write, wide=small, blobs=blobs)
        return sorted(set(remove) | set(write))

    def _fetch_blobs(self, shas: Sequence[str]) -> dict[str, bytes]:
        """Small blobs read whole, through one ``git cat-file --batch``."""
        request = "".join(f"{sha}\n" for sha in shas).encode()
        out = self._run("cat-file", "--batch", input=request, config=_WIDE_WINDOWS).stdout
        blobs: dict[str, bytes] = {}
        pos = 0
        for sha in shas:
            end = out.index(b"\n", pos)
            header = out[pos:end].split()
            if len(header) != 3:
                shown = b" ".join(header).decode("utf-8", "replace") or sha
                raise LoopError(f"snapshot object missing from the private store: {shown}")
            size = int(header[2])
            blobs[sha] = out[end + 1 : end + 1 + size]
            pos = end + 2 + size
        return blobs

    def _write_from_store(
        self,
        write: dict[str, tuple[str, str]],
        *,
        wide: bool = False,
        blobs: Mapping[str, bytes] | None = None,
    ) -> None:
        """Write each path's snapshot blob: from ``blobs`` when it holds them all (small ones
        read beforehand), otherwise streamed from ``git cat-file --batch`` (one process, one
        object at a time), so a large file never sits in memory whole."""
        items = sorted(write.items())
        # Directories checked (or made) real by this restore: nothing else writes the work tree
        # meanwhile, so each is looked at once, not once per file below it.
        made: set[str] = set()
        for path, (mode, _sha) in items:
            if mode == _GITLINK:
                self._make_parents(path, made)
                _clear(os.fsencode(self.root / path))
                os.mkdir(self.root / path)  # what git checks out for a nested repository
        wanted = [(p, m, s) for p, (m, s) in items if m != _GITLINK]
        if not wanted:
            return
        root = os.fsencode(self.root) + b"/"
        if blobs is not None and all(sha in blobs for _p, _m, sha in wanted):
            for path, mode, sha in wanted:
                self._make_parents(path, made)
                data = blobs[sha]
                self._put(root + os.fsencode(path), mode, io.BytesIO(data), len(data))
            return
        config = _WIDE_WINDOWS if wide else ()
        proc = self._popen(
            "cat-file", "--batch", config=config, stderr=subprocess.DEVNULL, bufsize=_CHUNK
        )
        assert proc.stdin is not None and proc.stdout is not None
        # All requests go in from a thread while objects are read here: no round trip per file.
        feeder = threading.Thread(
            target=_feed, args=(proc.stdin, b"".join(f"{s}\n".encode() for _p, _m, s in wanted))
        )
        feeder.start()
        try:
            for path, mode, sha in wanted:
                header = proc.stdout.readline().split()
                if len(header) != 3:
                    shown = b" ".join(header).decode("utf-8", "replace") or sha
                    raise LoopError(f"snapshot object missing from the private store: {shown}")
                self._make_parents(path, made)
                self._put(root + os.fsencode(path), mode, proc.stdout, int(header[2]))
                proc.stdout.read(1)  # the newline after each object
        finally:
            proc.stdout.close()
            proc.kill()  # done or failed: a feeder blocked on a full pipe gets EPIPE
            feeder.join()
            proc.wait()

    def _put(self, full: bytes, mode: str, src: IO[bytes], size: int) -> None:
        """Put a blob of ``size`` bytes from ``src`` at ``full`` as a symlink or a file."""
        if mode == _SYMLINK:
            target = src.read(size)
            _clear(full)
            os.symlink(target, full)
        else:
            self._write_file(full, mode == "100755", src, size)

    def _write_file(self, full: bytes, executable: bool, src: IO[bytes], size: int) -> None:
        """Put ``size`` bytes from ``src`` at ``full``. A regular file with one link is
        overwritten in place (cheaper than unlink + create); anything else (a symlink, a
        directory, a FIFO, a hard link shared with a file elsewhere) is replaced, never written
        through."""
        perm = (0o777 if executable else 0o666) & ~self._umask
        fd = -1
        st: os.stat_result | None = None
        with contextlib.suppress(OSError):
            fd = os.open(full, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        if fd >= 0:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
                os.close(fd)
                fd = -1
            elif stat.S_IMODE(st.st_mode) != perm:
                os.fchmod(fd, perm)
        if fd < 0:
            _clear(full)
            # O_EXCL|O_NOFOLLOW: a fresh file, never through a link; umask applies, as for git.
            fd = os.open(full, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, perm)
            st = None
        try:
            left = size
            while left:
                chunk = src.read(min(left, _CHUNK))
                if len(chunk) != min(left, _CHUNK):
                    raise LoopError("the private store ended a blob early")
                _write_all(fd, chunk)
                left -= len(chunk)
            if st is not None and st.st_size > size:
                os.ftruncate(fd, size)
        finally:
            os.close(fd)

    def _make_parents(self, path: str, made: set[str] | None = None) -> None:
        """Create the leading directories of ``path``; like git, replace any leading component
        that is not a real directory (a symlink would let a write land outside the workspace).
        ``made`` holds directories already checked by the caller's current pass."""
        parent = path.rpartition("/")[0]
        if not parent or (made is not None and parent in made):
            return
        current = ""
        for part in parent.split("/"):
            current = f"{current}/{part}" if current else part
            if made is not None and current in made:
                continue
            full = self.root / current
            try:
                st = os.lstat(full)
            except FileNotFoundError:
                os.mkdir(full)
            else:
                if not stat.S_ISDIR(st.st_mode):
                    os.unlink(full)
                    os.mkdir(full)
            if made is not None:
                made.add(current)

    def _remove_path(self, path: str, snap: _Snapshot) -> None:
        # A file, a symlink, or a nested repository (gitlink) the attempt created.
        _clear(os.fsencode(self.root / path))
        # Drop parent directories the removal left empty, unless the snapshot had them.
        parent = path.rpartition("/")[0]
        while parent and parent not in snap.dirs:
            try:
                os.rmdir(self.root / parent)
            except OSError:
                break
            parent = parent.rpartition("/")[0]

    def _scan_dirs(self, *, files: bool = False) -> _Scan:
        """One pass over the directories: every directory (-> inode, ctime, when read), those
        with no file anywhere below (git does not record them), every ``.git`` entry, and
        with ``files`` every file and symlink."""
        now = time.time_ns()
        root = os.fsencode(self.root)
        dirs: dict[str, tuple[int, int, int]] = {}
        has_file: dict[str, bool] = {}
        gits: set[str] = set()
        st = os.lstat(root)
        dirs[""] = (st.st_ino, st.st_ctime_ns, now)
        order = [""]
        todo = [b""]
        listed: list[tuple[bytes, list[bytes]]] | None = [] if files else None
        # Bytes names, and only directories get a path built: the loop runs once per file.
        while todo:
            d = todo.pop()
            found = False
            prefix = d + b"/" if d else b""
            names: list[bytes] = []
            if listed is not None:
                listed.append((prefix, names))
            with os.scandir(root + b"/" + d if d else root) as it:
                for entry in it:
                    name = entry.name
                    if name == b".git":
                        gits.add(os.fsdecode(prefix + name))
                    elif entry.is_dir(follow_symlinks=False):
                        rel = prefix + name
                        est = entry.stat(follow_symlinks=False)
                        key = os.fsdecode(rel)
                        dirs[key] = (est.st_ino, est.st_ctime_ns, now)
                        order.append(key)
                        todo.append(rel)
                    elif listed is not None:
                        if entry.is_file(follow_symlinks=False) or entry.is_symlink():
                            names.append(name)
                            found = True
                    elif not found and (entry.is_file(follow_symlinks=False) or entry.is_symlink()):
                        found = True
            has_file[os.fsdecode(d)] = found
        # Deepest first, so a directory knows whether anything below it holds a file.
        for key in sorted(order, key=lambda p: p.count("/"), reverse=True):
            if key and has_file[key]:
                has_file[key.rpartition("/")[0]] = True
        empty = {d for d in order if d and not has_file[d]}
        return _Scan(dirs, empty, gits, listed)

    def _stat_dirs(self, dirs: Iterable[str]) -> dict[str, tuple[int, int, int]]:
        now = time.time_ns()
        out = {}
        for d in dirs:
            try:
                st = os.lstat(self.root / d)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                out[d] = (st.st_ino, st.st_ctime_ns, now)
        return out

    def _fix_directories(self, snap: _Snapshot) -> list[str]:
        """Recreate the snapshot's empty dirs; remove directories and ``.git`` entries the
        attempt created, whatever they hold (ignored files included)."""
        touched: list[str] = []
        for d in sorted(snap.empty_dirs):
            if not os.path.isdir(self.root / d):
                self._make_parents(d + "/x")
                os.makedirs(self.root / d, exist_ok=True)
                touched.append(d + "/")
        moved, new, _missing = self._dir_changes(snap)
        for d in sorted(new, key=lambda p: p.count("/"), reverse=True):
            _clear(os.fsencode(self.root / d))
            touched.append(d + "/")
        snap.dirs.update(self._stat_dirs(moved))
        return touched

    def _dir_changes(self, snap: _Snapshot) -> tuple[list[str], list[str], bool]:
        """(directories whose ctime moved, new directories and ``.git`` entries, whether a
        snapshot directory is missing). Only directories whose ctime moved are listed: a new
        entry always changes its parent's ctime."""
        moved: list[str] = []
        new: list[str] = []
        missing = False
        for d, (ino, ctime, seen) in list(snap.dirs.items()):
            try:
                st = os.lstat(self.root / d)
            except OSError:
                missing = True
                continue
            if not _moved(st, ino, ctime, seen):
                continue
            moved.append(d)
            if not stat.S_ISDIR(st.st_mode):
                missing = True
                continue
            with os.scandir(self.root / d) as it:
                for entry in it:
                    rel = f"{d}/{entry.name}" if d else entry.name
                    if entry.name == ".git":
                        if rel not in snap.gits:
                            new.append(rel)  # a repository the attempt made, file or dir
                    elif entry.is_dir(follow_symlinks=False) and rel not in snap.dirs:
                        # git saw every directory holding files; one it did not see either is
                        # new or holds only what git skips (FIFOs, sockets): keep the latter.
                        born = entry.stat(follow_symlinks=False).st_ctime_ns
                        if born >= snap.started - _RACY_NS:
                            new.append(rel)
        return moved, new, missing


_NO_GIT = "git is not installed or not on PATH; the workspace needs it to snapshot and restore"
# Directories modified less than this long before we recorded them are listed on every restore
# (on a filesystem whose timestamps are whole seconds; one with fractions: the second figure).
_RACY_NS = 2_000_000_000
_RACY_FINE_NS = 50_000_000
# A changed file larger than this is named in the patch ("Binary files ... differ"), not inlined.
BIG_FILE_BYTES = 8 * 1024 * 1024
_PATCH_ARGS = ("--raw", "-z", "--no-abbrev", "--no-ext-diff", "--no-textconv", "-p", "--no-color")
_BULK_CHECKIN = "core.bigFileThreshold=1"
# From this many changed paths on, diff_and_restore writes a tree and restores beside the patch.
_RESTORE_BESIDE_PATCH = 256
_MALLOC_TUNABLES = "glibc.malloc.trim_threshold=268435456:glibc.malloc.mmap_threshold=268435456"
_CHUNK = 1 << 20
# Below this many bytes in all, the blobs a restore writes are read while the patch is made.
_PREFETCH_BYTES = 16 << 20
_TOP_DIRS = ("--show-toplevel", "--git-dir", "--git-common-dir")
# Config lines after which git, not the layout, says where a repository's work tree and
# objects are: a moved or bare work tree, included files, extensions (object format...).
_UNPLAIN_CONFIG = re.compile(
    rb"(?im)^\s*(?:worktree\b|\[\s*(?:include|extensions)|"
    rb"bare[ \t]*(?:$|=[ \t]*(?![ \t]|(?:false|no|off|0)[ \t]*(?:[#;].*)?$)))"
)
# Attributes under which git's checkout writes other bytes than the blob's into every file they
# name: CRLF line ends, $Id$ expanded, a smudge filter, another encoding (set, not "-ident").
# text, text=auto and eol=lf only normalize what is added: a file checked out under them is its
# blob's bytes, so the user's index is trusted as git trusts it.
_CONVERTING_ATTRIBUTE = re.compile(
    rb"(?m)(?:^|[ \t])(?:eol=crlf|ident|filter=\S+|working-tree-encoding=\S+)(?=[ \t\r]|$)"
)
_OBJECT_FORMAT = re.compile(rb"(?im)^\s*objectformat\s*=\s*\"?([^\s\"#;]*)")
# Config under which every text file is checked out with CRLF line ends (autocrlf=true, eol=crlf;
# autocrlf=input only normalizes what is added), or attributes come from elsewhere.
_CONVERTING_CONFIG = re.compile(
    rb"(?im)^\s*(?:autocrlf[ \t]*(?:$|=[ \t]*(?![ \t]|(?:false|no|off|0|input)[ \t]*(?:[#;].*)?$))"
    rb"|eol[ \t]*=[ \t]*\"?crlf\b|attributesfile\b)"
)
_PLACEHOLDER = ".reference-loop-nested-repository"
_EMPTY_BLOB = b"e69de29bb2d1d6434b8b29ae775a204e9942f391"
_ZERO_SHA = b"0" * 40
_ZERO_HEX = "0" * 40
# Pack windows for processes that read only headers or only blobs known to be small.
_WIDE_WINDOWS = ("core.packedGitWindowSize=1g", "core.packedGitLimit=8g")
_NESTED_FAILED = "does not have a commit checked out"
_EMBEDDED_WARNING = "adding embedded git repository"


class _InThread(Generic[_T]):
    """Run ``fn`` in a thread now; :meth:`result` waits and returns it (or raises its error)."""

    def __init__(self, fn: Callable[[], _T]) -> None:
        self._fn = fn
        self._value: _T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        try:
            self._value = self._fn()
        except BaseException as exc:  # handed to the caller by result()
            self._error = exc

    def join(self) -> None:
        self._thread.join()

    def result(self) -> _T:
        self._thread.join()
        if self._error is not None:
            raise self._error
        return cast(_T, self._value)


@dataclass
class _TreeLook:
    """What the first snapshot of a repository's top learns beside its add: the user's index,
    the pass over the directories, and from both the files the index does not track."""

    index: gitindex.Index | None
    scan: _Scan
    trusted: set[bytes] | None = None  # the index paths git checks against the disk
    # The files the index does not track; None when not compared: with as many files as
    # trusted paths and no entry removed by the add, every file is trusted.
    untracked: list[bytes] | None = None
    files: set[bytes] | None = None  # trusted paths and untracked files, when there are some
    # The untracked files' new index entries, when the thread stored them already.
    stored: dict[bytes, gitindex.NewEntry | None] | None = None
    # A .gitattributes in the tree converts (eol, filters, ident): no entry is trusted.
    converts: bool = False

    @classmethod
    def of(cls, index: gitindex.Index | None, scan: _Scan) -> _TreeLook:
        if index is None or scan.files is None:
            return cls(index, scan)
        trusted = (
            index.path_set.difference(path for path, _gitlink in index.flagged)
            if index.flagged
            else index.path_set
        )
        if scan.file_count() == len(trusted):
            return cls(index, scan, trusted)
        untracked = [path for path in scan.file_paths() if path not in trusted]
        files = trusted.union(untracked) if untracked else None
        return cls(index, scan, trusted, untracked, files)


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


def _plain_layout(root: str) -> tuple[str, str] | None:
    """(git dir, common dir) of the repository whose top is ``root``, read from the layout
    when it is the plain one: a ``.git`` directory or gitfile, owned by this user, whose
    config neither moves the work tree, makes it bare, includes other files nor names an
    extension. ``None`` leaves the question to ``git rev-parse``."""
    dotgit = os.path.join(root, ".git")
    try:
        st = os.lstat(dotgit)
        if stat.S_ISDIR(st.st_mode):
            gitdir = dotgit
        elif stat.S_ISREG(st.st_mode) and st.st_size < 4096:
            with open(dotgit, "rb") as fh:
                text = fh.read()
            target = text[8:].rstrip(b"\r\n") if text.startswith(b"gitdir: ") else b""
            if not target or b"\n" in target:
                return None
            gitdir = os.path.normpath(os.path.join(root, os.fsdecode(target)))
        else:
            return None
        if os.path.lexists(os.path.join(gitdir, "commondir")):
            return None  # a linked worktree
        with open(os.path.join(gitdir, "config"), "rb") as fh:
            config = fh.read()
        owner = os.geteuid()
        if not os.path.isfile(os.path.join(gitdir, "HEAD")) or any(
            os.stat(p).st_uid != owner for p in (root, gitdir)
        ):
            return None
    except OSError:
        return None
    if _UNPLAIN_CONFIG.search(config):
        return None
    return gitdir, gitdir


def _converting_attributes(path: str | bytes) -> bool:
    """Whether the attributes file at ``path`` (if any) sets an attribute under which a file
    checked out is not its blob's bytes (CRLF line ends, a filter, ``$Id$``, an encoding)."""
    try:
        with open(path, "rb") as fh:
            text = fh.read()
    except OSError:
        return False
    return _CONVERTING_ATTRIBUTE.search(text) is not None


def _other_object_format(common: str) -> bool:
    """Whether the repository's objects are not SHA-1 (``extensions.objectFormat``)."""
    try:
        with open(os.path.join(common, "config"), "rb") as fh:
            config = fh.read()
    except OSError:
        return False
    return any(value.lower() != b"sha1" for value in _OBJECT_FORMAT.findall(config))


def _user_converts(gitdir: str, common: str) -> bool:
    """Whether the user's git may have checked files out (or added them) converted: then a
    stat-clean entry's blob is not the file's bytes, and the user's index cannot be trusted.
    Reads the repository's, global and system config and attributes files (not the tree's
    ``.gitattributes``, which the first snapshot's pass over the directories finds)."""
    home = os.path.expanduser("~")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    configs = (
        os.path.join(common, "config"),
        os.path.join(home, ".gitconfig"),
        os.path.join(xdg, "git", "config"),
        "/etc/gitconfig",
    )
    for path in configs:
        try:
            with open(path, "rb") as fh:
                if _CONVERTING_CONFIG.search(fh.read()):
                    return True
        except OSError:
            continue
    attributes = (
        os.path.join(gitdir, "info", "attributes"),
        os.path.join(common, "info", "attributes"),
        os.path.join(xdg, "git", "attributes"),
        "/etc/gitattributes",
    )
    return any(_converting_attributes(path) for path in attributes)


def _config_args(config: Iterable[str]) -> list[str]:
    return [arg for item in config for arg in ("-c", item)]


def _largest(entry: _Entry, sizes: Mapping[str, int]) -> int:
    """The larger of the entry's two blob sizes (a gitlink's commit has none: 0)."""
    return max(sizes.get(entry.src_sha, 0), sizes.get(entry.dst_sha, 0))


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _feed(pipe: IO[bytes], data: bytes) -> None:
    """Write ``data`` to a child's stdin and close it; a child that exited early is fine."""
    with contextlib.suppress(OSError):
        pipe.write(data)
    with contextlib.suppress(OSError):
        pipe.close()


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _git_error(proc: subprocess.CompletedProcess[bytes]) -> str:
    msg = proc.stderr.decode("utf-8", "replace").strip().splitlines()
    # git ends with a generic "fatal: adding files failed"; the cause is the first error.
    errors = [line for line in msg if line.startswith("error:")]
    return (errors or msg or [f"exit {proc.returncode}"])[0 if errors else -1]


def _cfg_path(path: str) -> str:
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _split_z(data: bytes) -> list[str]:
    return [os.fsdecode(p) for p in data.split(b"\0") if p]


def _parse_raw(data: bytes) -> tuple[list[_Entry], int]:
    """``git diff --raw -z --no-abbrev`` records -> (entries, offset where the patch starts).

    Parsed by position, not by splitting on NUL: a patch of a "text" file may contain NULs.
    """
    entries, raw_end = _parse_raw_records(data)
    # The raw block's terminator before the patch.
    return entries, raw_end + 1 if data.startswith(b"\0", raw_end) else raw_end


def _parse_raw_records(data: bytes) -> tuple[list[_Entry], int]:
    entries: list[_Entry] = []
    pos = 0
    while data.startswith(b":", pos):
        end = data.index(b"\0", pos)
        src_mode, dst_mode, src_sha, dst_sha, status = data[pos + 1 : end].decode().split()
        pos = end + 1
        paths = []
        for _ in range(2 if status[0] in "RC" else 1):
            end = data.index(b"\0", pos)
            paths.append(os.fsdecode(data[pos:end]))
            pos = end + 1
        new_path = paths[1] if len(paths) == 2 else None
        entries.append(_Entry(status[0], src_mode, src_sha, paths[0], new_path, dst_mode, dst_sha))
    return entries, pos


def _merge_raw_patches(first: bytes, second: bytes) -> bytes:
    """Two ``--raw -z -p`` outputs as one: the raw records of both, then both patches."""
    _a, a_end = _parse_raw_records(first)
    _b, b_end = _parse_raw_records(second)
    _a, a_patch = _parse_raw(first)
    _b, b_patch = _parse_raw(second)
    return first[:a_end] + second[:b_end] + b"\0" + first[a_patch:] + second[b_patch:]


def _clear(path: bytes) -> None:
    """Remove whatever is at ``path`` (file, symlink, or a directory in the way), if anything."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)
