"""The fast engine: the hand-written index and pack path (``gitindex``, ``gitstore``) in front of
the git engine. A first snapshot and later looks store files by hand and rewrite the private
index themselves; anything unusual falls back to the git engine's staging, so the two engines
agree on every result.
"""

from __future__ import annotations

import os
import stat
import subprocess
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from reference_loop._workspace import gitindex, gitstore
from reference_loop._workspace.gitio import _T, _ZERO_HEX, _InThread
from reference_loop._workspace.records import _Entry, _Look, _Scan, _Snapshot
from reference_loop._workspace.restore import Restorer
from reference_loop.errors import LoopError

# From this many files that differ from the snapshot in stat data only (rewritten with the same
# bytes), a look writes their stat data into the private index: hashing them again on every
# later look costs more than writing the index once.
_REFRESH_MIN = 64


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


class FastPaths(Restorer):
    """The hand-written index and pack paths (the fast engine)."""

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

    def _store_by_hand(self) -> str | None:
        """First snapshot of a directory not seeded from a repository's index (a plain
        directory, or a repository whose objects the snapshot cannot own: a gitfile, a linked
        worktree, alternates, SHA-256): every file is read and hashed once into one pack,
        and the private index written with each file's stat data (see :mod:`gitstore`).
        ``None`` when git has to do it (a name git might refuse, a file changing while it is
        read)."""
        if self.seeded:
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

    def _changes_by_hand(self, snap: _Snapshot, model: gitindex.Index) -> _Look | None:
        """The changes since the snapshot, with the index left as it is: ``git diff-files``
        names the tracked files that differ from it while a thread lists the new files (as
        :meth:`_stage_changes` does); those files are hashed and stored by hand, and a file
        whose content and mode are the snapshot's (one a restore wrote back) is no change.
        The snapshot's side of each change comes from ``model``. ``None`` when git should
        look instead (what :meth:`_store_files` refuses, an unmerged entry)."""
        started = time.time_ns()
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
        new -= self._refuse_oversized(snap, new)
        stored = self._store_files(sorted(new), model.path_set)
        if stored is None:
            return None
        stored.update(dict.fromkeys(gone))
        entries: list[_Entry] = []
        sizes: dict[str, int] = {}
        same: dict[bytes, gitindex.NewEntry | None] = {}
        for path in sorted(stored):
            entry, old = stored[path], model.entry(path)
            if old is not None:
                sizes[old[1].hex()] = old[2]
            if entry is not None:
                sizes[entry[3].hex()] = entry[1].st_size
            change = _hand_entry(os.fsdecode(path), old, entry)
            if change is not None:
                entries.append(change)
            elif old is not None:
                same[path] = entry
        if len(same) >= _REFRESH_MIN:
            model = self._refresh_model(snap, model, same, started) or model
        return _Look(entries, sizes, lambda subset: self._tree_by_hand(model, stored, subset))

    def _refresh_model(
        self,
        snap: _Snapshot,
        model: gitindex.Index,
        same: Mapping[bytes, gitindex.NewEntry | None],
        started: int,
    ) -> gitindex.Index | None:
        """Record the stat data of files whose bytes are the snapshot's but whose stat data is
        not (a formatter or a checkout rewrote them with the same bytes): the private index
        stays the snapshot, and later looks stop hashing those files again. ``None`` (the
        model kept as it is) when the rewritten index would not be the snapshot's tree."""
        writer = gitstore.PackWriter(os.path.join(self._env["GIT_DIR"], "objects", "pack"))
        try:
            new = gitindex.rewrite_index(model, same, writer.add_tree)
            if new is None or new.tree.hex() != snap.tree:
                writer.abort()
                return None
            writer.finish()
        except BaseException:
            writer.abort()
            raise
        self._write_split_index(new.data, new.tree_ext, started)
        self._model = new.index
        return new.index

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
