"""Every ``.git`` of the tree, copied whole beside the snapshot and put back byte for byte.

git's index cannot hold a path named ``.git``, so the snapshot proper never holds a repository's
own directory. Yet an attempt can write there what outlives a revert and runs later on the
host (a hook, ``core.fsmonitor`` or an alias in its config, a filter in ``info/attributes``),
rewrite the objects a snapshot's blobs were read from, or delete the directory. So each ``.git``
entry present at the snapshot (the repository's own, a nested repository's, a gitfile) is
copied into the private store, every file's SHA-256 kept in memory, and a restore makes it
equal to the copy again: files rewritten, missing, or of another kind come back from the copy
(checked against their digest before they are put in place, so bytes changed in the copy are
refused, never written), permission bits are set back, and everything the attempt added is
removed.

A file whose inode, ctime, mtime and size are those recorded is unchanged: ctime cannot be
set back by an unprivileged process, and a write through another hard link moves it too.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from reference_loop.errors import LoopError

_CHUNK = 1 << 20


@dataclass(frozen=True)
class _Item:
    """One entry under a ``.git`` at the snapshot."""

    kind: int  # stat.S_IFREG, S_IFLNK or S_IFDIR
    perm: int
    digest: bytes = b""  # SHA-256 of a file's bytes; a symlink's target itself
    key: tuple[int, int, int, int] = (0, 0, 0, 0)  # (inode, ctime, mtime, size) as recorded


@dataclass(frozen=True)
class GitDirChange:
    """One path under a ``.git`` that differs from the snapshot: A added, M modified (bytes,
    kind or permission bits), D deleted."""

    path: str
    status: str


def _key(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_ino, st.st_ctime_ns, st.st_mtime_ns, st.st_size)


class GitDirs:
    """The ``.git`` entries of a tree and their copies (see the module docstring).

    Args:
        root: the workspace.
        store: a private directory (outside the workspace) the copies go into.
    """

    def __init__(self, root: str, store: str) -> None:
        self._root = os.fsencode(root)
        self._store = os.fsencode(store)
        os.makedirs(self._store, exist_ok=True)
        # relative path (b".git/config", b"sub/.git") -> what it was at the snapshot
        self._items: dict[bytes, _Item] = {}
        self._tops: list[bytes] = []

    @property
    def tops(self) -> list[str]:
        """The ``.git`` entries recorded (relative paths)."""
        return [os.fsdecode(t) for t in self._tops]

    def copy_of(self, top: str) -> str | None:
        """The copy of the recorded ``.git`` directory ``top``, or None."""
        item = self._items.get(os.fsencode(top))
        if item is None or item.kind != stat.S_IFDIR:
            return None
        return os.fsdecode(self._store + b"/" + os.fsencode(top))

    # -- recording ---------------------------------------------------------------------------

    def record(self, tops: Iterable[str]) -> None:
        """Copy each ``.git`` entry in ``tops`` (relative paths) into the store and remember
        every file's digest. Files unchanged since an earlier record are not copied again."""
        old = self._items
        items: dict[bytes, _Item] = {}
        names = sorted({os.fsencode(t) for t in tops})
        try:
            for top in names:
                for rel, st in self._walk(top):
                    items[rel] = self._record_one(rel, st, old.get(rel))
        except OSError as exc:
            where = os.fsdecode(exc.filename if exc.filename is not None else self._root)
            raise LoopError(f"snapshot failed at {where}: {exc.strerror or exc}") from exc
        # Copies of what is gone since an earlier record.
        for rel in sorted(set(old) - set(items), key=len, reverse=True):
            with contextlib.suppress(OSError):
                _clear(self._store + b"/" + rel)
        self._items = items
        self._tops = [t for t in names if t in items]

    def _record_one(self, rel: bytes, st: os.stat_result, old: _Item | None) -> _Item:
        kind = stat.S_IFMT(st.st_mode)
        perm = stat.S_IMODE(st.st_mode)
        src = self._root + b"/" + rel
        dst = self._store + b"/" + rel
        if kind == stat.S_IFDIR:
            if not os.path.isdir(dst):
                _clear(dst)
                os.makedirs(dst, 0o700)
            return _Item(kind, perm, key=_key(st))
        if kind == stat.S_IFLNK:
            return _Item(kind, perm, os.readlink(src), _key(st))
        if old is not None and old.kind == kind and old.key == _key(st) and os.path.isfile(dst):
            return _Item(kind, perm, old.digest, old.key)
        digest, now = _copy(src, dst, st)
        return _Item(kind, perm, digest, _key(now))

    def _walk(self, top: bytes, *, special: bool = False) -> Iterator[tuple[bytes, os.stat_result]]:
        """(relative path, lstat) of ``top`` and everything below it, parents first. FIFOs,
        sockets and devices are left out unless ``special`` (to a restore they are additions
        to remove); a folder that cannot be listed is skipped (its recorded entries count as
        gone)."""
        try:
            st = os.lstat(self._root + b"/" + top)
        except (FileNotFoundError, NotADirectoryError):
            return
        todo = [(top, st)]
        while todo:
            rel, st = todo.pop()
            kind = stat.S_IFMT(st.st_mode)
            if not special and kind not in (stat.S_IFREG, stat.S_IFLNK, stat.S_IFDIR):
                continue
            yield rel, st
            if kind != stat.S_IFDIR:
                continue
            try:
                it = os.scandir(self._root + b"/" + rel)
            except OSError:
                if not special:
                    raise
                continue
            with it:
                for entry in it:
                    todo.append((rel + b"/" + entry.name, entry.stat(follow_symlinks=False)))

    # -- comparing and restoring -------------------------------------------------------------

    def changes(self) -> list[GitDirChange]:
        """What differs under the recorded ``.git`` entries, and ``.git`` entries the
        snapshot did not have are not named here (the tree's own scan finds them)."""
        return [GitDirChange(os.fsdecode(rel), status) for rel, status in self._differences()]

    def _differences(self) -> list[tuple[bytes, str]]:
        found: list[tuple[bytes, str]] = []
        seen: set[bytes] = set()
        for top in self._tops:
            for rel, st in self._walk(top, special=True):
                seen.add(rel)
                item = self._items.get(rel)
                if item is None:
                    found.append((rel, "A"))
                elif not self._same(item, rel, st):
                    found.append((rel, "M"))
        found += [(rel, "D") for rel in self._items if rel not in seen]
        return sorted(found)

    def _same(self, item: _Item, rel: bytes, st: os.stat_result) -> bool:
        if stat.S_IFMT(st.st_mode) != item.kind or stat.S_IMODE(st.st_mode) != item.perm:
            return False
        if item.kind == stat.S_IFDIR:
            return True
        if item.kind == stat.S_IFLNK:
            try:
                return os.readlink(self._root + b"/" + rel) == item.digest
            except OSError:
                return False
        return _key(st) == item.key

    def restore(self) -> list[str]:
        """Make every recorded ``.git`` entry equal to its copy; return the paths written or
        removed (directories end in ``/``)."""
        touched: list[str] = []
        differences = self._differences()
        if not differences:
            return touched
        try:
            # Deepest additions first, then what is missing or changed, parents first.
            for rel, status in sorted(differences, key=lambda d: -d[0].count(b"/")):
                if status == "A":
                    _clear(self._root + b"/" + rel)
                    touched.append(os.fsdecode(rel))
            for rel, status in sorted(differences):
                if status == "A":
                    continue
                self._put(rel, self._items[rel])
                touched.append(
                    os.fsdecode(rel) + ("/" if self._items[rel].kind == stat.S_IFDIR else "")
                )
        except OSError as exc:
            where = (
                os.fsdecode(exc.filename) if exc.filename is not None else os.fsdecode(self._root)
            )
            raise LoopError(f"restore failed at {where}: {exc.strerror or exc}") from exc
        left = self._differences()
        if left:
            shown = ", ".join(os.fsdecode(rel) for rel, _status in left[:5])
            raise LoopError(f"restore left .git paths different from the snapshot: {shown}")
        return sorted(set(touched))

    def _put(self, rel: bytes, item: _Item) -> None:
        full = self._root + b"/" + rel
        self._real_parents(rel)
        if item.kind == stat.S_IFDIR:
            try:
                st = os.lstat(full)
            except FileNotFoundError:
                st = None
            if st is None or not stat.S_ISDIR(st.st_mode):
                _clear(full)
                os.mkdir(full, 0o700)
            os.chmod(full, item.perm)
            self._items[rel] = _Item(item.kind, item.perm, key=_key(os.lstat(full)))
            return
        if item.kind == stat.S_IFLNK:
            _clear(full)
            os.symlink(item.digest, full)
            self._items[rel] = _Item(item.kind, item.perm, item.digest, _key(os.lstat(full)))
            return
        # A file: written beside its place from the copy, checked, then renamed over it.
        tmp = full + b".reference-loop-restore"
        _clear(tmp)
        digest, _st = _copy(self._store + b"/" + rel, tmp, None, perm=item.perm)
        if digest != item.digest:
            os.unlink(tmp)
            raise LoopError(
                f"the snapshot's copy of {os.fsdecode(rel)} was changed (its SHA-256 is not the "
                "one recorded); the private store cannot be trusted, nothing was written there"
            )
        st = os.lstat(full) if os.path.lexists(full) else None
        if st is not None and stat.S_ISDIR(st.st_mode):
            _clear(full)
        os.rename(tmp, full)
        self._items[rel] = _Item(item.kind, item.perm, item.digest, _key(os.lstat(full)))

    def _real_parents(self, rel: bytes) -> None:
        """Every leading directory of ``rel`` a real directory (a symlink or file the attempt
        put there is removed first), so nothing is written outside the tree."""
        parts = rel.split(b"/")[:-1]
        here = self._root
        for part in parts:
            here = here + b"/" + part
            try:
                st = os.lstat(here)
            except FileNotFoundError:
                os.mkdir(here, 0o700)
                continue
            if not stat.S_ISDIR(st.st_mode):
                os.unlink(here)
                os.mkdir(here, 0o700)


