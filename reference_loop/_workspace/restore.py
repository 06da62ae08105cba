"""Restore: write the snapshot's blobs back over exactly the paths that changed."""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import stat
import subprocess
import threading
from collections.abc import Iterable, Mapping
from typing import IO

from reference_loop._workspace import gitstore, limits
from reference_loop._workspace.gitio import (
    _CHUNK,
    _GITLINK,
    _SYMLINK,
    _WIDE_WINDOWS,
    BIG_FILE_BYTES,
    _clear,
    _feed,
    _write_all,
)
from reference_loop._workspace.records import _RACY_FINE_NS, Refused, _Entry, _Snapshot
from reference_loop._workspace.staging import GitStaging
from reference_loop.errors import LoopError


class Restorer(GitStaging):
    """Writing the snapshot back."""

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

    def _refuse_oversized(self, snap: _Snapshot, paths: Iterable[bytes]) -> set[bytes]:
        """Refuse, unread, the files of ``paths`` (new or changed since the snapshot) that are
        over the workspace's :class:`~limits.Limits`: a new one is removed, one the snapshot
        has is written back from the store, and each is recorded in ``_refused``. Returns
        the refused paths (the caller's look leaves them out)."""
        root = os.fsencode(self.root) + b"/"
        found: list[tuple[bytes, os.stat_result, bool]] = []
        for path in sorted(set(paths)):
            try:
                st = os.lstat(root + path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                found.append((path, st, path not in snap.files))
        over = limits.refuse(found, self.limits)
        if not over:
            return set()
        listed = self._run(
            "ls-tree", "-z", snap.tree, "--", *(os.fsdecode(p) for p in dict(over))
        ).stdout
        had: dict[str, tuple[str, str]] = {}
        for line in listed.split(b"\0"):
            meta, _tab, name = line.partition(b"\t")
            fields = meta.split()
            if len(fields) == 3 and fields[1] == b"blob":
                had[os.fsdecode(name)] = (fields[0].decode(), fields[2].decode())
        entries: list[_Entry] = []
        for path, why in over:
            rel = os.fsdecode(path)
            was = had.get(rel)
            status = "A" if was is None else "M"
            mode, sha = was if was is not None else ("000000", "")
            entries.append(_Entry(status, mode, sha, rel))
            self._refused.append(Refused(rel, status, why))
        self._revert(snap, entries)
        return {p for p, _why in over}

    def _restore(
        self,
        snap: _Snapshot,
        entries: list[_Entry],
        sizes: dict[str, int] | None = None,
        blobs: Mapping[str, bytes] | None = None,
        keep: frozenset[str] = frozenset(),
    ) -> None:
        try:
            touched = self._revert(snap, entries, sizes, blobs)
            touched += self._fix_directories(snap, keep)
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
                self._put(root + os.fsencode(path), mode, io.BytesIO(data), len(data), sha)
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
                self._put(root + os.fsencode(path), mode, proc.stdout, int(header[2]), sha)
                proc.stdout.read(1)  # the newline after each object
        finally:
            proc.stdout.close()
            proc.kill()  # done or failed: a feeder blocked on a full pipe gets EPIPE
            feeder.join()
            proc.wait()

    def _put(self, full: bytes, mode: str, src: IO[bytes], size: int, sha: str) -> None:
        """Put the blob ``sha`` of ``size`` bytes from ``src`` at ``full`` as a symlink or a
        file. Its bytes are checked against its id: bytes the store holds under another id
        (a rewritten object) are never left in the tree."""
        if mode == _SYMLINK:
            target = src.read(size)
            if _blob_id(target) != sha:
                raise _not_the_blob(full, sha)
            _clear(full)
            os.symlink(target, full)
        else:
            self._write_file(full, mode == "100755", src, size, sha)

    def _write_file(
        self, full: bytes, executable: bool, src: IO[bytes], size: int, sha: str
    ) -> None:
        """Put ``size`` bytes from ``src`` at ``full``, hashed as they go: when they are not the
        blob ``sha`` the file is removed and the restore stops. A regular file with one link is
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
        hasher = hashlib.sha1(b"blob %d\0" % size)
        try:
            left = size
            while left:
                chunk = src.read(min(left, _CHUNK))
                if len(chunk) != min(left, _CHUNK):
                    raise LoopError("the private store ended a blob early")
                hasher.update(chunk)
                _write_all(fd, chunk)
                left -= len(chunk)
            if st is not None and st.st_size > size:
                os.ftruncate(fd, size)
        finally:
            os.close(fd)
        if hasher.hexdigest() != sha:
            with contextlib.suppress(OSError):
                os.unlink(full)
            raise _not_the_blob(full, sha)

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

    def _fix_directories(self, snap: _Snapshot, keep: frozenset[str] = frozenset()) -> list[str]:
        """Recreate the snapshot's empty dirs; remove directories and ``.git`` entries the
        attempt created, whatever they hold (ignored files included), but a directory that
        holds a path in ``keep`` (its other files are already gone)."""
        kept_dirs = {p.rsplit("/", i)[0] for p in keep for i in range(1, p.count("/") + 1)}
        touched: list[str] = []
        for d in sorted(snap.empty_dirs):
            if not os.path.isdir(self.root / d):
                self._make_parents(d + "/x")
                os.makedirs(self.root / d, exist_ok=True)
                touched.append(d + "/")
        moved, new, _missing = self._dir_changes(snap)
        for d in sorted(new, key=lambda p: p.count("/"), reverse=True):
            if d in kept_dirs:
                continue
            _clear(os.fsencode(self.root / d))
            touched.append(d + "/")
        touched += self._remove_new_special(snap, moved)
        snap.dirs.update(self._stat_dirs(moved))
        return touched

    def _remove_new_special(self, snap: _Snapshot, moved: list[str]) -> list[str]:
        """Remove the FIFOs, sockets and devices made since the snapshot in the directories
        whose ctime moved: no snapshot holds them, so no diff entry names them. One the user
        had stays: making it moved its directory's ctime as far as its own, and the snapshot
        recorded that directory's ctime, so only a later one (changed after the snapshot
        began) is the attempt's."""
        born_after = snap.started - _RACY_FINE_NS  # the coarse clock may lag the snapshot's
        removed: list[str] = []
        for d in moved:
            base = f"{self.root}/{d}" if d else str(self.root)
            try:
                ino = os.stat(base).st_ino
                it = os.scandir(base)
            except (FileNotFoundError, NotADirectoryError):
                continue
            recorded = snap.dirs.get(d)
            # A directory put in the old one's place holds nothing the user had.
            dir_ctime = recorded[1] if recorded is not None and recorded[0] == ino else -1
            with it:
                for entry in it:
                    if entry.is_dir(follow_symlinks=False) or entry.is_symlink():
                        continue
                    if entry.is_file(follow_symlinks=False):
                        continue
                    st = entry.stat(follow_symlinks=False)
                    if st.st_ctime_ns > dir_ctime and st.st_ctime_ns >= born_after:
                        os.unlink(entry.path)
                        removed.append(f"{d}/{entry.name}" if d else entry.name)
        return removed


def _blob_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _not_the_blob(full: bytes, sha: str) -> LoopError:
    return LoopError(
        f"restore refused {os.fsdecode(full)}: the private store's object {sha} does not hash "
        "to its id (rewritten after the snapshot); the file was not restored"
    )
