"""Snapshot a directory, diff it against the snapshot, and restore it byte-exactly.

The loop lets an attempter edit a workspace freely, then needs (1) the *real* change it made and
(2) the workspace put back exactly as it was. Both come from git's object store, used through a
private ``GIT_DIR``/``GIT_INDEX_FILE`` in a temp directory outside the workspace: it works in any
directory (inside or outside a user's repository) and never reads or writes the user's index,
refs, stash or config. The private index is kept between calls so git's stat cache makes every
scan cost what ``git status`` costs, and restore only touches the paths that changed.

``Workspace`` is the contract; it is built from one layer per concept (``privategit``, ``scan``,
``staging``, ``restore``, ``fast``), and ``engine`` chooses whether the hand-written paths of
``fast`` run in front of git's own staging.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
import time
import weakref
from collections.abc import Callable, Collection, Sequence
from pathlib import Path

from reference_loop._workspace import gitindex, seal, storetrash
from reference_loop._workspace.engines import engine_name
from reference_loop._workspace.fast import FastPaths
from reference_loop._workspace.gitdirs import GitDirs
from reference_loop._workspace.gitio import (
    _MALLOC_TUNABLES,
    _NO_GIT,
    _PATCH_ARGS,
    _PREFETCH_BYTES,
    _RESTORE_BESIDE_PATCH,
    _SAFE_ENV,
    _WIDE_WINDOWS,
    _ZERO_HEX,
    BIG_FILE_BYTES,
    _current_umask,
    _InThread,
    _largest,
    _merge_raw_patches,
    _parse_raw,
)
from reference_loop._workspace.limits import Limits
from reference_loop._workspace.records import Diff, FileChange, Refused, _Entry, _Look, _Snapshot
from reference_loop.errors import LoopError

# Where the copies of the tree's .git entries go inside the private store.
_GITDIRS = "gitdirs"

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


class Workspace(FastPaths):
    """Snapshot/diff/restore of the directory ``root`` through a private git object store.

    ``ignore`` adds gitignore-style patterns to :data:`DEFAULT_IGNORE` (``default_ignore=False``
    drops the defaults); the workspace's own ``.gitignore`` files apply too. Ignored paths are
    left out of the *diff* only: the snapshot holds every file, so a restore also undoes what an
    attempt did to ignored paths (a planted ``.pyc``, an edited ``.venv``). Use as a context
    manager, or call :meth:`close`.

    ``engine`` picks how files are stored and looked at (``engines.ENGINES``; default: the
    ``REFERENCE_LOOP_WORKSPACE`` environment variable, else ``engines.DEFAULT_ENGINE``). Both
    give the same snapshots, diffs and restores; an unknown name is a ``LoopUsageError``.
    """

    def __init__(
        self,
        root: Path,
        *,
        ignore: Sequence[str] = (),
        default_ignore: bool = True,
        engine: str | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.engine = engine_name(engine)
        self.limits = limits if limits is not None else Limits()
        # The files the current look refused unread (see ``limits``).
        self._refused: list[Refused] = []
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
            **_SAFE_ENV,
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
        # Every .git of the tree, copied beside the snapshot and put back by every restore.
        self._gitdirs = GitDirs(str(self.root), os.path.join(self._tmp, _GITDIRS))
        # The store as the workspace last left it (the copies of .git sealed apart).
        self._sealed: dict[bytes, tuple[int, int, int, int, int]] | None = None
        self._sealed_copies: dict[bytes, tuple[int, int, int, int, int]] | None = None
        try:
            self._init_repo(gitdir)
            self.seeded = self._seed_from_user_repo(gitdir)
            self._seal()
        except BaseException:
            self.close()
            raise

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
        """Record the current state; return its tree id. A later snapshot replaces the earlier.

        Every ``.git`` entry of the tree is copied into the private store too (``gitdirs``)."""
        self._check_seal()
        try:
            tree = self._snapshot_tree()
            assert self._snapshot is not None
            self._gitdirs.record(self._snapshot.gits)
        finally:
            self._seal()
        return tree

    def diff(self) -> Diff:
        """The real change from the snapshot to the current state (call it before restore)."""
        self._check_seal()
        self._refused = []
        try:
            snap = self._require_snapshot()
            look = self._look(snap)
            diff = self._patch(snap, look.entries, sizes=look.sizes, trees=look.trees)
            diff.git_dirs = self._git_dir_changes()
            diff.oversized = self._refused
        finally:
            self._seal()
        return diff

    def original(self, paths: Sequence[str]) -> dict[str, bytes | None]:
        """The snapshot's contents of ``paths``, read from the private store (None: no file
        was there). What the attempt left on disk plays no part."""
        self._check_seal()
        try:
            snap = self._require_snapshot()
            wanted = [p for p in dict.fromkeys(paths) if "\n" not in p]
            out: dict[str, bytes | None] = dict.fromkeys(paths)
            if not wanted:
                return out
            request = "".join(f"{snap.tree}:{p}\n" for p in wanted).encode(
                "utf-8", "surrogateescape"
            )
            data = self._run("cat-file", "--batch", input=request).stdout
        finally:
            self._seal()
        pos = 0
        for path in wanted:
            end = data.index(b"\n", pos)
            header = data[pos:end].split()
            if len(header) != 3:  # "<name> missing"
                pos = end + 1
                continue
            size = int(header[2])
            if header[1] == b"blob":
                out[path] = data[end + 1 : end + 1 + size]
            pos = end + 2 + size
        return out

    def restore(self, *, keep: Collection[str] = ()) -> None:
        """Put the workspace back byte-exactly as it was at the snapshot, ``.git`` included.

        Works whatever state the attempt left (also after an exception mid-attempt): it looks at
        the workspace afresh. Only the paths that differ from the snapshot are written.

        Args:
            keep: paths (relative, ``/``-separated) whose current state stays: a kept change
                (the patch of a passing attempt) loses everything else the attempt changed.
        """
        self._check_seal()
        try:
            # A new folder kept for a path of the patch may hold a repository of the attempt's
            # (found before the tree's restore records the folders' times again).
            planted = self._remove_planted_gits() if keep else []
            self._restore_tree(frozenset(keep))
            git_dirs = self._gitdirs.restore()
            self.last_restored = sorted({*self.last_restored, *planted, *git_dirs})
        finally:
            self._seal()

    def diff_and_restore(self) -> Diff:
        """:meth:`diff` then :meth:`restore` with one look at the workspace instead of two.

        The loop's normal path after the verifier; the saving is one full scan per attempt.
        """
        self._check_seal()
        self._refused = []
        try:
            git_dirs = self._git_dir_changes()
            diff = self._diff_and_restore_tree()
            diff.git_dirs = git_dirs
            diff.oversized = self._refused
            self.last_restored = sorted({*self.last_restored, *self._gitdirs.restore()})
        finally:
            self._seal()
        return diff

    def restore_git_dirs(self) -> list[str]:
        """Put back only the ``.git`` entries: those of the snapshot as they were, any other
        removed (a change the caller keeps leaves git's own directories as they were, so
        nothing written there runs later); return the paths written or removed."""
        self._check_seal()
        try:
            return sorted({*self._remove_planted_gits(), *self._gitdirs.restore()})
        finally:
            self._seal()

    def _remove_planted_gits(self) -> list[str]:
        """Remove every ``.git`` entry the snapshot did not have, also inside new folders."""
        snap = self._require_snapshot()
        _moved, new, _missing = self._dir_changes(snap)
        planted = [d for d in new if d.rpartition("/")[2] == ".git"]
        for d in new:  # a new folder is not listed by the look: search it
            if d.rpartition("/")[2] != ".git":
                planted += self._gits_below(d)
        for rel in planted:
            self._remove_path(rel, snap)
        return planted

    def _gits_below(self, rel: str) -> list[str]:
        """The ``.git`` entries anywhere below the folder ``rel`` (relative paths)."""
        found: list[str] = []
        todo = [rel]
        while todo:
            here = todo.pop()
            with contextlib.suppress(OSError), os.scandir(self.root / here) as it:
                for entry in it:
                    if entry.name == ".git":
                        found.append(f"{here}/.git")
                    elif entry.is_dir(follow_symlinks=False):
                        todo.append(f"{here}/{entry.name}")
        return found

    def _git_dir_changes(self) -> list[FileChange]:
        return [FileChange(c.path, c.status) for c in self._gitdirs.changes()]

    def _seal(self) -> None:
        # The copies too: git freshens (touches) an object of the alternate it would write.
        self._sealed = seal.seal(self._tmp, skip=_GITDIRS)
        self._sealed_copies = seal.seal(os.path.join(self._tmp, _GITDIRS))

    def _check_seal(self) -> None:
        if self._sealed is not None:
            seal.check(self._tmp, self._sealed, skip=_GITDIRS)
        if self._sealed_copies is not None:
            seal.check(os.path.join(self._tmp, _GITDIRS), self._sealed_copies)

    def _snapshot_tree(self) -> str:
        started = time.time_ns()
        snap = self._snapshot
        if snap is None:
            if self.seeded:
                if self.engine == "fast":
                    tree, scan, files = self._first_seeded_snapshot(started)
                else:
                    tree, scan, files = self._seeded_through_git()
                self._snapshot = scan.snapshot(tree, started, files)
                return tree
            stored = self._store_by_hand() if self.engine == "fast" else None
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

    def _restore_tree(self, keep: frozenset[str] = frozenset()) -> None:
        snap = self._require_snapshot()
        # An attempt that removed the whole workspace gets it back, like any deleted directory;
        # one that put a symlink (or a file) in its place loses it: nothing is written through.
        if self.root.is_symlink() or (self.root.exists() and not self.root.is_dir()):
            os.unlink(self.root)
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
        entries = [e for e in look.entries if e.path not in keep] if keep else look.entries
        self._restore(snap, entries, look.sizes, keep=keep)
        self.last_restored = sorted({*planted, *self.last_restored})

    def _diff_and_restore_tree(self) -> Diff:
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

    def _look(self, snap: _Snapshot) -> _Look:
        """The changes since the snapshot: by hand while the private index is the snapshot
        (:attr:`_model`), through git's staging otherwise."""
        model = self._model
        if model is not None:
            look = self._changes_by_hand(snap, model)
            if look is not None:
                return look
        # The files git's add would hash, from stat data alone, refused before it reads them:
        # those the private index says differ (``git diff-files`` reads no file whose size
        # changed) and the new ones (listed once, for the add too).
        proc, walk = self._diff_files_beside(lambda: self._new_files(snap))
        new: set[bytes] | None
        try:
            new = walk.result()
        except OSError:
            new = None  # a directory that cannot be listed: git's walk says what is wrong
        fields = proc.stdout.split(b"\0") if proc.returncode == 0 else []
        # --name-status, the fast look's form: status and path alternate.
        listed = set(fields[1::2])
        refused = self._refuse_oversized(snap, listed | (new or set()))
        if new is not None:
            new -= refused
        return _Look(self._changes(snap, new))

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
        state = {e.path: (e.dst_mode, e.dst_sha) for e in entries}
        if not shown:
            return Diff(text="", files=[], raw=b"", hidden=hidden, state=state)
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
            text=patch_bytes.decode("utf-8", "replace"),
            files=files,
            raw=patch_bytes,
            hidden=hidden,
            state=state,
        )