def _copy(
    src: bytes, dst: bytes, st: os.stat_result | None, *, perm: int = 0o600
) -> tuple[bytes, os.stat_result]:
    """Copy the file ``src`` to a new file ``dst`` (``perm``), hashing what is copied; return
    (SHA-256, lstat of ``src`` after the copy). The source is opened without following a
    symlink; one that changes while read is refused."""
    hasher = hashlib.sha256()
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    try:
        before = os.fstat(fd)
        if not stat.S_ISREG(before.st_mode):
            raise LoopError(f"not a regular file: {os.fsdecode(src)}")
        out = os.open(
            dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, perm
        )
        try:
            while True:
                chunk = os.read(fd, _CHUNK)
                if not chunk:
                    break
                hasher.update(chunk)
                view = memoryview(chunk)
                while view:
                    view = view[os.write(out, view) :]
            os.fchmod(out, perm)
        finally:
            os.close(out)
        after = os.fstat(fd)
    finally:
        os.close(fd)
    if st is not None and _key(after) != _key(st):
        raise LoopError(f"{os.fsdecode(src)} changed while it was copied into the snapshot")
    return hasher.digest(), after


def _clear(path: bytes) -> None:
    """Remove whatever is at ``path`` (a directory with everything below it), if anything."""
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path)
    else:
        os.unlink(path)
